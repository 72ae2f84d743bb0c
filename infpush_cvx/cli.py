"""infpush-cvx: solve the catalog's ranking problems and check them against stored optima.

    infpush-cvx check [--problems PATTERN] [--tier core|real|all] [--cvxpy S ...|all]
                      [--native M ...] [--tol T] [--time-limit SECONDS]
                      [--out results/comparison.csv] [-v]
        The main job: every problem with the comparison solvers (CLARABEL, ECOS, SCS, HIGHS;
        any installed CVXPY solver by name, or "all") and the project's certified methods,
        one solve at a time; prints a short table, one summary line per solver, and saves the
        full results table (the bench table's columns). The catalog's "core" tier by default;
        the "real" tier (subsets of real data sets) is large for CVXPY.
    infpush-cvx reference verify | regenerate | migrate [--only ID ...] [--tier T]
                      [--no-resolve] [--accept-changes]
        verify: each stored value's record is valid, its instance and problem definition
        (spec fingerprint) are unchanged, and the project's certified solvers re-solve it to
        2e-6 (--no-resolve skips that); regenerate refuses to replace a changed value without
        --accept-changes; migrate adds the spec fingerprint to records that still match.
    infpush-cvx list [--problems PATTERN] [--tier T]
        The catalog's problems (the "core" tier by default, as check and bench).
    infpush-cvx generate [--instances NAME ...] --out DIR
        Write catalog instances to DIR/<name>.npz with their fingerprints.
    infpush-cvx solve PROBLEM --solver NAME [--tol T] [--time-limit SECONDS] [-v]
        Solve one catalog problem with any installed CVXPY solver (CLARABEL, OSQP, ...) or a
        project solver method (infinite_push.fista, ranksvm.working_set, rank2plan.ccg, ...).
    infpush-cvx bench [--problems PATTERN] [--tier T] [--cvxpy S ...|all] [--native M ...]
                      [--repeats N] [--executor serial|processes|dask] [--workers N]
                      [--scheduler ADDR] [--time-limit SECONDS] [--curves]
                      [--out results/bench] [-v]
        Run problems x solvers x repeats (every project method by default, the papers'
        fixed-budget protocols included), every worker warmed up first; each run writes NEW
        files, never replacing any: OUT/<UTC time>_<id>.csv and .parquet (the table), .json
        (provenance: date, git commit, machine, BLAS threads, every solver option, instance
        parameters), with --curves <id>_curves.csv/.parquet (the project solvers'
        per-iteration objective, gap and time), and <id>_report/ (report.html, as report
        writes it).
    infpush-cvx report TABLE [--curves FILE] [--out DIR] [--metric time]
                      [--problems-set common|all]
        DIR/report.html, one self-contained page (figures embedded: performance profile,
        suboptimality against time per problem from the run's convergence curves; the
        comparison table; the run's provenance), with its parts beside it: comparison.csv and
        the PNG figures. TABLE is exactly the .csv or .parquet file named, or a run's
        <id>_curves file, which stands for its run; curves beside the table are used.
    infpush-cvx experiments agarwal|perceptron [options] [--out TABLE.csv]
        The evaluation experiments (Agarwal 2011's section 6 protocol; Perceptron@K): the
        result table, the per-run table in --out and, with matplotlib, a figure beside it.
    infpush-cvx prox [--sizes 100 1000] [--factors ...] [--repeats N]
        Time the l1,inf projection core against the copy floor.

Timing. Every process that solves (check, solve and bench, whatever the executor) first runs
each solver once, untimed, on a small problem of the same kind: the table's times (time,
solve_time, compile_time, setup_time) measure the solve, and the one-off cost of numba's
compilation and of the solvers' imports is the warmup_time column.

Every solve has a time limit (--time-limit, default 1200 s), given to the solver as its own
time-limit option, and every solve runs in a worker process killed at the limit (check, solve
and bench on every executor but Dask, which can only stop waiting): the limit holds for
CVXPY's compilation, a solver's set-up and solvers without a limit of their own (ECOS,
CVXOPT, PIQP, ...) too; such a solve's row says "timeout".

The same option means the same thing in every command: --problems (IDs containing the text),
--tier, --cvxpy (CVXPY solvers), --native (project solver methods), --tol (target gap of the
project solvers), --time-limit, --out, -v. Old spellings still work for one release, with a
warning: check --solvers (now --cvxpy), --timeout (now --time-limit).

Output is quiet by default (no solver banners); -v (-vv) logs progress (debug) to stderr.

Results are never lost. Output locations are checked before any solve (one that exists and is
not a regular file, such as /dev/null, a FIFO or a folder, is refused; a symbolic link is
written through, to the file it points to). Each row is appended to OUT.partial (check: the
--out file's name plus ".partial"; bench: <id>.csv.partial) as its solve ends, so a killed run
keeps every finished row there; the final files are written atomically (a killed write leaves
the previous file, never a partial one) and the .partial file is then removed. Nothing is
printed before it is saved. A file that cannot be written (a full disk) is named in the error,
and the .partial file keeps the rows. Ctrl-C (SIGINT) or SIGTERM stops the run at once: the
rows that finished and an "interrupted" row for each solve that was running are saved, and the
exit status is 130 (143 for SIGTERM); SIGHUP (the terminal closed) too, exit status 129, unless
it is ignored (nohup). Without pyarrow (the parquet extra) bench writes CSV
tables only, without matplotlib (the plots extra) no figure; both say so.

Exit status: 0 success, suboptimal answers included (a fixed iteration budget, a time limit, a
solver that stopped without a certificate: the rows and the summary say how far they are);
1 a solver claims an optimum (a certified status) that the stored value contradicts, or a
solve could not run (an exception, a worker that died); 2 usage error (bad arguments or
values, unreadable or malformed input, unwritable output), reported as one line naming the
argument or file; 3 unexpected failure, one line (--traceback, or INFPUSH_CVX_TRACEBACK=1,
prints the full traceback); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 hung up
(SIGHUP); 141 the reader of the output went away (| head).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import logging
import math
import os
import re
import signal
import sys
import threading
import traceback
from pathlib import Path

from ._logging import StderrHandler
from .files import MalformedFileError, named_os_error

#: Default time limit of one solve, in seconds: twice the longest solve the catalog needs
#: (ECOS on the real tier's a8a 300 x 3000 problem, about 10 minutes on 2 cores).
DEFAULT_TIME_LIMIT = 1200.0
#: Environment variable that, set to anything but "" or "0", prints full tracebacks.
TRACEBACK_ENV_VAR = "INFPUSH_CVX_TRACEBACK"

EXIT_DISAGREEMENT, EXIT_USAGE, EXIT_FAILURE = 1, 2, 3
#: Largest --time-limit, in seconds (11.6 days): far beyond any solve of the catalog, and within
#: what the clocks the limit is waited on accept (1e20 s overflowed them: exit 3).
MAX_TIME_LIMIT = 1e6
#: Largest --workers: 4 per CPU. Each worker is a Python process with CVXPY and the solvers
#: loaded (about 250 MB); --workers 10000 with enough tasks started that many at once.
MAX_WORKERS = 4 * (os.cpu_count() or 1)
#: Largest --repeats of ``bench`` (``benchmarking.runner.MAX_REPEATS``; the CLI keeps its own
#: copy so that ``--help`` does not import pandas).
MAX_REPEATS = 1000


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP: the terminal closed), raised where the program is, so a run stops as
    on Ctrl-C: its finished rows are saved, its temporary files removed, and the exit status is
    128 + the signal's number (143, 129)."""

    signum = signal.SIGTERM

    def __init__(self, signum=signal.SIGTERM):
        super().__init__()
        self.signum = signal.Signals(signum)

    def __str__(self):
        return self.signum.name


