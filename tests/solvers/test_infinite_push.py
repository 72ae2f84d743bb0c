"""Infinite Push solvers against independent CVXPY + Clarabel solves (compact form).

Certificates are re-derived here from the returned ``w`` and ``dual`` with brute-force formulas
(bruteforce.py), never taken from the solver.
"""

import numpy as np
import pytest

from infpush_cvx.formulations import scaling as sc
from infpush_cvx.formulations import infinite_push_problem as ip_problem
from infpush_cvx.data.generators import degenerate_bipartite, planted_bipartite
from infpush_cvx.solvers.infinite_push import infinite_push

from bruteforce import brute_gap, brute_primal

INSTANCES = {
    "dense": lambda: planted_bipartite(30, 40, 6, seed=0),
    "sparse": lambda: planted_bipartite(30, 40, 20, seed=1, density=0.4),
}
LAMS = {"paper": 0.05, "seed": 1.0}
_cache = {}


def cvxpy_value(kind, penalty, scaling):
    key = (kind, penalty, scaling)
    if key not in _cache:
        prob = ip_problem(INSTANCES[kind](), LAMS[scaling], penalty=penalty, scaling=scaling,
                          form="compact")
        prob.solve(solver="CLARABEL")
        assert prob.status == "optimal"
        _cache[key] = prob.value
    return _cache[key]


def paper_lam(data, penalty, scaling):
    return sc.to_paper_lambda(LAMS[scaling], scaling, loss="infinite_push", penalty=penalty,
                              m=data.m, n=data.n)


def check_certificate(data, res, penalty, scaling):
    """Gap recomputed from (w, dual) by brute force; it must bound the true suboptimality."""
    lam = paper_lam(data, penalty, scaling)
    gap = brute_gap(data, res.w, res.dual, lam, penalty=penalty)
    assert gap == pytest.approx(res.gap, rel=1e-6, abs=1e-12)
    mult = sc.objective_multiplier(scaling, loss="infinite_push", m=data.m, n=data.n)
    assert res.objective == pytest.approx(mult * brute_primal(data, res.w, lam, penalty=penalty),
                                          rel=1e-12)
    return gap


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("scaling", ["paper", "seed"])
@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_working_set_matches_cvxpy_and_is_certified(kind, scaling, penalty):
    data = INSTANCES[kind]()
    res = infinite_push(data.Xp, data.Xn, LAMS[scaling], penalty=penalty, scaling=scaling)
    assert res.status == "optimal"
    gap = check_certificate(data, res, penalty, scaling)
    assert gap <= 1e-6
    ref = cvxpy_value(kind, penalty, scaling)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


@pytest.mark.parametrize("scaling", ["paper", "seed"])
def test_fista_matches_cvxpy(scaling):
    data = INSTANCES["dense"]()
    res = infinite_push(data.Xp, data.Xn, LAMS[scaling], scaling=scaling, method="fista",
                        max_iter=50000)
    assert res.status == "optimal"
    assert check_certificate(data, res, "l2", scaling) <= 1e-6
    ref = cvxpy_value("dense", "l2", scaling)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


@pytest.mark.parametrize("method,penalty", [("paper", "l2"), ("admm", "l2"), ("admm", "l1")])
def test_uncertified_methods_report_their_accuracy_honestly(method, penalty):
    data = INSTANCES["dense"]()
    res = infinite_push(data.Xp, data.Xn, LAMS["paper"], penalty=penalty, method=method,
                        max_iter=300)
    gap = check_certificate(data, res, penalty, "paper")
    assert (res.status == "optimal") == (gap <= 1e-6)
    assert res.status in ("optimal", "max_iter")
    ref = cvxpy_value("dense", penalty, "paper")
    # The certificate's meaning: (P(w) - P*) / P(w) <= gap.
    assert (res.objective - ref) / res.objective <= gap + 1e-8
    assert len(res.history["objective"]) == len(res.history["gap"]) == len(res.history["time"])


