"""A benchmark run: catalog problems x solvers x repeats -> one tidy results table.

>>> from infpush_cvx.benchmarking import make_tasks, run_benchmark, save_results
>>> tasks = make_tasks(catalog.problem_ids("planted_s"), repeats=3)
>>> df = run_benchmark(tasks, executor="processes")     # one row per task
>>> save_results(df, "results/bench")                   # results/bench.csv and .parquet
>>> df = load_results("results/bench.csv")              # exactly that file

With provenance, as ``infpush-cvx bench`` does (a new set of files for every run, never
overwriting one):

>>> run = benchmark(tasks, "processes")                 # table, curves and metadata
>>> save_run(run, "results/bench")   # results/bench/<UTC time>_<id>.csv, .parquet, .json

Rows reach disk as each solve ends when the caller passes ``on_row`` (the command line appends
them to a ``.partial`` file, :mod:`.partial`). A Ctrl-C (KeyboardInterrupt) stops the run at
once: :func:`benchmark` then raises :class:`RunInterrupted`, whose ``run`` holds the rows that
finished and an ``"interrupted"`` row for every task that was running. Without pyarrow (the
``parquet`` extra) tables are written as CSV only, with a warning.

Solvers are the CVXPY comparison solvers (``cvxpy_solvers.comparison_set()``, or any installed
one by name) on the problem classes they handle, and every method of the project's solvers that
maps to the problem (:func:`infpush_cvx.catalog.registry.methods`); the rows are those of
:mod:`.tasks`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import catalog
from .._validation import check_scalar
from ..catalog import cvxpy_solvers, registry
from ..files import atomic_path, write_text_atomic
from .executors import make_executor
from .curves import TABLE_SUFFIXES, curves_frame, read_table
from .partial import SUFFIX as PARTIAL_SUFFIX
from .provenance import new_run_id, run_metadata, utc_now
from .tasks import COLUMNS, Task, failed_row, versions

log = logging.getLogger(__name__)

#: Largest ``repeats`` of a run (each repeat is a task per problem and solver, held in memory).
MAX_REPEATS = 1000

#: Status of the row of a task that was running when the run was interrupted.
INTERRUPTED = "interrupted"


def parquet_available() -> bool:
    """Whether pandas can write Parquet files here (pyarrow or fastparquet installed)."""
    try:
        pd.io.parquet.get_engine("auto")
    except ImportError:
        return False
    return True


def make_tasks(problems=None, cvxpy=None, native=None, *, repeats: int = 1, tol: float = 1e-6,
               timeout: float | None = None, blas_threads: int = 1,
               curves: bool = False) -> list[Task]:
    """Tasks for every problem x solver x repeat.

    problems : catalog IDs (default: the whole catalog) or a pattern string (IDs containing it).
    cvxpy : installed CVXPY solver names, ``"all"`` for every one (default: the comparison set,
        ``cvxpy_solvers.comparison_set()``; ``[]`` for none). A solver runs on the problem
        classes it handles only.
    native : project solver labels such as ``"infinite_push.fista"``, method names such as
        ``"fista"`` or module names such as ``"rank2plan"`` (default: every method that maps to
        the problem; ``[]`` for none); an unknown name is a ValueError listing the valid ones.
    timeout : seconds per task, also given to every solver as its own time limit.
    curves : project solvers keep their per-iteration history (see :func:`benchmark`).
    """
    if problems is None or isinstance(problems, str):
        problems = catalog.problem_ids(problems)
    problems = list(problems)
    specs = [catalog.get(pid) for pid in problems]
    if not specs:
        raise ValueError("problems selects no catalog problem")
    repeats = int(check_scalar(repeats, "repeats", positive=True))
    if repeats > MAX_REPEATS:
        raise ValueError(f"repeats must be at most {MAX_REPEATS}, got {repeats}")
    tol = check_scalar(tol, "tol", positive=True)
    if timeout is not None:
        timeout = check_scalar(timeout, "timeout", positive=True)
    cvx = cvxpy_solvers.resolve(cvxpy)
    if native is not None:
        native = registry.check_names(native)
    tasks = []
    for r in range(repeats):
        for pid, spec in zip(problems, specs):
            tasks.extend(Task(pid, "cvxpy", s.name, r, tol, timeout, blas_threads)
                         for s in registry.cvxpy_solvers_for(spec, cvx))
            tasks.extend(Task(pid, "native", m, r, tol, timeout, blas_threads, curves)
                         for m in registry.methods(spec)
                         if native is None or registry.selects(native, m))
    if not tasks:
        raise ValueError("no solver applies to the selected problems")
    return tasks


def run_benchmark(tasks, executor="processes", *, progress: bool = True, n_workers=None,
                  scheduler=None) -> pd.DataFrame:
    """Run ``tasks`` on ``executor`` (a name or an executor object); one row per task, in task
    order. Failed and timed-out solves are rows with their status. Curves (tasks made with
    ``curves=True``) are dropped: :func:`benchmark` keeps them."""
    return benchmark(tasks, executor, progress=progress, n_workers=n_workers,
                     scheduler=scheduler).table


@dataclass
class BenchmarkRun:
    """A finished run: its results ``table``, the convergence ``curves`` of the project solvers
    (an empty table unless the tasks asked for them) and its provenance ``metadata``
    (:func:`.provenance.run_metadata`)."""

    table: pd.DataFrame
    curves: pd.DataFrame
    metadata: dict = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.metadata["run_id"]

    @property
    def interrupted(self) -> bool:
        return bool(self.metadata.get("interrupted"))


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or, in the command line, SIGTERM): ``run`` holds the rows that
    finished and an "interrupted" row for each task that was running; tasks not started have
    no row. ``cause`` is the original exception."""

    def __init__(self, run: BenchmarkRun, cause: BaseException):
        super().__init__(f"run {run.run_id} interrupted")
        self.run, self.cause = run, cause


