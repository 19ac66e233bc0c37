"""How much fairness counts: an absolute weight, or one measured against the S-blind clustering.

The paper's ``lambda`` multiplies a fairness term that does not grow with the
number of rows, while the K-Means term grows with the rows and with the
spread of ``X``: one ``lambda`` means different things on different data.
The scale-free rule measures both terms against the S-blind clustering that
the fit reaches first (weight 0, from the same start), and continues from it
minimising

    inertia / I0 + alpha * sum_a u_a T_a / T0_a / sum_a u_a,

``I0`` being the S-blind clustering's K-Means term, ``T_a`` attribute ``a``'s
fairness term (paper Eqs. 7 and 21, weight 1), ``T0_a`` its S-blind value and
``u_a`` the user's attribute weights. So at the margin 1% less unfairness
(each attribute measured against its own S-blind value, then averaged) is
worth ``alpha`` % more K-Means cost, whatever the units of ``X``, the number
of rows or the number of values of an attribute. ``T0_a`` is floored at the
fairness term that a random split of the rows into clusters has on average,
``(1 - sum_v p_v^2) / (n m_a)`` (``1 / n`` for a numeric attribute): an
attribute the S-blind clustering already left that fair gets a bounded weight.

In the paper's terms this is ``lambda = alpha * I0 * sum_a r_a / (sum_a u_a)^2``
with attribute weights ``w_a = r_a * sum_a u_a / sum_a r_a`` and ``r_a = u_a / T0_a``
(the weights keep the user's total), which is what the fitted model reports.

A budget replaces ``alpha`` by a search: the largest ``alpha`` whose clustering
costs at most ``1 + max_cost`` times ``I0``, or the smallest whose relative
unfairness ``sum_a u_a T_a / T0_a / sum_a u_a`` is at most ``max_unfairness``.
Every trial starts from the clustering of the largest ``alpha`` known to lie
below the answer, so the path is warm-started and moves one way.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ._encoding import NUMERIC

__all__ = ["Plan", "Weighting", "fit_weighted", "random_split_fairness"]

# Bracketing the budget's alpha: trials at 1, then 4^j up or down, at most this many.
_GROWTH = 4.0
_MAX_BRACKET = 6
# Geometric bisections between the bracket's ends: the answer is within a factor
# 4^(1/2^_BISECTIONS) of the best alpha.
_BISECTIONS = 2
# Rounds that raise the weight of an attribute left less fair than the S-blind clustering.
_REPAIRS = 2


@dataclass(frozen=True)
class Plan:
    """What the user asked for.

    ``kind`` is ``"absolute"`` (``value``: lambda), ``"relative"`` (alpha),
    ``"max_cost"`` (the budget, a fraction) or ``"max_unfairness"`` (the
    target, a fraction of the S-blind unfairness).
    """

    kind: str
    value: float


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
    reference: np.ndarray | None = None  # T0_a, floored at a random split's
    user_weights: np.ndarray | None = None

    def __post_init__(self):
        if self.blind_fairness is None:
            nan = np.full(len(self.attribute_weights), np.nan)
            object.__setattr__(self, "blind_fairness", nan)
            object.__setattr__(self, "reference", nan)
            object.__setattr__(self, "user_weights", self.attribute_weights)

    def unfairness(self, fairness):
        """Relative unfairness of per-attribute fairness terms (1 at S-blind; NaN if absolute)."""
        if not np.isfinite(self.blind_inertia):
            return math.nan
        total = _counted(self.user_weights, self.reference)
        if not total:
            return 0.0
        return float(np.dot(_share(self.user_weights, self.reference), fairness) / total)


def _share(weights, reference):
    """``weights / reference``, 0 where the reference is 0 (a single-valued attribute)."""
    out = np.zeros(len(weights))
    np.divide(weights, reference, out=out, where=reference > 0)
    return out


def _counted(weights, reference):
    """Total weight of the attributes that can be unfair at all (reference above 0)."""
    return float(weights[reference > 0].sum())


def random_split_fairness(encoding):
    """Each attribute's fairness term under a random split, on average (column order)."""
    n = encoding.n_samples
    out = np.empty(encoding.n_attributes)
    for j, kind in enumerate(encoding.kinds):
        if kind == NUMERIC:
            out[j] = 1.0 / n
        else:
            p = encoding.proportions[j]
            out[j] = (1.0 - float(np.dot(p, p))) / (n * np.count_nonzero(p))
    return out