class CommandFailed(Exception):
    """An unexpected exception while a command did its work (exit 3); it is the ``__cause__``."""


@contextlib.contextmanager
def _working(what: str):
    """Mark the command's work, after its arguments were checked: an exception in here is a
    failure of the command (exit 3) even when it is a ValueError, except an OSError (a file or
    data set that cannot be read or written, or a malformed input file, exit 2)."""
    try:
        yield
    except (OSError, MalformedFileError, CommandFailed):
        raise
    except Exception as exc:
        raise CommandFailed(f"{what} failed: {type(exc).__name__}: {exc}") from exc


# -- argparse types: a bad value is a one-line usage error naming the option -----------------

def _argument_type(convert, ok, expected: str, must: str):
    """An argparse type: ``convert(text)`` (else "expected <expected>"), then ``ok(value)`` (else
    "<must>"); either failure is a one-line usage error naming the option."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{must}, got {text!r}")
        return value
    return parse


#: A positive, finite number (tolerances, seconds, factors).
positive_float = _argument_type(float, lambda v: math.isfinite(v) and v > 0, "a positive number",
                                "must be positive and finite")
#: A positive integer (counts, sizes).
positive_int = _argument_type(int, lambda v: v >= 1, "a positive integer", "must be at least 1")
#: A time limit in seconds: positive, at most MAX_TIME_LIMIT.
time_limit_seconds = _argument_type(float, lambda v: 0 < v <= MAX_TIME_LIMIT,
                                    "a positive number",
                                    f"must be positive and at most {MAX_TIME_LIMIT:g} s")
#: A target relative gap: in (0, 1); 1e308 made the agreement tolerance (2 tol) infinite, so
#: that any answer agreed with its stored value.
gap_tolerance = _argument_type(float, lambda v: 0 < v < 1, "a number in (0, 1)",
                               "must be in (0, 1), a relative gap")
#: Worker processes: 1 to MAX_WORKERS.
worker_count = _argument_type(int, lambda v: 1 <= v <= MAX_WORKERS, "a positive integer",
                              f"must be between 1 and {MAX_WORKERS} (4 per CPU)")
#: An output path: not empty (``--out ""`` wrote into the working folder).
output_path = _argument_type(str, lambda v: bool(v.strip()), "a path", "must not be empty")
#: Largest n of prox's n x n matrices: 20000 (3.2 GB each; a few copies are held at once).
MAX_PROX_SIZE = 20000
#: A size of prox: 1 to MAX_PROX_SIZE (100000 failed with exit 3, a MemoryError).
prox_size = _argument_type(int, lambda v: 1 <= v <= MAX_PROX_SIZE, "a positive integer",
                           f"must be between 1 and {MAX_PROX_SIZE}")
#: The repeats of a benchmark: 1 to MAX_REPEATS.
repeat_count = _argument_type(int, lambda v: 1 <= v <= MAX_REPEATS, "a positive integer",
                              f"must be between 1 and {MAX_REPEATS}")
#: An integer >= 0 (seeds).
nonnegative_int = _argument_type(int, lambda v: v >= 0, "an integer >= 0", "must be >= 0")


# -- logging: the package logger, to stderr, at the level -v asks for ------------------------

def configure_logging(verbosity: int = 0) -> None:
    """Send the package logger (``infpush_cvx``) to stderr: warnings only by default, progress
    with ``verbosity`` 1 (``-v``), debug details with 2 (``-vv``)."""
    logger = logging.getLogger("infpush_cvx")
    handler = next((h for h in logger.handlers if isinstance(h, StderrHandler)), None)
    if handler is None:
        handler = StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    level = logging.WARNING if not verbosity else logging.INFO if verbosity == 1 \
        else logging.DEBUG
    logger.setLevel(level)
    handler.setLevel(level)


def _reference_folder() -> None:
    """The stored values' folder exists (a mistyped INFPUSH_CVX_REFERENCE_DIR is a usage error
    before any solve, not a "disagrees" row for every solve)."""
    from .catalog import reference
    reference.check_directory()


def _quiet_start(args) -> None:
    """Start of a solving command: its log level (HiGHS's banner is kept quiet by every
    HiGHS solve: ``cvxpy_backend.quiet_highs``)."""
    configure_logging(getattr(args, "verbose", 0))


# -- commands ---------------------------------------------------------------------------------

def _problem_ids(pattern, tier) -> list[str]:
    from . import catalog
    ids = catalog.problem_ids(pattern, tier=tier)
    if not ids:
        raise ValueError(f"no catalog problem of tier {tier!r} matches {pattern!r} (see "
                         f"`infpush-cvx list --tier {tier}`)")
    return ids


def _save_csv(df, path) -> None:
    from .files import atomic_open
    with atomic_open(path, "w", newline="") as fh:
        df.to_csv(fh, index=False)


def _partial_table(final):
    """The ``.partial`` file of the run whose final table is ``final`` (rows as they end),
    checked before any solve: ValueError naming --out when a link, a FIFO or a folder is there."""
    from .benchmarking.partial import PartialTable
    from .benchmarking.tasks import COLUMNS, versions
    partial = PartialTable(final, COLUMNS + list(versions()))
    try:
        partial.check()
    except ValueError as exc:
        raise ValueError(f"--out: {exc}") from None
    return partial


def _save_final(write, partial):
    """``write()`` the final files, then remove the ``.partial`` file; if the write fails (a
    full disk), keep it and say where the rows are, in the error that names the file."""
    try:
        result = write()
    except OSError as exc:
        partial.close()
        if not partial.rows or exc.errno is None:
            raise
        raise OSError(exc.errno, f"{exc.strerror or exc} (the {partial.rows} finished rows are "
                                 f"kept in {partial.path})", exc.filename) from exc
    partial.discard()
    return result


def _save_interrupted(stopped, write, partial, where) -> None:
    """A run stopped by Ctrl-C, SIGTERM or SIGHUP: save what it did (``write()``; a second
    signal meanwhile is ignored, :func:`_signals_stop_the_run`), say so on stderr, and stop
    (re-raise, exit 130, 143 or 129)."""
    table = stopped.run.table
    if table.empty:  # nothing started: keep the previous files as they are
        _tell("no solve had started; nothing saved")
        raise stopped
    cut = int((table["status"] == "interrupted").sum())
    try:
        _save_final(write, partial)
        saved = f"saved to {where}"
    except OSError as exc:
        saved = f"not saved: {_one_line(exc)}"
    solves = "solve" if len(table) == 1 else "solves"
    _tell(f"{len(table) - cut} finished and {cut} interrupted {solves} {saved}")
    raise stopped


def _tell(message: str) -> None:
    """``message`` on stderr, if it can still be written (after SIGHUP the terminal is gone)."""
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr)



def _cmd_check(args) -> int:
    """Exit 1 when a solve claims an optimum that disagrees with its stored value or could not
    run (:func:`.benchmarking.compare.exit_status`), 0 otherwise."""
    from .benchmarking import compare
    from .benchmarking.runner import RunInterrupted
    from .catalog import cvxpy_solvers, registry
    from .files import check_writable
    _quiet_start(args)
    ids = _problem_ids(args.problems, args.tier)
    _reference_folder()
    solvers = cvxpy_solvers.resolve(args.cvxpy)
    native = compare.CHECK_METHODS if args.native is None else registry.check_names(args.native)
    if not solvers and not native:
        raise ValueError("--cvxpy and --native select no solver")
    out = check_writable(args.out, name="--out")
    partial = _partial_table(out)
    with _working("check"):
        try:
            df = compare.run(ids, solvers, native, progress=not args.no_progress,
                             time_limit=args.time_limit, tol=args.tol, on_row=partial.append)
        except RunInterrupted as stopped:
            _save_interrupted(stopped, lambda: _save_csv(stopped.run.table, out), partial, out)
        _save_final(lambda: _save_csv(df, out), partial)  # saved before anything is printed
    print(compare.format_table(df))
    return _print_summary(df, f"{_plural(len(df), 'solve')} of {_plural(len(ids), 'problem')}",
                          f"table saved to {args.out}", args.time_limit)


def _print_summary(df, counted: str, saved: str, time_limit) -> int:
    """The summary of a run's table ``df`` (one line per solver, then the totals), the rows
    that fail the run on stderr; returns the exit status."""
    from .benchmarking import compare
    kinds = compare.outcomes(df)
    print("\n" + compare.format_summary(compare.summary(df, time_limit=time_limit)))
    counts = ", ".join(f"{int((kinds == k).sum())} {k}" for k in compare.OUTCOMES)
    print(f"\n{counted}: {counts}\n(solved: within tolerance of the stored value; "
          f"suboptimal: stopped without a certificate,\nsuch as a fixed iteration budget; "
          f"disagrees: claims an optimum the stored value contradicts)\n{saved}")
    bad = df[(kinds == "disagrees") | df["status"].map(compare.broken)]
    if len(bad):
        print("DISAGREEMENTS (or solves that could not run):\n" + compare.format_table(bad),
              file=sys.stderr)
    return EXIT_DISAGREEMENT if compare.exit_status(df) else 0


def _plural(count: int, noun: str) -> str:
    """``"1 solve"``, ``"2 solves"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _cmd_reference(args) -> int:
    """Exit 1 when a stored value disagrees (verify failures, refused replacements), 2 on bad
    arguments (an unknown problem ID, before any work)."""
    from . import catalog
    from .data import datasets
    from .catalog import reference
    ids = list(dict.fromkeys(args.only)) if args.only else catalog.problem_ids(tier=args.tier)
    for pid in ids:
        catalog.get(pid)
    if args.action == "verify":
        _reference_folder()
    if args.action in ("regenerate", "migrate"):
        try:
            if args.action == "migrate":
                actions = reference.migrate(ids)
            else:
                from tqdm.auto import tqdm
                actions = reference.regenerate(ids, accept_changes=args.accept_changes,
                                               progress=lambda xs: tqdm(xs, desc="reference"))
        except reference.ReferenceError as exc:
            for line in str(exc).splitlines():
                print(line.strip(), file=sys.stderr)
            return 1
        for pid, action in actions.items():
            print(f"{pid}: {action}")
        return 0
    failures, skipped = [], []
    for pid in ids:
        try:
            reference.verify(pid, resolve=not args.no_resolve)
        except reference.ReferenceError as exc:
            failures.append(str(exc))
        except FileNotFoundError as exc:
            if reference.dataset_provenance(catalog.get(pid).instance) is None:
                raise
            skipped.append(f"{pid}: skipped, its data set is not available: {exc}")
    for line in skipped + failures:
        print(line, file=sys.stderr)
    checked = len(ids) - len(skipped)
    checks = "fingerprints (instance and problem definition)" + (
        "" if args.no_resolve else
        f" and a re-solve by the project's certified solvers (within {reference.RESOLVE_RTOL:g})")
    values = "stored value matches its" if checked == 1 else "stored values match their"
    print(f"{checked - len(failures)} of {checked} {values} {checks}"
          + (f"; {len(skipped)} skipped (data set not available, see "
             f"{datasets.LIBSVM_ENV_VAR} and {datasets.ENV_VAR})" if skipped else ""))
    return 1 if failures else 0


