"""Reading and checking raw sensitive columns: the one reader every entry point uses.

Every public function or estimator that takes ``sensitive_features``
(FairKM in memory and on Dask, the baselines, the bounds, the measures, the
audit, Dask's partitions, the command line) reads them here (:func:`read_columns`,
:func:`resolve_numeric`, :func:`check_sensitive_features`, one column at a time
:func:`read_column`), so the input forms accepted, the rule that
decides which attributes are numeric, the error messages and the category
codes are the same everywhere. Intersections (:func:`with_intersections`) are
built here too. This module sits at the bottom of the package: it imports
nothing of fairkm but ``_validation`` and ``_params``; what a fit learns from
the columns is ``_encoding.SensitiveEncoding``.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._param_validation import INTERSECTIONS, NUMERIC_SENSITIVE, check_param
from ._sums import weighted_sum
from ._validation import check_no_missing, first_row, labelled_rows, name_row

__all__ = [
    "checked_scale",
    "standardize_numeric",
    "value_range",
    "CATEGORICAL",
    "NUMERIC",
    "SensitiveFeatures",
    "check_sensitive_features",
    "columns_frame",
    "read_column",
    "read_columns",
    "resolve_numeric",
    "with_intersections",
]

CATEGORICAL = "categorical"
NUMERIC = "numeric"


@dataclass(frozen=True)
class SensitiveFeatures:
    """Sensitive attributes, validated and encoded.

    Attributes
    ----------
    names : list of str
        One name per attribute, in column order.
    kinds : list of {"categorical", "numeric"}
        The kind of each attribute.
    columns : list of ndarray of shape (n_samples,)
        Per attribute: int64 codes into ``categories[j]`` for a categorical
        attribute, float64 values for a numeric one.
    categories : list of pandas.Index or None
        Per attribute: the sorted observed values of a categorical attribute
        (in their own dtype), ``None`` for a numeric one.
    """

    names: list
    kinds: list
    columns: list
    categories: list

    @property
    def n_attributes(self):
        """Number of sensitive attributes."""
        return len(self.names)

    @property
    def n_samples(self):
        """Number of rows."""
        return self.columns[0].shape[0]

    def select(self, kind):
        """Return the indices of the attributes of the given kind, in column order."""
        return [j for j, k in enumerate(self.kinds) if k == kind]


def read_columns(sensitive_features):
    """Split the input into (names, raw columns, auto-numeric flags).

    A dict of columns reads as the DataFrame it makes. Its Series must share
    one index: pandas would align Series of different indexes by label
    (sorting the labels), an order that pairs with no row of an ``X``
    without labels. Beside an ``X`` with labels each Series has been paired
    with them first (:func:`fairkm.utils._inputs.paired`), so they share
    ``X``'s index.
    """
    if isinstance(sensitive_features, dict):
        _check_one_index(sensitive_features)
        try:
            sensitive_features = pd.DataFrame(sensitive_features)
        except ValueError as exc:
            raise ValueError(
                f"sensitive_features is a dict that does not make a table of columns ({exc})."
            ) from exc
    if isinstance(sensitive_features, pd.DataFrame):
        names = [str(c) for c in sensitive_features.columns]
        if len(set(names)) != len(names):
            raise ValueError(
                "sensitive_features has duplicate column names: "
                f"{list(sensitive_features.columns)}."
            )
        cols = [sensitive_features.iloc[:, j] for j in range(sensitive_features.shape[1])]
        auto = [pd.api.types.is_float_dtype(c.dtype) for c in cols]
        return names, cols, auto
    if isinstance(sensitive_features, pd.Series):
        name = "s0" if sensitive_features.name is None else str(sensitive_features.name)
        return [name], [sensitive_features], [pd.api.types.is_float_dtype(sensitive_features.dtype)]
    if isinstance(sensitive_features, (str, bytes)) or np.isscalar(sensitive_features):
        raise TypeError(
            "sensitive_features must be a 1-D or 2-D array-like, a pandas Series or a "
            f"DataFrame, got {type(sensitive_features).__name__}."
        )
    try:
        arr = np.asarray(sensitive_features)
    except Exception as exc:  # ragged lists and other unconvertible input
        raise TypeError(
            "sensitive_features could not be converted to an array: "
            f"{type(sensitive_features).__name__} ({exc})."
        ) from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"sensitive_features must be 1-D or 2-D, got an array of shape {arr.shape}."
        )
    if arr.dtype.kind not in "biufcUSOM":
        raise TypeError(f"sensitive_features has unsupported dtype {arr.dtype}.")
    if arr.dtype.kind == "c":
        raise TypeError("sensitive_features must not be complex.")
    names = [f"s{j}" for j in range(arr.shape[1])]
    cols = [arr[:, j] for j in range(arr.shape[1])]
    auto = [arr.dtype.kind == "f"] * arr.shape[1]
    return names, cols, auto


def _check_one_index(columns):
    """Refuse a dict whose Series do not all have the first Series' index, naming the column."""
    first = None
    for key, column in columns.items():
        if not isinstance(column, pd.Series):
            continue
        if first is None:
            first = key, column.index
        elif not column.index.equals(first[1]):
            head = ", ".join(repr(v) for v in list(column.index[:3]))
            raise ValueError(
                f"sensitive_features[{key!r}] has another index than "
                f"sensitive_features[{first[0]!r}] ({head}, ... against "
                f"{', '.join(repr(v) for v in list(first[1][:3]))}, ...): without index "
                "labels on X the Series of a dict pair with X's rows by position, so they "
                "must share one index. Give X as a DataFrame with these labels (each "
                "Series is then paired with X's rows by label), or give the Series one "
                "index."
            )


