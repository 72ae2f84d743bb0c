"""The CVXPY solvers the project compares: which problems each takes, its options and limits.

Any solver CVXPY reports as installed (``cvxpy.installed_solvers()``) can be compared. The
problem classes a solver is run on ("LP", "QP", "SOCP", "EXP") come from CVXPY's own description
of its interfaces, less explicit exceptions (:func:`~infpush_cvx.solvers.engines.cvxpy_backend.
run_classes`: HiGHS on QPs).

Each solver has a :class:`SolverSpec`: the options used for comparisons, the relative tolerance
to which its answer must agree with a stored reference value, the problem classes it is run on
(:func:`check_handles`, used by every entry point: ``check``, ``bench``, ``solve``) and how its
own wall-clock limit is set (the backend's ``TIME_LIMIT_OPTIONS``). Solvers without a tuned entry in
``TUNED`` run at CVXPY's defaults and are held to ``DEFAULT_RTOL``. A solver without a
time-limit option must be bounded from outside (a worker process killed at the limit).

Every solve here goes through :mod:`infpush_cvx.solvers.engines.cvxpy_backend` (:func:`solve`),
as the solvers' own ``method="cvxpy"`` and the rankers' do: one status map, one time-limit
handling, one account of a failure's cause.

:func:`comparison_set` is what ``check`` and ``bench`` run by default (the tuned solvers that are
installed); :func:`available` is every installed solver that takes at least one problem class.
Reference values themselves come from Clarabel with the tight ``REFERENCE_OPTIONS`` and are
cross-checked by a second solver.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace

import cvxpy as cp

from ..solvers.engines.cvxpy_backend import (EXCLUDED, PROBLEM_CLASSES, TIME_LIMIT_OPTIONS,
                                             Outcome, run_classes, solve_problem,
                                             with_time_limit)
from ..solvers.engines.deadline import Deadline

#: What "all" solvers means on the command line.
ALL = "all"

#: Relative agreement tolerance of a solver run at CVXPY's default options.
DEFAULT_RTOL = 1e-6

#: Options under which CVXPY is asked to call every solver (recorded with each result).
CVXPY_SETTINGS = {"verbose": False}


@dataclass(frozen=True)
class SolverSpec:
    """A CVXPY solver: its name, the options used for comparisons, its agreement tolerance, the
    problem classes it is run on and its time-limit option (see ``TIME_LIMIT_OPTIONS``)."""

    name: str
    options: dict = field(default_factory=dict)
    rtol: float = DEFAULT_RTOL
    #: Problem classes the solver is run on ("LP", "QP", "SOCP").
    classes: tuple = PROBLEM_CLASSES
    #: The solver's own wall-clock limit option (a name, or ``(dict option, key)``); None when it
    #: has none known.
    time_limit_option: str | tuple | None = None

    def handles(self, problem_class: str) -> bool:
        """Whether the solver is run on problems of ``problem_class``."""
        return problem_class in self.classes

    @property
    def has_time_limit(self) -> bool:
        """Whether the solver stops by itself at a time limit (else: bound it from outside)."""
        return self.time_limit_option is not None

    def solve_options(self, time_limit: float | None = None) -> dict:
        """Keyword arguments of ``Problem.solve`` besides ``solver``: ``CVXPY_SETTINGS``, the
        comparison options and ``time_limit`` seconds under the solver's own option when it has
        one (ignored otherwise: bound such a solve from outside, in a process).

        A fresh deep copy every call: CVXPY interfaces may edit the dictionaries they are given
        (SCIPY pops ``method`` from ``scipy_options``)."""
        options = {**CVXPY_SETTINGS, **copy.deepcopy(self.options)}
        if time_limit is None or self.time_limit_option is None:
            return options
        return with_time_limit(options, self.time_limit_option, time_limit)

    def describe(self, time_limit: float | None = None) -> dict:
        """Everything that determines how the solver is called, for provenance records."""
        return {"solver": self.name, "options": self.solve_options(time_limit),
                "rtol": self.rtol, "classes": list(self.classes),
                "time_limit_option": (list(self.time_limit_option)
                                      if isinstance(self.time_limit_option, tuple)
                                      else self.time_limit_option),
                "time_limit": time_limit}


def _spec(name: str, options: dict | None = None, rtol: float = DEFAULT_RTOL) -> SolverSpec:
    return SolverSpec(name, dict(options or {}), rtol, classes=run_classes(name),
                      time_limit_option=TIME_LIMIT_OPTIONS.get(name))


#: Solvers with options tuned for the catalog; the default comparison set (when installed).
TUNED = {
    "CLARABEL": _spec("CLARABEL", {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9}),
    # ECOS at its default tolerances, 1e-8: at 1e-9 it can stop on an "unreliable search
    # direction" with status optimal_inaccurate (ranksvm_planted_m_paper_direct, ECOS 2.0.14);
    # at 1e-8 its largest relative error on the catalog QPs was 2.5e-10. It has no time limit;
    # max_iters bounds its number of (interior-point) iterations.
    "ECOS": _spec("ECOS", {"abstol": 1e-8, "reltol": 1e-8, "feastol": 1e-8, "max_iters": 500}),
    # SCS is a first-order method: with eps 1e-8 its largest relative error on the catalog was
    # 6e-8 (CVXPY 1.9.3, SCS 3.3.1), so it is held to a looser 1e-5.
    "SCS": _spec("SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000}, rtol=1e-5),
    "HIGHS": _spec("HIGHS"),
}

#: Options that replace a solver's comparison options on one problem class. Clarabel 0.11's
#: exponential cones stop at "optimal_inaccurate" when asked for 1e-9 or 1e-10 on several P-Norm
#: Push problems (pnorm_planted_m_1, and at other lambdas pnorm_planted_s_16), with values within
#: 2e-12 of the certified Newton optimum; at 1e-8 every catalog P-Norm Push problem is "optimal".
CLASS_OPTIONS = {("CLARABEL", "EXP"): {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}}

#: Options for installed solvers outside the default comparison set, used when one is named.
EXTRA_OPTIONS = {
    # OSQP (ADMM) with polishing: every core QP to within 1e-8 of its stored value (OSQP
    # 1.1.3); on the LPs it stops at max_iter (user_limit) 1e-7 to 2e-2 away, so it is not in
    # the default set.
    "OSQP": ({"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 200_000, "polishing": True},
             DEFAULT_RTOL),
    # SciPy's linprog with HiGHS (bundled with SciPy, no banner).
    "SCIPY": ({"scipy_options": {"method": "highs"}}, DEFAULT_RTOL),
}


#: Options of the high-accuracy solve that produces stored reference values.
REFERENCE_SOLVER = "CLARABEL"
REFERENCE_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                     "tol_ktratio": 1e-8, "max_iter": 500}
#: The reference options on a problem class where Clarabel cannot reach REFERENCE_OPTIONS (see
#: CLASS_OPTIONS); such values are cross-checked as usual, and the P-Norm Push ones are also
#: re-solved by the certified Newton method in ``reference verify``.
REFERENCE_CLASS_OPTIONS = {"EXP": {**REFERENCE_OPTIONS, "tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8,
                                   "tol_feas": 1e-8}}


def reference_options(problem_class: str) -> dict:
    """The options of the reference solve of a problem of ``problem_class``."""
    return copy.deepcopy(REFERENCE_CLASS_OPTIONS.get(problem_class, REFERENCE_OPTIONS))


#: Second solver used to cross-check a reference value, by problem class.
CROSS_CHECK = {"LP": "HIGHS", "QP": "ECOS", "SOCP": "ECOS", "EXP": "ECOS"}
#: Relative disagreement between the reference solve and its cross-check that is an error.
CROSS_CHECK_RTOL = 1e-6


def available() -> list[str]:
    """Every installed CVXPY solver that is run on at least one problem class, tuned ones
    first, then in CVXPY's order."""
    installed = [s for s in cp.installed_solvers() if run_classes(s)]
    return [s for s in TUNED if s in installed] + [s for s in installed if s not in TUNED]


