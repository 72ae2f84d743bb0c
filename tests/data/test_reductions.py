"""collapse_duplicates: exact grouping of identical rows, index maps, and unchanged optima."""


import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import BipartiteData
from infpush_cvx.data import reductions
from infpush_cvx.formulations import infinite_push_problem, ranksvm_problem
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.formulations.objectives import bipartite_objective
from infpush_cvx.data.reductions import CollapseInfo, collapse_duplicates

OPTS = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}

# Positives: rows 0, 2, 5 equal (a), rows 1, 4 equal (b), row 3 alone (c); -0.0 equals 0.0.
A, B, C = [1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [1.0, 0.0, 2.5]
XP = np.array([A, B, [1.0, -0.0, 2.0], C, B, A])
# Negatives: rows 1, 3 equal.
XN = np.array([[0.0, 0.0, 1.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


def check_expected(collapsed: BipartiteData, info: CollapseInfo, dense):
    np.testing.assert_array_equal(dense(collapsed.Xp), [A, B, C])
    np.testing.assert_array_equal(dense(collapsed.Xn), XN[[0, 1, 2]])
    np.testing.assert_array_equal(info.pos_index, [0, 1, 0, 2, 1, 0])
    np.testing.assert_array_equal(info.pos_first, [0, 1, 3])
    np.testing.assert_array_equal(info.pos_counts, [3, 2, 1])
    np.testing.assert_array_equal(info.neg_index, [0, 1, 2, 1])
    np.testing.assert_array_equal(info.neg_first, [0, 1, 2])
    np.testing.assert_array_equal(info.neg_counts, [1, 2, 1])
    assert (info.m_before, info.m_after, info.n_before, info.n_after) == (6, 3, 4, 3)
    assert info.pos_index.dtype == np.int64 and info.neg_index.dtype == np.int64


def test_dense_groups_counts_and_order():
    collapsed, info = collapse_duplicates(BipartiteData(XP, XN))
    check_expected(collapsed, info, np.asarray)
    np.testing.assert_array_equal(collapsed.wp, [3.0, 2.0, 1.0])
    np.testing.assert_array_equal(collapsed.wn, [1.0, 2.0, 1.0])


def test_sparse_groups_in_canonical_form():
    # Non-canonical COO input: the duplicate entries of row 1 sum to 3, and row 4 stores an
    # explicit zero; both still equal B once canonical.
    rows = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    cols = [0, 2, 1, 1, 2, 0, 0, 2, 1, 0, 0, 2]
    vals = [1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.5, 3.0, 0.0, 1.0, 2.0]
    Xp = sp.coo_matrix((vals, (rows, cols)), shape=(6, 3))
    collapsed, info = collapse_duplicates(BipartiteData(Xp, sp.csr_matrix(XN)))
    assert sp.issparse(collapsed.Xp) and sp.issparse(collapsed.Xn)
    check_expected(collapsed, info, lambda X: X.toarray())
    np.testing.assert_array_equal(collapsed.wp, [3.0, 2.0, 1.0])


def test_weights_are_summed():
    data = BipartiteData(XP, XN, wp=[1.0, 2.0, 0.5, 4.0, 0.25, 3.0], wn=[1.0, 2.0, 3.0, 4.0])
    collapsed, _ = collapse_duplicates(data)
    np.testing.assert_array_equal(collapsed.wp, [4.5, 2.25, 4.0])
    np.testing.assert_array_equal(collapsed.wn, [1.0, 6.0, 3.0])
    assert collapsed.wp_sum == data.wp_sum and collapsed.wn_sum == data.wn_sum


def test_nothing_repeats_gives_a_new_equal_object():
    data = BipartiteData(XP[[0, 1, 3]], XN[:3])
    collapsed, info = collapse_duplicates(data)
    assert collapsed is not data
    assert collapsed.wp is None and collapsed.wn is None
    assert collapsed.fingerprint() == data.fingerprint()
    np.testing.assert_array_equal(info.pos_index, [0, 1, 2])
    np.testing.assert_array_equal(info.pos_counts, [1, 1, 1])
    # Repeats on one side only: the other side keeps its (absent) weights.
    collapsed, _ = collapse_duplicates(BipartiteData(XP, XN[:3]))
    assert collapsed.wp is not None and collapsed.wn is None


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_hash_collisions_are_resolved_exactly(kind, monkeypatch):
    # Every row hashes alike, so only the exact check and its fallback can separate them.
    r = np.random.default_rng(0)
    Xp = r.integers(0, 2, (40, 3)).astype(float)
    Xn = r.integers(0, 2, (30, 3)).astype(float)
    if kind == "sparse":
        Xp, Xn = sp.csr_matrix(Xp), sp.csr_matrix(Xn)
    data = BipartiteData(Xp, Xn)
    expected, expected_info = collapse_duplicates(data)
    monkeypatch.setattr(reductions, "_row_hashes", lambda X: np.zeros(X.shape[0], np.uint64))
    got, info = collapse_duplicates(data)
    for name in ("pos_index", "neg_index", "pos_first", "neg_first", "pos_counts", "neg_counts"):
        np.testing.assert_array_equal(getattr(info, name), getattr(expected_info, name))
    assert got.fingerprint() == expected.fingerprint()
    # And the grouping is right: rows equal exactly when their collapsed rows are equal.
    dense = Xp.toarray() if kind == "sparse" else Xp
    same = (dense[:, None, :] == dense[None, :, :]).all(axis=2)
    np.testing.assert_array_equal(same, info.pos_index[:, None] == info.pos_index[None, :])


def with_repeats(base: BipartiteData, seed: int) -> BipartiteData:
    """``base`` with rows repeated 1-3 times and shuffled."""
    r = np.random.default_rng(seed)
    rows_p = r.permutation(np.repeat(np.arange(base.m), r.integers(1, 4, base.m)))
    rows_n = r.permutation(np.repeat(np.arange(base.n), r.integers(1, 4, base.n)))
    return BipartiteData(base.Xp[rows_p], base.Xn[rows_n])


@pytest.mark.parametrize("density", [1.0, 0.5])
@pytest.mark.parametrize("loss, penalty", [("infinite_push", "l2"), ("infinite_push", "l1"),
                                           ("ranksvm", "l2")])
def test_collapsed_objective_and_optimum_equal_the_original(density, loss, penalty):
    data = with_repeats(planted_bipartite(6, 8, 4, seed=11, density=density), seed=1)
    collapsed, info = collapse_duplicates(data)
    assert info.m_after == 6 and info.n_after == 8
    for sc in ("paper", "seed"):
        w = np.random.default_rng(3).standard_normal(data.d)
        assert bipartite_objective(collapsed, w, 0.2, loss=loss, penalty=penalty, scaling=sc) \
            == pytest.approx(bipartite_objective(data, w, 0.2, loss=loss, penalty=penalty,
                                                 scaling=sc), rel=1e-12)
    build = (lambda d: infinite_push_problem(d, 0.1, penalty=penalty)) if loss == "infinite_push" \
        else (lambda d: ranksvm_problem(d, 0.1))
    values = []
    for d in (collapsed, data):
        problem = build(d)
        problem.solve(**OPTS)
        assert problem.status == cp.OPTIMAL
        values.append(problem.value)
    assert values[0] == pytest.approx(values[1], rel=1e-6)


def test_rejects_other_types():
    with pytest.raises(TypeError, match="data must be a BipartiteData"):
        collapse_duplicates((XP, XN))


def test_a8a_sized_sparse_binary_data_collapses():
    # The shape of a8a: 22,696 rows of 123 binary features, 14 one-hot groups, many repeats.
    r = np.random.default_rng(0)
    sizes = np.array([9] * 13 + [6])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    rows = 22_696
    cols = starts + np.minimum(r.geometric(0.6, (rows, 14)) - 1, sizes - 1)
    X = sp.csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, 14)),
                      shape=(rows, 123))
    data = BipartiteData.from_labels(X, r.random(rows) < 0.24)
    # No wall-clock assertion (CI machines are loaded): the time, about 0.02 s, is a benchmark's.
    collapsed, info = collapse_duplicates(data)
    assert collapsed.m < data.m and collapsed.wp_sum == data.m
    assert info.pos_counts.sum() == data.m and info.neg_counts.sum() == data.n


def test_large_dense_data_collapses():
    r = np.random.default_rng(1)
    X = r.standard_normal((100_000, 50))
    X[50_000:] = X[:50_000]  # every row twice
    data = BipartiteData(X, X[:10])
    collapsed, info = collapse_duplicates(data)  # about 0.1 s; timed in benchmarks, not here
    assert collapsed.m == 50_000
    np.testing.assert_array_equal(info.pos_index, np.tile(np.arange(50_000), 2))
    np.testing.assert_array_equal(collapsed.wp, np.full(50_000, 2.0))
