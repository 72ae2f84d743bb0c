"""The working set started from the degeneracy LP (infpush_cvx.solvers.engines.working_set,
``hull=``): the negatives of the hull's face nearest the mean positive work from the first round
and the start lies along the LP's separating direction; the certified optimum is the same."""

import numpy as np
import pytest

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.data.degeneracy import check_degeneracy
from infpush_cvx.data.generators import degenerate_bipartite
from infpush_cvx.solvers.engines import working_set


def _near_degenerate(seed):
    """The mean positive moved just outside the negatives' hull: w* is small and many negatives
    are near the max (as on a8a's 150 x 1,500 samples)."""
    data = degenerate_bipartite(40, 300, 12, seed=seed)
    u = np.random.default_rng(seed).standard_normal(12)
    u /= np.linalg.norm(u)
    beyond = float((data.Xn @ u).max() - data.Xp.mean(axis=0) @ u) + 0.05
    return BipartiteData(data.Xp + beyond * u, data.Xn)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_hull_start_reaches_the_same_certified_optimum(penalty, seed):
    data = _near_degenerate(seed)
    report = check_degeneracy(data)
    assert not report.degenerate
    kw = dict(loss="infinite_push", penalty=penalty, tol=1e-7, max_iter=200,
              options=working_set.WorkingSetOptions(new_negatives=5))
    plain = working_set.solve(data, 1e-3, **kw)
    hinted = working_set.solve(data, 1e-3, hull=report, **kw)
    assert plain["status"] == hinted["status"] == "optimal"
    assert hinted["gap"] <= 1e-7
    assert hinted["objective_paper"] == pytest.approx(plain["objective_paper"], rel=3e-7)
    # every negative of the nearest face (7 and 10 here) works from the first round, beside
    # the 5 of largest hinge sum
    support = int(np.count_nonzero(report.weights > 0))
    assert plain["history"]["working_negatives"][0] == 5 < support
    assert hinted["history"]["working_negatives"][0] >= support


def test_the_start_is_the_better_of_the_centroid_and_the_direction():
    """``_initial_w``: the direction's best scale is taken only when it beats the centroid's;
    a zero direction changes nothing."""
    data = _near_degenerate(0)
    report = check_degeneracy(data)
    prob = working_set._Problem(data, 1e-3, "infinite_push", "l2")
    centroid = working_set._initial_w(prob)
    both = working_set._initial_w(prob, direction=report.direction)
    assert prob.objective(both) <= prob.objective(centroid)
    np.testing.assert_array_equal(working_set._initial_w(prob, direction=np.zeros(prob.d)),
                                  centroid)
    value, w = working_set._best_along(prob, report.direction / prob.scale)
    assert value == pytest.approx(prob.objective(w))
