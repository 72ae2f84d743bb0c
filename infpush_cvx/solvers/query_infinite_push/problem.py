"""The Infinite Push over queries as a value: its objective and its duality-gap certificate.

Paper scaling (docs/mathematics.md, section 12; :mod:`infpush_cvx.formulations._query_infinite_push`
gives the groups R_q, N_q, the weights p, M_q and omega_q)::

    P(w) = lam pen(w) + sum_q omega_q max_{j in N_q} (1/M_q) sum_{i in R_q} p_i h_ij(w).

The dual variable is one ``alpha_ij >= 0`` per pair of a query, feasible when, in every query,
``sum_{j in N_q} max_{i in R_q} alpha_ij / p_i <= omega_q / M_q`` (the weighted Infinite Push's
set of docs/mathematics.md section 8.2, one per query, its budget ``omega_q``); with
``w(alpha) = sum_ij alpha_ij (x_i - x_j)`` its value is::

    l2:  D(alpha) = sum alpha - ||w(alpha)||^2 / (2 lam)
    l1:  D(alpha) = sum alpha   if ||w(alpha)||_inf <= lam   (else -inf),

a lower bound on the optimum. A pair dual given on some of the pairs (the others zero) is made
feasible query by query (clipped at 0, scaled into its budget) and taken at its best multiple.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from infpush_cvx._validation import check_choice, check_scalar
from infpush_cvx.data.queries import QueryData
from infpush_cvx.formulations import scaling as _scaling
from infpush_cvx.formulations._query_infinite_push import PushGroups, check_threshold, push_groups
from infpush_cvx.formulations.objectives import penalty_term
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.query_infinite_push.push_sums import negative_losses, query_losses
from infpush_cvx.solvers.result import relative_gap, roundoff_bound

#: The loss's name in :mod:`infpush_cvx.formulations.scaling` and in the catalog.
LOSS = "query_infinite_push"


@dataclass(frozen=True)
class Certificate:
    """A primal point's objective and a dual bound, paper scaling: ``primal`` = P(w), ``dual``
    = D(alpha), the relative gap and its round-off bound."""

    primal: float
    dual: float
    gap: float
    roundoff: float


@dataclass(frozen=True, eq=False)
class QueryInfinitePushProblem(Problem):
    """The Infinite Push over the queries of ``data`` (a QueryData, its sample and query weights
    included) at ``lam`` in ``scaling`` (``"paper"`` or ``"seed"``: module
    :mod:`infpush_cvx.formulations._query_infinite_push`), ``penalty`` ``"l2"`` or ``"l1"``,
    relevant documents those of label at least ``threshold`` (``"each"``: the mean over every
    label level above the lowest, query by query). Built, it holds ``groups`` (the
    :class:`~infpush_cvx.formulations._query_infinite_push.PushGroups`) and ``lam_paper``."""

    data: QueryData
    lam: float
    penalty: str = "l2"
    threshold: float | str = 1.0
    scaling: str = "paper"
    lam_paper: float = field(init=False, repr=False)
    groups: PushGroups = field(init=False, repr=False)

    model: ClassVar[str] = LOSS
    problem_class: ClassVar[str] = "QP"
    catalog_options: ClassVar[tuple] = ("penalty", "threshold", "scaling")

    def __post_init__(self):
        if not isinstance(self.data, QueryData):
            raise TypeError(f"data must be a QueryData, got {type(self.data).__name__}")
        lam = check_scalar(self.lam, "lam", positive=True)
        check_choice(self.penalty, "penalty", _scaling.PENALTIES)
        check_choice(self.scaling, "scaling", _scaling.SCALINGS)
        object.__setattr__(self, "threshold", check_threshold(self.threshold))
        groups = push_groups(self.data, self.threshold)
        lam_paper = float(_scaling.to_paper_lambda(lam, self.scaling, loss=LOSS,
                                                   penalty=self.penalty, m=groups.nu, n=1.0))
        for name, value in (("lam", lam), ("lam_paper", lam_paper), ("groups", groups),
                            ("_row_norm", None)):
            object.__setattr__(self, name, value)

    def traits(self) -> dict:
        data = self.data
        return {"penalty": self.penalty, "kernel": False,
                "weighted": data.sample_weight is not None or data.query_weight is not None}

    def scores(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The relevant and the other documents' scores ``(s, t)`` (one pass over X)."""
        u = np.asarray(self.data.X @ w, dtype=np.float64).ravel()
        return u[self.groups.rel_rows], u[self.groups.neg_rows]

    def negative_losses(self, w: np.ndarray) -> np.ndarray:
        """Every other document's loss ``v_j`` in its query (:mod:`.push_sums`)."""
        g = self.groups
        s, t = self.scores(w)
        return negative_losses(s, g.p, g.ptr_r, t, g.ptr_n, g.M)

    def paper_objective(self, w: np.ndarray, v: np.ndarray | None = None) -> float:
        """P(w) in paper scaling (``v``: the negative losses at w, when already computed)."""
        v = self.negative_losses(w) if v is None else v
        loss = float(self.groups.omega @ query_losses(v, self.groups.ptr_n))
        return penalty_term(w, self.lam_paper, self.penalty, "paper") + loss

    def multiplier(self) -> float:
        """The factor taking a paper-scaling value to the caller's scaling (1 or M)."""
        return float(_scaling.objective_multiplier(self.scaling, loss=LOSS, m=self.groups.nu,
                                                   n=1.0))

    def objective(self, w) -> float:
        """The primal objective at ``w`` in the caller's scaling."""
        w = np.asarray(w, dtype=float).ravel()
        if w.shape != (self.data.d,):
            raise ValueError(f"w must have length d={self.data.d}, got shape {w.shape}")
        return self.paper_objective(w) * self.multiplier()

    def dual_value(self, I: np.ndarray, J: np.ndarray, alpha: np.ndarray) -> tuple[float, float]:
        """``(D, sum alpha)`` at the pair dual ``alpha`` on the pairs ``(I, J)`` (positions in
        the groups' relevant and other rows; every other pair zero), made feasible and taken at
        its best multiple (module docstring)."""
        g = self.groups
        alpha = np.maximum(np.nan_to_num(np.asarray(alpha, dtype=np.float64)), 0.0)
        if not alpha.any():
            return 0.0, 0.0
        top = np.zeros(g.neg_rows.size)  # max_i alpha_ij / p_i for every other document j
        np.maximum.at(top, J, alpha / g.p[I])
        used = np.bincount(g.neg_query, weights=top, minlength=g.n_queries)
        budget = g.omega / g.M
        with np.errstate(divide="ignore"):
            room = np.where(used > 0, budget / used, np.inf)  # how far each query may scale
        alpha = alpha * np.minimum(room, 1.0)[g.rel_query[I]]
        tau_max = float(np.min(np.maximum(room, 1.0)))
        total = float(alpha.sum())
        direction = self._pair_vector(I, J, alpha)
        if self.penalty == "l2":
            curvature = float(direction @ direction) / (2.0 * self.lam_paper)
            tau = tau_max if curvature == 0 else min(tau_max, total / (2.0 * curvature))
            return tau * total - tau * tau * curvature, total
        top_w = float(np.abs(direction).max())
        tau = tau_max if top_w == 0 else min(tau_max, self.lam_paper / top_w)
        return tau * total, total

    def _pair_vector(self, I, J, alpha) -> np.ndarray:
        """``w(alpha) = sum_ij alpha_ij (x_i - x_j)``: one product ``X^T c`` (no copy of X)."""
        g = self.groups
        coef = np.zeros(self.data.n)
        # (added, not assigned: with threshold="each" a document is in several groups)
        np.add.at(coef, g.rel_rows, np.bincount(I, weights=alpha, minlength=g.rel_rows.size))
        np.add.at(coef, g.neg_rows, -np.bincount(J, weights=alpha, minlength=g.neg_rows.size))
        return self.document_vector(coef)

    def document_vector(self, coef: np.ndarray) -> np.ndarray:
        """``X^T coef`` for one coefficient a document."""
        return np.asarray(self.data.X.T @ coef, dtype=np.float64).ravel()

    def certificate(self, w: np.ndarray, I, J, alpha, primal: float | None = None
                    ) -> Certificate:
        """The :class:`Certificate` of ``w`` with the pair dual ``alpha`` on the pairs
        ``(I, J)`` (:meth:`dual_value`). The round-off bound counts ``n + d + 2`` terms of
        magnitude ``2 lam pen(w) + 2 (1 + 2 R) + 2 sum alpha`` (a hinge is at most
        ``1 + 2 R``, ``R = max_x ||x|| ||w||``, and the omega_q sum to 1)."""
        primal = self.paper_objective(w) if primal is None else primal
        dual, total = self.dual_value(I, J, alpha)
        if self._row_norm is None:
            X = self.data.X
            sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if hasattr(X, "multiply") \
                else np.einsum("ij,ij->i", X, X)
            object.__setattr__(self, "_row_norm", float(np.sqrt(sq.max())))
        reach = self._row_norm * float(np.linalg.norm(w))
        magnitude = 2.0 * penalty_term(w, self.lam_paper, self.penalty, "paper") + \
            2.0 * (1.0 + 2.0 * reach) + 2.0 * total
        roundoff = roundoff_bound(self.data.n + self.data.d + 2, magnitude, abs(primal))
        return Certificate(primal, dual, relative_gap(primal, dual), roundoff)

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations import query_infinite_push_problem
        return query_infinite_push_problem(self.data, self.lam, penalty=self.penalty,
                                           threshold=self.threshold, scaling=self.scaling)
