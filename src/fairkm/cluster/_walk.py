"""The walk from the S-blind clustering up a ladder of weights, and what it is measured against.

A fit that weighs fairness relative to the S-blind clustering (a relative
weight, a cost budget, an unfairness target: :mod:`fairkm.cluster._weighting`)
first reaches that clustering, measures it (:class:`Reference`), then climbs
a fixed ladder of relative weights from it (:class:`Walker`): ``1/8``, then
doublings up to 4096, each rung starting from the clustering of the last one
kept; below a refused first rung the step halves; three geometric bisections
narrow the last step. What "kept" means is the policy's rule.

On many rows (:func:`coarse_sample_size`) a relative weight's walk is coarse
to fine (:meth:`Walker.coarse`, :meth:`Walker.refine`): the ladder is
climbed on a seeded sample of :data:`SAMPLE_ROWS` rows, from the S-blind
clustering restricted to them, and all the rows are then minimised once at
the weight the sample kept, from the sample's clustering (each row in the
cluster where inserting it costs least). The ladder's ten or so phases then
cost a sample's sweeps, and the rows' own passes are those of one phase,
and more only where the rows' own cost reverses the sample's verdict at
the kept step, or may at the refused one above it: the rule holds by the
rows' own cost wherever they end (:meth:`Walker._verdict_on_the_rows`).

The session (:class:`Session`) is one run of an engine, in memory or on Dask;
the walker puts it at a weight with one verb (:meth:`Walker.go`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from fairkm.utils._call_site import warn
from fairkm.utils._sensitive import NUMERIC

__all__ = ["Point", "Reference", "Session", "Walk", "Walker", "coarse_sample_size",
           "unfairness_ratio"]

# The ladder of relative weights: from FIRST_RUNG up by doublings to at most LAST_RUNG;
# below the first rung, halvings down to SMALLEST_STEP.
FIRST_RUNG = 1.0 / 8.0
LAST_RUNG = 4096.0
SMALLEST_STEP = 1.0 / 1024.0
# Geometric bisections between the last rung kept and the first refused: the weight
# kept is within a factor 2^(1/8) of the first refused.
BISECTIONS = 3
# Growth of the weight of an attribute left less fair than the S-blind clustering, and
# how many times it is raised.
GROWTH = 4.0
REPAIRS = 3
# Squared deviation per cluster, as a fraction of full segregation, below which
# unfairness means little (see negligible_level).
NEGLIGIBLE = 0.01
# The coarse walk's sample: this many rows, drawn when the rows are at least COARSE_ABOVE
# samples and the sample holds SAMPLE_PER_CLUSTER rows a cluster on average (each
# cluster's mix then measured within about 1%).
SAMPLE_ROWS = 100_000
COARSE_ABOVE = 4
SAMPLE_PER_CLUSTER = 2_000
# The rows try the step the sample refused above the one it kept where its price, less the
# sample's error at the kept step, is within this fraction of the rule: there the rows' own
# cost may keep it. On 1,000,000 overlapping blobs at weight 8 (seed 1) the sample priced it
# at 8.0016 and the walk on every row kept it; 0.5% is four times the largest gap measured
# between the sample's and the rows' price at a kept step (0.18 points of cost at 1.4).
EDGE = 0.005
# An attribute counts as left less fair when its mean or worst cluster is further
# from the dataset's mix than in the S-blind clustering by more than this fraction.
WORSE = 0.01


class Session(Protocol):
    """One run of an engine from given labels, as the walk drives it.

    :class:`fairkm.cluster._engine.Session` (in memory) and
    :class:`fairkm.dask._session.DaskSession` implement it. Per-attribute
    vectors list the categorical attributes first. A coarse walk's sessions
    (in memory only) also give each row its cheapest cluster of another
    session's clustering (``cheapest_labels(other)``, a snapshot).
    """

    inertia: float
    objective: float
    #: Whether the session mixes two clusterings row by row (``blend_order(start, end)``:
    #: the rows on which two snapshots differ, the cheapest move first; ``blend(start,
    #: end, rows)``: the labels of ``start`` with ``rows`` moved to ``end``'s cluster, or
    #: None when a cluster would empty). On Dask the rows stay on the workers: it does not.
    can_blend: bool

    def set_weights(self, lam, cat_w, num_w):
        """Minimise ``inertia + lam * fairness`` with these attribute weights from now on."""

    def minimise(self, max_iter, tol):
        """Lower the objective until the stopping rule; return whether it was met."""

    def snapshot(self):
        """Return what :meth:`restore` needs to come back to the current labels."""

    def restore(self, snapshot):
        """Come back to the labels of a :meth:`snapshot`."""

    def attribute_fairness(self):
        """Each attribute's unweighted fairness term."""

    def cluster_deviation(self):
        """Each cluster's distance from the dataset's mix, per attribute, (A + B, k)."""

    def counts(self):
        """Each cluster's size (total weight)."""


