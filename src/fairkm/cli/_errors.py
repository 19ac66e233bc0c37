"""The kinds of error the command line reports in one line, by exit status."""

__all__ = ["DataError", "Terminated", "UsageError", "one_line"]


class DataError(Exception):
    """A problem with an input or output file, reported in one line (exit status 1)."""


class UsageError(Exception):
    """Options that do not fit together (exit status 2)."""


class Terminated(BaseException):  # noqa: N818 (a signal, like KeyboardInterrupt)
    """SIGTERM arrived: the run stops and cleans up as after Ctrl-C (exit status 143)."""


def one_line(exc):
    """Return an exception's message on one line (its type's name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__
