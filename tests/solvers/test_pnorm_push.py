"""The P-Norm Push (Rudin 2009): the CVXPY formulation against a brute-force objective, the
certified Newton solver against independent CVXPY solves and the stored catalog values, its
certificate recomputed from the dual point, Rudin's boosting, the large-p limit, bad input."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import catalog, formulations
from infpush_cvx.data import BipartiteData
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.catalog.reference import load_reference
from infpush_cvx.solvers.pnorm_push import METHODS, pnorm_push
from infpush_cvx.solvers.result import ConvergenceWarning

PS = (1, 4, 16, 64)


def brute_objective(Xp, Xn, w, lam, p, wp=None, wn=None):
    """Rudin's sum over pairs written out, the paper scaling's (weighted) averages:
    ``lam/2 ||w||^2 + (1/p) log( sum_j b_j (sum_i a_i exp(-(s_i - t_j)))^p )``."""
    s, t = Xp @ w, Xn @ w
    a = np.ones(len(s)) if wp is None else np.asarray(wp, float)
    b = np.ones(len(t)) if wn is None else np.asarray(wn, float)
    a, b = a / a.sum(), b / b.sum()
    pair = np.exp(-(s[:, None] - t[None, :]))            # m x n
    inner = a @ pair                                       # per negative
    return 0.5 * lam * w @ w + np.log(b @ inner ** p) / p


def brute_dual(Xp, Xn, sigma, rho, lam, p, wp=None, wn=None):
    """``-(1/p) KL(sigma || b) - KL(rho || a) - ||Xn^T sigma - Xp^T rho||^2 / (2 lam)``, written
    from the definition (no shared code with the solver)."""
    a = np.ones(Xp.shape[0]) if wp is None else np.asarray(wp, float)
    b = np.ones(Xn.shape[0]) if wn is None else np.asarray(wn, float)
    a, b = a / a.sum(), b / b.sum()
    assert np.all(sigma >= 0) and np.all(rho >= 0)
    assert sigma.sum() == pytest.approx(1.0, abs=1e-12)
    assert rho.sum() == pytest.approx(1.0, abs=1e-12)
    kl = lambda u, v: sum(ui * np.log(ui / vi) for ui, vi in zip(u, v) if ui > 0)  # noqa: E731
    v = Xn.T @ sigma - Xp.T @ rho
    return -kl(sigma, b) / p - kl(rho, a) - v @ v / (2 * lam)


def cvxpy_value(data, lam, p):
    prob = formulations.pnorm_push_problem(data, lam, p=p)
    for solver in ("CLARABEL", "ECOS"):  # Clarabel's exponential cones can stop inaccurate
        try:
            prob.solve(solver=solver)
        except cp.error.SolverError:
            continue
        if prob.status == cp.OPTIMAL:
            return prob.value
    pytest.fail(f"no CVXPY solver solved p={p}: {prob.status}")


# -- formulation -------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2.5, 16])
@pytest.mark.parametrize("weighted", [False, True])
def test_formulation_is_the_brute_force_objective(p, weighted):
    rng = np.random.default_rng(3)
    Xp, Xn = rng.normal(size=(7, 4)), rng.normal(size=(9, 4))
    wp, wn = (rng.uniform(0.5, 3, 7), rng.uniform(0.5, 3, 9)) if weighted else (None, None)
    prob = formulations.pnorm_push_problem(BipartiteData(Xp, Xn, wp, wn), 0.3, p=p)
    assert prob.is_dcp() and set(prob.var_dict) == {"w"} and "lam" in prob.param_dict
    for _ in range(3):
        w = rng.normal(size=4)
        prob.var_dict["w"].value = w
        assert prob.objective.value == pytest.approx(brute_objective(Xp, Xn, w, 0.3, p, wp, wn),
                                                     rel=1e-12)
    # the exponential cone: the problem reaches ExpCone constraints when compiled
    data, _, _ = prob.get_problem_data(cp.CLARABEL)
    assert data["dims"].exp > 0


# -- the certified Newton solver against CVXPY ---------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p", PS)
def test_newton_matches_cvxpy_and_brackets_it(seed, p):
    data = planted_bipartite(25 + 5 * seed, 35, 6, margin=0.5, seed=seed)
    lam = (0.1, 0.03, 0.3)[seed]
    res = pnorm_push(data, lam=lam, p=p)
    assert res.status == "optimal" and res.gap <= 1e-8
    value = cvxpy_value(data, lam, p)
    assert res.objective == pytest.approx(value, rel=1e-6)
    # the solver's objective is the brute one at its w, and the brute dual at its dual point
    # is a lower bound: D <= CVXPY's value (up to its accuracy) <= P
    P = brute_objective(data.Xp, data.Xn, res.w, lam, p)
    D = brute_dual(data.Xp, data.Xn, res.info["sigma"], res.info["rho"], lam, p)
    assert res.objective == pytest.approx(P, rel=1e-12, abs=1e-14)
    assert D <= value + 1e-7 * abs(value) and P >= value - 1e-7 * abs(value)


@pytest.mark.parametrize("p", PS)
def test_certificate_recomputed_independently(p):
    data = planted_bipartite(30, 40, 8, margin=0.5, seed=7)
    lam = 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = pnorm_push(data, lam=lam, p=p, tol=1e-6, max_iter=3)  # stopped early on purpose
    res_opt = pnorm_push(data, lam=lam, p=p)
    for r in (res, res_opt):
        P = brute_objective(data.Xp, data.Xn, r.w, lam, p)
        D = brute_dual(data.Xp, data.Xn, r.info["sigma"], r.info["rho"], lam, p)
        # the reported gap is P - D relative to |P|, D the dual value at the reported point
        assert r.info["dual_value"] == pytest.approx(D, rel=1e-9, abs=1e-12)
        assert r.gap == pytest.approx((P - D) / abs(P), rel=1e-5, abs=1e-13)
        # and D is a lower bound on P at any other w
        for w in np.random.default_rng(p).normal(scale=0.3, size=(5, data.d)):
            other = brute_objective(data.Xp, data.Xn, w, lam, p)
            assert np.isfinite(other) and D <= other
        assert D <= res_opt.objective + 1e-12
    assert res.iterations <= 3
    if res.status != "optimal":  # an honest early stop: the gap says how far it is
        assert res.status == "max_iter" and res.gap > 1e-6


def test_stored_catalog_values_are_reproduced():
    ids = [pid for pid in catalog.problem_ids() if pid.startswith("pnorm_")]
    assert len(ids) == 12
    assert {catalog.get(pid).options["p"] for pid in ids} == set(PS)
    for pid in ids:
        spec = catalog.get(pid)
        assert spec.problem_class == "EXP"
        data = catalog.instance_data(spec.instance)
        stored = load_reference(pid)["opt_val"]
        res = pnorm_push(data, lam=spec.lam, p=spec.options["p"])
        assert res.status == "optimal", pid
        assert res.objective == pytest.approx(stored, rel=1e-6), pid
        # the stored value lies between the certified bounds (Clarabel's 1e-8 accuracy aside)
        slack = 1e-8 * abs(stored)
        assert res.info["dual_value"] <= stored + slack <= res.objective + 2 * slack


def test_sample_weights_are_repeated_rows_and_sparse_equals_dense():
    data = planted_bipartite(15, 20, 5, margin=0.5, seed=4)
    rng = np.random.default_rng(0)
    cp_, cn = rng.integers(1, 4, 15), rng.integers(1, 4, 20)
    weighted = pnorm_push(data.Xp, data.Xn, 0.1, p=4, wp=cp_, wn=cn)
    repeated = pnorm_push(np.repeat(data.Xp, cp_, axis=0), np.repeat(data.Xn, cn, axis=0), 0.1,
                          p=4)
    np.testing.assert_allclose(weighted.w, repeated.w, rtol=1e-7, atol=1e-9)
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-10)
    assert weighted.objective == pytest.approx(cvxpy_value(BipartiteData(data.Xp, data.Xn, cp_, cn),
                                                           0.1, 4), rel=1e-6)
    sparse = pnorm_push(sp.csr_matrix(data.Xp), sp.csr_matrix(data.Xn), 0.1, p=4)
    np.testing.assert_allclose(sparse.w, pnorm_push(data, lam=0.1, p=4).w, rtol=1e-8, atol=1e-10)


def test_cvxpy_method_is_certified_by_the_same_gap():
    data = planted_bipartite(20, 25, 5, margin=0.5, seed=5)
    res = pnorm_push(data, lam=0.1, p=4, method="cvxpy", solver="ECOS", tol=1e-6)
    ref = pnorm_push(data, lam=0.1, p=4)
    assert res.method == "cvxpy" and res.status == "optimal" and res.gap <= 1e-6
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_warm_start_and_time_limit():
    data = planted_bipartite(40, 50, 8, margin=0.5, seed=6)
    cold = pnorm_push(data, lam=0.05, p=16)
    warm = pnorm_push(data, lam=0.05, p=16, warm_start=cold)
    assert warm.iterations <= 1 and warm.objective == pytest.approx(cold.objective, rel=1e-10)
    with pytest.warns(ConvergenceWarning):
        res = pnorm_push(data, lam=0.05, p=16, time_limit=1e-9)
    assert res.status == "time_limit" and not res.converged and res.gap > 1e-8


# -- Rudin's boosting ----------------------------------------------------------------------------

def _log_rudin_F(Xp, Xn, w, p):
    """log of Rudin's objective sum_k (sum_i exp(-(s_i - t_k)))^p, brute force."""
    s, t = Xp @ w, Xn @ w
    return np.log(np.sum(np.sum(np.exp(-(s[:, None] - t[None, :])), axis=0) ** p))


