"""A benchmark run: catalog problems x solvers x repeats -> one tidy results table.

>>> from infpush_cvx.benchmarking import make_tasks, run_benchmark, save_results
>>> tasks = make_tasks(catalog.problem_ids("planted_s"), repeats=3)
>>> df = run_benchmark(tasks, executor="processes")     # one row per task
>>> save_results(df, "results/bench")                   # results/bench.csv and .parquet
>>> df = load_results("results/bench.csv")              # exactly that file

Solvers are every installed comparison CVXPY solver (``infpush_cvx.cvxpy_solvers``) on the
problem classes it handles, and every method of the project's solvers that maps to the problem
(:func:`.tasks.native_methods`). Each row records status, objective, relative error against the
stored value, certificate (gap), compile/setup/solve times, iterations and library versions.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import catalog, cvxpy_solvers
from .._validation import check_scalar
from ..compare import check_native_names, selects
from ..files import atomic_path
from .executors import make_executor
from .tasks import COLUMNS, Task, native_methods, versions


def make_tasks(problems=None, cvxpy=None, native=None, *, repeats: int = 1, tol: float = 1e-6,
               timeout: float | None = None, blas_threads: int = 1) -> list[Task]:
    """Tasks for every problem x solver x repeat.

    problems : catalog IDs (default: the whole catalog) or a pattern string (IDs containing it).
    cvxpy : CVXPY solver names (default: every installed comparison solver; ``[]`` for none).
    native : project solver labels such as ``"infinite_push.fista"``, method names such as
        ``"fista"`` or module names such as ``"rank2plan"`` (default: every method that maps to
        the problem; ``[]`` for none); an unknown name is a ValueError listing the valid ones.
    timeout : seconds per task, also given to every solver as its own time limit.
    """
    if problems is None or isinstance(problems, str):
        problems = catalog.problem_ids(problems)
    problems = list(problems)
    if not problems:
        raise ValueError("problems selects no catalog problem")
    for pid in problems:
        catalog.get(pid)
    repeats = int(check_scalar(repeats, "repeats", positive=True))
    tol = check_scalar(tol, "tol", positive=True)
    if timeout is not None:
        timeout = check_scalar(timeout, "timeout", positive=True)
    cvx = cvxpy_solvers.installed() if cvxpy is None else \
        [cvxpy_solvers.spec(s).name for s in cvxpy]
    if native is not None:
        native = check_native_names(native)
    tasks = []
    for r in range(repeats):
        for pid in problems:
            spec = catalog.get(pid)
            for s in cvx:
                if cvxpy_solvers.SOLVERS[s].handles(spec.problem_class):
                    tasks.append(Task(pid, "cvxpy", s, r, tol, timeout, blas_threads))
            available = native_methods(spec)
            chosen = available if native is None else [m for m in available if selects(native, m)]
            tasks.extend(Task(pid, "native", m, r, tol, timeout, blas_threads) for m in chosen)
    if not tasks:
        raise ValueError("no solver applies to the selected problems")
    return tasks


def run_benchmark(tasks, executor="processes", *, progress: bool = True, n_workers=None,
                  scheduler=None) -> pd.DataFrame:
    """Run ``tasks`` on ``executor`` (a name or an executor object); one row per task, in task
    order. Failed and timed-out solves are rows with their status."""
    tasks = list(tasks)
    if isinstance(executor, str):
        executor = make_executor(executor, n_workers=n_workers, scheduler=scheduler)
    rows = [None] * len(tasks)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(tasks), desc=f"benchmark ({executor.name})", unit="solve")
    try:
        for k, row in executor.run(tasks):
            row["executor"] = executor.name
            rows[k] = row
            if bar is not None:
                bar.set_postfix_str(tasks[k].label(), refresh=False)
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    version_cols = list(versions())
    df = pd.DataFrame(rows)
    for col in COLUMNS + version_cols:
        if col not in df.columns:
            df[col] = None
    df = df[COLUMNS + version_cols]
    for col in ("objective", "reference", "rel_error", "rtol", "gap", "compile_time",
                "setup_time", "solve_time", "time", "timeout", "lam"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["iterations"] = pd.to_numeric(df["iterations"], errors="coerce").astype("Int64")
    df["converged"] = df["converged"].fillna(False).astype(bool)
    df["agrees"] = df["agrees"].fillna(False).astype(bool)
    return df


#: Columns a results table needs for its reports (see :mod:`.reports`).
REPORT_COLUMNS = ("problem", "kind", "solver", "repeat", "status", "agrees", "objective",
                  "reference", "rel_error", "gap", "iterations", "compile_time", "setup_time",
                  "solve_time", "time")

_SUFFIXES = (".csv", ".parquet")


def table_paths(path) -> dict:
    """``{"csv": <stem>.csv, "parquet": <stem>.parquet}`` where ``<stem>`` is ``path`` without a
    ``.csv`` or ``.parquet`` suffix (any other suffix is part of the stem: ``run.v2``)."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in _SUFFIXES else path
    return {"csv": stem.parent / (stem.name + ".csv"),
            "parquet": stem.parent / (stem.name + ".parquet")}


def save_results(df: pd.DataFrame, path) -> dict:
    """Write ``<stem>.csv`` and ``<stem>.parquet`` (see :func:`table_paths`); returns both paths.

    Both are written to temporary files first and replace the previous pair only when both are
    complete, so a run killed while writing leaves the previous tables, never a partial file
    nor a new CSV beside an old Parquet file."""
    out = table_paths(path)
    with atomic_path(out["csv"]) as csv, atomic_path(out["parquet"]) as parquet:
        df.to_csv(csv, index=False)
        df.to_parquet(parquet, index=False)
    return out


def load_results(path) -> pd.DataFrame:
    """Read a results table: exactly ``path`` when it ends in ``.csv`` or ``.parquet``; for a
    stem (the ``path`` given to :func:`save_results`), its Parquet file, else its CSV file.

    ValueError naming the file when it is missing, cannot be parsed, lacks a column of
    ``REPORT_COLUMNS``, has no rows, or looks truncated: a CSV file that does not end with a line
    break (every CSV writer here ends with one), an ``agrees`` value other than True/False.
    """
    path = Path(path)
    if path.suffix not in _SUFFIXES:
        pair = table_paths(path)
        path = pair["parquet"] if pair["parquet"].exists() else pair["csv"]
    if not path.is_file():
        raise ValueError(f"table {str(path)!r} does not exist")
    if path.suffix == ".csv" and not _ends_with_line_break(path):
        raise ValueError(f"table {path} does not end with a line break; is the file truncated?")
    try:
        df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, ImportError) as exc:  # parser, encoding, Arrow errors
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ValueError(f"table {path} cannot be read as {path.suffix[1:].upper()}: "
                         f"{reason}") from None
    missing = [c for c in REPORT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"table {path} is not a results table: no column(s) {missing}")
    if df.empty:
        raise ValueError(f"table {path} has no rows")
    agrees = df["agrees"]
    if agrees.dtype != bool:
        bad = ~agrees.isin([True, False])
        if bad.any():
            raise ValueError(f"table {path}: {int(bad.sum())} row(s) without a True/False "
                             f"'agrees' (the first is data row {int(bad.to_numpy().argmax()) + 1})"
                             f"; is the file truncated?")
        df["agrees"] = agrees.astype(bool)
    return df


def _ends_with_line_break(path: Path) -> bool:
    with open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            return True  # empty: the parser says so
        fh.seek(-1, 2)
        return fh.read(1) in (b"\n", b"\r")