def comparison_set() -> list[str]:
    """The default solvers of ``check`` and ``bench``: the ``TUNED`` ones that are installed."""
    installed = set(cp.installed_solvers())
    return [name for name in TUNED if name in installed]


def spec(name: str) -> SolverSpec:
    """The :class:`SolverSpec` of an installed CVXPY solver (name case-insensitive).

    ValueError naming the solver when CVXPY does not know it, it is not installed, or it takes
    none of the problem classes (an NLP-only solver)."""
    name = str(name).upper()
    if name in TUNED and name in cp.installed_solvers():
        return TUNED[name]
    from cvxpy.reductions.solvers import defines
    known = set(defines.SOLVER_MAP_CONIC) | set(defines.SOLVER_MAP_QP) | \
        set(getattr(defines, "SOLVER_MAP_NLP", {})) | set(cp.installed_solvers())
    if name not in known:
        raise ValueError(f"unknown solver {name!r}; expected one of {available()}")
    if not run_classes(name):
        raise ValueError(f"solver {name!r} takes none of the problem classes "
                         f"{list(PROBLEM_CLASSES)}; expected one of {available()}")
    if name not in cp.installed_solvers():
        raise ValueError(f"solver {name!r} is not installed; installed: {available()}")
    return _spec(name, *EXTRA_OPTIONS.get(name, ()))  # (options, rtol), else the defaults


