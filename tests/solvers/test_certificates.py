"""A certificate that cannot lie (issue 26): a gap below minus its round-off bound is a
numerical failure, never "optimal", and data with a common offset (which leaves every bipartite
problem unchanged: the losses see only score differences) give the answer of the centred data.

References are independent CVXPY + Clarabel solves of the centred problem.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker
from infpush_cvx.formulations import infinite_push_problem, ranksvm_problem
from infpush_cvx.formulations.objectives import bipartite_objective, penalty_term
from infpush_cvx.solvers.ranksvm import newton as _ranksvm_newton
from infpush_cvx.solvers.engines.common import centred, finish
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.ramp_sums import RampSums
from infpush_cvx.solvers.infinite_push import infinite_push
from infpush_cvx.solvers.ranksvm import ranksvm
from infpush_cvx.solvers.result import ConvergenceWarning, roundoff_bound, status_for_gap
from infpush_cvx.solvers.svmmap import svmmap

from bruteforce import brute_gap

LAM = 0.1


def issue_data():
    """The issue's reproducer: 12 positives, 15 negatives, 4 features."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(12, 4)) + 0.6, rng.normal(size=(15, 4))


def offset(value, where):
    shift = np.zeros(4)
    if where == "column":
        shift[0] = value
    else:
        shift[:] = value
    return shift


_REFERENCES = {}


def reference(kind):
    """The optimum of the centred data by CVXPY + Clarabel (paper scaling, lambda 0.1)."""
    if kind not in _REFERENCES:
        Xp, Xn = issue_data()
        mean = np.vstack([Xp, Xn]).mean(axis=0)
        data = BipartiteData(Xp - mean, Xn - mean)
        if kind == "ranksvm":
            problem = ranksvm_problem(data, LAM)
        else:
            problem = infinite_push_problem(data, LAM, penalty="l1" if kind == "l1" else "l2")
        problem.solve(solver="CLARABEL")
        assert problem.status == "optimal"
        _REFERENCES[kind] = problem.value
    return _REFERENCES[kind]


