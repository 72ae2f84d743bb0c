"""``check`` (every catalog problem against its stored value) and ``solve`` (one problem with
one solver)."""

from __future__ import annotations

import math

from .arguments import add_selection, add_time_limit, add_verbose, gap_tolerance, output_path
from .common import (EXIT_DISAGREEMENT, CommandFailed, plural, problem_ids, quiet_start,
                     reference_folder, save_csv, working)
from .runs import partial_table, print_summary, save_final, save_interrupted

def _cmd_check(args) -> int:
    """Exit 1 when a solve claims an optimum that disagrees with its stored value or could not
    run (:func:`.benchmarking.compare.exit_status`), 0 otherwise."""
    from ..benchmarking import compare
    from ..benchmarking.runner import RunInterrupted
    from ..catalog import cvxpy_solvers, registry
    from ..files import check_writable
    quiet_start(args)
    ids = problem_ids(args.problems, args.tier)
    reference_folder()
    solvers = cvxpy_solvers.resolve(args.cvxpy)
    native = compare.CHECK_METHODS if args.native is None else registry.check_names(args.native)
    if not solvers and not native:
        raise ValueError("--cvxpy and --native select no solver")
    out = check_writable(args.out, name="--out")
    partial = partial_table(out)
    with working("check"):
        try:
            df = compare.run(ids, solvers, native, progress=not args.no_progress,
                             time_limit=args.time_limit, tol=args.tol, on_row=partial.append)
        except RunInterrupted as stopped:
            save_interrupted(stopped, lambda: save_csv(stopped.run.table, out), partial, out)
        save_final(lambda: save_csv(df, out), partial)  # saved before anything is printed
    print(compare.format_table(df))
    return print_summary(df, f"{plural(len(df), 'solve')} of {plural(len(ids), 'problem')}",
                         f"table saved to {args.out}", args.time_limit)


def _resolve_solver(problem_id: str, solver: str):
    """A Task kind for a solver name given on the command line; ValueError when the solver does
    not apply to the problem (the table of ``check`` and ``bench``)."""
    from .. import catalog
    from ..catalog import cvxpy_solvers, registry
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
    from ..benchmarking.executors import SerialExecutor
    [(_, row)] = list(SerialExecutor().run([task]))
    return row


def _cmd_solve(args) -> int:
    from ..benchmarking.tasks import Task
    quiet_start(args)
    kind, solver = _resolve_solver(args.problem, args.solver)
    reference_folder()
    from ..catalog.reference import load_reference
    load_reference(args.problem)  # a malformed stored record: a usage error, before the solve
    task = Task(args.problem, kind, solver, tol=args.tol, timeout=args.time_limit)
    what = f"solving {args.problem} with {solver}"
    with working(what):
        row = _solve_within_time_limit(task)
    if str(row.get("status", "")).startswith("error"):  # an exception in the worker process
        raise CommandFailed(f"{what} failed: {str(row['error']).partition(' | ')[0]}")
    for name, value in _solve_lines(row):
        print(f"{name:<{_SOLVE_WIDTH}}  {value}")
    from ..benchmarking.compare import exit_status
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


def add_check(sub) -> None:
    """The ``check`` subcommand."""
    p = sub.add_parser("check", help="solve the catalog with every installed solver and compare "
                                     "with the stored optimal values (the main job)")
    add_selection(p, "the certified ones, working_set smoothing_newton fista ccg newton "
                     "interior_point")
    add_time_limit(p, "each solve")
    p.add_argument("--out", type=output_path, default="results/comparison.csv",
                   help="CSV output path (default results/comparison.csv; a symbolic link is "
                        "written through; rows are appended to OUT.partial as solves end)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_verbose(p)
    p.set_defaults(func=_cmd_check)


def add_solve(sub) -> None:
    """The ``solve`` subcommand."""
    p = sub.add_parser("solve", help="solve one catalog problem with one solver")
    p.add_argument("problem", help="catalog problem ID (see `infpush-cvx list`)")
    p.add_argument("--solver", required=True,
                   help="any installed CVXPY solver (CLARABEL, ECOS, SCS, HIGHS, OSQP, ...) or "
                        "project solver method (infinite_push.working_set, ranksvm.fista, "
                        "rank2plan.ccg, ...)")
    p.add_argument("--tol", type=gap_tolerance, default=1e-6,
                   help="target gap of project solvers")
    add_time_limit(p, "the solve")
    add_verbose(p)
    p.set_defaults(func=_cmd_solve)