def columns_frame(names, columns):
    """Return the columns :func:`read_columns` gives as a DataFrame indexed 0..n-1.

    Each column keeps its dtype, so the numeric rule reads it as before.
    """
    return pd.DataFrame({
        name: col.reset_index(drop=True) if isinstance(col, pd.Series) else pd.Series(col)
        for name, col in zip(names, columns, strict=True)
    })


def resolve_numeric(numeric, names, auto):
    """Apply the ``numeric`` override to the automatic rule."""
    check_param("numeric_sensitive", numeric, NUMERIC_SENSITIVE)
    if isinstance(numeric, str):
        return list(auto)
    if isinstance(numeric, (bool, np.bool_)):
        return [bool(numeric)] * len(names)
    flags = [False] * len(names)
    for item in numeric:
        if isinstance(item, numbers.Integral) and not isinstance(item, bool):
            if not -len(names) <= item < len(names):
                raise ValueError(
                    f"numeric_sensitive position {item} is out of range for "
                    f"{len(names)} sensitive attribute(s)."
                )
            flags[item] = True
        elif isinstance(item, str):
            if item not in names:
                raise ValueError(
                    f"numeric_sensitive names {item!r}, which is not a sensitive attribute; "
                    f"the attributes are {names}."
                )
            flags[names.index(item)] = True
        else:
            raise TypeError(
                "numeric_sensitive entries must be attribute names or positions, "
                f"got {item!r}."
            )
    return flags


def _encode_numeric(name, col, where, row_name=None):
    values = pd.to_numeric(pd.Series(np.asarray(col, dtype=object)), errors="coerce")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    found = first_row(~np.isfinite(values), where, row_name)
    if found:
        raise ValueError(
            f"sensitive attribute {name!r} is numeric but {found[1]} holds "
            f"{np.asarray(col, dtype=object)[found[0]]!r}; numeric sensitive values must be "
            "finite numbers."
        )
    return values


def _encode_categorical(name, col, where, row_name=None):
    # Factorising the column as it is keeps integer and categorical columns on
    # pandas' fast typed paths (an object copy costs ~10x on a million rows).
    # The values keep their dtype, so that merging the values of several
    # partitions orders them as one column would be (a categorical dtype by
    # its categories).
    try:
        codes, uniques = pd.factorize(col, sort=True)
    except TypeError as exc:  # unhashable values (lists, dicts) or values that do not sort
        values = np.asarray(col, dtype=object)
        for i, value in enumerate(values):
            try:
                hash(value)
            except TypeError:
                raise TypeError(
                    f"sensitive attribute {name!r} holds {value!r} at "
                    f"{name_row(i, where, row_name)}, which is not a single value (unhashable); "
                    "give one value per row."
                ) from None
        raise TypeError(
            f"sensitive attribute {name!r} mixes values that cannot be compared ({exc}); "
            "convert the column to one type, for instance strings."
        ) from None
    return codes.astype(np.int64, copy=False), pd.Index(uniques)


def read_column(name, col, numeric, *, where="", row_name=None):
    """Read one sensitive column by the rules of :func:`check_sensitive_features`.

    Returns ``(kind, values, categories)``: ``"categorical"``, int64 codes
    into the sorted observed values ``categories`` (a pandas Index), or
    ``"numeric"``, float64 values and None. Raises the reader's errors (a
    missing value, a numeric value that is not a finite number, values that
    are not single or not comparable), naming the row as ``row_name(i)``
    (default: by its label when ``col`` is pandas with labels,
    :func:`~fairkm.utils._validation.labelled_rows`, else ``"row i"``, ``i``
    its position) followed by ``where``; a caller
    that numbers rows its own way (the command line's data rows, from 1)
    passes its ``row_name``.
    """
    row_name = row_name or labelled_rows(col)
    check_no_missing(name, col, where, row_name=row_name)
    if numeric:
        return NUMERIC, _encode_numeric(name, col, where, row_name), None
    codes, uniques = _encode_categorical(name, col, where, row_name)
    return CATEGORICAL, codes, uniques


