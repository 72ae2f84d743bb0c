"""How far the working set's band grows in a round (engines.working_set._updated_band): by half
its size (at least ``band_cap`` pairs) on narrow rows, by every pair near the margin on wide
rows, whose steps' Newton matrices cost far more than their pairs."""

import numpy as np

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines import working_set
from infpush_cvx.solvers.engines.pair_sums import SortedScores
from infpush_cvx.solvers.engines.working_set import WorkingSetOptions


def _first_band(d, band_cap):
    """The band of a first round on 40 + 40 rows in R^d whose scores all lie within 0.2 of
    the margin: every one of the 1,600 pairs is near it."""
    rng = np.random.default_rng(0)
    Xp, Xn = rng.normal(size=(40, d)), rng.normal(size=(40, d))
    prob = working_set._Problem(BipartiteData(Xp, Xn), 0.1, "infinite_push", "l2")
    s_c, t_c = 1.0 + 0.05 * rng.random(40), 0.05 * rng.random(40)
    opt = WorkingSetOptions(band_cap=band_cap)
    cols = np.arange(40)
    empty = np.zeros(0, np.intp)
    return working_set._updated_band((empty, empty), prob, opt, SortedScores(s_c, prob.p), s_c,
                                     t_c, cols, (empty, empty), np.ones(40, dtype=bool))


def test_a_narrow_problem_takes_band_cap_new_pairs():
    bi, bj = _first_band(d=10, band_cap=15)  # d^2 / 20 = 5 pairs: band_cap rules
    assert bi.size == 15


def test_a_wide_problem_takes_every_pair_near_the_margin():
    bi, bj = _first_band(d=200, band_cap=15)  # d^2 / 20 = 2,000 pairs allowed
    assert bi.size == 40 * 40
    assert np.unique(bi * 40 + bj).size == 1600


def test_the_band_rows_summed_per_group_are_the_same_by_either_product():
    """The group sums of the band pairs' rows (the groups' slopes lose them): by a dense
    product over the rows used when the band is dense, by the sparse product otherwise."""
    import scipy.sparse as sp

    from infpush_cvx.solvers.engines.lower_model import _group_row_sums

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 12))
    for nb in (400, 10):  # 400 pairs on 6 x 20 cells: dense; 10 pairs: sparse
        rows, groups, w = rng.integers(0, 20, nb), rng.integers(0, 6, nb), rng.random(nb)
        expected = np.zeros((6, 12))
        np.add.at(expected, groups, w[:, None] * X[rows])
        np.testing.assert_allclose(_group_row_sums(X, rows, groups, w, 6), expected,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_group_row_sums(sp.csr_matrix(X), rows, groups, w, 6),
                                   expected, rtol=1e-12, atol=1e-12)
