"""RankSVM over queries: the per-query pair sums against explicit pairs, the certified Newton
methods against CVXPY + Clarabel (both losses, normalisations, pair weights, sample and query
weights, ties, single-document and one-label queries), time limits and bad input."""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data.generators import letor_like
from infpush_cvx.data.queries import QueryData, QueryWarning
from infpush_cvx.formulations import query_ranksvm_problem
from infpush_cvx.formulations._query_ranksvm import explicit_pairs, query_pair_weights
from infpush_cvx.solvers import ConvergenceWarning, query_ranksvm, registry
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.query_pairs import QueryPairs
from infpush_cvx.solvers.query_ranksvm import Newton, QueryRankSVMProblem


def _awkward(seed=0, weighted=False):
    """Queries with ties in labels and in features (so in scores), a single-document query and
    a one-label query; optional sample and query weights."""
    rng = np.random.default_rng(seed)
    sizes = np.array([1, 5, 4, 6, 3, 7])
    n = sizes.sum()
    X = np.round(rng.normal(size=(n, 4)), 1)
    X[3] = X[2]  # two documents of one query with the same features
    y = rng.integers(0, 3, n).astype(float)
    y[sizes[0]:sizes[:2].sum()] = 2.0  # the second query: one label only
    qid = np.repeat(np.arange(sizes.size) * 3 + 1, sizes)
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    qw = rng.uniform(0.5, 2.0, sizes.size) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        return QueryData(X, y, qid, sw, qw)


def _oracle(data, s, offset, F, g, h):
    """The rows and cols sums by explicit pairs."""
    hi, lo = explicit_pairs(data.ptr, data.levels)
    inside = s[lo] > s[hi] + offset
    c = (g[:, hi] * h[:, lo]).sum(axis=0) * inside
    rows = np.zeros_like(F)
    cols = np.zeros_like(F)
    np.add.at(rows, hi, c[:, None] * F[lo])
    np.add.at(cols, lo, c[:, None] * F[hi])
    return rows, cols


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_query_pair_sums_equal_explicit_pairs(seed):
    data = _awkward(seed)
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=data.n), 1)  # ties in scores, and at the thresholds
    g, h = rng.random((2, data.n)), rng.random((2, data.n))
    pairs = QueryPairs(data.ptr, data.levels, g, h).at(s)
    F = rng.normal(size=(data.n, 3))
    for offset in (-1.0, -0.9, 0.0, 0.3, -np.inf):
        rows, cols = _oracle(data, s, offset, F, g, h)
        np.testing.assert_allclose(pairs.rows(offset, F), rows, atol=1e-13)
        np.testing.assert_allclose(pairs.cols(offset, F), cols, atol=1e-13)
        np.testing.assert_allclose(pairs.rows(offset, F[:, 0]), rows[:, 0], atol=1e-13)
    # a block of whole queries gives its rows of the whole set's sums
    a, b = data.ptr[2], data.ptr[5]
    np.testing.assert_allclose(pairs.rows(-1.0, F[a:b], queries=(2, 5)),
                               pairs.rows(-1.0, F)[a:b], atol=1e-13)
    np.testing.assert_allclose(pairs.cols(-1.0, F[a:b], queries=(2, 5)),
                               pairs.cols(-1.0, F)[a:b], atol=1e-13)


def test_query_pair_sums_with_real_valued_labels():
    """Many distinct levels in one query (the Fenwick tree's depth), and levels absent from a
    query (its local ranks)."""
    rng = np.random.default_rng(3)
    sizes = np.array([30, 2, 25])
    y = rng.normal(size=sizes.sum())
    data = QueryData(rng.normal(size=(sizes.sum(), 2)), y, np.repeat([0, 1, 2], sizes))
    s = rng.normal(size=data.n)
    g, h = rng.random((1, data.n)), rng.random((1, data.n))
    F = rng.normal(size=(data.n, 2))
    rows, cols = _oracle(data, s, -0.5, F, g, h)
    pairs = QueryPairs(data.ptr, data.levels, g, h).at(s)
    np.testing.assert_allclose(pairs.rows(-0.5, F), rows, atol=1e-12)
    np.testing.assert_allclose(pairs.cols(-0.5, F), cols, atol=1e-12)


