"""The command line's arguments: argparse types whose bad values are one-line usage errors
naming the option, the parser that reports them so, and the options several commands share."""

from __future__ import annotations

import argparse
import math
import os

from .._argtypes import argument_type, nonnegative_int, positive_int  # noqa: F401 (re-exported)
from .common import DEFAULT_TIME_LIMIT, EXIT_USAGE

#: Largest --time-limit, in seconds (11.6 days): far beyond any solve of the catalog, and within
#: what the clocks the limit is waited on accept (1e20 s overflowed them: exit 3).
MAX_TIME_LIMIT = 1e6


#: Largest --workers: 4 per CPU. Each worker is a Python process with CVXPY and the solvers
#: loaded (about 250 MB); --workers 10000 with enough tasks started that many at once.
MAX_WORKERS = 4 * (os.cpu_count() or 1)


#: Largest --repeats of ``bench`` (``benchmarking.runner.MAX_REPEATS``; the CLI keeps its own
#: copy so that ``--help`` does not import pandas).
MAX_REPEATS = 1000


#: A positive, finite number (tolerances, seconds, factors).
positive_float = argument_type(float, lambda v: math.isfinite(v) and v > 0, "a positive number",
                                "must be positive and finite")


#: A time limit in seconds: positive, at most MAX_TIME_LIMIT.
time_limit_seconds = argument_type(float, lambda v: 0 < v <= MAX_TIME_LIMIT,
                                    "a positive number",
                                    f"must be positive and at most {MAX_TIME_LIMIT:g} s")


#: A target relative gap: in (0, 1); 1e308 made the agreement tolerance (2 tol) infinite, so
#: that any answer agreed with its stored value.
gap_tolerance = argument_type(float, lambda v: 0 < v < 1, "a number in (0, 1)",
                               "must be in (0, 1), a relative gap")


#: Worker processes: 1 to MAX_WORKERS.
worker_count = argument_type(int, lambda v: 1 <= v <= MAX_WORKERS, "a positive integer",
                              f"must be between 1 and {MAX_WORKERS} (4 per CPU)")


#: An output path: not empty (``--out ""`` wrote into the working folder).
output_path = argument_type(str, lambda v: bool(v.strip()), "a path", "must not be empty")


#: Largest n of prox's n x n matrices: 20000 (3.2 GB each; a few copies are held at once).
MAX_PROX_SIZE = 20000


#: A size of prox: 1 to MAX_PROX_SIZE (100000 failed with exit 3, a MemoryError).
prox_size = argument_type(int, lambda v: 1 <= v <= MAX_PROX_SIZE, "a positive integer",
                           f"must be between 1 and {MAX_PROX_SIZE}")


#: The repeats of a benchmark: 1 to MAX_REPEATS.
repeat_count = argument_type(int, lambda v: 1 <= v <= MAX_REPEATS, "a positive integer",
                              f"must be between 1 and {MAX_REPEATS}")


class Parser(argparse.ArgumentParser):
    """Usage errors as one line (``infpush-cvx: error: ...``) and exit status 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def add_limits(p, what: str) -> None:
    """The target gap of the project solvers and the time limit of ``what``."""
    p.add_argument("--tol", type=gap_tolerance, default=1e-6,
                   help="target gap of project solvers (default 1e-6)")
    p.add_argument("--time-limit", dest="time_limit", type=time_limit_seconds,
                   default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help=f"time limit of {what} in seconds, given to the solver as its own "
                        f"(default {DEFAULT_TIME_LIMIT:g}; for solvers without one, such as "
                        f"ECOS, see the top --help)")


def add_problems(p, *, by_text: bool = True, tier_when: str = "") -> None:
    """The options that select catalog problems: ``--problems`` (with ``by_text``) and
    ``--tier``, which applies ``tier_when`` ("when --only is not given")."""
    if by_text:
        p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--tier", default="core", metavar="TIER",
                   help=f"catalog tier{tier_when}: core (default), real (subsets of real data "
                        f"sets, large for CVXPY) or all")


def add_selection(p, native_default: str, what: str) -> None:
    """The options that select problems and solvers, the same in ``check`` and ``bench``, with
    their limits (``what`` they apply to, :func:`add_limits`) and the progress bar's switch."""
    add_problems(p)
    p.add_argument("--cvxpy", nargs="*", metavar="SOLVER",
                   help="CVXPY solvers, any installed one (OSQP, SCIPY, ...), or all (default: "
                        "the comparison set CLARABEL ECOS SCS HIGHS, if installed; give none "
                        "for no CVXPY solver)")
    p.add_argument("--native", nargs="*", metavar="METHOD",
                   help=f"project solver methods, labels or modules, e.g. fista, "
                        f"infinite_push.working_set, rank2plan (default: {native_default}; give "
                        f"none for no project solver)")
    add_limits(p, what)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_problems_set(p) -> None:
    """Which problems the performance profiles compare solvers on (``bench``, ``report``)."""
    p.add_argument("--problems-set", choices=["common", "all"], default="common",
                   help="profile on the problems every solver attempted (default; when there "
                        "is none, as 'all') or on all, each solver on those it attempted")


def add_verbose(p) -> None:
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log progress to stderr (-vv: debug details); quiet by default")