def _cmd_list(args) -> int:
    from . import catalog
    ids = _problem_ids(args.problems, args.tier)
    rows = [(pid, spec.instance, spec.formulation, f"{spec.lam:g}", spec.tier,
             _options_text(spec.options)) for pid, spec in ((pid, catalog.get(pid)) for pid in ids)]
    header = ("problem", "instance", "formulation", "lambda", "tier", "options")
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header) - 1)]
    for r in [header, *rows]:
        print("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)) + "  " + r[-1])
    print(f"\n{_plural(len(ids), 'problem')} of tier {args.tier!r}"
          + ("" if args.tier == "all" else " (--tier all for every tier)"))
    return 0


def _options_text(options: dict) -> str:
    """A problem's options as ``key=value`` pairs (``penalty=l2 form=compact``)."""
    return " ".join(f"{k}={v}" for k, v in sorted(options.items())) or "-"


def _cmd_generate(args) -> int:
    from . import catalog
    from ._validation import check_choice
    from .benchmarking.instances import save_instance
    from .files import check_writable
    known = catalog.load_catalog().instances
    names = list(dict.fromkeys(args.instances or known))  # each once
    for name in names:  # every name before the first file
        check_choice(name, "instance", known)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {out} is not a folder")
    for name in names:  # every file before the first is written
        check_writable(out / f"{name}.npz", name="--out")
    with _working("generate"):
        for name in names:
            path = save_instance(name, out)
            print(f"{name}\t{path}")
    return 0


def _resolve_solver(problem_id: str, solver: str):
    """A Task kind for a solver name given on the command line; ValueError when the solver does
    not apply to the problem (the table of ``check`` and ``bench``)."""
    from . import catalog
    from .catalog import cvxpy_solvers, registry
    spec = catalog.get(problem_id)  # unknown problems are an error here, not a row
    if "." in solver:
        methods = registry.methods(spec)
        if solver not in methods:
            raise ValueError(f"project solver {solver!r} does not solve {problem_id!r}; "
                             f"available: {methods or 'none (dual or direct-form problem)'}")
        return "native", solver
    return "cvxpy", cvxpy_solvers.check_handles(solver, spec.problem_class, problem_id).name


def _solve_within_time_limit(task) -> dict:
    """The row of ``task``, solved in a worker process killed at ``task.timeout``
    (:class:`~.benchmarking.executors.SerialExecutor`), so that the solve ends by its limit
    whatever the solver (ECOS has no limit of its own; CVXPY's compilation and SCS's set-up
    are not counted in a solver's own); a solve cut short has the row status "timeout". The
    worker warms the solver up first, so its time is the solve's, not numba's compilation."""
    from .benchmarking.executors import SerialExecutor
    [(_, row)] = list(SerialExecutor().run([task]))
    return row


def _cmd_solve(args) -> int:
    from .benchmarking.tasks import Task
    _quiet_start(args)
    kind, solver = _resolve_solver(args.problem, args.solver)
    _reference_folder()
    from .catalog.reference import load_reference
    load_reference(args.problem)  # a malformed stored record: a usage error, before the solve
    task = Task(args.problem, kind, solver, tol=args.tol, timeout=args.time_limit)
    what = f"solving {args.problem} with {solver}"
    with _working(what):
        row = _solve_within_time_limit(task)
    if str(row.get("status", "")).startswith("error"):  # an exception in the worker process
        raise CommandFailed(f"{what} failed: {str(row['error']).partition(' | ')[0]}")
    for name, value in _solve_lines(row):
        print(f"{name:<{_SOLVE_WIDTH}}  {value}")
    from .benchmarking.compare import exit_status
    return EXIT_DISAGREEMENT if exit_status(_one_row_table(row)) else 0


#: What ``solve`` prints: (label, row key, format; "s" for seconds).
_SOLVE_FIELDS = (("problem", "problem", ""), ("solver", "solver", ""), ("status", "status", ""),
                 ("objective", "objective", ".10g"), ("stored value", "reference", ".10g"),
                 ("relative error", "rel_error", ".1e"), ("tolerance", "rtol", ".0e"),
                 ("certified gap", "gap", ".1e"), ("iterations", "iterations", "d"),
                 ("time", "time", "s"), ("  solve", "solve_time", "s"),
                 ("  compilation", "compile_time", "s"), ("  setup", "setup_time", "s"),
                 ("warm-up (not timed)", "warmup_time", "s"), ("note", "reference_note", ""),
                 ("error", "error", ""))
_SOLVE_WIDTH = max(len(label) for label, _, _ in _SOLVE_FIELDS)


def _solve_lines(row: dict):
    """``(label, text)`` of every field of a ``solve`` row that has a value."""
    for label, key, spec in _SOLVE_FIELDS:
        value = row.get(key)
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            continue
        if spec == "s":
            text = f"{float(value):.3f} s"
        elif spec == "d":
            text = f"{int(value)}"
        elif spec:
            text = format(float(value), spec)
        else:
            text = str(value)
        yield label, text


def _one_row_table(row: dict):
    import pandas as pd
    return pd.DataFrame([row])


def _report_paths(out_dir, metric) -> dict:
    from .benchmarking.html_report import report_paths
    return report_paths(out_dir, metric)


def _write_reports(df, out_dir, metric, problems_set, figure: bool = True, *, curves=None,
                   metadata=None, sources=None):
    """Save the report (``benchmarking.html_report``: comparison table, figures unless
    ``figure`` is False, report.html) in ``out_dir``, created only now; then print the table.
    Returns ``(paths written, errors)``: a file that cannot be written (OSError, naming it)
    does not stop the others."""
    from .benchmarking import reports
    from .benchmarking.html_report import write_report
    done = write_report(df, out_dir, curves=curves, metadata=metadata, metric=metric,
                        problems=problems_set, figures=figure, sources=sources)
    for message in done.messages:
        print(message, file=sys.stderr)
    print(reports.format_comparison(reports.comparison_table(df)))
    return [str(p) for p in done.written], done.errors


def _figures_available() -> bool:
    """Whether matplotlib is installed; if not, say on stderr that no figure is drawn."""
    from .benchmarking.reports import matplotlib_available
    if matplotlib_available():
        return True
    print("matplotlib is not installed: no figures (the report has the tables only; install "
          "the 'plots' extra)", file=sys.stderr)
    return False


def _report_dir(table) -> Path:
    """``<stem>_report`` beside a results table (``<stem>.csv``, ``<stem>.parquet``, or the
    ``<stem>.csv.partial`` file of a run that did not end)."""
    from .benchmarking.runner import table_paths
    table = Path(table)
    csv = table_paths(table.with_suffix("") if table.suffix == ".partial" else table)["csv"]
    return csv.parent / (csv.stem + "_report")


def _check_writable(paths) -> None:
    from .files import check_writable
    for path in paths:
        check_writable(path, name="--out")


def _cmd_bench(args) -> int:
    """Exit 1 when a solve claims an optimum that disagrees with its stored value or could not
    run (as ``check``), 0 otherwise: a fixed-budget protocol's answer is suboptimal, not
    wrong."""
    from .benchmarking import benchmark, make_tasks, save_run
    from .benchmarking.executors import make_executor
    from .benchmarking.provenance import new_run_id
    from .benchmarking.runner import RunInterrupted, parquet_available, run_folder, run_paths
    _quiet_start(args)
    ids = _problem_ids(args.problems, args.tier)
    _reference_folder()
    if args.scheduler and args.executor != "dask":
        raise ValueError("--scheduler needs --executor dask")
    if args.executor == "dask":  # an extra: missing, a usage error now, not exit 3 later
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise ValueError("--executor dask: dask.distributed is not installed (install the "
                             "'dask' extra)") from None
    tasks = make_tasks(ids, cvxpy=args.cvxpy, native=args.native, repeats=args.repeats,
                       tol=args.tol, timeout=args.time_limit, curves=args.curves)
    executor = make_executor(args.executor, n_workers=args.workers, scheduler=args.scheduler)
    run_id = new_run_id()
    paths = run_paths(args.out, run_id)
    from .benchmarking.reports import matplotlib_available
    parquet, figure = parquet_available(), matplotlib_available()
    report = _report_paths(paths["report"], "time")
    _check_writable([paths["csv"], paths["metadata"], report["comparison"], report["html"],
                     *([paths["parquet"]] if parquet else []),
                     *([report["profile"]] if figure else [])])
    # said after the output is known to be writable, so a refusal stays one line
    if not parquet:
        print("pyarrow is not installed: the tables are written as CSV only (install the "
              "'parquet' extra for Parquet files)", file=sys.stderr)
    if not figure:
        _figures_available()
    partial = _partial_table(paths["csv"])
    with _working("bench"):
        try:
            run = benchmark(tasks, executor, progress=not args.no_progress, run_id=run_id,
                            command=["infpush-cvx", *(getattr(args, "argv", None) or [])],
                            on_row=partial.append)
        except RunInterrupted as stopped:
            _save_interrupted(stopped, lambda: save_run(stopped.run, args.out, parquet=parquet),
                              partial, run_folder(args.out))
        saved = _save_final(lambda: save_run(run, args.out, parquet=parquet), partial)
        written, errors = _write_reports(
            run.table, paths["report"], "time", args.problems_set, figure, curves=run.curves,
            metadata=run.metadata, sources={k: str(saved[k]) for k in ("csv", "curves_csv")
                                            if k in saved})
    code = _print_summary(run.table, f"{_plural(len(run.table), 'solve')} ("
                          f"{_plural(len(tasks), 'task')})", f"run {run_id} written: "
                          + ", ".join([*map(str, saved.values()), *written]), args.time_limit)
    if errors:  # after every summary: the results are saved, a report is not
        raise errors[0]
    return code


def _report_inputs(args):
    """``(results path, curves path or None)`` of ``report``: a curves table given as TABLE
    (``<run>_curves.csv``) stands for its run, whose results table is beside it; without
    --curves, the curves saved beside the results table are used when there are any."""
    from .benchmarking.curves import curves_path_of, is_curves_path, results_path_of
    from .benchmarking.runner import stem_table
    table, curves = Path(args.table), Path(args.curves) if args.curves else None
    if is_curves_path(table):
        curves, table = curves or table, results_path_of(table)
    elif table.suffix not in (".csv", ".parquet", ".partial"):
        table = stem_table(table)  # a stem: its Parquet file (if readable), else its CSV
    return table, curves if curves is not None else curves_path_of(table)


def _cmd_report(args) -> int:
    from .benchmarking import load_metadata, load_results
    from .benchmarking.curves import load_curves
    table, curves_file = _report_inputs(args)
    df = load_results(table)  # exactly the named file; ValueError naming it if malformed
    curves = load_curves(curves_file) if curves_file is not None else None
    try:
        metadata = load_metadata(table)
    except ValueError as exc:  # none beside the table, or not JSON: the table's own record
        metadata = None
        if table.with_suffix(".json").exists():
            print(f"run metadata not used: {_one_line(exc)}", file=sys.stderr)
    out = Path(args.out) if args.out else _report_dir(table)
    figure = _figures_available()
    paths = _report_paths(out, args.metric)
    outputs = [paths["comparison"], paths["html"], *([paths["profile"]] if figure else [])]
    _check_writable(outputs)
    _check_not_an_input(outputs, {"table": table, "curves": curves_file})
    sources = {"results": str(table), **({"curves": str(curves_file)} if curves_file else {})}
    with _working("report"):
        written, errors = _write_reports(df, out, args.metric, args.problems_set, figure,
                                         curves=curves, metadata=metadata, sources=sources)
    for p in written:
        print(f"written: {p}")
    if errors:
        raise errors[0]
    return 0


def _check_not_an_input(outputs, inputs: dict) -> None:
    """ValueError naming --out when an output file is one of the ``inputs`` (``{role: path}``):
    ``report run/comparison.csv --out run`` replaced the table it read by its comparison."""
    for out in outputs:
        for role, path in inputs.items():
            if path is None or not out.exists():
                continue
            with contextlib.suppress(OSError):
                if os.path.samefile(out, path):
                    raise ValueError(f"--out: {out} is the {role} the report reads ({path}); "
                                     f"choose another --out")


def _cmd_experiments(args) -> int:
    from .evaluation.experiments.command import run
    _quiet_start(args)
    return run(args)


def _cmd_prox(args) -> int:
    import pandas as pd
    from ._validation import check_choice
    from .benchmarking.prox_timing import time_projection
    from .prox import DEPRECATED_METHODS, METHODS
    for method in args.methods or ():  # the old names for one release (DeprecationWarning)
        check_choice(method, "--methods", (*METHODS, *DEPRECATED_METHODS))
    if args.out:
        _check_writable([args.out])
    with _working("prox"):
        df = time_projection(args.sizes, args.factors, args.methods, repeats=args.repeats,
                             seed=args.seed)
        with pd.option_context("display.width", 200):
            print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        if args.out:
            _save_csv(df, args.out)
            print(f"written: {args.out}")
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (``infpush-cvx: error: ...``) and exit status 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def _deprecated(new: str):
    """An argparse action for an old spelling of option ``new``: stores as ``new`` does and
    says on stderr that the spelling is deprecated (kept for one release)."""
    class Deprecated(argparse._StoreAction):
        def __call__(self, parser, namespace, values, option_string=None):
            print(f"{parser.prog}: warning: {option_string} is deprecated and will be removed; "
                  f"use {new}", file=sys.stderr)
            super().__call__(parser, namespace, values, option_string)
    return Deprecated


def _add_time_limit(p, what: str) -> None:
    p.add_argument("--time-limit", dest="time_limit", type=time_limit_seconds,
                   default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help=f"time limit of {what} in seconds, given to the solver as its own "
                        f"(default {DEFAULT_TIME_LIMIT:g}; for solvers without one, such as "
                        f"ECOS, see the top --help)")
    p.add_argument("--timeout", dest="time_limit", type=time_limit_seconds,
                   help=argparse.SUPPRESS, action=_deprecated("--time-limit"))


def _add_selection(p, native_default: str) -> None:
    """The options that select problems and solvers, the same in ``check`` and ``bench``."""
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help="catalog tier: core (default), real (subsets of real data sets, large "
                        "for CVXPY) or all")
    p.add_argument("--cvxpy", nargs="*", metavar="SOLVER",
                   help="CVXPY solvers, any installed one (OSQP, SCIPY, ...), or all (default: "
                        "the comparison set CLARABEL ECOS SCS HIGHS, if installed; give none "
                        "for no CVXPY solver)")
    p.add_argument("--native", nargs="*", metavar="METHOD",
                   help=f"project solver methods, labels or modules, e.g. fista, "
                        f"infinite_push.working_set, rank2plan (default: {native_default}; give "
                        f"none for no project solver)")
    p.add_argument("--tol", type=gap_tolerance, default=1e-6,
                   help="target gap of project solvers (default 1e-6)")


