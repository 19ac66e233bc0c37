"""How much fairness counts: each way of saying it is a policy object that runs the fit.

:class:`AbsoluteWeight` (and :class:`PaperWeight`) is the paper's ``lambda``:
it multiplies a fairness term that does not grow with the rows, beside a
K-Means term that grows with the rows and the spread of ``X``, so one
``lambda`` means different things on different data. The other policies
measure both terms against the S-blind clustering the fit reaches first
(weight 0) and continue from it minimising

    inertia / I0 + (alpha / 2) U / U0,       U = sum_a u_a T_a / R_a,

``I0`` being the S-blind clustering's K-Means term, ``T_a`` attribute ``a``'s
fairness term, ``R_a`` its value under full segregation per unit of cluster
weight (``(1 - sum_v p_v^2) / m_a``, 1 for a standardised numeric attribute),
``u_a`` the user's attribute weights and ``U0`` the S-blind clustering's
``U``, floored where unfairness means little. ``U`` sums squared deviations,
so at ``alpha`` 1% less unfairness, as a user reads it, is worth ``alpha`` %
more K-Means cost, whatever the units of ``X``; in the paper's terms ``lambda
= alpha I0 / (2 U0)`` with ``w_a = u_a / R_a``, which the fitted model
reports. :class:`RelativeWeight`, :class:`CostBudget` and
:class:`UnfairnessTarget` walk one ladder of weights from the S-blind
clustering (:mod:`fairkm.cluster._walk`), each by its own rule;
``docs/fairness-weight.md`` has the whole rule and what it costs on real data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from fairkm.utils._call_site import warn
from fairkm.utils._options import CLUSTER_EXPONENTS, EQUAL_WEIGHTING, PAPER_WEIGHTING

from ._walk import GROWTH, REPAIRS, Reference, Walk, Walker, unfairness_ratio

__all__ = [
    "AbsoluteWeight",
    "CostBudget",
    "FairnessPolicy",
    "Fit",
    "PaperWeight",
    "Problem",
    "RelativeWeight",
    "UnfairnessTarget",
    "Weighting",
]

# A cost budget whose clustering spends less than this share of it, while a costlier
# clustering was found, mixes the two (and warns if it still spends less).
_SPENT = 0.5
# Prefix lengths tried when mixing two neighbouring clusterings (a bisection).
_MIX_TRIALS = 12
# The largest relative weight a coarse walk serves (the default): above it every row walks the
# ladder. On a third seed of two 1,000,000-row sets the sample's path through the rungs ended in
# another basin at most weights from 2 on (the rule for a faster walk broken; at 8 to 16 a
# clustering dearer and less fair than the walk on every row's, docs/scale.md).
COARSE_UP_TO = 1.0


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

    @classmethod
    def measured(cls, walker, relative_weight, refit_params=None):
        """Return the weights of the walker's step, with its S-blind reference."""
        lam, weights = walker.weights(walker.step)
        ref = walker.reference
        return cls(lam, weights, relative_weight, ref.inertia, ref.fairness, ref.deviation,
                   ref.requested, {} if refit_params is None else refit_params)

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
        return unfairness_ratio(self.user_weights, deviation, self.blind_deviation)


@dataclass(frozen=True)
class Fit:
    """What a policy's fit ends with: the kept session, its weights, and convergence."""

    session: object
    weighting: Weighting
    converged: bool


@dataclass(frozen=True)
class Problem:
    """What every policy's fit reads beside the sessions.

    ``user_weights`` are the attribute weights asked for (column order),
    ``cluster_exponent`` the sessions' ``e``, ``n_rows`` the rows of positive
    weight (the negligible level counts rows), ``max_iter`` and ``tol`` each
    phase's stopping rule; ``sample(session)``, where a walk may be coarse to
    fine, returns a session over a sample of the rows and its number of rows
    (:class:`fairkm.cluster._walk.Walker`).
    """

    encoding: object
    user_weights: np.ndarray
    cluster_exponent: int
    n_rows: int
    max_iter: int
    tol: float
    # Where a walk may be coarse to fine: see fairkm.cluster._walk.Walker.
    sample: Callable | None = None


