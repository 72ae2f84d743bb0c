"""The CVXPY solvers the project compares, with their options and agreement tolerances.

Each solver owns its option names, the relative tolerance to which its answer is expected to
agree with a stored reference value, the problem classes it is run on (:func:`check_handles`,
used by every entry point: ``check``, ``bench``, ``solve``) and the name of its own time-limit
option. Reference values themselves come from Clarabel with the tight ``REFERENCE_OPTIONS`` and
are cross-checked by a second solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp

from ._validation import check_choice


@dataclass(frozen=True)
class SolverSpec:
    """A CVXPY solver: its name, the options used for comparisons, its agreement tolerance, the
    problem classes it is run on and the name of its time-limit option."""

    name: str
    options: dict = field(default_factory=dict)
    rtol: float = 1e-6
    #: Problem classes the solver is run on ("LP", "QP", "SOCP"): see ``HIGHS`` below.
    classes: tuple = ("LP", "QP", "SOCP")
    #: The solver's own option for a wall-clock limit in seconds; None when it has none (ECOS).
    time_limit_option: str | None = None

    def handles(self, problem_class: str) -> bool:
        """Whether the solver is run on problems of ``problem_class``."""
        return problem_class in self.classes

    def solve_options(self, time_limit: float | None = None) -> dict:
        """The comparison options, plus ``time_limit`` seconds under the solver's own option name
        when it has one (ignored otherwise: bound such a solve from outside, in a process)."""
        if time_limit is None or self.time_limit_option is None:
            return dict(self.options)
        return {**self.options, self.time_limit_option: float(time_limit)}


SOLVERS = {
    "CLARABEL": SolverSpec("CLARABEL", {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9,
                                        "tol_feas": 1e-9}, rtol=1e-6,
                           time_limit_option="time_limit"),
    # ECOS at its default tolerances, 1e-8: at 1e-9 it can stop on an "unreliable search
    # direction" with status optimal_inaccurate (ranksvm_planted_m_paper_direct, ECOS 2.0.14);
    # at 1e-8 its largest relative error on the catalog QPs was 2.5e-10. It has no time limit;
    # max_iters bounds its number of (interior-point) iterations.
    "ECOS": SolverSpec("ECOS", {"abstol": 1e-8, "reltol": 1e-8, "feastol": 1e-8,
                                "max_iters": 500}, rtol=1e-6),
    # SCS is a first-order method: with eps 1e-8 its largest relative error on the catalog was
    # 6e-8 (CVXPY 1.9.3, SCS 3.3.1), so it is held to a looser 1e-5.
    "SCS": SolverSpec("SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000},
                      rtol=1e-5, time_limit_option="time_limit_secs"),
    # HiGHS is run on the LPs only: through CVXPY 1.9.3 its QP path reports "unbounded" on the
    # (bounded) l2 Infinite Push primal, or does not return at all (the 20 x 30 x 5
    # ip_l2_planted_s_paper_compact ran for more than 300 s).
    "HIGHS": SolverSpec("HIGHS", {}, rtol=1e-6, classes=("LP",), time_limit_option="time_limit"),
}

#: Options of the high-accuracy solve that produces stored reference values.
REFERENCE_SOLVER = "CLARABEL"
REFERENCE_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                     "tol_ktratio": 1e-8, "max_iter": 500}
#: Second solver used to cross-check a reference value, by problem class.
CROSS_CHECK = {"LP": "HIGHS", "QP": "ECOS", "SOCP": "ECOS"}
#: Relative disagreement between the reference solve and its cross-check that is an error.
CROSS_CHECK_RTOL = 1e-6


def installed() -> list[str]:
    """The project's comparison solvers that are installed, in a fixed order."""
    available = set(cp.installed_solvers())
    return [name for name in SOLVERS if name in available]


def spec(name: str) -> SolverSpec:
    """The :class:`SolverSpec` of a solver name (case-insensitive)."""
    name = str(name).upper()
    check_choice(name, "solver", SOLVERS)
    if name not in cp.installed_solvers():
        raise ValueError(f"solver {name!r} is not installed; installed: {installed()}")
    return SOLVERS[name]


def check_handles(name: str, problem_class: str, problem_id: str | None = None) -> SolverSpec:
    """The :class:`SolverSpec` of ``name``; ValueError naming the solver and the class unless the
    solver is run on ``problem_class`` problems (the one table every entry point consults)."""
    solver = spec(name)
    if not solver.handles(problem_class):
        what = f"{problem_id!r} is a {problem_class}" if problem_id else \
            f"{problem_class} problems"
        raise ValueError(f"solver {solver.name} is not run on {problem_class} problems ({what}); "
                         f"it is run on {', '.join(solver.classes)} problems only")
    return solver


def relative_error(value: float, reference: float) -> float:
    """``|value - reference| / max(|reference|, 1e-12)`` (inf when value is None or not finite)."""
    if value is None:
        return float("inf")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return float("inf")
    return abs(value - reference) / max(abs(reference), 1e-12)
