"""The bipartite RankSVM as a value (:class:`RankSVMProblem`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infpush_cvx.solvers.infinite_push.problem import BipartiteProblem


@dataclass(frozen=True, eq=False)
class RankSVMProblem(BipartiteProblem):
    """The bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18), paper scaling::

        P(w) = (lam/2) ||w||^2 + (1/(M N)) sum_ij p_i q_j max(0, 1 - (x_i^+ - x_j^-) . w),

    ``M = sum_i p_i``, ``N = sum_j q_j``; the l2 penalty only."""

    model: ClassVar[str] = "ranksvm"
    loss: ClassVar[str] = "ranksvm"