def benchmark(tasks, executor="processes", *, progress: bool = True, n_workers=None,
              scheduler=None, run_id: str | None = None, command=None,
              on_row=None) -> BenchmarkRun:
    """Run ``tasks`` on ``executor`` (a name or an executor object, warmed up in every worker
    before the first timed task) and record the run's provenance.

    Every row gets the ``run_id`` (default: a new ``<UTC time>_<id>``); ``curves`` has one row
    per recorded iteration of each project solver task made with ``curves=True`` (with the
    task's ``run_id``, ``problem``, ``solver``, ``repeat``; see :mod:`.curves`). ``on_row(row)``
    is called with every row as its task ends (to put it on disk at once). A KeyboardInterrupt
    stops the run: :class:`RunInterrupted` carries what it did."""
    tasks = list(tasks)
    if isinstance(executor, str):
        executor = make_executor(executor, n_workers=n_workers, scheduler=scheduler)
    started = utc_now()
    run_id = run_id or new_run_id(started)
    log.info("run %s: %d tasks on the %s executor", run_id, len(tasks), executor.name)
    rows, curve_rows = [None] * len(tasks), []

    def record(k, row):  # every row, an "interrupted" one too, in its place and to on_row
        row.update(executor=executor.name, run_id=run_id)
        rows[k] = row
        if on_row is not None:
            on_row(row)
    try:
        _execute(tasks, executor, progress, record, curve_rows)
    except KeyboardInterrupt as exc:
        _mark_interrupted(tasks, executor, rows, record, exc)
        run = _finished(tasks, executor, [r for r in rows if r is not None], curve_rows,
                        run_id, started, command, interrupted=True)
        raise RunInterrupted(run, exc) from exc
    return _finished(tasks, executor, rows, curve_rows, run_id, started, command)


def _mark_interrupted(tasks, executor, rows, record, exc) -> None:
    """An "interrupted" row for every task the executor started that has no row."""
    now = time.perf_counter()
    why = str(exc) or ("SIGINT" if type(exc) is KeyboardInterrupt else type(exc).__name__)
    for k, began in sorted(getattr(executor, "started", {}).items()):
        if rows[k] is None:
            record(k, failed_row(tasks[k], INTERRUPTED, f"run stopped by {why}", now - began))


def _finished(tasks, executor, rows, curve_rows, run_id, started, command, *,
              interrupted: bool = False) -> BenchmarkRun:
    table = _tidy(rows)
    table["run_id"] = run_id
    curves = curves_frame([{"run_id": run_id, **r} for r in curve_rows])
    execution = {"executor": executor.name,
                 "n_workers": getattr(executor, "n_workers", None) or (
                     1 if executor.name == "serial" else None),
                 "worker_env": dict(getattr(executor, "env", {}) or {}),
                 "omp_num_threads_here": os.environ.get("OMP_NUM_THREADS"),
                 "warmup": list(getattr(executor, "warmup_info", []) or [])}
    metadata = run_metadata(tasks, table, run_id=run_id, started=started, execution=execution,
                            command=command)
    if interrupted:
        metadata["interrupted"] = True
        metadata["summary"]["interrupted"] = int((table["status"] == INTERRUPTED).sum())
        metadata["summary"]["not_started"] = len(tasks) - len(table)
    log.info("run %s: %d of %d rows agree with the stored values", run_id,
             metadata["summary"]["agree"], len(table))
    return BenchmarkRun(table, curves, metadata)


