"""The Infinite Push over queries: its sorted-score losses and certificate against brute force
over every pair of a query, the working set against CVXPY + Clarabel (l2 and l1, weights, ties,
queries without relevant or other documents, single-document queries, seed scaling), the
one-query case against the bipartite Infinite Push, time limits, bad input and the registry."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import BipartiteData
from infpush_cvx.data.generators import letor_like
from infpush_cvx.data.queries import QueryData, QueryWarning
from infpush_cvx.formulations import query_infinite_push_problem
from infpush_cvx.solvers import QueryInfinitePushProblem, infinite_push, query_infinite_push
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.query_infinite_push import MODEL, CVXPY, WorkingSet
from infpush_cvx.solvers.registry import model
from infpush_cvx.solvers.result import ConvergenceWarning

AGREE = 1e-6


def small(seed=0, queries=12, docs=9, d=5, **kw):
    return letor_like(queries, docs, d, seed=seed, **kw)


def brute_force_losses(problem, w):
    """Every kept query's loss from its explicit pairs (the test oracle)."""
    data = problem.data
    X = data.X.toarray() if sp.issparse(data.X) else np.asarray(data.X)
    u = X @ w
    p = np.ones(data.n) if data.sample_weight is None else data.sample_weight
    out = []
    for k in problem.groups.kept:
        rows = np.arange(data.ptr[k], data.ptr[k + 1])
        rel = rows[data.y[rows] >= problem.threshold]
        neg = rows[data.y[rows] < problem.threshold]
        h = np.maximum(0.0, 1.0 - u[rel][:, None] + u[neg][None, :])
        out.append(float(np.max(p[rel] @ h) / p[rel].sum()))
    return np.array(out)


