"""Integer sample weights are repeated rows, to round-off, for the kernel rankers (gamma="scale"
from the weighted rows); issue 26, item 5. The reproducers use the data of scikit-learn's
check_sample_weight_equivalence_on_dense_data (15 rows, 30 features, weights 0..4), where the
decision functions differed by up to 48% (rbf)."""

import importlib

import numpy as np
import pytest

from infpush_cvx.data.kernels import resolve_gamma
from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker

CERTIFIED = ("optimal", "degenerate_optimal")


def _check_data(seed=42):
    """scikit-learn's data for the weight-equivalence check: X (15 x 30) uniform, labels 0..2
    (binary here: 2 against the rest), integer weights 0..4 (zeros included)."""
    rng = np.random.RandomState(seed)
    X = rng.rand(15, 30)
    y = (rng.randint(0, 3, size=15) == 2).astype(int)
    sw = rng.randint(0, 5, size=15)
    return X, y, sw


def _max_relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12 * np.abs(b).max())))


# ---- gamma="scale" from the weighted rows ------------------------------------------------------
def test_weighted_gamma_scale_is_the_gamma_of_the_repeated_rows():
    X, _, sw = _check_data()
    repeated = resolve_gamma("scale", X.repeat(sw, axis=0))
    assert resolve_gamma("scale", X, sample_weight=sw) == pytest.approx(repeated, rel=1e-13)
    # scaling the weights changes nothing; unit weights are the unweighted rule
    assert resolve_gamma("scale", X, sample_weight=0.5 * sw) == pytest.approx(repeated,
                                                                               rel=1e-13)
    assert resolve_gamma("scale", X, sample_weight=np.ones(15)) == pytest.approx(
        resolve_gamma("scale", X), rel=1e-13)
    # not the unweighted value (what the rankers used before): the reproducer's 48%
    assert abs(resolve_gamma("scale", X) / repeated - 1) > 1e-3
    # constant rows (zero variance) keep gamma = 1; "auto" and numbers ignore the weights
    assert resolve_gamma("scale", np.ones((4, 3)), sample_weight=[1, 2, 0, 1]) == 1.0
    assert resolve_gamma("auto", X, sample_weight=sw) == 1 / 30
    assert resolve_gamma(0.25, X, sample_weight=sw) == 0.25


@pytest.mark.parametrize("weights,error", [(np.ones(14), ValueError),
                                           (-np.ones(15), ValueError),
                                           (np.zeros(15), ValueError),
                                           (np.full(15, np.nan), ValueError)])
def test_bad_weights_for_gamma_are_named(weights, error):
    X, _, _ = _check_data()
    with pytest.raises(error, match="sample_weight"):
        resolve_gamma("scale", X, sample_weight=weights)


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_kernel_rankers_weighted_equal_repeated_rows(cls, kernel):
    # reproducer: 48% apart before (gamma from the unweighted X); now to round-off of the solve
    X, y, sw = _check_data()
    weighted = cls(kernel=kernel, degree=2, tol=1e-9).fit(X, y, sample_weight=sw)
    repeated = cls(kernel=kernel, degree=2, tol=1e-9).fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.status_ in CERTIFIED and repeated.status_ in CERTIFIED
    assert weighted.gamma_ == pytest.approx(repeated.gamma_, rel=1e-13)
    assert weighted.gamma_ == pytest.approx(resolve_gamma("scale", X.repeat(sw, axis=0)))
    err = _max_relative(weighted.decision_function(X), repeated.decision_function(X))
    assert err <= 1e-6, err


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_default_rbf_rankers_weighted_equal_repeated_rows(cls):
    # the default tol, and the tolerances of scikit-learn's check (assert_allclose_dense_sparse)
    X, y, sw = _check_data()
    weighted = cls(kernel="rbf").fit(X, y, sample_weight=sw)
    repeated = cls(kernel="rbf").fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_cvxpy_kernel_rankers_resolve_gamma_on_the_weighted_rows(cls):
    # the CVXPY backend gets the same number; Clarabel then agrees with itself to about 1e-5
    X, y, sw = _check_data()
    weighted = cls(kernel="rbf", solver="cvxpy").fit(X, y, sample_weight=sw)
    repeated = cls(kernel="rbf", solver="cvxpy").fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.gamma_ == pytest.approx(repeated.gamma_, rel=1e-13)
    scores = repeated.decision_function(X)
    np.testing.assert_allclose(weighted.decision_function(X), scores,
                               atol=1e-4 * np.abs(scores).max())


def test_the_solvers_get_the_resolved_gamma(monkeypatch):
    # the native kernel route is called with the weighted number, not with "scale"
    module = importlib.import_module("infpush_cvx.solvers._kernel")
    seen = []
    solve = module.kernel_solve

    def recording(*args, **kwargs):
        seen.append(kwargs["gamma"])
        return solve(*args, **kwargs)

    monkeypatch.setattr(module, "kernel_solve", recording)
    X, y, sw = _check_data()
    ranker = InfinitePushRanker(kernel="rbf").fit(X, y, sample_weight=sw)
    assert seen == [ranker.gamma_] and isinstance(seen[0], float)