def test_paper_method_starts_as_the_paper_says_and_keeps_the_best_iterate():
    data = INSTANCES["dense"]()
    lam = LAMS["paper"]
    # A negligible step leaves the returned (best) iterate at the initial point C/(1000 m n).
    res1 = infinite_push(data.Xp, data.Xn, lam, method="paper", max_iter=1, eta0=1e-15)
    C = 1.0 / lam
    np.testing.assert_allclose(res1.dual, C / (1000 * data.m * data.n), rtol=1e-9)
    res = infinite_push(data.Xp, data.Xn, lam, method="paper", max_iter=200)
    Q = res.history["Q"]
    assert all(b <= a for a, b in zip(Q, Q[1:]))  # best-so-far Q never increases


def test_admm_l1_reaches_certified_optimum_with_enough_iterations():
    data = planted_bipartite(10, 12, 4, seed=5)
    res = infinite_push(data.Xp, data.Xn, 0.05, penalty="l1", method="admm", max_iter=5000,
                        tol=1e-3)
    gap = brute_gap(data, res.w, res.dual, 0.05, penalty="l1")
    assert res.status == "optimal" and gap <= 1e-3


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("scaling", ["paper", "seed"])
def test_degenerate_instance_answered_exactly(penalty, scaling):
    data = degenerate_bipartite(20, 30, 5, seed=2)
    res = infinite_push(data.Xp, data.Xn, LAMS[scaling], penalty=penalty, scaling=scaling)
    assert res.status == "degenerate_optimal"
    np.testing.assert_array_equal(res.w, 0.0)
    assert res.objective == pytest.approx(1.0 if scaling == "paper" else data.m, rel=1e-12)
    assert check_certificate(data, res, penalty, scaling) <= 1e-6


def test_warm_start_from_previous_result():
    data = INSTANCES["dense"]()
    first = infinite_push(data.Xp, data.Xn, 0.05)
    again = infinite_push(data.Xp, data.Xn, 0.05, warm_start=first)
    assert again.status == "optimal" and again.iterations <= first.iterations
    assert again.objective == pytest.approx(first.objective, rel=1e-6)
    f2 = infinite_push(data.Xp, data.Xn, 0.05, method="fista", warm_start=first, max_iter=5000)
    f_cold = infinite_push(data.Xp, data.Xn, 0.05, method="fista", max_iter=5000)
    # the working set's implicit dual point, materialised, is a warm start for FISTA
    assert f2.status == "optimal" and f2.iterations < f_cold.iterations


def test_bad_input_names_the_argument():
    data = INSTANCES["dense"]()
    with pytest.raises(ValueError, match="method"):
        infinite_push(data.Xp, data.Xn, 0.1, method="newton")
    with pytest.raises(ValueError, match="method"):
        infinite_push(data.Xp, data.Xn, 0.1, penalty="l1", method="fista")
    with pytest.raises(ValueError, match="penalty"):
        infinite_push(data.Xp, data.Xn, 0.1, penalty="l3")
    with pytest.raises(ValueError, match="scaling"):
        infinite_push(data.Xp, data.Xn, 0.1, scaling="other")
    with pytest.raises(ValueError, match="lam"):
        infinite_push(data.Xp, data.Xn, -1.0)
    with pytest.raises(TypeError, match="lam"):
        infinite_push(data.Xp, data.Xn, "0.1")
    with pytest.raises(ValueError, match="tol"):
        infinite_push(data.Xp, data.Xn, 0.1, tol=0)
    with pytest.raises(ValueError, match="max_iter"):
        infinite_push(data.Xp, data.Xn, 0.1, max_iter=0)
    with pytest.raises(ValueError, match="features"):
        infinite_push(data.Xp, data.Xn[:, :3], 0.1)
    with pytest.raises(ValueError, match="warm_start"):
        infinite_push(data.Xp, data.Xn, 0.1, method="fista", warm_start=np.zeros((2, 2)))


def test_stops_early_says_so():
    data = INSTANCES["dense"]()
    res = infinite_push(data.Xp, data.Xn, 0.05, method="fista", max_iter=3)
    assert res.status == "max_iter" and res.gap > 1e-6


