"""The audit of a clustering: :func:`audit` and the :class:`Audit` it returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans

from fairkm.exceptions import DataWarning
from fairkm.metrics import bounds_from_features, check_kind, check_labels, resolve_bounds
from fairkm.utils._call_site import warn
from fairkm.utils._data_checks import (
    feature_role_notes,
    missing_values,
    sensitive_kind_notes,
)
from fairkm.utils._inputs import as_frequencies, paired, read_weights, row_index
from fairkm.utils._options import HTML_REPORT
from fairkm.utils._progress import Steps
from fairkm.utils._sensitive import check_sensitive_features
from fairkm.utils._threads import decided_pool_threads
from fairkm.utils._validation import labelled_rows

from ._files import report_format, write_atomically
from ._html import render_html
from ._measure import (
    cluster_table,
    cost_tables,
    fairness_table,
    quality_table,
    sensitive_frame,
    verdict_table,
    worst_clusters,
)
from ._text import audit_text, format_number, headline

__all__ = ["Audit", "audit", "blind_name", "weights_fact"]


def blind_name(n_init):
    """Name of the S-blind K-Means reference, saying how many starts it is the best of."""
    return f"S-blind K-Means (best of {n_init})"


def weights_fact(sample_weight):
    """Say how an audit is weighted, as the fact its report shows.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
        The checked row weights.

    Returns
    -------
    str
        Such as ``"weighted by sample_weight (total 19,000,000, 19,000 rows): a
        row of weight w counts as w rows in every measure, size and share"``.
    """
    zero = int(np.count_nonzero(sample_weight == 0))
    none = f", {zero:,} of weight 0 left out" if zero else ""
    return (f"weighted by sample_weight (total {format_number(float(sample_weight.sum()))}, "
            f"{len(sample_weight):,} rows{none}): a row of weight w counts as w rows in every "
            "measure, size and share")


@dataclass(frozen=True, repr=False)
class Audit:
    """Measures, verdicts and summaries of a clustering, against an S-blind reference.

    Made by :func:`audit`. Print it for a text summary, call :meth:`to_html`
    for a self-contained HTML page; in a notebook it renders itself.

    Attributes
    ----------
    title : str
        The report's title.
    facts : list of (str, str)
        Labelled facts shown at the top (data, parameters, reference).
    labels : dict of str to ndarray of shape (n_samples,)
        Cluster labels by clustering name: the audited clustering first, the
        reference (if any) second; of the rows of positive weight only, when
        ``sample_weight`` gave some rows weight 0.
    sensitive : pandas.DataFrame
        The sensitive attributes, one column each.
    numeric_sensitive : list of str
        The numeric ones among them; the others are categorical.
    fairness : pandas.DataFrame
        Every fairness measure of :data:`fairkm.metrics.MEASURES`, indexed by
        (attribute or ``"mean"``, clustering).
    quality : pandas.DataFrame or None
        Quality measures (CO, SH; DevC, DevO against the reference), one row
        per clustering; None without features.
    clusters : dict of str to pandas.DataFrame
        Per clustering, one row per cluster: size, share, spread and centre
        distance (with features), then the profile columns.
    worst : pandas.DataFrame
        Each attribute's least fair cluster in each clustering, indexed by
        (attribute, clustering): the cluster, its size and share, its
        distance to the dataset's mix (the cluster that sets ME), whether it
        is small, and its mix against the dataset's (``detail``).
    verdicts : pandas.DataFrame or None
        Per (attribute, measure): both values, the relative change and
        ``"fairer"``, ``"less fair"``, ``"same"`` (within 1%) or ``"n/a"``;
        None without a reference.
    notes : list of str
        What the data checks found (columns whose kind or role looks wrong).
    own_blind_inertia : float
        The K-Means term of the S-blind clustering a :class:`fairkm.FairKM`
        fit started from (NaN when unknown).
    bounds : dict of str to fairkm.metrics.BoundsCheck
        With a guarantee asked (``max_deviation``), per clustering: is every
        cluster within the bound of the dataset's mix, and its worst cluster
        per attribute (:func:`fairkm.metrics.check_bounds`); empty otherwise.
    settings : dict or None
        The run that made the audited clustering, when it was a fitted
        estimator: ``"estimator"`` (its class name), its parameters and, for
        FairKM, ``"cluster_weighting_"``; None for labels alone. The advice
        is fitted to it (it suggests what the run did not already set).
    met_bound : float
        The tightest additive bound the audited clustering already meets:
        the largest distance of any cluster's share of any value of a
        categorical attribute from the dataset's (NaN without one). The
        advice suggests a guarantee only below it, where it would change the
        worst cluster.
    sample_weight : ndarray of shape (n_samples,) or None
        The row weights every number was computed with (a row of weight w
        counts as w rows); None for an unweighted audit.
    own_inertia : float
        The K-Means term of the audited :class:`fairkm.FairKM` as its fit
        measured it, in the fit's weighting, to compare with
        ``own_blind_inertia`` (NaN when unknown).
    bound_repair : BoundRepair or None
        What a bounded :class:`fairkm.FairKM` did to keep its clustering within
        the bound (its ``bound_repair_``); None otherwise. When it met the
        bound only with a loss, the headline says so and the advice names it.
    costs : pandas.DataFrame or None
        Equitable cost, indexed by (categorical attribute, clustering): the
        group whose rows lie furthest from their cluster's centre on average
        (mean squared distance, weighted as every measure) with its size and
        that mean cost, the best served group with its size and mean cost,
        and their ratio
        (:func:`fairkm.metrics.group_costs`, each cluster's centre the mean of
        its rows). None without features or categorical attributes; numeric
        attributes have no groups and no row.
    group_costs : pandas.DataFrame or None
        Each group's ``size`` and mean cost in each clustering (one column per
        clustering), indexed by (attribute, group); None as ``costs``.
    """

    title: str
    facts: list
    labels: dict
    sensitive: pd.DataFrame
    numeric_sensitive: list
    fairness: pd.DataFrame
    quality: pd.DataFrame | None
    clusters: dict
    worst: pd.DataFrame
    verdicts: pd.DataFrame | None
    notes: list = field(default_factory=list)
    own_blind_inertia: float = np.nan
    bounds: dict = field(default_factory=dict)
    settings: dict | None = None
    met_bound: float = np.nan
    sample_weight: np.ndarray | None = None
    own_inertia: float = np.nan
    bound_repair: object = None
    costs: pd.DataFrame | None = None
    group_costs: pd.DataFrame | None = None

    @property
    def weighted(self):
        """Whether every number of the audit is weighted (``sample_weight`` given)."""
        return self.sample_weight is not None

    @property
    def main(self):
        """Name of the audited clustering."""
        return next(iter(self.labels))

    @property
    def reference(self):
        """Name of the reference clustering, or None."""
        names = list(self.labels)
        return names[1] if len(names) > 1 else None

    def headline(self):
        """Return the headline: the cost, the fairness and every worsening, as sentences.

        Returns
        -------
        list of (str, str)
            ``(kind, sentence)`` pairs; ``kind`` is ``"alert"`` for a
            worsening (an attribute or measure on which the clustering is
            less fair than the reference), ``"unchanged"`` when an
            attribute's least fair cluster is no fairer than the reference's
            (ME), ``"costs"`` when groups are served less alike than by the
            reference (the equitable cost's ratio, with features), ``"cost"``,
            ``"summary"``, ``"guarantee"`` (with a bound
            asked: is every cluster within it, one sentence per clustering)
            or ``"advice"``.
        """
        return headline(self)

    def to_text(self):
        """Return the text summary the command line prints.

        Returns
        -------
        str
            The cluster sizes, the tables of measures and the findings, in lines
            of text.
        """
        return audit_text(self)

    def to_html(self, path=None):
        """Render the audit as one self-contained HTML page.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the page (UTF-8), a ``.html`` or ``.htm`` file (any
            other extension is refused with a ``ValueError``; :meth:`save`
            writes text too); None only returns it. The file appears whole
            or not at all.

        Returns
        -------
        str
            The HTML document. Charts are PNG images embedded as ``data:``
            URIs: the page loads nothing from the network and opens offline.
        """
        if path is not None:
            report_format(path, "path", only=HTML_REPORT)
        page = render_html(self, full_page=True)
        if path is not None:
            write_atomically(path, page)
        return page

    def save(self, path):
        """Write the audit to ``path`` in the format its extension names.

        Parameters
        ----------
        path : str or path-like
            ``.html`` or ``.htm``: the page :meth:`to_html` renders; ``.txt``
            or ``.md``: the text :meth:`to_text` returns (UTF-8). Any other
            extension (``.pdf``...) is refused.

        Raises
        ------
        ValueError
            When the extension is none of these; nothing is written. The file
            appears whole or not at all: it is written beside its place and
            then renamed.
        """
        if report_format(path, "path") == HTML_REPORT:
            self.to_html(path)
        else:
            write_atomically(path, self.to_text() + "\n")

    def _repr_html_(self):
        """HTML for notebooks (Jupyter, sphinx-gallery): the report as one ``<div>``."""
        return render_html(self, full_page=False)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        against = f" against {self.reference!r}" if self.reference else ""
        return (
            f"<Audit of {self.main!r}{against}: {len(self.labels[self.main]):,} rows, "
            f"{self.sensitive.shape[1]} sensitive attribute(s)>"
        )


def _labels_of(labels):
    """Return (labels array, default name, fitted model or None)."""
    if hasattr(labels, "labels_") and not isinstance(labels, (np.ndarray, pd.Series, list)):
        return np.asarray(labels.labels_), type(labels).__name__, labels
    return np.asarray(labels), "clustering", None


def _guarantee_of_model(model, max_deviation, deviation_kind, min_balance=None):
    """Return the bound to check: the one given, else the one a fitted model enforced.

    Returns ``(max_deviation, deviation_kind, intersections, min_balance)``; a
    model's own bound comes with the intersections it was fitted with, which
    it bounds too. The bound enforced (``max_deviation_``) is the one asked,
    but for an attribute asked at 0, where it is the bound whole rows allowed;
    a model's balance target (``min_balance``) comes with it.
    """
    if max_deviation is not None or min_balance is not None or model is None:
        return max_deviation, deviation_kind, None, min_balance
    asked = getattr(model, "max_deviation_", getattr(model, "max_deviation", None))
    if isinstance(asked, str):  # an estimator's "auto" before it was fitted
        asked = None
    target = getattr(model, "min_balance", None)
    if asked is None and target is None:
        return None, deviation_kind, None, None
    return (asked, getattr(model, "deviation_kind", deviation_kind),
            getattr(model, "intersections", None), target)


def _settings_of(model):
    """Return what the advice needs to know of the run that made the clustering (or None)."""
    if model is None:
        return None
    settings = {"estimator": type(model).__name__}
    if hasattr(model, "get_params"):
        settings.update(model.get_params(deep=False))
    settings["cluster_weighting_"] = getattr(model, "cluster_weighting_", None)
    return settings


def _features(X, n_samples):
    """Return (float64 array or None, notes on id-like and weight-like columns) for ``X``."""
    if X is None:
        return None, []
    notes = []
    if isinstance(X, pd.DataFrame):
        notes = feature_role_notes(
            X, how_to_exclude="X.drop(columns=[{name!r}])",
            how_to_weight="pass it as sample_weight=X[{name!r}] to FairKM.fit and to audit, "
            "with X.drop(columns=[{name!r}]) as the features")
        frame = X
    else:
        frame = pd.DataFrame(np.asarray(X))
        if frame.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {np.shape(X)}.")
    if len(frame) != n_samples:
        raise ValueError(f"X has {len(frame)} rows, but labels has {n_samples}.")
    try:
        values = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "X must be numeric (the features the clustering was made from, encoded); "
            f"got {exc}."
        ) from None
    return values, notes


def _check_missing(sensitive, X, index):
    """Refuse missing values, naming each column's first row by its label when it has one.

    ``index``: the rows' pandas labels (the labels' or X's), or None; without
    them a row is its position counted from 1, as in a CSV file.
    """
    labelled = labelled_rows(index)

    def first(row):
        return f"row {row}" if labelled is None else labelled(row - 1)

    problems = [
        f"sensitive attribute {name!r} ({row.missing:,}, the first on {first(row.first_row)})"
        for name, row in missing_values(sensitive).iterrows()
    ]
    if X is not None and np.isnan(X).any():
        bad = np.isnan(X)
        columns = np.flatnonzero(bad.any(axis=0))
        rows = np.flatnonzero(bad.any(axis=1))
        at = "" if labelled is None else f", the first on {labelled(int(rows[0]))}"
        problems.append(
            f"X ({len(rows):,} rows{at}, in column(s) "
            f"{', '.join(map(str, columns[:5]))}{', ...' if len(columns) > 5 else ''})"
        )
    if problems:
        raise ValueError(
            f"missing values in {'; '.join(problems)}. Fill them, or drop the incomplete "
            "rows first: kept, dropped = fairkm.report.drop_missing(frame, columns)."
        )


def audit(
    labels,
    X=None,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    reference="kmeans",
    n_init=10,
    name=None,
    profile=None,
    title=None,
    facts=(),
    notes=(),
    check_data=True,
    random_state=0,
    max_deviation=None,
    deviation_kind="additive",
    sample_weight=None,
    min_balance=None,
):
    """Audit a clustering for fairness, against S-blind K-Means.

    Measures the clustering and a reference (by default scikit-learn's
    ``KMeans`` on the same features with as many clusters, the best of
    ``n_init`` k-means++ starts) with every measure of
    :data:`fairkm.metrics.MEASURES`, compares them attribute by attribute and
    measure by measure, and finds each attribute's least fair cluster.

    Parameters
    ----------
    labels : array-like of shape (n_samples,) or fitted estimator
        The clustering to audit: labels (any values), or a fitted estimator
        with ``labels_`` such as :class:`fairkm.FairKM` (then its name, the
        kinds of the sensitive attributes it was fitted with and its own
        S-blind starting point are used too).
    X : array-like or DataFrame of shape (n_samples, n_features), default=None
        The (encoded, numeric) features the clustering was made from. Needed
        for the quality measures and for ``reference="kmeans"``.
    sensitive_features : array-like, Series or DataFrame
        One column per sensitive attribute, as for :meth:`fairkm.FairKM.fit`.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric, as in
        :func:`fairkm.metrics.fairness_report`; ``"auto"`` takes a fitted
        FairKM's kinds, else float columns are numeric.
    reference : "kmeans", array-like of shape (n_samples,) or None, default="kmeans"
        What to compare with: ``"kmeans"`` fits ``KMeans(n_clusters, n_init=n_init)``
        on ``X`` (skipped without ``X``), labels name another clustering
        (``"reference"``), None compares with nothing.
    n_init : int, default=10
        Starts of the K-Means reference; the best (lowest K-Means objective)
        is kept, so the price of fairness is not measured against an
        unlucky start. The reference and the silhouettes run on one thread
        up to 50,000 rows, else on the count a fit would decide
        (``FAIRKM_NUM_THREADS`` sets it in both cases).
    name : str, default=None
        The audited clustering's name (default: the estimator's class name,
        or ``"clustering"``).
    profile : pandas.DataFrame, default=None
        Columns in their original units to describe each cluster by (mean of
        a numeric column, most frequent value of another).
    title : str, default=None
        The report's title.
    facts : sequence of (str, str), default=()
        Labelled facts to show at the top (data, parameters).
    notes : sequence of str, default=()
        Data notes found by the caller, shown with the audit's own.
    check_data : bool, default=True
        Check the columns and warn (:class:`DataWarning`) about a numeric
        sensitive attribute with at most two values, a categorical one of
        numbers with many values, and features named or valued like
        identifiers (when ``X`` is a DataFrame).
    random_state : int, default=0
        Seed of the K-Means reference and of the silhouette's sample.
    max_deviation : float, dict or None, default=None
        A guarantee to check of the clustering and of the reference: is every
        cluster's share of every value of every categorical attribute within
        this distance of the dataset's (a float for all attributes,
        ``{name: float}`` for some)? See :func:`fairkm.metrics.check_bounds`.
        None takes the bound of a fitted estimator that has one (such as
        ``FairKM(max_deviation=0.05)``, with the intersections it was fitted
        with), else checks nothing.
    deviation_kind : {"additive", "multiplicative"}, default="additive"
        How ``max_deviation`` reads: ``|share - p| <= delta``, or Bera et
        al.'s ``(1 - delta) p <= share <= p / (1 - delta)``. With the bound
        taken from an estimator, so is its kind.
    sample_weight : float or array-like of shape (n_samples,), default=None
        Row weights, as in :meth:`fairkm.FairKM.fit`: a row of weight w
        counts as w rows (survey or frequency weights). Every measure, the
        K-Means reference (fitted with them), the bounds, the sizes, shares,
        mixes and charts are weighted, and the report says so. Only their
        ratios matter: weights scaled alike give the same measures, verdicts
        and advice, while the totals (CO, a cluster's size) scale with them.
        The silhouette and DevO, which count rows, read the weights with the
        lightest row counting as one, so that integer weights whose smallest
        is 1 give exactly the audit of the rows repeated. Pass the weights a
        weighted fit used: audited without them, it is judged on rows it
        did not see as such (a :class:`fairkm.FairKM` or
        :class:`fairkm.BoundedKMeans` fitted with unequal weights and
        audited without any warns, :class:`DataWarning`). Rows of weight 0
        are left out of everything, as :mod:`fairkm.metrics` leaves them out:
        a label only they hold is no cluster (not counted in the reference's
        number of clusters, no size, no chart), and the audit is that of the
        other rows, the weights fact saying how many were left out.
    min_balance : float, dict or None, default=None
        A balance target to check of the clustering and of the reference:
        is every cluster's balance (its smallest count of a value over its
        largest) at least this, for every categorical attribute (a float)
        or the named ones (a dict)? Checked beside ``max_deviation`` when
        both are given. None (with ``max_deviation`` None) takes the target
        of a fitted estimator that has one (``BoundedKMeans(min_balance=0.4)``).

    Returns
    -------
    Audit
        The measures and worst clusters of the clustering and of the
        reference, the verdicts, and their text and HTML renderings. Each
        long step (the reference's fit, the measures, the silhouettes) is
        announced as it begins to progress listeners (the command line's
        bar), and printed when the audited estimator was fitted with
        ``verbose``.

    Raises
    ------
    ValueError
        On missing values (every column that has some, in one message), on
        rows that do not match, on an unknown numeric attribute, or on a bad
        ``max_deviation``, ``deviation_kind`` or ``sample_weight``.
    TypeError
        On ``sample_weight`` that is not numbers.

    See Also
    --------
    drop_missing : Drop incomplete rows and count them.
    fairkm.metrics.fairness_report : The measures alone.

    Examples
    --------
    >>> from fairkm import FairKM
    >>> from fairkm.datasets import make_sensitive_blobs
    >>> from fairkm.report import audit
    >>> X, S, _ = make_sensitive_blobs(600, n_values=(2, 3), random_state=0)
    >>> model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=S)
    >>> report = audit(model, X, sensitive_features=S)
    >>> report.reference
    'S-blind K-Means (best of 10)'
    >>> report.verdicts.loc[("mean", "AE"), "verdict"]
    'fairer'
    """
    check_kind(deviation_kind, "deviation_kind")
    values, default_name, model = _labels_of(labels)
    if values.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {values.shape}.")
    n_samples = values.shape[0]
    # pandas inputs pair with the labels' rows (a Series), else with X's (a DataFrame).
    index = row_index(labels) if row_index(labels) is not None else row_index(X)
    sensitive_features = paired(sensitive_features, index, name="sensitive_features",
                                of="labels" if row_index(labels) is not None else "X")
    # (weights beyond float64's range together are refused here too)
    weights, _ = read_weights(sample_weight, n_samples, index, length_of="labels")
    if weights is None and getattr(model, "_weighted_fit", False):
        warn(f"{type(model).__name__} was fitted with sample_weight (rows of unequal weight) "
             "but is audited without it: every size, share and measure below counts each row "
             "once, not as the fit weighed it. Pass the fit's weights as sample_weight.",
             DataWarning)
    sensitive, numeric = sensitive_frame(sensitive_features, numeric_sensitive, n_samples,
                                         model=model)
    features, feature_notes = _features(X, n_samples)
    _check_missing(sensitive, features,
                   index if index is not None else row_index(sensitive_features))
    given_weights = weights
    if weights is not None and not (weights > 0).all():
        # A row of weight 0 counts as no row (as in fairkm.metrics): a label only such rows
        # hold is no cluster, so neither the reference's cluster count nor any size, chart
        # or measure may see it. Dropped once here, every number below is the audit of the
        # kept rows.
        keep = weights > 0
        values, sensitive, features, profile, weights = (
            values[keep], sensitive[keep].reset_index(drop=True),
            None if features is None else features[keep],
            None if profile is None else profile[keep], weights[keep])
        if reference is not None and not isinstance(reference, str):
            reference = _rows_of(reference, n_samples, keep)
        n_samples = len(values)
        if (weights == 1.0).all():  # unit weights read as none, as read_weights does
            weights = None
    all_notes = list(notes)
    if check_data:
        own = [
            *sensitive_kind_notes(
                sensitive, numeric,
                how_numeric="pass it in numeric_sensitive",
                how_categorical="leave it out of numeric_sensitive, or pass it as integers "
                "or strings (numeric_sensitive='auto' takes float columns as numeric)",
            ),
            *feature_notes,
        ]
        for note in own:
            warn(note, DataWarning)
        all_notes += own
    main = str(name or default_name)
    clusterings = {main: values}
    max_deviation, deviation_kind, intersections, min_balance = _guarantee_of_model(
        model, max_deviation, deviation_kind, min_balance)
    # The sensitive features are read once: every measure and bound of every clustering
    # uses that reading (the bounds' own, with the model's intersections, when it has some).
    read = check_sensitive_features(sensitive, numeric=numeric)
    bounds, resolved = {}, None
    if max_deviation is not None or min_balance is not None:  # before the reference's fit
        if intersections:
            resolved = resolve_bounds(sensitive, None, max_deviation=max_deviation,
                                      deviation_kind=deviation_kind, numeric_sensitive=numeric,
                                      intersections=intersections, sample_weight=weights,
                                      min_balance=min_balance)
        else:
            resolved = bounds_from_features(read, weights, max_deviation=max_deviation,
                                            deviation_kind=deviation_kind,
                                            min_balance=min_balance)
        bounds[main] = check_labels(resolved, values)
    step = Steps("audit", getattr(model, "verbose", 0))
    # One thread count for the audit's scikit-learn work (the reference KMeans, the
    # silhouettes), decided from the rows, never from the load (decided_pool_threads).
    with decided_pool_threads(n_rows=n_samples):
        if isinstance(reference, str):
            if reference != "kmeans":
                raise ValueError(
                    f"reference must be 'kmeans', labels or None, got {reference!r}."
                )
            k = len(np.unique(values))
            if features is not None and 2 <= k < n_samples:
                step(f"fitting the S-blind K-Means reference ({k} clusters, {n_init} starts)")
                # Weights near 1, the lightest row one: the same fit whatever their unit.
                blind = KMeans(k, n_init=n_init, random_state=random_state).fit(
                    features, sample_weight=as_frequencies(weights))
                clusterings[blind_name(n_init)] = blind.labels_
        elif reference is not None:
            ref = np.asarray(reference)
            if ref.shape != (n_samples,):
                raise ValueError(
                    f"reference must have one label per row ({n_samples}), got shape {ref.shape}."
                )
            clusterings["reference"] = ref
        names = list(clusterings)
        ref_name = names[1] if len(names) > 1 else None
        if resolved is not None and ref_name is not None:
            bounds[ref_name] = check_labels(resolved, clusterings[ref_name])
        step("measuring fairness")
        fairness = fairness_table(clusterings, read, weights)
        quality = None
        if features is not None:
            step("measuring quality (CO, silhouettes, DevC, DevO)")
            quality = quality_table(features, clusterings, ref_name, random_state, weights)
            step("measuring equitable cost")
        costs, group_costs = cost_tables(features, clusterings, read, weights)
    step("describing the clusters")
    facts = list(facts)
    if given_weights is not None and not any(label == "weights" for label, _ in facts):
        facts.append(("weights", weights_fact(given_weights)))
    if ref_name is not None and ref_name.startswith("S-blind") and not any(
            label == "reference" for label, _ in facts):
        facts.append(("reference", f"{ref_name}: scikit-learn's KMeans on the same "
                      f"features with {len(np.unique(values))} clusters, the lowest K-Means "
                      f"objective of {n_init} k-means++ starts (random_state={random_state})"
                      + (", fitted with the same weights" if weights is not None else "")))
    return Audit(
        title=title or f"Fairness audit of {main}",
        facts=facts,
        labels=clusterings,
        sensitive=sensitive,
        numeric_sensitive=numeric,
        fairness=fairness,
        quality=quality,
        clusters={n: cluster_table(v, features, profile, weights)
                  for n, v in clusterings.items()},
        worst=worst_clusters(clusterings, read, weights),
        verdicts=None if ref_name is None else verdict_table(fairness, main, ref_name),
        notes=all_notes,
        own_blind_inertia=_blind_inertia(model),
        bounds=bounds,
        settings=_settings_of(model),
        met_bound=_met_bound(read, values, weights),
        sample_weight=weights,
        own_inertia=float(getattr(model, "inertia_", np.nan)),
        bound_repair=getattr(model, "bound_repair_", None),
        costs=costs,
        group_costs=group_costs,
    )


def _rows_of(reference, n_samples, keep):
    """Return the reference labels of the kept rows, refusing a wrong length by name."""
    ref = np.asarray(reference)
    if ref.shape != (n_samples,):
        raise ValueError(
            f"reference must have one label per row ({n_samples}), got shape {ref.shape}."
        )
    return ref[keep]


def _met_bound(read, labels, weights):
    """Return the largest distance of a cluster's share of a categorical value from the mix."""
    table = check_labels(bounds_from_features(read, weights, max_deviation=None), labels).table
    shares = table.loc[table["kind"] != "numeric", "deviation"]
    return float(shares.max()) if len(shares) else np.nan


def _blind_inertia(model):
    """Return the K-Means cost of the S-blind clustering the model was measured against (NaN)."""
    blind = getattr(model, "blind_clustering_", None)
    return np.nan if blind is None else float(blind.inertia)