def _add_verbose(p) -> None:
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log progress to stderr (-vv: debug details); quiet by default")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="infpush-cvx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traceback", action="store_true",
                        help=f"print the full traceback of an unexpected failure "
                             f"(or set {TRACEBACK_ENV_VAR}=1)")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="solve the catalog with every installed solver and compare "
                                     "with the stored optimal values (the main job)")
    _add_selection(p, "the certified ones, working_set smoothing_newton fista ccg newton "
                      "interior_point")
    p.add_argument("--solvers", dest="cvxpy", nargs="+", help=argparse.SUPPRESS,
                   action=_deprecated("--cvxpy"))
    _add_time_limit(p, "each solve")
    p.add_argument("--out", type=output_path, default="results/comparison.csv",
                   help="CSV output path (default results/comparison.csv; a symbolic link is "
                        "written through; rows are appended to OUT.partial as solves end)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_verbose(p)
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("reference", help="verify, (explicitly) regenerate or migrate stored "
                                         "values")
    p.add_argument("action", choices=["verify", "regenerate", "migrate"],
                   help="verify: instance and problem-definition fingerprints, and a re-solve "
                        "of each value by the project's certified solvers; regenerate: solve "
                        "with CVXPY and store new values; migrate: add the problem-definition "
                        "fingerprint to records stored before it existed (values untouched)")
    p.add_argument("--only", nargs="+", metavar="ID", help="only these problem IDs")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help="catalog tier when --only is not given: core (default), real or all")
    p.add_argument("--no-resolve", action="store_true",
                   help="verify: fingerprints only, no re-solve of the stored values")
    p.add_argument("--accept-changes", action="store_true",
                   help="regenerate: replace stored records that differ (value beyond "
                        "tolerance, instance, definition, unreadable) and say what changed")
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("list", help="list the catalog problems")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help="catalog tier: core (default, as check and bench), real or all")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("generate", help="write catalog instances to .npz files with fingerprints")
    p.add_argument("--instances", nargs="+", metavar="NAME", help="instance names (default: all)")
    p.add_argument("--out", type=output_path, required=True, help="output directory")
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("solve", help="solve one catalog problem with one solver")
    p.add_argument("problem", help="catalog problem ID (see `infpush-cvx list`)")
    p.add_argument("--solver", required=True,
                   help="any installed CVXPY solver (CLARABEL, ECOS, SCS, HIGHS, OSQP, ...) or "
                        "project solver method (infinite_push.working_set, ranksvm.fista, "
                        "rank2plan.ccg, ...)")
    p.add_argument("--tol", type=gap_tolerance, default=1e-6,
                   help="target gap of project solvers")
    _add_time_limit(p, "the solve")
    _add_verbose(p)
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("bench", help="run a benchmark: problems x solvers x repeats")
    _add_selection(p, "all that apply")
    p.add_argument("--repeats", type=repeat_count, default=1,
                   help=f"runs of every task (default 1, at most {MAX_REPEATS})")
    _add_time_limit(p, "every task (worker processes are killed at it)")
    p.add_argument("--executor", choices=["serial", "processes", "dask"], default="processes",
                   help="where tasks run (default: local processes, one BLAS thread each)")
    p.add_argument("--workers", type=worker_count,
                   help=f"worker processes (default: CPU count; at most {MAX_WORKERS})")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address (default: a local cluster)")
    p.add_argument("--curves", action="store_true",
                   help="also save the project solvers' convergence curves (one row per "
                        "iteration: objective, gap, time) to OUT/<run>_curves.csv/.parquet")
    p.add_argument("--out", type=output_path, default="results/bench", metavar="OUT",
                   help="folder of the runs (default results/bench; a .csv or .parquet suffix "
                        "is dropped): every run writes new files OUT/<UTC time>_<id>.csv, "
                        ".parquet and .json (metadata) and the folder OUT/<UTC time>_<id>_report/"
                        ", never replacing any file")
    p.add_argument("--problems-set", choices=["common", "all"], default="common",
                   help="profile on the problems every solver attempted (default; when there "
                        "is none, as 'all') or on all, each solver on those it attempted")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_verbose(p)
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("report", help="HTML report of a results table: comparison, "
                                      "performance profile, suboptimality against time")
    p.add_argument("table", help="results table: exactly this .csv or .parquet file (a path "
                                 "without suffix: its .parquet file, else its .csv file); a "
                                 "run's curves table (<run>_curves.csv) stands for its run")
    p.add_argument("--curves", metavar="FILE",
                   help="convergence curves (bench --curves) for the suboptimality figures "
                        "(default: <run>_curves.parquet or .csv beside the table, if any)")
    p.add_argument("--out", type=output_path, help="output directory (default: <table>_report)")
    p.add_argument("--metric", default="time",
                   choices=["time", "solve_time", "compile_time", "setup_time", "iterations"],
                   help="performance measure of the profiles (default: total time)")
    p.add_argument("--problems-set", choices=["common", "all"], default="common",
                   help="profile on the problems every solver attempted (default; when there "
                        "is none, as 'all') or on all, each solver on those it attempted")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("experiments", help="the evaluation experiments (Agarwal 2011, "
                                           "Perceptron@K): result table and figure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    from .evaluation.experiments.command import add_experiments
    add_experiments(p.add_subparsers(dest="which", required=True, metavar="EXPERIMENT"),
                    default_out=True)
    p.set_defaults(func=_cmd_experiments)

    p = sub.add_parser("prox", help="time the l1,inf projection core")
    p.add_argument("--sizes", nargs="+", type=prox_size, default=[100, 1000],
                   help=f"n of n x n (at most {MAX_PROX_SIZE})")
    p.add_argument("--factors", nargs="+", type=positive_float, default=[0.001, 0.01, 0.1, 0.5],
                   help="radius as a fraction of the matrix's l1,inf norm")
    p.add_argument("--methods", nargs="+", help="projection methods (default: all)")
    p.add_argument("--repeats", type=positive_int, default=5,
                   help="timed calls per case (default 5)")
    p.add_argument("--seed", type=nonnegative_int, default=0,
                   help="seed of the Gaussian matrices")
    p.add_argument("--out", type=output_path, help="CSV output path")
    p.set_defaults(func=_cmd_prox)

    for p in sub.choices.values():  # after the subcommand too; SUPPRESS keeps the top's value
        p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="print the full traceback of an unexpected failure")
    return parser