class FairnessPolicy:
    """How much fairness counts in a fit; :meth:`fit` runs the engine's sessions as it asks.

    ``starts`` is an iterable of callables, each ``start(lam)`` returning a new
    :class:`fairkm.cluster._walk.Session` (one initialisation) whose objective
    is ``inertia + lam * fairness`` with the problem's attribute weights.
    """

    #: Whether the fit is measured against the S-blind clustering (a walk from it).
    walks = True
    #: With ``cluster_weighting="auto"``: each cluster alike, as a report reads it.
    cluster_weighting = EQUAL_WEIGHTING
    #: The largest K-Means cost the policy allows, over the S-blind clustering's (None: any).
    cost_limit = None

    @property
    def samples(self):
        """Whether a fit on many rows may work on a sample of them first (the coarse walk)."""
        return self.walks

    def cluster_exponent(self, cluster_weighting):
        """Return the ``e`` of each cluster's weight ``(|C|/n)^e`` for ``cluster_weighting``."""
        if cluster_weighting == "auto":
            cluster_weighting = self.cluster_weighting
        return CLUSTER_EXPONENTS[cluster_weighting]

    def in_weight_unit(self, unit, total):
        """Return the policy for a run on sample weights divided by ``unit`` (summing to ``total``).

        A weight relative to the S-blind clustering reads only the weights' ratios.
        """
        return self

    def fit(self, starts, problem):
        """Reach the S-blind clustering from every start, keep the cheapest, then walk from it."""
        best = converged = None
        for start in starts:
            session = start(0.0)
            _start_on_a_sample(session, problem)
            ok = session.minimise(problem.max_iter, problem.tol)
            if best is None or session.inertia < best.inertia:
                best, converged = session, ok
        reference = Reference.measure(best, problem.encoding, problem.user_weights,
                                      problem.cluster_exponent, problem.n_rows)
        sample = None if problem.sample is None else partial(problem.sample, best)
        walker = Walker(best, reference, max_iter=problem.max_iter, tol=problem.tol,
                        converged=converged, sample=sample,
                        cluster_exponent=problem.cluster_exponent)
        weighting = self.walk(walker)
        return Fit(best, weighting, walker.converged)

    def walk(self, walker):
        """Walk from the S-blind clustering as the policy asks; return the :class:`Weighting`."""
        raise NotImplementedError


def _start_on_a_sample(session, problem):
    """Where the rows are many, start the S-blind phase from a sample's S-blind clustering.

    The sample (the coarse walk's rows) is minimised from the start's labels
    restricted to it, and every row then starts in the cluster nearest it of
    the sample's (its cheapest insertion without a fairness term): its
    initialisation, after which the phase takes the rows' own sweeps.
    """
    sampled = None if problem.sample is None else problem.sample(session)
    if sampled is None:
        return
    sample, _ = sampled
    sample.minimise(problem.max_iter, problem.tol)
    session.initialise(session.cheapest_labels(sample))


@dataclass(frozen=True)
class AbsoluteWeight(FairnessPolicy):
    """The paper's ``lambda``: the objective is ``inertia + lambda * fairness`` from every start."""

    weight: float
    walks = False
    cluster_weighting = PAPER_WEIGHTING

    def in_weight_unit(self, unit, total):
        """Divide lambda by ``unit``: the K-Means term is in the weights' unit."""
        return self._checked(self.weight / unit, self.weight, total * unit)

    @staticmethod
    def _checked(weight, asked, total):
        if not np.isfinite(weight):
            raise ValueError(
                f"fairness_weight={asked!r} overflows float64 with this sample_weight (total "
                f"{total:.3g}); give an absolute fairness_weight or rescale the weights."
            )
        return AbsoluteWeight(weight)

    def fit(self, starts, problem):
        """Minimise from every start; keep the lowest objective."""
        best = converged = None
        for start in starts:
            session = start(self.weight)
            ok = session.minimise(problem.max_iter, problem.tol)
            if best is None or session.objective < best.objective:
                best, converged = session, ok
        return Fit(best, Weighting(self.weight, problem.user_weights), converged)


