"""``check`` (every catalog problem against its stored value) and ``solve`` (one problem with
one solver)."""

from __future__ import annotations

import math

from .arguments import add_limits, add_selection, add_verbose, output_path
from .common import (EXIT_DISAGREEMENT, CommandFailed, plural, problem_ids, save_csv,
                     start_solving, working)
from .runs import partial_table, print_summary, save_final, save_interrupted


def _cmd_check(args) -> int:
    """Exit 1 when a solve claims an optimum that disagrees with its stored value or could not
    run (:func:`.benchmarking.compare.exit_status`), 0 otherwise."""
    from ..benchmarking import compare
    from ..benchmarking.runner import RunInterrupted
    from ..catalog import cvxpy_solvers, registry
    from ..files import check_writable
    ids = start_solving(args, lambda: problem_ids(args.problems, args.tier))
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


def _cmd_solve(args) -> int:
    import pandas as pd
    from ..benchmarking.compare import exit_status
    from ..benchmarking.executors import SerialExecutor
    from ..benchmarking.tasks import Task
    from ..catalog.reference import load_reference
    kind, solver = start_solving(args, lambda: _resolve_solver(args.problem, args.solver))
    load_reference(args.problem)  # a malformed stored record: a usage error, before the solve
    task = Task(args.problem, kind, solver, tol=args.tol, timeout=args.time_limit)
    what = f"solving {args.problem} with {solver}"
    with working(what):
        # in a worker process killed at the limit, so that the solve ends by it whatever the
        # solver (ECOS has no limit of its own; CVXPY's compilation and SCS's set-up are not
        # counted in a solver's own): a solve cut short has the row status "timeout". The worker
        # warms the solver up first, so its time is the solve's, not numba's compilation.
        [(_, row)] = list(SerialExecutor().run([task]))
    if str(row.get("status", "")).startswith("error"):  # an exception in the worker process
        raise CommandFailed(f"{what} failed: {str(row['error']).partition(' | ')[0]}")
    width = max(len(label) for label, _, _ in _SOLVE_FIELDS)
    for label, key, text in _SOLVE_FIELDS:
        value = row.get(key)
        if not (value is None or value == "" or (isinstance(value, float) and math.isnan(value))):
            print(f"{label:<{width}}  {text(value)}")
    return EXIT_DISAGREEMENT if exit_status(pd.DataFrame([row])) else 0


def _number(spec: str):
    return lambda value: format(float(value), spec)


#: What ``solve`` prints: (label, row key, text of the value); a field without a value is left
#: out.
_SOLVE_FIELDS = (("problem", "problem", str), ("solver", "solver", str),
                 ("status", "status", str), ("objective", "objective", _number(".10g")),
                 ("stored value", "reference", _number(".10g")),
                 ("relative error", "rel_error", _number(".1e")),
                 ("tolerance", "rtol", _number(".0e")), ("certified gap", "gap", _number(".1e")),
                 ("iterations", "iterations", lambda value: str(int(value))),
                 *((label, key, lambda value: f"{float(value):.3f} s") for label, key in (
                     ("time", "time"), ("  solve", "solve_time"),
                     ("  compilation", "compile_time"), ("  setup", "setup_time"),
                     ("warm-up (not timed)", "warmup_time"))),
                 ("note", "reference_note", str), ("error", "error", str))


def add_check(sub) -> None:
    """The ``check`` subcommand."""
    p = sub.add_parser("check", help="solve the catalog with every installed solver and compare "
                                     "with the stored optimal values (the main job)")
    add_selection(p, "the certified ones, working_set smoothing_newton fista ccg newton "
                     "interior_point", "each solve")
    p.add_argument("--out", type=output_path, default="results/comparison.csv",
                   help="CSV output path (default results/comparison.csv; a symbolic link is "
                        "written through; rows are appended to OUT.partial as solves end)")
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
    add_limits(p, "the solve")
    add_verbose(p)
    p.set_defaults(func=_cmd_solve)
