"""Kernel Infinite Push and RankSVM (infpush_cvx.data.kernels, solvers._kernel, the rankers'
kernels).

Independent checks: scikit-learn's pairwise kernels and SVC's gamma, CVXPY's solve of the RKHS
problem ``(lam/2) beta^T K beta + loss(K beta)`` built here from K alone, the RKHS primal and
pair dual evaluated from beta and alpha with K (never through the factor), and the papers'
gradient projection (Agarwal 2011, Figure 2) written out in kernel form.
"""

import dataclasses
import warnings

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx import catalog, formulations
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.data.kernels import (factorise, gram_factor, kernel_matrix, kernel_options,
                                 pivoted_cholesky, resolve_gamma)
from infpush_cvx.prox import project_l1inf
from infpush_cvx.catalog.reference import load_reference
from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker, ZeroModelWarning
from infpush_cvx.solvers import InfinitePushProblem, infinite_push, ranksvm

pytest.importorskip("sklearn")
from sklearn.metrics import pairwise  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

DATA = planted_bipartite(15, 20, 4, seed=11)
Z = np.vstack([DATA.Xp, DATA.Xn])
M, N = DATA.m, DATA.n
TOL = 1e-6


def rkhs_primal(K, beta, lam, loss):
    """Paper scaling: (lam/2) beta^T K beta + loss(K beta), from the explicit pair hinges."""
    f = K @ beta
    hinge = np.maximum(0.0, 1.0 - (f[:M, None] - f[None, M:]))
    value = hinge.sum(axis=0).max() / M if loss == "infinite_push" else hinge.mean()
    return 0.5 * lam * beta @ K @ beta + value


def rkhs_dual(K, alpha, lam, loss):
    """Paper scaling ``lam (sum alpha - 1/2 b^T K b)``, ``b = [alpha 1; -alpha^T 1]``; asserts
    that alpha is feasible (l1,inf ball of radius C/m, or the box C/(mn))."""
    alpha = alpha.to_dense() if hasattr(alpha, "to_dense") else np.asarray(alpha)
    C = 1.0 / lam
    assert alpha.min() >= 0
    if loss == "infinite_push":
        assert alpha.max(axis=0).sum() <= C / M * (1 + 1e-9)
    else:
        assert alpha.max() <= C / (M * N) * (1 + 1e-9)
    b = np.concatenate([alpha.sum(axis=1), -alpha.sum(axis=0)])
    return lam * (alpha.sum() - 0.5 * b @ K @ b)


def cvxpy_rkhs(K, lam, loss):
    """The RKHS problem in CVXPY from K alone (an independent build)."""
    beta = cp.Variable(M + N)
    f = K @ beta
    S = cp.reshape(f[:M], (M, 1), order="F") @ np.ones((1, N))
    T = np.ones((M, 1)) @ cp.reshape(f[M:], (1, N), order="F")
    hinge = cp.pos(1 - S + T)
    value = cp.max(cp.sum(hinge, axis=0)) / M if loss == "infinite_push" \
        else cp.sum(hinge) / (M * N)
    problem = cp.Problem(cp.Minimize(0.5 * lam * cp.quad_form(beta, cp.psd_wrap(K)) + value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Solution may be inaccurate"
        return problem.solve(solver="CLARABEL")


# ---- kernel_matrix ---------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", ["scale", "auto", 0.7])
def test_kernel_matrix_matches_sklearn_pairwise_and_svc_gamma(gamma):
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(9, 3)), rng.normal(size=(5, 3))
    g = resolve_gamma(gamma, A)
    svc = SVC(kernel="rbf", gamma=gamma).fit(A, np.arange(9) % 2)
    assert g == pytest.approx(svc._gamma, rel=1e-14)
    np.testing.assert_allclose(kernel_matrix(A, B, "rbf", gamma),
                               pairwise.rbf_kernel(A, B, gamma=g), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel_matrix(A, B, "poly", gamma, degree=2, coef0=1.5),
                               pairwise.polynomial_kernel(A, B, degree=2, gamma=g, coef0=1.5),
                               rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, B, "linear"), pairwise.linear_kernel(A, B),
                               rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, None, "rbf", gamma),
                               pairwise.rbf_kernel(A, gamma=g), rtol=1e-12, atol=1e-14)
    custom = kernel_matrix(A, B, lambda P, Q: (P @ Q.T) ** 2)
    np.testing.assert_allclose(custom, (A @ B.T) ** 2, rtol=1e-12)