def cvxpy_value(data, lam, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        problem = query_infinite_push_problem(data, lam, **kw)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == "optimal"
    return problem.value


def solve(data, lam, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        return query_infinite_push(data, lam, **kw)


def relative(a, b):
    return abs(a - b) / max(1.0, abs(b))


def test_sorted_losses_and_objective_equal_the_pairs():
    data = small(3, queries=15, docs=11, d=4)
    data = QueryData(data.X, data.y, data.qid,
                     sample_weight=np.random.default_rng(0).uniform(0.3, 2.0, data.n),
                     query_weight=np.random.default_rng(1).uniform(0.5, 2.0, data.n_queries))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        problem = QueryInfinitePushProblem(data, 0.1)
    rng = np.random.default_rng(2)
    for scale in (0.0, 0.3, 3.0, 1e4):
        w = scale * rng.standard_normal(data.d)
        expected = brute_force_losses(problem, w)
        got = np.maximum.reduceat(problem.negative_losses(w), problem.groups.ptr_n[:-1])
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        omega = problem.groups.omega
        assert problem.objective(w) == pytest.approx(0.05 * (w @ w) + omega @ expected,
                                                     rel=1e-10)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_random_pair_duals_bound_the_optimum(penalty):
    data = small(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        problem = QueryInfinitePushProblem(data, 0.05, penalty=penalty)
    optimum = cvxpy_value(data, 0.05, penalty=penalty)
    I, J = problem.groups.pairs()
    rng = np.random.default_rng(0)
    for scale in (1e-3, 1.0, 100.0):  # repaired into the set whatever their size
        dual, _ = problem.dual_value(I, J, scale * rng.exponential(size=I.size))
        assert dual <= optimum + 1e-9


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_working_set_agrees_with_cvxpy(penalty, seed):
    data = small(seed)
    lam = 1e-2
    result = solve(data, lam, penalty=penalty)
    assert result.status == "optimal" and result.gap <= 1e-6
    assert relative(result.objective, cvxpy_value(data, lam, penalty=penalty)) < AGREE


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_weights_threshold_and_seed_scaling(penalty):
    data = small(5, queries=10, docs=12, d=4)
    rng = np.random.default_rng(3)
    data = QueryData(data.X, data.y, data.qid, sample_weight=rng.uniform(0.2, 3.0, data.n),
                     query_weight=rng.uniform(0.2, 3.0, data.n_queries))
    for threshold, scaling, lam in ((1.0, "paper", 3e-3), (2.0, "seed", 0.5)):
        result = solve(data, lam, penalty=penalty, threshold=threshold, scaling=scaling)
        assert result.converged
        assert relative(result.objective, cvxpy_value(data, lam, penalty=penalty,
                                                      threshold=threshold,
                                                      scaling=scaling)) < AGREE


def test_ties_in_features_labels_and_scores():
    rng = np.random.default_rng(7)
    qid = np.repeat(np.arange(8), 7)
    X = rng.integers(0, 3, size=(qid.size, 3)).astype(float)
    X[5] = X[4]  # identical documents, one relevant and one not
    y = rng.integers(0, 3, size=qid.size).astype(float)
    y[4], y[5] = 2.0, 0.0
    data = QueryData(X, y, qid)
    for penalty in ("l2", "l1"):
        result = solve(data, 1e-2, penalty=penalty)
        assert result.converged
        assert relative(result.objective, cvxpy_value(data, 1e-2, penalty=penalty)) < AGREE


def test_queries_that_contribute_nothing_are_named_and_dropped():
    data = small(8, queries=10, docs=8, d=4)
    X, y, qid = np.asarray(data.X), data.y.copy(), data.qid
    y[data.ptr[1]:data.ptr[2]] = 0.0  # no relevant document
    y[data.ptr[2]:data.ptr[3]] = 3.0  # no other document
    X = np.vstack([X, np.ones((1, data.d))])  # a single-document query
    with pytest.warns(QueryWarning, match="contribute no pair"):
        data = QueryData(X, np.r_[y, 4.0], np.r_[qid, qid.max() + 1])
    with pytest.warns(QueryWarning, match="contribute nothing to the Infinite Push"):
        problem = QueryInfinitePushProblem(data, 1e-2)
    kept = problem.groups.kept
    assert set(range(data.n_queries)) - set(kept.tolist()) == {1, 2, data.n_queries - 1}
    result = solve(data, 1e-2)
    assert result.converged
    assert relative(result.objective, solve(data.subset(kept), 1e-2).objective) < AGREE
    assert relative(result.objective, cvxpy_value(data, 1e-2)) < AGREE


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("scaling", ["paper", "seed"])
def test_one_query_is_the_infinite_push(penalty, scaling):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 6))
    y = (X @ rng.standard_normal(6) + rng.standard_normal(60) > 0.3).astype(float)
    p = rng.uniform(0.5, 2.0, 60)
    data = QueryData(X, y, np.zeros(60, dtype=int), sample_weight=p)
    lam = 0.02 if scaling == "paper" else 0.5
    ours = query_infinite_push(data, lam, penalty=penalty, scaling=scaling, tol=1e-9)
    bip = BipartiteData(X[y >= 1], X[y < 1], wp=p[y >= 1], wn=p[y < 1])
    theirs = infinite_push(bip, lam, penalty=penalty, scaling=scaling, tol=1e-9)
    assert ours.converged and theirs.converged
    assert relative(ours.objective, theirs.objective) < 1e-8
    problem = QueryInfinitePushProblem(data, lam, penalty=penalty, scaling=scaling)
    w = rng.standard_normal(6)
    from infpush_cvx.solvers.infinite_push import InfinitePushProblem
    expected = InfinitePushProblem(bip, lam, penalty=penalty, scaling=scaling).objective(w)
    assert problem.objective(w) == pytest.approx(expected, rel=1e-12)


def test_cvxpy_method_is_certified_and_agrees():
    data = small(2)
    ours = solve(data, 1e-2)
    theirs = solve(data, 1e-2, method="cvxpy")
    assert theirs.status == "optimal" and theirs.gap <= 1e-6
    assert relative(ours.objective, theirs.objective) < AGREE


def test_warm_start_and_sparse_input():
    data = small(6, queries=20, docs=10, d=6)
    first = solve(data, 1e-2)
    again = solve(data, 1e-2, warm_start=first)
    assert again.converged and again.iterations == 1
    sparse = QueryData(sp.csr_matrix(np.asarray(data.X)), data.y, data.qid)
    assert relative(solve(sparse, 1e-2).objective, first.objective) < AGREE


def test_time_limit_stops_and_warns():
    data = letor_like(150, 30, 20, seed=0)
    expired = Deadline(1.0, start=0.0, clock=lambda: 5.0)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        result = WorkingSet().solve(QueryInfinitePushProblem(data, 1e-3), deadline=expired)
    assert result.status == "time_limit" and result.iterations == 0
    assert np.all(np.isfinite(result.w))
    with pytest.warns(ConvergenceWarning):
        result = query_infinite_push(data, 1e-4, time_limit=0.05)
    assert result.status == "time_limit"
    assert result.time < 3.0  # generous: a loaded 2-core machine


def test_bad_input_is_named():
    data = small(0)
    cases = [(dict(data=np.zeros((3, 2)), lam=1.0), TypeError, "data"),
             (dict(data=data, lam=-1.0), ValueError, "lam"),
             (dict(data=data, lam=1.0, penalty="l3"), ValueError, "penalty"),
             (dict(data=data, lam=1.0, scaling="log"), ValueError, "scaling"),
             (dict(data=data, lam=1.0, threshold="high"), ValueError, "threshold"),
             (dict(data=data, lam=1.0, threshold=[1.0]), TypeError, "threshold"),
             (dict(data=data, lam=1.0, threshold=9.0), ValueError, "threshold")]
    for kwargs, error, name in cases:
        with pytest.raises(error, match=name):
            QueryInfinitePushProblem(**kwargs)
    with pytest.raises(ValueError, match="batch"):
        WorkingSet(batch=0)
    with pytest.raises(TypeError, match="unknown_option"):
        WorkingSet(unknown_option=1)
    with pytest.raises(ValueError, match="warm_start"):
        solve(data, 1.0, warm_start=np.zeros(2))


def test_registered():
    assert model("query_infinite_push") is MODEL
    assert MODEL.certified is WorkingSet and CVXPY in MODEL.methods
    assert MODEL.method_names(penalty="l1", weighted=True) == ("working_set", "cvxpy")


def test_working_set_grows_over_rounds_and_stays_small():
    data = small(9, queries=8, docs=40, d=3)
    result = solve(data, 1e-2, batch=1)
    negatives = int(np.sum(data.y < 1.0))
    assert result.converged and result.info["rounds"] > 1
    assert result.info["working_set"] < negatives
    assert np.all(np.diff(result.history["working"]) >= 0)
    assert relative(result.objective, cvxpy_value(data, 1e-2)) < AGREE


def test_a_round_whose_set_up_would_overrun_the_limit_is_not_begun(monkeypatch):
    from infpush_cvx.solvers.query_infinite_push import working_set
    monkeypatch.setattr(working_set, "_SECONDS_PER_UNIT", 1e3)  # every set-up "takes" long
    with pytest.warns(ConvergenceWarning, match="less than the next step needs"):
        result = solve(small(0), 1e-2, time_limit=30.0)
    assert result.status == "time_limit" and result.iterations == 0 and result.time < 3.0
    assert result.objective == pytest.approx(1.0)  # w = 0, the start's primal value
    assert result.gap == pytest.approx(1.0)  # against alpha = 0


def each_threshold_objective(data, lam, w):
    """The ``threshold="each"`` objective from explicit pairs: each query's mean loss over the
    label levels above the lowest where it has documents on both sides (the oracle)."""
    X = np.asarray(data.X)
    u = X @ w
    p = np.ones(data.n) if data.sample_weight is None else data.sample_weight
    rho = np.ones(data.n_queries) if data.query_weight is None else data.query_weight
    losses, weights = [], []
    for k in range(data.n_queries):
        rows = np.arange(data.ptr[k], data.ptr[k + 1])
        mine = []
        for level in data.labels[1:]:
            rel, neg = rows[data.y[rows] >= level], rows[data.y[rows] < level]
            if rel.size and neg.size:
                h = np.maximum(0.0, 1.0 - u[rel][:, None] + u[neg][None, :])
                mine.append(np.max(p[rel] @ h) / p[rel].sum())
        if mine:
            losses.append(np.mean(mine))
            weights.append(rho[k])
    return 0.5 * lam * (w @ w) + np.dot(weights, losses) / np.sum(weights)


def test_each_threshold_is_the_mean_over_levels():
    data = small(12, queries=10, docs=10, d=4)
    rng = np.random.default_rng(4)
    data = QueryData(data.X, data.y, data.qid, sample_weight=rng.uniform(0.5, 2.0, data.n),
                     query_weight=rng.uniform(0.5, 2.0, data.n_queries))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        problem = QueryInfinitePushProblem(data, 0.1, threshold="each")
    for scale in (0.0, 0.5, 4.0):
        w = scale * rng.standard_normal(data.d)
        assert problem.objective(w) == pytest.approx(each_threshold_objective(data, 0.1, w),
                                                     rel=1e-10)
    for penalty in ("l2", "l1"):
        result = solve(data, 1e-2, penalty=penalty, threshold="each")
        assert result.converged
        assert relative(result.objective, cvxpy_value(data, 1e-2, penalty=penalty,
                                                      threshold="each")) < AGREE


def test_each_threshold_with_two_labels_is_the_one_threshold():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)  # (a query of one label)
        data = small(13, queries=10, docs=10, d=4, label_probs=(0.6, 0.4))
    ours = solve(data, 1e-2, threshold="each")
    assert relative(ours.objective, solve(data, 1e-2, threshold=1.0).objective) < AGREE