def _explicit_objective(data, w, lam, loss, normalization, pair_weight):
    hi, lo, c, _ = query_pair_weights(data, normalization, pair_weight)
    X = data.X.toarray() if sp.issparse(data.X) else np.asarray(data.X)
    x = np.maximum(1.0 - (X[hi] - X[lo]) @ w, 0.0)
    return lam / 2 * w @ w + c @ (x if loss == "hinge" else x * x)


@pytest.mark.parametrize("loss,normalization,pair_weight", list(itertools.product(
    ("hinge", "squared_hinge"), ("query", "pairs"), ("none", "label_difference"))))
def test_objective_and_weights_match_explicit_pairs(loss, normalization, pair_weight):
    data = _awkward(1, weighted=True)
    w = np.random.default_rng(0).normal(size=data.d)
    problem = QueryRankSVMProblem(data, 0.3, loss=loss, normalization=normalization,
                                  pair_weight=pair_weight)
    assert problem.objective(w) == pytest.approx(
        _explicit_objective(data, w, 0.3, loss, normalization, pair_weight), rel=1e-12)
    _, _, c, T = query_pair_weights(data, normalization, pair_weight)
    assert c.sum() == pytest.approx(1.0) and problem.total_weight == pytest.approx(T)


CASES = [(loss, norm, pw, weighted)
         for loss, norm, pw in itertools.product(("hinge", "squared_hinge"), ("query", "pairs"),
                                                 ("none", "label_difference"))
         for weighted in (False, True)]


@pytest.mark.parametrize("loss,normalization,pair_weight,weighted", CASES)
def test_newton_agrees_with_cvxpy(loss, normalization, pair_weight, weighted):
    data = _awkward(2, weighted=weighted)
    for lam in (1.0, 0.01):
        reference = query_ranksvm_problem(data, lam, loss=loss, normalization=normalization,
                                          pair_weight=pair_weight)
        reference.solve(solver="CLARABEL")
        # (the smoothed hinge's certificate reaches about 1e-8 on these queries: its band's
        # sums divide by mu)
        result = query_ranksvm(data, lam, loss=loss, normalization=normalization,
                               pair_weight=pair_weight, tol=1e-7)
        assert result.status == "optimal" and result.gap <= 1e-7
        assert result.objective == pytest.approx(reference.value, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("hessian", ["cg", "formed"])
def test_both_directions_agree_with_cvxpy_on_generated_queries(loss, hessian):
    data = letor_like(12, 8, 5, seed=1)
    reference = query_ranksvm_problem(data, 0.05, loss=loss, normalization="pairs")
    reference.solve(solver="CLARABEL")
    result = query_ranksvm(data, 0.05, loss=loss, normalization="pairs", tol=1e-7,
                           hessian=hessian)
    assert result.status == "optimal" and result.info["hessian"] == hessian
    assert result.objective == pytest.approx(reference.value, rel=1e-6)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_seed_scaling_has_the_paper_minimiser(loss):
    data = _awkward(0, weighted=True)
    lam_s = 0.2
    seed = query_ranksvm(data, lam_s, loss=loss, scaling="seed", tol=1e-8)
    problem = QueryRankSVMProblem(data, lam_s, loss=loss, scaling="seed")
    assert problem.lam_paper == pytest.approx(2 * lam_s / problem.total_weight)
    paper = query_ranksvm(data, problem.lam_paper, loss=loss, tol=1e-8)
    np.testing.assert_allclose(seed.w, paper.w, rtol=1e-4, atol=1e-6)
    assert seed.objective == pytest.approx(paper.objective * problem.total_weight, rel=1e-7)
    reference = query_ranksvm_problem(data, lam_s, loss=loss, scaling="seed")
    reference.solve(solver="CLARABEL")
    assert seed.objective == pytest.approx(reference.value, rel=1e-6)


def test_sparse_and_dense_rows_give_one_solution():
    data = letor_like(8, 6, 5, seed=2)
    sparse = QueryData(sp.csr_matrix(data.X), data.y, data.qid)
    for loss in ("hinge", "squared_hinge"):
        a = query_ranksvm(data, 0.1, loss=loss, tol=1e-9)
        b = query_ranksvm(sparse, 0.1, loss=loss, tol=1e-9)
        assert a.objective == pytest.approx(b.objective, rel=1e-8)


def test_query_weights_equal_repeated_queries_under_pairs_normalisation():
    """An integer query weight counts a query that many times (the "pairs" mean)."""
    data = letor_like(5, 5, 3, seed=4)
    weights = np.array([1.0, 2.0, 1.0, 3.0, 1.0])
    weighted = QueryData(data.X, data.y, data.qid, query_weight=weights)
    index = np.repeat(np.arange(5), weights.astype(int))
    repeated = data.subset(index)
    repeated = QueryData(repeated.X, repeated.y, np.repeat(np.arange(index.size),
                                                           data.sizes[index]))
    a = query_ranksvm(weighted, 0.1, loss="squared_hinge", normalization="pairs", tol=1e-10)
    b = query_ranksvm(repeated, 0.1, loss="squared_hinge", normalization="pairs", tol=1e-10)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-7, atol=1e-9)


