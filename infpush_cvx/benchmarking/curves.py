"""Convergence curves of the project's solvers: one row per recorded iteration.

The shape of benchopt's results: ``stop_val`` numbers the records of a solve (1, 2, ...), and
every row has the ``objective``, the ``gap`` and the ``time`` (seconds since the solve started)
at that record, plus whatever else the method records (``mu``, ``tau``, ``working_negatives``,
...). Values a method does not record are missing (None), never invented. The rows come from
``SolverResult.history`` (a dict of per-iteration lists, which may have different lengths: a
method can record its step after the objective).

A run saves its curves beside its results table, as ``<run>_curves.csv`` / ``.parquet``
(:func:`curves_path_of`, :func:`results_path_of`); :func:`load_curves` reads one back
(:func:`read_table`, the one reader of results and curves files, refusing a truncated one). The
figure benchopt users look at first is :func:`suboptimality_figure`: per problem, the relative
suboptimality against the stored optimal value (the results table's ``reference``),

    (objective - reference) / |reference|,

against the time since the solve started, on log axes. A value at or below
``SUBOPTIMALITY_FLOOR`` (an iterate at the stored value within round-off, or below it: an
infeasible iterate, or a stored value a little above the optimum) is drawn at the floor, and
the axis label says so.
"""

from __future__ import annotations

import io
import logging
import numbers
import os
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

#: Columns every curve row has, in this order (method-specific columns follow).
CURVE_COLUMNS = ["stop_val", "objective", "gap", "time"]
#: Columns a curves table needs for its figures (the task's, then the record's).
REQUIRED_COLUMNS = ("problem", "solver", "repeat", "stop_val", "objective", "time")
#: End of the name of a run's curves table: ``<run>_curves.csv`` beside ``<run>.csv``.
CURVES_SUFFIX = "_curves"
#: Smallest relative suboptimality drawn on a log axis; smaller (and negative) values are drawn
#: here. Below the stored values' own accuracy (about 1e-9), far above round-off.
SUBOPTIMALITY_FLOOR = 1e-12
#: Suffixes of the files of a table (results or curves).
TABLE_SUFFIXES = (".csv", ".parquet")


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
    return [{"stop_val": k + 1, **dict.fromkeys(CURVE_COLUMNS[1:]),
             **{"recorded_stop_val" if name == "stop_val" else name:
                _plain(values[k]) if k < len(values) else None
                for name, values in columns.items()}}
            for k in range(length)]


def curves_frame(rows: list[dict]) -> pd.DataFrame:
    """Curve rows (each with its task's ``problem``, ``solver``, ``repeat``, ...) as one table,
    ``CURVE_COLUMNS`` after the task columns; numeric columns as floats."""
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for col in CURVE_COLUMNS[1:]:
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


# -- files ------------------------------------------------------------------------------------

def is_curves_path(path) -> bool:
    """Whether ``path`` is named as a run's curves table (``<run>_curves.csv`` / ``.parquet``)."""
    path = Path(path)
    return path.suffix in TABLE_SUFFIXES and path.stem.endswith(CURVES_SUFFIX)


def _existing(stem: Path, prefer: str) -> Path | None:
    """``stem`` + ``prefer`` if that file exists, else the other table suffix's, else None."""
    candidates = (stem.with_name(stem.name + suffix) for suffix in (prefer, *TABLE_SUFFIXES))
    return next((path for path in candidates if path.is_file()), None)


def curves_path_of(results) -> Path | None:
    """The curves table saved beside results table ``results`` (``<run>_curves`` with the same
    suffix, else the other one), or None when there is none."""
    results = Path(results)
    stem = results.with_suffix("") if results.suffix in TABLE_SUFFIXES else results
    return _existing(stem.with_name(stem.name + CURVES_SUFFIX), results.suffix or ".parquet")


