"""Where the user called fairkm: warnings point there, parameter refusals name what was called.

A warning raised with a fixed ``stacklevel`` points at the right line only while
the call chain keeps its depth, and a check deep inside does not know which
public function the user called; both walk out of the package instead.
"""

import os
import sys
import warnings

__all__ = ["entry_point", "warn"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _outside(frame):
    """Return ``(the frame of fairkm the user called, its depth below the user's frame)``."""
    entry, level = None, 0
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        entry, frame, level = frame, frame.f_back, level + 1
    return entry, level


def warn(message, category=UserWarning):
    """Issue ``message`` as ``category``, attributed to the first caller outside fairkm."""
    _, level = _outside(sys._getframe(1))
    warnings.warn(message, category, stacklevel=level + 2)


def entry_point():
    """Return the name of the fairkm function or method the user called (``FairKM.fit``)."""
    entry, _ = _outside(sys._getframe(1))
    if entry is None:
        return "fairkm"
    return getattr(entry.f_code, "co_qualname", entry.f_code.co_name)
