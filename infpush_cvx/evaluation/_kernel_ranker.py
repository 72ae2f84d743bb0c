"""The kernel part of :class:`~infpush_cvx.evaluation.rankers.InfinitePushRanker` and
:class:`~infpush_cvx.evaluation.rankers.RankSVMRanker`: hyper-parameters, solver arguments, fitted
coefficients and scores.

``kernel="linear"`` (the default) fits the weight vector ``coef_`` as before, on the features;
its ``dual_coef_`` is the minimum-norm ``beta`` with ``Z^T beta = coef_`` (``Z`` the training rows
that enter the loss), so ``decision_function(X) = X @ coef_ = K(X, Z) @ beta`` either way. Any
other kernel fits ``f = sum_k beta_k K(z_k, .)`` (:mod:`infpush_cvx.data.kernels`): ``coef_`` and
``n_features_used_`` are None (no weight vector in feature space), and
``decision_function(X) = K(X, support_vectors_) @ dual_coef_[support_]``.

Fitted attributes (both cases): ``dual_coef_`` (one coefficient per row of the X given to
``fit``, zero for rows of sample weight 0), ``support_`` (indices of the rows with a nonzero
coefficient), ``support_vectors_`` (those rows, a CSR matrix when X was sparse, as scikit-learn's
``SVC`` keeps them) and ``gamma_`` (the resolved gamma; None for the linear kernel).

Sparse X: the linear kernel never densifies the data; its minimum-norm ``beta`` is then computed
by LSQR on the sparse rows (Paige & Saunders 1982; started from 0 it converges to the
minimum-norm solution), stopped at ``atol = btol = 1e-12`` rather than at LAPACK's round-off:
on a8a (22,696 x 123, rank-deficient one-hot groups) in 1.0 s, with ``||Z^T beta - coef_|| /
||coef_||`` = 2e-10 and ``beta`` within 7e-10 (relative) of LAPACK's on the dense rows. Any
other kernel reads dense rows (the Gram matrix is dense: O(N^2) already).

``gamma="scale"`` is resolved here, before the solve, on the training rows with their sample
weights (:func:`infpush_cvx.data.kernels.resolve_gamma`: ``1 / (d * Var_w(X))``, the weighted
variance of the entries about their weighted mean), and the solvers get the number: integer
weights then fit the same kernel as the repeated rows, as they fit the same loss.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..data.containers import BipartiteData
from ..data.kernels import kernel_matrix, resolve_gamma
from infpush_cvx.solvers.engines.kernel import training_rows


def is_linear(ranker) -> bool:
    """Whether the ranker fits a weight vector on the features (a ranker without ``kernel``
    too)."""
    kernel = getattr(ranker, "kernel", "linear")
    return isinstance(kernel, str) and kernel == "linear"


def resolved_gamma(ranker, data: BipartiteData):
    """The ranker's gamma as a number on the training data (None for a callable kernel):
    ``"scale"`` from the weighted training rows (module docstring), ``"auto"`` is ``1 / d``."""
    if callable(ranker.kernel):
        return None
    weights = np.concatenate([data.pos_weights, data.neg_weights])
    return resolve_gamma(ranker.gamma, training_rows(data), sample_weight=weights)


def solver_kwargs(ranker, data: BipartiteData) -> dict:
    """Keyword arguments for the native solver and the CVXPY formulation ({} when linear);
    a named kernel's gamma resolved on ``data`` (:func:`resolved_gamma`)."""
    if is_linear(ranker):
        return {}
    gamma = ranker.gamma if callable(ranker.kernel) else resolved_gamma(ranker, data)
    return {"kernel": ranker.kernel, "gamma": gamma, "degree": ranker.degree,
            "coef0": ranker.coef0}


def set_fitted(ranker, training, solve) -> None:
    """Store ``dual_coef_``, ``support_``, ``support_vectors_``, ``gamma_`` of one solve."""
    data, rows = training.data, training.rows
    # Z = [Xp; Xn], the rows that enter the loss: CSR for sparse data, as SVC keeps them
    Z = (sp.vstack([sp.csr_matrix(data.Xp), sp.csr_matrix(data.Xn)], format="csr")
         if data.is_sparse else training_rows(data))
    if is_linear(ranker):
        beta_z = _min_norm_coefficients(Z, ranker.coef_)
        ranker.gamma_ = None
    else:
        beta_z = np.asarray(solve.coef, dtype=np.float64)
        ranker.gamma_ = resolved_gamma(ranker, data)
        ranker.coef_ = None
        ranker.n_features_used_ = None
    ranker.dual_coef_ = np.zeros(training.n_samples)
    ranker.dual_coef_[rows] = beta_z
    by_row = np.argsort(rows)  # the rows of Z in the order of X
    used = by_row[beta_z[by_row] != 0]
    ranker.support_ = rows[used]
    ranker.support_vectors_ = Z[used]


def _min_norm_coefficients(Z, coef: np.ndarray) -> np.ndarray:
    """The minimum-norm ``beta`` with ``Z^T beta = coef`` (least squares when inconsistent):
    LAPACK's SVD for a dense ``Z``, LSQR for a sparse one (module docstring)."""
    if not sp.issparse(Z):
        return np.linalg.lstsq(Z.T, coef, rcond=None)[0]
    from scipy.sparse.linalg import lsqr
    return lsqr(Z.T.tocsr(), coef, atol=1e-12, btol=1e-12, iter_lim=10 * sum(Z.shape))[0]


def decision_function(ranker, X: np.ndarray) -> np.ndarray:
    """``X @ coef_`` (linear) or ``K(X, support_vectors_) @ dual_coef_[support_]``."""
    if is_linear(ranker):
        return X @ ranker.coef_
    if ranker.support_.size == 0:
        return np.zeros(X.shape[0])
    gamma = ranker.gamma if ranker.gamma_ is None else ranker.gamma_
    K = kernel_matrix(X, ranker.support_vectors_, ranker.kernel, gamma, ranker.degree,
                      ranker.coef0)
    return K @ ranker.dual_coef_[ranker.support_]