def unfairness_ratio(weights, deviation, reference):
    """``sum_a u_a mean_C dev`` over the reference's, 0 when the reference is perfectly fair."""
    reference = float(np.dot(weights, np.nanmean(reference, axis=1)))
    if not reference > 0:
        return 0.0
    return float(np.dot(weights, np.nanmean(deviation, axis=1))) / reference


def attribute_scales(encoding):
    """Each attribute's fairness term in a fully segregated clustering, per unit weight.

    ``(1 - sum_v p_v^2) / m_a`` for a categorical attribute (every cluster
    holding a single value; 0 for a single-valued attribute), 1 for a
    standardised numeric one (column order).
    """
    out = np.empty(encoding.n_attributes)
    for j, kind in enumerate(encoding.kinds):
        if kind == NUMERIC:
            out[j] = 1.0
        else:
            p = encoding.proportions[j]
            out[j] = (1.0 - float(np.dot(p, p))) / np.count_nonzero(p)
    return out


def negligible_level(sizes, cluster_exponent, n_rows):
    """Return the fairness term (relative to a scale) below which unfairness means little.

    Per cluster of ``n_C`` of the ``n_rows`` rows, a squared deviation of
    :data:`NEGLIGIBLE` of full segregation, or the ``1 / n_C`` a random
    split already has when that is larger; each cluster weighted by
    ``(n_C / n)^e`` as in the fairness term. Counted in rows, so scaling the
    sample weights changes nothing.
    """
    share = sizes[sizes > 0] / sizes.sum()
    return float(np.sum(share**cluster_exponent
                        * np.maximum(NEGLIGIBLE, 1.0 / (share * n_rows))))


@dataclass(frozen=True)
class Reference:
    """The S-blind clustering a walk starts from, measured (per-attribute arrays in column order).

    Built by :meth:`measure` from a session at the S-blind clustering.
    """

    encoding: object
    requested: np.ndarray  # the user's attribute weights
    inertia: float
    fairness: np.ndarray  # each attribute's fairness term T0_a
    deviation: np.ndarray  # (n_attributes, k): each cluster's distance from the mix
    labels: object  # the session's snapshot
    scales: np.ndarray
    negligible: float

    @classmethod
    def measure(cls, session, encoding, requested, cluster_exponent, n_rows):
        """Measure the S-blind clustering ``session`` stands at."""
        return cls(
            encoding, requested, session.inertia,
            encoding.in_column_order(session.attribute_fairness()),
            encoding.in_column_order(session.cluster_deviation()), session.snapshot(),
            attribute_scales(encoding),
            negligible_level(session.counts(), cluster_exponent, n_rows),
        )

    def can_weigh(self, user):
        """Whether any attribute has a weight and more than one value (else no phase moves)."""
        return bool(np.any((self.scales > 0) & (user > 0)))

    def weights(self, alpha, user):
        """Return ``(lambda, attribute weights)`` of relative weight ``alpha`` (column order)."""
        can = self.scales > 0  # a single-valued attribute is always fair
        weights = np.zeros(len(user))
        weights[can] = user[can] / self.scales[can]
        blind = float(np.dot(weights, self.fairness))
        total = float(user[can].sum())
        if alpha == 0 or not weights.any():
            return 0.0, user.copy()
        lam = alpha * self.inertia / (2.0 * max(blind, self.negligible * total))
        # Reported with the user's total, lambda taking the scale.
        scale = total / weights.sum()
        return lam / scale, weights * scale


@dataclass(frozen=True)
class Point:
    """A clustering of the walk: the step (weight) it was minimised at, and its measures."""

    step: float
    labels: object  # the session's snapshot
    cost: float  # K-Means cost over the S-blind clustering's, minus 1
    unfairness: float

    @property
    def relative_weight(self):
        """The relative weight whose walk ends here: the step, priced at its own cost."""
        return float(self.step * (1.0 + self.cost))


