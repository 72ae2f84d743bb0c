"""Command line: ``python -m infpush_cvx.experiments agarwal|perceptron [options]``.

Prints the result table and writes the tidy per-run table to ``--out`` (CSV) when given.
"""

from __future__ import annotations

import argparse
import sys

DATA_HELP = "folder with the UCI files (default: $INFPUSH_CVX_DATA, else ../shared/data/uci)"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m infpush_cvx.experiments")
    sub = p.add_subparsers(dest="which", required=True)
    a = sub.add_parser("agarwal", help="Agarwal (SDM 2011) section 6 protocol")
    a.add_argument("--datasets", nargs="+", default=["ionosphere", "spambase"],
                   help="UCI data sets to run (default: both)")
    a.add_argument("--n-splits", type=int, default=10,
                   help="random stratified train/test splits (default 10, as in the paper)")
    a.add_argument("--n-folds", type=int, default=5,
                   help="cross-validation folds for choosing C (default 5)")
    a.add_argument("--methods", nargs="+",
                   default=["ranksvm", "infinite_push", "sparse_infinite_push"],
                   help="rankers to compare (default: all three)")
    a.add_argument("--n-jobs", type=int, default=1,
                   help="worker processes across splits (default 1)")
    a.add_argument("--seed", type=int, default=0, help="seed of the splits (default 0)")
    a.add_argument("--data-dir", default=None,
                   help=DATA_HELP)
    a.add_argument("--scale", choices=["train", "all"], default="train",
                   help="fit the [0, 1] scaler on the training split (default) or on all data")
    a.add_argument("--out", default=None, help="CSV file for the tidy per-run table")
    q = sub.add_parser("perceptron", help="Perceptron@K on Spambase and a generated stream")
    q.add_argument("--ks", nargs="+", type=int, default=[50, 300],
                   help="values of K (default 50 300)")
    q.add_argument("--seed", type=int, default=0,
                   help="seed of the streams and sampling (default 0)")
    q.add_argument("--data-dir", default=None,
                   help=DATA_HELP)
    q.add_argument("--out", default=None, help="CSV file for the tidy per-batch table")
    args = p.parse_args(argv)

    import pandas as pd
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 40)
    if args.which == "agarwal":
        from .agarwal import agarwal_experiment, compare_with_paper
        res = agarwal_experiment(tuple(args.datasets), n_splits=args.n_splits,
                                 n_folds=args.n_folds, methods=tuple(args.methods),
                                 n_jobs=args.n_jobs, seed=args.seed, data_dir=args.data_dir,
                                 scale=args.scale)
        print(compare_with_paper(res).round(4).to_string())
    else:
        from .perceptron import (generated_stream, perceptron_experiment, spambase_stream,
                                 summarise)
        streams = {"spambase": spambase_stream(args.data_dir),
                   "generated": generated_stream(seed=args.seed)}
        res = perceptron_experiment(streams, ks=tuple(args.ks), seed=args.seed)
        print(summarise(res).round(4).to_string())
    if args.out:
        res.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
