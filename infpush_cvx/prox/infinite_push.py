"""Prox of the Infinite Push loss (Rakotomamonjy, ICML 2012; docs/mathematics.md,
section 2.2).

    l(A) = max_j (1/m) sum_i max(a_ij, 0),   A in R^{m x n}
    (rows i: positives, columns j: negatives)

``l`` is the support function of ``K = {U >= 0 : sum_j max_i u_ij <= 1/m}``, so by Moreau

    prox_{tau l}(V) = V - P_{tau K}(V),

one nonnegative l1,inf projection with groups = columns (axis=0) and radius ``tau / m``.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_float_array, check_scalar
from .l1inf import project_l1inf


def infinite_push_loss(A) -> float:
    """``max_j (1/m) sum_i max(a_ij, 0)`` for an m x n array A."""
    A = check_float_array(A, "A", ndim=2)
    if A.size == 0:
        raise ValueError(f"A must be non-empty, got shape {A.shape}")
    return float(np.maximum(A, 0).astype(np.float64).sum(axis=0).max() / A.shape[0])


def prox_infinite_push_loss(V, tau, method="ssn"):
    """``argmin_A tau l(A) + ||A - V||^2 / 2 = V - P_{tau K}(V)`` with l the Infinite Push loss;
    ``method`` is that of :func:`.project_l1inf`."""
    V = check_float_array(V, "V", ndim=2)
    tau = check_scalar(tau, "tau", nonnegative=True)
    if V.size == 0:
        raise ValueError(f"V must be non-empty, got shape {V.shape}")
    return V - project_l1inf(V, tau / V.shape[0], axis=0, nonneg=True, method=method)
