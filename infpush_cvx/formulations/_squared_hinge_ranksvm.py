"""The squared-hinge (L2-loss) RankSVM primal in CVXPY.

Lee & Lin, "Large-scale linear RankSVM", Neural Computation 26(4), 2014, bipartite, with the
project's scalings (:mod:`infpush_cvx.formulations.scaling`; docs/mathematics.md)::

    paper:  minimise  (lam/2) ||w||^2 + (1/W) sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2
    seed:   minimise  lam ||w||^2 + sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2

with ``s = Xp w``, ``t = Xn w``, the sample weights p, q (ones unweighted) and ``W = M N``, their
sums' product (m n unweighted). A QP: the m x n hinges are affine in (s, t) and enter squared;
the problem is RankSVM's (:mod:`._infinite_push`) with the hinges squared. The weight variable is
named ``w`` and lambda is the parameter ``lam``.
"""

from __future__ import annotations

import cvxpy as cp

from ._infinite_push import _bipartite_problem


def squared_hinge_ranksvm_problem(data, lam, *, scaling: str = "paper",
                                  form: str = "compact") -> cp.Problem:
    """The squared-hinge RankSVM primal (l2 penalty) in paper or seed scaling, compact or direct
    (module docstring)."""
    return _bipartite_problem(data, lam, loss="squared_hinge_ranksvm", penalty="l2",
                              scaling=scaling, form=form)
