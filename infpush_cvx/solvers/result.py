"""The result every first-order solver of the project returns."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np


class ConvergenceWarning(UserWarning):
    """A solve stopped before its certificate held (the result's ``status`` says why)."""

#: Status values. "optimal" only when the method's certificate (duality gap or optimality check)
#: holds at the requested tolerance; "max_iter"/"time_limit" when it stopped early without it;
#: "unverified" for an answer the project has no certificate for (an external solver's point the
#: project's own certificate cannot check); "numerical_error" when the certificate itself failed
#: (a duality gap below minus its round-off bound: the numbers cannot be trusted).
STATUSES = ("optimal", "max_iter", "time_limit", "stalled", "degenerate_optimal", "unverified",
            "numerical_error", "failed")
#: The statuses that claim a certificate (``SolverResult.converged``).
CERTIFIED = ("optimal", "degenerate_optimal")
#: The statuses of a solve that stopped on a budget or for lack of progress.
EARLY_STOPS = ("max_iter", "time_limit", "stalled")


def relative_gap(primal: float, dual: float) -> float:
    """The relative duality gap of every result: ``(P - D) / |P|``, and ``P - D`` when ``P = 0``.

    ``P`` is the primal objective at the returned point and ``D`` a certified lower bound on the
    optimum (the dual value of a feasible dual point), so ``P - D >= P - P*``. A zero objective
    (a problem whose optimum is 0) has the absolute gap. NaN when either value is NaN.
    """
    primal, dual = float(primal), float(dual)
    scale = abs(primal) if primal != 0 else 1.0
    return (primal - dual) / scale


def roundoff_bound(n_terms: int, magnitude: float, scale: float) -> float:
    """A bound on the round-off of a relative gap: ``n_terms * eps * magnitude / scale``.

    ``magnitude`` is the sum of the absolute values of the terms the primal and dual values are
    summed from, ``n_terms`` the length of the longest chain of floating-point operations that
    accumulates them and ``scale`` the gap's divisor (``|P|``, or 1 when ``P = 0``, as in
    :func:`relative_gap`): the classical bound ``|fl(sum x_k) - sum x_k| <= (n - 1) eps
    sum |x_k|`` of recursive summation (Higham, "Accuracy and Stability of Numerical
    Algorithms", 2002, section 4.2), for every sum the gap is made of.
    """
    eps = float(np.finfo(np.float64).eps)
    with np.errstate(over="ignore"):
        return float(n_terms) * eps * float(magnitude) / (float(scale) if scale else 1.0)


def proves(gap, tol: float) -> bool:
    """Whether a computed relative ``gap`` proves an answer within ``tol``: ``-tol <= gap <=
    tol`` (False for NaN). Below ``-tol`` the gap's rounding error alone exceeds ``tol``."""
    return bool(-tol <= gap <= tol)


def status_for_gap(status: str, gap, tol: float, roundoff: float | None = None) -> str:
    """The status a result with certified ``gap`` may carry: never contradicting the gap.

    A certificate within ``tol`` of 0 turns an early stop into "optimal"; a claimed optimum whose
    gap is above ``tol`` (or NaN) becomes "stalled", and so does one whose gap is below ``-tol``:
    the exact gap is not negative, so its rounding error is larger than ``tol`` and the gap does
    not prove ``tol`` (a kernel route on columns offset by 1e4 called a gap of -3e-4 optimal). A
    gap below ``-roundoff`` (the bound of :func:`roundoff_bound` on its rounding error) is
    impossible in exact arithmetic: the certificate failed, and the status is "numerical_error"
    whatever the method claimed. Without a gap (``None``) the status stands; without a bound
    (``None``) a negative gap is not judged numerical_error.
    """
    if gap is None:
        return status
    if roundoff is not None and bool(gap < -roundoff):
        return "numerical_error"
    certified = proves(gap, tol)
    if certified and status in EARLY_STOPS:
        return "optimal"
    if not certified and status in CERTIFIED:
        return "stalled"
    return status


#: The history columns every result has, whatever its method.
HISTORY_KEYS = ("iteration", "objective", "gap", "time")


def complete_history(history: dict) -> dict:
    """A copy of ``history`` with every key of :data:`HISTORY_KEYS`: ``iteration`` numbered from
    1 and missing ``objective``, ``gap`` or ``time`` records as NaN, as long as the longest
    record (a method records its own extras besides them). A shorter record is padded with
    NaN at its start, since a figure of the step between iterations (a step size) has none
    before the first step: every record then has one value per row of :meth:`history_frame`."""
    out = {key: list(value) for key, value in (history or {}).items()}
    length = max((len(value) for value in out.values()), default=0)
    out.setdefault("iteration", list(range(1, length + 1)))
    for key in HISTORY_KEYS[1:]:
        out.setdefault(key, [])
    out = {key: [float("nan")] * (length - len(value)) + value for key, value in out.items()}
    return {**{key: out.pop(key) for key in HISTORY_KEYS}, **out}


@dataclass
class SolverResult:
    """Outcome of a solve.

    Attributes
    ----------
    w : ndarray
        The weights (``beta`` for Rank2Plan, and the kernel coefficients over the training rows
        ``[Xp; Xn]`` for a kernel Infinite Push or RankSVM; also available under that name).
    objective : float
        Primal objective recomputed from ``w`` in the requested scaling.
    gap : float or None
        Certified relative duality gap (or the method's certificate value); None when the method
        has none.
    status : str
        One of :data:`STATUSES`.
    iterations : int
    time : float
        Wall-clock seconds.
    history : dict of lists
        Per-iteration records, always with ``"iteration"``, ``"objective"``, ``"gap"`` and
        ``"time"`` (:data:`HISTORY_KEYS`; NaN where a method records no value) plus the method's
        own keys; ``history_frame()`` gives a DataFrame.
    dual : ndarray or None
        The dual variable, for warm starts.
    info : dict
        Method-specific extras.
    message : str
        Why the solve stopped, when it stopped before its certificate held.

    The scipy names ``x``, ``fun``, ``success``, ``nit`` (and ``message``) are aliases, so code
    written for ``scipy.optimize.OptimizeResult`` reads a result as it is.
    """

    w: np.ndarray
    objective: float
    gap: float | None
    status: str
    iterations: int
    time: float
    method: str = ""
    history: dict = field(default_factory=dict)
    dual: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    message: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {list(STATUSES)}, got {self.status!r}")
        self.history = complete_history(self.history)

    beta = property(lambda self: self.w, doc="The solution (the same array as ``w``).")
    # scipy.optimize.OptimizeResult's names for the same fields (``message`` is shared)
    x = property(lambda self: self.w,
                 doc="The solution, as ``OptimizeResult.x`` (the same array as ``w``).")
    fun = property(lambda self: self.objective,
                   doc="The objective at ``x``, as ``OptimizeResult.fun``.")
    success = property(lambda self: self.converged, doc="Whether the certificate holds, as "
                       "``OptimizeResult.success`` (``converged``).")
    nit = property(lambda self: self.iterations, doc="Iterations, as ``OptimizeResult.nit``.")

    @property
    def converged(self) -> bool:
        return self.status in CERTIFIED

    def history_frame(self):
        import pandas as pd
        return pd.DataFrame(self.history)

    def __repr__(self) -> str:
        gap = "None" if self.gap is None else f"{self.gap:.2e}"
        return (f"SolverResult(method={self.method!r}, status={self.status!r}, "
                f"objective={self.objective:.10g}, gap={gap}, iterations={self.iterations}, "
                f"time={self.time:.3g}s)")


def warn_if_not_converged(result: SolverResult, stacklevel: int = 3) -> None:
    """Emit a :class:`ConvergenceWarning` when ``result`` stopped without its certificate."""
    if not result.converged:
        gap = "none" if result.gap is None else f"{result.gap:.2e}"
        warnings.warn(f"{result.method}: stopped with status {result.status!r} (certified "
                      f"relative gap {gap}){': ' + result.message if result.message else ''}",
                      ConvergenceWarning, stacklevel=stacklevel)
