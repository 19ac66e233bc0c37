"""How far a clustering is from the bounds: per attribute, the worst cluster and value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairkm.utils._inputs import row_index
from fairkm.utils._options import ADDITIVE, MULTIPLICATIVE
from fairkm.utils._sensitive import CATEGORICAL

from ._bound_spec import check_kind, resolve_bounds
from ._mix import mean_gap

__all__ = ["TOLERANCE", "BoundsCheck", "check_bounds", "check_labels", "cluster_balances",
           "enforced", "from_codes", "measure"]

# A bound counts as met when no share (or standardised mean) lies further than
# this outside its band: shares are ratios of float sums.
TOLERANCE = 1e-9

_COLUMNS = ["kind", "bound", "deviation", "violation", "satisfied", "cluster", "value",
            "cluster_value", "dataset_value", "cluster_size", "min_balance", "balance",
            "balance_cluster"]


def _plain(value):
    """Return a NumPy scalar as the Python scalar it holds (for tables and messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _value_counts(attr, codes, n_clusters, weights):
    n_values = len(attr.categories)
    return np.bincount(codes * n_values + attr.values, weights=weights,
                       minlength=n_clusters * n_values).reshape(n_clusters, n_values)


def _balances(attr, counts):
    """Each cluster's balance: its least count of a value the dataset holds over its largest.

    1 for an attribute with one value present; NaN for a cluster holding none
    of the present values (an empty one).
    """
    present = counts[:, attr.present]
    largest = present.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(largest > 0, present.min(axis=1) / largest, np.nan)


def cluster_balances(bounds, codes, n_clusters, cluster_labels=None):
    """Each cluster's balance of every categorical attribute (Chierichetti et al., 2017).

    A cluster's balance is its smallest (weighted) count of a value present in
    the dataset over its largest: 0 when it lacks a value, 1 when its counts
    are equal.

    Parameters
    ----------
    bounds : BoundSet
    codes : ndarray of shape (n_samples,), int64
        Cluster codes 0..n_clusters-1.
    n_clusters : int
    cluster_labels : sequence or None
        The clusters' labels (the index); the codes if None.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty cluster, one column per categorical attribute.
    """
    weights = bounds.weights
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    live = np.flatnonzero(sizes > 0)
    columns = {a.name: _balances(a, _value_counts(a, codes, n_clusters, weights))[live]
               for a in bounds.categorical(bounded_only=False)}
    index = live if cluster_labels is None else [_plain(cluster_labels[c]) for c in live]
    return pd.DataFrame(columns, index=pd.Index(index, name="cluster"))


def _categorical_cells(attr, kind, codes, n_clusters, weights, sizes):
    counts = _value_counts(attr, codes, n_clusters, weights)
    live = np.flatnonzero(sizes > 0)
    shares = counts[live] / sizes[live, None]
    p = attr.proportions[None, :]
    if kind == ADDITIVE:
        deviation = np.abs(shares - p)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            deviation = np.maximum(1.0 - shares / p, 1.0 - p / shares)
        deviation = np.where(p > 0, np.where(shares > 0, deviation, 1.0), 0.0)
    if attr.bounded:
        violation = np.maximum(0.0, np.maximum(shares - attr.upper[None, :],
                                               attr.lower[None, :] - shares))
    else:
        violation = np.zeros_like(shares)
    return live, shares, deviation, violation, _balances(attr, counts)[live]


def measure(bounds, codes, n_clusters):
    """Measure cluster codes against a bound set.

    Parameters
    ----------
    bounds : BoundSet
        From :func:`fairkm.metrics._bound_spec.resolve_bounds`.
    codes : ndarray of shape (n_samples,), int64
        Cluster codes 0..n_clusters-1.
    n_clusters : int
        Number of codes.

    Returns
    -------
    pandas.DataFrame
        One row per attribute, indexed by name, with the columns of
        :attr:`BoundsCheck.table`; ``cluster`` is a code.
    """
    weights = bounds.weights
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters).astype(np.float64)
    rows = []
    for attr in bounds.attributes:
        if attr.kind == CATEGORICAL:
            live, shares, deviation, violation, balances = _categorical_cells(
                attr, bounds.kind, codes, n_clusters, weights, sizes)
            score = violation if violation.max() > 0 else deviation
            c, v = np.unravel_index(int(np.argmax(score)), score.shape)
            worst = int(np.nanargmin(balances))
            # The balance target reads in the balance's units: its shortfall is a violation.
            short = max(0.0, attr.balance - balances[worst]) if attr.balanced else 0.0
            rows.append([bounds.kind, attr.delta, float(deviation.max()),
                         max(float(violation.max()), short), None, int(live[c]),
                         _plain(attr.categories[v]), float(shares[c, v]),
                         float(attr.proportions[v]), float(sizes[live[c]]) * bounds.unit,
                         attr.balance, float(balances[worst]), int(live[worst])])
        else:
            live = np.flatnonzero(sizes > 0)
            zw = attr.values if weights is None else attr.values * weights
            sums = np.bincount(codes, weights=zw, minlength=n_clusters)
            means = sums[live] / sizes[live]
            deviation = mean_gap(sums[None, :], sizes)[0, live]
            violation = np.maximum(0.0, deviation - attr.delta) if attr.bounded else 0 * means
            c = int(np.argmax(violation if violation.max() > 0 else deviation))
            rows.append(["numeric", attr.delta, float(deviation.max()), float(violation.max()),
                         None, int(live[c]), None, float(means[c]), 0.0,
                         float(sizes[live[c]]) * bounds.unit, np.nan, np.nan, None])
    table = pd.DataFrame(rows, columns=_COLUMNS,
                         index=pd.Index([a.name for a in bounds.attributes], name="attribute"))
    table["satisfied"] = table["violation"] <= TOLERANCE
    return table


