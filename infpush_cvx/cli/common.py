"""What every command shares: exit statuses, the default time limit, the failure of a command
(exit 3) and the small steps its work is made of (logging, output checks, messages)."""

from __future__ import annotations

import contextlib
import logging
import sys

from .._logging import StderrHandler
from ..files import MalformedFileError

#: Default time limit of one solve, in seconds: twice the longest solve the catalog needs
#: (ECOS on the real tier's a8a 300 x 3000 problem, about 10 minutes on 2 cores).
DEFAULT_TIME_LIMIT = 1200.0
#: Environment variable that, set to anything but "" or "0", prints full tracebacks.
TRACEBACK_ENV_VAR = "INFPUSH_CVX_TRACEBACK"

EXIT_DISAGREEMENT, EXIT_USAGE, EXIT_FAILURE = 1, 2, 3


class CommandFailed(Exception):
    """An unexpected exception while a command did its work (exit 3); it is the ``__cause__``."""


@contextlib.contextmanager
def working(what: str):
    """Mark the command's work, after its arguments were checked: an exception in here is a
    failure of the command (exit 3) even when it is a ValueError, except an OSError (a file or
    data set that cannot be read or written, or a malformed input file, exit 2)."""
    try:
        yield
    except (OSError, MalformedFileError, CommandFailed):
        raise
    except Exception as exc:
        raise CommandFailed(f"{what} failed: {type(exc).__name__}: {exc}") from exc


def configure_logging(verbosity: int = 0) -> None:
    """Send the package logger (``infpush_cvx``) to stderr: warnings only by default, progress
    with ``verbosity`` 1 (``-v``), debug details with 2 (``-vv``)."""
    logger = logging.getLogger("infpush_cvx")
    handler = next((h for h in logger.handlers if isinstance(h, StderrHandler)), None)
    if handler is None:
        handler = StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logger.setLevel(level)
    handler.setLevel(level)


def start_solving(args, check_arguments):
    """Start of a solving command: its log level (HiGHS's banner is kept quiet by every HiGHS
    solve: ``cvxpy_backend.quiet_highs``), then ``check_arguments()`` (an unknown problem is
    named first), then the stored values' folder exists (a mistyped INFPUSH_CVX_REFERENCE_DIR
    is a usage error before any solve, not a "disagrees" row for every solve). Returns what
    ``check_arguments()`` returned."""
    from ..catalog import reference
    configure_logging(args.verbose)
    checked = check_arguments()
    reference.check_directory()
    return checked


def problem_ids(pattern, tier) -> list[str]:
    from .. import catalog
    ids = catalog.problem_ids(pattern, tier=tier)
    if not ids:
        raise ValueError(f"no catalog problem of tier {tier!r} matches {pattern!r} (see "
                         f"`infpush-cvx list --tier {tier}`)")
    return ids


def save_csv(df, path) -> None:
    from ..files import atomic_open
    with atomic_open(path, "w", newline="") as fh:
        df.to_csv(fh, index=False)


def check_outputs(paths) -> None:
    from ..files import check_writable
    for path in paths:
        check_writable(path, name="--out")


def tell(message: str) -> None:
    """``message`` on stderr, if it can still be written (after SIGHUP the terminal is gone)."""
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr)


def plural(count: int, noun: str) -> str:
    """``"1 solve"``, ``"2 solves"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
