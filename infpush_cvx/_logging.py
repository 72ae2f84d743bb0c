"""Progress logging of the solvers and rankers: quiet by default, ``verbose=True`` on request.

The solvers log their progress to the logger ``infpush_cvx.solvers``: a header line, one line per
iteration or round (iteration, objective, certified relative gap, seconds, and the method's own
figures) and a summary line (status, objective, gap, iterations, seconds, message).

- ``verbose=False`` (the default): those lines are DEBUG records. Nothing is printed, and an
  application sees them only if it configures logging at DEBUG
  (``logging.basicConfig(level=logging.DEBUG)``).
- ``verbose=True``: they are INFO records, and :func:`verbose_logging` makes them visible for the
  duration of the solve: it lowers the logger's level to INFO if needed and, when no handler of
  the application would show an INFO record (logging not configured, as in a plain script or a
  notebook), attaches a handler writing to ``sys.stderr`` that it removes afterwards, on an
  exception too. An application that has configured logging keeps its own handlers and format.

The level of the progress lines is held in a context variable set by :func:`verbose_logging`, so
the iteration loops log through :func:`log_iteration` without a ``verbose`` argument of their own.
"""

from __future__ import annotations

import contextvars
import logging
import math
import sys
import threading
from contextlib import contextmanager, nullcontext

#: The logger of every solver's progress lines.
solver_log = logging.getLogger("infpush_cvx.solvers")

#: At most about this many iteration lines per solve for the methods that take thousands of
#: cheap steps (FISTA, the papers' gradient projection, ADMM, the smoothed Rank2Plan method).
MAX_LINES = 50

# DEBUG unless a verbose solve is running in this thread (or task)
_progress_level = contextvars.ContextVar("infpush_cvx_progress_level", default=logging.DEBUG)


class StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (pytest and notebooks replace it)."""

    # StreamHandler.__init__ sets the stream; the property's setter ignores it
    stream = property(lambda self: sys.stderr, lambda self, value: None)


class _Attachment:
    """What :func:`verbose_logging` changed on one logger, and how many solves use it."""

    def __init__(self, handler, saved_level):
        self.users = 0
        self.handler = handler
        self.saved_level = saved_level


_lock = threading.Lock()
_attached: dict[str, _Attachment] = {}


def _shows(logger: logging.Logger, level: int) -> bool:
    """Whether a handler on ``logger`` or an ancestor it propagates to would emit a record of
    ``level`` (logging's last-resort handler, WARNING only, and NullHandlers do not count)."""
    current = logger
    while current is not None:
        for handler in current.handlers:
            if not isinstance(handler, logging.NullHandler) and handler.level <= level:
                return True
        if not current.propagate:
            return False
        current = current.parent
    return False


@contextmanager
def _shown(logger: logging.Logger):
    """Within this block ``logger``'s INFO records are shown: its level is lowered to INFO if
    it is above, and a handler writing to stderr is attached when no handler would show them;
    both are undone when the last of the nested or concurrent blocks on ``logger`` ends."""
    with _lock:
        attachment = _attached.get(logger.name)
        if attachment is None:  # else a verbose solve already runs (nested or in a thread)
            saved_level = None
            if logger.getEffectiveLevel() > logging.INFO:
                saved_level = logger.level
                logger.setLevel(logging.INFO)
            handler = None
            if not _shows(logger, logging.INFO):
                handler = StderrHandler()
                handler.setLevel(logging.INFO)
                handler.setFormatter(logging.Formatter("%(message)s"))
                logger.addHandler(handler)
            attachment = _attached[logger.name] = _Attachment(handler, saved_level)
        attachment.users += 1
    try:
        yield
    finally:
        with _lock:
            attachment.users -= 1
            if not attachment.users:
                del _attached[logger.name]
                if attachment.handler is not None:
                    logger.removeHandler(attachment.handler)
                if attachment.saved_level is not None:
                    logger.setLevel(attachment.saved_level)


@contextmanager
def verbose_logging(logger: logging.Logger, verbose: bool):
    """Within this block, progress lines are INFO records that reach the user (``verbose``
    True) or DEBUG records left to the application's logging configuration (False).

    With ``verbose`` True, ``logger``'s level is lowered to INFO if it is above, and a handler
    writing to stderr is attached when no handler would show INFO records; both are undone on
    leaving the block, also on an exception. Nested and concurrent verbose blocks on one logger
    share one handler, removed when the last of them ends (:func:`_shown`).
    """
    token = _progress_level.set(logging.INFO if verbose else logging.DEBUG)
    try:
        with _shown(logger) if verbose else nullcontext():
            yield
    finally:
        _progress_level.reset(token)


def progress_enabled(logger: logging.Logger = solver_log) -> bool:
    """Whether a progress line would be logged now (to skip computing figures only logged)."""
    return logger.isEnabledFor(_progress_level.get())


def log_progress(message: str, logger: logging.Logger = solver_log) -> None:
    """Log one progress line at the current level (INFO in a verbose solve, else DEBUG)."""
    level = _progress_level.get()
    if logger.isEnabledFor(level):
        logger.log(level, message)


def _gap(gap) -> str:
    return "-" if gap is None else f"{gap:.2e}"


def log_iteration(method: str, iteration: int, objective: float, gap, seconds: float,
                  **figures) -> None:
    """One iteration line: ``method``, iteration, objective, certified relative gap (None: not
    computed at this iteration), seconds since the start, then ``figures`` as ``name value``."""
    if not progress_enabled():  # the line is not built for nothing
        return
    parts = [f"{method} {iteration:5d}", f"objective {objective:.10g}", f"gap {_gap(gap)}",
             f"time {seconds:.3f}s"]
    parts += [f"{name} {value:.4g}" if isinstance(value, float) else f"{name} {value}"
              for name, value in figures.items()]
    log_progress("  ".join(parts))


def log_every(max_iter: int, check_every: int = 1, lines: int = MAX_LINES) -> int:
    """Iterations between two logged lines: a multiple of ``check_every`` (the iterations at
    which the method computes its gap) such that at most about ``lines`` lines are logged."""
    checks = max(1, math.ceil(max_iter / (lines * check_every)))
    return checks * check_every


def log_summary(name: str, result) -> None:
    """The final line of a solve: status, objective, gap, iterations, seconds, message."""
    message = f": {result.message}" if result.message else ""
    log_progress(f"{name} {result.method}: status {result.status}, objective "
                 f"{result.objective:.10g}, gap {_gap(result.gap)}, iterations "
                 f"{result.iterations}, time {result.time:.3f}s{message}")