@pytest.mark.parametrize("near_max", [-0.1, 1.5, float("nan")])
def test_working_set_near_max_is_a_fraction(near_max):
    """``near_max`` (the negatives whose pairs may join the band) is a fraction in [0, 1]."""
    from infpush_cvx.solvers import WorkingSetOptions

    with pytest.raises(ValueError, match="options.near_max"):
        WorkingSetOptions(near_max=near_max)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("penalty,options", [
    ("l2", {"prox": 0.0}),                                 # plain model steps
    ("l2", {"prox": 1.0, "band_cap": 15}),                  # proximal steps, capped band
    ("l1", {"prox": 0.5}),                                 # proximal QP steps
    ("l1", {"prox": 0.0, "band_cap": 15, "new_negatives": 2}),  # plain LP steps, small sets
    ("l1", {"band_cap": 15, "new_negatives": 2, "max_band": 400}),  # capped model
    ("l1", {"near_max": 0.0, "band_cap": 15, "new_negatives": 2}),  # band: negatives at the max
    ("l2", {"near_max": 1.0}),                              # band: every working negative
])
def test_working_set_variants_reach_the_certified_optimum(kind, penalty, options):
    """Every step rule of the working set (proximal or plain steps; capped band and working
    negatives) ends at the CVXPY optimum with a brute-force certified gap."""
    from infpush_cvx.solvers import WorkingSetOptions
    from infpush_cvx.solvers.engines.working_set import solve

    data = INSTANCES[kind]()
    lam = paper_lam(data, penalty, "paper")
    out = solve(data, lam, loss="infinite_push", penalty=penalty, tol=1e-7, max_iter=200,
                options=WorkingSetOptions(**options))
    assert out["status"] == "optimal"
    assert brute_gap(data, out["w"], out["dual"], lam, penalty=penalty) <= 1e-7
    ref = cvxpy_value(kind, penalty, "paper")
    assert abs(brute_primal(data, out["w"], lam, penalty=penalty) - ref) <= 1e-6 * ref
    if options.get("band_cap") == 15:
        assert len(out["history"]["gap"]) > 1  # the capped band needed more than one round


def test_warm_start_takes_a_plain_first_step_and_keeps_the_certificate():
    data = planted_bipartite(60, 80, 8, seed=11)
    cold = infinite_push(data.Xp, data.Xn, 0.02)
    warm = infinite_push(data.Xp, data.Xn, 0.02, warm_start=cold.w)
    assert warm.status == "optimal" and warm.iterations == 1
    assert brute_gap(data, warm.w, warm.dual, 0.02) <= 1e-6
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)


def _failing(name):
    def fail(*args, **kwargs):
        from infpush_cvx.solvers.engines.restricted_step import RestrictedStepFailed
        raise RestrictedStepFailed(f"{name}: injected failure")
    return fail


def test_restricted_steps_fall_back_to_clarabel_when_the_interior_point_method_fails(monkeypatch):
    from infpush_cvx.solvers.engines import restricted_step as _restricted_step
    from infpush_cvx.solvers.engines import working_set as _working_set

    monkeypatch.setattr(_restricted_step, "_solve_ipm", _failing("ipm"))
    data = INSTANCES["dense"]()
    lam = paper_lam(data, "l2", "paper")
    out = _working_set.solve(data, lam, loss="infinite_push", penalty="l2", tol=1e-7,
                             max_iter=200)
    assert out["status"] == "optimal"
    assert set(out["history"]["step_solver"]) == {"clarabel"}
    assert brute_gap(data, out["w"], out["dual"], lam) <= 1e-7


