"""RankSVM's own method: Newton's method on a smoothed hinge (:mod:`.newton`); its other methods
are the bipartite ones of :mod:`infpush_cvx.solvers.infinite_push.methods`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infpush_cvx._logging import log_progress
from infpush_cvx.solvers.engines import working_set
from infpush_cvx.solvers.engines.common import blas_threads_for, unit_weights, warm_weights
from infpush_cvx.solvers.infinite_push.methods import BipartiteMethod, WorkingSet
from infpush_cvx.solvers.ranksvm import newton
from infpush_cvx.solvers.ranksvm.problem import RankSVMProblem


@dataclass(frozen=True, kw_only=True)
class SmoothingNewton(BipartiteMethod):
    """Newton's method on a hinge smoothed near the margin, every pair sum a prefix sum of
    sorted scores, certified by an implicit dual point (:mod:`.newton`); a solve it cannot
    certify is finished by the working set from its best point."""

    name: ClassVar[str] = "smoothing_newton"
    problem: ClassVar[type] = RankSVMProblem
    default_max_iter: ClassVar[int] = 500
    weights: ClassVar[bool] = True

    def _linear(self, problem, data, warm_start, deadline):
        w0 = warm_weights(data, warm_start)
        solve_data = unit_weights(data)  # the same problem (paper scaling), weights near 1
        with blas_threads_for(data.d):
            out = newton.run(solve_data, problem.lam_paper, tol=self.tol,
                             max_iter=self.iterations, w0=w0, deadline=deadline)
            if out["status"] in ("max_iter", "stalled") and not deadline.expired():
                out = _finish_by_working_set(out, solve_data, problem.lam_paper, self.tol,
                                             deadline)
        return self._finished(problem, data, out, deadline)


def _finish_by_working_set(newton_out: dict, data, lam_p: float, tol: float, deadline) -> dict:
    """Continue an uncertified smoothing-Newton solve with the working set from its best point.

    Nearly separable data (d >= m, a loss near 0: planted 50 x 50 x 50 at lambda 1e-2) can
    stall the smoothing schedule 500 Newton steps short of the gap; the working set, certified
    the same way, finishes in a few rounds. The better certified result is returned, with both
    stages in its message and iteration count.
    """
    stage = (f"smoothing Newton stopped ({newton_out['status']}, gap {newton_out['gap']:.1e} "
             f"after {newton_out['iterations']} steps)")
    log_progress(f"ranksvm: {stage}; the working set continues from its best point")
    rescue = working_set.solve(data, lam_p, loss="ranksvm", penalty="l2", tol=tol,
                               max_iter=WorkingSet.default_max_iter, w0=newton_out["w"],
                               deadline=deadline)
    if not rescue["gap"] < newton_out["gap"]:
        return newton_out
    stage += "; finished by the working set"
    rescue["message"] = f"{stage}: {rescue['message']}" if rescue["message"] else stage
    rescue["iterations"] += newton_out["iterations"]
    return rescue
