"""The squared-hinge (L2-loss) RankSVM primal in CVXPY.

Lee & Lin, "Large-scale linear RankSVM", Neural Computation 26(4), 2014, bipartite, with the
project's scalings (:mod:`infpush_cvx.formulations.scaling`; docs/mathematics.md)::

    paper:  minimise  (lam/2) ||w||^2 + (1/W) sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2
    seed:   minimise  lam ||w||^2 + sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2

with ``s = Xp w``, ``t = Xn w``, the sample weights p, q (ones unweighted) and ``W = M N``, their
sums' product (m n unweighted). A QP: the m x n hinges are affine in (s, t) and enter squared.
The weight variable is named ``w`` and lambda is the parameter ``lam``.
"""

from __future__ import annotations

import cvxpy as cp

from . import scaling as _scaling
from ._common import as_bipartite, lam_parameter, pair_hinges, penalty_expression, scores


def squared_hinge_ranksvm_problem(data, lam, *, scaling: str = "paper",
                                  form: str = "compact") -> cp.Problem:
    """The squared-hinge RankSVM primal (l2 penalty) in paper or seed scaling, compact or direct
    (module docstring)."""
    data = as_bipartite(data)
    w = cp.Variable(data.d, name="w")
    s, t, constraints = scores(data, w, form)
    squares = cp.square(pair_hinges(s, t, data.m, data.n))
    if data.weighted:
        loss_sum = cp.sum(cp.multiply(data.pos_weights[:, None] * data.neg_weights[None, :],
                                      squares))
    else:
        loss_sum = cp.sum(squares)
    if scaling == "paper":
        loss_sum = loss_sum / _scaling.loss_normaliser("squared_hinge_ranksvm", data.wp_sum,
                                                       data.wn_sum)
    objective = lam_parameter(lam) * penalty_expression(w, "l2", scaling) + loss_sum
    return cp.Problem(cp.Minimize(objective), constraints)
