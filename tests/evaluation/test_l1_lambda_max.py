"""Issue 27, item 7: ``SparseInfinitePushRanker.C_min`` / ``lambda_max``, the smallest C
(largest lambda) with a nonzero l1 model, ``lambda_max = min_{mu in simplex} ||mean(Xp) -
Xn^T mu||_inf`` (docs/mathematics.md, section 2.5), checked against the native solver on both
sides of the threshold.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.evaluation._lambda_max import infinite_push_l1_lambda_max
from infpush_cvx.evaluation.rankers import SparseInfinitePushRanker, ZeroModelWarning
from ranker_data import CERTIFIED, two_classes  # tests/evaluation/ranker_data.py


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_l1_model_is_zero_just_below_C_min_and_nonzero_just_above(seed):
    X, y = two_classes(seed=seed, zeros=0.0)
    C_min = SparseInfinitePushRanker().C_min(X, y)
    assert np.isfinite(C_min) and C_min > 0
    with pytest.warns(ZeroModelWarning, match=r"too small for the l1 penalty.* C_min = "
                      + f"{C_min:.6g}".replace(".", r"\.")):
        below = SparseInfinitePushRanker(C=C_min * (1 - 1e-3), tol=1e-9).fit(X, y)
    above = SparseInfinitePushRanker(C=C_min * (1 + 1e-3), tol=1e-9).fit(X, y)
    assert below.status_ in CERTIFIED and above.status_ in CERTIFIED
    assert below.n_features_used_ == 0 and not np.any(below.coef_)
    assert above.n_features_used_ > 0 and np.abs(above.coef_).max() > 1e-3


def test_lambda_max_is_the_least_subgradient_norm_of_the_loss_at_zero():
    # lambda_max = min over the simplex of ||mean positive - Xn^T mu||_inf: no mu does better
    # than the LP's (random points of the simplex), and the LP's mu attains it
    X, y = two_classes(zeros=0.0)
    lam = SparseInfinitePushRanker().lambda_max(X, y)
    assert lam == pytest.approx(1.0 / SparseInfinitePushRanker().C_min(X, y))
    mean_pos, Xn = X[y == 1].mean(axis=0), X[y == 0]
    mus = np.random.default_rng(0).dirichlet(np.ones(Xn.shape[0]) * 0.05, size=2000)
    assert np.abs(mean_pos - mus @ Xn).max(axis=1).min() >= lam * (1 - 1e-9)
    assert lam <= np.abs(mean_pos - Xn.mean(axis=0)).max()


def test_lambda_max_scales_with_X_and_reads_weights_sparse_X_and_pos_label():
    X, y = two_classes(zeros=0.3)
    r = SparseInfinitePushRanker()
    lam = r.lambda_max(X, y)
    assert r.lambda_max(7.0 * X, y) == pytest.approx(7.0 * lam, rel=1e-8)
    assert r.lambda_max(sp.csr_matrix(X), y) == pytest.approx(lam, rel=1e-8)
    assert SparseInfinitePushRanker(pos_label="a").lambda_max(X, np.where(y == 1, "a", "b")) \
        == pytest.approx(lam, rel=1e-12)
    # integer weights: the repeated rows; the negatives' weights do not enter
    sw = np.random.default_rng(1).integers(0, 4, size=y.size)
    sw[np.flatnonzero(y == 1)[0]] = sw[np.flatnonzero(y == 0)[0]] = 1
    repeated = r.lambda_max(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    assert r.lambda_max(X, y, sample_weight=sw) == pytest.approx(repeated, rel=1e-8)
    neg_scaled = np.where(y == 0, 5.0, 1.0)
    assert r.lambda_max(X, y, sample_weight=neg_scaled) == pytest.approx(lam, rel=1e-8)


def test_lambda_max_is_zero_and_C_min_infinite_on_degenerate_data():
    from infpush_cvx.data.generators import degenerate_bipartite
    data = degenerate_bipartite(m=20, n=30, d=4, seed=0)
    assert infinite_push_l1_lambda_max(data) == 0.0
    X = np.vstack([data.Xp, data.Xn])
    y = np.r_[np.ones(data.m, int), np.zeros(data.n, int)]
    assert SparseInfinitePushRanker().C_min(X, y) == np.inf
    with pytest.raises(TypeError, match="data"):
        infinite_push_l1_lambda_max(X)