def test_l1_plain_step_goes_to_highs_when_clarabel_fails(monkeypatch):
    """A plain l1 step (an LP) that the interior-point method and Clarabel fail on is solved by
    HiGHS."""
    from infpush_cvx.solvers import WorkingSetOptions
    from infpush_cvx.solvers.engines import restricted_step as _restricted_step
    from infpush_cvx.solvers.engines import working_set as _working_set

    real_clarabel = _restricted_step._solve_clarabel

    def failing_plain(rp, *args, **kwargs):
        if rp.kappa == 0:
            raise _restricted_step.RestrictedStepFailed("Clarabel: DualInfeasible")
        return real_clarabel(rp, *args, **kwargs)

    monkeypatch.setattr(_restricted_step, "_solve_ipm", _failing("ipm"))
    monkeypatch.setattr(_restricted_step, "_solve_clarabel", failing_plain)
    data = INSTANCES["dense"]()
    lam = paper_lam(data, "l1", "paper")
    out = _working_set.solve(data, lam, loss="infinite_push", penalty="l1", tol=1e-7,
                             max_iter=200, options=WorkingSetOptions(prox=0.0))
    assert out["status"] == "optimal"
    assert "highs" in out["history"]["step_solver"]
    assert brute_gap(data, out["w"], out["dual"], lam, penalty="l1") <= 1e-7


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_a_step_no_solver_can_solve_ends_with_a_status_not_an_exception(monkeypatch, penalty):
    """When every restricted-step solver fails, the solve returns its best certified point with
    status "failed", a message naming each solver's failure, and a ConvergenceWarning."""
    from infpush_cvx.solvers.engines import restricted_step as _restricted_step
    from infpush_cvx.solvers.result import ConvergenceWarning

    for name in ("_solve_ipm", "_solve_clarabel", "_solve_highs"):
        monkeypatch.setattr(_restricted_step, name, _failing(name))
    data = INSTANCES["dense"]()
    with pytest.warns(ConvergenceWarning, match="failed"):
        res = infinite_push(data.Xp, data.Xn, LAMS["paper"], penalty=penalty)
    assert res.status == "failed" and not res.converged
    assert "_solve_ipm: injected failure" in res.message
    assert "_solve_clarabel: injected failure" in res.message
    # no step was solved, so there is no dual point and nothing is certified
    assert res.dual is None and res.gap == np.inf
    assert res.objective == pytest.approx(brute_primal(data, res.w, LAMS["paper"],
                                                       penalty=penalty), rel=1e-12)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("lam,factor", [(1e300, 1.0), (0.1, 1e-20), (1e6, 1.0)])
def test_a_large_lambda_is_certified_at_w_zero(penalty, lam, factor):
    """lambda far above the data's scale: w* is 0 (l1) or within 1/lambda of it (l2). The
    working set's proximal steps cannot certify that (it ran 200 rounds to max_iter); the dual
    point of w = 0 (every pair at hinge 1, the negatives weighted equally) does, at once."""
    rng = np.random.default_rng(0)
    Xp, Xn = rng.standard_normal((8, 3)) + 0.5, rng.standard_normal((6, 3))
    res = infinite_push(Xp * factor, Xn * factor, lam, penalty=penalty)
    assert res.status == "optimal" and res.gap <= 1e-6 and res.iterations <= 2
    assert res.objective == pytest.approx(1.0, abs=1e-6)  # P(0) = 1 in paper scaling


def test_null_steps_that_add_negatives_bring_a_shrunk_proximal_weight_back():
    """A null step that adds missing negatives at a proximal weight shrunk below ``prox`` by
    serious steps raises it (times 4, up to ``prox``): on the binary set 1,500 x 48,000 x 300
    (l1, lambda 1e-3) ten null steps at weight 2.4e-4 each added negatives and grew the band
    to 500,000 pairs with the gap at 0.34 (120 s). This smaller set has such a null step."""
    from infpush_cvx.data.generators import binary_bipartite

    data = binary_bipartite(400, 10_000, 300, seed=0)
    res = infinite_push(data, lam=1e-3, penalty="l1")
    assert res.status == "optimal" and res.gap <= 1e-6
    h = res.history
    added = [h["working_negatives"][r + 1] > h["working_negatives"][r]
             for r in range(len(h["step"]) - 1)]
    rounds = [r for r, more in enumerate(added)
              if more and h["step"][r] == "null" and h["prox"][r] < 1.0]
    assert rounds  # (the case tested)
    assert all(h["prox"][r + 1] > h["prox"][r] for r in rounds)
