"""infpush-cvx: solve the catalog's ranking problems and check them against stored optima.

    infpush-cvx check [--problems PATTERN] [--tier core|real|all] [--cvxpy S ...|all]
                      [--native M ...] [--tol T] [--time-limit SECONDS]
                      [--out results/comparison.csv] [-v]
        The main job: every problem with the comparison solvers (CLARABEL, ECOS, SCS, HIGHS;
        any installed CVXPY solver by name, or "all") and the project's certified methods,
        one solve at a time; prints a short table, one summary line per solver, and saves the
        full results table (the bench table's columns). The catalog's "core" tier by default;
        the "real" tier (subsets of real data sets) is large for CVXPY.
    infpush-cvx reference verify | regenerate [--only ID ...] [--tier T]
                      [--no-resolve] [--accept-changes]
        verify: each stored value's record is valid, its instance and problem definition
        (spec fingerprint) are unchanged, and the project's certified solvers re-solve it to
        2e-6 (--no-resolve skips that); regenerate refuses to replace a changed value without
        --accept-changes.
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
project solvers), --time-limit, --out, -v.

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
import sys

from . import bench, catalog, check, experiments
from .arguments import MAX_REPEATS, Parser, nonnegative_int, positive_int
from .common import (DEFAULT_TIME_LIMIT, EXIT_DISAGREEMENT, EXIT_FAILURE, EXIT_USAGE,
                     TRACEBACK_ENV_VAR, configure_logging)
from .process import run_reporting_errors, signals_stop_the_run, standard_streams

__all__ = ["DEFAULT_TIME_LIMIT", "EXIT_DISAGREEMENT", "EXIT_FAILURE", "EXIT_USAGE",
           "MAX_REPEATS", "TRACEBACK_ENV_VAR", "build_parser", "configure_logging", "main",
           "nonnegative_int", "positive_int", "run_reporting_errors"]

#: The subcommands in the order ``--help`` lists them, each added by its group's module.
SUBCOMMANDS = (check.add_check, catalog.add_reference, catalog.add_list, catalog.add_generate,
               check.add_solve, bench.add_bench, bench.add_report, experiments.add_experiments,
               bench.add_prox)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="infpush-cvx", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traceback", action="store_true",
                        help=f"print the full traceback of an unexpected failure "
                             f"(or set {TRACEBACK_ENV_VAR}=1)")
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    for p in sub.choices.values():  # after the subcommand too; SUPPRESS keeps the top's value
        p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="print the full traceback of an unexpected failure")
    return parser


def main(argv=None) -> int:
    standard_streams()
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    with signals_stop_the_run():
        return run_reporting_errors(lambda: args.func(args), show_traceback=args.traceback)
