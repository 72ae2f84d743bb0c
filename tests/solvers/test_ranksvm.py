"""RankSVM solvers against independent CVXPY + Clarabel solves, certificates re-derived here."""

import numpy as np
import pytest

from infpush_cvx.formulations import scaling as sc
from infpush_cvx.formulations import ranksvm_problem as rs_problem
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.ranksvm import ranksvm

from bruteforce import brute_gap, brute_primal

INSTANCES = {
    "dense": lambda: planted_bipartite(25, 35, 6, seed=7),
    "sparse": lambda: planted_bipartite(25, 35, 20, seed=8, density=0.4),
}
LAMS = {"paper": 0.02, "seed": 1.0}


def reference(data, scaling):
    prob = rs_problem(data, LAMS[scaling], scaling=scaling, form="compact")
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return prob.value


def check(data, res, scaling):
    lam = sc.to_paper_lambda(LAMS[scaling], scaling, loss="ranksvm", penalty="l2",
                             m=data.m, n=data.n)
    gap = brute_gap(data, res.w, res.dual, lam, loss="ranksvm")
    # the solvers sum the pairs by sorted prefix sums: their gap agrees with the brute-force one
    # up to rounding in the objective's last digits (1e-9 of it)
    assert gap == pytest.approx(res.gap, rel=1e-6, abs=1e-9)
    mult = sc.objective_multiplier(scaling, loss="ranksvm", m=data.m, n=data.n)
    assert res.objective == pytest.approx(mult * brute_primal(data, res.w, lam, "ranksvm"),
                                          rel=1e-12)
    return gap


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("scaling", ["paper", "seed"])
@pytest.mark.parametrize("method", ["smoothing_newton", "working_set", "fista"])
def test_certified_methods_match_cvxpy(kind, scaling, method):
    data = INSTANCES[kind]()
    res = ranksvm(data.Xp, data.Xn, LAMS[scaling], scaling=scaling, method=method,
                   max_iter=None if method != "fista" else 100000)
    assert res.status == "optimal"
    assert check(data, res, scaling) <= 1e-6
    ref = reference(data, scaling)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


def test_paper_method_is_honest():
    data = INSTANCES["dense"]()
    res = ranksvm(data.Xp, data.Xn, LAMS["paper"], method="paper", max_iter=300)
    gap = check(data, res, "paper")
    assert (res.status == "optimal") == (gap <= 1e-6)
    ref = reference(data, "paper")
    assert (res.objective - ref) / res.objective <= gap + 1e-8


def test_bad_input():
    data = INSTANCES["dense"]()
    with pytest.raises(ValueError, match="method"):
        ranksvm(data.Xp, data.Xn, 0.1, method="admm")
    with pytest.raises(ValueError, match="lam"):
        ranksvm(data.Xp, data.Xn, 0.0)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("prox", [0.0, 1.0])
def test_working_set_step_rules_with_a_capped_band(kind, prox):
    """Plain and proximal model steps both end certified at the CVXPY optimum, also when the band
    is capped far below the number of pairs near the margin (several rounds)."""
    from infpush_cvx.solvers import WorkingSetOptions
    from infpush_cvx.solvers.engines import working_set as _working_set

    data = INSTANCES[kind]()
    lam = LAMS["paper"]
    out = _working_set.solve(data, lam, loss="ranksvm", penalty="l2", tol=1e-7, max_iter=200,
                             options=WorkingSetOptions(prox=prox, band_cap=20))
    assert out["status"] == "optimal" and len(out["history"]["gap"]) > 1
    assert brute_gap(data, out["w"], out["dual"], lam, loss="ranksvm") <= 1e-7
    ref = reference(data, "paper")
    assert abs(brute_primal(data, out["w"], lam, "ranksvm") - ref) <= 1e-6 * ref


@pytest.mark.parametrize("method", ["smoothing_newton", "working_set"])
def test_warm_start_is_certified(method):
    data = INSTANCES["dense"]()
    cold = ranksvm(data.Xp, data.Xn, LAMS["paper"], method=method)
    warm = ranksvm(data.Xp, data.Xn, LAMS["paper"], method=method, warm_start=cold)
    assert warm.status == "optimal" and warm.iterations <= cold.iterations
    assert check(data, warm, "paper") <= 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_smoothing_newton_certifies_nearly_separable_data_itself(seed):
    """d = m = n = 50: the loss is near 0 and the smoothed Hessian's curvature sits on few pairs;
    Newton's steps shrank to 1e-9 for 400 iterations at one smoothing level and the solve ended
    at max_iter. Now a step that finds no descent smooths less, and Newton certifies alone."""
    data = planted_bipartite(50, 50, 50, margin=0.5, seed=seed)
    res = ranksvm(data.Xp, data.Xn, 0.01)
    assert res.status == "optimal" and res.gap <= 1e-6
    assert res.message == "" and res.iterations < 250  # no rescue by the working set needed
    ref = ranksvm(data.Xp, data.Xn, 0.01, method="working_set")
    assert res.objective == pytest.approx(ref.objective, rel=2e-6)


def test_smoothing_schedule_smooths_less_early_while_on_track(monkeypatch):
    """While every line search takes the full Newton step, mu falls as soon as the Newton
    decrement is below the smoothing's error bound (fewer steps than minimising each F_mu to
    round-off, the same certified optimum); after the first shortened step each mu is minimised
    until its decrement is negligible (step_size 0 in the history) before mu falls."""
    from infpush_cvx.solvers.ranksvm import newton

    data = planted_bipartite(100, 200, 10, seed=0)
    early = ranksvm(data, LAMS["paper"])
    steps, mu = np.asarray(early.history["step_size"]), np.asarray(early.history["mu"])
    falls = np.flatnonzero(mu[1:] < mu[:-1])  # record k is the last at its mu
    first_short = np.flatnonzero(steps < 1.0)[0]
    assert any(steps[k] == 1.0 for k in falls if k < first_short)  # an early fall happened
    assert all(steps[k] < 1e-6 for k in falls if k > first_short)
    monkeypatch.setattr(newton, "smoothing_bound", lambda *args: -1.0)  # never early
    full = ranksvm(data, LAMS["paper"])
    assert early.status == full.status == "optimal"
    assert early.iterations < full.iterations
    assert check(data, early, "paper") <= 1e-6
    assert early.objective == pytest.approx(reference(data, "paper"), rel=1e-6)