def check_sensitive_features(
    sensitive_features, *, n_samples=None, numeric="auto", allow_empty=False, where=""
):
    """Validate and encode sensitive features.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
            pandas Series or DataFrame
        One column per sensitive attribute.
    n_samples : int, default=None
        Expected number of rows (that of ``X``); checked when given.
    numeric : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric. ``"auto"``: a DataFrame column (or a
        Series) is numeric exactly when its dtype is a float dtype; an array is
        numeric exactly when its dtype is floating (so all its columns share
        one kind). Everything else (integers, booleans, strings, objects,
        pandas categoricals) is categorical. ``True``/``False`` makes every
        attribute numeric/categorical; a list names (or gives the positions
        of) the numeric attributes, all others being categorical.
    allow_empty : bool, default=False
        Accept zero rows (one partition of a larger dataset may be empty).
    where : str, default=""
        Follows the row number in error messages (" of partition 3", say).

    Returns
    -------
    SensitiveFeatures
        The encoded attributes.

    Raises
    ------
    ValueError
        On a length mismatch, missing values, non-finite or non-numeric values
        in a numeric attribute, or no columns.
    TypeError
        On an input that is not array-like.
    """
    names, cols, auto = read_columns(sensitive_features)
    if not names:
        raise ValueError("sensitive_features has no columns.")
    n_rows = len(cols[0])
    if n_samples is not None and n_rows != n_samples:
        raise ValueError(
            f"sensitive_features has {n_rows} rows but X has {n_samples} samples; "
            "they must have the same length."
        )
    if n_rows == 0 and not allow_empty:
        raise ValueError("sensitive_features has 0 rows.")
    is_numeric = resolve_numeric(numeric, names, auto)
    kinds, columns, categories = [], [], []
    for name, col, num in zip(names, cols, is_numeric, strict=True):
        kind, values, uniques = read_column(name, col, num, where=where)
        kinds.append(kind)
        columns.append(values)
        categories.append(uniques)
    return SensitiveFeatures(names=names, kinds=kinds, columns=columns, categories=categories)


def _member_text(text):
    """Return a member's text as it shows in a combined name or value.

    Quoted (as a JSON string) when ``" & "`` could split it or it starts with
    a quote, so that no two tuples of members ever join to the same text: a
    quoted member ends at its closing quote, an unquoted one at the first
    ``" & "``.
    """
    if " & " in f" {text} " or text.startswith('"'):
        return json.dumps(text, ensure_ascii=False)
    return text


def _combined_name(group):
    """Return the display name of the intersection of the attributes ``group``: ``"a & b"``."""
    return " & ".join(_member_text(str(name)) for name in group)


def _combined_values(members):
    """Factorise the rows' tuples of member values; name each distinct tuple.

    Returns an object array of shape (n_samples,): each row's combination,
    named by its members' values joined by ``" & "`` (``"Female & White"``;
    a member that could be read two ways shows quoted). A name depends on the
    values alone, so new rows get the names the fitting rows got.
    """
    n = len(members[0])
    key = np.zeros(n, dtype=np.int64)
    texts, codes = [], []
    for column in members:
        member_codes, uniques = pd.factorize(column)
        # Values print as pandas prints the column (a float 1.0 as "1.0").
        text = pd.Series(uniques).astype(str).map(_member_text).to_numpy(dtype=object)
        if len(set(text)) != len(text):
            raise ValueError(
                f"sensitive attribute {column.name!r} holds distinct values that print alike "
                f"({list(uniques)[:6]}); give the column one type before intersecting it."
            )
        # Refactorising the pair keeps the key below n: no overflow, however many members.
        key = pd.factorize(key * len(uniques) + member_codes)[0]
        texts.append(text)
        codes.append(member_codes)
    # factorize numbers the tuples in order of first appearance.
    first = pd.Series(key).drop_duplicates().index.to_numpy()
    parts = [text[c[first]] for text, c in zip(texts, codes, strict=True)]
    names = np.empty(len(first), dtype=object)
    names[:] = [" & ".join(combination) for combination in zip(*parts, strict=True)]
    return names[key]


