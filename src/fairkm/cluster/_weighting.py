"""How much fairness counts: an absolute weight, or one measured against the S-blind clustering.

The paper's ``lambda`` multiplies a fairness term that does not grow with the
number of rows, while the K-Means term grows with the rows and with the
spread of ``X``: one ``lambda`` means different things on different data.
The scale-free rule measures both terms against the S-blind clustering that
the fit reaches first (weight 0, from the same start), and continues from it
minimising

    inertia / I0 + (alpha / 2) U / U0,       U = sum_a u_a T_a / R_a,

``I0`` being the S-blind clustering's K-Means term, ``T_a`` attribute ``a``'s
fairness term (its squared deviations per cluster, each cluster weighted by
``(|C|/n)^e``), ``R_a`` the attribute's scale (what a fully segregated
clustering would score per unit of cluster weight: ``(1 - sum_v p_v^2) / m_a``
for a categorical attribute, 1 for a standardised numeric one), ``u_a`` the
user's attribute weights and ``U0`` the value of ``U`` in the S-blind
clustering. ``U`` sums squared deviations, so when every cluster's distance
from the dataset's mix shrinks by 1%, ``U`` shrinks by 2%: in a phase at
``alpha``, 1% less unfairness, as a user reads it, is worth ``alpha`` % more
K-Means cost, whatever the units of ``X`` or the number of rows. Every attribute is
measured in the same units (a fraction of its full segregation), so the
attributes the S-blind clustering left unfair weigh most in ``U0`` and get the
effort, while one it left nearly fair is not chased down to noise.

``U0`` is floored at the level below which unfairness means little: per
cluster, 1% of full segregation (a total-variation distance of about 0.05 for
a balanced two-valued attribute) or, in a cluster of fewer than 100 rows, the
deviation a random split of the rows already has (``1 / |C|``). Data whose
S-blind clusters are already about as fair as that (attributes independent of
the features, say) then buy fairness at that rate instead of paying to halve
noise.

In the paper's terms this is ``lambda = alpha * I0 / (2 U0)`` with attribute
weights ``w_a = u_a / R_a``, which is what the fitted model reports.

What a user reads is per cluster: each cluster's distance from the dataset's
mix (total variation, or the gap of a numeric attribute's standardised mean).
After the fair phase, an attribute whose mean or worst cluster is further
from the dataset's mix than in the S-blind clustering gets its weight raised
and the phase runs again from the S-blind clustering; a warning names any
that stays so. The unfairness a
fit reports (``unfairness_ratio_``) is the clusters' mean distance summed
over the attributes (weighted by ``u_a``), as a fraction of the S-blind
clustering's.

The fair phase does not jump to its weight: it climbs a fixed ladder of
weights from the S-blind clustering (``1/8``, then doublings), each
rung starting from the clustering of the last one kept, so that every fit, at
a weight or within a budget, is a point of one warm-started path. The price of
fairness falls as the cost mounts: a rung ``a`` whose clustering costs ``c``
more than the S-blind one is kept while ``a (1 + c) <= alpha``, the first-order
condition of ``(inertia / I0)^2 + alpha U / U0``. Where the frontier turns
steep (each further gain bought by moving rows across a gap), a doubling of
``alpha`` then buys a bounded share of it instead of all of it at once.
Between the last rung kept and the first refused, three geometric bisections.

A budget walks the same ladder with another rule: ``max_cost`` keeps rungs
whose clustering costs at most ``1 + max_cost`` times ``I0`` (the fairest
kept), ``max_unfairness`` stops at the first whose unfairness ratio reaches the
target (the cheapest found). Because both walk one path, a budget's answer is
the fit at the relative weight ``a (1 + c)`` of its rung whenever that weight
makes the same decisions on the trials the budget made (checked, and
reported in ``refit_params_``). Where a cost budget's last rung spends less
than half of it and the next costs more (a staircase: nothing moves until a
cascade of moves), the rows on which the two clusterings differ are moved in
turn, cheapest first, as far as the budget allows: a mixture of the
neighbouring clusterings, fairer than the last rung (a refit needs the same
budget). A budget that still buys nothing, or spends less than half of
itself, warns and says what the next clustering would cost.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from fairkm.utils._options import CLUSTER_EXPONENTS, EQUAL_WEIGHTING, PAPER_WEIGHTING
from fairkm.utils._sensitive import NUMERIC

__all__ = [
    "Plan",
    "Weighting",
    "cluster_exponent_of",
    "fit_weighted",
]


# The fair phase's ladder of relative weights: from _FIRST_RUNG up by doublings to at most
# _LAST_RUNG; below the first rung, halvings down to _SMALLEST_STEP.
_FIRST_RUNG = 1.0 / 8.0
_LAST_RUNG = 4096.0
_SMALLEST_STEP = 1.0 / 1024.0
# Geometric bisections between the last rung kept and the first refused: the weight
# kept is within a factor 2^(1/8) of the first refused.
_BISECTIONS = 3
# A cost budget whose clustering spends less than this share of it, while a costlier
# clustering was found, mixes the two (and warns if it still spends less).
_SPENT = 0.5
# Prefix lengths tried when mixing two neighbouring clusterings (a bisection).
_MIX_TRIALS = 12
# Growth of the weight of an attribute left less fair than the S-blind clustering.
_GROWTH = 4.0
# Rounds that raise the weight of an attribute left less fair than the S-blind clustering.
_REPAIRS = 3
# Squared deviation per cluster, as a fraction of full segregation, below which
# unfairness means little (see negligible_level).
_NEGLIGIBLE = 0.01
# An attribute counts as left less fair when its mean or worst cluster is further
# from the dataset's mix than in the S-blind clustering by more than this fraction.
_WORSE = 0.01


@dataclass(frozen=True)
class Plan:
    """What the user asked for.

    ``kind`` is ``"absolute"`` (``value``: lambda), ``"relative"`` (alpha),
    ``"max_cost"`` (the budget, a fraction) or ``"max_unfairness"`` (the
    target, a fraction of the S-blind unfairness).
    """

    kind: str
    value: float


def cluster_exponent_of(cluster_weighting, plan):
    """Return the ``e`` of each cluster's weight ``(|C|/n)^e`` that ``cluster_weighting`` asks for.

    ``"auto"`` keeps the paper's weighting beside an absolute weight (the
    paper's objective) and weighs every cluster alike with the scale-free
    weight and the budgets, where each cluster's mix counts as a report shows it.
    """
    if cluster_weighting == "auto":
        cluster_weighting = PAPER_WEIGHTING if plan.kind == "absolute" else EQUAL_WEIGHTING
    return CLUSTER_EXPONENTS[cluster_weighting]


@dataclass(frozen=True)
class Weighting:
    """The weights a fit ended with, and the S-blind clustering they were measured against.

    Per-attribute arrays are in column order. Without an S-blind reference
    (an absolute weight) the reference quantities are NaN.
    """

    fairness_weight: float
    attribute_weights: np.ndarray
    relative_weight: float = math.nan
    blind_inertia: float = math.nan
    blind_fairness: np.ndarray | None = None  # T0_a
    blind_deviation: np.ndarray | None = None  # (n_attributes, k), per cluster
    user_weights: np.ndarray | None = None
    # The parameters to change for a fresh fit to give the same clustering ({}: none).
    refit_params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.blind_fairness is None:
            nan = np.full(len(self.attribute_weights), np.nan)
            object.__setattr__(self, "blind_fairness", nan)
            object.__setattr__(self, "blind_deviation", nan[:, None])
            object.__setattr__(self, "user_weights", self.attribute_weights)

    def in_weight_unit(self, unit):
        """Return the weighting for sample weights ``unit`` times larger (sums scale)."""
        return replace(self, fairness_weight=self.fairness_weight * unit,
                       blind_inertia=self.blind_inertia * unit)

    def unfairness(self, deviation):
        """Unfairness of per-cluster deviations relative to the S-blind clustering's.

        The clusters' mean deviation summed over the attributes (weighted by
        the user's attribute weights): 1 at the S-blind clustering, 0 when
        every cluster has the dataset's mix; NaN for an absolute weight.
        """
        if not np.isfinite(self.blind_inertia):
            return math.nan
        return _unfairness(self.user_weights, deviation, self.blind_deviation)


def _unfairness(weights, deviation, reference):
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
    :data:`_NEGLIGIBLE` of full segregation, or the ``1 / n_C`` a random
    split already has when that is larger; each cluster weighted by
    ``(n_C / n)^e`` as in the fairness term. Counted in rows, so scaling the
    sample weights changes nothing.
    """
    share = sizes[sizes > 0] / sizes.sum()
    return float(np.sum(share**cluster_exponent
                        * np.maximum(_NEGLIGIBLE, 1.0 / (share * n_rows))))


