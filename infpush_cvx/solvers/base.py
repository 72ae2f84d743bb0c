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
- **A model** (:class:`Model`): a problem class with its methods (the default first) and the
  catalog formulations it answers, declared once in the model's package and listed once in
  :mod:`infpush_cvx.solvers.registry`. The runner, ``reference verify``, the catalog and the
  rankers ask the registry what a model and its methods can do.

One :class:`~.engines.deadline.Deadline` flows from :meth:`Solver.solve` down to every stage and
external solver; ``solve`` takes it or a number of seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from .._validation import check_bool, check_int, check_scalar
from .engines.deadline import Deadline, as_deadline
from .result import SolverResult

__all__ = ["Model", "Problem", "Solver"]


class Problem:
    """Base of the problems: subclasses are frozen dataclasses that check their fields in
    ``__post_init__``.

    Class attributes a subclass sets: ``model`` (its :class:`Model`'s name) and
    ``problem_class`` (``"LP"``, ``"QP"``, ``"SOCP"`` or ``"EXP"``: the cone CVXPY needs).
    """

    model: ClassVar[str] = ""
    problem_class: ClassVar[str] = ""

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
        ``scaling``, ``p``, ``loss``, kernel options...; CVXPY-only ones such as ``form`` are
        ignored), its lambda in its own scaling, and the instance's data."""
        raise NotImplementedError

    def objective(self, w) -> float:
        """The primal objective at ``w`` in the caller's scaling."""
        raise NotImplementedError

    def cvxpy_problem(self, form: str = "compact"):
        """The problem written in CVXPY (``form`` where the model has more than one)."""
        raise NotImplementedError(f"{type(self).__name__} has no CVXPY formulation")


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
        return self._solve(problem, warm_start, deadline)

    def _solve(self, problem, warm_start, deadline: Deadline) -> SolverResult:
        raise NotImplementedError


@dataclass(frozen=True)
class Model:
    """A model as the registry knows it: its problem class, its methods (the default first),
    the method that certifies stored values, and the catalog formulations it answers (a dual is
    answered through its primal)."""

    name: str
    problem: type
    methods: tuple
    certified: type
    formulations: tuple = ()

    def __post_init__(self):
        if self.certified not in self.methods:
            raise ValueError(f"model {self.name!r}: its certified method is not one of its "
                             f"methods")

    @property
    def default(self) -> type:
        return self.methods[0]

    def method(self, name: str) -> type:
        """The method class called ``name``; ValueError listing the model's methods."""
        for cls in self.methods:
            if cls.name == name:
                return cls
        raise ValueError(f"method must be one of {[m.name for m in self.methods]} for "
                         f"{self.name}, got {name!r}")

    def method_names(self, **traits) -> tuple:
        """The names of the methods that accept a problem of ``traits``."""
        return tuple(cls.name for cls in self.methods if cls.accepts(**traits) is None)
