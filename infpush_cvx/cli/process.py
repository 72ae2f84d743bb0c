"""How a command runs in its process: its exceptions as one line and an exit status, the
standard streams (named in errors, closed ones handled), and the signals that stop a run the way
Ctrl-C does."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import signal
import sys
import threading
import traceback

from ..files import named_os_error
from .common import EXIT_FAILURE, EXIT_USAGE, TRACEBACK_ENV_VAR, CommandFailed, one_line, tell


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP: the terminal closed), raised where the program is, so a run stops as
    on Ctrl-C: its finished rows are saved, its temporary files removed, and the exit status is
    128 + the signal's number (143, 129)."""

    def __init__(self, signum=signal.SIGTERM):
        super().__init__()
        self.signum = signal.Signals(signum)

    def __str__(self):
        return self.signum.name


def run_reporting_errors(work, *, prog: str = "infpush-cvx", show_traceback: bool = False) -> int:
    """``work()``'s exit status, with its exceptions reported as one line on stderr: exit 2 for
    ValueError, TypeError and OSError (usage errors, unreadable or unwritable files), 3 for any
    other exception (with a hint to the full traceback, which ``show_traceback`` or the
    environment variable ``TRACEBACK_ENV_VAR`` prints), 130 for Ctrl-C."""
    show_traceback = show_traceback or os.environ.get(TRACEBACK_ENV_VAR, "") not in ("", "0")
    try:
        with _named_stdout():
            code = work()
            sys.stdout.flush()
        return code
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", None) or getattr(getattr(exc, "cause", None), "signum",
                                                         None) or signal.SIGINT
        tell(f"{prog}: " + ("interrupted" if signum == signal.SIGINT else "terminated"
                            if signum == signal.SIGTERM else
                            f"stopped by {signal.Signals(signum).name}"))
        return 128 + int(signum)
    except BrokenPipeError:
        # the reader went away (``infpush-cvx list | head``): stop quietly, with the status of a
        # process ended by SIGPIPE, and keep Python from failing again when it flushes stdout
        _stdout_to_devnull()
        return 128 + 13
    except Exception as exc:
        error = exc
    if isinstance(error, OSError) and error.filename == STDOUT:
        with contextlib.suppress(OSError, ValueError):
            _stdout_to_devnull()  # what was left unwritten goes nowhere at exit
    if isinstance(error, (ValueError, TypeError, OSError)):
        code, message = EXIT_USAGE, one_line(error)
        for pattern, words in _COMMAND_LINE_WORDS:
            message = pattern.sub(words, message)
    else:
        code = EXIT_FAILURE
        message = one_line(error) if isinstance(error, CommandFailed) else \
            f"unexpected {type(error).__name__}: {one_line(error)}"
        if not show_traceback:
            message += (f" (run again with --traceback, or {TRACEBACK_ENV_VAR}=1, for the full "
                        f"traceback)")
    if show_traceback:
        traceback.print_exception(error)
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


#: How the errors name the standard output.
STDOUT = "<stdout>"


class _NamedStream:
    """A text stream whose write errors (``> /dev/full``: ENOSPC) name it, so the one-line
    error says the output, not a file, could not be written (a closed pipe stays a
    BrokenPipeError: the reader went away)."""

    def __init__(self, stream, name: str):
        self._stream, self._name = stream, name

    def _named(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise named_os_error(exc, self._name) from exc

    def write(self, text):
        return self._named(self._stream.write, text)

    def flush(self):
        return self._named(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _named_stdout():
    stream = sys.stdout
    sys.stdout = _NamedStream(stream, STDOUT)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _NamedStream):  # unless the command replaced it
            sys.stdout = stream


def _stop(signum, frame):
    """The first SIGINT, SIGTERM or SIGHUP: stop the run (KeyboardInterrupt, or
    :class:`Terminated`), and ignore the next ones while it saves what it did (a second Ctrl-C
    a moment after the first cut the save short: the final table was never written)."""
    for handled in _STOPPING:
        if signal.getsignal(handled) is _stop:
            signal.signal(handled, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


#: The signals that stop a run as Ctrl-C does, with their default handlers.
_STOPPING = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL,
             **({signal.SIGHUP: signal.SIG_DFL} if hasattr(signal, "SIGHUP") else {})}


@contextlib.contextmanager
def signals_stop_the_run():
    """SIGINT, SIGTERM, and SIGHUP (the terminal closed; unless ignored, as under ``nohup``)
    call :func:`_stop` while the command runs (main thread only), so the run stops as on Ctrl-C,
    saving its rows, removing its temporary files and killing its workers (SIGHUP's default
    action ended the process at once and left them solving). SIGINT and SIGHUP are left as
    they are when their handler is not the default (ignored for a background job, or by
    ``nohup``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _stop) for signum, default in _STOPPING.items()
                if signum == signal.SIGTERM or signal.getsignal(signum) is default}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


#: The library's words for what the command line calls otherwise: its errors name Python
#: arguments (``data_dir=...``) and functions, the command line's name flags and commands.
_COMMAND_LINE_WORDS = (
    (re.compile(r"by passing data_dir=\.\.\., by"), "with --data-dir (experiments) or by"),
    (re.compile(r"no data_dir argument"), "no --data-dir"),
    (re.compile(r",? or by calling the loader with download=True when online"), ""),
    (re.compile(r"pass directory=\.\.\. or set"), "set"),
    (re.compile(r"see infpush_cvx\.catalog\.problem_ids\(\)"),
     "see `infpush-cvx list --tier all`"),
)


class _ClosedStream(io.TextIOBase):
    """The standard output when it was closed (``infpush-cvx list >&-``: ``sys.stdout`` is None):
    a write fails (EBADF, named by :class:`_NamedStream`), a usage error (exit 2), not an
    AttributeError (exit 3); it has no file descriptor, is no terminal, and has nothing to
    flush (:class:`io.TextIOBase`)."""

    def write(self, text):
        raise OSError(errno.EBADF, "closed", STDOUT)


def standard_streams() -> None:
    """A closed stdout writes nowhere with an error (:class:`_ClosedStream`); a closed stderr
    (``2>&-``) becomes /dev/null: the progress bar and messages are lost, not the run (the
    progress bar's first write failed and ended ``check`` with exit 1 and no message). The
    closed descriptors 0-2 are opened on /dev/null first, so that no file the run opens (its
    .partial table) takes their number and receives what a solver prints."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    if sys.stdout is None:
        sys.stdout = _ClosedStream()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")
