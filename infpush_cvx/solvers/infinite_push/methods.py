"""The methods of the bipartite pair-hinge problems (Infinite Push and RankSVM), as classes.

Every method runs on the features of the data, or, for a kernel problem, on the rows of a factor
``K = L L^T`` of its Gram matrix, which is the same problem
(:func:`~infpush_cvx.solvers.engines.kernel.kernel_solve`). Whether that factor is exact,
a Nystroem factor or a growing span is the method's choice (``nystroem``, ``nystroem_seed``):
the problem, the certificate and the answer are the RKHS problem's whichever it is, as they
are the same problem whatever ``tol``.

- :class:`WorkingSet` (certified; l2 and l1, sample weights): constraint generation over the
  negatives and the pairs near the margin, each restricted problem (proximal steps) solved by a
  structured interior-point method, stopped by the full relative duality gap
  (:mod:`~infpush_cvx.solvers.engines.working_set`); degenerate Infinite Push instances
  (``w* = 0``) are detected up front and answered exactly (:mod:`infpush_cvx.data.degeneracy`).
- :class:`DualFISTA` (l2): accelerated projected gradient with restart on the dual (eq. 3.9).
- :class:`PaperGradient` (l2): the papers' gradient projection (Agarwal 2011, Figures 2 and 3),
  ``eta_0 / sqrt(t)`` steps.
- :class:`ADMM` (Infinite Push, l1 and l2): Rakotomamonjy's ADMM (:mod:`.admm`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from infpush_cvx._validation import check_bool, check_int, check_scalar
from infpush_cvx.solvers.base import Solver, data_size
from infpush_cvx.solvers.engines import dual_gradient, duality, working_set
from infpush_cvx.solvers.engines.common import (blas_threads_for, centred, finish,
                                                unit_weights, warm_alpha, warm_weights)
from infpush_cvx.solvers.engines.deadline import Deadline, fresh_write_seconds
from infpush_cvx.solvers.infinite_push.problem import BipartiteProblem, InfinitePushProblem
from infpush_cvx.solvers.result import SolverResult


@dataclass(frozen=True, kw_only=True)
class BipartiteMethod(Solver):
    """A method of the bipartite problems. ``nystroem`` (kernel problems only): None (the exact
    factor of the N x N Gram matrix), a number of landmarks for a Nystroem factor (the RKHS
    problem restricted to their span), drawn with ``np.random.default_rng(nystroem_seed)``, or
    ``"adaptive"``: a span grown round by round until the gap on the exact problem, certified
    with the full Gram matrix, is at most ``tol``
    (:func:`~infpush_cvx.solvers.engines.kernel.adaptive_solve`)."""

    nystroem: int | str | None = None
    nystroem_seed: int = 0

    problem: ClassVar[type] = BipartiteProblem

    def __post_init__(self):
        if isinstance(self.nystroem, str) and self.nystroem != "adaptive":
            raise ValueError(f"unknown nystroem {self.nystroem!r}; expected None, a number of "
                             f"landmarks or 'adaptive'")
        if self.nystroem is not None and not isinstance(self.nystroem, str):
            check_int(self.nystroem, "nystroem", minimum=1)
        check_int(self.nystroem_seed, "nystroem_seed")
        super().__post_init__()

    def _solve(self, problem, warm_start, deadline: Deadline) -> SolverResult:
        if problem.kernel is not None:
            from infpush_cvx.solvers.engines.kernel import kernel_solve
            return kernel_solve(self, problem, warm_start, deadline)
        if self.nystroem is not None:
            raise TypeError(f"nystroem={self.nystroem!r} is used only with a kernel "
                            f"(kernel=...)")
        return self._solve_linear(problem, warm_start, deadline)

    def _solve_linear(self, problem, warm_start, deadline: Deadline) -> SolverResult:
        """The solve of a linear ``problem`` (the kernel route's on the rows of a factor)."""
        data = centred(problem.data)  # the same problem, without digits lost to an offset
        self._log_start(problem, data, f" ({problem.penalty} penalty)"
                        if len(problem.penalties) > 1 else "")
        return self._linear(problem, data, warm_start, deadline)

    def _linear(self, problem, data, warm_start, deadline: Deadline) -> SolverResult:
        """The solve of the linear ``problem`` on its (centred) ``data``."""
        raise NotImplementedError

    def _finished(self, problem, data, out: dict, deadline: Deadline, info=None) -> SolverResult:
        """The :class:`SolverResult` of an engine's answer ``out`` (:func:`.common.finish`): its
        dual point is ``out["dual"]`` with its certified ``out["gap"]`` (the certified engines),
        else ``out["alpha"]``, whose gap ``finish`` certifies."""
        alpha = out["dual"] if "dual" in out else out["alpha"]
        return finish(data, problem.lam_paper, problem.lam, w=out["w"], alpha=alpha,
                      gap=out.get("gap"), status=out["status"], iterations=out["iterations"],
                      t0=deadline.start, method=self.name, history=out["history"], info=info,
                      message=out.get("message", ""), loss=problem.loss,
                      penalty=problem.penalty, scaling=problem.scaling, tol=self.tol)


@dataclass(frozen=True, kw_only=True)
class WorkingSet(BipartiteMethod):
    """The certified working-set method. ``options``: a
    :class:`~infpush_cvx.solvers.engines.working_set.WorkingSetOptions` or a dict of its field
    names (``{"new_negatives": 200}``; an unknown name is a TypeError).
    ``detect_degenerate`` (Infinite Push): first decide whether ``w* = 0`` (a scale-invariant
    test) and certify it with a dual point."""

    options: Any = None
    detect_degenerate: bool = True

    name: ClassVar[str] = "working_set"
    default_max_iter: ClassVar[int] = 200
    penalties: ClassVar[tuple] = ("l2", "l1")
    weights: ClassVar[bool] = True

    def _check(self) -> None:
        object.__setattr__(self, "options", working_set.WorkingSetOptions.of(self.options))
        check_bool(self.detect_degenerate, "detect_degenerate")

    def _linear(self, problem, data, warm_start, deadline):
        w0 = warm_weights(data, warm_start)
        solve_data = unit_weights(data)  # the same problem (paper scaling), weights near 1
        ip = problem.loss == "infinite_push"
        collapsed = hull = None  # the collapse of repeated rows, once made; the hull LP's report
        if ip and self.detect_degenerate:
            answer, collapsed, hull = self._degenerate(problem, data, solve_data, deadline)
            if answer is not None:
                return answer
        if not _fits_start(solve_data, deadline):
            from infpush_cvx.solvers.ranksvm.newton import stopped_before_start
            out = stopped_before_start(np.zeros(data.d) if w0 is None else w0, deadline)
            return self._finished(problem, data, out, deadline,
                                  {"degenerate": False} if ip else None)
        with blas_threads_for(data.d):
            out = working_set.solve(solve_data, problem.lam_paper, loss=problem.loss,
                                    penalty=problem.penalty, tol=self.tol,
                                    max_iter=self.iterations, w0=w0, deadline=deadline,
                                    options=self.options, collapsed=collapsed, hull=hull)
        return self._finished(problem, data, out, deadline, {"degenerate": False} if ip else None)

    def _degenerate(self, problem, data, solve_data, deadline):
        """``(answer, collapsed, hull)``: the answer ``w = 0`` with its certificate when the
        Infinite Push is degenerate, else None (the cheap separation test settles most instances
        without the LP); the collapse of repeated rows (:func:`~.working_set.collapse`), which
        the working set takes over instead of repeating it (about 1 s on the 4,601 x 4,146
        factor of Spambase's RBF kernel); and the LP's non-degenerate report when the LP was
        solved (else None), from which the working set starts. Under a time limit each test is
        begun only when it still fits (the separation test within ``_SEPARATION_SHARE`` of the
        time left, the LP when ``_LP_PER_SEPARATION`` times the test's time fits); else the
        working set decides."""
        from infpush_cvx.data.degeneracy import (DegeneracyCheckFailed, check_degeneracy,
                                                 separating_direction)

        begun = deadline.elapsed()
        reduction = working_set.collapse(solve_data)  # repeated rows: exact
        reduced, collapsed = reduction
        setup = deadline.elapsed() - begun
        if not deadline.allows(setup):
            return None, reduction, None
        begun = deadline.elapsed()
        if separating_direction(reduced, deadline=deadline.share(_SEPARATION_SHARE)) is not None:
            return None, reduction, None
        if not deadline.allows(_LP_PER_SEPARATION * (deadline.elapsed() - begun)):
            return None, reduction, None
        try:
            report = check_degeneracy(reduced, time_limit=deadline.for_solver())
        except DegeneracyCheckFailed:  # undecided (time limit, HiGHS failed): the working set
            return None, reduction, None  # decides
        if not report.degenerate:
            return None, reduction, report
        cert = working_set.degenerate_certificate(reduced, problem.lam_paper,
                                                  penalty=problem.penalty,
                                                  theta=report.weights, collapsed=collapsed)
        if not cert["gap"] <= self.tol:  # not certified to tol (an inaccurate LP): solve it
            return None, reduction, None  # like any other
        out = {"w": cert["w"], "dual": cert["dual"], "gap": cert["gap"], "iterations": 0,
               "status": "degenerate_optimal",
               "history": {"objective": [cert["objective_paper"]], "gap": [cert["gap"]],
                           "time": [deadline.elapsed()]}}
        answer = self._finished(problem, data, out, deadline, {"degenerate": True})
        return answer, reduction, None


#: Under a time limit, the separation test takes at most this share of the time left: its
#: passes over Xn decide nothing on hard instances (50 passes, 0.49 s of a 1 s limit on 50,000 +
#: 50,000 x 300 Gaussian rows, after which the working set's start no longer fit); and the LP
#: is begun only when this many times the separation test's time still fits (it converts and
#: solves over every row: 1.5-2 s after a 0.22 s test on those rows, 14 ms after 2 ms on an
#: a8a sample).
_SEPARATION_SHARE, _LP_PER_SEPARATION = 0.25, 4.0


def _fits_start(data, deadline: Deadline) -> bool:
    """Whether the working set's start still fits under the time limit: its rescaled copy of
    the data (:func:`~infpush_cvx.solvers.engines.deadline.fresh_write_seconds`), which reads no
    clock (at 50,000 + 50,000 x 300 and a 1 s limit the Infinite Push's ran to 4 s)."""
    if deadline.limit is None:
        return True
    entries = data_size(data.Xp, data.Xn)
    return deadline.allows(fresh_write_seconds(entries, clock=deadline.clock))


def dual_projector(problem, data):
    """The projection onto the dual's feasible set: the l1,inf ball of radius ``C/m`` per
    negative (Infinite Push, eq. 3.9) or the box ``[0, C/(m n)]`` (RankSVM)."""
    bound = duality.dual_bound(problem.lam_paper, data.m, data.n, problem.loss)
    if problem.loss == "ranksvm":
        return lambda V: np.clip(V, 0.0, bound)
    from infpush_cvx.prox import project_l1inf
    return lambda V: project_l1inf(V, bound, axis=0, nonneg=True)


@dataclass(frozen=True, kw_only=True)
class DualFISTA(BipartiteMethod):
    """Accelerated projected gradient with restart on the dual, certified by its gap."""

    name: ClassVar[str] = "fista"
    default_max_iter: ClassVar[int] = 20000

    def _linear(self, problem, data, warm_start, deadline):
        out = dual_gradient.fista(data, problem.lam_paper, dual_projector(problem, data),
                                  loss=problem.loss, max_iter=self.iterations, tol=self.tol,
                                  alpha0=warm_alpha(data, warm_start), deadline=deadline)
        return self._finished(problem, data, out, deadline, {"lipschitz": out["lipschitz"]})


@dataclass(frozen=True, kw_only=True)
class PaperGradient(BipartiteMethod):
    """The papers' gradient projection, steps ``eta0 / sqrt(t)``; ``eta0`` defaults to
    ``1/L``, L the Lipschitz constant of the dual's gradient."""

    eta0: float | None = None

    name: ClassVar[str] = "paper"
    default_max_iter: ClassVar[int] = 1000

    def _check(self) -> None:
        if self.eta0 is not None:
            check_scalar(self.eta0, "eta0", positive=True)

    def _linear(self, problem, data, warm_start, deadline):
        out = dual_gradient.paper_gradient_projection(
            data, problem.lam_paper, dual_projector(problem, data), loss=problem.loss,
            eta0=self.eta0, max_iter=self.iterations, tol=self.tol,
            alpha0=warm_alpha(data, warm_start), deadline=deadline)
        return self._finished(problem, data, out, deadline, {"eta0": out["eta0"]})


@dataclass(frozen=True, kw_only=True)
class ADMM(BipartiteMethod):
    """Rakotomamonjy's ADMM, l1 or l2 (``rho``: its penalty parameter, adapted by residual
    balancing from this start)."""

    rho: float | None = None

    name: ClassVar[str] = "admm"
    problem: ClassVar[type] = InfinitePushProblem
    default_max_iter: ClassVar[int] = 5000
    penalties: ClassVar[tuple] = ("l2", "l1")

    def _check(self) -> None:
        if self.rho is not None:
            check_scalar(self.rho, "rho", positive=True)

    def _linear(self, problem, data, warm_start, deadline):
        from infpush_cvx.solvers.infinite_push.admm import admm
        out = admm(data, problem.lam_paper, penalty=problem.penalty, tol=self.tol,
                   max_iter=self.iterations, rho=self.rho, alpha0=warm_alpha(data, warm_start),
                   deadline=deadline)
        return self._finished(problem, data, out, deadline, {"rho": out["rho"]})
