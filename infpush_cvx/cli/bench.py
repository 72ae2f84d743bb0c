"""The benchmark commands: ``bench`` (problems x solvers x repeats, saved as a run with its
report), ``report`` (the HTML report of a results table) and ``prox`` (the l1,inf projection
core against the copy floor)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from .arguments import (MAX_PROX_SIZE, MAX_REPEATS, MAX_WORKERS, add_problems_set,
                        add_selection, add_verbose, nonnegative_int, output_path, positive_float,
                        positive_int, prox_size, repeat_count, worker_count)
from .common import check_outputs, one_line, plural, problem_ids, save_csv, start_solving, working
from .runs import partial_table, print_summary, save_final, save_interrupted


def _cmd_bench(args) -> int:
    """Exit 1 when a solve claims an optimum that disagrees with its stored value or could not
    run (as ``check``), 0 otherwise: a fixed-budget protocol's answer is suboptimal, not
    wrong."""
    from ..benchmarking import benchmark, make_tasks, save_run
    from ..benchmarking.executors import make_executor
    from ..benchmarking.provenance import new_run_id
    from ..benchmarking.reports import matplotlib_available
    from ..benchmarking.runner import RunInterrupted, parquet_available, run_folder, run_paths
    ids = start_solving(args, lambda: problem_ids(args.problems, args.tier))
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
    parquet, figure = parquet_available(), matplotlib_available()
    check_outputs([paths["csv"], paths["metadata"], *([paths["parquet"]] if parquet else []),
                   *_report_outputs(paths["report"], "time", figure)])
    _say_missing_extras(parquet, figure)
    partial = partial_table(paths["csv"])
    with working("bench"):
        try:
            run = benchmark(tasks, executor, progress=not args.no_progress, run_id=run_id,
                            command=["infpush-cvx", *(getattr(args, "argv", None) or [])],
                            on_row=partial.append)
        except RunInterrupted as stopped:
            save_interrupted(stopped, lambda: save_run(stopped.run, args.out, parquet=parquet),
                             partial, run_folder(args.out))
        saved = save_final(lambda: save_run(run, args.out, parquet=parquet), partial)
        written, errors = _write_reports(
            run.table, paths["report"], "time", args.problems_set, figure, curves=run.curves,
            metadata=run.metadata, sources={k: str(saved[k]) for k in ("csv", "curves_csv")
                                            if k in saved})
    code = print_summary(run.table, f"{plural(len(run.table), 'solve')} ("
                         f"{plural(len(tasks), 'task')})", f"run {run_id} written: "
                         + ", ".join([*map(str, saved.values()), *written]), args.time_limit)
    if errors:  # after every summary: the results are saved, a report is not
        raise errors[0]
    return code


def _write_reports(df, out_dir, metric, problems_set, figure: bool = True, *, curves=None,
                   metadata=None, sources=None):
    """Save the report (``benchmarking.html_report``: comparison table, figures unless
    ``figure`` is False, report.html) in ``out_dir``, created only now; then print the table.
    Returns ``(paths written, errors)``: a file that cannot be written (OSError, naming it)
    does not stop the others."""
    from ..benchmarking import reports
    from ..benchmarking.html_report import write_report
    done = write_report(df, out_dir, curves=curves, metadata=metadata, metric=metric,
                        problems=problems_set, figures=figure, sources=sources)
    for message in done.messages:
        print(message, file=sys.stderr)
    print(reports.format_comparison(reports.comparison_table(df)))
    return [str(p) for p in done.written], done.errors


def _report_outputs(out_dir, metric: str, figure: bool) -> list[Path]:
    """The files of the report in ``out_dir`` (:func:`_write_reports`): the comparison table,
    report.html and, with ``figure``, the performance profile of ``metric``."""
    from ..benchmarking.html_report import report_paths
    paths = report_paths(out_dir, metric)
    return [paths["comparison"], paths["html"], *([paths["profile"]] if figure else [])]


def _say_missing_extras(parquet: bool, figure: bool) -> None:
    """Say on stderr what a missing extra leaves out: Parquet tables, the figures. Said after
    the outputs are known to be writable, so that a refusal stays one line."""
    if not parquet:
        print("pyarrow is not installed: the tables are written as CSV only (install the "
              "'parquet' extra for Parquet files)", file=sys.stderr)
    if not figure:
        print("matplotlib is not installed: no figures (the report has the tables only; "
              "install the 'plots' extra)", file=sys.stderr)


def _report_dir(table) -> Path:
    """``<stem>_report`` beside a results table (``<stem>.csv``, ``<stem>.parquet``, or the
    ``<stem>.csv.partial`` file of a run that did not end)."""
    from ..benchmarking.runner import table_paths
    table = Path(table)
    csv = table_paths(table.with_suffix("") if table.suffix == ".partial" else table)["csv"]
    return csv.parent / (csv.stem + "_report")


def _report_inputs(args):
    """``(results path, curves path or None)`` of ``report``: a curves table given as TABLE
    (``<run>_curves.csv``) stands for its run, whose results table is beside it; without
    --curves, the curves saved beside the results table are used when there are any."""
    from ..benchmarking.curves import curves_path_of, is_curves_path, results_path_of
    from ..benchmarking.runner import stem_table
    table, curves = Path(args.table), Path(args.curves) if args.curves else None
    if is_curves_path(table):
        curves, table = curves or table, results_path_of(table)
    elif table.suffix not in (".csv", ".parquet", ".partial"):
        table = stem_table(table)  # a stem: its Parquet file (if readable), else its CSV
    return table, curves if curves is not None else curves_path_of(table)


def _cmd_report(args) -> int:
    from ..benchmarking import load_metadata, load_results
    from ..benchmarking.curves import load_curves
    from ..benchmarking.reports import matplotlib_available
    table, curves_file = _report_inputs(args)
    df = load_results(table)  # exactly the named file; ValueError naming it if malformed
    curves = load_curves(curves_file) if curves_file is not None else None
    try:
        metadata = load_metadata(table)
    except ValueError as exc:  # none beside the table, or not JSON: the table's own record
        metadata = None
        if table.with_suffix(".json").exists():
            print(f"run metadata not used: {one_line(exc)}", file=sys.stderr)
    out = Path(args.out) if args.out else _report_dir(table)
    figure = matplotlib_available()
    outputs = _report_outputs(out, args.metric, figure)
    check_outputs(outputs)
    _check_not_an_input(outputs, {"table": table, "curves": curves_file})
    _say_missing_extras(True, figure)
    sources = {"results": str(table), **({"curves": str(curves_file)} if curves_file else {})}
    with working("report"):
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


def _cmd_prox(args) -> int:
    import pandas as pd
    from .._validation import check_choice
    from ..benchmarking.prox_timing import time_projection
    from ..prox import METHODS
    for method in args.methods or ():
        check_choice(method, "--methods", METHODS)
    if args.out:
        check_outputs([args.out])
    with working("prox"):
        df = time_projection(args.sizes, args.factors, args.methods, repeats=args.repeats,
                             seed=args.seed)
        with pd.option_context("display.width", 200):
            print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        if args.out:
            save_csv(df, args.out)
            print(f"written: {args.out}")
    return 0


def add_bench(sub) -> None:
    """The ``bench`` subcommand."""
    p = sub.add_parser("bench", help="run a benchmark: problems x solvers x repeats")
    add_selection(p, "all that apply", "every task (worker processes are killed at it)")
    p.add_argument("--repeats", type=repeat_count, default=1,
                   help=f"runs of every task (default 1, at most {MAX_REPEATS})")
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
    add_problems_set(p)
    add_verbose(p)
    p.set_defaults(func=_cmd_bench)


def add_report(sub) -> None:
    """The ``report`` subcommand."""
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
    add_problems_set(p)
    p.set_defaults(func=_cmd_report)


def add_prox(sub) -> None:
    """The ``prox`` subcommand."""
    p = sub.add_parser("prox", help="time the l1,inf projection core")
    p.add_argument("--sizes", nargs="+", type=prox_size, default=[100, 1000],
                   help=f"n of n x n (at most {MAX_PROX_SIZE})")
    p.add_argument("--factors", nargs="+", type=positive_float, default=[0.001, 0.01, 0.1, 0.5],
                   help="radius as a fraction of the matrix's l1,inf norm")
    p.add_argument("--methods", nargs="+", help="projection methods (default: all)")
    p.add_argument("--repeats", type=positive_int, default=5,
                   help="timed calls per case (default 5)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the Gaussian matrices")
    p.add_argument("--out", type=output_path, help="CSV output path")
    p.set_defaults(func=_cmd_prox)
