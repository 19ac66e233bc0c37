"""``main``: parse the arguments, run the command, turn errors into exit statuses.

A command writes its files before it prints, so a standard output that fails
(a closed pipe, a full disk) never costs them: a closed pipe (``| head``) ends
the printing silently with the command's own status; another failure is an
error (status 1) saying that the files were written. SIGTERM stops a run as
Ctrl-C does (its temporary files removed), with status 143.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import sys
import threading
import warnings

from fairkm.utils._printable import visible

from ._errors import DataError, Terminated, UsageError, one_line
from ._interrupt import interrupted
from ._parser import build_parser, check_option_combinations
from ._progress_bar import compile_notice

__all__ = ["main"]


class _StdoutError(Exception):
    """Standard output could not be written (the ``OSError`` is the cause)."""


class _Stdout:
    """Standard output for the time of a command: a failed write raises :class:`_StdoutError`."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _StdoutError from exc

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            raise _StdoutError from exc

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv=None):
    """Run the ``fairkm`` command.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (without the program name); None reads ``sys.argv``.

    Returns
    -------
    int
        The exit status: 0 on success, 1 on a data or file error (reported on
        one line of standard error, without a traceback), 2 on a usage error,
        130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM). Output
        files are written before anything is printed: when standard output
        is a closed pipe the printing stops silently and the status is the
        command's; when it fails otherwise (a full disk) the status is 1.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:  # outside a command: parsing, the warnings' lines, the set-up
        return interrupted()


def _main(argv):
    _open_standard_streams()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version and usage errors
        return exc.code
    args.written = []  # the output files written, for the messages
    with warnings.catch_warnings(record=True) as caught:
        # Warnings (such as FairKM reaching max_iter) become one-line notes.
        warnings.simplefilter("always")
        try:
            with _sigterm_raises(), compile_notice(getattr(args, "quiet", False)):
                return _dispatch(args)
        finally:
            for warning in caught:
                _error_line(f"fairkm: warning: {' '.join(str(warning.message).split())}")


def _dispatch(args):
    stdout = sys.stdout
    try:
        if stdout is not None:  # None: no standard output at all (`>&-`), nothing printed
            sys.stdout = _Stdout(stdout)
        try:
            # The commands (and the libraries they need) load only once a command runs,
            # so --help and usage errors answer at once.
            check_option_combinations(args)
            commands = importlib.import_module("._commands", __package__)
            status = getattr(commands, args.func)(args)
            if sys.stdout is not None:
                sys.stdout.flush()
        finally:
            sys.stdout = stdout
    except _StdoutError as exc:
        return _stdout_failed(stdout, exc.__cause__, args.written)
    except UsageError as exc:
        args.parser.print_usage(sys.stderr)
        print(visible(f"{args.parser.prog}: error: {exc}"), file=sys.stderr)
        return 2
    except (DataError, ValueError, OSError, ImportError) as exc:
        _error_line(f"fairkm: error: {one_line(exc)}")
        return 1
    except KeyboardInterrupt:
        return interrupted()
    except Terminated:
        _error_line("fairkm: terminated")
        return 143
    return status


@contextlib.contextmanager
def _sigterm_raises():
    """Raise :class:`Terminated` on SIGTERM, so a run cleans up as after Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def terminate(signum, frame):
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _stdout_failed(stream, exc, written):
    """Answer a failed standard output (the files are written): 0 for a closed pipe, else 1."""
    if stream is sys.__stdout__:
        # What is still buffered would fail again when Python exits.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return 0  # the reader stopped reading (`| head`): not an error
    files = ", ".join(repr(str(path)) for path in written)
    done = f"; the files were written first: {files}" if files else ""
    _error_line(f"fairkm: error: cannot print the summary: {one_line(exc)}{done}.")
    return 1


def _error_line(line):
    """Print one line on standard error, if there is one that works.

    A value from the data quoted in the line prints with its control characters
    made visible, as everything the command prints.
    """
    if sys.stderr is None:
        return
    try:
        print(visible(line), file=sys.stderr)
    except (OSError, ValueError):
        pass


def _open_standard_streams():
    """Open /dev/null on a closed standard output or error (``>&-``).

    Otherwise the first file opened would take its number, and anything
    written to it (by any library) would land in that file.
    """
    for fd in (1, 2):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