@dataclass(frozen=True)
class BoundsCheck:
    """Whether every cluster stays within the bounds, and where it comes closest to failing.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per sensitive attribute (index: its name) with columns
        ``kind`` ("additive", "multiplicative" or "numeric"), ``bound`` (the
        bound asked for, NaN if none), ``deviation`` (the attribute's largest
        deviation over clusters and values: ``|share - p|`` for additive, the
        smallest delta whose band ``[(1 - delta) p, p / (1 - delta)]`` holds
        the share for multiplicative, ``|mean_C(z)|`` of the standardised
        values for numeric), ``violation`` (how far the worst share, or mean,
        lies outside its band; 0 when met), ``satisfied``, and the worst
        cell: ``cluster`` (its label), ``value``, ``cluster_value`` (the
        cluster's share of ``value``, or its standardised mean),
        ``dataset_value`` and ``cluster_size`` (its rows, or with sample
        weights its total weight); then ``min_balance`` (the balance target
        asked, NaN if none), ``balance`` (the smallest balance over the
        clusters, categorical attributes) and ``balance_cluster`` (the
        cluster that has it). A balance target's shortfall
        (``min_balance - balance``) counts in ``violation``.
    violation : float
        The largest violation over the bounded attributes (share units;
        standard deviations for numeric attributes; balance units for a
        balance target); 0 when every bound holds.
    satisfied : bool
        ``violation <= 1e-9``.
    deviation_kind : {"additive", "multiplicative"}
        How the categorical bounds read.
    note : str
        When the bounds are not the ones asked for: ``max_deviation=0`` asks
        for the dataset's exact mix, and the bound checked is the tightest
        that whole rows meet (the note says which, and whether it is exact).
    weighted : bool
        Whether the rows were weighted (``cluster_size`` is then a total
        weight, not a number of rows).
    balances : pandas.DataFrame or None
        Each non-empty cluster's balance (index: its label) of every
        categorical attribute (columns): its smallest count of a value over
        its largest (see :func:`cluster_balances`).
    """

    table: pd.DataFrame
    violation: float
    satisfied: bool
    deviation_kind: str
    note: str = ""
    weighted: bool = False
    balances: pd.DataFrame | None = None

    def summary(self):
        """One sentence: is every cluster within the bounds, and which cluster is worst.

        Returns
        -------
        str
            The sentence, for a report or a log.
        """
        table = self.table
        banded = table[table["bound"].notna()]
        targets = table[table["min_balance"].notna()]
        if banded.empty and targets.empty:
            return "No bound was asked for."
        parts, cells = [], []
        if not banded.empty:
            bounds = sorted(set(banded["bound"].round(6)))
            what = (f"within {bounds[0]:g} of the dataset's mix" if len(bounds) == 1
                    else "within the bounds asked")
            if self.deviation_kind == MULTIPLICATIVE and (banded["kind"] != "numeric").any():
                what += " (multiplicative)"
            parts.append(what)
            cells.append(self._band_cell(banded))
        if not targets.empty:
            floors = sorted(set(targets["min_balance"].round(6)))
            parts.append(f"with balance at least {floors[0]:g}" if len(floors) == 1
                         else "with the balance asked")
            name = (targets["balance"] - targets["min_balance"]).idxmin()
            row = targets.loc[name]
            cells.append(f"{name}, cluster {_plain(row['balance_cluster'])!r}: balance "
                         f"{row['balance']:.4f}")
        what = " and ".join(parts)
        note = f" {self.note}" if self.note else ""
        if self.satisfied:
            return f"Every cluster {what}: yes (closest to the bound: {'; '.join(cells)}).{note}"
        return (f"Every cluster {what}: no, largest violation {self.violation:.3g} "
                f"({'; '.join(cells)}).{note}")

    def _band_cell(self, bounded):
        """Where the share bands come closest to failing (or fail most)."""
        name = bounded["violation"].idxmax() if not self.satisfied else bounded[
            "deviation"].idxmax()
        row = bounded.loc[name]
        cluster, value = _plain(row["cluster"]), _plain(row["value"])
        size = (f"total weight {row['cluster_size']:.3g}" if self.weighted
                else f"{row['cluster_size']:g} rows")
        if row["kind"] == "numeric":
            return (f"{name}, cluster {cluster!r} ({size}): "
                    f"standardised mean {row['cluster_value']:+.3f}")
        return (f"{name}, cluster {cluster!r} ({size}): "
                f"{value!r} {row['cluster_value']:.3f} against "
                f"{row['dataset_value']:.3f} overall")


