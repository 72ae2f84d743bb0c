"""The method of SVMMAP: the 1-slack cutting-plane method ([Joachims2009]), certified.

Cutting planes. Each oracle call at ``w_t`` gives a cut ``xi >= Delta_k - g_k.w`` with
``g_k = Psi(y*) - Psi(y_k)``; the working set is kept (it does not depend on lam, so a warm start
from another lam reuses it). The cutting-plane QP ``min (lam/2)||w||^2 + xi`` over the cuts
(and ``xi >= 0``) is solved by Clarabel in (w, xi), then polished exactly on its active cuts;
its multipliers ``alpha`` (``alpha >= 0``, ``sum alpha <= 1``) give
``w(alpha) = (1/lam) sum_k alpha_k g_k`` and the dual value
``D(alpha) = sum_k alpha_k Delta_k - (lam/2)||w(alpha)||^2``, a lower bound of the optimum of
the full problem (the dual of the full problem restricted to the working set). The upper bound is
``P(w(alpha))`` computed with the exact oracle; the solve stops when the relative gap
``(P - D) / P`` (:func:`~infpush_cvx.solvers.result.relative_gap`) is at most ``tol``. The
returned ``w`` is the iterate of lowest ``P`` and ``gap`` compares it with the highest ``D``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infpush_cvx._logging import log_iteration
from infpush_cvx.solvers.base import Solver, record
from infpush_cvx.solvers.engines import duality
from infpush_cvx.solvers.engines.common import blas_threads_for, warm_weights
from infpush_cvx.solvers.engines.deadline import round_end
from infpush_cvx.solvers.result import SolverResult, relative_gap
from infpush_cvx.solvers.svmmap.problem import SVMMAPProblem, cut, most_violated_ranking


@dataclass(frozen=True, kw_only=True)
class CuttingPlane(Solver):
    """The 1-slack cutting planes of the module docstring; ``max_iter`` counts oracle rounds.
    ``warm_start``: a previous SVMMAP result (its cuts are reused: they do not depend on lam) or
    a weight vector (the first cut is taken there). The result's ``dual`` is alpha over the cuts
    and its ``info`` holds ``cuts`` (``g_k``) and ``deltas``."""

    name = "cutting_plane"
    problem = SVMMAPProblem
    kernels = False

    def _solve(self, problem, warm_start, deadline) -> SolverResult:
        data, lam, tol, max_iter = problem.solved, problem.lam_paper, self.tol, self.iterations
        qp = _CuttingPlaneQP(data.d)
        w, alpha, D = np.zeros(data.d), np.zeros(0), 0.0
        if isinstance(warm_start, SolverResult) and "cuts" in warm_start.info:
            qp.G, qp.delta = (np.array(warm_start.info[key], dtype=np.float64)
                              for key in ("cuts", "deltas"))
            if qp.G.shape[1] != data.d:
                raise ValueError(f"warm_start: its cuts have {qp.G.shape[1]} features, the data "
                                 f"{data.d}")
        elif warm_start is not None:
            w = warm_weights(data, warm_start)
        self._log_start(problem, data)
        with blas_threads_for(data.d):
            best_P, best_D, best_w = np.inf, 0.0, w
            history = {"objective": [], "dual": [], "gap": [], "cuts": [], "time": []}
            status, message, it = "max_iter", f"{max_iter} cutting-plane rounds", 0
            for it in range(1, max_iter + 1):
                if qp.delta.size:  # the cutting-plane QP over the cuts so far (a warm start's)
                    alpha = qp.solve(lam, deadline)
                    w, D = qp.dual_value(alpha, lam)
                ranking = most_violated_ranking(data.Xp @ w, data.Xn @ w)
                P = 0.5 * lam * float(w @ w) + max(ranking.violation, 0.0)
                if P < best_P:
                    best_P, best_w = P, w
                best_D = max(best_D, D)
                gap = relative_gap(best_P, best_D)
                record(history, objective=P, dual=D, gap=gap, cuts=int(qp.delta.size),
                       time=deadline.elapsed())
                log_iteration("svmmap", it, P, gap, deadline.elapsed(), cuts=int(qp.delta.size),
                              violation=ranking.violation)
                end = round_end(gap, tol, deadline)
                if end is not None:
                    status, message = end
                    break
                if it == max_iter:
                    break
                qp.G = np.vstack((qp.G, cut(data, ranking)))
                qp.delta = np.append(qp.delta, ranking.loss)
        roundoff = duality.gap_roundoff(data, best_w, lam, best_P)
        status, message = self._judged(status, gap, message, roundoff)
        return self._result(deadline, w=np.asarray(best_w, dtype=np.float64).copy(),
                            objective=best_P, gap=gap, status=status, iterations=it,
                            history=history, dual=alpha,
                            info={"lam_paper": lam, "scaling": "paper", "cuts": qp.G.copy(),
                                  "deltas": qp.delta.copy(), "lower_bound": best_D,
                                  "gap_roundoff": roundoff},
                            message=message)


class _CuttingPlaneQP:
    """``min (lam/2)||w||^2 + xi`` s.t. ``xi >= Delta_k - g_k.w`` (the cuts) and ``xi >= 0``."""

    def __init__(self, d: int):
        self.G, self.delta = np.zeros((0, d)), np.zeros(0)  # no cut yet

    def dual_value(self, alpha: np.ndarray, lam: float):
        """``(w(alpha), D(alpha))`` for alpha >= 0, sum alpha <= 1."""
        v = self.G.T @ alpha
        return v / lam, float(alpha @ self.delta) - 0.5 * float(v @ v) / lam

    def solve(self, lam: float, deadline):
        """Multipliers alpha of the cuts (feasible: >= 0, sum <= 1), maximising D; Clarabel
        is given the time ``deadline`` leaves."""
        alpha = _feasible(self._clarabel(lam, deadline.for_solver()))
        polished = self._polish(alpha, lam)
        if polished is not None and \
                self.dual_value(polished, lam)[1] >= self.dual_value(alpha, lam)[1]:
            alpha = polished
        return alpha

    def _clarabel(self, lam: float, time_limit):
        import clarabel
        import scipy.sparse as sp

        K, d = self.G.shape
        P = sp.diags(np.r_[np.full(d, lam), 0.0], format="csc")
        q = np.r_[np.zeros(d), 1.0]
        A = sp.csc_matrix(np.block([[-self.G, -np.ones((K, 1))], [np.zeros((1, d)), -1.0]]))
        b = np.r_[-self.delta, 0.0]
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
        if time_limit is not None:
            settings.time_limit = max(float(time_limit), 1e-3)
        sol = clarabel.DefaultSolver(P, q, A, b, [clarabel.NonnegativeConeT(K + 1)],
                                     settings).solve()
        if str(sol.status) not in ("Solved", "AlmostSolved"):
            return np.zeros(K)  # (no multipliers: the dual's value 0 at alpha = 0 still holds)
        return np.asarray(sol.z)[:K].copy()

    def _polish(self, alpha: np.ndarray, lam: float):
        """The exact solution on the active cuts of an interior-point answer (its KKT system:
        ``G_S G_S^T alpha_S / lam + xi = Delta_S``, ``sum alpha_S = 1``, or ``xi = 0``), or None
        when it is not feasible."""
        if alpha.size == 0 or alpha.max() <= 0:
            return None
        S = np.flatnonzero(alpha > 1e-9 * alpha.max())
        GS = self.G[S]
        # free = 1 when xi is free (sum alpha = 1): the system then has the row sum alpha_S = 1
        k, free = S.size, int(alpha.sum() > 1 - 1e-9)
        KKT = np.block([[GS @ GS.T / lam, np.ones((k, free))],
                        [np.ones((free, k)), np.zeros((free, free))]])
        sol = np.linalg.lstsq(KKT, np.r_[self.delta[S], np.ones(free)], rcond=None)[0][:k]
        if not np.all(np.isfinite(sol)) or sol.min() < 0 or sol.sum() > 1 + 1e-12:
            return None
        out = np.zeros_like(alpha)
        out[S] = sol
        return _feasible(out)


def _feasible(alpha: np.ndarray) -> np.ndarray:
    alpha = np.maximum(alpha, 0.0)
    return alpha / max(alpha.sum(), 1.0)