def wide(seed=0):
    """Few pairs beside the relevant rows' features: the working set's one round on every pair,
    after the LP that certifies w* = 0 for l1."""
    return letor_like(6, 8, 60, seed=seed)


@pytest.mark.parametrize("lam", [3e-3, 3e-2, 3e-1, 3.0])
def test_lp_certificate_of_zero_agrees_with_the_working_set(lam, monkeypatch):
    from infpush_cvx.solvers.query_infinite_push import working_set
    data = wide(1)
    assert working_set.all_pairs_are_small(QueryInfinitePushProblem(data, lam, penalty="l1"))
    result = solve(data, lam, penalty="l1")
    monkeypatch.setattr(working_set, "zero_weights", lambda problem, limit: None)
    rounds = solve(data, lam, penalty="l1")
    assert result.converged and rounds.status == "optimal"
    assert relative(result.objective, rounds.objective) < AGREE
    degenerate = result.status == "degenerate_optimal"
    assert degenerate == (np.abs(rounds.w).max() < 1e-6)
    if degenerate:
        assert not result.w.any() and result.objective == pytest.approx(1.0)
        assert result.iterations == 0 and result.info["degenerate"]


def test_lp_certificate_of_zero_on_a_degenerate_instance():
    data = wide(1)
    result = solve(data, 10.0, penalty="l1")
    assert result.status == "degenerate_optimal" and result.gap <= 1e-9
    assert relative(result.objective, cvxpy_value(data, 10.0, penalty="l1")) < AGREE
    assert solve(data, 10.0, penalty="l2").status == "optimal"  # l2: not tried


