"""Checks of a table's columns before it is clustered or audited.

Kinds (a coded category taken as numeric, a quantity taken as categorical),
roles (identifiers among the features, a sensitive attribute copied into the
features), missing values. Each check returns plain sentences: the command
line prints them as warnings, :func:`fairkm.report.audit` and
:meth:`fairkm.FairKM.fit` raise them as :class:`DataWarning`; missing values
are gathered into one message for every column at once. Nothing here imports
the rest of fairkm but the exceptions and ``_call_site`` (where a warning
points), so every layer can use it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from fairkm.exceptions import DataWarning

from ._call_site import warn

__all__ = [
    "MANY_VALUES",
    "coded_numeric_note",
    "drop_missing",
    "feature_role_notes",
    "missing_values",
    "missing_values_message",
    "sensitive_in_features",
    "sensitive_kind_notes",
    "warn_on_data",
    "weight_feature_notes",
    "weight_named",
]

#: A categorical sensitive attribute whose values are numbers and that has more
#: distinct values than this is probably a quantity (an age, an income).
MANY_VALUES = 10
# Fewer rows than this and a column unique per row is no sign of an identifier.
_MIN_ROWS_FOR_UNIQUE = 20
_ID_NAME = re.compile(r"(^|[\s_.\-])(id|ids|uuid|guid|key|index)$|^unnamed: ?\d+$", re.I)
# The whole name of a row weight or of a count of rows, compared without case. A weight
# word (weight, wgt, wght, wt...) alone or after a survey's prefix (perwt, hhwt, pwgtp,
# fnlwgt, sampweight, sample_weight, dweight, pweight, anweight, pspwght (ESS), asecwt,
# pwsswgt (CPS), _llcpwt (BRFSS)), then an optional suffix and the number of a replicate
# weight; or "wt" then a survey's code (wtfa_a (NHIS), wtint2yr, wtmec2yr (NHANES), wtfinl
# (CPS), wtssall, wtssps (GSS)). The name must be all of it, so "height", "twitter" or
# "body_weight" are not weights.
_WEIGHT_NAME = re.compile(
    r"_*((p|per|pers|person|h|hh|household|fam|family|fnl|final|samp|sample|survey|design"
    r"|base|case|pop|freq|frequency|expansion|rep|d|an|psp|asec|pwss|llcp)[\s_.\-]?)?"
    r"(weight|weights|wt|wts|wgt|wgts|wght|wgtp)([\s_.\-]?(final|fnl|p))?[\s_.\-]?\d*"
    r"|_*wt[a-z]{1,4}\d?[a-z]{0,3}([\s_.\-][a-z0-9]{1,3})?"
    r"|n|count|counts|cnt|freq|frequency|frequencies|n[\s_.\-]?obs|nobs",
    re.I,
)


def weight_named(name):
    """Whether a column's whole name is that of a row weight or a count of rows."""
    return bool(_WEIGHT_NAME.fullmatch(str(name).strip()))


def _looks_numeric(column):
    """Whether every value of a non-float column reads as a number."""
    if pd.api.types.is_bool_dtype(column):
        return False
    if pd.api.types.is_numeric_dtype(column):
        return True
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = pd.Series(column.cat.categories)
    as_numbers = pd.to_numeric(column.astype(str), errors="coerce")
    return bool(as_numbers.notna().all())


def _values_text(column, limit=4):
    values = pd.unique(column.dropna())
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def sensitive_kind_notes(sensitive, numeric, *, how_numeric, how_categorical):
    """Sentences about sensitive columns whose kind looks wrong.

    Parameters
    ----------
    sensitive : pandas.DataFrame
        The sensitive attributes, one column each.
    numeric : list of str
        The columns that will be treated as numeric (the others categorical).
    how_numeric : str
        How to mark a column numeric, for the advice (``"name it in
        --numeric-sensitive"``).
    how_categorical : str
        How to mark a column categorical, for the advice.

    Returns
    -------
    list of str
        One sentence per suspicious column: a categorical column of numbers
        with more than :data:`MANY_VALUES` values (each value becomes a
        category of its own, so an age of 37 and one of 38 are as different
        as two countries), or a numeric column with at most two values
        (a coded category: only its mean per cluster counts, and balance, KL
        and MPV do not apply).
    """
    notes = []
    for name in sensitive.columns:
        column = sensitive[name]
        n_values = column.nunique()
        if name in numeric:
            note = coded_numeric_note(name, column.to_numpy(), how_categorical)
            if note:
                notes.append(note)
        elif n_values > MANY_VALUES and _looks_numeric(column):
            notes.append(
                f"sensitive column {name!r} holds numbers with {n_values} distinct values and "
                "is treated as categorical: every value is a category of its own, so "
                f"{_values_text(column, 2)} count as unrelated groups. If it is a quantity "
                f"(an age, an income), {how_numeric}."
            )
    return notes


