"""The one line an interrupted command prints; the standard library only, for the start-up."""

import signal
import sys

__all__ = ["interrupted"]


def interrupted():
    """Say on standard error that the run was interrupted; return 130.

    A second Ctrl-C while the line is written is ignored, so it cannot turn
    the one line into a traceback.
    """
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: no handler can be set, none is needed
        previous = None
    try:
        if sys.stderr is not None:
            print("fairkm: interrupted", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return 130
