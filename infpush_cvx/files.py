"""Atomic file writes: every file the project writes goes through here.

A write goes to a temporary file in the target's own folder (so the rename stays on one file
system), is flushed and fsynced, gets the permissions a normal ``open(path, "w")`` would give
(``0o666`` minus the umask; ``mkstemp`` alone leaves ``0o600``), and then replaces the target
with ``os.replace``, which is atomic on POSIX and Windows. A process killed at any moment leaves
either the old file or the new one, never a truncated mix; the temporary file is removed on
any exception.

    with atomic_path("table.parquet") as tmp:   # for writers that take a path
        df.to_parquet(tmp)

    with atomic_open("table.csv", "w") as fh:   # for writers that take a file object
        df.to_csv(fh)

``check_writable(path)`` is the check to run *before* a long job whose output goes to ``path``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["MalformedFileError", "atomic_open", "atomic_path", "check_writable",
           "write_text_atomic"]


class MalformedFileError(ValueError):
    """A file the project reads (catalog, stored reference, results table) is not valid; the
    message starts with the file's path. The CLI reports it as a usage error (exit 2)."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path, *, suffix: str | None = None):
    """Yield a temporary path beside ``path``; on success it replaces ``path`` atomically.

    ``suffix`` defaults to ``path``'s own suffix, for writers that pick a format from it
    (``savez`` appends ``.npz`` to a name without one; ``savefig`` reads the extension).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # ".tmp" before the real suffix, so writers that read the extension still see it
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                               suffix=".tmp" + (path.suffix if suffix is None else suffix))
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", **kwargs):
    """``open(path, mode)`` that replaces ``path`` atomically when the block ends without error.

    ``mode`` is ``"w"`` or ``"wb"``; ``kwargs`` go to ``open`` (``newline=``, ``encoding=``).
    """
    if mode not in ("w", "wb", "wt"):
        raise ValueError(f"mode must be 'w', 'wt' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh
        fh.flush()


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


def check_writable(path, *, name: str = "out") -> Path:
    """Raise ``ValueError`` naming ``name`` unless a file can be created at ``path``.

    Run it before a long job so that its results are not lost at the end. The folder is created
    if missing (as the write would), and a throw-away temporary file is made and removed in it.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{name}: {path} is a directory, expected a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise ValueError(f"{name}: cannot write to {path}: {exc.strerror or exc}") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{name}: {path} exists and is not writable")
    return path
