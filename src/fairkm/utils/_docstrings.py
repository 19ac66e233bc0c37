"""Docstring text that several public names share, written once and filled in at import.

A docstring names a shared entry with a placeholder alone on its line,
``%(sample_weight)s`` say; a filler made by :func:`docstring_filler` replaces it
with the entry, indented like the placeholder. Only whole-line placeholders are
replaced, so a ``%`` elsewhere in a docstring is left alone. The entries here
are the inputs' (what ``fairkm.utils`` reads); the measures and the estimators
add their own tables.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["INPUT_ENTRIES", "docstring_filler"]

# Each entry is written as it would sit at column 0 of a docstring: a parameter line,
# then its description indented by four spaces.
INPUT_ENTRIES = {
    "numeric_sensitive": """\
numeric_sensitive : "auto", bool or list of str or int, default="auto"
    Which attributes are numeric: ``"auto"`` treats float columns as
    numeric and all others as categorical, ``True``/``False`` makes every
    attribute numeric/categorical, and a list names (or gives the
    positions of) the numeric attributes.""",
    "sample_weight": """\
sample_weight : array-like of shape (n_samples,), default=None
    Row weights: finite, non-negative, not all zero. A row of weight w
    counts as w rows (integer weights give the result of repeating each row
    w times, zero weights that of dropping the rows). ``None`` (or all ones)
    weighs every row 1. A Series is paired with the rows by index label when
    the labels (or ``X``) are pandas objects.""",
    "intersections": """\
intersections : sequence of sequence of str, default=None
    Combinations of categorical attributes to treat as further attributes,
    such as ``[("sex", "race")]``: each adds an attribute named
    ``"sex & race"`` whose values are the observed combinations. Only
    categorical attributes can be intersected.""",
    "deviation_kind": """\
deviation_kind : {"additive", "multiplicative"}, default="additive"
    How ``max_deviation`` reads: ``"additive"`` asks
    :math:`|C_S(s) - X_S(s)| \\le \\delta`, ``"multiplicative"`` (Bera et
    al.'s band, as MPV) asks :math:`(1 - \\delta) X_S(s) \\le C_S(s) \\le
    X_S(s) / (1 - \\delta)`, with :math:`\\delta` below 1.""",
    "random_state": """\
random_state : int, RandomState instance or None, default=None
    Seeds the initialisation. The same value gives identical labels.""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", flags=re.MULTILINE)


def docstring_filler(*tables):
    """Return ``fill(obj, entries=None)``, filling ``obj.__doc__`` from ``tables``.

    Parameters
    ----------
    *tables : dict of str to str
        The entries a placeholder may name (a later table wins).

    Returns
    -------
    callable
        ``fill(obj, entries=None)`` replaces the whole-line placeholders of
        ``obj.__doc__`` (a function or a class) with the named entries, or
        with ``entries`` (text only one module can write), and returns
        ``obj``. A placeholder naming no entry raises ``KeyError`` at import
        time, so a typo cannot reach a user.
    """
    known = {name: text for table in tables for name, text in table.items()}

    def fill(obj, entries=None):
        table = known if entries is None else {**known, **entries}
        if obj.__doc__ is not None:  # None under python -OO
            obj.__doc__ = _PLACEHOLDER.sub(
                lambda match: textwrap.indent(table[match[2]], match[1]), obj.__doc__)
        return obj

    return fill
