"""The degeneracy LP by column generation (issue 29: certifying w* = 0 on 10^8 pairs in 0.5 s).

Over all negatives HiGHS took 0.39-0.49 s on a8a (14,264 distinct negatives) and 1.4 s on a
degenerate stand-in of 7,000 x 28,000 binary rows; over a subset grown by reduced costs 0.06 s
and 0.14 s. Here the subset is made tiny so that every instance takes several rounds, and each
answer is compared with the LP over all negatives.
"""

import numpy as np
import pytest

from infpush_cvx.data import degeneracy
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.data.degeneracy import DegeneracyCheckFailed, check_degeneracy
from infpush_cvx.data.generators import (binary_bipartite, degenerate_bipartite,
                                         planted_bipartite)


def whole_lp(data, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(degeneracy, "_WHOLE", 10 ** 9)
        return check_degeneracy(data)


def by_columns(data, monkeypatch, subset=8, added=3):
    """The check with a first subset of ``subset`` columns, ``added`` more a round (d small)."""
    with monkeypatch.context() as patch:
        patch.setattr(degeneracy, "_WHOLE", 0)
        patch.setattr(degeneracy, "_SUBSET", subset)
        patch.setattr(degeneracy, "_ADDED", added)
        return check_degeneracy(data)


def in_hull_residual(data, weights):
    mean_pos = np.asarray(data.Xp.mean(axis=0)).ravel()
    return np.abs(np.asarray(data.Xn.T @ weights).ravel() - mean_pos).sum()


def same_distribution(seed):
    """Positives and negatives of one binary distribution: the mean positive in the hull."""
    b = binary_bipartite(30, 230, 12, seed=seed, row_nnz=4.0, informative=2, exclusive=1)
    return BipartiteData(b.Xn[:30], b.Xn[30:])


@pytest.mark.parametrize("make", [
    lambda s: degenerate_bipartite(20, 300, 4, seed=s),
    lambda s: degenerate_bipartite(20, 300, 4, seed=s, density=0.5),
    same_distribution])
@pytest.mark.parametrize("seed", range(3))
def test_degenerate_instances_are_found_with_weights_that_put_the_mean_in_the_hull(
        make, seed, monkeypatch):
    data = make(seed)
    report = by_columns(data, monkeypatch)
    assert report.degenerate and whole_lp(data, monkeypatch).degenerate
    assert report.weights.shape == (data.n,) and np.all(report.weights >= 0)
    assert report.weights.sum() == pytest.approx(1.0)
    assert in_hull_residual(data, report.weights) <= 1e-7


@pytest.mark.parametrize("make", [
    lambda s: planted_bipartite(20, 300, 4, seed=s, margin=0.05),
    lambda s: binary_bipartite(30, 300, 12, seed=s, row_nnz=4.0, informative=2, exclusive=1)])
@pytest.mark.parametrize("seed", range(3))
def test_non_degenerate_instances_give_the_whole_lps_distance(make, seed, monkeypatch):
    data = make(seed)
    report, whole = by_columns(data, monkeypatch), whole_lp(data, monkeypatch)
    assert not report.degenerate and not whole.degenerate
    assert report.distance == pytest.approx(whole.distance, rel=1e-7, abs=1e-9)
    assert in_hull_residual(data, report.weights) == pytest.approx(report.distance, rel=1e-6)


def test_the_columns_grow_over_rounds(monkeypatch):
    """The first subset (4 (d + 1) = 20 of 300 columns) misses the answer: rounds add columns."""
    data = planted_bipartite(20, 300, 4, seed=1, margin=0.05)
    calls = []
    real = degeneracy._hull_lp

    def counting(XnT, mean_pos, time_limit):
        calls.append(XnT.shape[1])
        return real(XnT, mean_pos, time_limit)

    monkeypatch.setattr(degeneracy, "_hull_lp", counting)
    by_columns(data, monkeypatch, subset=2, added=1)
    assert len(calls) >= 2 and calls == sorted(calls) and calls[-1] < data.n


def test_a_spent_time_limit_is_a_failed_check():
    with pytest.raises(DegeneracyCheckFailed, match="time limit"):
        check_degeneracy(degenerate_bipartite(20, 300, 4, seed=0), time_limit=1e-9)


@pytest.mark.parametrize("n", [300, 6000])
def test_the_direction_separates_the_mean_positive_by_the_distance(n):
    """A non-degenerate report's direction v has ``|v_k| <= 1`` and ``v . mean(Xp) -
    max_j v . x_j >= distance`` (LP duality), the whole LP's or column generation's (n = 6,000);
    a degenerate report's is zero."""
    rng = np.random.default_rng(3)
    d = 8
    Xn = rng.random((n, d))
    Xp = rng.random((40, d)) + 0.6  # the mean positive (about 1.1) outside the hull
    data = BipartiteData(3.0 * Xp, 3.0 * Xn)
    report = check_degeneracy(data)
    assert not report.degenerate and report.distance > 0
    v = report.direction
    assert v.shape == (d,) and np.abs(v).max() <= 1 + 1e-9
    margin = float(v @ (3.0 * Xp).mean(axis=0) - (3.0 * Xn @ v).max())
    assert margin >= report.distance * (1 - 1e-6) - 1e-9
    degenerate = check_degeneracy(BipartiteData(Xn[:30], Xn))
    assert degenerate.degenerate and not np.any(degenerate.direction)
