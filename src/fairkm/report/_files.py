"""Writing a report to a file: the format its extension names, and whole or not at all."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from fairkm.utils._options import HTML_REPORT, REPORT_SUFFIXES

__all__ = ["report_format", "write_atomically"]


def report_format(path, parameter, *, only=None):
    """Return the format (``"html"`` or ``"text"``) ``path``'s extension names.

    ``only`` limits the formats taken. A ``ValueError`` names ``parameter``,
    the path and the extensions taken, so that no HTML lands in a ``.pdf``.
    """
    suffix = Path(path).suffix.lower()
    taken = {s: f for s, f in REPORT_SUFFIXES.items() if only is None or f == only}
    if suffix not in taken:
        raise ValueError(
            f"{parameter}={str(path)!r}: the extension must be {', '.join(taken)}"
            f"{' (HTML)' if only == HTML_REPORT else ' (HTML or text)'}, got "
            f"{suffix or 'none'!r}; a report is not written as {suffix or 'a file without one'}."
        )
    return taken[suffix]


def write_atomically(path, text):
    """Write ``text`` (UTF-8) to ``path``: beside it first, then renamed over it.

    A reader, or a run interrupted meanwhile, never sees part of a report:
    the old file stays until the new one is whole.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
