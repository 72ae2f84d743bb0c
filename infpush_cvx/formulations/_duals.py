"""Duals of the l2 Infinite Push and of the bipartite RankSVM (Agarwal, SDM 2011, eqs. 3.9, 4.20).

Both minimise, over alpha in R^{m x n}::

    Q(alpha) = 1/2 ||w(alpha)||^2 - sum_ij alpha_ij,
    w(alpha) = sum_ij alpha_ij (x_i^+ - x_j^-) = Xp^T (alpha 1_n) - Xn^T (alpha^T 1_m)

Infinite Push:  alpha >= 0,  sum_j max_i alpha_ij <= C/m  (a nonnegative l1,inf ball, groups =
                                                           columns)
RankSVM:        0 <= alpha_ij <= C/(m n)                    (a box)

with ``C = 1/lam`` for the paper-scaling lambda. Strong duality gives ``P(w*) = -lam Q(alpha*)``
(paper scaling) and ``w* = w(alpha*)``; in seed scaling multiply by N (m, or m n): see
:func:`primal_value_from_dual`. The variable is named ``alpha`` and ``C`` is a parameter, so a
new lambda re-solves without recompiling (set ``problem.param_dict["C"].value = 1 / lam``).

Weighted data (sample weights p > 0 of the positives, q > 0 of the negatives, sums M and N): Q and
w(alpha) are unchanged and the feasible sets become::

    Infinite Push:  alpha >= 0,  sum_j max_i (alpha_ij / p_i) <= C/M
    RankSVM:        0 <= alpha_ij <= C p_i q_j / (M N)

Why: C times the loss is the support function of this set at ``1 - w.z_ij``. The Infinite Push loss
is ``max_j sum_i (p_i/M) h_ij``, a maximum over u in the simplex of ``sum_ij u_j (p_i/M) h_ij``, and
``h_ij = max_{0<=b<=1} b (1 - w.z_ij)``; so ``alpha_ij = C u_j (p_i/M) b_ij`` ranges over
``max_i alpha_ij / p_i <= C u_j / M``, and u over the simplex gives the constraint above. For
RankSVM pair ij has weight ``p_i q_j / (M N)``, which caps alpha_ij. q enters neither the Infinite
Push primal nor its dual. For weighted data pass ``m=data.wp_sum, n=data.wn_sum`` to
:func:`primal_value_from_dual`.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from . import scaling as _scaling
from .._validation import check_choice, check_scalar
from ..data.containers import check_bipartite


def _dual_problem(data, lam, scaling: str, loss: str, feasible_set) -> cp.Problem:
    """Minimise Q(alpha) over ``alpha >= 0`` and ``feasible_set(data, alpha, C)``, with C the
    parameter ``1 / lam`` (lam in paper scaling)."""
    data = check_bipartite(data)
    lam = check_scalar(lam, "lam", positive=True)
    lam_paper = _scaling.to_paper_lambda(lam, scaling, loss=loss, penalty="l2",
                                         m=data.wp_sum, n=data.wn_sum)
    C = cp.Parameter(nonneg=True, name="C", value=1.0 / lam_paper)
    alpha = cp.Variable((data.m, data.n), name="alpha", nonneg=True)
    w = data.Xp.T @ cp.sum(alpha, axis=1) - data.Xn.T @ cp.sum(alpha, axis=0)
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) - cp.sum(alpha)),
                      feasible_set(data, alpha, C))


def infinite_push_dual_problem(data, lam, *, scaling: str = "paper") -> cp.Problem:
    """The l2 Infinite Push dual (Agarwal eq. 3.9): minimise Q(alpha) over the l1,inf set.

    Weighted data: ``sum_j max_i (alpha_ij / p_i) <= C/M`` (module docstring).
    """
    def l1inf_set(data, alpha, C):
        scaled = alpha if data.wp is None else cp.multiply(
            np.outer(1.0 / data.wp, np.ones(data.n)), alpha)
        return [cp.sum(cp.max(scaled, axis=0)) <= C / data.wp_sum]
    return _dual_problem(data, lam, scaling, "infinite_push", l1inf_set)


def ranksvm_dual_problem(data, lam, *, scaling: str = "paper") -> cp.Problem:
    """The bipartite RankSVM dual (Agarwal, Figure 3): minimise Q(alpha) over a box.

    Weighted data: ``alpha_ij <= C p_i q_j / (M N)`` (module docstring).
    """
    def box(data, alpha, C):
        if not data.weighted:
            return [alpha <= C / (data.m * data.n)]
        return [alpha <= C * (np.outer(data.pos_weights, data.neg_weights)
                              / (data.wp_sum * data.wn_sum))]
    return _dual_problem(data, lam, scaling, "ranksvm", box)


def primal_value_from_dual(dual_value: float, lam, *, loss: str, scaling: str, m: int,
                           n: int) -> float:
    """``P* = -lam_paper Q*``, times N (m or m n) in seed scaling; ``lam`` in ``scaling``.

    For weighted data pass the weight sums ``m=data.wp_sum, n=data.wn_sum``. ``lam``, ``m`` and
    ``n`` must be positive and ``dual_value`` finite.
    """
    dual_value = check_scalar(dual_value, "dual_value")
    lam = check_scalar(lam, "lam", positive=True)
    check_choice(loss, "loss", _scaling.LOSSES)  # (scaling: by to_paper_lambda)
    m = check_scalar(m, "m", positive=True)
    n = check_scalar(n, "n", positive=True)
    lam_paper = _scaling.to_paper_lambda(lam, scaling, loss=loss, penalty="l2", m=m, n=n)
    multiplier = _scaling.objective_multiplier(scaling, loss=loss, m=m, n=n)
    return -lam_paper * dual_value * multiplier