def fit_weighted(starts, plan, encoding, user_weights, *, cluster_exponent, n_rows, max_iter,
                 tol):
    """Run the engine's sessions as ``plan`` asks; return the kept session and its weights.

    Parameters
    ----------
    starts : iterable of callable
        Each ``start(lam)`` returns a new session (one initialisation) whose
        objective is ``inertia + lam * fairness`` with ``user_weights``; the
        session has the interface of :class:`fairkm.cluster._engine.Session`
        (``minimise``, ``set_weights``, ``inertia``, ``objective``,
        ``attribute_fairness``, ``cluster_deviation``, ``counts``,
        ``snapshot``, ``restore``; optionally ``blend_order`` and ``blend``,
        with which a cost budget mixes two neighbouring clusterings), its
        per-attribute vectors listing the categorical attributes first.
    plan : Plan
    encoding : SensitiveEncoding
    user_weights : ndarray of shape (n_attributes,)
    cluster_exponent : int
        The ``e`` of the sessions' fairness term.
    n_rows : int
        Number of rows with a positive weight (the negligible level counts rows).
    max_iter, tol : the stopping rule of each phase.

    Returns
    -------
    session, weighting, converged
        The kept session (at its final labels), the weights it was fitted
        with, and whether every phase met the stopping rule.
    """
    user_weights = np.asarray(user_weights, dtype=np.float64)
    if plan.kind == "absolute":
        best = converged = None
        for start in starts:
            session = start(plan.value)
            ok = session.minimise(max_iter, tol)
            if best is None or session.objective < best.objective:
                best, converged = session, ok
        return best, Weighting(plan.value, user_weights), converged
    best = converged = None
    for start in starts:
        session = start(0.0)
        ok = session.minimise(max_iter, tol)
        if best is None or session.inertia < best.inertia:
            best, converged = session, ok
    driver = _Driver(best, encoding, user_weights, cluster_exponent, n_rows, max_iter, tol,
                     converged)
    refit = {}
    if plan.kind == "relative":
        alpha = plan.value
        # Weight 0 asks for the S-blind clustering, which the fit holds already; so does a
        # fit without an attribute to weigh.
        if alpha > 0 and driver.can_weigh():
            driver.reach(alpha)
            driver.repair(alpha)
        step = driver.step
    else:
        point, refit = driver.budget(plan)
        alpha, step = point.relative_weight, point.step
        # A budget fixes the price, so no repair: but an attribute left less fair is named.
        worse = driver.worse()
        if worse.any():
            driver.warn_worse(worse, f"at the weight the budget chose (relative_weight="
                                     f"{alpha:g})", stacklevel=5)
    lam, weights = driver.weights(step)
    weighting = Weighting(lam, weights, alpha, driver.blind_inertia, driver.blind_fairness,
                          driver.blind_deviation, driver.requested, refit)
    return best, weighting, driver.converged


