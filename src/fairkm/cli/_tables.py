"""Reading the input table: column checks, the sensitive columns and the feature encoding.

Every problem is a :class:`~._errors.DataError` naming the file, column, value
and data row at fault, or a :class:`~._errors.UsageError` when options give a
column two roles. The sensitive columns are read by the library's reader
(:func:`fairkm.utils._sensitive.read_column`: its codes, categories, numeric
rule and messages) and passed to the library as they are in the file; the
bounds asked are checked by the library's rule on the options alone
(:func:`fairkm.metrics.bounds_asked`), its errors turned into ours
(:func:`~._errors.library_errors`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairkm.exceptions import DataWarning
from fairkm.metrics import balances_asked, bounds_asked
from fairkm.report import drop_missing, missing_values
from fairkm.utils._call_site import warn
from fairkm.utils._data_checks import (
    feature_role_notes,
    missing_values_message,
    sensitive_in_features,
    sensitive_kind_notes,
)
from fairkm.utils._options import ADDITIVE
from fairkm.utils._sensitive import CATEGORICAL, NUMERIC, read_column, resolve_numeric

from ._errors import DataError, UsageError, library_errors
from ._io import read_table

__all__ = [
    "Prepared",
    "check_bound",
    "check_names",
    "check_roles",
    "copy_notes",
    "prepare_data",
    "read_sensitive",
]

_MAX_LISTED_COLUMNS = 20
# A non-numeric feature column in which at least this share of the values are
# numbers is a numeric column with typos, not categories.
_MOSTLY_NUMERIC = 0.9
# The feature names a summary lists before it counts the rest.
_MAX_LISTED_FEATURES = 12
# Names (or words of names) a prediction target often has; a target among the
# features makes the clusters follow it. Compared without case.
_TARGET_WORDS = {"target", "label", "labels", "class", "outcome"}
_TARGET_NAMES = {"y", "species", "survived", "churn", "churned", "diagnosis", "response"}
# A year is a whole number in this range; a column of them named like one, or
# holding nothing else, is a year rather than a quantity.
_YEARS = (1800, 2200)
_YEAR_WORDS = {"year", "yr", "yyyy", "season"}


def _check_columns(frame, names, option, path):
    missing = [name for name in names if name not in frame.columns]
    if missing:
        columns = [str(c) for c in frame.columns]
        listed = ", ".join(columns[:_MAX_LISTED_COLUMNS])
        if len(columns) > _MAX_LISTED_COLUMNS:
            listed += f", ... ({len(columns)} in all)"
        raise DataError(
            f"column {missing[0]!r} (from {option}) is not in {str(path)!r}; its columns are: "
            f"{listed}."
        )


def _unhashable(frame, names, path):
    """Refuse a column holding lists or mappings (Parquet can): no category, no number."""
    for name in names:
        column = frame[name]
        if column.dtype != object:
            continue
        try:
            column.nunique()
        except TypeError:
            for row, value in enumerate(column, start=1):
                try:
                    hash(value)
                except TypeError:
                    kind = "a mapping" if isinstance(value, dict) else "a list"
                    raise DataError(
                        f"column {name!r} of {str(path)!r} holds {kind} on data row {row} "
                        f"({_short(value)}), not a single value; leave it out (--exclude) or "
                        "make one column per item."
                    ) from None


def _short(value, width=40):
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _as_numbers(frame):
    """Return ``frame`` with its decimal columns (Parquet's money) as float64."""
    decimal = [name for name in frame.columns if frame[name].dtype == object
               and pd.api.types.infer_dtype(frame[name], skipna=True) == "decimal"]
    return frame.astype({name: np.float64 for name in decimal}) if decimal else frame


def _check_labels(frame, labels, max_categories):
    """Refuse a labels column that cannot be a clustering (an identifier), before any work."""
    n_clusters, n_rows = frame[labels].nunique(), len(frame)
    if n_clusters > max_categories or n_clusters > n_rows / 2:
        raise DataError(
            f"--labels column {labels!r} has {n_clusters:,} distinct values for {n_rows:,} rows: "
            f"too many clusters (at most --max-categories={max_categories}, and half the rows); "
            "is it an identifier? Name the clustering's column, or raise --max-categories."
        )


def _first_row(mask):
    """1-based data row (header excluded) of the first True entry."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 1


def _data_row(i):
    """Name the row at position ``i`` as the command line does: its data row, from 1."""
    return f"data row {i + 1}"


def _numeric_flags(names, numeric):
    """Which of the sensitive columns ``names`` are numeric (``numeric``: their names).

    The library's rule, a name that is not a sensitive column its usage error.
    """
    with library_errors(UsageError):
        return resolve_numeric(list(numeric or []), list(names), [False] * len(names))


def read_sensitive(frame, names, numeric, *, max_categories=None, row_name=None):
    """Read the sensitive columns with the library's reader; return ``{name: reading}``.

    Each reading is :func:`fairkm.utils._sensitive.read_column`'s ``(kind,
    values, categories)``: the codes and categories the library groups the
    rows by, or a numeric column's values. Its errors (a value of a numeric
    column that is not a finite number, values that cannot be compared) are
    :class:`~._errors.DataError`, the row named by ``row_name``. A
    categorical column with more than ``max_categories`` values is refused.
    """
    flags = _numeric_flags(names, numeric)
    readings = {}
    with library_errors(DataError):
        for name, flag in zip(names, flags, strict=True):
            readings[name] = read_column(name, frame[name], flag, row_name=row_name)
    for name, (kind, _, categories) in readings.items():
        if max_categories is not None and kind == CATEGORICAL and (
                len(categories) > max_categories):
            raise DataError(
                f"sensitive column {name!r} has {len(categories):,} distinct values (more than "
                f"--max-categories={max_categories}); if it is a number such as an age, name "
                "it in --numeric-sensitive."
            )
    return readings


def _kind_notes(frame, readings):
    """Sentences about sensitive columns whose kind looks wrong (numeric ones as read)."""
    shown = pd.DataFrame({name: values if kind == NUMERIC else frame[name]
                          for name, (kind, values, _) in readings.items()}, index=frame.index)
    return sensitive_kind_notes(
        shown, [name for name, (kind, _, _) in readings.items() if kind == NUMERIC],
        how_numeric="name it in --numeric-sensitive",
        how_categorical="leave it out of --numeric-sensitive",
    )


def _is_numeric(column):
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _check_feature(column, max_categories):
    name = column.name
    if _is_numeric(column):
        finite = np.isfinite(column.to_numpy(dtype=np.float64))
        if not finite.all():
            row = _first_row(~finite)
            raise DataError(
                f"feature column {name!r} holds {column.iloc[row - 1].item()!r} on data row "
                f"{row}; features must be finite numbers."
            )
        return
    as_numbers = pd.to_numeric(column.astype(str), errors="coerce")
    if _MOSTLY_NUMERIC <= as_numbers.notna().mean() < 1:
        row = _first_row(as_numbers.isna())
        raise DataError(
            f"feature column {name!r} is numbers except {column.iloc[row - 1]!r} on data row "
            f"{row}; fix that value, or leave the column out with --exclude."
        )
    n_values = column.nunique()
    if n_values > max_categories:
        raise DataError(
            f"feature column {name!r} is not numeric and has {n_values:,} distinct values "
            f"(more than --max-categories={max_categories}), too many to one-hot encode; leave "
            "it out with --exclude (identifiers, free text) or raise --max-categories."
        )


def _words(name):
    return [word for word in re.split(r"[\s_.\-]+", str(name).lower()) if word]


def _looks_like_target(name):
    words = _words(name)
    return "".join(words) in _TARGET_NAMES or bool(_TARGET_WORDS & set(words))


def _year_range(column):
    """Return (first, last) when the column holds years, else None."""
    if not _is_numeric(column):
        return None
    values = column.to_numpy(dtype=np.float64)
    if not (np.all(values == np.round(values)) and values.min() >= _YEARS[0]
            and values.max() <= _YEARS[1]):
        return None
    named = bool(_YEAR_WORDS & set(_words(column.name))) or str(column.name).lower().endswith(
        "year")
    if named or column.nunique() > 1:
        return int(values.min()), int(values.max())
    return None


def feature_notes(features, *, how_to_exclude, how_to_weight):
    """Sentences about feature columns that look like a target, a year, an identifier or weights.

    ``how_to_exclude`` says how to leave a column out, ``how_to_weight`` how to
    pass it as row weights instead (``{name}`` is replaced in both).
    """
    notes = []
    for name in features.columns:
        how = how_to_exclude.format(name=name)
        if _looks_like_target(name):
            notes.append(
                f"feature column {name!r} is named like a prediction target (a label, a class "
                "or an outcome); as a feature it makes the clusters follow it. If it is what "
                f"you mean to predict or explain, leave it out with {how}."
            )
        years = _year_range(features[name])
        if years is not None:
            notes.append(
                f"feature column {name!r} looks like a year ({years[0]}-{years[1]}); as a "
                "number it sets rows apart by date alone. If it is not meant to shape the "
                f"clusters, leave it out with {how}."
            )
    return notes + feature_role_notes(features, how_to_exclude=how_to_exclude,
                                      how_to_weight=how_to_weight)


def _check_magnitude(column, scale, path):
    """Refuse a numeric feature too large for float64 arithmetic, naming it and the fix."""
    values = column.to_numpy(dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        centred = values - values.mean() if scale == "standard" else values
        total = float(np.dot(centred, centred))
    if np.isfinite(total):
        return
    row = int(np.argmax(np.abs(values))) + 1
    what = ("to standardise (its variance overflows float64)" if scale == "standard"
            else "to cluster as it is (its squares overflow float64)")
    raise DataError(
        f"feature column {column.name!r} of {str(path)!r} holds {values[row - 1]:g} on data row "
        f"{row}, too large {what}; rescale that column (divide it by a power of ten, or take "
        "its logarithm) or leave it out with --exclude."
    )


def _encode_features(frame, names, scale, max_categories, path, weights=None):
    """Encode the feature columns with scikit-learn's transformers.

    Returns the float64 matrix, the file's column each of its columns comes
    from (one per value of a one-hot encoded column) and a one-line
    description of the encoding. With ``weights`` (--weight-column) numeric
    columns are standardised by their weighted mean and standard deviation
    (``StandardScaler`` with ``sample_weight``), so a row of weight w stands
    for w repeated rows: a file of distinct rows with counts is put in the
    space of the same people listed one per row.
    """
    for name in names:
        _check_feature(frame[name], max_categories)
        if _is_numeric(frame[name]):
            _check_magnitude(frame[name], scale, path)
    numeric = [name for name in names if _is_numeric(frame[name])]
    categorical = [name for name in names if name not in numeric]
    transformer = ColumnTransformer(
        [
            ("one-hot", OneHotEncoder(sparse_output=False, dtype=np.float64), categorical),
            ("numeric", "passthrough", numeric),
        ],
        sparse_threshold=0.0,
    )
    # Text, booleans and categoricals are one-hot encoded by their printed value,
    # so a column mixing types (possible in Parquet) encodes like its CSV export.
    data = frame[names].astype({name: str for name in categorical})
    X = np.asarray(transformer.fit_transform(data), dtype=np.float64)
    if scale == "standard" and numeric:
        # The numeric columns come last; scaled outside the ColumnTransformer, which
        # passes no sample_weight on to its transformers.
        tail = X[:, X.shape[1] - len(numeric):]
        X[:, X.shape[1] - len(numeric):] = StandardScaler().fit_transform(
            tail, sample_weight=weights)
    one_hot = transformer.named_transformers_["one-hot"]
    sources = [name for name, values in zip(
        categorical, getattr(one_hot, "categories_", []), strict=True) for _ in values]
    sources += numeric
    bad = np.flatnonzero(~np.isfinite(X).all(axis=0))
    if bad.size:  # not expected after the checks above; never a bare NaN from the fit
        encoded = transformer.get_feature_names_out()[bad[0]].split("__", 1)[-1]
        raise DataError(
            f"feature {encoded!r} of {str(path)!r} is not finite once encoded (--scale "
            f"{scale}); rescale that column or leave it out with --exclude."
        )
    how = "as they are" if scale != "standard" else (
        "standardised" if weights is None else "standardised with the row weights")
    listed = ", ".join(map(str, names[:_MAX_LISTED_FEATURES]))
    if len(names) > _MAX_LISTED_FEATURES:
        listed += f", ... ({len(names)} in all)"
    description = (
        f"{listed}: {len(names)} column(s) -> {X.shape[1]} after encoding ({len(categorical)} "
        f"one-hot encoded, {len(numeric)} numeric {how})"
    )
    return X, sources, description


def _copies(block, column, attributes):
    """Whether a file column's encoded ``block`` copies one of ``attributes``."""
    return bool(sensitive_in_features(block, [column] * block.shape[1],
                                      [attribute for attribute, _ in attributes],
                                      [known for _, known in attributes]))