def coded_numeric_note(name, values, how_categorical):
    """Return a sentence when a numeric sensitive attribute has at most two values, else None.

    Parameters
    ----------
    name : str
        The attribute's name.
    values : ndarray of shape (n_samples,)
        Its values.
    how_categorical : str
        How to mark it categorical, for the advice.

    Returns
    -------
    str or None
        Only the mean of such a column per cluster counts, and balance, KL
        and MPV do not apply to it: it is probably a coded category (the
        diabetes data's ``sex``, 1.0 / 2.0).
    """
    distinct = pd.unique(pd.Series(values).dropna())
    if len(distinct) > 2:
        return None
    shown = ", ".join(str(v) for v in distinct)
    return (
        f"sensitive column {name!r} is treated as numeric but has only {len(distinct)} "
        f"values ({shown}): only its mean per cluster counts, and balance, KL and MPV do not "
        f"apply to it. If the values are categories (such as a coded sex), {how_categorical}."
    )


# Features with more distinct values than this (in a sample) cannot encode a
# categorical attribute's values, and are not tested further.
_FEW_LEVELS = 64
_SAMPLE = 1000
# A numeric feature this correlated with a numeric sensitive attribute is a copy of it.
_COPY_CORRELATION = 0.9999


def _encodes(levels, codes, n_values):
    """How a feature's levels encode an attribute's codes: "a copy", a one-hot value, or None."""
    table = np.bincount(levels * n_values + codes,
                        minlength=(levels.max() + 1) * n_values).reshape(-1, n_values)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    hits = table > 0
    if hits.shape[0] > 1 and (hits.sum(axis=1) == 1).all() and (hits.sum(axis=0) == 1).all():
        return "copy", None
    if table.shape[0] == 2:
        for level in range(2):
            values = np.flatnonzero(hits[level])
            if values.size == 1 and hits[:, values[0]].sum() == 1:
                return "value", values[0]
    return None, None