def enforced(asked, check):
    """Return the categorical bound a fit enforced, in the form asked (a number or a dict).

    The bound asked, but for an attribute asked at 0, where it is the bound
    whole rows allowed (read from ``check.table``).
    """
    if asked is None:
        return None
    table = check.table[(check.table["kind"] != "numeric") & check.table["bound"].notna()]
    if isinstance(asked, Mapping):
        return {name: float(table.loc[name, "bound"]) for name in asked}
    return float(table["bound"].max())


def from_codes(bounds, codes, n_clusters, cluster_labels=None):
    """Build a :class:`BoundsCheck` from cluster codes (``cluster_labels[code]`` names them)."""
    table = measure(bounds, codes, n_clusters)
    if cluster_labels is not None:
        table["cluster"] = [_plain(cluster_labels[c]) for c in table["cluster"]]
    # Numeric attributes have no balance: their cell is None (pandas made it NaN).
    table["balance_cluster"] = pd.Series(
        [None if pd.isna(c) else (int(c) if cluster_labels is None
                                  else _plain(cluster_labels[int(c)]))
         for c in table["balance_cluster"]], index=table.index, dtype=object)
    bounded = table["bound"].notna() | table["min_balance"].notna()
    violation = float(table.loc[bounded, "violation"].max()) if bounded.any() else 0.0
    return BoundsCheck(table, violation, violation <= TOLERANCE, bounds.kind, bounds.note,
                       bounds.weights is not None,
                       cluster_balances(bounds, codes, n_clusters, cluster_labels))


