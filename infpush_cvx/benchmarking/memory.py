"""Resident memory of this process, and the peak of one block of code (Linux ``/proc``).

``with peak_rss() as m: solve()`` records the resident memory on entry (``m.rss_before_mib``:
the data are loaded by then), resets the kernel's peak-RSS counter (``/proc/self/clear_refs``,
Linux >= 4.0) and, on exit, reads the peak (``VmHWM``) into ``m.peak_rss_mib``: the peak of the
block itself, and ``m.peak_rss_mib - m.rss_before_mib`` its memory above what was resident. Where
the counter cannot be reset the peak falls back to ``ru_maxrss`` (the process's lifetime peak)
and ``m.peak_source`` says so. Every task row of the benchmark runner carries both figures; the
benchmark scripts' harness (``benchmarks/_harness.py``) uses the same functions.
"""

from __future__ import annotations

import contextlib
import re
import resource

_STATUS = "/proc/self/status"


def _proc_status_mib(field: str) -> float | None:
    try:
        with open(_STATUS) as fh:
            match = re.search(rf"^{field}:\s+(\d+)\s+kB", fh.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) / 1024.0 if match else None


def current_rss_mib() -> float:
    """Resident memory now (``VmRSS``; falls back to the lifetime peak ``ru_maxrss``)."""
    rss = _proc_status_mib("VmRSS")
    return rss if rss is not None else lifetime_peak_rss_mib()


def lifetime_peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS counter ``VmHWM`` of this process; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return _proc_status_mib("VmHWM") is not None


class Memory:
    """Filled in by :func:`peak_rss`: ``rss_before_mib``, ``peak_rss_mib``, ``peak_source``."""

    rss_before_mib: float = float("nan")
    peak_rss_mib: float = float("nan")
    peak_source: str = ""

    def read_peak(self, reset: bool) -> None:
        """Read the peak: ``VmHWM`` since the reset when ``reset`` succeeded (the block's own
        peak), else the process's lifetime peak (``ru_maxrss``), with its source."""
        hwm = _proc_status_mib("VmHWM") if reset else None
        if hwm is not None:
            self.peak_rss_mib, self.peak_source = hwm, "VmHWM of the solve"
        else:
            self.peak_rss_mib, self.peak_source = lifetime_peak_rss_mib(), "ru_maxrss"


@contextlib.contextmanager
def peak_rss():
    """The resident memory before the block and its peak during it (module docstring); the
    peak is read on the way out even when the block raises."""
    m = Memory()
    m.rss_before_mib = current_rss_mib()
    reset = reset_peak_rss()
    try:
        yield m
    finally:
        m.read_peak(reset)