def run_reporting_errors(work, *, prog: str = "infpush-cvx", show_traceback: bool = False) -> int:
    """``work()``'s exit status, with its exceptions reported as one line on stderr: exit 2 for
    ValueError, TypeError and OSError (usage errors, unreadable or unwritable files), 3 for any
    other exception (with a hint to the full traceback, which ``show_traceback`` or the
    environment variable ``TRACEBACK_ENV_VAR`` prints), 130 for Ctrl-C."""
    show_traceback = show_traceback or os.environ.get(TRACEBACK_ENV_VAR, "") not in ("", "0")
    try:
        with _named_stdout():
            code = work()
            sys.stdout.flush()
        return code
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", None) or getattr(getattr(exc, "cause", None), "signum",
                                                         None) or signal.SIGINT
        _tell(f"{prog}: " + ("interrupted" if signum == signal.SIGINT else "terminated"
                             if signum == signal.SIGTERM else
                             f"stopped by {signal.Signals(signum).name}"))
        return 128 + int(signum)
    except BrokenPipeError:
        # the reader went away (``infpush-cvx list | head``): stop quietly, with the status of a
        # process ended by SIGPIPE, and keep Python from failing again when it flushes stdout
        _stdout_to_devnull()
        return 128 + 13
    except Exception as exc:
        error = exc
    if isinstance(error, OSError) and error.filename == STDOUT:
        with contextlib.suppress(OSError, ValueError):
            _stdout_to_devnull()  # what was left unwritten goes nowhere at exit
    if isinstance(error, (ValueError, TypeError, OSError)):
        code, message = EXIT_USAGE, _in_command_line_words(_one_line(error))
    else:
        code = EXIT_FAILURE
        message = _one_line(error) if isinstance(error, CommandFailed) else \
            f"unexpected {type(error).__name__}: {_one_line(error)}"
        if not show_traceback:
            message += (f" (run again with --traceback, or {TRACEBACK_ENV_VAR}=1, for the full "
                        f"traceback)")
    if show_traceback:
        traceback.print_exception(error)
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