@dataclass
class Walk:
    """A walk from the S-blind clustering: every trial with its verdict (kept or not).

    ``low`` is the last point kept (``blind`` when none was), ``high`` the
    first refused after it (None: none was).
    """

    blind: Point
    low: Point
    high: Point | None = None
    trials: list = field(default_factory=list)


def coarse_sample_size(n_rows, n_clusters):
    """Rows of a coarse walk's sample over ``n_rows`` in ``n_clusters`` (0: walk every row)."""
    if n_rows < COARSE_ABOVE * SAMPLE_ROWS or n_clusters * SAMPLE_PER_CLUSTER > SAMPLE_ROWS:
        return 0
    return SAMPLE_ROWS


class Walker:
    """A session walked from its S-blind clustering (where it stands when the walker is made).

    ``sample``, where the walk may be coarse to fine, returns a session over
    a seeded sample of rows (of positive weight) at their S-blind labels and
    the number of rows, or None where a cluster holds none of them;
    ``cluster_exponent`` is the sessions' ``e``.
    """

    def __init__(self, session, reference, *, max_iter, tol, converged, sample=None,
                 cluster_exponent=2):
        self.session, self.reference = session, reference
        self.user = reference.requested.copy()  # raised by repair()
        self.max_iter, self.tol, self.converged = max_iter, tol, converged
        self.step = 0.0  # the weight the session's labels were minimised at
        self._sample, self._cluster_exponent = sample, cluster_exponent
        self._coarse = None  # the sample's walker, made once

    @property
    def can_sample(self):
        """Whether a relative weight's walk from here may be coarse to fine."""
        return self._sample is not None

    def coarse(self):
        """Return a walker over a sample of the rows at its S-blind clustering, or None.

        None where the rows are walked themselves (too few rows, or a
        cluster missing from the sample). The sample's S-blind clustering is
        reached once from the rows' own, restricted to it; the walker takes
        this walker's attribute weights (raised by a repair) at every call.
        """
        if self._sample is None:
            return None
        if self._coarse is None:
            sampled = self._sample()
            if sampled is None:
                self._sample = None
                return None
            session, n_rows = sampled
            session.minimise(self.max_iter, self.tol)
            reference = Reference.measure(session, self.reference.encoding,
                                          self.reference.requested, self._cluster_exponent,
                                          n_rows)
            self._coarse = Walker(session, reference, max_iter=self.max_iter, tol=self.tol,
                                  converged=True)
        self._coarse.user[:] = self.user
        return self._coarse

    def at_reference(self, point):
        """Whether ``point`` holds the S-blind clustering's labels."""
        return bool(np.array_equal(point.labels, self.reference.labels))

    def refine(self, coarse, walk, keep):
        """Minimise every row at the ``coarse`` walk's last kept step, from the sample's clustering.

        The last rung is climbed on every row as the walk climbs it: the rows
        start in the cluster where inserting each into the sample's clustering
        at the kept point below costs least, take one pass at that step, then
        the phase at the kept step (one phase from the kept point itself when
        none was kept below it). From the kept point directly, the rows' clusters
        ended further from the mix on 1,000,000 overlapping blobs at weight 4
        (worst cluster +0.9-1.3%, three seeds; ``docs/fairness-weight.md``).
        """
        point = walk.low
        below = [trial for trial, kept in walk.trials if kept and trial.step < point.step]
        start = max(below, key=lambda trial: trial.step) if below else point
        coarse.settle(start)
        labels = self.session.cheapest_labels(coarse.session)
        if start is not point:
            self.go(start.step, labels=labels, passes=1)
            labels = None
        self.go(point.step, labels=labels)
        self._verdict_on_the_rows(walk, start, keep)

    def _verdict_on_the_rows(self, walk, start, keep):
        """Take the sample's last verdicts again on the rows, where their cost may reverse one.

        The sample estimates the rows' cost (within a few tenths of a point on
        1,000,000 overlapping blobs), and a verdict at the rule's edge follows
        the estimate: at weight 8 there the sample refused a step the walk on
        every row kept (``docs/scale.md``). The rows end where ``keep`` holds by
        their own cost. If it breaks at the kept step, they try the step halfway
        (geometrically) to the one kept below it, then that one, and walk the
        ladder themselves where it breaks at both (or none was kept below). If
        it holds, and the refused step above is within the sample's error at
        the kept step, and :data:`EDGE` more, of the rule, the rows try that
        step (one phase) and keep it where the rule holds there.
        """
        low = walk.low
        here = self.point(low.step)
        if not keep(here):
            lower = [] if start is low else [math.sqrt(start.step * low.step), start.step]
            for step in lower:
                self.go(step)
                if keep(self.point(step)):
                    return
            self.settle(self.walk(keep).low)
            return
        high = walk.high
        if high is None:
            return
        error = abs(here.cost - low.cost)
        if not keep(replace(high, cost=(1.0 + high.cost - error) / (1.0 + EDGE) - 1.0)):
            return
        self.go(high.step)
        if not keep(self.point(high.step)):
            self.settle(here)

    def deviation(self):
        """Each cluster's distance from the dataset's mix, (n_attributes, k), column order."""
        return self.reference.encoding.in_column_order(self.session.cluster_deviation())

    def can_weigh(self):
        """Whether any attribute can be weighed (else no phase moves)."""
        return self.reference.can_weigh(self.user)

    def weights(self, alpha):
        """Return ``(lambda, attribute weights)`` of relative weight ``alpha`` (column order)."""
        return self.reference.weights(alpha, self.user)

    def point(self, step):
        """Return the session's clustering as a point of the walk, minimised at ``step``."""
        inertia, blind = self.session.inertia, self.reference.inertia
        cost = inertia / blind - 1.0 if blind > 0 else (0.0 if inertia <= 0 else math.inf)
        unfairness = unfairness_ratio(self.reference.requested, self.deviation(),
                                      self.reference.deviation)
        return Point(step, self.session.snapshot(), cost, unfairness)

    def go(self, step, *, labels=None, minimise=True, passes=None):
        """Put the session at relative weight ``step``: from ``labels`` (a snapshot), minimised.

        Without ``labels`` it starts from where it stands; with ``minimise``
        False it only takes the weights (and the labels); with ``passes`` it
        makes at most that many passes, a step on the way rather than a phase
        (whether it met the stopping rule is not the fit's convergence).
        """
        if labels is not None:
            self.session.restore(labels)
        lam, weights = self.weights(step)
        self.session.set_weights(lam, *self.reference.encoding.split(weights))
        self.step = step
        if passes is not None:
            self.session.minimise(passes, self.tol)
        elif minimise:
            self.converged &= self.session.minimise(self.max_iter, self.tol)

    def walk(self, keep):
        """Climb the ladder from the S-blind clustering while ``keep(point)``; return the walk.

        Every trial starts from the last point kept. The session is left at
        the last trial's clustering.
        """
        self.go(0.0, labels=self.reference.labels, minimise=False)
        blind = self.point(0.0)
        walk = Walk(blind, blind)
        at_low = True

        def trial(step):
            nonlocal at_low
            self.go(step, labels=None if at_low else walk.low.labels)
            point = self.point(step)
            kept = bool(keep(point))
            walk.trials.append((point, kept))
            if kept:
                walk.low = point
            else:
                walk.high = point
            at_low = kept
            return kept

        step = FIRST_RUNG
        while step <= LAST_RUNG and trial(step):
            step *= 2.0  # exact: a weight of 1, 2, 4... given by the user is a rung
        if walk.high is None:
            return walk
        while walk.low.step == 0 and walk.high.step / 2 >= SMALLEST_STEP:
            trial(walk.high.step / 2)
        if walk.low.step > 0:
            for _ in range(BISECTIONS):
                trial(math.sqrt(walk.low.step * walk.high.step))
        return walk

    def settle(self, point):
        """Come back to ``point``'s clustering, with the weights it was minimised at."""
        self.go(point.step, labels=point.labels, minimise=False)

    def worse(self):
        """Attributes whose mean or worst cluster is further from the mix than S-blind's."""
        now, blind = self.deviation(), self.reference.deviation
        limit = 1.0 + WORSE
        return (self.user > 0) & (
            (np.nanmean(now, axis=1) > limit * np.nanmean(blind, axis=1))
            | (np.nanmax(now, axis=1) > limit * np.nanmax(blind, axis=1))
        )

    def warn_worse(self, worse, how):
        """Name the attributes left less fair than in the S-blind clustering."""
        names = [self.reference.encoding.names[j] for j in np.flatnonzero(worse)]
        warn(
            f"sensitive attribute(s) {names} ended with their mean or worst cluster further "
            f"from the dataset's mix than in the S-blind clustering the fit started from, {how}"
            ": the other attributes' gains outweigh theirs. Give them a larger "
            "attribute_weights, or fit them separately."
        )
