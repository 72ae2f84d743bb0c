"""The rows of a run on disk as each solve ends: ``<table>.partial`` beside the final table.

A run's final tables are written once, atomically, when the run ends (:mod:`infpush_cvx.files`).
Until then every finished row is appended to a CSV file of its own, ``<final name>.partial``
(``results/comparison.csv.partial``), flushed and fsynced row by row: a run killed at any moment
(``kill -9``, a lost machine) leaves every row that finished in that file, readable with
``pandas.read_csv`` (a row cut by the kill is at most the last line). The file is created with
its first row, so a run that finishes nothing creates nothing; it is removed once the final
table is written (SIGINT and SIGTERM included: the command line then writes the rows so far as
the final table), and kept when that write fails (a full disk), so no finished row is lost.

The name belongs to the run: a symbolic link there is not followed (it would send the rows to
a file outside the run's folder) and a FIFO, a folder or a device there is not written to (a
FIFO would block the run for ever). :meth:`PartialTable.check`, run before the first solve,
refuses them with a ValueError naming the path; a regular file there (left by a killed run) is
replaced.

Its columns are the results table's (``tasks.COLUMNS`` then ``version_<pkg>``); a value that is
None is an empty field. Appending, not replacing, is the point of this file: it is the one file
of the package not written through :func:`infpush_cvx.files.atomic_path`.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import logging
import os
import stat
from pathlib import Path

from ..files import file_kind, named_os_error, real_target

log = logging.getLogger(__name__)

#: Appended to the final table's file name.
SUFFIX = ".partial"


def partial_path(final) -> Path:
    """Where the rows of the run whose final table is ``final`` are appended."""
    final = real_target(final)
    return final.with_name(final.name + SUFFIX)


class PartialTable:
    """Append rows (dicts) to :func:`partial_path` of ``final``, each on disk before the next.

    An ``OSError`` (a full disk) names the file and leaves the rows already written. A file
    left by an earlier run that was killed is replaced at the first row (with a warning).
    """

    def __init__(self, final, columns):
        self.path = partial_path(final)
        self.columns = list(columns)
        self.rows = 0
        self._fh = None
        self._writer = None

    def check(self) -> None:
        """ValueError naming :attr:`path` when something other than a regular file is there (a
        symbolic link, a FIFO, a folder, a device): run it before the first solve, so that the
        run does not end at its first row, block on a FIFO or write through a link."""
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ValueError(f"{self.path}: cannot use it for the run's rows: "
                             f"{exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else file_kind(mode)
            raise ValueError(f"{self.path} is {kind}, where the run appends its rows as "
                             f"they end; remove it or choose another output")

    def _open(self):
        """The file, new: a regular file left there by a killed run is removed first; the
        open creates it exclusively and follows no link, so nothing else is ever written."""
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISREG(os.lstat(self.path).st_mode):
                log.warning("%s: replacing the rows of an earlier run that did not end",
                            self.path)
                os.unlink(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except FileExistsError:  # something appeared there since the check
            raise OSError(errno.EEXIST, "something that is not the run's file appeared there",
                          str(self.path)) from None
        return os.fdopen(fd, "w", newline="", encoding="utf-8")

    def append(self, row: dict) -> None:
        try:
            if self._fh is None:
                self._fh = self._open()
                self._writer = csv.DictWriter(self._fh, self.columns, extrasaction="ignore")
                self._writer.writeheader()
            self._writer.writerow(row)
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise named_os_error(exc, self.path) from exc
        self.rows += 1

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            with contextlib.suppress(OSError):  # its rows were flushed and fsynced one by one
                fh.close()

    def discard(self) -> None:
        """Close and remove the file (the final table now holds its rows)."""
        self.close()
        if self.rows:
            self.path.unlink(missing_ok=True)