def quiet(solve, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(*args, **kwargs)


# ---- the rule -----------------------------------------------------------------------------------

def test_a_gap_below_minus_its_roundoff_is_a_numerical_error():
    assert status_for_gap("optimal", -9.1e-4, 1e-6, 1e-7) == "numerical_error"
    assert status_for_gap("max_iter", -1e-3, 1e-6, 1e-7) == "numerical_error"
    assert status_for_gap("optimal", -1e-8, 1e-6, 1e-7) == "optimal"  # within round-off
    assert status_for_gap("max_iter", 5e-7, 1e-6, 1e-7) == "optimal"
    assert status_for_gap("optimal", 2e-6, 1e-6, 1e-7) == "stalled"
    # no bound given: not a numerical error, but a gap below -tol proves nothing at tol
    assert status_for_gap("optimal", -1.0, 1e-6) == "stalled"
    assert status_for_gap("optimal", -2e-6, 1e-6, 1e-5) == "stalled"  # within round-off
    assert status_for_gap("max_iter", -2e-6, 1e-6, 1e-5) == "max_iter"
    assert status_for_gap("optimal", -1e-6, 1e-6, 1e-5) == "optimal"
    assert status_for_gap("time_limit", None, 1e-6, 1e-7) == "time_limit"


def test_roundoff_bound_is_terms_times_eps_times_magnitude_over_scale():
    eps = np.finfo(float).eps
    assert roundoff_bound(10, 4.0, 2.0) == pytest.approx(10 * eps * 2.0)
    assert roundoff_bound(10, 4.0, 0.0) == pytest.approx(10 * eps * 4.0)  # P = 0: absolute


def test_the_guard_catches_the_issues_negative_gap_on_uncentred_data(monkeypatch):
    """The Newton solver's ramp sums through prefix sums only (as before the zone was summed
    pair by pair), run on the raw offset data (no centring): it certifies a gap of about
    -1e-3, which ranksvm returned as 'optimal'; finish calls it what it is. (The smoothing
    schedule of the issue's time too: from mu = 1, each mu minimised to round-off.)"""
    from infpush_cvx.solvers.engines import ramp_sums as _ramp_sums

    monkeypatch.setattr(_ramp_sums, "_DIRECT_ZONE", -1)
    monkeypatch.setattr(_ranksvm_newton, "COLD_MU", 1.0)
    monkeypatch.setattr(_ranksvm_newton, "smoothing_bound", lambda *args: -1.0)
    Xp, Xn = issue_data()
    data = BipartiteData(Xp + 1e6, Xn + 1e6)
    out = _ranksvm_newton.run(data, LAM, tol=1e-6, max_iter=500, deadline=Deadline(None))
    assert out["gap"] < -1e-4
    with pytest.warns(ConvergenceWarning, match="numerical_error"):
        res = finish(data, LAM, LAM, w=out["w"], alpha=out["dual"], gap=out["gap"],
                     status=out["status"], iterations=out["iterations"], t0=0.0,
                     method="smoothing_newton", history=out["history"], loss="ranksvm",
                     penalty="l2", scaling="paper", tol=1e-6)
    assert res.status == "numerical_error" and not res.converged
    assert res.gap < -res.info["gap_roundoff"]
    assert "round-off" in res.message


def test_the_newton_certificate_is_right_even_on_uncentred_data():
    """Summed pair by pair, the ramp dual is accurate without centring too."""
    Xp, Xn = issue_data()
    for value in (1e3, 1e6, 1e7):
        data = BipartiteData(Xp + value, Xn + value)
        out = _ranksvm_newton.run(data, LAM, tol=1e-6, max_iter=500, deadline=Deadline(None))
        assert out["status"] == "optimal" and 0 <= out["gap"] <= 1e-6
        true = bipartite_objective(BipartiteData(Xp, Xn), out["w"], LAM, loss="ranksvm")
        assert true - reference("ranksvm") <= 1e-6 * true


# ---- centring -----------------------------------------------------------------------------------

def test_centring_shifts_only_columns_far_from_zero_and_exactly():
    rng = np.random.default_rng(1)
    Xp = np.column_stack([rng.normal(size=6) + 1e6, rng.integers(0, 2, 6), np.full(6, 3.0)])
    Xn = np.column_stack([rng.normal(size=7) + 1e6, rng.integers(0, 2, 7), np.full(7, 3.0)])
    data = BipartiteData(Xp, Xn)
    c = centred(data)
    shift = Xp[0] - c.Xp[0]
    assert shift[1] == 0.0 and shift[2] == 3.0  # binary column kept, constant column to 0
    assert not np.any(c.Xp[:, 2]) and not np.any(c.Xn[:, 2])
    # every pair difference is exactly the original one (Sterbenz: no rounding)
    assert np.array_equal(c.Xp[:, None, :] - c.Xn[None, :, :], Xp[:, None, :] - Xn[None, :, :])
    plain = BipartiteData(rng.normal(size=(5, 3)), rng.normal(size=(4, 3)))
    assert centred(plain) is plain


def test_centring_reads_whole_the_columns_its_first_rows_do_not_rule_out():
    rng = np.random.default_rng(2)
    Xp = np.column_stack([rng.normal(size=40) + 1e6, np.full(40, 5.0), rng.normal(size=40)])
    Xn = np.column_stack([rng.normal(size=30) + 1e6, np.full(30, 5.0), rng.normal(size=30)])
    Xn[-1, 1] = -5.0  # far from 0 on the first rows only: spans 0 over all of them
    c = centred(BipartiteData(Xp, Xn))
    shift = Xp[0] - c.Xp[0]
    assert 1e6 - 5 < shift[0] < 1e6 + 5 and shift[1] == 0.0 and shift[2] == 0.0


def test_centring_keeps_sparse_data_sparse():
    dense_p = np.array([[1e6 + 1, 0.0], [1e6 + 2, 1.0]])
    dense_n = np.array([[1e6 + 3, 0.0], [1e6 + 0.5, 2.0]])
    data = BipartiteData(sp.csr_matrix(dense_p), sp.csr_matrix(dense_n))
    c = centred(data)
    assert sp.issparse(c.Xp) and sp.issparse(c.Xn)
    shift = 1e6 + 1.75  # the midrange of the first column
    np.testing.assert_array_equal(c.Xp.toarray(), dense_p - [shift, 0.0])
    np.testing.assert_array_equal(c.Xn.toarray(), dense_n - [shift, 0.0])


# ---- the reproducers ----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["column", "all"])
@pytest.mark.parametrize("value", [1e3, 1e4, 1e6, 1e7])
def test_ranksvm_default_gives_the_centred_optimum_under_an_offset(value, where):
    Xp, Xn = issue_data()
    shift = offset(value, where)
    res = ranksvm(Xp + shift, Xn + shift, LAM)
    assert res.status == "optimal"
    assert -res.info["gap_roundoff"] <= res.gap <= 1e-6
    ref = reference("ranksvm")
    assert abs(res.objective - ref) <= 1e-6 * ref


def test_weighted_ranksvm_under_an_offset_matches_the_unshifted_solve():
    Xp, Xn = issue_data()
    wp = np.arange(1, 13)
    plain = ranksvm(Xp, Xn, LAM, wp=wp)
    res = ranksvm(Xp + 1e7, Xn + 1e7, LAM, wp=wp)
    assert res.status == "optimal" and res.gap >= -res.info["gap_roundoff"]
    assert res.objective == pytest.approx(plain.objective, rel=1e-6)


def test_ranker_under_an_offset_is_certified_honestly():
    Xp, Xn = issue_data()
    X, y = np.vstack([Xp, Xn]) + 1e6, np.r_[np.ones(12), np.zeros(15)]
    ranker = RankSVMRanker(C=1).fit(X, y)
    assert ranker.status_ == "optimal" and 0 <= ranker.dual_gap_ <= 1e-6
    plain = RankSVMRanker(C=1).fit(X - 1e6, y)
    np.testing.assert_allclose(ranker.coef_, plain.coef_, atol=1e-3)


def test_tight_tolerance_under_an_offset_is_right_or_not_optimal():
    """tol=1e-14 at offset 1e3 was 'optimal' with gap -1.8e-9, 2.1e-9 from the optimum."""
    Xp, Xn = issue_data()
    res = quiet(ranksvm, Xp + 1e3, Xn + 1e3, LAM, tol=1e-14)
    assert res.gap >= -res.info["gap_roundoff"]
    ref = reference("ranksvm")
    if res.status == "optimal":
        assert res.objective - ref <= 1e-9 * ref
    else:
        assert res.status in ("stalled", "max_iter", "numerical_error")


ROUTES = {
    "ranksvm smoothing_newton": ("ranksvm", lambda A, B: ranksvm(A, B, LAM)),
    "ranksvm working_set": ("ranksvm", lambda A, B: ranksvm(A, B, LAM, method="working_set")),
    "ranksvm fista": ("ranksvm", lambda A, B: ranksvm(A, B, LAM, method="fista")),
    "infinite_push working_set": ("l2", lambda A, B: infinite_push(A, B, LAM)),
    "infinite_push fista": ("l2", lambda A, B: infinite_push(A, B, LAM, method="fista")),
    "infinite_push admm": ("l2", lambda A, B: infinite_push(A, B, LAM, method="admm")),
    "sparse infinite_push working_set": (
        "l1", lambda A, B: infinite_push(A, B, LAM, penalty="l1")),
    "sparse infinite_push admm": (
        "l1", lambda A, B: infinite_push(A, B, LAM, penalty="l1", method="admm")),
}


@pytest.mark.parametrize("where", ["column", "all"])
@pytest.mark.parametrize("value", [1e3, 1e5, 1e7])
@pytest.mark.parametrize("route", list(ROUTES))
def test_every_route_is_right_or_honest_under_an_offset(route, value, where):
    kind, solve = ROUTES[route]
    Xp, Xn = issue_data()
    shift = offset(value, where)
    res = quiet(solve, Xp + shift, Xn + shift)
    assert res.gap >= -res.info["gap_roundoff"]
    ref = reference(kind)
    if res.status == "optimal":
        # Clarabel's own answer is good to about 2e-9 (l1: its LP optimum 1 + 1.5e-9)
        assert res.objective - ref <= 1e-6 * ref + 1e-8
    else:
        assert res.status in ("max_iter", "stalled", "time_limit")


@pytest.mark.parametrize("where", ["column", "all"])
def test_svmmap_under_an_offset_matches_the_unshifted_solve(where):
    Xp, Xn = issue_data()
    plain = svmmap(Xp, Xn, LAM)
    shift = offset(1e7, where)
    res = svmmap(Xp + shift, Xn + shift, LAM)
    assert res.status == "optimal" and res.gap >= -res.info["gap_roundoff"]
    assert res.objective == pytest.approx(plain.objective, rel=1e-6)


def test_ramp_sums_of_the_zone_pair_by_pair_match_the_brute_force_sums():
    rng = np.random.default_rng(3)
    s, t = rng.normal(size=40) * 3, rng.normal(size=30) * 3
    p, q = rng.uniform(0.5, 2, 40), rng.uniform(0.5, 2, 30)
    for mu in (1e-3, 0.3):
        ramp = RampSums(s, t, p, q, mu)
        x = 1.0 - s[:, None] + t[None, :]
        a = np.clip((x + mu / 2) / mu, 0.0, 1.0)
        h = np.where(np.abs(x) < mu / 2, (x + mu / 2) ** 2 / (2 * mu), np.maximum(x, 0.0))
        np.testing.assert_allclose(ramp.col, p @ a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ramp.row, a @ q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ramp.col_h, p @ h, rtol=1e-12, atol=1e-12)
    assert RampSums(s, t, p, q, 1e-3).amplification == 1.0  # a small zone: pair by pair


# ---- tiny lambda --------------------------------------------------------------------------------

def test_paper_method_at_a_tiny_lambda_reports_a_finite_honest_objective():
    """lam 1e-300: the objective was inf while its w gives a finite value."""
    Xp, Xn = issue_data()
    res = quiet(ranksvm, Xp, Xn, 1e-300, method="paper", max_iter=50)
    assert np.all(np.isfinite(res.w)) and np.isfinite(res.objective)
    data = BipartiteData(Xp, Xn)
    assert res.objective == bipartite_objective(data, res.w, 1e-300, loss="ranksvm")
    assert res.status != "optimal"


def test_penalty_term_is_finite_where_the_squared_norm_overflows():
    w = np.array([2e296, -1e296])
    assert penalty_term(w, 1e-300, "l2", "paper") == pytest.approx(2.5e292, rel=1e-12)
    assert penalty_term(np.array([1.0, 2.0]), 0.5, "l2", "paper") == 1.25


def test_infinite_push_ranker_at_a_huge_C_is_certified():
    """InfinitePushRanker(C=1e12) ended 'failed' with gap inf; the optimum is 0.9617."""
    Xp, Xn = issue_data()
    X, y = np.vstack([Xp, Xn]), np.r_[np.ones(12), np.zeros(15)]
    ranker = InfinitePushRanker(C=1e12).fit(X, y)
    assert ranker.status_ == "optimal" and ranker.dual_gap_ <= 1e-6
    res = infinite_push(Xp, Xn, 1e-12)
    data = BipartiteData(Xp, Xn)
    assert res.status == "optimal"
    assert brute_gap(data, res.w, res.dual.to_dense(), 1e-12) <= 1e-6
    assert res.objective == pytest.approx(0.9617039, abs=1e-6)


@pytest.mark.parametrize("route", ["ranksvm smoothing_newton", "ranksvm working_set",
                                   "infinite_push working_set"])
def test_sparse_data_with_an_offset_column_give_the_centred_optimum(route):
    kind, solve = ROUTES[route]
    Xp, Xn = issue_data()
    shift = offset(1e7, "column")  # a column with every entry stored: shifted, still sparse
    res = solve(sp.csr_matrix(Xp + shift), sp.csr_matrix(Xn + shift))
    assert res.status == "optimal" and res.gap >= -res.info["gap_roundoff"]
    assert res.objective - reference(kind) <= 1e-6 * reference(kind)
