"""Warnings that point where the user called fairkm, however deep inside it they arise.

A warning raised with a fixed ``stacklevel`` points at the right line only while
the call chain keeps its depth; this one walks out of the package instead.
"""

import os
import sys
import warnings

__all__ = ["warn"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn(message, category=UserWarning):
    """Issue ``message`` as ``category``, attributed to the first caller outside fairkm."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
