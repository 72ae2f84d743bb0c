"""The one solver contract: a problem is a value, a method is a class with one ``solve``.

Three kinds of thing, after skglm's datafit/penalty/solver split and benchopt's Objective and
Solver (the losses here are coupled across pairs, so one problem class per model):

- **A problem** (:class:`Problem`): one frozen value per model holding what defines the
  optimisation problem and nothing about how to solve it: the data, lambda (the caller's and the
  paper's scaling), the loss and penalty, an optional kernel, sample weights. It is validated
  once, when it is built, and knows its primal objective, its certificate and its CVXPY problem.
- **A method** (:class:`Solver`): a frozen dataclass per algorithm, its options the fields,
  checked once by name and type when it is built (an unknown name is the dataclass's own
  TypeError naming it); it declares what it can solve (:meth:`Solver.accepts`, from a problem's
  :meth:`Problem.traits`) and has one entry point, :meth:`Solver.solve`.
- **A model** (:class:`~.registry.Model`): a problem class with its methods (the default
  first) and the catalog formulations it answers, declared once in the model's package and
  listed once in :mod:`infpush_cvx.solvers.registry`. The runner, ``reference verify``, the
  catalog and the rankers ask the registry what a model and its methods can do.

One :class:`~.engines.deadline.Deadline` flows from :meth:`Solver.solve` down to every stage and
external solver; ``solve`` takes it or a number of seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._logging import log_progress, log_summary, solver_log, verbose_logging
from .._validation import (caller_stacklevel, check_bool, check_choice, check_int,
                           check_scalar)
from ..data.containers import BipartiteData
from ..formulations import scaling as _scaling
from .engines.common import centred, check_representable, numerical_error_message
from .engines.deadline import Deadline, as_deadline
from .result import SolverResult, status_for_gap, warn_if_not_converged

__all__ = ["CVXPYMethod", "Problem", "Solver", "cvxpy_message", "data_size", "record"]


class Problem:
    """Base of the problems: subclasses are frozen dataclasses that check their fields in
    ``__post_init__``.

    Class attributes a subclass sets: ``model`` (its :class:`~.registry.Model`'s name) and
    ``problem_class`` (``"LP"``, ``"QP"``, ``"SOCP"`` or ``"EXP"``: the cone CVXPY needs).
    """

    model: ClassVar[str] = ""
    problem_class: ClassVar[str] = ""
    #: The catalog options that are arguments of the problem (the others, such as ``form``,
    #: are the CVXPY formulation's).
    catalog_options: ClassVar[tuple] = ("scaling",)

    @property
    def log_name(self) -> str:
        """The name that begins the progress log's lines of a solve (the model's)."""
        return self.model

    def traits(self) -> dict:
        """What a method must handle to solve this problem (:meth:`Solver.accepts`): by default
        ``penalty`` (where the model has one), ``weighted`` (sample weights other than ones) and
        ``kernel`` (a kernel problem)."""
        data = getattr(self, "data", None)
        return {"penalty": getattr(self, "penalty", "l2"),
                "weighted": bool(getattr(data, "weighted", False)),
                "kernel": getattr(self, "kernel", None) is not None}

    @classmethod
    def from_catalog(cls, formulation: str, options: dict, lam: float, data):
        """The problem of a catalog entry: its formulation (one of its model's
        ``formulations``; a dual is answered by its primal), its options (``penalty``,
        ``scaling``, ``p``, ``loss``, kernel options...: its ``catalog_options``; CVXPY-only
        ones such as ``form`` are ignored), its lambda in its own scaling, and the instance's
        data. A formulation its model does not answer is a ValueError."""
        from .registry import model

        known = model(cls.model).formulations
        if formulation not in known:
            raise ValueError(f"formulation must be one of {list(known)} for {cls.__name__}, "
                             f"got {formulation!r}")
        return cls(data, lam, **cls._catalog_arguments(options))

    @classmethod
    def _catalog_arguments(cls, options: dict) -> dict:
        return {name: options[name] for name in cls.catalog_options if name in options}

    def objective(self, w) -> float:
        """The primal objective at ``w`` in the caller's scaling."""
        raise NotImplementedError

    def cvxpy_problem(self, form: str = "compact"):
        """The problem written in CVXPY (``form`` where the model has more than one)."""
        raise NotImplementedError(f"{type(self).__name__} has no CVXPY formulation")

    def _check_lambda(self, loss: str, penalty: str = "l2", *,
                      representable: bool = True) -> None:
        """Check ``data`` (a BipartiteData), ``lam`` > 0 and ``scaling``, and store ``lam``
        checked and ``lam_paper``, lambda in paper scaling (converted once, here, for the loss
        and penalty: :mod:`infpush_cvx.formulations.scaling`). ``representable``: refuse data
        and a lambda whose problem float64 cannot hold
        (:func:`~.engines.common.check_representable`; not for a kernel problem)."""
        if not isinstance(self.data, BipartiteData):
            raise TypeError(f"data must be a BipartiteData, got {type(self.data).__name__}")
        lam = check_scalar(self.lam, "lam", positive=True)
        check_choice(self.scaling, "scaling", _scaling.SCALINGS)
        lam_paper = float(_scaling.to_paper_lambda(lam, self.scaling, loss=loss, penalty=penalty,
                                                   m=self.data.wp_sum, n=self.data.wn_sum))
        if representable:
            check_representable(self.data, lam_paper, penalty)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "lam_paper", lam_paper)

    def _paper_only(self) -> None:
        """:meth:`_check_lambda` for a problem whose lambda has the paper scaling only (the
        loss's name then serves the checks only), and ``solved``: ``data`` with far-off columns
        shifted towards 0 (:func:`~.engines.common.centred`)."""
        check_choice(self.scaling, "scaling", ("paper",))
        self._check_lambda("ranksvm")
        object.__setattr__(self, "solved", centred(self.data))