def check_bounds(labels, sensitive_features, *, max_deviation=None, deviation_kind="additive",
                 numeric_bound=None, sample_weight=None, numeric_sensitive="auto",
                 intersections=None, min_balance=None):
    """Check that every cluster's mix stays within bounds of the dataset's, for every attribute.

    For every cluster ``C`` and every value ``v`` of every bounded categorical
    attribute, additive bounds ask ``|share_C(v) - share_X(v)| <= max_deviation``
    and multiplicative ones (Bera et al., 2019)
    ``(1 - max_deviation) p <= share_C(v) <= p / (1 - max_deviation)`` with
    ``p = share_X(v)``. ``numeric_bound`` asks ``|mean_C(z)| <= numeric_bound``
    of every numeric attribute standardised over the dataset (``z``, in
    standard deviations). ``min_balance`` asks every cluster's balance
    (Chierichetti et al., 2017: its smallest count of a value present in the
    dataset over its largest, 0 when it lacks one) to be at least the target,
    a one-sided floor; for a binary attribute, balance ``>= b`` is each
    value's share in ``[b / (1 + b), 1 / (1 + b)]``.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels of any values (a clustering from any algorithm). A
        pandas Series pairs pandas ``sensitive_features`` and
        ``sample_weight`` with its rows by index label.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
            Series or DataFrame
        One column per sensitive attribute.
    max_deviation : float, dict or None
        The bound on every categorical attribute, or ``{name: bound}`` for
        some of them (the others are reported, not bounded), or None.
    deviation_kind : {"additive", "multiplicative"}, default="additive"
        How ``max_deviation`` reads (see above).
    numeric_bound : float, dict or None, default=None
        Bound on the standardised cluster means of numeric attributes.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights: a row of weight w counts as w rows in the shares.
    numeric_sensitive : "auto", bool or list, default="auto"
        Which attributes are numeric (as in :class:`fairkm.FairKM`).
    intersections : sequence of sequence of str, default=None
        Combined attributes (``[("sex", "race")]``), bounded as the others.
    min_balance : float, dict or None, default=None
        The balance target (in [0, 1]) of every categorical attribute, or
        ``{name: target}`` for some, or None.

    Returns
    -------
    BoundsCheck
        ``satisfied``, ``violation``, the per-attribute ``table``, each
        cluster's ``balances`` and ``summary()``.

    Examples
    --------
    >>> from fairkm.metrics import check_bounds
    >>> check = check_bounds([0, 0, 1, 1], ["a", "b", "a", "a"], max_deviation=0.25)
    >>> check.satisfied, round(check.violation, 3)
    (True, 0.0)
    >>> check_bounds([0, 0, 1, 1], ["a", "b", "a", "a"], max_deviation=0.2).satisfied
    False
    >>> check = check_bounds([0, 0, 1, 1], ["a", "b", "a", "b"], min_balance=0.9)
    >>> check.satisfied, check.balances["s0"].tolist()
    (True, [1.0, 1.0])
    """
    check_kind(deviation_kind)
    arr = _labels_1d(labels)  # before the sensitive features are read
    bounds = resolve_bounds(sensitive_features, None, max_deviation=max_deviation,
                            deviation_kind=deviation_kind, numeric_bound=numeric_bound,
                            sample_weight=sample_weight, numeric_sensitive=numeric_sensitive,
                            intersections=intersections, index=row_index(labels),
                            of="labels", min_balance=min_balance)
    return check_labels(bounds, arr)


def _labels_1d(labels):
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D, got an array of shape {arr.shape}.")
    return arr


def check_labels(bounds, labels):
    """Measure a clustering against bounds already resolved (one reading for many clusterings).

    Parameters
    ----------
    bounds : BoundSet
        As :func:`fairkm.metrics._bound_spec.resolve_bounds` returns it.
    labels : ndarray of shape (n_samples,)
        Cluster labels of any kind (factorised, sorted).

    Returns
    -------
    BoundsCheck
    """
    arr = _labels_1d(labels)
    if bounds.n_samples != arr.shape[0]:
        raise ValueError(
            f"sensitive_features has {bounds.n_samples} rows but labels has {arr.shape[0]} "
            "entries; they must have the same length."
        )
    codes, uniques = pd.factorize(arr, sort=True)
    if codes.min() < 0:
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"labels has a missing value at position {i}.")
    values = list(uniques)
    return from_codes(bounds, codes.astype(np.int64), len(values), values)
