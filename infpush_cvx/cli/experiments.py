"""``experiments``: the evaluation experiments (Agarwal 2011, Perceptron@K)."""

from __future__ import annotations

from .common import configure_logging


def _cmd_experiments(args) -> int:
    from ..evaluation.experiments.command import run
    configure_logging()
    return run(args)


def add_experiments(sub) -> None:
    """The ``experiments`` subcommand."""
    p = sub.add_parser("experiments", help="the evaluation experiments (Agarwal 2011, "
                                           "Perceptron@K): result table and figure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    from ..evaluation.experiments.command import add_experiments as add_each
    add_each(p.add_subparsers(dest="which", required=True, metavar="EXPERIMENT"))
    p.set_defaults(func=_cmd_experiments)