@dataclass(frozen=True, kw_only=True)
class Solver:
    """Base of the methods: subclasses are frozen dataclasses whose fields are their options.

    Every method has ``tol`` (the target certified relative duality gap; ``status="optimal"``
    only when it holds), ``max_iter`` (None: the method's ``default_max_iter``) and
    ``verbose``. A subclass sets the class attributes ``name`` (its ``method=`` name),
    ``problem`` (the :class:`Problem` class it solves), ``certified`` (whether its status comes
    from a duality certificate), ``default_max_iter``, and the traits it handles
    (``penalties``, ``weights``, ``kernels``), adds its own option fields, checks them in
    :meth:`_check` and implements :meth:`_solve`.
    """

    tol: float = 1e-6
    max_iter: int | None = None
    verbose: bool = False

    name: ClassVar[str] = ""
    problem: ClassVar[type] = Problem
    certified: ClassVar[bool] = True
    default_max_iter: ClassVar[int] = 1000
    penalties: ClassVar[tuple] = ("l2",)
    weights: ClassVar[bool] = False
    kernels: ClassVar[bool] = True

    def __post_init__(self):
        check_scalar(self.tol, "tol", positive=True)
        if self.max_iter is not None:
            check_int(self.max_iter, "max_iter", minimum=1)
        check_bool(self.verbose, "verbose")
        self._check()

    def _check(self) -> None:
        """Check the subclass's own options (TypeError/ValueError naming each)."""

    @property
    def iterations(self) -> int:
        """The iteration cap of this solve: ``max_iter`` or the method's default."""
        return self.default_max_iter if self.max_iter is None else int(self.max_iter)

    def options(self) -> dict:
        """The options that differ from the defaults, as plain values (for results tables)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}

    @classmethod
    def accepts(cls, *, penalty: str = "l2", weighted: bool = False, kernel: bool = False,
                **traits: Any) -> str | None:
        """None when this method can solve a problem of these traits, else the reason why not
        (benchopt's ``skip``). The catalog asks it of a problem's options without building the
        problem."""
        if penalty not in cls.penalties:
            return f"method {cls.name!r} solves the {'/'.join(cls.penalties)} penalty only"
        if weighted and not cls.weights:
            return f"method {cls.name!r} does not support sample weights (wp, wn)"
        if kernel and not cls.kernels:
            return f"method {cls.name!r} does not solve kernel problems"
        return None

    def supports(self, problem) -> str | None:
        """None when this method can solve ``problem``, else the reason why not."""
        if not isinstance(problem, self.problem):
            return (f"method {self.name!r} solves {self.problem.__name__}, got "
                    f"{type(problem).__name__}")
        return self.accepts(**problem.traits())

    def solve(self, problem: Problem, warm_start=None,
              deadline: Deadline | float | None = None) -> SolverResult:
        """Solve ``problem``; ``warm_start`` is a previous :class:`SolverResult` (or the
        method's own start: a weight vector, a dual array); ``deadline`` a
        :class:`~.engines.deadline.Deadline` or seconds (None: no limit), counted from this
        call when given as seconds. A problem the method cannot solve is a ValueError naming
        why; a solve never raises for a numerical failure (its status says so)."""
        deadline = as_deadline(deadline)
        reason = self.supports(problem)
        if reason is not None:
            raise ValueError(reason)
        with verbose_logging(solver_log, self.verbose):  # (shown when verbose: _logging)
            result = self._solve(problem, warm_start, deadline)
            log_summary(problem.log_name, result)
        return result

    def _solve(self, problem, warm_start, deadline: Deadline) -> SolverResult:
        raise NotImplementedError

    def _log_start(self, problem, data, detail: str = "") -> None:
        """The first line of a solve's progress log: the model and this method (``detail``
        after its name), the sizes of ``data``, lambda in paper scaling, tol and max_iter."""
        log_progress(f"{problem.log_name} {self.name}{detail}: {data.m} positives, {data.n} "
                     f"negatives, {data.d} features, lambda {problem.lam_paper:.4g} in paper "
                     f"scaling, tol {self.tol:g}, max_iter {self.iterations}")

    def _judged(self, status: str, gap, message: str, roundoff=None) -> tuple[str, str]:
        """``(status, message)`` with the status judged by the certified ``gap`` against
        ``tol`` and its round-off bound (:func:`~.result.status_for_gap`); a
        "numerical_error" says why."""
        status = status_for_gap(status, gap, self.tol, roundoff)
        if status == "numerical_error":
            message = numerical_error_message(gap, roundoff)
        return status, message

    def _result(self, deadline: Deadline, **fields) -> SolverResult:
        """The :class:`SolverResult` of this method's solve (``fields``), timed at ``deadline``;
        it warns, at the caller's line, when the solve stopped short
        (:func:`~.result.warn_if_not_converged`)."""
        result = SolverResult(time=deadline.elapsed(), method=self.name, **fields)
        # + 1: the warning is raised one call down, in warn_if_not_converged
        warn_if_not_converged(result, stacklevel=caller_stacklevel() + 1)
        return result


def record(history: dict, **row) -> None:
    """Append one row to ``history`` (a solve's record: one list per column)."""
    for key, value in row.items():
        history.setdefault(key, []).append(value)


def data_size(*arrays) -> int:
    """The entries ``arrays`` store (a sparse one's nonzeros): the size by which the CVXPY
    backend decides to solve in a child process."""
    return sum(int(X.nnz) if hasattr(X, "nnz") else int(X.size) for X in arrays)


def cvxpy_message(cvxpy_status: str, status: str, gap, message: str) -> str:
    """The message of a CVXPY answer whose certified status is ``status``: why a claimed
    optimum is not "optimal", else CVXPY's own ``message``."""
    if status == "unverified":
        return "CVXPY gave no finite multipliers: its answer could not be certified"
    if status == "stalled" and cvxpy_status == "optimal":
        return (f"CVXPY reported 'optimal', but the certified relative gap at its point is "
                f"{gap:.3g}")
    return message


@dataclass(frozen=True, kw_only=True)
class CVXPYMethod(Solver):
    """A method that solves the problem's CVXPY formulation through
    :mod:`~.engines.cvxpy_backend` (statuses, the time limit, a child process for a large
    problem) and certifies the answer with the project's certificate. ``builder`` names the
    formulation's factory as ``"module:function"``: imported where the problem is built, so an
    isolated solve does not import CVXPY in this process. ``solver``: the CVXPY solver's name
    (None: the method's default)."""

    solver: str | None = None

    name: ClassVar[str] = "cvxpy"
    default_max_iter: ClassVar[int] = 1
    builder: ClassVar[str] = ""

    def _check(self) -> None:
        if self.solver is not None and not isinstance(self.solver, str):
            raise TypeError(f"solver must be a CVXPY solver name or None, got "
                            f"{type(self.solver).__name__}")

    def _cvxpy(self, args: tuple, kwargs: dict, *, solver, options: dict, deadline: Deadline,
               size: int):
        """``(outcome, info)``: the backend's :class:`~.engines.cvxpy_backend.Outcome` of
        ``builder(*args, **kwargs)`` and the result's ``info`` (CVXPY's status and value, the
        solver, its options and times, whether it ran in a child process)."""
        from .engines import cvxpy_backend

        out = cvxpy_backend.solve(self.builder, args, kwargs, solver=solver, options=options,
                                  deadline=deadline, verbose=self.verbose, size=size)
        defaults = {"solver": solver, "solve_time": None, "solver_options": options,
                    "stage_times": None, "isolated": False}
        info = {"cvxpy_status": out.cvxpy_status, "cvxpy_value": out.value,
                **{key: out.info.get(key, default) for key, default in defaults.items()}}
        return out, info

    def _start(self, problem, warm_start) -> None:
        """No warm start: a TypeError naming the model's methods that take one."""
        if warm_start is not None:
            from .registry import model

            others = " or ".join(repr(method.name) for method in model(problem.model).methods
                                 if method.name != self.name)
            raise TypeError(f"warm_start is used only by method {others}, not by "
                            f"method='cvxpy'")

    @staticmethod
    def _answer(out, solver, d: int) -> tuple:
        """``(w, status, message)`` of the backend's outcome ``out``; a solve that gave no point
        has NaN weights (length ``d``), "time_limit" or "failed", and its cause."""
        if out.has_point:
            return out.values["w"].ravel(), out.status, out.message
        from .engines.cvxpy_backend import failure_message

        status = "time_limit" if out.status == "time_limit" else "failed"
        return np.full(d, np.nan), status, failure_message(out, solver)
