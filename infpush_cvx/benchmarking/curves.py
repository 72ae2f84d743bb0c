"""Convergence curves of the project's solvers: one row per recorded iteration.

The shape of benchopt's results: ``stop_val`` numbers the records of a solve (1, 2, ...), and
every row has the ``objective``, the ``gap`` and the ``time`` (seconds since the solve started)
at that record, plus whatever else the method records (``mu``, ``tau``, ``working_negatives``,
...). Values a method does not record are missing (None), never invented. The rows come from
``SolverResult.history`` (a dict of per-iteration lists, which may have different lengths: a
method can record its step after the objective).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

#: Columns every curve row has, in this order (method-specific columns follow).
CURVE_COLUMNS = ["stop_val", "objective", "gap", "time"]


def _plain(value):
    """NumPy scalars as Python numbers (JSON- and Parquet-friendly), others as they are."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, numbers.Number)) or value is None:
        return value
    return str(value)


def curve_rows(history: dict) -> list[dict]:
    """The records of ``history`` as rows ``{"stop_val": k, "objective", "gap", "time", ...}``,
    ``k`` from 1; the lists of ``history`` are read position by position, a shorter list leaving
    None in its column. Entries that are not lists (scalars) are left out."""
    columns = {str(k): list(v) for k, v in (history or {}).items()
               if isinstance(v, (list, tuple, np.ndarray))}
    length = max((len(v) for v in columns.values()), default=0)
    rows = []
    for k in range(length):
        row = {"stop_val": k + 1, "objective": None, "gap": None, "time": None}
        for name, values in columns.items():
            key = name if name != "stop_val" else "recorded_stop_val"
            row[key] = _plain(values[k]) if k < len(values) else None
        rows.append(row)
    return rows


def curves_frame(rows: list[dict]) -> pd.DataFrame:
    """Curve rows (each with its task's ``problem``, ``solver``, ``repeat``, ...) as one table,
    ``CURVE_COLUMNS`` after the task columns; numeric columns as floats."""
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for col in ("objective", "gap", "time"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["stop_val"] = df["stop_val"].astype(int)
    for col in df.columns:
        if df[col].dtype == object:  # mixed records (None beside numbers, or text): as text
            values = df[col].dropna()
            if len(values) and all(isinstance(v, numbers.Number) for v in values):
                df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
            else:
                df[col] = df[col].map(lambda v: None if v is None else str(v))
    return df
