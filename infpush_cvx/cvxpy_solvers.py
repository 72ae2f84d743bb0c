"""The CVXPY solvers the project compares, with their options and agreement tolerances.

Each solver owns its option names and the relative tolerance to which its answer is expected to
agree with a stored reference value. Reference values themselves come from Clarabel with the
tight ``REFERENCE_OPTIONS`` and are cross-checked by a second solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp

from ._validation import check_choice


@dataclass(frozen=True)
class SolverSpec:
    """A CVXPY solver: its name, the options used for comparisons, its agreement tolerance."""

    name: str
    options: dict = field(default_factory=dict)
    rtol: float = 1e-6
    #: Problem classes the solver is run on ("LP", "QP", "SOCP"): see ``HIGHS`` below.
    classes: tuple = ("LP", "QP", "SOCP")


SOLVERS = {
    "CLARABEL": SolverSpec("CLARABEL", {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9,
                                        "tol_feas": 1e-9}, rtol=1e-6),
    # ECOS at its default tolerances, 1e-8: at 1e-9 it can stop on an "unreliable search
    # direction" with status optimal_inaccurate (ranksvm_planted_m_paper_direct, ECOS 2.0.14);
    # at 1e-8 its largest relative error on the catalog QPs was 2.5e-10.
    "ECOS": SolverSpec("ECOS", {"abstol": 1e-8, "reltol": 1e-8, "feastol": 1e-8,
                                "max_iters": 500}, rtol=1e-6),
    # SCS is a first-order method: with eps 1e-8 its largest relative error on the catalog was
    # 6e-8 (CVXPY 1.9.3, SCS 3.3.1), so it is held to a looser 1e-5.
    "SCS": SolverSpec("SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000},
                      rtol=1e-5),
    # HiGHS is run on the LPs only: through CVXPY 1.9.3 its QP path reports "unbounded" on the
    # (bounded) l2 Infinite Push primal.
    "HIGHS": SolverSpec("HIGHS", {}, rtol=1e-6, classes=("LP",)),
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


def relative_error(value: float, reference: float) -> float:
    """``|value - reference| / max(|reference|, 1e-12)`` (inf when value is None or not finite)."""
    if value is None:
        return float("inf")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return float("inf")
    return abs(value - reference) / max(abs(reference), 1e-12)
