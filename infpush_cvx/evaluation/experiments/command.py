"""The experiments on the command line: ``infpush-cvx experiments agarwal|perceptron|letor``.

:func:`add_experiments` adds the three experiments (and their options) to the ``experiments``
subcommand's parser of ``infpush-cvx`` (:mod:`infpush_cvx.cli`, which imports this module, not
the other way round); :func:`run` runs the one chosen. It prints a short result table, writes
the tidy per-run table to ``--out`` (CSV, atomically, its location checked before the experiment
runs) and, when matplotlib is installed, a figure beside it (``<out>.png``; the perceptron
experiment, one per stream, ``<out>_<stream>.png``). This module imports nothing heavy, so
``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

#: The perceptron experiment's streams, in the order of its figures.
STREAMS = ("spambase", "generated")
DATA_HELP = ("folder with the UCI files (default: $INFPUSH_CVX_DATA, else a shared/data/uci "
             "folder beside a source checkout, else the uci/ folder of the user data folder, "
             "~/.local/share/infpush_cvx on Linux; see infpush_cvx.data.datasets)")
LETOR_DATA_HELP = ("folder with rank.train, rank.test and their .query files (default: "
                   "$INFPUSH_CVX_LETOR_DATA, else a letor folder beside the UCI one or in a "
                   "shared/data folder beside a source checkout; see "
                   "infpush_cvx.data.datasets.load_letor)")


def add_experiments(sub) -> None:
    """Add the ``agarwal``, ``perceptron`` and ``letor`` parsers to ``sub`` (``add_subparsers()``'s
    result); ``--out`` defaults to ``results/experiments/<name>.csv``."""
    from infpush_cvx._argtypes import nonnegative_int, positive_int
    a = sub.add_parser("agarwal", help="Agarwal (SDM 2011) section 6 protocol")
    a.add_argument("--datasets", nargs="+", default=["ionosphere", "spambase"],
                   help="UCI data sets to run (default: both)")
    a.add_argument("--n-splits", type=positive_int, default=10,
                   help="random stratified train/test splits (default 10, as in the paper)")
    a.add_argument("--n-folds", type=positive_int, default=5,
                   help="cross-validation folds for choosing C (default 5)")
    a.add_argument("--methods", nargs="+",
                   default=["ranksvm", "infinite_push", "sparse_infinite_push"],
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
    a.add_argument("--scale", choices=["train", "all"], default="train",
                   help="fit the [0, 1] scaler on the training split (default) or on all data")
    q = sub.add_parser("perceptron", help="Perceptron@K on Spambase and a generated stream")
    q.add_argument("--ks", nargs="+", type=positive_int, default=[50, 300],
                   help="values of K (default 50 300)")
    q.add_argument("--seed", type=nonnegative_int, default=0,
                   help="seed of the streams and sampling (default 0)")
    r = sub.add_parser("letor", help="every model over queries on the LETOR set (NDCG, MAP)")
    r.add_argument("--models", nargs="+", default=None,
                   help="models to compare (default: all): query_ranksvm, "
                        "query_ranksvm_squared_hinge, query_ranksvm_all_pairs, "
                        "query_ranksvm_label_difference, query_infinite_push, "
                        "query_infinite_push_l1, query_infinite_push_top_labels, "
                        "ranksvm_ignoring_queries")
    r.add_argument("--n-folds", type=positive_int, default=5,
                   help="GroupKFold folds over the training queries for choosing C (default 5)")
    r.add_argument("--no-cvxpy", action="store_true",
                   help="skip the CVXPY + Clarabel solve of each chosen problem")
    for p, name, what in ((a, "agarwal", "tidy per-run table"),
                          (q, "perceptron", "tidy per-batch table"),
                          (r, "letor", "per-model table")):
        p.add_argument("--data-dir", default=None,
                       help=LETOR_DATA_HELP if name == "letor" else DATA_HELP)
        default = f"results/experiments/{name}.csv"
        p.add_argument("--out", default=default,
                       help=f"CSV file for the {what} (default {default}); with matplotlib, the "
                            f"figure is written beside it as a PNG file")
        # SUPPRESS: a subcommand not given the flag leaves the parent parser's value alone
        p.add_argument("--no-progress", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bar on stderr")
        p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="print the full traceback of an unexpected failure")


def figure_paths(out, which: str, streams=()) -> list[Path]:
    """Where the figures of a run whose table is ``out`` go: ``<out stem>.png`` (agarwal,
    letor), or ``<out stem>_<stream>.png`` per stream (perceptron)."""
    out = Path(out)
    stem = out.with_suffix("") if out.suffix.lower() == ".csv" else out
    tails = [f"_{s}" for s in streams] if which == "perceptron" else [""]
    return [stem.parent / f"{stem.name}{tail}.png" for tail in tails]


def run(args) -> int:
    """Run the experiment ``args.which`` (parsed by a parser made with :func:`add_experiments`):
    print its short table, write ``args.out`` and its figures."""
    from infpush_cvx._plots import matplotlib_available
    from infpush_cvx.files import check_writable
    streams = STREAMS if args.which == "perceptron" else ()
    figures = []
    if args.out:
        check_writable(args.out, name="--out")  # before the experiment, not after it
        if matplotlib_available():
            figures = figure_paths(args.out, args.which, streams)
            for path in figures:
                check_writable(path, name="--out")
        else:
            print("matplotlib is not installed: no figure (install the 'plots' extra)",
                  file=sys.stderr)
    progress = not getattr(args, "no_progress", False)
    experiment = {"agarwal": _agarwal, "perceptron": _perceptron, "letor": _letor}
    res, text, draw = experiment[args.which](args, progress)
    print(text)
    if args.out:
        _write(res, args.out, zip(figures, draw))
    return 0


def _agarwal(args, progress):
    from .agarwal import agarwal_experiment, compare_with_paper, plot_agarwal_results
    res = agarwal_experiment(tuple(args.datasets), n_splits=args.n_splits,
                             n_folds=args.n_folds, methods=tuple(args.methods), n_jobs=args.n_jobs,
                             seed=args.seed, data_dir=args.data_dir, scale=args.scale,
                             progress=progress, protocol=args.protocol, store=args.store)
    return res, format_agarwal(compare_with_paper(res)), [partial(plot_agarwal_results, res)]


def format_agarwal(table) -> str:
    """:func:`.agarwal.compare_with_paper`'s table for a person: one line per (protocol, data
    set, method), each measure as ``mean ± standard error [the paper's]``."""
    import pandas as pd

    from .agarwal import MEASURE_LABELS

    def cell(line, m):
        digits = 1 if m == "pos_at_top" else 3
        text = f"{line[m]:.{digits}f}"
        if not pd.isna(line[f"{m}_se"]):
            text += f" ± {line[f'{m}_se']:.{digits}f}"
        if not pd.isna(line[f"paper_{m}"]):
            text += f" [{line[f'paper_{m}']:.{digits}f}]"
        return text
    flat = table.reset_index()
    shown = flat[list(table.index.names)].copy()  # (protocol,) dataset, method
    for m in MEASURE_LABELS:
        shown[m] = [cell(line, m) for _, line in flat.iterrows()]
    shown["features"] = flat["n_features_used"].map(lambda v: f"{v:.0f}")
    shown["splits"] = flat["n_splits"]
    return (shown.to_string(index=False) + "\n\nmean ± standard error over the splits "
            "[the paper's value, Agarwal 2011 section 6]; pos_at_top: positives ranked above "
            "every negative; features: weights that are not zero")


def _perceptron(args, progress):
    from .perceptron import (generated_stream, perceptron_experiment,
                             plot_perceptron_experiment, spambase_stream, summarise)
    data = {"spambase": spambase_stream(args.data_dir),
            "generated": generated_stream(seed=args.seed)}
    res = perceptron_experiment(data, ks=tuple(args.ks), seed=args.seed, progress=progress)
    table = summarise(res).reset_index()
    text = table.to_string(index=False, formatters={"prec_at_k_late": "{:.3f}".format})
    text += ("\n\nprec_at_k_late: mean prec@k over the second half of the batches; "
             "total_queries: labels queried; n_points: items seen")
    return res, text, [partial(plot_perceptron_experiment, res, stream=s) for s in STREAMS]


def _letor(args, progress):
    from .letor import MODELS, letor_experiment, plot_letor_results
    models = tuple(args.models) if args.models else tuple(MODELS)
    res = letor_experiment(models, n_folds=args.n_folds, check_cvxpy=not args.no_cvxpy,
                           data_dir=args.data_dir, progress=progress)
    text = res.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    text += ("\n\nC chosen by GroupKFold cross-validation over the training queries (NDCG@10);"
             " test measures over the test queries with a relevant document; "
             "cvxpy_objective_diff: relative difference to CVXPY + Clarabel")
    return res, text, [partial(plot_letor_results, res)]


def _write(res, out, figures) -> None:
    """Write the table to ``out`` and each ``(path, draw)`` of ``figures``: ``draw()`` makes the
    figure written to ``path``."""
    from infpush_cvx.files import atomic_open, atomic_path
    with atomic_open(out, "w", newline="") as fh:
        res.to_csv(fh, index=False)
    written = [str(out)]
    for path, draw in figures:
        with atomic_path(path) as tmp:
            draw().savefig(tmp, format="png", dpi=110)
        written.append(str(path))
    print("written: " + ", ".join(written))
