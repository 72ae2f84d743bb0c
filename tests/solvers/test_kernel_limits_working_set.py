"""The working set's time limit (issue 26): the linear Infinite Push on sparse 50,000 + 50,000 x
2,000 data overran a 1 s limit by 5.7 s, most of it the dual point of ``w = 0`` forming a dense
50,000 x 2,000 matrix of group slopes, the rest a starting-point search that could not see the
deadline."""

import time

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines import restricted_step as _restricted_step
from infpush_cvx.solvers.engines import working_set as _working_set
from infpush_cvx.solvers.engines.lower_model import LowerModel
from infpush_cvx.solvers import infinite_push
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import ConvergenceWarning


def _sparse_rows(rng, rows: int, cols: int, per_row: int):
    """A CSR matrix with ``per_row`` nonzeros (uniform values in (0, 1)) in every row, drawn
    directly (scipy.sparse.random takes 9 s at this size)."""
    indices = np.sort(rng.integers(0, cols, (rows, per_row)), axis=1).ravel()
    indptr = np.arange(0, rows * per_row + 1, per_row)
    X = sp.csr_matrix((rng.random(rows * per_row), indices, indptr), shape=(rows, cols))
    X.sum_duplicates()
    return X


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("at_zero", [False, True])
def test_the_group_slopes_times_multipliers_need_not_form_the_slopes(sparse, at_zero):
    """``g^T mu`` without forming g (weights on the positives from the prefix lengths, less the
    band pairs, minus the negatives' rows) equals the dense ``g.T @ mu``, with sample weights,
    band pairs (repeated ones too) and the zero row of the "loss >= 0" group."""
    rng = np.random.default_rng(0)
    Xp, Xn = rng.standard_normal((30, 7)), rng.standard_normal((40, 7))
    if sparse:
        Xp = sp.csr_matrix(Xp * (rng.random(Xp.shape) < 0.4))
        Xn = sp.csr_matrix(Xn * (rng.random(Xn.shape) < 0.4))
    data = BipartiteData(Xp, Xn, wp=rng.random(30) + 0.5, wn=rng.random(40) + 0.5)
    prob = _working_set._Problem(data, 0.1, "infinite_push", "l2")
    w = np.zeros(7) if at_zero else 0.3 * rng.standard_normal(7)
    s, t = prob.scores(w)
    cols = np.sort(rng.choice(40, 15, replace=False))
    bi, bj = rng.integers(0, 30, 25), cols[rng.integers(0, 15, 25)]
    order = np.lexsort((bi, bj))
    lazy = LowerModel(prob, s, t, cols, bi[order], bj[order])
    dense = LowerModel(prob, s, t, cols, bi[order], bj[order])
    mu = rng.random(16)
    implicit = lazy.g_transpose(mu)
    assert lazy._g is None  # (never formed)
    np.testing.assert_allclose(implicit, dense.g.T @ mu, rtol=0, atol=1e-12 * np.abs(
        implicit).max())
    np.testing.assert_array_equal(dense.g_transpose(mu), dense.g.T @ mu)


def test_the_dual_point_of_zero_forms_no_dense_slopes():
    """Every negative is a group of the dual point at ``w = 0``: its ``w(alpha)`` comes from
    the implicit product, equal to the closed form ``C (mean positive - Xn^T theta)``."""
    rng = np.random.default_rng(1)
    data = BipartiteData(_sparse_rows(rng, 300, 50, 4), _sparse_rows(rng, 400, 50, 4))
    prob = _working_set._Problem(data, 0.1, "infinite_push", "l2")
    dual = _working_set._dual_at_zero(prob)
    mean_pos = np.asarray(prob.Xp.mean(axis=0)).ravel()
    mean_neg = np.asarray(prob.Xn.mean(axis=0)).ravel()
    expected = prob.coef * prob.M * (mean_pos - mean_neg)  # theta = 1/n, C/M scaled by M
    np.testing.assert_allclose(dual.w_alpha / dual.factor, expected, rtol=1e-12, atol=1e-12)


def test_the_starting_search_stops_at_the_deadline(monkeypatch):
    """The 31-scale search for a starting point keeps its best scale so far once the deadline
    has passed (one evaluation with an expired deadline)."""
    rng = np.random.default_rng(2)
    data = BipartiteData(rng.standard_normal((40, 5)) + 2.0, rng.standard_normal((50, 5)))
    prob = _working_set._Problem(data, 1e-4, "infinite_push", "l2")
    calls = []
    objective = prob.objective
    monkeypatch.setattr(prob, "objective", lambda *a: calls.append(1) or objective(*a))
    free = _working_set._initial_w(prob, Deadline(None))
    assert len(calls) == 31
    calls.clear()
    cut = _working_set._initial_w(prob, Deadline(0.0))
    assert len(calls) == 1
    assert np.linalg.norm(cut) < np.linalg.norm(free)  # the smallest scale, 1e-3 / spread