def test_gram_factor_is_exact_and_finds_the_rank():
    K = kernel_matrix(Z, None, "rbf", 0.5)
    L = gram_factor(K)
    assert np.abs(L @ L.T - K).max() <= 1e-12 * np.abs(K).max() * K.shape[0]
    lin = kernel_matrix(Z, None, "linear")
    L_lin = gram_factor(lin)
    assert L_lin.shape == (M + N, Z.shape[1])  # the rank of Z Z^T is d
    np.testing.assert_allclose(L_lin @ L_lin.T, lin, atol=1e-12 * np.abs(lin).max())
    assert gram_factor(np.zeros((4, 4))).shape == (4, 0)
    with pytest.raises(ValueError, match="kernel.*not positive semidefinite"):
        gram_factor(np.diag([1.0, -1.0]))


def test_factor_coefficients_reproduce_scores_and_norm():
    """beta = coefficients(v): K beta = L v and beta^T K beta = ||v||^2 (pivoted Cholesky,
    eigendecomposition and Nystroem)."""
    K = kernel_matrix(Z, None, "rbf", 0.5)
    v = np.random.default_rng(1).normal(size=(M + N))
    for fac in (factorise(Z, "rbf", 0.5), factorise(Z, "rbf", 0.5, method="eigh"),
                factorise(Z, "rbf", 0.5, nystroem=12, seed=3)):
        vv = v[:fac.rank]
        beta = fac.coefficients(vv)
        np.testing.assert_allclose(K @ beta, fac.L @ vv, atol=1e-8 * np.abs(K @ beta).max())
        assert beta @ K @ beta == pytest.approx(vv @ vv, rel=1e-8)
        if fac.landmarks is not None:
            assert np.all(beta[np.setdiff1d(np.arange(M + N), fac.landmarks)] == 0)


