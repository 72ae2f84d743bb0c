"""The largest lambda with a nonzero l1 Infinite Push model (the smallest C of a useful path).

The l1 Infinite Push, in paper scaling (docs/mathematics.md, sections 2.1 and 8.1)::

    P(w) = lam ||w||_1 + R(w),    R(w) = max_j (1/M) sum_i p_i max(0, 1 - w.(x_i^+ - x_j^-)),

is minimised by ``w = 0`` exactly when ``0`` is in the subdifferential of P at 0. Near ``w = 0``
every hinge is active, so ``R(w) = 1 + max_j w.(x_j^- - xbar^+)`` with ``xbar^+ = sum_i p_i
x_i^+ / M`` the (weighted) mean positive; the subdifferential of R at 0 is the convex hull of the
vectors ``x_j^- - xbar^+``, that of ``lam ||w||_1`` the box ``lam [-1, 1]^d``. Hence ``w* = 0``
exactly when some subgradient ``g = Xn^T mu - xbar^+`` of the loss at 0 (``mu`` in the simplex)
has ``||g||_inf <= lam``, that is when::

    lam >= lam_max = min_{mu in simplex} || xbar^+ - Xn^T mu ||_inf

(docs/mathematics.md, section 2.5, derived there; the negatives' weights do not enter, as they do
not enter the loss). In seed scaling the threshold is ``M lam_max``; in the rankers' ``C = 1/lam``
the model is zero for ``C <= C_min = 1 / lam_max`` and nonzero for every larger C.
``lam_max = 0`` (``C_min = inf``) is the degenerate case of section 1.7: the mean positive lies in
the hull of the negatives and ``w* = 0`` for every C.

The minimum is an LP in ``(mu, t)``: minimise ``t`` subject to ``-t <= xbar^+ - Xn^T mu <= t``,
``mu >= 0``, ``sum mu = 1``, solved by HiGHS (scipy) on the data divided by their largest
absolute entry, so the answer scales exactly with the data.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from ..data.containers import BipartiteData
from ..data.degeneracy import mean_positive

#: Below this (in units of the largest absolute entry) lam_max is HiGHS's round-off: 0.
_ZERO = 1e-9


def infinite_push_l1_lambda_max(data: BipartiteData) -> float:
    """``lam_max = min_{mu in simplex} ||xbar^+ - Xn^T mu||_inf`` (paper scaling; module
    docstring): the l1 Infinite Push has ``w* = 0`` exactly for ``lam >= lam_max``.

    0.0 when the instance is degenerate (``w* = 0`` for every lam). RuntimeError when HiGHS does
    not reach an optimum (it always exists: the LP is feasible and bounded below by 0).
    """
    if not isinstance(data, BipartiteData):
        raise TypeError(f"data must be a BipartiteData, got {type(data).__name__}")
    unit = max(float(abs(X).max()) for X in (data.Xp, data.Xn))
    if unit == 0.0:
        return 0.0  # all-zero data: every score is 0, whatever w
    Xn = sp.csr_matrix(data.Xn, dtype=np.float64) / unit
    xbar = mean_positive(data) / unit
    n, d = Xn.shape
    # variables [mu (n), t]; rows: Xn^T mu - t <= xbar and -Xn^T mu - t <= -xbar
    ones = sp.csr_matrix(np.ones((d, 1)))
    A_ub = sp.vstack([sp.hstack([Xn.T, -ones]), sp.hstack([-Xn.T, -ones])], format="csc")
    A_eq = sp.csr_matrix(np.r_[np.ones(n), 0.0][None, :])  # sum mu = 1
    res = scipy.optimize.linprog(np.r_[np.zeros(n), 1.0], A_ub=A_ub, b_ub=np.r_[xbar, -xbar],
                                 A_eq=A_eq, b_eq=[1.0], bounds=(0, None), method="highs",
                                 options={"primal_feasibility_tolerance": 1e-10,
                                          "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"the LP of lambda_max failed: {res.message}")
    t = float(res.x[-1])
    return 0.0 if t <= _ZERO else t * unit
