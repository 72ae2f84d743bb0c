"""The catalog's own files: names that stay in their folder, and small regular files only.

A catalog name (a problem ID, an instance name) becomes a file name (``<ID>.json`` in the
reference folder, ``<name>.npz`` of ``infpush-cvx generate``), so it must be a plain file name:
:data:`NAME_PATTERN` (letters, digits, ``_``, ``.`` and ``-``; not starting with ``.`` or ``-``;
at most :data:`MAX_NAME_LENGTH` characters), which leaves no room for a separator, ``..``, a NUL
byte or a hidden file. :func:`path_in` checks the name and then, as a second defence, that the
path it builds resolves to a file directly inside the folder.

The catalog and the stored records are small text files (the catalog is under 10 kB, a record
under 2 kB): :func:`read_small_file` reads at most :data:`MAX_FILE_BYTES` (16 MiB) of a regular
file. It opens without blocking (``O_NONBLOCK``, so a FIFO with no writer does not wait) and
refuses anything that is not a regular file by its kind (a FIFO, a device such as ``/dev/zero``,
a folder) before reading a byte.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..files import MalformedFileError, file_kind

#: The longest catalog name: its file name (``.<name>.<random>.tmp.json`` while it is written
#: atomically) stays under the 255 bytes most file systems allow.
MAX_NAME_LENGTH = 200
#: What a catalog name may be: a plain file name, with no separator, no NUL, not hidden
#: (``.``) and not read as a command-line option (``-``).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
#: The most bytes read from a catalog or a stored record: a generous bound (both are a few kB).
MAX_FILE_BYTES = 16 * 1024 * 1024


def check_name(name, what: str) -> str:
    """``name`` when it is a valid catalog name (:data:`NAME_PATTERN`, at most
    :data:`MAX_NAME_LENGTH` characters); ValueError naming ``what`` otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a string, got {type(name).__name__}")
    if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.fullmatch(name):
        shown = name if len(name) <= 80 else name[:80] + "..."
        raise ValueError(f"{what} {shown!r} is not a valid name: use letters, digits, '_', '.' "
                         f"and '-' only, not starting with '.' or '-', at most "
                         f"{MAX_NAME_LENGTH} characters")
    return name


def path_in(folder, name: str, suffix: str, what: str) -> Path:
    """``folder / (name + suffix)``, after checking ``name`` (:func:`check_name`) and that the path
    resolves to a file directly inside ``folder``; ValueError naming ``what`` otherwise."""
    check_name(name, what)
    root = Path(folder).resolve()
    resolved = Path(os.path.normpath(root / f"{name}{suffix}"))
    if resolved.parent != root:
        raise ValueError(f"{what} {name!r}: its file {resolved} would be outside {root}")
    return Path(folder) / f"{name}{suffix}"


def read_small_file(path, what: str = "file", limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (default
    :data:`MAX_FILE_BYTES`) of them.

    :class:`~infpush_cvx.files.MalformedFileError` starting with the path when it is not a
    regular file (saying what it is) or holds more than ``limit`` bytes; ``what`` names the
    file's role in the message. OSError as ``open`` raises it (FileNotFoundError for a missing
    file, PermissionError...). Never blocks on a FIFO and never reads a device.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MalformedFileError(f"{path}: {file_kind(info.st_mode)}, not a regular file; a "
                                     f"{what} must be a regular file")
        if info.st_size > limit:
            raise MalformedFileError(f"{path}: {info.st_size} bytes, more than the {limit} a "
                                     f"{what} may hold")
        # the size may have grown since fstat: read to the end or one byte past limit
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise MalformedFileError(f"{path}: more than the {limit} bytes a {what} may hold")
        return data
    finally:
        os.close(fd)
