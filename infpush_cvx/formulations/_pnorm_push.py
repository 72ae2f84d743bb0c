"""The P-Norm Push (Rudin, JMLR 2009), l2-regularised, in CVXPY: an exponential-cone problem.

Rudin's objective for linear scores ``s = Xp w``, ``t = Xn w`` is
``sum_j (sum_i exp(-(s_i - t_j)))^p`` ([Rudin2009]; p = 1 is RankBoost's exponential loss).
The project's convex form, with the paper scaling's averages and an l2 penalty::

    P_p(w) = (lam/2) ||w||^2 + (1/p) log( (1/n) sum_j ( (1/m) sum_i exp(-(s_i - t_j)) )^p )

Since ``(1/m) sum_i exp(-(s_i - t_j)) = exp(t_j) (1/m) sum_i exp(-s_i)``, the loss factorises
into two log-sum-exps of linear functions of w::

    loss(w) = (1/p) log( (1/n) sum_j exp(p t_j) ) + log( (1/m) sum_i exp(-s_i) )

which CVXPY writes with ``cp.log_sum_exp`` (exponential cones; DCP). As p grows the loss tends to
``max_j log((1/m) sum_i exp(-(s_i - t_j)))``, an exponential-loss Infinite Push; ``log`` of Rudin's
objective is ``p (loss + log m) + log n``, so both have the same minimisers without the penalty.

Sample weights (``p_i`` of the positives, ``q_j`` of the negatives, sums M and N) replace the
averages by weighted averages, ``(1/M) sum_i p_i`` and ``(1/N) sum_j q_j``: integer weights give
the problem on repeated rows. The weight variable is ``w``, lambda the parameter ``lam``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_scalar

if TYPE_CHECKING:
    import cvxpy as cp


def check_p(p) -> float:
    """The exponent p of the P-Norm Push: a finite real number ``>= 1`` ([Rudin2009])."""
    p = check_scalar(p, "p", positive=True)
    if p < 1:
        raise ValueError(f"p must be at least 1 (the P-Norm Push's l_p norm), got {p!r}")
    return p


def log_mean_weights(data) -> tuple[np.ndarray, np.ndarray]:
    """``(log a, log b)``: the logarithms of the averaging weights of the positives
    ``a_i = p_i / M`` and of the negatives ``b_j = q_j / N`` (``-log m``, ``-log n`` unweighted)."""
    log_a = np.log(data.pos_weights) - np.log(data.wp_sum)
    log_b = np.log(data.neg_weights) - np.log(data.wn_sum)
    return log_a, log_b


def pnorm_push_problem(data, lam, *, p=1.0) -> cp.Problem:
    """The l2-regularised P-Norm Push of exponent ``p`` (module docstring), paper scaling."""
    import cvxpy as cp  # here, not above: the solvers import check_p without CVXPY

    from ..data.containers import check_bipartite
    from ._common import weights_and_lam
    data = check_bipartite(data)
    p = check_p(p)
    w, lam_p = weights_and_lam(data.d, lam)
    log_a, log_b = log_mean_weights(data)
    s, t = data.Xp @ w, data.Xn @ w
    loss = cp.log_sum_exp(p * t + log_b) / p + cp.log_sum_exp(-s + log_a)
    return cp.Problem(cp.Minimize(0.5 * lam_p * cp.sum_squares(w) + loss))