def sensitive_in_features(X, feature_names, sensitive, categories):
    """Sentences about features that copy a sensitive attribute or one of its values.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The features, as they will be clustered.
    feature_names : sequence of str
        Their names.
    sensitive : list of (str, str, ndarray)
        Per attribute, its name, kind (``"categorical"`` or ``"numeric"``)
        and column: integer codes for a categorical attribute, values for a
        numeric one.
    categories : list of ndarray or None
        Per attribute, the values its codes stand for (None for numeric).

    Returns
    -------
    list of str
        One sentence per feature that equals a sensitive attribute up to its
        labels (a column of codes), is the indicator of one of its values (a
        one-hot column), or, for a numeric attribute, is an affine copy of it.
        With it among the features, K-Means itself separates the groups, and
        the fairness term then pays to undo what the features did.
    """
    n = X.shape[0]
    if n < 3:
        return []
    sample = X[np.linspace(0, n - 1, min(n, _SAMPLE)).astype(np.int64)]
    notes = []
    for j, feature in enumerate(feature_names):
        column = X[:, j]
        few = len(np.unique(sample[:, j])) <= _FEW_LEVELS
        levels = pd.factorize(column)[0] if few else None
        for (name, kind, values), known in zip(sensitive, categories, strict=True):
            what = None
            if kind == "numeric":
                if np.std(column) > 0 and np.std(values) > 0 and abs(
                        np.corrcoef(column, values)[0, 1]) >= _COPY_CORRELATION:
                    what = f"is a copy of the numeric sensitive attribute {name!r}"
            elif levels is not None and levels.max() < min(_FEW_LEVELS, n // 3):
                # (a level per few rows: a column of distinct numbers is no code)
                how, value = _encodes(levels, values, len(known))
                if how == "copy":
                    what = f"encodes the sensitive attribute {name!r} (one level per value)"
                elif how == "value":
                    what = f"is the indicator of {name!r} = {known[value]!r} (a one-hot column)"
            if what:
                notes.append(
                    f"feature {feature!r} {what}: with it among the features, K-Means itself "
                    "separates the groups and fairness has to undo it. Leave it out of X."
                )
    return notes


def feature_role_notes(features, *, how_to_exclude, how_to_weight):
    """Sentences about feature columns that look like row identifiers, row weights or counts.

    Parameters
    ----------
    features : pandas.DataFrame
        The feature columns, before encoding.
    how_to_exclude : str
        How to leave an identifier out, for the advice (``"--exclude id"``);
        the text ``{name}`` is replaced by the column's name.
    how_to_weight : str
        What to do with a column of row weights, for the advice (``"pass it
        with --weight-column {name}"``), ``{name}`` likewise.

    Returns
    -------
    list of str
        First one sentence per column named like an identifier (``id``,
        ``customer_id``, ``uuid``, ``key``, ``index``, ``Unnamed: 0``) or
        holding a different whole number or text on every row (with at least
        20 rows): such a column becomes a feature like any other, its
        distances mean nothing but pull the clusters. Then one per numeric
        column of non-negative values named like a survey or frequency
        weight (``weight``, ``wt``, ``wgt``, ``perweight``, ``pweight``,
        ``perwt``, ``fnlwgt``, ``sample_weight``, ``person_wt``, and the
        weights of NHIS, NHANES, BRFSS, CPS, GSS and ESS: ``WTFA_A``,
        ``WTMEC2YR``, ``_LLCPWT``, ``ASECWT``, ``WTSSALL``, ``pspwght``...) or a count
        of rows (``n``, ``count``, ``freq``, ``frequency``), the whole name
        compared without case: such a column says how many people a row
        stands for; as a feature it pulls the clusters by its size, and the
        rows count as one each.
    """
    notes = []
    n_rows = len(features)
    for name in features.columns:
        column = features[name]
        named = bool(_ID_NAME.search(str(name)))
        whole = pd.api.types.is_integer_dtype(column) or not pd.api.types.is_numeric_dtype(column)
        unique = (whole and not pd.api.types.is_bool_dtype(column)
                  and n_rows >= _MIN_ROWS_FOR_UNIQUE and column.nunique() == n_rows)
        if named or unique:
            why = "is named like an identifier" if named else (
                f"holds a different value on each of its {n_rows:,} rows")
            notes.append(
                f"feature column {name!r} {why}; it is used as a feature, so its values "
                "pull the clusters. If it identifies rows rather than describing them, leave "
                f"it out with {how_to_exclude.format(name=name)}."
            )
    for name in features.columns:
        column = features[name]
        numeric = (pd.api.types.is_numeric_dtype(column)
                   and not pd.api.types.is_bool_dtype(column))
        if weight_named(name) and numeric and not (column.dropna() < 0).any():
            notes.append(_weight_note(name, how_to_weight))
    return notes


def _weight_note(name, how_to_weight):
    return (
        f"feature column {name!r} is named like a row weight or count; as a feature it "
        "pulls the clusters by its value, and every row counts once. If it says how many "
        f"people (or rows) each row stands for, {how_to_weight.format(name=name)}; if it "
        "is a quantity to cluster on (a body weight, a number of visits), ignore this."
    )


def weight_feature_notes(X, feature_names, *, how_to_weight):
    """One sentence per feature of ``X`` named like a row weight (a number >= 0 on every row).

    ``X`` is the validated array, ``feature_names`` its columns' names (a
    DataFrame's; the default ``x0, x1...`` are never weight names); the test
    is :func:`feature_role_notes`' on the weights.
    """
    return [_weight_note(name, how_to_weight)
            for j, name in enumerate(feature_names)
            if weight_named(name) and bool(np.all(X[:, j] >= 0))]


def missing_values(frame, columns=None):
    """Count the missing values of each column that has any.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    columns : list of str, default=None
        The columns to look at (default: all).

    Returns
    -------
    pandas.DataFrame
        One row per column with a missing value, indexed by column name:
        ``missing`` (how many rows) and ``first_row`` (the 1-based position
        of the first such row, the header not counted, as in a CSV file).
    """
    columns = list(frame.columns if columns is None else columns)
    rows = []
    for name in columns:
        missing = frame[name].isna().to_numpy()
        if missing.any():
            rows.append((name, int(missing.sum()), int(np.flatnonzero(missing)[0]) + 1))
    table = pd.DataFrame(rows, columns=["column", "missing", "first_row"], dtype=object)
    return table.set_index("column").astype(np.int64)


def missing_values_message(frame, roles, *, how_to_drop):
    """One message naming every column with missing values, or None.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    roles : dict of str to str
        Column name to its role (``"sensitive"``, ``"feature"``, ``"labels"``).
    how_to_drop : str
        How to drop the incomplete rows, for the advice.

    Returns
    -------
    str or None
    """
    table = missing_values(frame, list(roles))
    if table.empty:
        return None
    parts = [
        f"{roles[name]} column {name!r} has {row.missing:,} missing value(s), the first on "
        f"data row {row.first_row}"
        for name, row in table.iterrows()
    ]
    rows = int(frame[list(table.index)].isna().any(axis=1).sum())
    advice = "fill them (a sensitive value as a category of its own, such as 'unknown')"
    return (
        f"{'; '.join(parts)}. {rows:,} of {len(frame):,} rows have a missing value; "
        f"{advice} or {how_to_drop}."
    )


def drop_missing(frame, columns=None):
    """Drop the rows with a missing value, and say how many went.

    The Python counterpart of the command line's ``--dropna``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    columns : list of str, default=None
        The columns whose missing values count (default: all); those used as
        features, sensitive attributes or labels.

    Returns
    -------
    kept : pandas.DataFrame
        The complete rows, with their original index.
    dropped : pandas.DataFrame
        The rows that were dropped (``len(dropped)`` of them), with their
        original index, so they can be inspected or counted per group.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairkm.report import drop_missing
    >>> people = pd.DataFrame({"age": [30, None, 50], "sex": ["F", "M", None]})
    >>> kept, dropped = drop_missing(people)
    >>> print(f"dropped {len(dropped)} of {len(people)} rows")
    dropped 2 of 3 rows
    """
    columns = list(frame.columns if columns is None else columns)
    incomplete = frame[columns].isna().any(axis=1)
    return frame[~incomplete], frame[incomplete]


def warn_on_data(X, feature_names, features, *, kinds_by_dtype,
                 how_numeric="pass it as floats or name it in numeric_sensitive"):
    """Warn (:class:`DataWarning`) about what a fit is given, as the audit does.

    ``features`` are the encoded sensitive attributes
    (:class:`fairkm.utils._sensitive.SensitiveFeatures`). Features that copy a
    sensitive attribute are named, and, when the kinds were read from the
    dtypes (``kinds_by_dtype``) rather than named by the user, a numeric
    attribute with at most two values and a categorical one of numbers with
    more than :data:`MANY_VALUES` values.
    """
    notes = []
    for name, kind, column, known in zip(features.names, features.kinds, features.columns,
                                         features.categories, strict=True):
        if not kinds_by_dtype:
            continue
        if kind == "numeric":
            notes.append(coded_numeric_note(
                name, column, "pass it as integers or strings, or leave it out of "
                "numeric_sensitive"))
        elif len(known) > MANY_VALUES and _looks_numeric(pd.Series(known)):
            notes += sensitive_kind_notes(
                pd.DataFrame({name: known[column]}), [], how_categorical="",
                how_numeric=how_numeric)
    notes += sensitive_in_features(
        X, feature_names, list(zip(features.names, features.kinds, features.columns,
                                   strict=True)), features.categories,
    )
    for note in notes:
        if note:
            warn(note, DataWarning)
