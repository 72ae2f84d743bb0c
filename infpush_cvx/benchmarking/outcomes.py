"""The outcome of a row of a results table: solved, suboptimal, disagrees or failed.

A row is "solved" when it agrees with its stored value (or, without one, is within its
tolerance), "disagrees" when it claims a certified answer the stored value contradicts,
"failed" when it gave no answer to trust, and "suboptimal" otherwise (a fixed budget that ran
out). The main job's exit status (:func:`exit_status`) and every summary read these.
"""

from __future__ import annotations

import pandas as pd

#: Statuses that claim a certified answer: the project's certified statuses, CVXPY's "optimal",
#: and CVXPY's claims that the (feasible, bounded) problem is infeasible or unbounded.
CLAIMS = ("optimal", "degenerate_optimal", "infeasible", "unbounded")
#: Statuses of a solve that gave no answer to trust, besides those of :func:`broken` rows.
FAILURES = ("numerical_error", "failed", "timeout", "interrupted", "infeasible_inaccurate",
            "unbounded_inaccurate", "solver_error")
#: The outcomes of a row, in the summary's order.
OUTCOMES = ("solved", "suboptimal", "disagrees", "failed")


def broken(status) -> bool:
    """Whether a row's status says the run could not solve: an exception in the solve
    (``"error..."``), a worker that died, a Dask task that failed or was lost."""
    status = str(status)
    return status.startswith(("error", "worker_died", "dask_"))


def outcome(row) -> str:
    """The outcome of one row (a mapping with ``status``, ``agrees``, ``rel_error``, ``rtol``,
    ``objective``): one of :data:`OUTCOMES`, as the module docstring defines them."""
    status = str(row.get("status", ""))
    agrees = row.get("agrees")
    if not _missing(agrees) and bool(agrees):
        return "solved"
    if status in CLAIMS:
        return "disagrees"
    if broken(status) or status.split(":")[0] in FAILURES or _missing(row.get("objective")):
        return "failed"
    rel, rtol = row.get("rel_error"), row.get("rtol")
    if not _missing(rel) and not _missing(rtol) and float(rel) <= float(rtol):
        return "solved"
    return "suboptimal"


def _missing(value) -> bool:
    """None, NaN or pandas' NA (an empty field of a table)."""
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def outcomes(df: pd.DataFrame) -> pd.Series:
    """:func:`outcome` of every row of a results table."""
    return pd.Series([outcome(row) for row in df.to_dict("records")], index=df.index,
                     dtype=object)


def exit_status(df: pd.DataFrame) -> int:
    """1 when a row disagrees with its stored value or could not be solved (:func:`broken`),
    0 otherwise (suboptimal answers of fixed budgets and non-certified statuses included)."""
    return int(bool((outcomes(df) == "disagrees").any() or df["status"].map(broken).any()))
