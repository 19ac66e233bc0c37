"""What a fit learns from the sensitive attributes, and the codes the engines see.

The raw columns are read and checked by :mod:`fairkm.utils._sensitive`; here, the
per-partition summaries a fitted :class:`SensitiveEncoding` is learned from
(one partition in memory, one per worker on Dask), the standardisation of
numeric attributes (which the measures of :mod:`fairkm.metrics` share), and
the encoding of rows into the terms the kernels read
(:class:`fairkm.cluster._terms.Terms`). It imports :mod:`fairkm.utils._sensitive` and
:mod:`fairkm.cluster._terms`, never the engine, so the measures load no compiled code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairkm.utils._sensitive import (
    CATEGORICAL,
    NUMERIC,
    check_sensitive_features,
    checked_scale,
    read_columns,
    value_range,
)
from fairkm.utils._sums import weighted_sum

from ._terms import build_terms

__all__ = [
    "SensitiveEncoding",
    "partition_squares",
    "partition_standard_sums",
    "partition_summary",
]


# --------------------------------------------------------------------- one partition's summaries
#
# A fitted encoding is learned from these, whether the rows are in memory (one
# partition) or spread over Dask workers (one summary per partition, combined
# on the client): the two engines cannot encode alike by accident.


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
            low, high = value_range(column, weights)
            parts.append((weighted_sum(column, weights), low, high))
        else:
            parts.append((values, np.bincount(column, weights=weights, minlength=len(values))))
    total = features.n_samples if weights is None else float(np.sum(weights))
    return total, parts


def partition_squares(features, weights, means):
    """Per attribute, the (weighted) sum of squared deviations from ``means`` (0: categorical)."""
    out = np.zeros(features.n_attributes)
    for j in features.select(NUMERIC):
        centred = features.columns[j] - means[j]
        with np.errstate(over="ignore", invalid="ignore"):  # checked_scale says so
            out[j] = weighted_sum(centred * centred, weights)
    return out


def partition_standard_sums(features, weights, means, scales):
    """Per attribute, the (weighted) sum of the standardised values (0 for categorical)."""
    out = np.zeros(features.n_attributes)
    for j in features.select(NUMERIC):
        out[j] = weighted_sum((features.columns[j] - means[j]) / scales[j], weights)
    return out


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
                scales[j] = checked_scale(squares[j] / n, names[j], means[j], lows[j],
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
        """Return the kernels' :class:`~fairkm.cluster._terms.Terms` for ``features``.

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