def copy_notes(X, sources, readings, *, how_to_exclude):
    """Sentences about feature columns of the file that copy a sensitive column.

    ``sources`` names the file's column of each column of ``X``;
    ``readings`` are the sensitive columns as :func:`read_sensitive` read
    them. The test is :func:`fairkm.utils._data_checks.sensitive_in_features`'
    (FairKM's own, which would name the encoded columns), asked of each file
    column and sensitive column in turn, so that one sentence names the
    column the user can leave out, whatever its encoding.
    """
    attributes = [((name, kind, values),
                   None if kind == NUMERIC else np.asarray(categories, dtype=object))
                  for name, (kind, values, categories) in readings.items()]
    sources = np.asarray(sources, dtype=object)
    notes = []
    for column in dict.fromkeys(sources):
        block = X[:, sources == column]
        if not _copies(block, column, attributes):  # most columns: one pass, every attribute
            continue
        copied = [attribute[0] for attribute, known in attributes
                  if _copies(block, column, [(attribute, known)])]
        what = (f"the sensitive column {copied[0]!r}" if len(copied) == 1 else
                f"the sensitive columns {', '.join(map(repr, copied))}")
        notes.append(
            f"feature column {column!r} copies {what} (or one of its values) row for row: "
            "with it among the features, K-Means itself separates the groups and fairness "
            f"has to undo it. Leave it out with {how_to_exclude.format(name=column)}."
        )
    return notes


