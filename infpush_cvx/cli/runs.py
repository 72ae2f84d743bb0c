"""A solving run's table (``check`` and ``bench``): rows appended to a ``.partial`` file as
solves end, the final files written before anything is printed, what an interrupted run saves,
and the summary with its exit status."""

from __future__ import annotations

import sys

from .common import EXIT_DISAGREEMENT, one_line, tell


def partial_table(final):
    """The ``.partial`` file of the run whose final table is ``final`` (rows as they end),
    checked before any solve: ValueError naming --out when a link, a FIFO or a folder is there."""
    from ..benchmarking.partial import PartialTable
    from ..benchmarking.tasks import COLUMNS, versions
    partial = PartialTable(final, COLUMNS + list(versions()))
    try:
        partial.check()
    except ValueError as exc:
        raise ValueError(f"--out: {exc}") from None
    return partial


def save_final(write, partial):
    """``write()`` the final files, then remove the ``.partial`` file; if the write fails (a
    full disk), keep it and say where the rows are, in the error that names the file."""
    try:
        result = write()
    except OSError as exc:
        partial.close()
        if not partial.rows or exc.errno is None:
            raise
        raise OSError(exc.errno, f"{exc.strerror or exc} (the {partial.rows} finished rows are "
                                 f"kept in {partial.path})", exc.filename) from exc
    partial.discard()
    return result


def save_interrupted(stopped, write, partial, where) -> None:
    """A run stopped by Ctrl-C, SIGTERM or SIGHUP: save what it did (``write()``; a second
    signal meanwhile is ignored, :func:`signals_stop_the_run`), say so on stderr, and stop
    (re-raise, exit 130, 143 or 129)."""
    table = stopped.run.table
    if table.empty:  # nothing started: keep the previous files as they are
        tell("no solve had started; nothing saved")
        raise stopped
    cut = int((table["status"] == "interrupted").sum())
    try:
        save_final(write, partial)
        saved = f"saved to {where}"
    except OSError as exc:
        saved = f"not saved: {one_line(exc)}"
    solves = "solve" if len(table) == 1 else "solves"
    tell(f"{len(table) - cut} finished and {cut} interrupted {solves} {saved}")
    raise stopped


def print_summary(df, counted: str, saved: str, time_limit) -> int:
    """The summary of a run's table ``df`` (one line per solver, then the totals), the rows
    that fail the run on stderr; returns the exit status."""
    from ..benchmarking import compare
    kinds = compare.outcomes(df)
    print("\n" + compare.format_summary(compare.summary(df, time_limit=time_limit)))
    counts = ", ".join(f"{int((kinds == k).sum())} {k}" for k in compare.OUTCOMES)
    print(f"\n{counted}: {counts}\n(solved: within tolerance of the stored value; "
          f"suboptimal: stopped without a certificate,\nsuch as a fixed iteration budget; "
          f"disagrees: claims an optimum the stored value contradicts)\n{saved}")
    bad = df[(kinds == "disagrees") | df["status"].map(compare.broken)]
    if len(bad):
        print("DISAGREEMENTS (or solves that could not run):\n" + compare.format_table(bad),
              file=sys.stderr)
    return EXIT_DISAGREEMENT if compare.exit_status(df) else 0
