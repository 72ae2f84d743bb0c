"""Command line: ``python -m infpush_cvx.evaluation.experiments agarwal|perceptron [options]``.

Prints the result table and writes the tidy per-run table to ``--out`` (CSV) when given. The
output location is checked before the experiment runs, the file is written atomically (a killed
run leaves the previous file), and errors are one line with the exit codes of ``infpush-cvx``
(2 bad arguments or unreadable data, 3 unexpected failure; ``--traceback`` for the full one).
A tqdm progress bar on stderr counts the fits (agarwal) or runs (perceptron); ``--no-progress``,
before or after the experiment's name, turns it off.
"""

from __future__ import annotations

import argparse
import sys

from infpush_cvx.cli import nonnegative_int, positive_int, run_reporting_errors

PROG = "python -m infpush_cvx.evaluation.experiments"
NO_PROGRESS_HELP = "no progress bar on stderr"
DATA_HELP = ("folder with the UCI files (default: $INFPUSH_CVX_DATA, else a shared/data/uci "
             "folder beside a source checkout, else the uci/ folder of the user data folder, "
             "~/.local/share/infpush_cvx on Linux; see infpush_cvx.data.datasets)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG)
    p.add_argument("--traceback", action="store_true",
                   help="print the full traceback of an unexpected failure")
    p.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)
    sub = p.add_subparsers(dest="which", required=True)
    a = sub.add_parser("agarwal", help="Agarwal (SDM 2011) section 6 protocol")
    a.add_argument("--datasets", nargs="+", default=["ionosphere", "spambase"],
                   help="UCI data sets to run (default: both)")
    a.add_argument("--n-splits", type=positive_int, default=10,
                   help="random stratified train/test splits (default 10, as in the paper)")
    a.add_argument("--n-folds", type=positive_int, default=5,
                   help="cross-validation folds for choosing C (default 5)")
    a.add_argument("--methods", nargs="+", default=None,
                   help="rankers to compare: ranksvm, infinite_push, sparse_infinite_push, "
                        "svmmap, toppush, pnorm_push_1, pnorm_push_4, pnorm_push_16, "
                        "pnorm_push_64 (default: ranksvm infinite_push sparse_infinite_push)")
    a.add_argument("--protocol", choices=["exact", "paper"], default="exact",
                   help="exact: every model solved to its certified optimum (default); paper: "
                        "trained as Agarwal (2011) did (gradient projection with 1000 steps and "
                        "C, eta_0 chosen by cross-validation; P-Norm Push by 100 boosting rounds)")
    a.add_argument("--store", default=None,
                   help="folder keeping every finished split; a rerun with the same settings "
                        "reuses them (resumes an interrupted run)")
    a.add_argument("--n-jobs", type=positive_int, default=1,
                   help="worker processes across splits (default 1)")
    a.add_argument("--seed", type=nonnegative_int, default=0,
                   help="seed of the splits (default 0)")
    a.add_argument("--data-dir", default=None,
                   help=DATA_HELP)
    a.add_argument("--scale", choices=["train", "all"], default="train",
                   help="fit the [0, 1] scaler on the training split (default) or on all data")
    a.add_argument("--out", default=None, help="CSV file for the tidy per-run table")
    _add_no_progress(a)
    q = sub.add_parser("perceptron", help="Perceptron@K on Spambase and a generated stream")
    q.add_argument("--ks", nargs="+", type=positive_int, default=[50, 300],
                   help="values of K (default 50 300)")
    q.add_argument("--seed", type=nonnegative_int, default=0,
                   help="seed of the streams and sampling (default 0)")
    q.add_argument("--data-dir", default=None,
                   help=DATA_HELP)
    q.add_argument("--out", default=None, help="CSV file for the tidy per-batch table")
    _add_no_progress(q)
    return p


def _add_no_progress(sub: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand that is not given the flag leaves the main parser's value alone
    sub.add_argument("--no-progress", action="store_true", default=argparse.SUPPRESS,
                     help=NO_PROGRESS_HELP)


def _run(args) -> int:
    import pandas as pd

    from infpush_cvx.files import atomic_open, check_writable
    if args.out:
        check_writable(args.out, name="--out")  # before the experiment, not after it
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 40)
    if args.which == "agarwal":
        from infpush_cvx.evaluation.experiments.agarwal import (agarwal_experiment,
                                                                compare_with_paper)
        methods = args.methods or ["ranksvm", "infinite_push", "sparse_infinite_push"]
        res = agarwal_experiment(tuple(args.datasets), n_splits=args.n_splits,
                                 n_folds=args.n_folds, methods=tuple(methods),
                                 n_jobs=args.n_jobs, seed=args.seed, data_dir=args.data_dir,
                                 scale=args.scale, progress=not args.no_progress,
                                 protocol=args.protocol, store=args.store)
        print(compare_with_paper(res).round(4).to_string())
    else:
        from infpush_cvx.evaluation.experiments.perceptron import (
            generated_stream, perceptron_experiment, spambase_stream, summarise)
        streams = {"spambase": spambase_stream(args.data_dir),
                   "generated": generated_stream(seed=args.seed)}
        res = perceptron_experiment(streams, ks=tuple(args.ks), seed=args.seed,
                                    progress=not args.no_progress)
        print(summarise(res).round(4).to_string())
    if args.out:
        with atomic_open(args.out, "w", newline="") as fh:
            res.to_csv(fh, index=False)
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors(lambda: _run(args), prog=PROG, show_traceback=args.traceback)


if __name__ == "__main__":
    sys.exit(main())
