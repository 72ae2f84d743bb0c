"""TopPush (Li, Jin & Zhou, "Top Rank Optimization in Linear Time", NIPS 2014, eq. 4) in CVXPY.

Paper scaling, with ``s = Xp w``, ``t = Xn w``::

    minimise  (lam/2) ||w||^2 + (1/m) sum_i loss(max_j t_j - s_i)

    loss(z) = (1 + z)_+^2   ("truncated_quadratic", the paper's choice)
    loss(z) = (1 + z)_+     ("hinge")

Each positive is pushed above the highest-scoring negative, so the loss has m terms instead of
the m n pairs of RankSVM. ``max_j t_j`` is the scalar variable ``tau`` with the constraints
``t <= tau`` (``problem.constraints[0]``; its multipliers are the dual ``beta`` of
:mod:`infpush_cvx.solvers.toppush`). The hinge is written through ``xi >= 1 + tau - s``
(``problem.constraints[1]``, multipliers ``alpha``) with ``xi >= 0``. With sample weights p of
the positives (sum M), ``(1/m) sum_i`` becomes ``(1/M) sum_i p_i``; the negatives' weights do not
enter (a maximum over negatives). The weight variable is named ``w`` and lambda is the parameter
``lam``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._validation import check_choice

if TYPE_CHECKING:
    import cvxpy as cp

#: The losses of [Li2014]: the truncated quadratic (their experiments) and the hinge.
LOSSES = ("truncated_quadratic", "hinge")


def toppush_problem(data, lam, *, loss: str = "truncated_quadratic") -> cp.Problem:
    """The TopPush primal in paper scaling (see the module docstring)."""
    import cvxpy as cp  # here, not above: the solvers import LOSSES without CVXPY

    from ..data.containers import check_bipartite
    from ._common import weights_and_lam
    data = check_bipartite(data)
    check_choice(loss, "loss", LOSSES)
    w, lam_p = weights_and_lam(data.d, lam)
    tau = cp.Variable(name="tau")
    c = data.pos_weights / data.wp_sum
    margin = 1 + tau - data.Xp @ w
    constraints = [data.Xn @ w <= tau]
    if loss == "hinge":
        xi = cp.Variable(data.m, name="xi", nonneg=True)
        constraints.append(xi >= margin)
        loss_term = c @ xi
    else:
        loss_term = c @ cp.square(cp.pos(margin))
    objective = lam_p * 0.5 * cp.sum_squares(w) + loss_term
    return cp.Problem(cp.Minimize(objective), constraints)