def resolve(names) -> list[str]:
    """Solver names as given (case-insensitive; ``"all"`` is every :func:`available` solver),
    checked with :func:`spec`; None is the :func:`comparison_set`."""
    if names is None:
        return comparison_set()
    return list(dict.fromkeys(s for name in names for s in (
        available() if str(name).lower() == ALL else [spec(name).name])))


def check_handles(name: str, problem_class: str, problem_id: str | None = None) -> SolverSpec:
    """The :class:`SolverSpec` of ``name`` for ``problem_class`` problems (with the
    ``CLASS_OPTIONS`` of that class, if any); ValueError naming the solver and the class unless
    the solver is run on ``problem_class`` problems (the one table every entry point consults)."""
    solver = spec(name)
    solver = replace(solver, options={
        **solver.options, **CLASS_OPTIONS.get((solver.name, problem_class), {})})
    if not solver.handles(problem_class):
        what = f"{problem_id!r} is a {problem_class}" if problem_id else f"{problem_class} problems"
        reason = EXCLUDED.get(solver.name, {}).get(problem_class)
        why = f": {reason}" if reason else ""
        raise ValueError(f"solver {solver.name} is not run on {problem_class} problems ({what})"
                         f"{why}; it is run on {', '.join(solver.classes)} problems only")
    return solver


def solve(problem, solver_spec: SolverSpec, time_limit: float | None = None) -> Outcome:
    """``problem`` solved by the backend (:func:`~infpush_cvx.solvers.engines.cvxpy_backend.
    solve_problem`) with the CVXPY solver of ``solver_spec``, its comparison options and
    ``time_limit`` seconds (under the solver's own option, checked between the stages too)."""
    options = solver_spec.solve_options()
    verbose = options.pop("verbose", False)
    return solve_problem(problem, solver=solver_spec.name, options=options,
                         deadline=Deadline(time_limit), verbose=verbose)


def relative_error(value: float, reference: float) -> float:
    """``|value - reference| / max(|reference|, 1e-12)`` (inf when value is None or not finite)."""
    if value is None or not math.isfinite(value):
        return math.inf
    return abs(float(value) - reference) / max(abs(reference), 1e-12)
