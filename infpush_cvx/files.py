"""File writes: every file the project writes goes through here.

A write goes to a temporary file in the target's own folder (so the rename stays on one file
system), is flushed and fsynced, gets the permissions of the file it replaces (a new file: those
a normal ``open(path, "w")`` would give, ``0o666`` minus the umask; ``mkstemp`` alone leaves
``0o600``), and then replaces the target with ``os.replace``, which is atomic on POSIX and
Windows. A process killed at any moment leaves either the old file or the new one, never a
truncated mix; the temporary file is removed on any exception (Ctrl-C and, in the command line,
SIGTERM included), and one left by a killed process is removed by the next write to the same
folder (:func:`remove_stale_temporaries`: temporary names carry their process's id and host).

The write goes *through* the target (:func:`real_target`): a symbolic link is followed
(``os.path.realpath``) so the file it points to is replaced and the link stays; a target that
exists and is not a regular file (a device such as ``/dev/null``, a FIFO, a folder), or a loop of
symbolic links, is refused with a ValueError naming it, before anything is written. An
``OSError`` of the write (a full disk, ``errno.ENOSPC``) names the target file.

    with atomic_path("table.parquet") as tmp:   # for writers that take a path
        df.to_parquet(tmp)

    with atomic_open("table.csv", "w") as fh:   # for writers that take a file object
        df.to_csv(fh)

``check_writable(path)`` is the check to run *before* a long job whose output goes to ``path``;
it creates nothing. The one file the project appends to instead of replacing is a run's partial
results table (:mod:`infpush_cvx.benchmarking.partial`), by design: it keeps every finished row
on disk while the run goes on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import stat
import tempfile
from pathlib import Path

__all__ = ["MalformedFileError", "atomic_open", "atomic_path", "check_writable", "file_kind",
           "named_os_error", "real_target", "remove_stale_temporaries", "write_text_atomic"]


class MalformedFileError(ValueError):
    """A file the project reads (catalog, stored reference, results table) is not valid; the
    message starts with the file's path. The CLI reports it as a usage error (exit 2)."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` that is not a regular file is, in words."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def real_target(path) -> Path:
    """The file a write to ``path`` replaces: ``path`` with its symbolic links followed
    (``os.path.realpath``). ValueError naming ``path`` when that exists and is not a regular
    file (a device, a FIFO, a folder): replacing it by a regular file would destroy it; or
    when the links loop."""
    path = Path(path)
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # no write could ever reach it: say so before any work
            raise ValueError(f"{path}: a loop of symbolic links; refusing to write through "
                             f"it") from None
        try:  # a link of /proc (/dev/stdout -> pipe:[123]) names no path, yet leads somewhere
            mode = os.stat(path).st_mode
        except OSError:
            return real  # missing (the write creates it), or not reachable (the write says so)
        if stat.S_ISREG(mode):  # an open file, maybe deleted: no name to replace it under
            raise ValueError(f"{path} (-> {real}) leads to an open file that has no name to "
                             f"replace; refusing to write through it")
    if not stat.S_ISREG(mode):
        shown = str(path) if real == path.absolute() else f"{path} (-> {real})"
        raise ValueError(f"{shown} is {file_kind(mode)}, not a regular file; refusing to "
                         f"replace it")
    return real


def _owner_tag() -> str:
    """``<pid>@<host>`` in temporary names, so a later process can tell a stale one."""
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
    return f"{os.getpid()}@{host}"


#: The most characters of the target's name a temporary name repeats: a target named with 250
#: characters (file systems allow 255) was refused, its temporary name being too long.
_NAME_IN_TEMPORARY = 100


def _temporary_prefix(target: Path) -> str:
    return f".{target.name[:_NAME_IN_TEMPORARY]}.{_owner_tag()}."


#: A temporary name made here: ``.<target name>.<pid>@<host>.<random>.tmp<suffix>`` (or
#: ``.probe`` for :func:`check_writable`'s probe).
_TEMPORARY = re.compile(r"^\..+\.(?P<pid>\d+)@(?P<host>[A-Za-z0-9-]+)\.[^.]+\.(tmp|probe)")


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would end the process there: assume it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(folder) -> list[Path]:
    """Remove the temporary files that a process of this host killed while writing (SIGKILL,
    a crash) left in ``folder``: those whose process no longer runs. Returns them. A
    temporary file of another host, or of a running process, is left alone."""
    folder = Path(folder)
    host = _owner_tag().partition("@")[2]
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMPORARY.match(name)
        if match is None or match["host"] != host or _alive(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
            removed.append(folder / name)
    return removed


def named_os_error(exc: OSError, path) -> OSError:
    """``exc`` naming ``path`` (an ``OSError`` raised by a writer names no file, or the hidden
    temporary one): same errno and type, so the command line's one-line error says which file
    could not be written (``[Errno 28] No space left on device: 'results/run.csv'``)."""
    if exc.errno is None:
        return exc
    named = OSError(exc.errno, exc.strerror or str(exc), str(path))
    named.__cause__ = exc
    return named


@contextlib.contextmanager
def atomic_path(path, *, suffix: str | None = None):
    """Yield a temporary path beside ``path``'s real file (:func:`real_target`); on success it
    replaces that file atomically.

    ``suffix`` defaults to ``path``'s own suffix, for writers that pick a format from it
    (``savez`` appends ``.npz`` to a name without one; ``savefig`` reads the extension).
    """
    path = Path(path)
    real = real_target(path)
    tmp = None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(real.parent)
        # ".tmp" before the real suffix, so writers that read the extension still see it
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=_temporary_prefix(real),
                                   suffix=".tmp" + (path.suffix if suffix is None else suffix))
        os.close(fd)
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        try:
            mode = stat.S_IMODE(os.stat(real).st_mode)
        except FileNotFoundError:  # a new file: 0o666 less the umask (read by setting it)
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (None, tmp, str(tmp)):
            raise named_os_error(exc, path) from exc
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
    """``path``'s real file (:func:`real_target`), or ``ValueError`` naming ``name`` unless a
    file can be written there.

    Run it before a long job so that its results are not lost at the end. It creates nothing
    (the write creates the missing folders): a throw-away temporary file is made and removed in
    the folder when it exists, else the nearest existing folder above must be writable.
    """
    path = Path(path)
    try:
        real = real_target(path)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    folder = real.parent  # the nearest existing folder
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{name}: cannot write to {path}: {folder} is not a folder")
    try:
        if folder == real.parent:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=_temporary_prefix(real), suffix=".probe")
            os.close(fd)
            os.unlink(tmp)
        elif not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied", str(folder))
    except OSError as exc:
        raise ValueError(f"{name}: cannot write to {path}: {exc.strerror or exc}") from None
    if real.exists() and not os.access(real, os.W_OK):
        raise ValueError(f"{name}: {path} exists and is not writable")
    return real
