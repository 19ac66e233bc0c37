r"""Text from the data made safe to print and to put in a page: control characters made visible.

Column names, category values and profile values come from the user's files
and may hold NUL or a terminal's escape sequences (``"\x1b[31m"`` recolours the
terminal, ``"\r"`` overwrites the line before it, NUL is invalid in HTML).
The audit's text and HTML and what the command line prints of the data pass
through :func:`visible`.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

# Unicode's control characters (category Cc): C0, DEL and C1.
_CONTROL = "\x00-\x1f\x7f-\x9f"
# A control character, or a run of backslashes that stands before an "x" or a control
# character: such a run is doubled so that a literal "\x1b" in the data stays apart from
# the escape an ESC becomes.
_PATTERN = re.compile(rf"\\+(?=[x{_CONTROL}])|[{_CONTROL}]")


def visible(text, *, keep="\n"):
    r"""Return ``text`` with every control character written as a visible escape.

    Parameters
    ----------
    text : str
    keep : str, default="\n"
        Control characters left as they are (the line breaks of a report).

    Returns
    -------
    str
        ``text`` where every other control character (C0, DEL, C1) reads as
        a backslash, ``x`` and its two hex digits (``"\x1b"``, ``"\x00"``,
        ``"\x85"``), and a run of backslashes before an ``x`` or such an
        escape is doubled. Distinct texts stay distinct (the mapping is
        one-to-one), and text without control characters or a backslash
        before an ``x`` is returned unchanged.
    """

    def escape(match):
        found = match.group()
        if found[0] == "\\":  # before an "x" or a control character: doubled, unless kept
            return found if text[match.end()] in keep else found * 2
        return found if found in keep else f"\\x{ord(found):02x}"

    return _PATTERN.sub(escape, text)
