"""TopPushRanker: the fitted coef_ minimises the TopPush objective (independent CVXPY solve),
backends agree, weights are repeated rows, hyper-parameters are checked. scikit-learn's estimator
checks run on it with every ranker (tests/evaluation/test_rankers.py)."""

import numpy as np
import pytest

from infpush_cvx.formulations._toppush import toppush_problem
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.evaluation.rankers import TopPushRanker
from infpush_cvx.solvers.toppush import primal_objective


def _xy(seed=3, m=25, n=35, d=5):
    data = planted_bipartite(m, n, d, seed=seed)
    X = np.vstack([data.Xp, data.Xn])
    y = np.r_[np.ones(m), np.zeros(n)]
    return data, X, y


@pytest.mark.parametrize("loss", ["truncated_quadratic", "hinge"])
@pytest.mark.parametrize("C", [0.5, 20.0])
def test_coef_minimises_the_objective(loss, C):
    data, X, y = _xy()
    model = TopPushRanker(C=C, loss=loss).fit(X, y)
    prob = toppush_problem(data, 1.0 / C, loss=loss)
    prob.solve(solver="CLARABEL")
    assert model.status_ == "optimal" and model.dual_gap_ <= 1e-6
    assert primal_objective(data, model.coef_, 1.0 / C, loss) == pytest.approx(prob.value,
                                                                                rel=2e-6)
    cvx = TopPushRanker(C=C, loss=loss, solver="cvxpy").fit(X, y)
    np.testing.assert_allclose(cvx.coef_, model.coef_, atol=1e-3 * np.abs(model.coef_).max())
    agd = TopPushRanker(C=C, loss=loss, method="dual_agd").fit(X, y)
    assert primal_objective(data, agd.coef_, 1.0 / C, loss) == pytest.approx(prob.value,
                                                                              rel=2e-6)


def test_path_matches_individual_fits_and_weights_are_repeated_rows():
    data, X, y = _xy(seed=4)
    Cs = [10.0, 0.1, 1.0]
    path = TopPushRanker()._fit_path(X, y, Cs)
    for C, (w, status) in zip(Cs, path):
        single = TopPushRanker(C=C, tol=1e-9).fit(X, y)
        assert status == "optimal"
        np.testing.assert_allclose(w, single.coef_, atol=1e-4 * np.abs(single.coef_).max())
    reps = np.random.default_rng(4).integers(1, 4, y.size)
    weighted = TopPushRanker(C=2.0, tol=1e-9).fit(X, y, sample_weight=reps)
    repeated = TopPushRanker(C=2.0, tol=1e-9).fit(np.repeat(X, reps, axis=0),
                                                  np.repeat(y, reps))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_,
                               atol=1e-5 * np.abs(repeated.coef_).max())


@pytest.mark.parametrize("params,match", [
    (dict(loss="square"), "loss"), (dict(method="fista"), "method"), (dict(C=0.0), "C"),
])
def test_bad_hyper_parameters_name_themselves(params, match):
    _, X, y = _xy()
    with pytest.raises(ValueError, match=match):
        TopPushRanker(**params).fit(X, y)
