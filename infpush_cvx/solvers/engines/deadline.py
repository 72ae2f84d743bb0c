"""The wall-clock budget of one solve, shared by every stage that spends time in it.

A solve starts its :class:`Deadline` when it is called, so the input checks, the set-up (a
Lipschitz constant, a Gram matrix, a warm start) and every call into an external solver (HiGHS,
Clarabel, CVXPY) draw on the same ``time_limit``; an external solver is handed the time that is
left, never the whole budget again.
"""

from __future__ import annotations

import math
import time

import numpy as np

#: The smallest time limit handed to an external solver (they refuse 0; the caller checks
#: :meth:`Deadline.expired` first, so this only covers the instant between the two calls).
_SOLVER_FLOOR = 1e-6


class Deadline:
    """``time_limit`` seconds (None: no limit) counted from ``start`` on ``clock`` (seconds;
    ``time.perf_counter`` unless a test injects its own)."""

    def __init__(self, time_limit: float | None, start: float | None = None, *,
                 clock=time.perf_counter):
        self.limit = None if time_limit is None or math.isinf(time_limit) else float(time_limit)
        self.clock = clock
        self.start = clock() if start is None else start

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        """Seconds left (``inf`` without a limit; zero or negative once it has passed)."""
        return math.inf if self.limit is None else self.limit - self.elapsed()

    def expired(self) -> bool:
        return self.limit is not None and self.elapsed() >= self.limit

    def allows(self, seconds: float) -> bool:
        """Whether a step of ``seconds`` would end before the limit (``allows(0)``: not expired).

        A loop whose steps each take long (a first-order step over an m x n dual of 12 million
        pairs: 0.5 s) asks this with the length of its last step, so it stops before a step
        that would overrun the limit rather than after it."""
        return self.limit is None or self.remaining() > seconds

    def message_before(self, seconds: float) -> str:
        """The message of a loop stopped by :meth:`allows`."""
        return (f"time limit of {self.limit:g} s reached: {max(self.remaining(), 0.0):.2g} s "
                f"were left, less than the next step needs ({seconds:.2g} s)")

    def share(self, fraction: float) -> Deadline:
        """A deadline for one stage: ``fraction`` of the time left, from now, on the same
        clock; this deadline itself without a limit."""
        if self.limit is None:
            return self
        return Deadline(max(self.remaining(), 0.0) * fraction, clock=self.clock)

    def for_solver(self) -> float | None:
        """The time limit to hand to an external solver now: None without a limit."""
        return None if self.limit is None else max(self.remaining(), _SOLVER_FLOOR)

    def message(self) -> str:
        return f"time limit of {self.limit:g} s reached"


#: Entries of the probe of :func:`fresh_write_seconds`: 32 MiB of float64, the size from which
#: glibc maps new pages for every array (its largest heap threshold), as for large data.
_PROBE_ENTRIES = 1 << 22


def fresh_write_seconds(entries: float, *, clock=time.perf_counter) -> float:
    """Seconds to write ``entries`` float64 values into new memory (a rescaled copy of the
    data), at the pace of writing a probe of ``min(entries, 2**22)`` of them; 0 for none.

    A process's first touch of memory is its slowest pass over large data (0.8 s to rescale
    50,000 + 50,000 x 300 on a loaded 2-core machine, against 0.06 s to read it), and nothing
    else a solve has done by then predicts it. The probe costs an eighth of the copy of such
    data; a caller runs it only under a time limit, before a copy it cannot interrupt."""
    probe = int(min(entries, _PROBE_ENTRIES))
    if probe <= 0:
        return 0.0
    begun = clock()
    np.ones(probe)
    return (clock() - begun) * float(entries) / probe


def as_deadline(deadline, *, clock=time.perf_counter) -> Deadline:
    """``deadline`` as a :class:`Deadline`: itself, or seconds (None or ``inf``: no limit)
    counted from now; a TypeError/ValueError naming ``deadline`` otherwise."""
    if isinstance(deadline, Deadline):
        return deadline
    from ..._validation import check_time_limit
    return Deadline(check_time_limit(deadline, "deadline"), clock=clock)


def round_end(gap: float, tol: float, deadline: Deadline) -> tuple[str, str] | None:
    """How a certified method's round ends: ``("optimal", "")`` once its certified gap is at most
    ``tol``, else ``("time_limit", message)`` once the deadline has passed, else None (go on)."""
    if gap <= tol:
        return "optimal", ""
    if deadline.expired():
        return "time_limit", deadline.message()
    return None