def with_intersections(sensitive_features, intersections, *, numeric="auto"):
    """Return the sensitive features with one more categorical attribute per intersection.

    Parameters
    ----------
    sensitive_features : array-like, Series or DataFrame
        One column per sensitive attribute (names as :func:`read_columns` gives them).
    intersections : sequence of sequence of str, or None
        Each entry names two or more categorical attributes; their combined
        values become one attribute named ``"a & b"``, whose values are the
        observed combinations (``"Female & White"``). Only combinations that
        occur are values, so no combined group is empty in the dataset.
    numeric : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric (as in :func:`check_sensitive_features`);
        numeric attributes cannot be intersected.

    Returns
    -------
    pandas.DataFrame or the input
        The input itself when ``intersections`` is None or empty.

    Notes
    -----
    A combination is the tuple of its members' values: the rows are grouped
    by factorising the tuples, and ``"a & b"`` is only the name the tuple shows
    under. A member whose text could make two tuples show alike (one holding
    ``" & "``, as ``("Sales & Marketing", "Ops")`` against ``("Sales",
    "Marketing & Ops")``) shows quoted: ``'"Sales & Marketing" & Ops'``. The
    name of each combination depends on its values only, so the rows of
    ``predict`` form the combinations the fit formed.
    """
    if intersections is None or len(intersections) == 0:
        return sensitive_features
    check_param("intersections", intersections, INTERSECTIONS)
    names, cols, auto = read_columns(sensitive_features)
    flags = resolve_numeric(numeric, names, auto)
    frame = columns_frame(names, cols)
    for group in intersections:
        if isinstance(group, str) or not isinstance(group, Sequence) or len(group) < 2:
            raise ValueError(
                f"each intersection must name two or more attributes, got {group!r}."
            )
        unknown = [name for name in group if name not in names]
        if unknown:
            raise ValueError(
                f"intersection {tuple(group)!r} names {unknown}, which are not sensitive "
                f"attributes; the attributes are {names}."
            )
        if len(set(group)) != len(group):
            raise ValueError(f"intersection {tuple(group)!r} names an attribute twice.")
        numeric_names = [name for name in group if flags[names.index(name)]]
        if numeric_names:
            raise ValueError(
                f"intersection {tuple(group)!r} includes numeric attributes {numeric_names}; "
                "only categorical attributes can be intersected (bin numeric ones first)."
            )
        name = _combined_name(group)
        if name in frame.columns:
            taken = "is given twice" if name not in names else (
                f"is named {name!r}, as a sensitive attribute already is; rename that column")
            raise ValueError(f"intersection {tuple(group)!r} {taken}.")
        for member in group:
            check_no_missing(member, frame[member])
        frame[name] = _combined_values([frame[member] for member in group])
    if isinstance(sensitive_features, pd.DataFrame):
        frame.index = sensitive_features.index
    return frame


# ----------------------------------------------------------- numeric attributes standardised


def value_range(values, weights):
    """Smallest and largest value of the rows of positive weight (inf, -inf for none)."""
    kept = values if weights is None else values[weights > 0]
    if kept.size == 0:
        return np.inf, -np.inf
    return float(kept.min()), float(kept.max())


def checked_scale(mean_square, name, mean, low, high):
    scale = float(np.sqrt(mean_square))
    if not (np.isfinite(mean) and np.isfinite(scale)):
        raise ValueError(
            f"numeric sensitive attribute {name!r} is too large to standardise: its mean "
            f"or variance overflows float64 (mean {mean:.3g}); rescale it (divide it by a "
            "power of ten, say)."
        )
    if not scale > 0.0 and high > low:
        raise ValueError(
            f"numeric sensitive attribute {name!r} varies by too little to standardise "
            f"(from {low:.3g} to {high:.3g}: its variance underflows float64); multiply it "
            "by a power of ten."
        )
    if not scale > 0.0:
        raise ValueError(
            f"numeric sensitive attribute {name!r} has zero variance (every value is "
            f"{mean!r}); it carries no fairness information. Drop it or treat it as "
            "categorical."
        )
    return scale


def standardize_numeric(values, name, weights=None):
    """Mean and standard deviation of a numeric attribute, rejecting zero variance.

    Computed as :class:`SensitiveEncoding` computes them, so the measures and
    the estimators standardise alike.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        Finite values.
    name : str
        The attribute's name, for the error message.
    weights : ndarray of shape (n_samples,) or None, default=None
        Sample weights (a row of weight w counts as w rows); None for unit weights.

    Returns
    -------
    mean, scale : float
        ``(values - mean) / scale`` has (weighted) mean 0 and (population) variance 1.
    """
    n = values.shape[0] if weights is None else float(np.sum(weights))
    with np.errstate(over="ignore", invalid="ignore"):  # checked_scale says so
        mean = weighted_sum(values, weights) / n
        centred = values - mean
        mean_square = weighted_sum(centred * centred, weights) / n
    return mean, checked_scale(mean_square, name, mean, *value_range(values, weights))