def _feature_names(frame, args, taken):
    if args.features is not None:
        return args.features
    excluded = set(args.exclude or []) | set(taken)
    return [name for name in frame.columns if name not in excluded]


def check_names(args):
    """Refuse, before any work, a column name the audit's tables cannot hold."""
    if "mean" in args.sensitive:
        raise DataError(
            "a sensitive column cannot be named 'mean': the fairness tables use 'mean' for the "
            "row averaging the attributes; rename the column (e.g. with a prefix)."
        )


def check_roles(args, *, labels=None):
    """Usage errors: a column may play only one role; then :func:`check_bound`'s."""
    sensitive = set(args.sensitive)
    for name in args.features or []:
        if name in sensitive:
            raise UsageError(f"column {name!r} is both in --features and in --sensitive")
        if name == labels:
            raise UsageError(f"column {name!r} is both in --features and --labels")
    if labels is not None and labels in sensitive:
        raise UsageError(f"column {labels!r} is both in --labels and in --sensitive")
    weight = getattr(args, "weight_column", None)
    if weight is not None:
        for option, names in (("--sensitive", sensitive), ("--features", args.features or []),
                              ("--labels", [labels])):
            if weight in names:
                raise UsageError(f"column {weight!r} is both --weight-column and in {option}")
    weights = getattr(args, "attribute_weights", None) or {}
    for name in weights:
        if name not in sensitive:
            raise UsageError(f"--attribute-weights names {name!r}, which is not in --sensitive")
    check_bound(args, args.sensitive, args.numeric_sensitive or [])