@pytest.mark.parametrize("p", PS)
def test_boosting_decreases_rudins_objective_monotonically(p):
    data = planted_bipartite(20, 30, 6, margin=0.2, seed=8)
    with pytest.warns(ConvergenceWarning):  # 100 rounds, unregularised: not the P optimum
        res = pnorm_push(data, lam=0.1, p=p, method="boosting")
    assert res.method == "boosting" and res.iterations == 100 and res.status == "max_iter"
    loss = np.array(res.history["loss"])
    assert loss.shape == (101,) and np.all(np.diff(loss) <= 1e-12 * np.abs(loss[1:]))
    assert loss[-1] < loss[0] - 0.1
    # the loss is log Rudin's F up to the constant: log F = p (loss + log m) + log n
    m, n = data.m, data.n
    assert _log_rudin_F(data.Xp, data.Xn, res.w, p) == pytest.approx(
        p * (loss[-1] + np.log(m)) + np.log(n), rel=1e-10)
    # one weak ranker (feature) per round (none before the first: NaN), and the w is the sum
    # of the steps
    assert np.isnan(res.history["feature"][0]) and np.isnan(res.history["alpha"][0])
    w = np.zeros(data.d)
    for j, a in zip(res.history["feature"][1:], res.history["alpha"][1:]):
        w[int(j)] += a
    np.testing.assert_allclose(w, res.w, rtol=1e-12, atol=1e-14)


