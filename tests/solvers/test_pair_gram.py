"""The windowed pair sum ``sum_{lower < v_j - s_i < upper} p_i q_j z_ij z_ij^T`` of
:mod:`infpush_cvx.solvers.engines.pair_gram` against the explicit m x n pairs: the squared
hinge's window and a smoothed hinge's band, either class swept, sparse and dense rows, ties at
the window's ends, and the deadline."""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data.generators import degenerate_bipartite, planted_bipartite
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.pair_gram import PairGram, sweep_cost

CASES = {
    "planted": lambda: planted_bipartite(30, 40, 8, seed=1),
    "sparse": lambda: planted_bipartite(40, 50, 30, density=0.2, seed=3),
    "degenerate": lambda: degenerate_bipartite(20, 30, 5, seed=4),  # repeated rows, ties
}


def brute_force(Xp, Xn, p, q, s, v, lower, upper):
    Xp = Xp.toarray() if sp.issparse(Xp) else Xp
    Xn = Xn.toarray() if sp.issparse(Xn) else Xn
    x = v[None, :] - s[:, None]
    c = np.outer(p, q) * ((lower < x) & (x < upper))
    z = Xp[:, None, :] - Xn[None, :, :]
    return np.einsum("ij,ijk,ijl->kl", c, z, z)


@pytest.mark.parametrize("rows", ["dense", "sparse"])
@pytest.mark.parametrize("positives_outer", [True, False])
@pytest.mark.parametrize(("lower", "upper"), [(0.0, np.inf), (-0.25, 0.25), (-np.inf, np.inf)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_window_matches_the_explicit_pairs(name, lower, upper, positives_outer, rows):
    data = CASES[name]()
    rng = np.random.default_rng(0)
    p, q = rng.uniform(0.2, 3.0, data.m), rng.uniform(0.2, 3.0, data.n)
    as_rows = sp.csr_matrix if rows == "sparse" else (lambda X: sp.csr_matrix(X).toarray())
    gram = PairGram(as_rows(data.Xp), as_rows(data.Xn), p, q)
    assert gram.sparse == (rows == "sparse")
    gram.positives_outer = positives_outer
    for w in (np.zeros(data.d), rng.normal(size=data.d)):
        s = np.asarray(data.Xp @ w).ravel()
        v = 1.0 + np.asarray(data.Xn @ w).ravel()
        if name == "degenerate":  # pairs exactly at 0 and at both ends of the band (exact
            s[:10] = 0.5          # in floating point, so every comparison agrees on them)
            v[:5], v[5:10], v[10:15] = 0.75, 0.25, 0.5
        expected = brute_force(data.Xp, data.Xn, p, q, s, v, lower, upper)
        got = gram.window(s, v, lower, upper)
        assert np.allclose(got, expected, atol=1e-11, rtol=1e-12)
        assert np.allclose(got, got.T)


def test_rows_with_duplicate_entries_are_summed():
    Xp = sp.csr_matrix((np.array([1.0, 2.0, 1.5]), np.array([0, 0, 2]), np.array([0, 2, 3])),
                       shape=(2, 3))
    Xn = sp.csr_matrix(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))
    p, q = np.ones(2), np.ones(2)
    s, v = np.array([0.0, 1.0]), np.array([0.5, 2.0])
    expected = brute_force(Xp.toarray(), Xn, p, q, s, v, 0.0, np.inf)
    assert np.allclose(PairGram(Xp, Xn, p, q).window(s, v), expected)


class TickingClock:
    """A clock that advances ``tick`` seconds each time it is read."""

    def __init__(self, tick):
        self.now, self.tick = 0.0, tick

    def __call__(self):
        self.now += self.tick
        return self.now


@pytest.mark.parametrize("rows", ["dense", "sparse"])
def test_a_block_that_cannot_end_in_time_is_not_begun(monkeypatch, rows):
    import infpush_cvx.solvers.engines.pair_gram as pair_gram

    data = planted_bipartite(30, 40, 8, seed=1)
    Xp, Xn = (sp.csr_matrix(data.Xp), sp.csr_matrix(data.Xn)) if rows == "sparse" else (
        data.Xp, data.Xn)
    gram = PairGram(Xp, Xn, np.ones(30), np.ones(40))
    gram.positives_outer = True
    monkeypatch.setattr(pair_gram, "_BLOCK_WORK", 10 * 8 * 8)  # blocks of 10 positives
    s, v = np.zeros(30), np.ones(40)
    # clock reads, 1/8 s each: started at 1/8; block 1 (2/8: begin; it ends at 3/8 and took
    # 1/8); block 2 (4/8: 3/4 left, begin; 5/8); block 3 (6/8: 5/8 left, begin; 7/8); all
    # three done. With a limit of 7/8 the third is not begun (1/8 left, not more than 1/8).
    # (Dense rows read the clock more often: their prefix sums are written in blocks too, and
    # their own terms are begun when they fit; a long limit lets both kinds finish.)
    assert gram.window(s, v, deadline=Deadline(2.0 if rows == "sparse" else 100.0,
                                               clock=TickingClock(0.125))) is not None
    clock = TickingClock(0.125)
    assert gram.window(s, v, deadline=Deadline(0.875, clock=clock)) is None
    # stopped without overrunning the limit (by more than the reads of the clock around a
    # block, each of which this clock charges 1/8 s)
    assert clock.now < 0.875 + 0.125 * (1.5 if rows == "sparse" else 2.5)
    assert gram.window(s, v, deadline=Deadline(0.5, clock=TickingClock(1.0))) is None


def test_sweep_cost_counts_products():
    dense = planted_bipartite(60, 60, 400, seed=0)
    binary = sp.random(2000, 100, density=0.1, random_state=0, format="csr")
    assert sweep_cost(dense.Xp, dense.Xn) > 100
    assert sweep_cost(binary, binary) < 20