def test_the_sparse_working_set_limit_holds_in_real_time():
    """Issue 26's second row: 50,000 + 50,000 x 2,000 sparse (about 10 and 12 nonzeros a row),
    1 s. Measured (by hand, loaded 2-core machine): +5.4 s before (+14.1 s at 20 nonzeros a
    row), +0.2 to +0.4 s after. 3 s is the bound a loaded CI machine allows."""
    rng = np.random.default_rng(3)
    Xp, Xn = _sparse_rows(rng, 50_000, 2_000, 12), _sparse_rows(rng, 50_000, 2_000, 10)
    start = time.perf_counter()
    with pytest.warns(ConvergenceWarning):
        out = infinite_push(Xp, Xn, 0.1, time_limit=1.0)
    overrun = time.perf_counter() - start - 1.0
    assert out.status == "time_limit" and np.all(np.isfinite(out.w))
    assert overrun < 3.0


# ---- external solvers' set-up ----------------------------------------------------------------

def _exact_l1_step(m=30, n=40, d=12, sparse=False):
    """The restricted problem of the exact l1 model at ``w = 0`` (every pair in the band)."""
    rng = np.random.default_rng(4)
    Xp = (rng.random((m, d)) < 0.3) + np.r_[np.full(3, 0.5), np.zeros(d - 3)]
    Xn = (rng.random((n, d)) < 0.3).astype(float)
    if sparse:
        Xp, Xn = sp.csr_matrix(Xp), sp.csr_matrix(Xn)
    prob = _working_set._Problem(BipartiteData(Xp, Xn), 1e-3, "infinite_push", "l1")
    s, t = prob.scores(np.zeros(d))
    band = (np.tile(np.arange(m), n), np.repeat(np.arange(n), m))
    return LowerModel(prob, s, t, np.arange(n), *band).restricted(0.0, np.zeros(d))


@pytest.mark.parametrize("sparse", [False, True])
def test_the_nonzero_estimate_bounds_the_constraint_matrix(sparse):
    rp = _exact_l1_step(sparse=sparse)
    _, _, A_ub, _ = _restricted_step._conic_data(rp)
    estimate = _restricted_step._conic_nonzeros(rp)
    assert A_ub.nnz <= estimate <= 2 * A_ub.nnz


def test_the_pair_matrix_by_sparse_rows_is_the_weighted_differences():
    rp = _exact_l1_step()
    dense = rp.pi[:, None] * (rp.XI[rp.bi] - rp.XJ[rp.bj])
    np.testing.assert_array_equal(_restricted_step._pair_matrix(rp).toarray(), dense)


def test_an_external_solver_whose_set_up_the_time_left_cannot_cover_is_not_started():
    """HiGHS through linprog sees its time limit only after its set-up (3.2 s at 9.2 million
    nonzeros with a 1e-6 s limit): with less time left than the estimated set-up it is not
    started, and the step fails at once; with enough it gets the time left less the set-up."""
    rp = _exact_l1_step()
    nnz = _restricted_step._conic_nonzeros(rp)

    class Left:
        def __init__(self, left):
            self.left = left

        def for_solver(self):
            return max(self.left, 1e-6)

        def expired(self):
            return self.left <= 0

    with pytest.raises(_restricted_step.RestrictedStepFailed, match="HiGHS not started"):
        _restricted_step._solve_highs(rp, Left(0.5 * nnz * 4e-7))
    with pytest.raises(_restricted_step.RestrictedStepFailed, match="Clarabel not started"):
        _restricted_step._solve_clarabel(rp, Left(0.0))
    w, mu, nu = _restricted_step._solve_highs(rp, Left(60.0))
    w_free, _, _ = _restricted_step._solve_highs(rp, None)
    np.testing.assert_allclose(w, w_free, atol=1e-9)
    assert _restricted_step._time_for_setup(None, nnz, 1.0, "HiGHS") is None
    assert _restricted_step._time_for_setup(Left(60.0), 1000, 1e-7, "HiGHS") == 60.0


def test_a_step_not_started_for_time_ends_the_solve_at_its_time_limit(monkeypatch):
    """A restricted step refused because a stage that does not see the deadline cannot end in
    time (StepNotStarted) ends the working set with status "time_limit" and that reason, with
    time still left, instead of a retry with a larger proximal weight."""
    from infpush_cvx.data.generators import planted_bipartite

    calls = []

    def refused(*args, **kwargs):
        calls.append(1)
        raise _restricted_step.StepNotStarted("the span step's QR was not begun: 0.1 s left")
    monkeypatch.setattr(_working_set, "restricted_step", refused)
    data = planted_bipartite(30, 40, 5, seed=3)
    out = _working_set.solve(data, 0.01, loss="infinite_push", penalty="l2", tol=1e-6,
                             max_iter=50, deadline=Deadline(60.0))
    assert out["status"] == "time_limit" and "span step" in out["message"]
    assert len(calls) == 1