def test_boosting_round_solves_rudins_line_search_equation():
    """Rudin's step: 0 = sum_k (sum_i e^{-(s_i - t_k)})^(p-1) sum_i M_ik,j e^{-(s_i - t_k)}."""
    data = planted_bipartite(15, 20, 4, margin=0.2, seed=9)
    p = 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = pnorm_push(data, lam=1.0, p=p, method="boosting", max_iter=3)
    w = np.zeros(data.d)
    for j, a in zip(res.history["feature"][1:], res.history["alpha"][1:]):  # (row 0: NaN)
        j = int(j)
        w[j] += a
        s, t = data.Xp @ w, data.Xn @ w
        E = np.exp(-(s[:, None] - t[None, :]))
        M = data.Xp[:, j][:, None] - data.Xn[:, j][None, :]
        derivative = np.sum(E.sum(axis=0) ** (p - 1) * (M * E).sum(axis=0))
        scale = np.sum(E.sum(axis=0) ** (p - 1) * (np.abs(M) * E).sum(axis=0))
        assert abs(derivative) <= 1e-9 * scale
        # the chosen ranker is the steepest one, |d^T M| largest over the features
        w_prev = w.copy()
        w_prev[j] -= a
        s0, t0 = data.Xp @ w_prev, data.Xn @ w_prev
        E0 = np.exp(-(s0[:, None] - t0[None, :]))
        D0 = E0 * E0.sum(axis=0) ** (p - 1)
        dM = [np.sum(D0 * (data.Xp[:, k][:, None] - data.Xn[:, k][None, :]))
              for k in range(data.d)]
        assert j == int(np.argmax(np.abs(dM)))


