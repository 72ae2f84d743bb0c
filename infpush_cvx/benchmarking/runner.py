"""A benchmark run: catalog problems x solvers x repeats -> one tidy results table.

>>> from infpush_cvx.benchmarking import make_tasks, run_benchmark, save_results
>>> tasks = make_tasks(catalog.problem_ids("planted_s"), repeats=3)
>>> df = run_benchmark(tasks, executor="processes")     # one row per task
>>> save_results(df, "results/bench")                   # results/bench.csv and .parquet

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
from .executors import make_executor
from .tasks import COLUMNS, Task, native_methods, versions


def make_tasks(problems=None, cvxpy=None, native=None, *, repeats: int = 1, tol: float = 1e-6,
               timeout: float | None = None, blas_threads: int = 1) -> list[Task]:
    """Tasks for every problem x solver x repeat.

    problems : catalog IDs (default: the whole catalog) or a pattern string (IDs containing it).
    cvxpy : CVXPY solver names (default: every installed comparison solver; ``[]`` for none).
    native : project solver labels such as ``"infinite_push.fista"`` or module names such as
        ``"rank2plan"`` (default: every method that maps to the problem; ``[]`` for none).
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
    tasks = []
    for r in range(repeats):
        for pid in problems:
            spec = catalog.get(pid)
            for s in cvx:
                if spec.problem_class in cvxpy_solvers.SOLVERS[s].classes:
                    tasks.append(Task(pid, "cvxpy", s, r, tol, timeout, blas_threads))
            available = native_methods(spec)
            chosen = available if native is None else \
                [m for m in available if m in native or m.split(".")[0] in native]
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


def save_results(df: pd.DataFrame, path) -> dict:
    """Write ``<path>.csv`` and ``<path>.parquet`` (suffix of ``path`` ignored); returns both."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".csv", ".parquet") else path
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = {"csv": stem.with_suffix(".csv"), "parquet": stem.with_suffix(".parquet")}
    df.to_csv(out["csv"], index=False)
    df.to_parquet(out["parquet"], index=False)
    return out


def load_results(path) -> pd.DataFrame:
    """Read a table written by :func:`save_results` (Parquet preferred, CSV otherwise)."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".csv", ".parquet") else path
    if stem.with_suffix(".parquet").exists():
        return pd.read_parquet(stem.with_suffix(".parquet"))
    return pd.read_csv(stem.with_suffix(".csv"))
