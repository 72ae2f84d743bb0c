"""SVMMAP ([Yue2007]): the structural SVM over rankings that optimises average precision,
trained by the 1-slack cutting-plane method ([Joachims2009]) and certified by a duality gap.

Paper scaling, ``lam = 1/C``, with ``Psi(y) = (1/(m n)) sum_ij y_ij (x_i - x_j)`` and
``Delta(y) = 1 - AP(y)`` over the rankings y (:mod:`.problem`)::

    P(w) = (lam/2) ||w||^2 + max_y [Delta(y) - w.(Psi(y*) - Psi(y))]

The most violated ranking is found in ``O((m + n) log(m + n))`` (:mod:`.problem`); the cutting
planes and their certificate are :mod:`.methods`. No catalog formulation: the CVXPY problem over
every ranking (:func:`infpush_cvx.formulations.svmmap_problem`) is for tiny instances only.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import data_first
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.svmmap.methods import CuttingPlane
from infpush_cvx.solvers.svmmap.problem import (SVMMAPProblem, ViolatedRanking,
                                                most_violated_ranking, ranking_loss,
                                                svmmap_objective)

__all__ = ["CuttingPlane", "METHODS", "MODEL", "SVMMAPProblem", "ViolatedRanking",
           "most_violated_ranking", "ranking_loss", "svmmap", "svmmap_objective"]

MODEL = Model(name="svmmap", problem=SVMMAPProblem, methods=(CuttingPlane,),
              certified=CuttingPlane, formulations=())
METHODS = tuple(method.name for method in MODEL.methods)


@data_first
def svmmap(data: BipartiteData, lam: float, tol: float = 1e-6, max_iter: int | None = None,
           warm_start: SolverResult | ArrayLike | None = None, *,
           method: str = "cutting_plane", time_limit: float | None = None,
           verbose: bool = False) -> SolverResult:
    """Train SVMMAP in paper scaling, ``lam = 1/C`` (module docstring), by 1-slack cutting
    planes certified by the duality gap of the cutting-plane QP (:class:`.CuttingPlane`).

    ``data`` is a :class:`~infpush_cvx.data.BipartiteData`, or the positives (m x d) and the
    negatives as two arguments (``svmmap(Xp, Xn, lam)``). Sample weights are refused.
    ``warm_start``: a previous ``svmmap`` result (its cuts are reused) or a weight vector.
    ``max_iter`` counts oracle rounds (default 1000); ``time_limit`` in seconds for the call.
    """
    # the time limit is a Deadline data_first started at the call
    return MODEL.solve(method, SVMMAPProblem(data, lam), warm_start, time_limit, tol=tol,
                       max_iter=max_iter, verbose=verbose)
