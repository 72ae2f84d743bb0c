"""SVMMAP (Yue et al., SIGIR 2007): the most-violated-ranking oracle against brute force over
every ranking, the cutting-plane solver against CVXPY over every ranking, its certificate, early
stops, warm starts, input checks and the scikit-learn ranker."""

import logging

import numpy as np
import pytest

from infpush_cvx.evaluation import metrics
from infpush_cvx.data import BipartiteData
from infpush_cvx.formulations._svmmap import ranking_patterns
from infpush_cvx.formulations._svmmap import svmmap_problem
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.solvers.svmmap import (most_violated_ranking, ranking_loss, svmmap,
                                        svmmap_objective)


def _brute_force_violation(s, t):
    """max over every total order of Delta(y) - w.(Psi(y*) - Psi(y)): the sign patterns of all
    (m+n)! orders (formulations.svmmap_problem enumerates them with permutations, not sorting)."""
    m, n = s.size, t.size
    Y, delta = ranking_patterns(m, n)
    margins = s[:, None] - t[None, :]
    swapped = np.einsum("kij,ij->k", 1.0 - Y, margins) / (m * n)
    return float(np.max(delta - swapped))


def _tied_scores(rng, size):
    """Scores on a coarse grid (many ties), or continuous ones."""
    if rng.random() < 0.6:
        return rng.integers(-2, 3, size) * rng.choice([0.05, 0.5, 1.0])
    return rng.normal(size=size)


def _greedy_full_scan(s, t):
    """Yue et al.'s greedy as stated in the paper: sort both lists, then each negative takes its
    best position among the positives by a full O(m) scan of the exact per-negative sums
    (no closed form, no divide and conquer); the value of the resulting interleaving."""
    m, n = s.size, t.size
    sd, td = np.sort(s)[::-1], np.sort(t)[::-1]
    a = np.empty(n, dtype=np.int64)
    for j in range(1, n + 1):
        vals = []
        for q in range(m + 1):
            ap_part = sum(k / ((k + j - 1) * (k + j)) for k in range(q + 1, m + 1)) / m
            vals.append(ap_part + 2.0 / (m * n) * (sd[:q].sum() - q * td[j - 1]))
        vals = np.array(vals)
        a[j - 1] = np.flatnonzero(vals >= vals.max() - 1e-13)[-1]
    c = np.searchsorted(a, np.arange(1, m + 1), side="left")
    loss = 1.0 - np.mean(np.arange(1, m + 1) / (np.arange(1, m + 1) + c))
    return loss - 2.0 / (m * n) * (sd @ c - td @ (m - a))


# ---- the oracle -------------------------------------------------------------------------------

def test_oracle_matches_brute_force_over_every_ranking_with_ties():
    rng = np.random.default_rng(20070723)
    for _ in range(300):
        m, n = rng.integers(1, 5, size=2)
        s, t = _tied_scores(rng, m), _tied_scores(rng, n)
        if rng.random() < 0.2:
            t = np.r_[t[:-1], s[0]] if n > 1 else s[:1].copy()  # a positive tied with a negative
        r = most_violated_ranking(s, t)
        assert r.violation == pytest.approx(_brute_force_violation(s, t), abs=1e-12)


def test_oracle_ranking_is_consistent():
    # the returned order, counts, loss and violation describe one ranking
    rng = np.random.default_rng(7)
    for _ in range(50):
        m, n = rng.integers(1, 30, size=2)
        s, t = _tied_scores(rng, m), _tied_scores(rng, n)
        r = most_violated_ranking(s, t)
        assert sorted(r.order) == list(range(m + n))
        position = np.empty(m + n, dtype=np.int64)
        position[r.order] = np.arange(m + n)
        above = position[:m, None] > position[None, m:]  # negative j above positive i
        np.testing.assert_array_equal(r.neg_above, above.sum(axis=1))
        np.testing.assert_array_equal(r.pos_below, above.sum(axis=0))
        labels = np.r_[np.ones(m), np.zeros(n)]
        assert r.loss == pytest.approx(1 - metrics.average_precision(labels, -position), abs=1e-14)
        swapped = (np.where(above, s[:, None] - t[None, :], 0.0)).sum() * 2 / (m * n)
        assert r.violation == pytest.approx(r.loss - swapped, abs=1e-12)
        assert r.violation >= -1e-15  # y* itself gives 0


def test_oracle_matches_the_papers_full_scan_on_larger_instances():
    rng = np.random.default_rng(11)
    for m, n in [(40, 70), (70, 40), (1, 50), (50, 1), (25, 25)]:
        for scale in (0.01, 1.0, 30.0):  # from the loss-dominated to the score-dominated regime
            s, t = scale * _tied_scores(rng, m), scale * _tied_scores(rng, n)
            assert most_violated_ranking(s, t).violation == \
                pytest.approx(_greedy_full_scan(s, t), abs=1e-11)


