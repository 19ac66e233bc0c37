"""The kinds of error the command line reports in one line, by exit status.

The library checks its inputs itself and says what is wrong, naming the
parameter: the command line passes it what it read and turns its
``ValueError`` and ``TypeError`` into one of its own kinds
(:func:`library_errors`), the parameters named as the options that set them,
rather than repeating its rules.
"""

import contextlib
import re

__all__ = ["DataError", "Terminated", "UsageError", "library_errors", "one_line"]


class DataError(Exception):
    """A problem with an input or output file, reported in one line (exit status 1)."""


class UsageError(Exception):
    """Options that do not fit together (exit status 2)."""


class Terminated(BaseException):  # noqa: N818 (a signal, like KeyboardInterrupt)
    """SIGTERM arrived: the run stops and cleans up as after Ctrl-C (exit status 143)."""


def one_line(exc):
    """Return an exception's message on one line (its type's name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


# The library's parameters that options set, as the options name them.
_OPTIONS = {"max_deviation": "--max-deviation", "deviation_kind": "--deviation-kind",
            "min_balance": "--min-balance", "numeric_sensitive": "--numeric-sensitive"}
_PARAMETER = re.compile(r"\b(" + "|".join(_OPTIONS) + r")\b")


@contextlib.contextmanager
def library_errors(kind):
    """Turn the library's ``ValueError`` or ``TypeError`` in the block into ``kind``.

    ``kind`` is :class:`UsageError` where the block checks options,
    :class:`DataError` where it reads the data. The message is the library's,
    on one line, each parameter an option sets named as that option.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise kind(_PARAMETER.sub(lambda m: _OPTIONS[m.group(1)], one_line(exc))) from None
