"""Command line: ``python -m infpush_cvx.evaluation.experiments agarwal|perceptron [options]``,
the same as ``infpush-cvx experiments`` (:mod:`.command`), except that without ``--out`` no
table nor figure is written.

Errors are one line with the exit codes of ``infpush-cvx`` (2 bad arguments or unreadable data,
3 unexpected failure; ``--traceback`` for the full one). A tqdm progress bar on stderr counts
the fits (agarwal) or runs (perceptron); ``--no-progress``, before or after the experiment's
name, turns it off.
"""

from __future__ import annotations

import argparse
import sys

from infpush_cvx.cli import run_reporting_errors
from infpush_cvx.evaluation.experiments.command import NO_PROGRESS_HELP, add_experiments, run

PROG = "python -m infpush_cvx.evaluation.experiments"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG)
    p.add_argument("--traceback", action="store_true",
                   help="print the full traceback of an unexpected failure")
    p.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)
    add_experiments(p.add_subparsers(dest="which", required=True))
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors(lambda: run(args), prog=PROG, show_traceback=args.traceback)


if __name__ == "__main__":
    sys.exit(main())