def test_pivoted_cholesky_factor_and_its_residual():
    """K = L L^T up to the Schur complement of the pivots, whose norm is the reported residual;
    the pivots' rows of L are lower triangular; refusals of matrices that are not PSD."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(40, 3))
    for K in (kernel_matrix(A, None, "rbf", 0.3), kernel_matrix(A, None, "poly", 0.5, degree=2,
                                                                   coef0=1.0)):
        L, C, piv, residual = pivoted_cholesky(K)
        exact = np.linalg.norm(K - L @ L.T, 2)
        assert exact <= residual + 1e-13 * np.abs(K).max() * K.shape[0]
        assert residual <= 1e-10 * np.abs(np.diag(K)).max() * K.shape[0]
        np.testing.assert_array_equal(C, L[piv])
        assert np.all(np.triu(C, 1) == 0)
        # K - L L^T vanishes on the pivots' rows (so K beta = L v exactly for beta on them)
        np.testing.assert_allclose((K - L @ L.T)[piv], 0.0, atol=1e-12 * np.abs(K).max())
    assert pivoted_cholesky(kernel_matrix(A, None, "poly", 0.5, degree=2, coef0=1.0))[0].shape \
        == (40, 10)  # (the degree-2 polynomial features of 3 variables: 10)
    assert pivoted_cholesky(np.zeros((3, 3)))[0].shape == (3, 0)
    for bad in (np.diag([1.0, -1.0]), np.array([[1.0, 2.0], [2.0, 1.0]]),
                np.ones((2, 2)) - np.eye(2)):
        with pytest.raises(ValueError, match="kernel.*not positive semidefinite"):
            pivoted_cholesky(bad)

    class Never:  # a deadline that never passes: the panels' route instead of dpstrf
        def expired(self):
            return False

    # a zero diagonal: zero, or refused (by the Schur complement of no pivots)
    assert pivoted_cholesky(np.zeros((3, 3)), deadline=Never())[0].shape == (3, 0)
    with pytest.raises(ValueError, match="kernel.*not positive semidefinite"):
        pivoted_cholesky(np.ones((2, 2)) - np.eye(2), deadline=Never())
    with pytest.raises(ValueError, match="method"):
        factorise(A, "rbf", method="qr")


def test_a_factor_too_coarse_for_tol_is_reported_not_certified():
    """The exact routes recompute the certificate with K: a solve certified on a coarse factor
    (residual 1e-2) is not certified on the exact problem, and says so."""
    from infpush_cvx.solvers.engines.kernel import _certified_on_gram, exact_certificate
    from infpush_cvx.solvers.result import ConvergenceWarning

    lam = 0.05
    K = kernel_matrix(Z, None, "rbf", 0.05)  # (a wide kernel: fast eigenvalue decay)
    coarse = factorise(Z, "rbf", 0.05, tol=1e-2)
    assert coarse.rank < factorise(Z, "rbf", 0.05).rank and coarse.residual > 1e-3
    res = infinite_push(coarse.L[:M], coarse.L[M:], lam)
    assert res.status == "optimal"
    res = dataclasses.replace(res, w=coarse.coefficients(res.w),
                              info=dict(res.info, factor_residual=coarse.residual))
    with pytest.warns(ConvergenceWarning, match="exact problem"):
        problem = InfinitePushProblem(DATA, lam, kernel="rbf", gamma=0.05)
        out = _certified_on_gram(res, K, problem, TOL)
    assert out.status == "stalled" and out.gap > TOL and out.info["factor_gap"] <= TOL
    assert out.objective == pytest.approx(rkhs_primal(K, out.w, lam, "infinite_push"), rel=1e-9)
    objective, lower, gap = exact_certificate(K, out.w, out.dual, problem)
    assert lower == pytest.approx(rkhs_dual(K, out.dual, lam, "infinite_push"), rel=1e-9)
    assert gap == out.gap and lower <= cvxpy_rkhs(K, lam, "infinite_push") * (1 + 1e-7)


@pytest.mark.parametrize("problem_id", [pid for pid in catalog.problem_ids()
                                        if "_kernel_" in pid])
def test_both_exact_factors_reproduce_the_stored_catalog_values(problem_id):
    """The pivoted Cholesky route (default) and the eigendecomposition route, on the catalog's
    kernel problems: certified on the exact problem, at the stored CVXPY value."""
    from infpush_cvx.solvers.engines.deadline import Deadline
    from infpush_cvx.solvers.engines.kernel import kernel_solve
    import importlib

    spec = catalog.get(problem_id)
    data = catalog.instance_data(spec.instance)
    stored = load_reference(problem_id)["opt_val"]
    model = importlib.import_module(f"infpush_cvx.solvers.{spec.formulation}").MODEL
    problem = model.problem.from_catalog(spec.formulation, spec.options, spec.lam, data)
    assert problem.kernel == kernel_options(spec.options)["kernel"]
    for method in ("cholesky", "eigh"):
        res = kernel_solve(model.certified(tol=TOL), problem, None, Deadline(None),
                           factor_method=method)
        assert res.status == "optimal" and res.info["factor"] == method, (problem_id, method)
        assert res.gap <= TOL and res.info["factor_residual"] <= 1e-8
        assert res.objective == pytest.approx(stored, rel=2 * TOL), (problem_id, method)


# ---- the RKHS problem: formulation, factorised solve, certificate ----------------------------

@pytest.mark.parametrize("loss,kernel,params", [
    ("infinite_push", "rbf", {"gamma": 0.5}),
    ("infinite_push", "poly", {"gamma": 0.4, "degree": 2, "coef0": 1.0}),
    ("ranksvm", "rbf", {"gamma": "scale"}),
    ("ranksvm", "poly", {"gamma": 0.4, "degree": 3, "coef0": 0.5}),
])
def test_factorised_solve_matches_cvxpy_rkhs_problem(loss, kernel, params):
    lam = 0.05
    K = kernel_matrix(Z, None, kernel, **params)
    solver = infinite_push if loss == "infinite_push" else ranksvm
    res = solver(DATA.Xp, DATA.Xn, lam, kernel=kernel, tol=TOL, **params)
    assert res.status == "optimal" and res.w.shape == (M + N,)
    np.testing.assert_array_equal(res.beta, res.w)
    primal = rkhs_primal(K, res.w, lam, loss)
    assert res.objective == pytest.approx(primal, rel=1e-9)
    # the certificate, recomputed in kernel form from the pair dual
    gap = (primal - rkhs_dual(K, res.dual, lam, loss)) / primal
    assert gap <= TOL * (1 + 1e-6) and gap == pytest.approx(res.gap, abs=1e-9)
    reference = cvxpy_rkhs(K, lam, loss)
    assert abs(res.objective - reference) <= 2 * TOL * reference
    # the project's formulation (variable w = beta) gives the same value
    build = (formulations.infinite_push_problem if loss == "infinite_push"
             else formulations.ranksvm_problem)
    problem = build(DATA, lam, kernel=kernel, **params)
    # (Clarabel reports "optimal_inaccurate" on the rank-deficient poly direct build above:
    # both CVXPY values are held to the certified solve's tolerance)
    assert abs(problem.solve(solver="CLARABEL") - res.objective) <= 2 * TOL * res.objective
    assert problem.var_dict["w"].shape == (M + N,)


def test_seed_scaling_and_sample_weights_follow_the_linear_conventions():
    lam_p = 0.05
    seed = infinite_push(DATA.Xp, DATA.Xn, lam_p * M / 2, scaling="seed", kernel="rbf",
                         gamma=0.5)
    paper = infinite_push(DATA.Xp, DATA.Xn, lam_p, kernel="rbf", gamma=0.5)
    assert seed.objective == pytest.approx(M * paper.objective, rel=2e-6)
    problem = formulations.infinite_push_problem(DATA, lam_p * M / 2, scaling="seed", kernel="rbf",
                                         gamma=0.5)
    assert problem.solve(solver="CLARABEL") == pytest.approx(seed.objective, rel=2e-6)
    # integer weights = repeated rows (the kernel of a repeated row repeats too)
    wp = np.ones(M)
    wp[0] = 2.0
    weighted = ranksvm(DATA.Xp, DATA.Xn, lam_p, kernel="rbf", gamma=0.5, wp=wp)
    repeated = ranksvm(np.vstack([DATA.Xp[:1], DATA.Xp]), DATA.Xn, lam_p, kernel="rbf",
                        gamma=0.5)
    assert weighted.objective == pytest.approx(repeated.objective, rel=2e-6)


def test_linear_kernel_is_the_linear_solver():
    for solver in (infinite_push, ranksvm):
        linear = solver(DATA.Xp, DATA.Xn, 0.05)
        kernel = solver(DATA.Xp, DATA.Xn, 0.05, kernel="linear")
        assert kernel.objective == pytest.approx(linear.objective, rel=2e-6)
        np.testing.assert_allclose(Z.T @ kernel.w, linear.w, atol=1e-3 * np.abs(linear.w).max())
        assert kernel.info["rank"] == Z.shape[1]


def test_paper_method_on_the_factor_is_the_kernel_gradient_projection():
    """Figure 2 of Agarwal 2011 written with K (gradient f_i^+ - f_j^- - 1, f = K beta(alpha))
    gives the same best iterate as method="paper" on the factor rows."""
    lam, eta0, T = 0.1, 0.02, 40
    K = kernel_matrix(Z, None, "rbf", 0.5)
    C = 1.0 / lam
    alpha = np.full((M, N), C / (1000.0 * M * N))
    best, best_q = alpha, np.inf
    for t in range(1, T + 1):
        b = np.concatenate([alpha.sum(axis=1), -alpha.sum(axis=0)])
        f = K @ b
        q = 0.5 * b @ f - alpha.sum()
        if q < best_q:
            best, best_q = alpha, q
        grad = f[:M, None] - f[None, M:] - 1.0
        alpha = project_l1inf(alpha - eta0 / np.sqrt(t) * grad, C / M, axis=0, nonneg=True,
                              method="ssn")
    b = np.concatenate([alpha.sum(axis=1), -alpha.sum(axis=0)])
    if 0.5 * b @ K @ b - alpha.sum() < best_q:
        best = alpha
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = infinite_push(DATA.Xp, DATA.Xn, lam, kernel="rbf", gamma=0.5, method="paper",
                            eta0=eta0, max_iter=T)
    np.testing.assert_allclose(res.dual, best, rtol=1e-7, atol=1e-12 * C)


def test_nystroem_solves_the_problem_restricted_to_the_landmarks():
    lam = 0.05
    K = kernel_matrix(Z, None, "rbf", 0.5)
    exact = infinite_push(DATA.Xp, DATA.Xn, lam, kernel="rbf", gamma=0.5)
    low = infinite_push(DATA.Xp, DATA.Xn, lam, kernel="rbf", gamma=0.5, nystroem=10,
                        nystroem_seed=4)
    landmarks = low.info["landmarks"]
    assert landmarks.size == 10 and np.count_nonzero(low.w) <= 10
    assert np.all(low.w[np.setdiff1d(np.arange(M + N), landmarks)] == 0)
    assert low.objective == pytest.approx(rkhs_primal(K, low.w, lam, "infinite_push"),
                                          rel=1e-8)
    assert low.objective >= exact.objective * (1 - TOL)


@pytest.mark.parametrize("loss", ["infinite_push", "ranksvm"])
def test_adaptive_span_is_certified_on_the_exact_problem(loss):
    """nystroem="adaptive": the reported gap is the exact problem's, recomputed here from beta,
    the pair dual and the full K."""
    lam = 0.02
    K = kernel_matrix(Z, None, "rbf", "scale")
    solver = infinite_push if loss == "infinite_push" else ranksvm
    exact = solver(DATA.Xp, DATA.Xn, lam, kernel="rbf")
    res = solver(DATA.Xp, DATA.Xn, lam, kernel="rbf", nystroem="adaptive", tol=TOL)
    assert res.status == "optimal" and res.info["rounds"] >= 1
    primal = rkhs_primal(K, res.w, lam, loss)
    assert res.objective == pytest.approx(primal, rel=1e-9)
    gap = (primal - rkhs_dual(K, res.dual, lam, loss)) / primal
    assert gap <= TOL and gap == pytest.approx(res.gap, abs=1e-9)
    assert abs(res.objective - exact.objective) <= 2 * TOL * exact.objective
    with pytest.raises(ValueError, match="nystroem"):
        solver(DATA.Xp, DATA.Xn, lam, kernel="rbf", nystroem="sometimes")


def test_warm_start_from_a_kernel_result():
    first = infinite_push(DATA.Xp, DATA.Xn, 0.1, kernel="rbf", gamma=0.5)
    again = infinite_push(DATA.Xp, DATA.Xn, 0.05, kernel="rbf", gamma=0.5, warm_start=first)
    cold = infinite_push(DATA.Xp, DATA.Xn, 0.05, kernel="rbf", gamma=0.5)
    assert again.objective == pytest.approx(cold.objective, rel=2e-6)


# ---- rankers ---------------------------------------------------------------------------------

def _labelled():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] ** 2 + 0.3 * rng.normal(size=40) > 0.6).astype(int)  # not linearly rankable
    return X, y


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_rankers_dual_coef_support_and_decision_function(cls, kernel):
    X, y = _labelled()
    if kernel == "linear":  # the radial labels are degenerate for a linear ranker (w = 0)
        y = (X[:, 0] + X[:, 1] > 0).astype(int)
    sw = np.ones(40)
    sw[3] = 0.0  # a dropped row gets no coefficient
    ranker = cls(C=10.0, kernel=kernel, degree=2).fit(X, y, sample_weight=sw)
    beta = ranker.dual_coef_
    assert beta.shape == (40,) and beta[3] == 0
    np.testing.assert_array_equal(ranker.support_, np.flatnonzero(beta))
    np.testing.assert_array_equal(ranker.support_vectors_, X[ranker.support_])
    gamma = "scale" if ranker.gamma_ is None else ranker.gamma_
    K = kernel_matrix(X, X[sw > 0], kernel, gamma, degree=2)
    np.testing.assert_allclose(ranker.decision_function(X), K @ beta[sw > 0],
                               atol=1e-10 * np.abs(K @ beta[sw > 0]).max())
    if kernel == "linear":
        np.testing.assert_allclose(X[sw > 0].T @ beta[sw > 0], ranker.coef_, atol=1e-10)
    else:
        assert ranker.coef_ is None
        assert ranker.gamma_ == pytest.approx(resolve_gamma("scale", X[sw > 0]))
        # the same model through CVXPY (f is unique; a gap of 1e-6 leaves ||f - f*||_H of
        # order sqrt(2 * 1e-6 * C), hence the tolerance)
        other = cls(C=10.0, kernel=kernel, degree=2, solver="cvxpy").fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(other.decision_function(X), ranker.decision_function(X),
                                   atol=5e-3 * np.abs(ranker.decision_function(X)).max())


def test_rbf_ranker_ranks_a_radial_problem_better_than_the_linear_one():
    X, y = _labelled()
    with pytest.warns(ZeroModelWarning, match="degenerate"):  # w = 0: no linear ranking
        linear = InfinitePushRanker(C=10.0).fit(X, y).score(X, y)
    rbf = InfinitePushRanker(C=10.0, kernel="rbf").fit(X, y).score(X, y)
    assert rbf > linear + 0.1


# ---- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,error,name", [
    ({"kernel": "sigmoid"}, ValueError, "kernel"),
    ({"kernel": 3}, TypeError, "kernel"),
    ({"kernel": "rbf", "gamma": -1.0}, ValueError, "gamma"),
    ({"kernel": "rbf", "gamma": "big"}, ValueError, "gamma"),
    ({"kernel": "poly", "degree": -1}, ValueError, "degree"),
    ({"kernel": "poly", "degree": 2.5}, TypeError, "degree"),
    ({"kernel": "poly", "coef0": np.nan}, ValueError, "coef0"),
])
def test_bad_kernel_arguments_are_refused_naming_them(kwargs, error, name):
    with pytest.raises(error, match=name):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, **kwargs)
    with pytest.raises(error, match=name):
        ranksvm(DATA.Xp, DATA.Xn, 0.1, **kwargs)
    with pytest.raises(error, match=name):
        formulations.ranksvm_problem(DATA, 0.1, **kwargs)
    X, y = _labelled()
    with pytest.raises(error, match=name):
        InfinitePushRanker(**kwargs).fit(X, y)


def test_other_refusals():
    with pytest.raises(ValueError, match="penalty"):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, penalty="l1", kernel="rbf")
    with pytest.raises(ValueError, match="penalty"):
        formulations.infinite_push_problem(DATA, 0.1, penalty="l1", kernel="rbf")
    with pytest.raises(TypeError, match="nystroem"):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, nystroem=5)
    with pytest.raises(ValueError, match="nystroem"):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, kernel="rbf", nystroem=0)
    with pytest.raises(ValueError, match="kernel.*shape"):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, kernel=lambda A, B: np.ones((2, 2)))
    with pytest.raises(ValueError, match="kernel.*not positive semidefinite"):
        infinite_push(DATA.Xp, DATA.Xn, 0.1, kernel=lambda A, B: -(A @ B.T))