def test_oracle_at_zero_scores_is_the_worst_ranking():
    r = most_violated_ranking(np.zeros(3), np.zeros(5))
    assert np.all(r.neg_above == 5) and np.all(r.pos_below == 3)
    assert r.loss == pytest.approx(1 - np.mean([1 / 6, 2 / 7, 3 / 8]))
    assert ranking_loss(np.zeros(4)) == 0.0


def test_oracle_input_checks():
    with pytest.raises(ValueError, match="non-empty"):
        most_violated_ranking([], [1.0])
    with pytest.raises(ValueError, match="s"):
        most_violated_ranking([np.nan], [1.0])


# ---- the solver -------------------------------------------------------------------------------

def _tiny(seed, m, n, d=3):
    rng = np.random.default_rng(seed)
    return BipartiteData(rng.normal(size=(m, d)) + 0.4, rng.normal(size=(n, d)))


@pytest.mark.parametrize("seed,m,n", [(0, 2, 3), (1, 3, 3), (2, 4, 4), (3, 4, 2), (4, 1, 4)])
@pytest.mark.parametrize("lam", [0.01, 0.3, 3.0])
def test_solver_matches_cvxpy_over_every_ranking(seed, m, n, lam):
    data = _tiny(seed, m, n)
    prob = svmmap_problem(data, lam)
    prob.solve(solver="CLARABEL")
    res = svmmap(data, None, lam, tol=1e-8)
    assert res.status == "optimal" and res.gap <= 1e-8
    # the certified interval holds the independent optimum (up to Clarabel's accuracy)
    assert res.info["lower_bound"] - 1e-7 <= prob.value <= res.objective + 1e-7
    assert res.objective == pytest.approx(prob.value, rel=1e-6, abs=1e-9)
    # the reported objective is the brute-force objective at the returned w
    s, t = data.Xp @ res.w, data.Xn @ res.w
    assert res.objective == pytest.approx(
        0.5 * lam * res.w @ res.w + max(_brute_force_violation(s, t), 0.0), abs=1e-12)
    assert res.objective == pytest.approx(svmmap_objective(data, None, res.w, lam), abs=1e-15)


def test_certificate_on_a_medium_instance():
    rng = np.random.default_rng(5)
    Xp, Xn = rng.normal(size=(60, 8)) + 0.3, rng.normal(size=(90, 8))
    res = svmmap(Xp, Xn, 0.05)
    assert res.status == "optimal" and 0 <= res.gap <= 1e-6
    lower = res.info["lower_bound"]
    assert lower <= res.objective and (res.objective - lower) / res.objective == \
        pytest.approx(res.gap)
    # no random perturbation beats the certified objective by more than the gap
    for scale in (1e-3, 1e-1):
        for _ in range(10):
            w = res.w + scale * rng.normal(size=8)
            assert svmmap_objective(Xp, Xn, w, 0.05) >= lower
    # the dual point is feasible and gives the lower bound
    alpha = res.dual
    assert alpha.min() >= 0 and alpha.sum() <= 1 + 1e-12
    v = res.info["cuts"].T @ alpha
    assert alpha @ res.info["deltas"] - 0.5 * (v @ v) / 0.05 == pytest.approx(lower, abs=1e-12)


def test_early_stops_are_honest():
    rng = np.random.default_rng(6)
    Xp, Xn = rng.normal(size=(40, 6)) + 0.3, rng.normal(size=(50, 6))
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = svmmap(Xp, Xn, 0.01, max_iter=2)
    assert res.status == "max_iter" and res.gap > 1e-6 and res.iterations == 2
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        res = svmmap(Xp, Xn, 0.001, time_limit=1e-9)
    assert res.status == "time_limit" and not res.converged


def test_warm_start_reuses_the_cuts_of_another_lambda():
    rng = np.random.default_rng(8)
    Xp, Xn = rng.normal(size=(50, 6)) + 0.3, rng.normal(size=(70, 6))
    first = svmmap(Xp, Xn, 0.1)
    cold = svmmap(Xp, Xn, 0.05)
    warm = svmmap(Xp, Xn, 0.05, warm_start=first)
    assert warm.status == cold.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=2e-6)
    assert warm.iterations < cold.iterations
    from_w = svmmap(Xp, Xn, 0.05, warm_start=cold.w)
    assert from_w.status == "optimal" and from_w.objective == pytest.approx(cold.objective,
                                                                             rel=2e-6)