def check_bound(args, sensitive, numeric):
    """Usage errors of the bound options and --numeric-sensitive, before any fit.

    ``sensitive`` and ``numeric`` name the sensitive columns and the numeric
    ones among them: the library's rules (a numeric column must be a
    sensitive one; a bound must name categorical columns, be below 1 when
    multiplicative, and bound some column) are asked of the names and kinds
    alone, so no data need be read.
    """
    names = list(sensitive)
    flags = _numeric_flags(names, numeric)
    bound = getattr(args, "max_deviation", None)
    kind = getattr(args, "deviation_kind", None)
    balance = getattr(args, "min_balance", None)
    categorical = [name for name, flag in zip(names, flags, strict=True) if not flag]
    if bound is None and kind is not None:
        raise UsageError("--deviation-kind goes with --max-deviation")
    with library_errors(UsageError):
        if bound is not None:
            bounds_asked(names, categorical, max_deviation=bound,
                         deviation_kind=kind or ADDITIVE, categorical_needed=True)
        balances_asked(names, categorical, balance)


@dataclass(frozen=True)
class Prepared:
    """The input table, ready: rows kept, sensitive columns, encoded features, notes."""

    frame: pd.DataFrame  # the rows kept (all, unless --dropna dropped some)
    sensitive: pd.DataFrame  # the sensitive columns, as in the file
    X: np.ndarray | None
    names: list | None  # the feature columns
    profile: pd.DataFrame | None  # the feature columns as the report shows them
    encoding: str | None  # one line saying how the features were encoded
    dropped: str | None  # one line saying what --dropna dropped
    notes: list  # the data warnings, also issued as DataWarning
    weights: np.ndarray | None = None  # --weight-column's values
    weight_column: str | None = None
    readings: dict = field(default_factory=dict)  # read_sensitive's, by column


