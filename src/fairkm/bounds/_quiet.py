"""Keep HiGHS's stray debug line off the user's standard output.

The HiGHS bundled with scipy 1.17 writes
``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``
with a bare ``printf`` when a solution of a presolved integer programme has to
be repaired (a debug line, removed upstream in HiGHS 1.13: ERGO-Code/HiGHS#2783;
docs/bounds.md says why highspy was not used instead); no option (``disp``,
``output_flag``) reaches it. While an integer programme runs, file
descriptor 1 points at the null device; C's buffer is flushed before it is
restored, so the line cannot surface later either. The threads of a process
share the descriptor: one redirection covers every programme running at once,
and output other threads write at that moment is lost with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading

__all__ = ["quiet_stdout"]

_LOCK = threading.Lock()
_state = {"depth": 0, "saved": None}


def _flush_c_stdout():
    if "libc" not in _state:
        try:
            _state["libc"] = ctypes.CDLL(None)
        except (OSError, TypeError):  # no C library to ask (Windows)
            _state["libc"] = None
    if _state["libc"] is not None:
        _state["libc"].fflush(None)


def _redirect():
    # What was written before the block goes where it was meant to.
    try:
        sys.stdout.flush()
    except (AttributeError, ValueError, OSError):  # closed or replaced streams
        pass
    _flush_c_stdout()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (a service, some notebooks): nothing to protect
        return None
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
    finally:
        os.close(null)
    return saved


def _restore(saved):
    if saved is None:
        return
    _flush_c_stdout()
    os.dup2(saved, 1)
    os.close(saved)


@contextlib.contextmanager
def quiet_stdout():
    """Send what native code writes to standard output to the null device, in the block."""
    with _LOCK:
        if _state["depth"] == 0:
            _state["saved"] = _redirect()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _restore(_state["saved"])
                _state["saved"] = None
