"""The squared-hinge RankSVM problem: its objective and its duality-gap certificate.

Paper scaling (docs/mathematics.md, section "The squared-hinge RankSVM"), with ``c_ij = p_i q_j /
W``, ``W = M N`` and ``x_ij = 1 - (s_i - t_j)``, ``s = Xp w``, ``t = Xn w``::

    P(w) = (lam/2) ||w||^2 + sum_ij c_ij max(0, x_ij)^2
    D(alpha) = sum alpha_ij - sum alpha_ij^2 / (4 c_ij) - (1/(2 lam)) ||sum alpha_ij z_ij||^2

over ``alpha >= 0`` (``z_ij = x_i - x_j``; the conjugate of ``c max(0, x)^2`` is
``max_{a >= 0} a x - a^2 / (4 c)``). The dual point of any w is ``alpha_ij = 2 c_ij max(0, x_ij)``
(the maximiser at the optimum), taken at its best multiple ``tau alpha``; its three sums are pair
sums of the sorted scores (:class:`.pair_sums.ActivePairs`), so the gap costs O((m + n)
log(m + n) + nnz(X)) and no m x n array.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations import scaling as _scaling
from infpush_cvx.formulations.objectives import penalty_term
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.engines.common import centred, unit_weights
from infpush_cvx.solvers.engines.duality import largest_row_norm
from infpush_cvx.solvers.result import relative_gap, roundoff_bound
from infpush_cvx.solvers.squared_hinge_ranksvm.pair_sums import ActivePairs

#: The loss's name in :mod:`infpush_cvx.formulations.scaling` and in the catalog.
LOSS = "squared_hinge_ranksvm"


@dataclass(frozen=True)
class Point:
    """A weight vector with what its objective and certificate are made of: the scores, the
    active pairs' sums and ``pairs = sum_ij c_ij max(0, x_ij) z_ij`` (half the loss's
    negative gradient)."""

    w: np.ndarray
    s: np.ndarray
    t: np.ndarray
    sums: ActivePairs
    pairs: np.ndarray
    primal: float  # P(w), paper scaling


@dataclass(frozen=True)
class SquaredHingeRankSVMProblem(Problem):
    """The squared-hinge RankSVM on ``data`` (a BipartiteData, sample weights included) at
    ``lam`` in ``scaling`` ("paper" or "seed": ``lam_s ||w||^2 + sum_ij p_i q_j
    max(0, x_ij)^2``, the same minimiser at ``lam = 2 lam_s / W``)."""

    data: BipartiteData
    lam: float
    scaling: str = "paper"
    lam_paper: float = field(init=False, repr=False)

    model: ClassVar[str] = LOSS
    problem_class: ClassVar[str] = "QP"

    def __post_init__(self):
        self._check_lambda(LOSS)
        # the same problem without digits lost to a common offset of the columns, and with the
        # weights divided by their sums (W = 1: no overflow whatever their scale)
        rows = unit_weights(centred(self.data))
        p, q = rows.pos_weights, rows.neg_weights
        object.__setattr__(self, "_rows", rows)
        object.__setattr__(self, "pair_weights", (p / p.sum(), q / q.sum()))
        object.__setattr__(self, "_row_norm", largest_row_norm(rows))

    @property
    def Xp(self):
        return self._rows.Xp

    @property
    def Xn(self):
        return self._rows.Xn

    def point(self, w: np.ndarray) -> Point:
        """The :class:`Point` of ``w``: two passes over the data and a sort of the scores."""
        p, q = self.pair_weights
        s = np.asarray(self.Xp @ w, dtype=float).ravel()
        t = np.asarray(self.Xn @ w, dtype=float).ravel()
        sums = ActivePairs(s, t, p, q)
        primal = penalty_term(w, self.lam_paper, "l2", "paper") + sums.squares
        return Point(w, s, t, sums, self.pair_sum(sums.row1, sums.col1), primal)

    def pair_sum(self, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        """``Xp^T (p row) - Xn^T (q col)``: the pair sum ``sum_ij c_ij y_ij z_ij`` of the
        class sums ``row_i = sum_j q_j y_ij`` and ``col_j = sum_i p_i y_ij``."""
        p, q = self.pair_weights
        return (np.asarray(self.Xp.T @ (p * row)).ravel()
                - np.asarray(self.Xn.T @ (q * col)).ravel())

    def objective(self, w) -> float:
        """The primal objective at ``w`` in the caller's scaling."""
        w = np.asarray(w, dtype=float).ravel()
        if w.shape != (self.data.d,):
            raise ValueError(f"w must have length d={self.data.d}, got shape {w.shape}")
        return self.point(w).primal * _scaling.objective_multiplier(
            self.scaling, loss=LOSS, m=self.data.wp_sum, n=self.data.wn_sum)

    def certificate(self, point: Point) -> tuple[float, float, float]:
        """``(dual value, relative gap, its round-off bound)`` of ``point`` (paper scaling).

        With the dual point ``alpha = 2 c max(0, x)`` of ``point.w``::

            A = sum alpha = 2 sum_j q_j col1_j,   B = sum alpha^2 / (4 c) = the loss,
            C = ||sum alpha z||^2 / (2 lam) = ||2 pairs||^2 / (2 lam)

        ``D(tau alpha) = tau A - tau^2 (B + C)`` is largest at ``tau = A / (2 (B + C))``:
        ``D = A^2 / (4 (B + C))`` (0 when alpha = 0). At the optimum tau = 1 and the gap is 0;
        at any w with ``tau = 1``, ``P - D = ||grad P(w)||^2 / (2 lam)``. The round-off bound
        is :func:`~infpush_cvx.solvers.result.roundoff_bound` with the terms' magnitude
        ``2 lam ||w||^2 + 8 (1 + 2 R)^2`` (every squared margin is at most ``(1 + 2 R)^2``,
        ``R = max_x ||x|| ||w||``, and the weights sum to 1).
        """
        sums, lam = point.sums, self.lam_paper
        A = 2.0 * float(self.pair_weights[1] @ sums.col1)
        curvature = sums.squares + 2.0 * float(point.pairs @ point.pairs) / lam
        dual = A * A / (4.0 * curvature) if curvature > 0 else 0.0
        gap = relative_gap(point.primal, dual)
        reach = self._row_norm * float(np.linalg.norm(point.w))
        magnitude = 2.0 * lam * float(point.w @ point.w) + 8.0 * (1.0 + 2.0 * reach) ** 2
        roundoff = roundoff_bound(self.data.m + self.data.n + self.data.d + 2, magnitude,
                                  abs(point.primal))
        return dual, gap, roundoff

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations import squared_hinge_ranksvm_problem
        return squared_hinge_ranksvm_problem(self.data, self.lam, scaling=self.scaling,
                                             form=form)