def test_boosting_caps_the_step_on_a_separating_feature():
    rng = np.random.default_rng(1)
    Xp, Xn = rng.normal(size=(10, 3)), rng.normal(size=(12, 3))
    Xp[:, 0], Xn[:, 0] = rng.uniform(1, 2, 10), rng.uniform(-2, -1, 12)  # feature 0 separates
    with pytest.warns(ConvergenceWarning, match="capped step"):
        res = pnorm_push(Xp, Xn, 0.1, p=4, method="boosting", max_iter=5)
    assert res.info["capped_rounds"] >= 1 and np.all(np.isfinite(res.w))
    assert np.all(np.diff(res.history["loss"]) <= 0)


# -- the large-p limit ----------------------------------------------------------------------------

def test_large_p_tends_to_the_exponential_infinite_push():
    """loss_p(w) lies in [L_inf(w) - log(n)/p, L_inf(w)], L_inf(w) = max_j log mean_i
    exp(-(s_i - t_j)); so the optima satisfy P*_p <= P*_inf <= P*_p + log(n)/p."""
    data = planted_bipartite(15, 20, 4, margin=0.5, seed=10)
    lam, n = 0.1, data.n
    w = cp.Variable(data.d)
    s, t = data.Xp @ w, data.Xn @ w
    worst = cp.max(cp.hstack([cp.log_sum_exp(-s + t[j]) for j in range(n)])) - np.log(data.m)
    limit = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(w) + worst))
    limit.solve(solver="CLARABEL")
    assert limit.status == cp.OPTIMAL
    for p in (16, 64, 256, 1024):
        res = pnorm_push(data, lam=lam, p=p)
        assert res.status == "optimal"
        assert res.objective <= limit.value + 1e-7
        assert limit.value <= res.objective + np.log(n) / p + 1e-7
        # and at the returned w the loss is within log(n)/p of the limit loss
        S, T = data.Xp @ res.w, data.Xn @ res.w
        L_inf = max(np.log(np.mean(np.exp(-(S - tj)))) for tj in T)
        L_p = res.objective - 0.5 * lam * res.w @ res.w
        assert L_inf - np.log(n) / p - 1e-12 <= L_p <= L_inf + 1e-12


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    ({"p": 0.5}, ValueError, "p must be at least 1"),
    ({"p": float("nan")}, ValueError, "p must be finite"),
    ({"p": "4"}, TypeError, "p must be a real number"),
    ({"lam": 0.0}, ValueError, "lam must be positive"),
    ({"lam": None}, TypeError, "lam .* is required"),
    ({"method": "bfgs"}, ValueError, "method must be one of .* got .bfgs."),
    ({"solver": "ECOS"}, TypeError, "unexpected keyword argument .solver."),
    ({"method": "cvxpy", "warm_start": np.zeros(3)}, TypeError, "warm_start is used only"),
    ({"tol": -1.0}, ValueError, "tol must be positive"),
    ({"max_iter": 0}, ValueError, "max_iter must be at least 1"),
    ({"time_limit": 0.0}, ValueError, "time_limit"),
    ({"warm_start": np.zeros(5)}, ValueError, "length 3"),
    ({"verbose": "yes"}, TypeError, "verbose"),
])
def test_bad_input_is_refused_by_name(kwargs, error, match):
    rng = np.random.default_rng(0)
    args = {"lam": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        pnorm_push(rng.normal(size=(5, 3)), rng.normal(size=(6, 3)), **args)


def test_bad_data_is_refused():
    rng = np.random.default_rng(0)
    Xp, Xn = rng.normal(size=(5, 3)), rng.normal(size=(6, 4))
    with pytest.raises(ValueError, match="columns|features|shape"):
        pnorm_push(Xp, Xn, 0.1)
    with pytest.raises(ValueError, match="NaN|finite"):
        pnorm_push(np.full((5, 3), np.nan), Xn[:, :3], 0.1)
    with pytest.raises(TypeError, match="Xn must be omitted"):
        pnorm_push(BipartiteData(Xp, Xn[:, :3]), Xn[:, :3], 0.1)
    with pytest.raises(ValueError, match="p must be at least 1"):
        formulations.pnorm_push_problem(BipartiteData(Xp, Xn[:, :3]), 0.1, p=0.9)
    assert METHODS == ("newton", "boosting", "cvxpy")


# -- the ranker ------------------------------------------------------------------------------------

def test_ranker_fits_the_solver_problem_with_both_backends():
    from infpush_cvx.evaluation.rankers import ConvergenceWarning as RankerWarning
    from infpush_cvx.evaluation.rankers import PNormPushRanker
    pytest.importorskip("sklearn")

    rng = np.random.default_rng(0)
    y = (rng.random(80) < 0.4).astype(int)
    X = rng.normal(size=(80, 5))
    X[:, :3] += 1.2 * y[:, None]
    native = PNormPushRanker(C=10.0, p=16).fit(X, y)
    direct = pnorm_push(X[y == 1], X[y == 0], 0.1, p=16)
    np.testing.assert_allclose(native.coef_, direct.w, rtol=1e-6, atol=1e-8)
    assert native.status_ == "optimal" and native.dual_gap_ <= 1e-6 and native.backend_ == "native"
    via_cvxpy = PNormPushRanker(C=10.0, p=16, solver="cvxpy").fit(X, y)
    np.testing.assert_allclose(via_cvxpy.coef_, native.coef_, rtol=1e-4, atol=1e-5)
    with pytest.warns(RankerWarning, match="boosting"):
        boosted = PNormPushRanker(p=4, method="boosting", max_iter=20).fit(X, y)
    assert boosted.n_iter_ == 20 and boosted.status_ == "max_iter"
    assert boosted.score(X, y) > 0.6
    with pytest.raises(ValueError, match="p must be at least 1"):
        PNormPushRanker(p=0.5).fit(X, y)
    with pytest.raises(ValueError, match="unknown method"):
        PNormPushRanker(method="fista").fit(X, y)


def test_a_warm_start_with_an_infinite_objective_falls_back_to_zero():
    """Issue 26: warm_start=np.full(d, 1e200) stalled with objective inf and gap NaN."""
    data = planted_bipartite(m=8, n=10, d=3, seed=0)
    with pytest.warns(UserWarning, match="warm_start: the objective there is inf") as record:
        res = pnorm_push(data, 0.1, p=4, warm_start=np.full(3, 1e200))
    assert record[0].filename == __file__  # points at the caller
    cold = pnorm_push(data, 0.1, p=4)
    assert res.status == "optimal" and res.gap <= 1e-8
    assert res.objective == pytest.approx(cold.objective, rel=1e-10)


def test_newton_stops_at_its_time_limit_within_a_step():
    """Issue 26: newton overran a 1 s limit by 1.8 s (one Newton step's Hessian is long at large
    d); the Hessian is now summed in blocks with the deadline checked between them."""
    import time

    rng = np.random.default_rng(4)
    Xp, Xn = rng.normal(size=(3000, 800)) + 0.05, rng.normal(size=(3000, 800))
    start = time.perf_counter()
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        res = pnorm_push(Xp, Xn, 1e-3, p=16, time_limit=0.2, tol=1e-14)
    assert time.perf_counter() - start < 0.2 + 3.0
    assert res.status == "time_limit" and "time limit of 0.2 s" in res.message