@dataclass(frozen=True)
class PaperWeight(AbsoluteWeight):
    """The paper's heuristic ``lambda = (n / k)^2`` (section 5.4), ``n`` the rows' total weight."""

    n_clusters: int = 1

    @classmethod
    def of(cls, n_samples, n_clusters):
        """Return the weight of ``n_samples`` unit rows in ``n_clusters`` clusters."""
        return cls((n_samples / n_clusters) ** 2, n_clusters)

    def in_weight_unit(self, unit, total):
        """Return ``(total * unit / k)^2 / unit``: the weighted rows counted as repeated rows."""
        return self._checked((total / self.n_clusters) ** 2 * unit, "paper", total * unit)


@dataclass(frozen=True)
class RelativeWeight(FairnessPolicy):
    """``relative_weight``: 1% less unfairness is worth ``alpha`` % more K-Means cost."""

    alpha: float

    @property
    def samples(self):
        """Up to :data:`COARSE_UP_TO`; every row walks above it."""
        return self.alpha <= COARSE_UP_TO

    def walk(self, walker):
        """Walk to ``alpha`` and repair attributes left less fair than the S-blind clustering."""
        # Weight 0 asks for the S-blind clustering, which the fit holds already; so does a
        # fit without an attribute to weigh.
        if self.alpha > 0 and walker.can_weigh():
            self._reach(walker)
            self._repair(walker)
        return Weighting.measured(walker, self.alpha)

    def _reach(self, walker):
        def keep(point):
            return point.relative_weight <= self.alpha

        coarse = walker.coarse()
        walk = None if coarse is None else coarse.walk(keep)
        if walk is None or coarse.at_reference(walk.low):
            # No sample, or one whose fairness term moved nothing: where the rows' own walk
            # moves nothing either its phases are quiet, which costs a sweep.
            walker.settle(walker.walk(keep).low)
        else:
            walker.refine(coarse, walk, keep)

    def _repair(self, walker):
        """Raise the weight of attributes left less fair than S-blind; warn if in vain."""
        for round_ in range(REPAIRS + 1):
            worse = walker.worse()
            if not worse.any():
                return
            if round_ == REPAIRS:
                break
            # Again from the S-blind clustering, as if the user had asked for these weights:
            # from where the last phase stopped, moves that hurt the attribute stay made.
            walker.user[worse] *= GROWTH
            self._reach(walker)
        walker.warn_worse(worse, f"even with their weight raised {GROWTH**REPAIRS:g}-fold")


class _Budget(FairnessPolicy):
    """A budget walks the ladder by its own rule, and names attributes left less fair."""

    #: The parameter, for ``refit_params_``.
    parameter = ""

    def walk(self, walker):
        point, walk = self._choose(walker)
        refit = self._refit_params(walker, walk, point)
        alpha = point.relative_weight
        # A budget fixes the price, so no repair: but an attribute left less fair is named.
        worse = walker.worse()
        if worse.any():
            walker.warn_worse(worse, "at the weight the budget chose (relative_weight="
                                     f"{alpha:g})")
        return Weighting.measured(walker, alpha, refit)

    def _choose(self, walker):
        """Return the budget's point and its walk; the session left there, with its weights."""
        raise NotImplementedError

    def _refit_params(self, walker, walk, point):
        """Return the parameters to change for a fresh fit to give the budget's clustering.

        A fit at ``relative_weight = point.relative_weight`` walks the same
        path when its rule (keep a point while its relative weight is at
        most that) agrees with the budget's verdict on every trial, and it
        then ends at ``point`` unless it repairs an attribute left less fair.
        Otherwise the budget itself is needed ({}).
        """
        if point is walk.blind:  # relative_weight=0 is the S-blind clustering
            return {self.parameter: None, "relative_weight": 0.0}
        alpha = point.relative_weight
        retraced = (
            # On a sample first, a relative weight's walk takes another path.
            not walker.can_sample
            and any(point is trial for trial, _ in walk.trials)
            and all((trial.relative_weight <= alpha) == kept for trial, kept in walk.trials)
            and not walker.worse().any()
        )
        if not retraced:
            return {}
        return {self.parameter: None, "relative_weight": alpha}


