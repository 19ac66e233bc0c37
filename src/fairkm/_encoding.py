"""Sensitive features: the rule that reads them and the codes the engines see.

Every public entry point that takes ``sensitive_features`` goes through
:func:`check_sensitive_features`, so the rule that decides which attributes are
numeric, the error messages and the category encoding are the same everywhere.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._engine import build_terms
from ._validation import check_no_missing

__all__ = [
    "CATEGORICAL",
    "NUMERIC",
    "SensitiveEncoding",
    "SensitiveFeatures",
    "check_sensitive_features",
    "read_columns",
    "resolve_numeric",
    "standardize_numeric",
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


def aligned_to(sensitive_features, index):
    """Return pandas sensitive features in the row order of ``X``'s ``index`` (None: as given).

    A DataFrame or Series whose index holds the same labels as a DataFrame
    ``X``'s, in another order, is reordered to match, as pandas aligns on
    labels; one whose labels differ is refused, since matching rows by
    position would pair each row with another row's attributes.
    """
    if index is None or not isinstance(sensitive_features, (pd.DataFrame, pd.Series)):
        return sensitive_features
    own = sensitive_features.index
    if own.equals(index):
        return sensitive_features
    if len(own) == len(index) and own.is_unique and index.is_unique and own.isin(index).all():
        return sensitive_features.reindex(index)
    if isinstance(own, pd.RangeIndex) and own.equals(pd.RangeIndex(len(index))):
        return sensitive_features  # a plain positional frame, as from an array
    raise ValueError(
        "sensitive_features has an index that does not match X's: "
        f"{list(own[:3])}... against {list(index[:3])}.... Rows are matched by label, so give "
        "both the same index (or reset both: .reset_index(drop=True))."
    )


def read_columns(sensitive_features):
    """Split the input into (names, raw columns, auto-numeric flags).

    A dict of columns reads as the DataFrame it makes.
    """
    if isinstance(sensitive_features, dict):
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


def resolve_numeric(numeric, names, auto):
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


def _encode_numeric(name, col, where):
    values = pd.to_numeric(pd.Series(np.asarray(col, dtype=object)), errors="coerce")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sensitive attribute {name!r} is numeric but row {i}{where} holds "
            f"{np.asarray(col, dtype=object)[i]!r}; numeric sensitive values must be finite "
            "numbers."
        )
    return values


def _encode_categorical(name, col, where):
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
                    f"sensitive attribute {name!r} holds {value!r} at row {i}{where}, which "
                    "is not a single value (unhashable); give one value per row."
                ) from None
        raise TypeError(
            f"sensitive attribute {name!r} mixes values that cannot be compared ({exc}); "
            "convert the column to one type, for instance strings."
        ) from None
    return codes.astype(np.int64), pd.Index(uniques)


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
        check_no_missing(name, col, where)
        if num:
            kinds.append(NUMERIC)
            columns.append(_encode_numeric(name, col, where))
            categories.append(None)
        else:
            codes, uniques = _encode_categorical(name, col, where)
            kinds.append(CATEGORICAL)
            columns.append(codes)
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
    if isinstance(intersections, str) or not isinstance(intersections, Sequence):
        raise TypeError(
            "intersections must be a list of tuples of attribute names, got "
            f"{intersections!r}."
        )
    names, cols, auto = read_columns(sensitive_features)
    flags = resolve_numeric(numeric, names, auto)
    # Each column keeps its dtype, so the numeric rule reads it as before.
    frame = pd.DataFrame({
        name: col.reset_index(drop=True) if isinstance(col, pd.Series) else pd.Series(col)
        for name, col in zip(names, cols, strict=True)
    })
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


# --------------------------------------------------------------------- one partition's summaries
#
# A fitted encoding is learned from these, whether the rows are in memory (one
# partition) or spread over Dask workers (one summary per partition, combined
# on the client): the two engines cannot encode alike by accident.


def _weighted_sum(values, weights):
    return float(np.sum(values)) if weights is None else float(np.dot(weights, values))


def _value_range(values, weights):
    """Smallest and largest value of the rows of positive weight (inf, -inf for none)."""
    kept = values if weights is None else values[weights > 0]
    if kept.size == 0:
        return np.inf, -np.inf
    return float(kept.min()), float(kept.max())


def partition_summary(features, weights):
    """Return the rows' total weight and each attribute's summary.

    Per attribute: ``(values, counts)`` for a categorical one, ``(sum, min,
    max)`` for a numeric one.

    ``weights`` are the rows' sample weights, None for unit weights (then the
    total is the number of rows, an int).
    """
    parts = []
    for column, values, kind in zip(features.columns, features.categories, features.kinds,
                                    strict=True):
        if kind == NUMERIC:
            # The range (of the rows that count) tells a variance that underflowed from
            # a constant column.
            low, high = _value_range(column, weights)
            parts.append((_weighted_sum(column, weights), low, high))
        else:
            parts.append((values, np.bincount(column, weights=weights, minlength=len(values))))
    total = features.n_samples if weights is None else float(np.sum(weights))
    return total, parts


def partition_squares(features, weights, means):
    """Per attribute, the (weighted) sum of squared deviations from ``means`` (0: categorical)."""
    out = np.zeros(features.n_attributes)
    for j in features.select(NUMERIC):
        centred = features.columns[j] - means[j]
        with np.errstate(over="ignore", invalid="ignore"):  # _checked_scale says so
            out[j] = _weighted_sum(centred * centred, weights)
    return out


def partition_standard_sums(features, weights, means, scales):
    """Per attribute, the (weighted) sum of the standardised values (0 for categorical)."""
    out = np.zeros(features.n_attributes)
    for j in features.select(NUMERIC):
        out[j] = _weighted_sum((features.columns[j] - means[j]) / scales[j], weights)
    return out


def _checked_scale(mean_square, name, mean, low, high):
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
    with np.errstate(over="ignore", invalid="ignore"):  # _checked_scale says so
        mean = _weighted_sum(values, weights) / n
        centred = values - mean
        mean_square = _weighted_sum(centred * centred, weights) / n
    return mean, _checked_scale(mean_square, name, mean, *_value_range(values, weights))


# --------------------------------------------------------------------------- the fitted encoding


@dataclass(frozen=True)
class SensitiveEncoding:
    """What a fit learned about the sensitive attributes: metadata, never rows.

    Built once from the fitting rows (:meth:`from_features` in memory,
    :meth:`learn` from per-partition summaries); it encodes new rows for
    ``predict`` and ``score`` and gives the kernels their per-value constants.

    Attributes
    ----------
    names, kinds : tuple of str
        Attribute names and ``"categorical"``/``"numeric"``, in column order.
    categories : tuple of (ndarray of object) or None
        The sorted observed values of each categorical attribute.
    proportions : tuple of ndarray or None
        The dataset proportion of each of those values.
    means, scales : ndarray of shape (n_attributes,)
        Mean and standard deviation of each numeric attribute (NaN for
        categorical ones).
    offsets : ndarray of shape (n_attributes,)
        Mean of each numeric attribute's standardised values over the fitting
        rows (0 up to rounding), subtracted so they are centred exactly.
    n_samples : int or float
        Number of fitting rows, or their total weight with sample weights
        (the proportions, means and scales are then weighted).
    """

    names: tuple
    kinds: tuple
    categories: tuple
    proportions: tuple
    means: np.ndarray
    scales: np.ndarray
    offsets: np.ndarray
    n_samples: int

    @classmethod
    def learn(cls, names, kinds, each_partition):
        """Learn the encoding from summaries of the fitting rows, partition by partition.

        Parameters
        ----------
        names, kinds : list of str
            The attributes, as :func:`check_sensitive_features` read them.
        each_partition : callable
            ``each_partition(func, *args)`` returns the list of
            ``func(features, weights, *args)`` over the partitions, in order,
            each ``features`` being a partition's :class:`SensitiveFeatures`
            and ``weights`` its rows' sample weights (None for unit weights).
        """
        summaries = each_partition(partition_summary)
        n = sum(rows for rows, _ in summaries)
        a = len(names)
        means, scales, offsets = np.full(a, np.nan), np.full(a, np.nan), np.full(a, np.nan)
        categories, proportions = [], []
        lows, highs = np.full(a, np.nan), np.full(a, np.nan)
        for j, kind in enumerate(kinds):
            if kind == NUMERIC:
                means[j] = sum(parts[j][0] for _, parts in summaries) / n
                lows[j] = min(parts[j][1] for _, parts in summaries)
                highs[j] = max(parts[j][2] for _, parts in summaries)
                categories.append(None)
                proportions.append(None)
                continue
            values = [parts[j][0] for _, parts in summaries]
            # Factorising the partitions' sorted values together sorts them as
            # factorising the whole column would.
            codes, merged = pd.factorize(values[0].append(values[1:]), sort=True)
            counts = np.zeros(len(merged))
            start = 0
            for (_, parts), part_values in zip(summaries, values, strict=True):
                stop = start + len(part_values)
                counts[codes[start:stop]] += parts[j][1]
                start = stop
            categories.append(np.asarray(merged, dtype=object))
            proportions.append(counts / n)
        numeric = [j for j, kind in enumerate(kinds) if kind == NUMERIC]
        if numeric:
            squares = np.sum(each_partition(partition_squares, means), axis=0)
            for j in numeric:
                scales[j] = _checked_scale(squares[j] / n, names[j], means[j], lows[j],
                                           highs[j])
            sums = np.sum(each_partition(partition_standard_sums, means, scales), axis=0)
            offsets[numeric] = sums[numeric] / n
        return cls(tuple(names), tuple(kinds), tuple(categories), tuple(proportions),
                   means, scales, offsets, n)

    @classmethod
    def from_features(cls, features, n_samples, weights=None):
        """Learn the encoding of in-memory rows (``features`` None: no attribute).

        ``weights`` are the rows' sample weights (None for unit weights);
        ``n_samples`` is then their total.
        """
        if features is None:
            empty = np.zeros(0)
            return cls((), (), (), (), empty, empty, empty, n_samples)
        return cls.learn(
            features.names, features.kinds,
            lambda func, *args: [func(features, weights, *args)],
        )

    @property
    def n_attributes(self):
        """Number of sensitive attributes."""
        return len(self.names)

    def select(self, kind):
        """Return the indices of the attributes of the given kind, in column order."""
        return [j for j, k in enumerate(self.kinds) if k == kind]

    def in_column_order(self, values):
        """Reorder a per-attribute vector listing categorical attributes first into column order."""
        order = self.select(CATEGORICAL) + self.select(NUMERIC)
        out = np.empty_like(values)
        out[order] = values
        return out

    def split(self, values):
        """Split a per-attribute vector in column order into (categorical, numeric) parts."""
        values = np.asarray(values)
        return values[self.select(CATEGORICAL)], values[self.select(NUMERIC)]

    def value_offsets(self):
        """First index of each categorical attribute's values among all of them, and the total."""
        sizes = [len(p) for p in self.proportions if p is not None]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def check_names(self, sensitive_features):
        """Check that new rows carry the fitted attributes (the same names, for a DataFrame)."""
        names, _, _ = read_columns(sensitive_features)
        if isinstance(sensitive_features, pd.DataFrame):
            if names != list(self.names):
                raise ValueError(
                    f"sensitive_features has columns {names}, but the model was fitted with "
                    f"{list(self.names)}."
                )
        elif len(names) != self.n_attributes:
            raise ValueError(
                f"sensitive_features has {len(names)} attribute(s), but the model was fitted "
                f"with {self.n_attributes}."
            )

    def check(self, sensitive_features, *, n_samples=None):
        """Read new rows with the fitted attributes: same names (for a DataFrame), same kinds.

        Returns the rows' :class:`SensitiveFeatures`, their categorical codes
        being local to them; :meth:`terms` maps them to the fitted values.
        """
        self.check_names(sensitive_features)
        return check_sensitive_features(
            sensitive_features, n_samples=n_samples, numeric=self.select(NUMERIC) or False
        )

    def rows(self, features, *, unseen_slot=False):
        """Per-row kernel inputs: global value codes and centred standardised values.

        Returns ``(codes, Z)``: codes of shape (n, n_categorical), each
        attribute's codes shifted past the values of the attributes before it,
        and Z of shape (n, n_numeric). A value never seen in the fitting rows
        gets its attribute's extra "unseen" code when ``unseen_slot`` (the
        layout of :meth:`terms` with ``unseen_slot=True``).
        """
        cat, num = self.select(CATEGORICAL), self.select(NUMERIC)
        n = features.n_samples
        codes = np.empty((n, len(cat)), dtype=np.int64)
        start = 0
        for a, j in enumerate(cat):
            known = pd.Index(self.categories[j])
            lookup = known.get_indexer(features.categories[j])
            if (lookup < 0).any():
                lookup = self._match_by_text(j, features.categories[j], lookup)
            if (lookup < 0).any() and not unseen_slot:
                raise ValueError(f"sensitive attribute {self.names[j]!r} has unseen values.")
            lookup[lookup < 0] = len(known)
            codes[:, a] = lookup[features.columns[j]] + start
            start += len(known) + unseen_slot
        Z = np.empty((n, len(num)))
        for b, j in enumerate(num):
            Z[:, b] = (features.columns[j] - self.means[j]) / self.scales[j] - self.offsets[j]
        return codes, Z

    def _match_by_text(self, j, values, lookup):
        """Match new values of another kind to the fitted ones by their text ("1" and 1).

        Values of the fitted kind that match nothing are unseen values. Values
        of another kind are matched by their printed form; if none of them
        matches, the column was given in another type, and that is an error.
        """
        fitted_kind = pd.api.types.infer_dtype(self.categories[j], skipna=False)
        new_kind = pd.api.types.infer_dtype(np.asarray(values, dtype=object), skipna=False)
        if fitted_kind == new_kind:
            return lookup
        as_text = pd.Index([str(v) for v in self.categories[j]])
        by_text = as_text.get_indexer([str(v) for v in values])
        unmatched = lookup < 0
        if as_text.is_unique and (by_text[unmatched] >= 0).any():
            return np.where(unmatched, by_text, lookup)
        raise ValueError(
            f"sensitive attribute {self.names[j]!r} was fitted with {fitted_kind} values "
            f"(such as {list(self.categories[j][:3])}) but got {new_kind} values (such as "
            f"{list(np.asarray(values, dtype=object)[unmatched][:3])}) that match none of "
            "them; give the column in the type it was fitted with."
        )

    def terms(self, features, attribute_weights, *, n_samples=None, unseen_slot=False,
              n_rows=0, sample_weight=None, cluster_exponent=2):
        """Return the engine's :class:`~fairkm._engine.Terms` for ``features``.

        ``features`` None gives ``n_rows`` rows without attributes (only an
        encoding without attributes has such rows, or none for constants).
        ``n_samples`` is the ``n`` of the fairness term (default: the fitting
        rows'). With ``unseen_slot`` every categorical attribute gets one more
        value, of dataset proportion 0, for values never seen in the fit.
        ``sample_weight`` are the rows' weights (None for unit weights);
        ``cluster_exponent`` weighs each cluster by ``(|C|/n)^e``.
        """
        cat, num = self.select(CATEGORICAL), self.select(NUMERIC)
        props = [self.proportions[j] for j in cat]
        # |Values(S)| counts the values the fitting rows hold with some weight,
        # so rows of weight 0 change nothing (all values, without weights).
        n_values = [np.count_nonzero(p) for p in props]
        if unseen_slot:
            props = [np.append(p, 0.0) for p in props]
        if features is None:
            codes = np.zeros((n_rows, len(cat)), dtype=np.int64)
            Z = np.zeros((n_rows, len(num)))
        else:
            codes, Z = self.rows(features, unseen_slot=unseen_slot)
        weights = np.asarray(attribute_weights, dtype=np.float64)
        rows = np.zeros(0) if sample_weight is None else sample_weight
        return build_terms(codes, Z, rows, props, n_values, weights[cat], weights[num],
                           self.n_samples if n_samples is None else n_samples,
                           cluster_exponent)