def test_input_checks():
    rng = np.random.default_rng(9)
    Xp, Xn = rng.normal(size=(4, 2)), rng.normal(size=(5, 2))
    with pytest.raises(ValueError, match="lam"):
        svmmap(Xp, Xn, 0.0)
    with pytest.raises(TypeError, match="Xn"):
        svmmap(Xp, None, 1.0)
    with pytest.raises(ValueError, match="method"):
        svmmap(Xp, Xn, 1.0, method="sgd")
    with pytest.raises(ValueError, match="sample weights"):
        svmmap(BipartiteData(Xp, Xn, np.ones(4), 2 * np.ones(5)), None, 1.0)
    with pytest.raises(ValueError, match="warm_start"):
        svmmap(Xp, Xn, 1.0, warm_start=np.ones(3))
    with pytest.raises(ValueError, match="limited"):
        ranking_patterns(5, 2)


def test_verbose_logs_one_line_per_round(caplog):
    rng = np.random.default_rng(10)
    Xp, Xn = rng.normal(size=(10, 3)) + 0.5, rng.normal(size=(12, 3))
    with caplog.at_level(logging.INFO, logger="infpush_cvx.solvers"):
        quiet = svmmap(Xp, Xn, 0.1)
        assert not [r for r in caplog.records if r.levelno >= logging.INFO]
        loud = svmmap(Xp, Xn, 0.1, verbose=True)
    rounds = [r for r in caplog.records if r.getMessage().startswith("svmmap ")
              and "objective" in r.getMessage() and r.levelno == logging.INFO]
    assert len(rounds) >= loud.iterations == quiet.iterations


# ---- the ranker -------------------------------------------------------------------------------

def _labelled(seed=0, N=80, d=5):
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.4).astype(int)
    X = rng.normal(size=(N, d))
    X[:, :2] += 1.0 * y[:, None]
    return X, y


def test_ranker_fits_the_solver_and_scores_by_average_precision():
    from infpush_cvx.evaluation.rankers import SVMMAPRanker
    X, y = _labelled()
    r = SVMMAPRanker(C=10.0).fit(X, y)
    res = svmmap(X[y == 1], X[y == 0], 0.1)
    np.testing.assert_allclose(r.coef_, res.w, atol=1e-8)
    assert r.status_ == "optimal" and r.dual_gap_ <= 1e-6 and r.backend_ == "native"
    assert r.score(X, y) == metrics.average_precision(y, X @ r.coef_)
    # a path along C, warm-started, gives the individual fits
    path = SVMMAPRanker()._fit_path(X, y, [10.0, 0.1])
    for (w, status), C in zip(path, [10.0, 0.1]):
        single = svmmap(X[y == 1], X[y == 0], 1 / C)
        assert status == "optimal"
        assert svmmap_objective(X[y == 1], X[y == 0], w, 1 / C) == \
            pytest.approx(single.objective, rel=2e-6)


def test_ranker_cvxpy_backend_agrees_on_tiny_data_and_refuses_larger():
    from infpush_cvx.evaluation.rankers import SVMMAPRanker
    rng = np.random.default_rng(12)
    X = rng.normal(size=(7, 3))
    y = np.array([1, 1, 1, 0, 0, 0, 0])
    X[y == 1] += 0.5
    for C in (0.5, 20.0):
        nat = SVMMAPRanker(C=C, solver="native").fit(X, y)
        cvx = SVMMAPRanker(C=C, solver="cvxpy").fit(X, y)
        f = lambda w: svmmap_objective(X[y == 1], X[y == 0], w, 1 / C)
        assert f(nat.coef_) == pytest.approx(f(cvx.coef_), rel=1e-6, abs=1e-9)
    X, y = _labelled(N=20)
    with pytest.raises(ValueError, match="at most 4"):
        SVMMAPRanker(solver="cvxpy").fit(X, y)


def test_ranker_takes_no_sample_weight():
    from infpush_cvx.evaluation.rankers import SVMMAPRanker
    X, y = _labelled()
    with pytest.raises(TypeError):
        SVMMAPRanker().fit(X, y, sample_weight=np.ones(len(y)))


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # scikit-learn is an optional extra
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    from infpush_cvx.evaluation.rankers import SVMMAPRanker as _SVMMAPRanker

    def _expected_failed_checks(estimator):
        return {"check_classifiers_classes":
                "string labels need pos_label under the binary-label contract (as for every "
                "ranker, tests/evaluation/test_rankers.py)"}

    # fit takes no sample_weight, so scikit-learn's sample-weight checks do not apply
    @parametrize_with_checks([_SVMMAPRanker()], expected_failed_checks=_expected_failed_checks,
                             xfail_strict=True)
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)