def fit_weighted(starts, plan, encoding, user_weights, *, max_iter, tol):
    """Run the engine's sessions as ``plan`` asks; return the kept session and its weights.

    Parameters
    ----------
    starts : iterable of callable
        Each ``start(lam)`` returns a new session (one initialisation) whose
        objective is ``inertia + lam * fairness`` with ``user_weights``; the
        session has the interface of :class:`fairkm._engine.Session`
        (``minimise``, ``set_weights``, ``inertia``, ``objective``,
        ``attribute_fairness``, ``attribute_deviation``, ``snapshot``,
        ``restore``), its per-attribute vectors listing the categorical
        attributes first.
    plan : Plan
    encoding : SensitiveEncoding
    user_weights : ndarray of shape (n_attributes,)
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
    driver = _Driver(best, encoding, user_weights, max_iter, tol, converged)
    if plan.kind == "relative":
        alpha = plan.value
        if alpha > 0:  # weight 0 asks for the S-blind clustering, which the fit holds already
            driver.apply(alpha)
            driver.repair(alpha)
    else:
        alpha = driver.search(plan)
    lam, weights = driver.weights(alpha)
    weighting = Weighting(lam, weights, alpha, driver.blind_inertia, driver.blind_fairness,
                          driver.reference, driver.requested)
    return best, weighting, driver.converged


class _Driver:
    """Phases of one session measured against its S-blind clustering (where it stands now)."""

    def __init__(self, session, encoding, user, max_iter, tol, converged):
        self.session, self.encoding = session, encoding
        self.requested, self.user = user, user.copy()
        self.max_iter, self.tol, self.converged = max_iter, tol, converged
        self.blind_inertia = session.inertia
        self.blind_fairness = self.columns(session.attribute_fairness())
        self.blind_deviation = self.columns(session.attribute_deviation())
        self.reference = np.maximum(self.blind_fairness, random_split_fairness(encoding))

    def columns(self, values):
        """Reorder a session's per-attribute vector into column order."""
        return self.encoding.in_column_order(values)

    def weights(self, alpha):
        """Return ``(lambda, attribute weights)`` for ``alpha`` (column order)."""
        ratio = _share(self.user, self.reference)
        total = _counted(self.user, self.reference)
        if alpha == 0 or ratio.sum() == 0:
            return 0.0, self.user.copy()
        return alpha * self.blind_inertia * ratio.sum() / total**2, ratio * total / ratio.sum()

    def unfairness(self):
        """Return the session's relative unfairness (1 at the S-blind clustering, 0 when fair)."""
        weighting = Weighting(0.0, self.user, 0.0, self.blind_inertia, self.blind_fairness,
                              self.reference, self.requested)
        return weighting.unfairness(self.columns(self.session.attribute_fairness()))

    def set(self, alpha):
        lam, weights = self.weights(alpha)
        self.session.set_weights(lam, *self.encoding.split(weights))

    def apply(self, alpha):
        """Minimise with ``alpha``'s weights from the session's current labels."""
        self.set(alpha)
        self.converged &= self.session.minimise(self.max_iter, self.tol)

    def repair(self, alpha):
        """Raise the weight of attributes left less fair (AE) than S-blind; warn if in vain."""
        for round_ in range(_REPAIRS + 1):
            deviation = self.columns(self.session.attribute_deviation())
            worse = (deviation > self.blind_deviation * (1 + 1e-9)) & (self.user > 0)
            if not worse.any():
                return
            if round_ == _REPAIRS:
                break
            self.user[worse] *= _GROWTH
            self.apply(alpha)
        names = [self.encoding.names[j] for j in np.flatnonzero(worse)]
        warnings.warn(
            f"sensitive attribute(s) {names} ended less fair (AE) than the S-blind clustering "
            f"the fit started from, even with their weight raised {_GROWTH**_REPAIRS:g}-fold: "
            "the other attributes' gains outweigh theirs. Give them a larger "
            "attribute_weights, or fit them separately.",
            UserWarning,
            stacklevel=4,
        )

    def search(self, plan):
        """Find the budget's alpha by warm-started bracketing and bisection.

        Every trial starts from the clustering of the largest alpha known to
        lie on the low side (within the cost budget, or short of the
        fairness target). Returns the alpha kept; the session is left at its
        clustering, with its weights.
        """
        session, budget = self.session, plan.value

        def low_side():
            if plan.kind == "max_cost":
                return session.inertia <= (1.0 + budget) * self.blind_inertia
            return self.unfairness() > budget

        if not low_side():  # the S-blind clustering already meets the fairness target
            return 0.0
        low, high = (0.0, session.snapshot()), None

        def trial(alpha):
            nonlocal low, high
            session.restore(low[1])
            self.apply(alpha)
            if low_side():
                low = (alpha, session.snapshot())
                return True
            high = (alpha, session.snapshot())
            return False

        # Bracket: 1, then up by _GROWTH while on the low side, down while on the high side.
        alpha = 1.0
        for _ in range(_MAX_BRACKET):
            if trial(alpha):
                if high is not None:
                    break
                alpha *= _GROWTH
            else:
                if low[0] > 0:
                    break
                alpha /= _GROWTH
        if high is not None and low[0] > 0:
            for _ in range(_BISECTIONS):
                trial(math.sqrt(low[0] * high[0]))
        if plan.kind == "max_unfairness" and high is None:
            session.restore(low[1])
            self.set(low[0])
            warnings.warn(
                f"max_unfairness={budget:g} was not reached: the fairest clustering found "
                f"(relative_weight={low[0]:g}) keeps {self.unfairness():.3g} of the S-blind "
                "clustering's unfairness.",
                UserWarning,
                stacklevel=4,
            )
            return low[0]
        alpha, snapshot = low if plan.kind == "max_cost" else high
        session.restore(snapshot)
        self.set(alpha)
        return alpha