#: How the errors name the standard output.
STDOUT = "<stdout>"


class _NamedStream:
    """A text stream whose write errors (``> /dev/full``: ENOSPC) name it, so the one-line
    error says the output, not a file, could not be written (a closed pipe stays a
    BrokenPipeError: the reader went away)."""

    def __init__(self, stream, name: str):
        self._stream, self._name = stream, name

    def _named(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise named_os_error(exc, self._name) from exc

    def write(self, text):
        return self._named(self._stream.write, text)

    def flush(self):
        return self._named(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _named_stdout():
    stream = sys.stdout
    sys.stdout = _NamedStream(stream, STDOUT)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _NamedStream):  # unless the command replaced it
            sys.stdout = stream


def _stop(signum, frame):
    """The first SIGINT, SIGTERM or SIGHUP: stop the run (KeyboardInterrupt, or
    :class:`Terminated`), and ignore the next ones while it saves what it did (a second Ctrl-C
    a moment after the first cut the save short: the final table was never written)."""
    for handled in list(_STOP_HANDLED):
        signal.signal(handled, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


#: The signals :func:`_stop` handles while a command runs.
_STOP_HANDLED: set = set()


@contextlib.contextmanager
def _signals_stop_the_run():
    """SIGINT, SIGTERM, and SIGHUP (the terminal closed; unless ignored, as under ``nohup``)
    call :func:`_stop` while the command runs (main thread only), so the run stops as on Ctrl-C,
    saving its rows, removing its temporary files and killing its workers (SIGHUP's default
    action ended the process at once and left them solving). SIGINT and SIGHUP are left as
    they are when their handler is not the default (ignored for a background job, or by
    ``nohup``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    if hasattr(signal, "SIGHUP"):
        defaults[signal.SIGHUP] = signal.SIG_DFL
    previous = {}
    for signum, default in defaults.items():
        if signum == signal.SIGTERM or signal.getsignal(signum) is default:
            previous[signum] = signal.signal(signum, _stop)
    _STOP_HANDLED.update(previous)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _STOP_HANDLED.difference_update(previous)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


#: The library's words for what the command line calls otherwise: its errors name Python
#: arguments (``data_dir=...``) and functions, the command line's name flags and commands.
_COMMAND_LINE_WORDS = (
    (re.compile(r"by passing data_dir=\.\.\., by"), "with --data-dir (experiments) or by"),
    (re.compile(r"no data_dir argument"), "no --data-dir"),
    (re.compile(r",? or by calling the loader with download=True when online"), ""),
    (re.compile(r"pass directory=\.\.\. or set"), "set"),
    (re.compile(r"see infpush_cvx\.catalog\.problem_ids\(\)"),
     "see `infpush-cvx list --tier all`"),
)


def _in_command_line_words(message: str) -> str:
    """``message`` with the library's Python argument names replaced by the command line's
    flags and commands (:data:`_COMMAND_LINE_WORDS`)."""
    for pattern, words in _COMMAND_LINE_WORDS:
        message = pattern.sub(words, message)
    return message


class _ClosedStream:
    """The standard output when it was closed (``infpush-cvx list >&-``: ``sys.stdout`` is None):
    a write fails naming it (EBADF), a usage error (exit 2), not an AttributeError (exit 3)."""

    def __init__(self, name: str):
        self.name = name

    def _closed(self, *args):
        raise OSError(errno.EBADF, "closed", self.name)

    write = _closed

    def flush(self):  # nothing was written; Python flushes at exit
        pass

    def fileno(self):
        raise io.UnsupportedOperation(f"{self.name} is closed")

    def isatty(self):
        return False


def _standard_streams() -> None:
    """A closed stdout writes nowhere with an error (:class:`_ClosedStream`); a closed stderr
    (``2>&-``) becomes /dev/null: the progress bar and messages are lost, not the run (the
    progress bar's first write failed and ended ``check`` with exit 1 and no message). The
    closed descriptors 0-2 are opened on /dev/null first, so that no file the run opens (its
    .partial table) takes their number and receives what a solver prints."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    if sys.stdout is None:
        sys.stdout = _ClosedStream(STDOUT)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def main(argv=None) -> int:
    _standard_streams()
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    with _signals_stop_the_run():
        return run_reporting_errors(lambda: args.func(args), show_traceback=args.traceback)


if __name__ == "__main__":
    sys.exit(main())