def results_path_of(curves) -> Path:
    """The results table beside curves table ``curves`` (``<run>.csv`` or ``.parquet``, the
    same suffix first). ValueError naming both when there is none: the suboptimality needs the
    stored values of the results table."""
    curves = Path(curves)
    stem = curves.with_name(curves.stem[:-len(CURVES_SUFFIX)])
    found = _existing(stem, curves.suffix)
    if found is None:
        raise ValueError(f"curves table {curves}: its results table {stem}.csv (or .parquet) "
                         f"does not exist; the figures need its stored values (reference)")
    return found


def load_curves(path) -> pd.DataFrame:
    """Read a curves table (``.csv`` or ``.parquet``, exactly the file named). ValueError naming
    the file when it is missing, cannot be parsed, or lacks a column of ``REQUIRED_COLUMNS``;
    ``objective`` and ``time`` are read as floats (a missing value is NaN)."""
    path = Path(path)
    if path.suffix not in TABLE_SUFFIXES:
        raise ValueError(f"curves table {str(path)!r}: expected a .csv or .parquet file")
    df = read_table(path, "curves", REQUIRED_COLUMNS)
    for col in ("objective", "time"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df


def read_table(path: Path, name: str, required, *, partial: bool = False) -> pd.DataFrame:
    """The table of file ``path`` (Parquet by its suffix, else CSV), a ``name`` table
    ("results", "curves"). ValueError naming the file when it is missing or not a regular file,
    cannot be parsed, lacks a column of ``required``, or is a CSV file that does not end with a
    line break (every CSV writer here ends with one: the file is truncated). ``partial``: a
    ``.partial`` file, whose last line a kill may have cut; that line is left out, with a
    warning."""
    what = "table" if name == "results" else f"{name} table"
    if not path.is_file():
        if os.path.exists(path):
            raise ValueError(f"{what} {path} is not a regular file")
        raise ValueError(f"{what} {str(path)!r} does not exist")
    if path.suffix != ".parquet":
        data = path.read_bytes()
        if data and not data.endswith((b"\n", b"\r")):
            if not partial:
                raise ValueError(f"{what} {path} does not end with a line break; is the file "
                                 f"truncated?")
            log.warning("%s: its last line was cut (the run was killed while writing it); "
                        "left out", path)
            data = data[:data.rfind(b"\n") + 1]
    try:
        df = pd.read_parquet(path) if path.suffix == ".parquet" else \
            pd.read_csv(io.BytesIO(data))
    except (ValueError, OSError, ImportError) as exc:  # parser, encoding, Arrow errors
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        kind = "PARQUET" if path.suffix == ".parquet" else "CSV"
        raise ValueError(f"{what} {path} cannot be read as {kind}: {reason}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"{what} {path} is not a {name} table: no column(s) {missing}")
    return df


# -- suboptimality ------------------------------------------------------------------------------

def relative_suboptimality(objective, reference):
    """``(objective - reference) / max(|reference|, 1e-12)``: signed (negative below the stored
    value), with the denominator of the results table's ``rel_error``."""
    objective = np.asarray(objective, dtype=float)
    return (objective - reference) / max(abs(float(reference)), 1e-12)


def stored_values(results: pd.DataFrame) -> pd.Series:
    """Per problem, the stored optimal value its rows were compared with (the first non-missing
    ``reference``); problems without one (a stale record, a generated instance) are left out."""
    reference = pd.to_numeric(results["reference"], errors="coerce")
    return reference.groupby(results["problem"].astype(str)).first().dropna()


def _points(frame: pd.DataFrame, reference: float):
    """``(time, suboptimality, finite)`` of the rows of ``frame`` (curve records or results)."""
    t = pd.to_numeric(frame["time"], errors="coerce").to_numpy(dtype=float)
    y = relative_suboptimality(pd.to_numeric(frame["objective"], errors="coerce"), reference)
    return t, y, np.isfinite(t) & np.isfinite(y) & (t > 0)


def suboptimality_figure(curves: pd.DataFrame, results: pd.DataFrame, problem: str, *,
                         styles: dict | None = None):
    """The relative suboptimality of every solver on ``problem`` against time, log axes, as a
    :class:`matplotlib.figure.Figure` (no pyplot, no backend selected).

    A solver with a curve is a line through its records (every repeat, one legend entry); a
    solver of the results table without one (CVXPY solvers record no iterations) is a single
    point: its final answer at the task's whole ``time`` (a hollow marker when it does not agree
    with the stored value). ``styles``: ``{solver: style}`` (default: the results table's,
    :func:`.reports.solver_styles`). ValueError when ``problem`` has no stored value.
    """
    from matplotlib.ticker import LogLocator
    from .reports import _LegendBelow, series_styles, solver_styles

    problem = str(problem)
    reference = stored_values(results).get(problem)
    if reference is None:
        raise ValueError(f"problem {problem!r} has no stored value in the results table: no "
                         f"suboptimality to draw")
    styles = solver_styles(results) if styles is None else styles
    mine = curves[curves["problem"].astype(str) == problem]
    rows = results[results["problem"].astype(str) == problem]
    traced = sorted(mine["solver"].astype(str).unique())
    single = sorted(set(rows["solver"].astype(str)) - set(traced))
    floor = SUBOPTIMALITY_FLOOR
    notes = [f"Stored value of {problem}: {reference:.12g}. Lines: the project solvers' records "
             f"(time since the solve started). Points: the final answer of a solver that records "
             f"no iterations, at the task's whole time (CVXPY: compilation + solve); hollow: "
             f"it does not agree with the stored value."]
    repeats = int(mine.groupby("solver")["repeat"].nunique().max()) if len(mine) else 1
    if repeats > 1:
        notes.append(f"Every repeat is drawn (up to {repeats} lines per solver).")
    # per solver, its (time, suboptimality, selected points, plot keywords): a line per repeat
    # of a curve; a solver without one, its final answers (filled) and those that disagree
    parts = {}
    for (solver, _), run in mine.groupby([mine["solver"].astype(str), "repeat"], sort=True):
        t, y, keep = _points(run.sort_values("stop_val"), reference)
        parts.setdefault(solver, []).append(
            (t, y, keep, {"lw": 1.5, "ms": 5, "markevery": max(1, int(keep.sum()) // 8)}))
    for solver in single:
        mine_rows = rows[rows["solver"].astype(str) == solver]
        t, y, keep = _points(mine_rows, reference)
        agrees = mine_rows["agrees"].astype(bool).to_numpy()
        color = styles.get(solver, series_styles(1)[0])["color"]
        parts[solver] = [(t, y, keep & (agrees != hollow), {
            "ls": "none", "ms": 8, "mew": 1.6, "mfc": "none" if hollow else color})
            for hollow in (False, True)]
    blank = [s for s in parts if not any(sel.any() for _, _, sel, _ in parts[s])]
    if blank:
        notes.append(f"No objective with a time, not drawn: {', '.join(blank)}.")
    layout = _LegendBelow(traced + [f"{s} (final answer)" for s in single],
                          f"{problem}: suboptimality against time", notes)
    ax = layout.ax
    for solver, drawn in parts.items():
        label = solver if solver in traced else f"{solver} (final answer)"
        for t, y, sel, keywords in drawn:
            if sel.any():
                ax.plot(t[sel], np.maximum(y[sel], floor), label=label, **keywords,
                        **styles.get(solver, series_styles(1)[0]))
                label = None  # one legend entry per solver
    ax.set(xscale="log", yscale="log", xlabel="time (s, log scale)")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=15))
    ax.axhline(floor, color="0.6", lw=0.8, ls=":")
    ax.set_ylabel(f"(objective − stored value) / |stored value|\n(log scale; below {floor:g} "
                  f"or negative: drawn at {floor:g})", fontsize=9)
    ax.grid(alpha=0.3, which="major")
    return layout.finish("solver")