def _weights(frame, name, path):
    """Check --weight-column's values (numbers >= 0, not all 0); return them as float64."""
    column = frame[name]
    where = f"--weight-column {name!r} of {str(path)!r}"
    if not _is_numeric(column):
        as_numbers = pd.to_numeric(column.astype(str), errors="coerce")
        row = _first_row(as_numbers.isna()) if as_numbers.isna().any() else 1
        raise DataError(
            f"{where} must hold numbers (row weights), but holds {column.iloc[row - 1]!r} on "
            f"data row {row}."
        )
    values = column.to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        row = _first_row(bad)
        raise DataError(
            f"{where} holds {column.iloc[row - 1].item()!r} on data row {row}; a row weight "
            "must be a finite number >= 0."
        )
    if not values.any():
        raise DataError(f"{where} is 0 on every row: no row would count.")
    return values


def _drop(frame, roles):
    """--dropna: drop incomplete rows; return the rows kept and one line saying what went."""
    counts = missing_values(frame, list(roles))
    kept, dropped = drop_missing(frame, list(roles))
    if len(kept) == 0:
        raise DataError(
            f"every one of the {len(frame):,} rows has a missing value in a column used "
            f"({', '.join(counts.index)}); nothing is left to cluster."
        )
    per_column = ", ".join(f"{name} {row.missing:,}" for name, row in counts.iterrows())
    line = (f"{len(dropped):,} of {len(frame):,} rows (missing values: {per_column})"
            if len(dropped) else "none (no missing values)")
    return kept.reset_index(drop=True), line


def prepare_data(args, *, labels=None, need_features=True):
    """Read the data and check it; return a :class:`Prepared`.

    Without ``need_features`` and ``--features``, X, the names and the
    encoding are None. Missing values in any column used are one error
    naming them all, unless ``--dropna`` drops those rows. Suspicious
    columns (their kind, identifiers among the features) are warned about.
    """
    frame = read_table(args.data, sep=args.sep, keep_na_strings=args.keep_na_strings)
    _check_columns(frame, args.sensitive, "--sensitive", args.data)
    if labels:
        _check_columns(frame, [labels], "--labels", args.data)
    if args.features is not None:
        _check_columns(frame, args.features, "--features", args.data)
    if getattr(args, "exclude", None):
        _check_columns(frame, args.exclude, "--exclude", args.data)
    weight = getattr(args, "weight_column", None)
    if weight is not None:
        _check_columns(frame, [weight], "--weight-column", args.data)
    roles = {name: "sensitive" for name in args.sensitive}
    if labels:
        roles[labels] = "labels"
    if weight is not None:
        roles[weight] = "weight"
    names = None
    if need_features or args.features is not None:
        names = _feature_names(frame, args, list(roles))
        if not names:
            raise DataError(
                f"{str(args.data)!r} has no feature columns left once the sensitive columns are "
                "set aside."
            )
        roles.update({name: "feature" for name in names})
    _unhashable(frame, list(roles), args.data)
    dropped = None
    if args.dropna:
        frame, dropped = _drop(frame, roles)
    else:
        message = missing_values_message(
            frame, roles, how_to_drop="drop those rows with --dropna"
        )
        if message:
            raise DataError(message)
    if labels:
        _check_labels(frame, labels, args.max_categories)
    weights = None if weight is None else _weights(frame, weight, args.data)
    readings = read_sensitive(frame, args.sensitive, args.numeric_sensitive,
                              max_categories=args.max_categories, row_name=_data_row)
    sensitive, notes = frame[list(args.sensitive)], _kind_notes(frame, readings)
    X = encoding = profile = None
    if names is not None:
        features = _as_numbers(frame[names])
        how = ("a --features list without it" if args.features is not None
               else "--exclude {name}")
        notes += feature_notes(
            features, how_to_exclude=how,
            how_to_weight="pass it with --weight-column {name} (it then leaves the features)")
        X, sources, encoding = _encode_features(features, names, args.scale,
                                                args.max_categories, args.data, weights)
        notes += copy_notes(X, sources, readings, how_to_exclude=how)
        if args.features is None:
            encoding += ("; by default every column not sensitive or excluded (choose with "
                         "--features or --exclude)")
        profile = features
    for note in notes:
        warn(note, DataWarning)
    return Prepared(frame, sensitive, X, names, profile, encoding, dropped, notes, weights,
                    weight, readings)
