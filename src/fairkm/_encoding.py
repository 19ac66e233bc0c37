"""Sensitive features: the rule that reads them and the codes the engines see.

Every public entry point that takes ``sensitive_features`` goes through
:func:`check_sensitive_features`, so the rule that decides which attributes are
numeric, the error messages and the category encoding are the same everywhere.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validation import check_no_missing

__all__ = [
    "CATEGORICAL",
    "NUMERIC",
    "SensitiveFeatures",
    "check_sensitive_features",
    "encode_like",
    "standardize_numeric",
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
    categories : list of ndarray or None
        Per attribute: the sorted observed values of a categorical attribute,
        ``None`` for a numeric one.
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


def _column_table(sensitive_features):
    """Split the input into (names, raw columns, auto-numeric flags)."""
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


def _resolve_numeric(numeric, names, auto):
    """Apply the ``numeric`` override to the automatic rule."""
    if isinstance(numeric, str):
        if numeric != "auto":
            raise ValueError(
                "numeric_sensitive must be 'auto', a bool, or a list of attribute names or "
                f"positions, got {numeric!r}."
            )
        return list(auto)
    if isinstance(numeric, (bool, np.bool_)):
        return [bool(numeric)] * len(names)
    if not isinstance(numeric, Sequence | np.ndarray):
        raise TypeError(
            "numeric_sensitive must be 'auto', a bool, or a list of attribute names or "
            f"positions, got {type(numeric).__name__}."
        )
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


def _encode_numeric(name, col):
    values = pd.to_numeric(pd.Series(np.asarray(col, dtype=object)), errors="coerce")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sensitive attribute {name!r} is numeric but row {i} holds "
            f"{np.asarray(col, dtype=object)[i]!r}; numeric sensitive values must be finite "
            "numbers."
        )
    return values


def _encode_categorical(col):
    # Factorising the column as it is keeps integer and categorical columns on
    # pandas' fast typed paths (an object copy costs ~10x on a million rows).
    codes, uniques = pd.factorize(col, sort=True)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def check_sensitive_features(sensitive_features, *, n_samples=None, numeric="auto"):
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
    names, cols, auto = _column_table(sensitive_features)
    if not names:
        raise ValueError("sensitive_features has no columns.")
    n_rows = len(cols[0])
    if n_samples is not None and n_rows != n_samples:
        raise ValueError(
            f"sensitive_features has {n_rows} rows but X has {n_samples} samples; "
            "they must have the same length."
        )
    if n_rows == 0:
        raise ValueError("sensitive_features has 0 rows.")
    is_numeric = _resolve_numeric(numeric, names, auto)
    kinds, columns, categories = [], [], []
    for name, col, num in zip(names, cols, is_numeric, strict=True):
        check_no_missing(name, col)
        if num:
            kinds.append(NUMERIC)
            columns.append(_encode_numeric(name, col))
            categories.append(None)
        else:
            codes, uniques = _encode_categorical(col)
            kinds.append(CATEGORICAL)
            columns.append(codes)
            categories.append(uniques)
    return SensitiveFeatures(names=names, kinds=kinds, columns=columns, categories=categories)


def encode_like(sensitive_features, fitted, *, n_samples=None):
    """Encode new sensitive features with the attributes and categories of ``fitted``.

    Categorical values not seen in ``fitted`` get the code ``len(categories)``
    (one shared "unseen" code per attribute).

    Parameters
    ----------
    sensitive_features : array-like, Series or DataFrame
        New rows, with the same attributes (same names for a DataFrame) in the
        same order as the fitted ones.
    fitted : SensitiveFeatures
        The encoding to reproduce.
    n_samples : int, default=None
        Expected number of rows.

    Returns
    -------
    SensitiveFeatures
    """
    numeric = [fitted.names[j] for j in fitted.select(NUMERIC)]
    raw_names, _, _ = _column_table(sensitive_features)
    if isinstance(sensitive_features, pd.DataFrame):
        if raw_names != list(fitted.names):
            raise ValueError(
                f"sensitive_features has columns {raw_names}, but the model was fitted with "
                f"{list(fitted.names)}."
            )
    elif len(raw_names) != fitted.n_attributes:
        raise ValueError(
            f"sensitive_features has {len(raw_names)} attribute(s), but the model was fitted "
            f"with {fitted.n_attributes}."
        )
    positions = [fitted.names.index(name) for name in numeric]
    new = check_sensitive_features(
        sensitive_features, n_samples=n_samples, numeric=positions if positions else False
    )
    columns = []
    for j, kind in enumerate(fitted.kinds):
        if kind == NUMERIC:
            columns.append(new.columns[j])
            continue
        known = fitted.categories[j]
        values = new.categories[j][new.columns[j]]
        codes = pd.Index(known).get_indexer(values)
        codes[codes < 0] = len(known)
        columns.append(codes.astype(np.int64))
    return SensitiveFeatures(
        names=list(fitted.names),
        kinds=list(fitted.kinds),
        columns=columns,
        categories=list(fitted.categories),
    )


def standardize_numeric(values, name):
    """Mean and standard deviation of a numeric attribute, rejecting zero variance.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        Finite values.
    name : str
        The attribute's name, for the error message.

    Returns
    -------
    mean, scale : float
        ``(values - mean) / scale`` has mean 0 and (population) variance 1.
    """
    mean = float(np.mean(values))
    scale = float(np.std(values))
    if not scale > 0.0 or not np.isfinite(scale):
        raise ValueError(
            f"numeric sensitive attribute {name!r} has zero variance (every value is "
            f"{values[0]!r}); it carries no fairness information. Drop it or treat it as "
            "categorical."
        )
    return mean, scale