@dataclass(frozen=True)
class _Point:
    """A clustering of the walk: its step (the weight it was minimised at) and measures."""

    step: float
    labels: object  # the session's snapshot
    cost: float  # K-Means cost over the S-blind clustering's, minus 1
    unfairness: float

    @property
    def relative_weight(self):
        """The relative weight whose walk ends here: the step, priced at its own cost."""
        return float(self.step * (1.0 + self.cost))


@dataclass
class _Walk:
    """A walk from the S-blind clustering: every trial with its verdict (kept or not).

    ``low`` is the last point kept (``blind`` when none was), ``high`` the
    first refused after it (None: none was).
    """

    blind: _Point
    low: _Point
    high: _Point | None = None
    trials: list = field(default_factory=list)


class _Driver:
    """Phases of one session measured against its S-blind clustering (where it stands now)."""

    def __init__(self, session, encoding, user, cluster_exponent, n_rows, max_iter, tol,
                 converged):
        self.session, self.encoding = session, encoding
        self.requested, self.user = user, user.copy()
        self.max_iter, self.tol, self.converged = max_iter, tol, converged
        self.blind_inertia = session.inertia
        self.blind_fairness = self.columns(session.attribute_fairness())
        self.blind_deviation = self.deviation()
        self.blind_labels = session.snapshot()
        self.scales = attribute_scales(encoding)
        self.negligible = negligible_level(session.counts(), cluster_exponent, n_rows)
        self.step = 0.0  # the weight the session's labels were minimised at

    def columns(self, values):
        """Reorder a session's per-attribute array (categorical first) into column order."""
        return self.encoding.in_column_order(values)

    def deviation(self):
        """Each cluster's distance from the dataset's mix, (n_attributes, k), column order."""
        return self.columns(self.session.cluster_deviation())

    def weights(self, alpha):
        """Return ``(lambda, attribute weights)`` for ``alpha`` (column order)."""
        can = self.scales > 0  # a single-valued attribute is always fair
        weights = np.zeros(len(self.user))
        weights[can] = self.user[can] / self.scales[can]
        blind = float(np.dot(weights, self.blind_fairness))
        total = float(self.user[can].sum())
        if alpha == 0 or not weights.any():
            return 0.0, self.user.copy()
        lam = alpha * self.blind_inertia / (2.0 * max(blind, self.negligible * total))
        # Reported with the user's total, lambda taking the scale.
        scale = total / weights.sum()
        return lam / scale, weights * scale

    def unfairness(self):
        """Return the session's unfairness ratio (1 at the S-blind clustering, 0 when fair)."""
        return _unfairness(self.requested, self.deviation(), self.blind_deviation)

    def can_weigh(self):
        """Whether any attribute has a weight and more than one value (else no phase moves)."""
        return bool(np.any((self.scales > 0) & (self.user > 0)))

    def point(self, step):
        """Return the session's clustering as a point of the walk, minimised at ``step``."""
        inertia, blind = self.session.inertia, self.blind_inertia
        cost = inertia / blind - 1.0 if blind > 0 else (0.0 if inertia <= 0 else math.inf)
        return _Point(step, self.session.snapshot(), cost, self.unfairness())

    def set(self, alpha):
        lam, weights = self.weights(alpha)
        self.session.set_weights(lam, *self.encoding.split(weights))
        self.step = alpha

    def settle(self, point):
        """Come back to ``point``'s clustering, with the weights it was minimised at."""
        self.session.restore(point.labels)
        self.set(point.step)

    def apply(self, alpha):
        """Minimise with ``alpha``'s weights from the session's current labels."""
        self.set(alpha)
        self.converged &= self.session.minimise(self.max_iter, self.tol)

    def walk(self, keep):
        """Climb the ladder of weights from the S-blind clustering while ``keep(point)``.

        Every trial starts from the last point kept. Below a refused first
        rung the step halves until one is kept (down to _SMALLEST_STEP);
        _BISECTIONS geometric bisections then narrow the last step. A weight
        above the last rung (4096) acts as it. The session is left at the
        last trial's clustering.
        """
        session = self.session
        session.restore(self.blind_labels)
        self.set(0.0)
        blind = self.point(0.0)
        walk = _Walk(blind, blind)
        at_low = True

        def trial(step):
            nonlocal at_low
            if not at_low:
                session.restore(walk.low.labels)
            self.apply(step)
            point = self.point(step)
            kept = bool(keep(point))
            walk.trials.append((point, kept))
            if kept:
                walk.low = point
            else:
                walk.high = point
            at_low = kept
            return kept

        step = _FIRST_RUNG
        while step <= _LAST_RUNG and trial(step):
            step *= 2.0  # exact: a weight of 1, 2, 4... given by the user is a rung
        if walk.high is None:
            return walk
        while walk.low.step == 0 and walk.high.step / 2 >= _SMALLEST_STEP:
            trial(walk.high.step / 2)
        if walk.low.step > 0:
            for _ in range(_BISECTIONS):
                trial(math.sqrt(walk.low.step * walk.high.step))
        return walk

    def reach(self, alpha):
        """Walk to the relative weight ``alpha`` and settle at the last phase it keeps."""
        self.settle(self.walk(lambda point: point.relative_weight <= alpha).low)

    def worse(self):
        """Attributes whose mean or worst cluster is further from the mix than S-blind's."""
        now, blind = self.deviation(), self.blind_deviation
        limit = 1.0 + _WORSE
        return (self.user > 0) & (
            (np.nanmean(now, axis=1) > limit * np.nanmean(blind, axis=1))
            | (np.nanmax(now, axis=1) > limit * np.nanmax(blind, axis=1))
        )

    def repair(self, alpha):
        """Raise the weight of attributes left less fair than S-blind; warn if in vain."""
        for round_ in range(_REPAIRS + 1):
            worse = self.worse()
            if not worse.any():
                return
            if round_ == _REPAIRS:
                break
            # Again from the S-blind clustering, as if the user had asked for these weights:
            # from where the last phase stopped, moves that hurt the attribute stay made.
            self.user[worse] *= _GROWTH
            self.reach(alpha)
        self.warn_worse(worse, f"even with their weight raised {_GROWTH**_REPAIRS:g}-fold",
                        stacklevel=6)

    def warn_worse(self, worse, how, stacklevel):
        """Name the attributes left less fair than in the S-blind clustering."""
        names = [self.encoding.names[j] for j in np.flatnonzero(worse)]
        warnings.warn(
            f"sensitive attribute(s) {names} ended with their mean or worst cluster further "
            f"from the dataset's mix than in the S-blind clustering the fit started from, {how}"
            ": the other attributes' gains outweigh theirs. Give them a larger "
            "attribute_weights, or fit them separately.",
            UserWarning,
            stacklevel=stacklevel,
        )

    def budget(self, plan):
        """Walk the ladder as a budget asks; return its point and ``refit_params``.

        ``max_cost`` keeps the fairest point within the cost (mixing the last
        rung with the next where it spends under half the budget);
        ``max_unfairness`` the cheapest reaching the target. The session is
        left at the point's clustering, with its weights.
        """
        budget = plan.value
        blind = self.point(0.0)
        if not self.can_weigh() or (plan.kind == "max_unfairness"
                                    and blind.unfairness <= budget):
            # Nothing to weigh, or the S-blind clustering meets the target already.
            return blind, self.refit_params(plan, _Walk(blind, blind), blind)
        if plan.kind == "max_cost":
            walk = self.walk(lambda point: point.cost <= budget)
            # The fairest within the budget, the cheaper of two as fair (the S-blind
            # clustering first): the squared deviations the walk lowers can fall while the
            # clusters' mean distance from the mix does not.
            kept = [walk.blind] + [trial for trial, ok in walk.trials if ok]
            point = min(kept, key=lambda p: (p.unfairness, p.cost))
            if walk.low.cost < _SPENT * budget and walk.high is not None:
                mixed = self.mix(walk.low, walk.high, budget)
                if mixed.unfairness < point.unfairness:
                    point = mixed
            self.settle(point)
            self.warn_if_unspent(plan, point, walk.high)
        else:
            walk = self.walk(lambda point: point.unfairness > budget)
            if walk.trials and walk.high is None:
                point = walk.low
                warnings.warn(
                    f"max_unfairness={budget:g} was not reached: the fairest clustering found "
                    f"(relative_weight={point.relative_weight:g}) keeps "
                    f"{point.unfairness:.3g} of the S-blind clustering's unfairness.",
                    UserWarning,
                    stacklevel=5,
                )
            else:
                point = walk.high
            self.settle(point)
        return point, self.refit_params(plan, walk, point)

    def mix(self, low, high, budget):
        """Move the rows where two neighbouring clusterings differ, cheapest first, within budget.

        Returns the fairest mixture found that costs at most ``budget``,
        or ``low`` (also where the session cannot order the rows).
        """
        session = self.session
        if not hasattr(session, "blend_order"):  # fairkm.dask: labels spread over workers
            return low
        rows = session.blend_order(low.labels, high.labels)
        best, kept, refused = low, 0, len(rows)
        for _ in range(_MIX_TRIALS):
            if refused - kept <= 1:
                break
            middle = (kept + refused) // 2
            labels = session.blend(low.labels, high.labels, rows[:middle])
            if labels is None:  # a cluster emptied
                refused = middle
                continue
            session.restore(labels)
            point = self.point(high.step)
            if point.cost <= budget:
                kept = middle
                if point.unfairness < best.unfairness:
                    best = point
            else:
                refused = middle
        return best

    def warn_if_unspent(self, plan, point, costlier):
        """Warn when a cost budget bought no fairness, or spent under half of itself."""
        budget = plan.value
        if point.unfairness < 1.0 and point.cost >= _SPENT * budget:
            return
        bought = ("bought no fairness (the S-blind clustering is kept)"
                  if point.unfairness >= 1.0 else
                  f"spent {point.cost:+.1%} of it, for {point.unfairness:.3g} of the S-blind "
                  "clustering's unfairness")
        nxt = ("the largest weight tried bought no more: this is as fair as the fit gets"
               if costlier is None else
               f"the next clustering found costs {costlier.cost:+.1%} (unfairness "
               f"{costlier.unfairness:.3g}), over the budget, and nothing was found in "
               "between: a larger max_cost buys more")
        warnings.warn(f"max_cost={budget:g} {bought}: {nxt}.", UserWarning, stacklevel=6)

    def refit_params(self, plan, walk, point):
        """Return the parameters to change for a fresh fit to give the budget's clustering.

        A fit at ``relative_weight = point.relative_weight`` walks the same
        path when its rule (keep a point while its relative weight is at
        most that) agrees with the budget's verdict on every trial, and it
        then ends at ``point`` unless it repairs an attribute left less fair.
        Otherwise the budget itself is needed ({}).
        """
        if point is walk.blind:  # relative_weight=0 is the S-blind clustering
            return {plan.kind: None, "relative_weight": 0.0}
        alpha = point.relative_weight
        retraced = (
            any(point is trial for trial, _ in walk.trials)
            and all((trial.relative_weight <= alpha) == kept for trial, kept in walk.trials)
            and not self.worse().any()
        )
        if not retraced:
            return {}
        return {plan.kind: None, "relative_weight": alpha}
