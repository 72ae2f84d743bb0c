"""The ``infpush-cvx`` command line.

    infpush-cvx check [--problems PATTERN] [--tier core|real|all] [--solvers S ...]
                      [--out results/comparison.csv]
        The main job: solve the catalog with every installed solver, compare with the stored
        values, print and save the table; exit 1 on any disagreement. The catalog's "core" tier
        by default; the "real" tier (subsets of real data sets) is large for CVXPY.
    infpush-cvx reference verify | regenerate [--only ID ...] [--tier T] [--accept-changes]
    infpush-cvx list [--problems PATTERN] [--tier T]
    infpush-cvx generate [--instances NAME ...] --out DIR
        Write catalog instances to DIR/<name>.npz with their fingerprints.
    infpush-cvx solve PROBLEM --solver NAME [--tol T]
        Solve one catalog problem with a CVXPY solver (CLARABEL, ...) or a project solver
        method (infinite_push.fista, ranksvm.working_set, rank2plan.ccg, ...).
    infpush-cvx bench [--problems PATTERN] [--tier T] [--cvxpy S ...] [--native M ...]
                      [--repeats N] [--executor serial|processes|dask] [--workers N]
                      [--scheduler ADDR] [--timeout SECONDS] [--out results/bench]
        Run problems x solvers x repeats; save the table (CSV + Parquet), the per-problem
        comparison and the performance profile (PNG).
    infpush-cvx report TABLE [--out DIR] [--metric time] [--problems-set common|all]
        Comparison table and performance profile from a saved results table.
    infpush-cvx prox [--sizes 100 1000] [--factors ...] [--repeats N]
        Time the l1,inf projection core against the copy floor.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_check(args) -> int:
    from . import catalog, compare
    ids = catalog.problem_ids(args.problems, tier=args.tier)
    if not ids:
        raise ValueError(f"no catalog problem of tier {args.tier!r} matches {args.problems!r}")
    native = compare.CHECK_METHODS if args.native is None else args.native
    df = compare.run(ids, args.solvers, native, progress=not args.no_progress)
    print(compare.format_table(df))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    bad = df[~df["agrees"]]
    print(f"\n{len(df)} solves of {len(ids)} problems; {len(df) - len(bad)} agree with the stored "
          f"values; table saved to {out}")
    if len(bad):
        print("DISAGREEMENTS:\n" + compare.format_table(bad), file=sys.stderr)
        return 1
    return 0


def _cmd_reference(args) -> int:
    from . import catalog, datasets, reference
    tier = args.tier or (catalog.ALL_TIERS if args.action == "verify" else catalog.DEFAULT_TIER)
    ids = args.only or catalog.problem_ids(tier=tier)
    if args.action == "regenerate":
        from tqdm.auto import tqdm
        actions = reference.regenerate(ids, accept_changes=args.accept_changes,
                                       progress=lambda xs: tqdm(xs, desc="reference"))
        for pid, action in actions.items():
            print(f"{pid}: {action}")
        return 0
    failures, skipped = [], []
    for pid in ids:
        try:
            reference.check_fingerprint(pid)
        except reference.ReferenceError as exc:
            failures.append(str(exc))
        except FileNotFoundError as exc:
            if reference.dataset_provenance(catalog.get(pid).instance) is None:
                raise
            skipped.append(f"{pid}: skipped, its data set is not available: {exc}")
    for line in skipped + failures:
        print(line, file=sys.stderr)
    checked = len(ids) - len(skipped)
    print(f"{checked - len(failures)} of {checked} stored instances match their fingerprints"
          + (f"; {len(skipped)} skipped (data set not available, see "
             f"{datasets.LIBSVM_ENV_VAR} and {datasets.ENV_VAR})" if skipped else ""))
    return 1 if failures else 0


def _cmd_list(args) -> int:
    from . import catalog
    for pid in catalog.problem_ids(args.problems, tier=args.tier):
        spec = catalog.get(pid)
        print(f"{pid}\t{spec.instance}\t{spec.formulation}\t{spec.options}\tlam={spec.lam:g}")
    return 0


def _cmd_generate(args) -> int:
    from . import catalog
    from .benchmarking.instances import save_instance
    names = args.instances or list(catalog.load_catalog().instances)
    for name in names:
        path = save_instance(name, args.out)
        print(f"{name}\t{path}")
    return 0


def _resolve_solver(problem_id: str, solver: str):
    """A Task kind for a solver name given on the command line."""
    from . import catalog, cvxpy_solvers
    from .benchmarking.tasks import native_methods
    spec = catalog.get(problem_id)  # unknown problems are an error here, not a row
    if "." in solver:
        methods = native_methods(spec)
        if solver not in methods:
            raise ValueError(f"project solver {solver!r} does not solve {problem_id!r}; "
                             f"available: {methods or 'none (dual or direct-form problem)'}")
        return "native", solver
    return "cvxpy", cvxpy_solvers.spec(solver).name


def _cmd_solve(args) -> int:
    from .benchmarking.tasks import Task, run_task
    kind, solver = _resolve_solver(args.problem, args.solver)
    row = run_task(Task(args.problem, kind, solver, tol=args.tol, timeout=args.timeout))
    keys = ("problem", "solver", "status", "objective", "reference", "rel_error", "agrees",
            "gap", "iterations", "compile_time", "setup_time", "solve_time", "time", "error")
    width = max(map(len, keys))
    for k in keys:
        if row.get(k) not in (None, ""):
            print(f"{k:<{width}}  {row[k]}")
    return 0 if row["agrees"] else 1


def _write_reports(df, out_dir, metric, problems_set) -> list[str]:
    from .benchmarking import reports
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table = reports.comparison_table(df)
    print(reports.format_comparison(table))
    table.to_csv(out_dir / "comparison.csv", index=False)
    written = [str(out_dir / "comparison.csv")]
    try:
        written.append(str(reports.plot_performance_profile(
            df, out_dir / f"profile_{metric}.png", metric=metric, problems=problems_set)))
    except ValueError:
        # No problem was attempted by every solver (HiGHS runs LPs only, project solvers
        # primal problems only): profile the solvers that attempted every problem instead.
        complete = reports.complete_solvers(df)
        if not complete:
            print("no performance profile: no solver attempted every problem", file=sys.stderr)
            return written
        print(f"performance profile of the solvers that attempted every problem: {complete}",
              file=sys.stderr)
        written.append(str(reports.plot_performance_profile(
            df[df["solver"].isin(complete)], out_dir / f"profile_{metric}.png", metric=metric,
            title=f"Performance profile ({metric}), solvers that ran every problem")))
    return written


def _cmd_bench(args) -> int:
    from . import catalog
    from .benchmarking import make_tasks, run_benchmark, save_results
    ids = catalog.problem_ids(args.problems, tier=args.tier)
    if not ids:
        raise ValueError(f"no catalog problem of tier {args.tier!r} matches {args.problems!r}")
    tasks = make_tasks(ids, cvxpy=args.cvxpy, native=args.native,
                       repeats=args.repeats, tol=args.tol, timeout=args.timeout)
    if args.scheduler and args.executor != "dask":
        raise ValueError("--scheduler needs --executor dask")
    df = run_benchmark(tasks, args.executor, progress=not args.no_progress,
                       n_workers=args.workers, scheduler=args.scheduler)
    paths = save_results(df, args.out)
    out = Path(args.out)
    written = _write_reports(df, out.parent / (out.stem + "_report"), "time", args.problems_set)
    n_ok = int(df["agrees"].sum())
    print(f"\n{len(df)} solves ({len(tasks)} tasks); {n_ok} succeeded and agree with the stored "
          f"values; {len(df) - n_ok} did not (see the status column)")
    print("written: " + ", ".join([str(paths["csv"]), str(paths["parquet"]), *written]))
    return 0


def _cmd_report(args) -> int:
    from .benchmarking import load_results
    path = Path(args.table)
    if not any(path.with_suffix(s).exists() for s in (".csv", ".parquet")) and not path.exists():
        raise ValueError(f"table {args.table!r} does not exist")
    df = load_results(path)
    out = args.out or str(path.with_suffix("")) + "_report"
    for p in _write_reports(df, out, args.metric, args.problems_set):
        print(f"written: {p}")
    return 0


def _cmd_prox(args) -> int:
    import pandas as pd
    from .benchmarking.prox_timing import time_projection
    df = time_projection(args.sizes, args.factors, args.methods, repeats=args.repeats,
                         seed=args.seed)
    with pd.option_context("display.width", 200):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False)
        print(f"written: {out}")
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (``infpush-cvx: error: ...``) and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="infpush-cvx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="solve the catalog with every installed solver and compare "
                                     "with the stored optimal values (the main job)")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help="catalog tier: core (default), real (subsets of real data sets, large "
                        "for CVXPY) or all")
    p.add_argument("--solvers", nargs="+", help="CVXPY solver names (default: all installed)")
    p.add_argument("--native", nargs="*", metavar="METHOD", default=None,
                   help="project solver methods, e.g. fista or infinite_push.working_set "
                        "(default: the certified ones, working_set smoothing_newton fista ccg; "
                        "give none for no project solver)")
    p.add_argument("--out", default="results/comparison.csv", help="CSV output path")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("reference", help="verify or (explicitly) regenerate stored values")
    p.add_argument("action", choices=["verify", "regenerate"])
    p.add_argument("--only", nargs="+", metavar="ID", help="only these problem IDs")
    p.add_argument("--tier", metavar="TIER",
                   help="catalog tier when --only is not given: core, real or all (default: all "
                        "for verify, which only regenerates instances; core for regenerate)")
    p.add_argument("--accept-changes", action="store_true",
                   help="replace stored values that changed beyond tolerance")
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("list", help="list the catalog problems")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="all", metavar="TIER",
                   help="catalog tier: core, real or all (default)")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("generate", help="write catalog instances to .npz files with fingerprints")
    p.add_argument("--instances", nargs="+", metavar="NAME", help="instance names (default: all)")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("solve", help="solve one catalog problem with one solver")
    p.add_argument("problem", help="catalog problem ID (see `infpush-cvx list`)")
    p.add_argument("--solver", required=True,
                   help="CVXPY solver (CLARABEL, ECOS, SCS, HIGHS) or project solver method "
                        "(infinite_push.working_set, ranksvm.fista, rank2plan.ccg, ...)")
    p.add_argument("--tol", type=float, default=1e-6, help="target gap of project solvers")
    p.add_argument("--timeout", type=float, help="time limit of project solvers (seconds)")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("bench", help="run a benchmark: problems x solvers x repeats")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help="catalog tier: core (default), real (subsets of real data sets, large "
                        "for CVXPY) or all")
    p.add_argument("--cvxpy", nargs="*", metavar="SOLVER",
                   help="CVXPY solvers (default: all installed; give none for no CVXPY solver)")
    p.add_argument("--native", nargs="*", metavar="METHOD",
                   help="project solver methods or modules, e.g. infinite_push.fista rank2plan "
                        "(default: all that apply; give none for no project solver)")
    p.add_argument("--repeats", type=int, default=1, help="runs of every task (default 1)")
    p.add_argument("--tol", type=float, default=1e-6, help="target gap of project solvers")
    p.add_argument("--timeout", type=float, help="per-task timeout in seconds")
    p.add_argument("--executor", choices=["serial", "processes", "dask"], default="processes",
                   help="where tasks run (default: local processes, one BLAS thread each)")
    p.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address (default: a local cluster)")
    p.add_argument("--out", default="results/bench",
                   help="table path without suffix: writes .csv and .parquet (default "
                        "results/bench) and the reports to <out>_report/")
    p.add_argument("--problems-set", choices=["common", "all"], default="common",
                   help="profile on problems every solver attempted (default) or all")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("report", help="comparison table and performance profile of a table")
    p.add_argument("table", help="results table (.csv or .parquet, or the path without suffix)")
    p.add_argument("--out", help="output directory (default: <table>_report)")
    p.add_argument("--metric", default="time",
                   choices=["time", "solve_time", "compile_time", "setup_time", "iterations"],
                   help="performance measure of the profiles (default: total time)")
    p.add_argument("--problems-set", choices=["common", "all"], default="common",
                   help="profile on problems every solver attempted (default) or all")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("prox", help="time the l1,inf projection core")
    p.add_argument("--sizes", nargs="+", type=int, default=[100, 1000], help="n of n x n")
    p.add_argument("--factors", nargs="+", type=float, default=[0.001, 0.01, 0.1, 0.5],
                   help="radius as a fraction of the matrix's l1,inf norm")
    p.add_argument("--methods", nargs="+", help="projection methods (default: all)")
    p.add_argument("--repeats", type=int, default=5, help="timed calls per case (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Gaussian matrices")
    p.add_argument("--out", help="CSV output path")
    p.set_defaults(func=_cmd_prox)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        msg = " ".join(str(exc).split())  # one line
        print(f"infpush-cvx: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