def test_warm_start_from_a_result():
    data = letor_like(10, 6, 4, seed=0)
    first = query_ranksvm(data, 0.1, loss="hinge")
    again = query_ranksvm(data, 0.05, loss="hinge", warm_start=first)
    cold = query_ranksvm(data, 0.05, loss="hinge")
    assert again.status == "optimal" and again.objective == pytest.approx(cold.objective,
                                                                           rel=1e-5)


class _Clock:
    """A clock that moves one second at each reading."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_deadline_ends_the_solve_with_time_limit(loss):
    data = letor_like(10, 6, 4, seed=0)
    problem = QueryRankSVMProblem(data, 1e-3, loss=loss)
    with pytest.warns(ConvergenceWarning):
        result = Newton(tol=1e-12).solve(problem, deadline=Deadline(3.5, clock=_Clock()))
    assert result.status == "time_limit"
    assert np.all(np.isfinite(result.w))


def test_time_limit_is_kept_on_a_larger_set():
    data = letor_like(300, 40, 20, seed=0)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = query_ranksvm(data, 1e-6, loss="hinge", tol=1e-14, time_limit=0.3)
    assert time.perf_counter() - start < 3.0  # a generous bound on a loaded machine
    assert result.status in ("time_limit", "optimal", "stalled")


def test_bad_input_is_named():
    data = letor_like(4, 5, 3, seed=0)
    with pytest.raises(TypeError, match="data must be a QueryData"):
        QueryRankSVMProblem(np.ones((3, 2)), 0.1)
    for name, value in (("loss", "l1"), ("normalization", "docs"), ("pair_weight", "x"),
                        ("scaling", "other")):
        with pytest.raises(ValueError, match=name):
            QueryRankSVMProblem(data, 0.1, **{name: value})
    with pytest.raises(ValueError, match="lam"):
        QueryRankSVMProblem(data, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        flat = QueryData(np.ones((4, 2)), np.ones(4), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="data: no query has a pair"):
        QueryRankSVMProblem(flat, 0.1)
    with pytest.raises(ValueError, match="warm_start"):
        query_ranksvm(data, 0.1, warm_start=np.ones(7))
    with pytest.raises(ValueError, match="hessian"):
        Newton(hessian="dense")
    with pytest.raises(ValueError, match="mu0"):
        Newton(mu0=0.0)
    with pytest.raises(ValueError, match="w must have length"):
        QueryRankSVMProblem(data, 0.1).objective(np.ones(2))


def test_registered_with_its_formulation():
    model = registry.model("query_ranksvm")
    assert model.certified is Newton and model.formulations == ("query_ranksvm",)
    assert registry.model_of("query_ranksvm") is model
    problem = QueryRankSVMProblem.from_catalog(
        "query_ranksvm", {"loss": "squared_hinge", "normalization": "pairs", "form": "compact",
                          "scaling": "seed"}, 0.1, letor_like(4, 5, 3, seed=0))
    assert problem.loss == "squared_hinge" and problem.normalization == "pairs"


@pytest.mark.parametrize("pair_weight", ["none", "label_difference"])
@pytest.mark.parametrize("mu", [None, 0.5, 1e-3])
def test_gradient_and_hessians_equal_explicit_pairs(mu, pair_weight):
    """The (smoothed) objective, its gradient, the Hessian-vector product and the formed
    Hessian from the per-query sums, against sums over the explicit pairs."""
    data = _awkward(0, weighted=True)
    problem = QueryRankSVMProblem(data, 0.3, loss="hinge" if mu else "squared_hinge",
                                  pair_weight=pair_weight)
    rng = np.random.default_rng(5)
    w, u = rng.normal(size=data.d), rng.normal(size=data.d)
    hi, lo, c, _ = query_pair_weights(data, "query", pair_weight)
    Z = np.asarray(data.X)[hi] - np.asarray(data.X)[lo]
    x = 1.0 - Z @ w
    if mu is None:
        value, slope, band = c @ np.maximum(x, 0) ** 2, 2 * c * np.maximum(x, 0), 2 * c * (x > 0)
    else:
        half = mu / 2
        value = c @ np.where(x > half, x, np.where(x > -half, (x + half) ** 2 / (2 * mu), 0.0))
        slope = c * np.clip((x + half) / mu, 0.0, 1.0)
        band = c * ((x > -half) & (x <= half)) / mu
    point = problem.point(w, mu)
    assert point.value == pytest.approx(0.15 * w @ w + value, rel=1e-12)
    np.testing.assert_allclose(problem.gradient(point), 0.3 * w - Z.T @ slope, atol=1e-12)
    H = 0.3 * np.eye(data.d) + Z.T @ (band[:, None] * Z)
    np.testing.assert_allclose(problem.hessian_product(point, u), H @ u, atol=1e-11)
    np.testing.assert_allclose(problem.hessian(point, block=7), H, atol=1e-11)


def test_band_lists_the_pairs_in_a_window_of_the_margins():
    data = _awkward(1, weighted=True)
    rng = np.random.default_rng(2)
    s = np.round(rng.normal(size=data.n), 1)
    problem = QueryRankSVMProblem(data, 0.1, pair_weight="label_difference")
    sq = problem.pair_structure.at(s)
    hi, lo, c, _ = query_pair_weights(data, "query", "label_difference")
    inside = (s[lo] > s[hi] - 1.2) & (s[lo] <= s[hi] - 0.8)
    i, j, weights = sq.band(-1.2, -0.8, cap=1000)
    assert sorted(zip(i, j)) == sorted(zip(hi[inside], lo[inside]))
    expected = dict(zip(zip(hi, lo), c))
    np.testing.assert_allclose(weights, [expected[pair] for pair in zip(i, j)], rtol=1e-12)
    assert sq.band(-np.inf, np.inf, cap=3) is None  # more pairs than the cap


@pytest.mark.parametrize("lam", [1.0, 0.01])
def test_polished_hinge_certificate_brackets_the_optimum(lam):
    data = _awkward(2, weighted=True)
    reference = query_ranksvm_problem(data, lam, loss="hinge")
    reference.solve(solver="CLARABEL")
    problem = QueryRankSVMProblem(data, lam, loss="hinge")
    w = np.asarray(reference.var_dict["w"].value)
    for mu in (0.1, 1e-3):
        cert = problem.polished(problem.point(w, mu))
        if cert is None:
            continue
        assert cert["dual"] <= reference.value * (1 + 1e-7) + 1e-9
        assert cert["primal"] >= reference.value * (1 - 1e-7) - 1e-9
        assert cert["primal"] == pytest.approx(problem.objective(cert["w"]), rel=1e-12)
    assert QueryRankSVMProblem(data, lam, loss="squared_hinge").polished(
        problem.point(w, None)) is None