@dataclass(frozen=True)
class CostBudget(_Budget):
    """``max_cost``: the fairest clustering found within ``1 + max_cost`` of the S-blind cost."""

    max_cost: float
    parameter = "max_cost"

    @property
    def cost_limit(self):
        return 1.0 + self.max_cost

    def _choose(self, walker):
        blind = walker.point(0.0)
        if not walker.can_weigh():
            return blind, Walk(blind, blind)
        budget = self.max_cost
        walk = walker.walk(lambda point: point.cost <= budget)
        # The fairest within the budget, the cheaper of two as fair (the S-blind
        # clustering first): the squared deviations the walk lowers can fall while the
        # clusters' mean distance from the mix does not.
        kept = [walk.blind] + [trial for trial, ok in walk.trials if ok]
        point = min(kept, key=lambda p: (p.unfairness, p.cost))
        if walk.low.cost < _SPENT * budget and walk.high is not None:
            mixed = self._mix(walker, walk.low, walk.high)
            if mixed.unfairness < point.unfairness:
                point = mixed
        walker.settle(point)
        self._warn_if_unspent(point, walk.high)
        return point, walk

    def _mix(self, walker, low, high):
        """Move the rows where two neighbouring clusterings differ, cheapest first, within budget.

        Returns the fairest mixture found that costs at most the budget, or
        ``low`` (also where the session cannot mix clusterings row by row).
        """
        session = walker.session
        if not session.can_blend:
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
            point = walker.point(high.step)
            if point.cost <= self.max_cost:
                kept = middle
                if point.unfairness < best.unfairness:
                    best = point
            else:
                refused = middle
        return best

    def _warn_if_unspent(self, point, costlier):
        """Warn when the budget bought no fairness, or spent under half of itself."""
        budget = self.max_cost
        if point.unfairness < 1.0 and point.cost >= _SPENT * budget:
            return
        # Two numbers that both read as percentages, each named: the cost's rise, and the
        # share of the budget it uses ("spent +0.4% of it" read as a share of the budget).
        bought = ("bought no fairness (the S-blind clustering is kept)"
                  if point.unfairness >= 1.0 else
                  f"used {point.cost / budget:.0%} of the budget: the clustering chosen costs "
                  f"{point.cost:+.1%} against the S-blind clustering's K-Means term (the "
                  f"budget allows {budget:+.1%}), for {point.unfairness:.3g} of its unfairness")
        nxt = ("the largest weight tried bought no more: this is as fair as the fit gets"
               if costlier is None else
               f"the next clustering found costs {costlier.cost:+.1%} (unfairness "
               f"{costlier.unfairness:.3g}), over the budget, and nothing was found in "
               "between: a larger max_cost buys more")
        warn(f"max_cost={budget:g} {bought}: {nxt}.")


@dataclass(frozen=True)
class UnfairnessTarget(_Budget):
    """``max_unfairness``: the cheapest clustering found whose unfairness ratio reaches it."""

    max_unfairness: float
    parameter = "max_unfairness"

    def _choose(self, walker):
        blind = walker.point(0.0)
        target = self.max_unfairness
        if not walker.can_weigh() or blind.unfairness <= target:
            # Nothing to weigh, or the S-blind clustering meets the target already.
            return blind, Walk(blind, blind)
        walk = walker.walk(lambda point: point.unfairness > target)
        if walk.trials and walk.high is None:
            point = walk.low
            warn(f"max_unfairness={target:g} was not reached: the fairest clustering found "
                 f"(relative_weight={point.relative_weight:g}) keeps "
                 f"{point.unfairness:.3g} of the S-blind clustering's unfairness.")
        else:
            point = walk.high
        walker.settle(point)
        return point, walk