def test_zero_weights_fill_each_query_budget():
    from infpush_cvx.solvers.query_infinite_push.zero_point import zero_weights
    problem = QueryInfinitePushProblem(wide(1), 10.0, penalty="l1")
    c = zero_weights(problem)
    g = problem.groups
    assert np.all(c >= 0)
    np.testing.assert_allclose(np.bincount(g.neg_query, weights=c, minlength=g.n_queries),
                               g.omega, atol=1e-9)
    assert zero_weights(QueryInfinitePushProblem(wide(1), 1e-4, penalty="l1")) is None


def test_shifted_rows_keep_every_difference_within_a_query():
    from infpush_cvx.solvers.query_infinite_push.working_set import shifted_rows
    data = small(4, queries=7, docs=10, d=6)
    X = np.round(np.asarray(data.X), 0)  # repeated values, some 0
    X[:, 2] = np.repeat(np.arange(data.n_queries) + 1.0, np.diff(data.ptr))  # a query feature
    X[::3, 4] = 0.0
    rows = np.sort(np.random.default_rng(1).choice(data.n, data.n - 9, replace=False))
    query = data.query_index[rows]
    out = shifted_rows(sp.csr_matrix(X), rows, query)
    shift = X[rows] - out.toarray()
    for k in np.unique(query):
        np.testing.assert_array_equal(shift[query == k], shift[query == k][:1].repeat(
            np.sum(query == k), axis=0))
    assert out.nnz < np.count_nonzero(X[rows])
    assert not np.any(out.toarray()[:, 2])  # constant within each query: gone
    np.testing.assert_array_equal(shifted_rows(X, rows, query).toarray(), X[rows])  # dense


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_sparse_features_constant_within_queries_agree_with_cvxpy(penalty):
    data = small(6, queries=8, docs=10, d=5)
    X = np.round(np.asarray(data.X), 0)
    X[:, 1] = np.repeat(np.arange(data.n_queries) + 1.0, np.diff(data.ptr))
    sparse = QueryData(sp.csr_matrix(X), data.y, data.qid)
    result = solve(sparse, 1e-2, penalty=penalty)
    assert result.status == "optimal"
    assert relative(result.objective, cvxpy_value(sparse, 1e-2, penalty=penalty)) < AGREE