def _execute(tasks, executor, progress, record, curves):
    """``record(k, row)`` every row ``tasks`` give on ``executor`` as it comes; add their
    curves' rows to ``curves``."""
    from tqdm.auto import tqdm
    with tqdm(total=len(tasks), desc=f"benchmark ({executor.name})", unit="solve",
              disable=not progress) as bar:
        for k, row in executor.run(tasks):
            task = tasks[k]
            curves.extend({"problem": str(task.problem), "solver": task.solver,
                           "repeat": task.repeat, **c} for c in row.pop("curve", None) or ())
            record(k, row)
            bar.set_postfix_str(task.label(), refresh=False)
            bar.update()


def _tidy(rows) -> pd.DataFrame:
    """The results table of the rows: ``COLUMNS`` then ``version_<pkg>``, with numeric types."""
    df = pd.DataFrame(rows).reindex(columns=COLUMNS + list(versions()))
    for col in ("objective", "reference", "rel_error", "rtol", "gap", "compile_time",
                "setup_time", "solve_time", "time", "warmup_time", "timeout", "lam",
                "primal_residual", "solver_primal_residual", "rss_before_mib", "peak_rss_mib"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    for col in ("iterations", "nnz_w", "seed", "m", "n", "d", "nnz"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    df["converged"] = df["converged"].fillna(False).astype(bool)
    df["agrees"] = df["agrees"].fillna(False).astype(bool)
    return df


#: Columns a results table needs for its reports (see :mod:`.reports`).
REPORT_COLUMNS = ("problem", "kind", "solver", "repeat", "status", "agrees", "objective",
                  "reference", "rel_error", "gap", "iterations", "compile_time", "setup_time",
                  "solve_time", "time")


def table_paths(path) -> dict:
    """``{"csv": <stem>.csv, "parquet": <stem>.parquet}`` where ``<stem>`` is ``path`` without a
    ``.csv`` or ``.parquet`` suffix (any other suffix is part of the stem: ``run.v2``)."""
    stem = run_folder(path)
    return {suffix[1:]: stem.parent / (stem.name + suffix) for suffix in TABLE_SUFFIXES}


def stem_table(path) -> Path:
    """The table a stem names: its Parquet file when it exists and can be read here (pyarrow
    installed), else its CSV file (without pyarrow, a run's CSV file beside its Parquet file
    was passed over for the Parquet file, which could not be read)."""
    pair = table_paths(path)
    if pair["parquet"].exists() and (parquet_available() or not pair["csv"].exists()):
        return pair["parquet"]
    return pair["csv"]


def save_results(df: pd.DataFrame, path, *, parquet: bool | None = None) -> dict:
    """Write ``<stem>.csv`` and ``<stem>.parquet`` (see :func:`table_paths`); returns the paths
    written. ``parquet``: also the Parquet file (default: when pyarrow is installed; without it,
    CSV only, with a warning).

    Both are written to temporary files first and replace the previous pair only when both are
    complete, so a run killed while writing leaves the previous tables, never a partial file
    nor a new CSV beside an old Parquet file."""
    out = table_paths(path)
    if not _with_parquet(parquet):
        del out["parquet"]
    with _table_files(df, out["csv"], out.get("parquet")):
        pass
    return out


def _with_parquet(parquet: bool | None) -> bool:
    if parquet is None:
        parquet = parquet_available()
        if not parquet:
            log.warning("pyarrow is not installed: tables are written as CSV only (install "
                        "the 'parquet' extra for Parquet files)")
    return bool(parquet)


@contextlib.contextmanager
def _table_files(df: pd.DataFrame, csv, parquet=None):
    """``df`` written to temporary CSV (and Parquet, unless ``parquet`` is None) files that
    replace ``csv`` and ``parquet`` together when the block (more files of the same set) ends
    without an exception."""
    parquet_file = contextlib.nullcontext() if parquet is None else atomic_path(parquet)
    with atomic_path(csv) as csv_tmp, parquet_file as parquet_tmp:
        df.to_csv(csv_tmp, index=False)
        if parquet is not None:
            df.to_parquet(parquet_tmp, index=False)
        yield


def run_folder(out) -> Path:
    """The folder of ``--out``-style base path ``out``: ``out`` itself, less a ``.csv`` or
    ``.parquet`` suffix (``results/bench.csv`` -> ``results/bench/``)."""
    out = Path(out)
    return out.with_suffix("") if out.suffix in TABLE_SUFFIXES else out


def run_paths(out, run_id: str) -> dict:
    """Where :func:`save_run` writes run ``run_id`` under base path ``out``
    (:func:`run_folder`): ``csv``, ``parquet`` (the results table), ``metadata`` (``.json``),
    ``curves_csv``, ``curves_parquet`` (``<run_id>_curves.*``, only for runs with curves) and
    ``report`` (the folder ``<run_id>_report/``)."""
    ends = {"csv": ".csv", "parquet": ".parquet", "metadata": ".json",
            "curves_csv": "_curves.csv", "curves_parquet": "_curves.parquet", "report": "_report"}
    return {key: run_folder(out) / (run_id + end) for key, end in ends.items()}


def save_run(run: BenchmarkRun, out, *, parquet: bool | None = None) -> dict:
    """Write ``run`` under base path ``out`` as a new set of files (:func:`run_paths`): its
    table (CSV + Parquet), its curves when it has any, and its metadata (JSON, which names the
    other files). ``parquet``: write the Parquet files (default: when pyarrow is installed;
    without it, CSV only, with a warning). Never replaces a file: FileExistsError when one of
    them exists. All files are written to temporary files first and appear together (a run
    killed while writing leaves none of them). Returns the paths written."""
    paths = run_paths(out, run.run_id)
    parquet = _with_parquet(parquet)
    written = [k for k in ("csv", "parquet", "metadata", "curves_csv", "curves_parquet")
               if (parquet or "parquet" not in k) and not (run.curves.empty and "curves" in k)]
    taken = [str(paths[k]) for k in written if paths[k].exists()]
    if taken:
        raise FileExistsError(f"run {run.run_id}: {taken[0]} exists; a run never replaces "
                              f"the files of another")
    metadata = {**run.metadata, "files": {k: paths[k].name for k in written if k != "metadata"}}
    curves = contextlib.nullcontext() if run.curves.empty else \
        _table_files(run.curves, paths["curves_csv"],
                     paths["curves_parquet"] if parquet else None)
    with _table_files(run.table, paths["csv"], paths["parquet"] if parquet else None), curves:
        write_text_atomic(paths["metadata"],
                          json.dumps(metadata, indent=1, default=_json_default) + "\n")
    log.info("run %s written to %s", run.run_id, run_folder(out))
    return {k: paths[k] for k in written}


def _json_default(value):
    """NumPy scalars and anything else JSON does not know, as plain values or text."""
    return value.item() if hasattr(value, "item") else str(value)


def load_metadata(path) -> dict:
    """The metadata of a saved run: ``path`` is its ``.json`` file, or its table
    (``<run_id>.csv`` / ``.parquet``, or its ``.partial`` file), beside which the ``.json`` file
    is. ValueError naming the file when it is missing, not a small regular file, or not JSON."""
    from ..catalog._files import read_small_file
    path = Path(path)
    if path.suffix == PARTIAL_SUFFIX:
        path = path.with_suffix("")
    if path.suffix in TABLE_SUFFIXES:
        path = path.with_suffix(".json")
    if not path.is_file():
        raise ValueError(f"metadata {str(path)!r} does not exist")
    try:
        return json.loads(read_small_file(path, "run's metadata").decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"metadata {path}: {' '.join(str(exc).split())}") from None


#: Columns of a results table that hold numbers (a truncated or edited file may hold text).
NUMERIC_COLUMNS = ("repeat", "objective", "reference", "rel_error", "gap", "iterations",
                   "compile_time", "setup_time", "solve_time", "time")


def load_results(path) -> pd.DataFrame:
    """Read a results table: exactly ``path`` when it ends in ``.csv`` or ``.parquet``, or a
    run's ``.partial`` file (:mod:`.partial`: the rows of a run that did not end, a last line cut
    by a kill left out with a warning); for a stem (the ``path`` given to
    :func:`save_results`), its Parquet file, else its CSV file.

    ValueError naming the file when it is missing or not a regular file, cannot be parsed, lacks
    a column of ``REPORT_COLUMNS``, holds text in a column of ``NUMERIC_COLUMNS``, has no rows,
    or looks truncated: a CSV file that does not end with a line break (every CSV writer here
    ends with one), an ``agrees`` value other than True/False.
    """
    path = Path(path)
    partial = path.suffix == PARTIAL_SUFFIX
    if path.suffix not in TABLE_SUFFIXES and not partial:
        path = stem_table(path)
    df = read_table(path, "results", REPORT_COLUMNS, partial=partial)
    if df.empty:
        raise ValueError(f"table {path} has no rows")
    for column in NUMERIC_COLUMNS:
        if not pd.api.types.is_numeric_dtype(df[column]):
            numbers = pd.to_numeric(df[column].where(df[column].notna()), errors="coerce")
            bad = numbers.isna() & df[column].notna()
            if bad.any():
                first = int(bad.to_numpy().argmax())
                raise ValueError(f"table {path}: column {column!r} holds "
                                 f"{str(df[column].iloc[first])[:40]!r} (data row {first + 1})"
                                 f", not a number")
            df[column] = numbers
    agrees = df["agrees"]
    if agrees.dtype != bool:
        bad = ~agrees.isin([True, False])
        if bad.any():
            raise ValueError(f"table {path}: {int(bad.sum())} row(s) without a True/False "
                             f"'agrees' (the first is data row {int(bad.to_numpy().argmax()) + 1})"
                             f"; is the file truncated?")
        df["agrees"] = agrees.astype(bool)
    return df

