"""Fair assignment with guaranteed bounds (Bera et al., 2019), and its alternation with centres.

One assignment: counting arguments first (:mod:`fairkm.bounds._infeasible`),
then the linear relaxation on every row (:mod:`fairkm.bounds._relax`: at once,
or by prices beyond ``max_lp_variables``), then whole rows
(:mod:`fairkm.bounds._round`: an integer programme on the split rows and the
rows cheapest to move, or on every row for small problems). The relaxation's
prices give a lower bound on the cost of any assignment meeting the bounds,
reported beside the cost. The alternation recomputes the centres as the
clusters' means and assigns again while the K-Means cost falls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_array

from fairkm.exceptions import BoundNotMetWarning
from fairkm.metrics import BoundsCheck, check_kind, from_codes, resolve_bounds
from fairkm.utils import _call_site
from fairkm.utils._inputs import row_index
from fairkm.utils._options import ADDITIVE
from fairkm.utils._param_validation import (
    MAX_ITER,
    RANDOM_STATE,
    TOL,
    at_least,
    check_n_samples,
    check_param,
)
from fairkm.utils._progress import Progress, report
from fairkm.utils._sums import group_totals, weighted_sum

from ._highs import Programmes
from ._infeasible import check_rare_values, counting_reason, feasible, prove_infeasible, type_counts
from ._model import excess, live_rows, make_problem, sq_distances
from ._relax import relax
from ._round import (
    EXACT_PAIRS,
    Rounded,
    move_to_counts,
    round_by_search,
    round_exact,
    round_relaxation,
    soft_round,
    swap_numeric,
)
from ._search import SearchSpace, local_search
from ._threads import decided_threads

__all__ = [
    "BoundedAssignment",
    "SOLVER_CONSTRAINTS",
    "check_solver_params",
    "fair_assignment",
    "solve",
]


@dataclass(frozen=True)
class BoundedAssignment:
    """The result of :func:`fair_assignment`.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,)
        Cluster of each row, 0..n_clusters-1; every cluster is non-empty.
    centers : ndarray of shape (n_clusters, n_features)
        The (weighted) means of the clusters of ``labels``.
    inertia : float
        K-Means cost of ``labels``: sum of (weighted) squared distances to
        ``centers``.
    assignment_cost : float
        The same cost measured to the centres the last assignment was made
        to (``>= inertia``).
    lower_bound : float
        A proven lower bound on the cost, to those centres, of any assignment
        meeting the bounds (the Lagrangian bound of the linear relaxation,
        computed on every row): ``assignment_cost / lower_bound - 1`` is how
        far from optimal for those centres the assignment can at most be
        (:attr:`gap`).
    lp_cost : float
        The linear relaxation's optimum for those centres (equal to
        ``lower_bound`` up to the solver's tolerance when ``certified``); nan
        when no programme fitted in ``max_lp_variables`` (the relaxation was
        then bounded from below only, by ``lower_bound``).
    nearest_cost : float
        The cost, to the same centres, of sending every row to its nearest
        one (no bound): ``assignment_cost / nearest_cost - 1`` is what the
        bound costs there.
    n_iter : int
        Number of assignments made (centres -> assignment steps).
    cost_history : tuple of float
        ``inertia`` after each assignment.
    check : BoundsCheck
        The bounds measured on ``labels``: ``satisfied``, ``violation``, the
        per-attribute table and ``summary()``.
    exact : bool
        Whether the last relaxation was solved on every row at once (False:
        by prices, beyond ``max_lp_variables``).
    certified : bool
        Whether the last relaxation was shown optimal on every row (always
        when ``exact``).
    n_rounded : int
        Rows the last relaxation left split (or, for small problems solved as
        one integer programme, every row).
    status : str
        What the solvers said, in words.
    """

    labels: np.ndarray
    centers: np.ndarray
    inertia: float
    assignment_cost: float
    lower_bound: float
    lp_cost: float
    nearest_cost: float
    n_iter: int
    cost_history: tuple
    check: BoundsCheck
    exact: bool
    certified: bool
    n_rounded: int
    status: str

    @property
    def violation(self):
        """The largest violation left after rounding (0 when every bound holds)."""
        return self.check.violation

    @property
    def satisfied(self):
        """Whether every cluster meets every bound (up to 1e-9)."""
        return self.check.satisfied

    @property
    def deviation(self):
        """Per attribute, the largest deviation reached (a Series, in the bound's units)."""
        return self.check.table["deviation"]

    @property
    def gap(self):
        """At most how far above the cheapest assignment meeting the bounds (for those centres).

        ``assignment_cost / lower_bound - 1``; 0.004 reads "within 0.4% of
        optimal".
        """
        if self.lower_bound <= 0:
            return 0.0 if self.assignment_cost <= 0 else np.inf
        return max(0.0, self.assignment_cost / self.lower_bound - 1.0)


# ------------------------------------------------------------------------------ one assignment


@dataclass
class _Step:
    labels: np.ndarray
    cost: float
    lower_bound: float
    lp_cost: float
    nearest_cost: float
    exact: bool
    certified: bool
    n_rounded: int
    status: str
    prices: object


def _cost_of(problem, dist, rows, labels):
    return weighted_sum(dist[rows, labels[rows]], problem.weights[rows])


def _assign(problem, bounds, centers, live, max_pairs, start, programmes=None):
    """One bounded assignment of the live rows to ``centers`` (``programmes``: see ``relax``)."""
    k = problem.n_clusters
    dist = sq_distances(problem.X, centers)
    relaxation = relax(problem, dist, live, max_pairs, start, programmes)
    status = (f"relaxation: {'every row at once' if relaxation.exact else 'by prices'}, "
              f"{relaxation.rounds} programme(s), "
              f"{'optimal on every row' if relaxation.certified else 'not certified'}")
    if live.shape[0] * k > EXACT_PAIRS:
        rounded = round_by_search(problem, bounds, dist, live, relaxation)
        if not rounded.met and problem.num:
            swapped = swap_numeric(problem, bounds, dist, live, rounded.labels)
            rounded = swapped if swapped.met else rounded
        if not rounded.met and problem.by_type:
            rounded = _to_type_counts(problem, bounds, dist, live, rounded)
        if not rounded.met:
            rounded = round_relaxation(problem, dist, live, relaxation)
    else:
        shares = np.zeros((relaxation.free.shape[0], k))
        shares[relaxation.pos, relaxation.clu] = relaxation.x
        whole = shares.max(axis=1) >= 1.0 - 1e-6
        sizes = np.bincount(relaxation.labels[live], weights=problem.weights[live], minlength=k)
        # Integral only where a programme ran (with none, every row's cheapest priced cluster
        # is no programme's solution: "whole" holds of no row) and every cluster keeps its
        # least weight, as the programme and the lower bound require.
        if (relaxation.rounds and whole.all() and sizes.min() >= problem.w_min
                and excess(problem, live, relaxation.labels[live]).max() <= 1e-9):
            rounded = Rounded(relaxation.labels, "the relaxation is integral", True)
        else:
            rounded = round_exact(problem, dist, live)
            if rounded.proven_infeasible:
                prove_infeasible(problem, bounds, live)
            if rounded.labels[live].min() < 0:
                rounded.labels = relaxation.labels.copy()
    if not rounded.met and problem.by_type:
        rounded = _to_type_counts(problem, bounds, dist, live, rounded)
    if not rounded.met:
        fallback = soft_round(problem, dist, live, relaxation, rounded.labels)
        if excess(problem, live, fallback.labels[live]).sum() < excess(
                problem, live, rounded.labels[live]).sum():
            rounded = fallback
    labels = rounded.labels
    nearest = weighted_sum(live_rows(dist, live).min(axis=1), problem.weights[live])
    return _Step(labels, _cost_of(problem, dist, live, labels), relaxation.bound,
                 relaxation.value, nearest, relaxation.exact, relaxation.certified,
                 rounded.n_rounded, f"{status}; {rounded.status}", relaxation.prices)


def _to_type_counts(problem, bounds, dist, live, rounded):
    """Meet the bounds through type counts (unit weights).

    The counts that meet them closest to the rounding's (or, when HiGHS finds
    none close, any with every cluster's size within ``size_windows`` of the
    rounding's, else any), each type's rows moved to them at the least cost,
    then the local search's polish.
    """
    k = problem.n_clusters
    near = group_totals(problem.types[live] * k + rounded.labels[live], None,
                        problem.n_types * k).reshape(problem.n_types, k)
    counts = type_counts(problem, live, near=near)
    if counts is None:
        counts = type_counts(problem, live, sizes=size_windows(near.sum(axis=0)))
    if counts is None:
        counts = type_counts(problem, live)
    if counts is False:
        prove_infeasible(problem, bounds, live)
    if counts is None:
        return rounded
    labels = move_to_counts(problem, dist, live, rounded.labels, counts)
    if excess(problem, live, labels[live]).max() > 1e-9:
        return rounded
    labels[live], _ = local_search(SearchSpace.build(bounds, problem, live), live_rows(dist, live),
                                   labels[live])
    return Rounded(labels, f"{rounded.status}; rows moved to type counts that meet the bounds, "
                   "then polished", True, n_rounded=rounded.n_rounded)


# ------------------------------------------------------------------------------ the alternation


def cluster_means(X, weights, labels, k):
    """Weighted means of the clusters of ``labels``, and their sizes (a mean of 0 if empty)."""
    sizes = np.bincount(labels, weights=weights, minlength=k)
    sums = group_totals(labels, X * weights[:, None], k)
    return sums / np.maximum(sizes, 1e-300)[:, None], sizes


def _cost(X, weights, labels, centers):
    total = 0.0
    for start in range(0, X.shape[0], 65536):
        diff = X[start:start + 65536] - centers[labels[start:start + 65536]]
        total += weighted_sum(np.einsum("ij,ij->i", diff, diff), weights[start:start + 65536])
    return total


# Where the clusters' sizes may lie while the floor of max_deviation=0 is searched (problems
# beyond EXACT_PAIRS): within this fraction of the sizes the exact mix gives, so that no
# floor bends the clustering to arithmetic (docs/bounds.md).
SIZE_WINDOW = 0.01
# The floor's search: doublings of one row until one is met, halvings of it until one is not
# shown met, then bisections (in ratio) of the last interval: at most 12 + 12 + 5 probes.
_DOUBLINGS, _HALVINGS, _BISECTIONS = 12, 12, 5


def size_windows(sizes):
    """Return the least and the most rows of each cluster the floor's search allows.

    Within ``SIZE_WINDOW`` of each size of the exact mix's relaxation (at
    least one row either side).
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    slack = np.maximum(SIZE_WINDOW * sizes, 1.0)
    return np.maximum(np.floor(sizes - slack), 1.0), np.ceil(sizes + slack)


def as_fair_as_whole_rows(X, centers, bounds, *, max_lp_variables=100_000, tighten=True):
    """Resolve ``max_deviation=0`` to the dataset's exact mix, or as near as whole rows allow.

    The exact mix when counting and type counts show that whole rows can hold
    it. Otherwise a floor that whole rows meet, the same multiple of one row
    of the smallest cluster of the exact mix (``w_min / size``, the size at
    least half an average cluster's; for a multiplicative bound, one row of
    the rarest value) for every attribute asked at 0: one row, doubled until
    whole rows meet it (counting and type counts decide with unit weights,
    otherwise an assignment is tried). With unit weights it is then tightened
    where the type counts show a tighter one met: halved until not, then
    bisected in ratio (at most 12 + 5 probes, only a decided yes counts).
    Beyond ``EXACT_PAIRS`` pairs those type counts keep every cluster's size
    within ``SIZE_WINDOW`` of the sizes the exact mix gives (its relaxation
    to ``centers``): the tightest bound at all can demand absurd cluster
    sizes (docs/bounds.md has Adult's); below it the floor rises again until
    an assignment to ``centers`` meets it. Weighted rows keep the doubling's
    floor, and so does every floor with ``tighten=False``. Bounds with no
    attribute at 0 are returned as they are.

    Returns
    -------
    BoundSet
        The attributes asked at 0 with their floor, and a note saying so.
    """
    if not bounds.exact:
        return bounds
    k = centers.shape[0]
    problem = make_problem(X, bounds, k)
    live = np.flatnonzero(problem.weights > 0)
    if feasible(problem, bounds, live, 0.0):
        return bounds.with_floor(0.0, "max_deviation=0: the dataset's exact mix, which whole "
                                      "rows can hold.")
    dist = sq_distances(X, centers)
    exact = relax(problem, dist, live, max_lp_variables)
    sizes = np.bincount(exact.labels[live], weights=problem.weights[live], minlength=k)
    # The relaxation can keep a cluster of a few split rows: counted as half an average one.
    smallest = max(float(sizes[sizes > 0].min()), 0.5 * float(sizes.sum()) / k)
    one_row = problem.w_min / smallest
    zero = [a for a in bounds.categorical() if a.delta == 0.0]
    floors = {a.name: one_row if bounds.kind == ADDITIVE
              else min(one_row / float(a.proportions[a.proportions > 0].min()), 0.5)
              for a in zero}
    windowed = problem.unit and live.shape[0] * k > EXACT_PAIRS
    windows = size_windows(sizes) if windowed else None

    def raised_by(scale):
        return {name: min(f * scale, 0.999) for name, f in floors.items()}

    def holds(scale):
        """Decided by counting and type counts (unit weights), else an assignment is tried."""
        answer = feasible(problem, bounds, live, raised_by(scale))
        if answer is None:
            tight = bounds.with_floor(raised_by(scale))
            p = make_problem(X, tight, k)
            answer = counting_reason(p, live) is None and round_by_search(
                p, tight, dist, live, relax(p, dist, live, max_lp_variables)).met
        return answer

    def shown_met(scale):
        """Only a decided yes of the type counts (within the windows beyond EXACT_PAIRS)."""
        return feasible(problem, bounds, live, raised_by(scale), sizes=windows) is True

    hi = 1.0
    for _ in range(_DOUBLINGS):
        if holds(hi):
            break
        hi *= 2.0
    else:
        return bounds  # the assignment proves it infeasible, with the reason
    top = hi
    if tighten and problem.unit:
        # Tighter where the type counts show it (weighted rows keep the doubling's floor:
        # their integer programmes on every row grow slow at knife-edge floors).
        lo = 0.5 * hi if hi > 1.0 else None
        for _ in range(_HALVINGS if lo is None else 0):
            if not shown_met(0.5 * hi):
                lo = 0.5 * hi
                break
            hi *= 0.5
        if lo is not None:
            for _ in range(_BISECTIONS):
                mid = float(np.sqrt(lo * hi))
                lo, hi = (lo, mid) if shown_met(mid) else (mid, hi)
        # Without windows a probe is met by some assignment, which the cheapest one's integer
        # programme may not reach within its node limit: the floor rises (1/8 of a doubling
        # at a time, back to the doubling's floor at most) until an assignment to these
        # centres meets it.
        while not windowed and hi < top:
            tight = bounds.with_floor(raised_by(hi))
            p = make_problem(X, tight, k)
            if counting_reason(p, live) is None and excess(p, live, _assign(
                    p, tight, centers, live, max_lp_variables, None).labels[live]).max() <= 1e-9:
                break
            hi = min(hi * 2.0 ** 0.125, top)
    raised = raised_by(hi)
    shown = ", ".join(f"{name} {value:.3g}" for name, value in raised.items())
    rows = "one row" if hi == 1.0 else f"{hi:.3g} rows"
    if bounds.weights is not None:
        rows += " (of the least weight)"
    if hi < top:
        where = (f" in clusters within {SIZE_WINDOW:.0%} of the exact mix's sizes" if windowed
                 else "")
        said = f"the tightest bound found that whole rows meet{where}, {rows}"
    else:
        said = f"every cluster within {rows}"
    return bounds.with_floor(raised, (
        f"max_deviation=0 asks for the dataset's exact mix as far as whole rows allow: {said} "
        f"of the smallest cluster of the exact mix ({shown})."))


def solve(X, centers, bounds, *, max_iter=1, tol=1e-4, max_lp_variables=100_000, warn=True):
    """Alternate bounded assignments and centres from ``centers`` (validated inputs).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    centers : ndarray of shape (n_clusters, n_features), float64
    bounds : BoundSet
    max_iter, tol, max_lp_variables
        As in :func:`fair_assignment`.
    warn : bool, default=True
        Warn (:class:`BoundNotMetWarning`) when the result breaks a bound.

    Returns
    -------
    BoundedAssignment

    Raises
    ------
    InfeasibleBoundError
        When no integral assignment meets the bounds.
    """
    k = centers.shape[0]
    problem = make_problem(X, bounds, k)
    live = np.flatnonzero(problem.weights > 0)
    check_n_samples(live.shape[0], k, " (of positive weight)")
    check_rare_values(bounds, live, k)
    if bounds.exact:
        bounds = as_fair_as_whole_rows(X, centers, bounds, max_lp_variables=max_lp_variables)
        problem = make_problem(X, bounds, k)
    reason = counting_reason(problem, live)
    if reason is not None:
        prove_infeasible(problem, bounds, live, reason=reason)
    dead = np.flatnonzero(problem.weights <= 0)
    scale = problem.cost_scale

    def whole(labels, centres):
        if dead.size:
            labels[dead] = np.argmin(sq_distances(X[dead], centres), axis=1)
        return labels

    # The relaxations on every row of these assignments differ only in their costs: each
    # starts from the last one's basis (fairkm.bounds._highs).
    programmes = Programmes()
    step = _assign(problem, bounds, centers, live, max_lp_variables, None, programmes)
    labels, certified_at = whole(step.labels, centers), centers
    space, previous, last_full, history, best = None, None, True, [], None
    while True:
        means, _ = cluster_means(X, problem.weights, labels, k)
        inertia = _cost(X, problem.weights, labels, means) * scale
        history.append(inertia)
        report(Progress("assignment", len(history), inertia, 0, inertia), verbose=0)
        check = from_codes(bounds, labels, k)
        key = (round(check.violation, 9), inertia)
        if best is None or key < best[0]:
            best = (key, labels, means, check)
        if len(history) >= max_iter:
            break
        if previous is not None and inertia >= previous * (1.0 - tol):
            if last_full:
                break
            # Converged by local moves: one assignment on every row at these centres, which
            # certifies the result and may find a cheaper start.
            step = _assign(problem, bounds, means, live, max_lp_variables, step.prices,
                           programmes)
            labels, certified_at, last_full = whole(step.labels, means), means, True
            continue
        previous = inertia
        # The bounded assignment to the new centres, by local moves from the current labels
        # (they meet the bounds, so the search only lowers the cost).
        space = SearchSpace.build(bounds, problem, live) if space is None else space
        dist = sq_distances(X, means)
        labels = labels.copy()
        labels[live], _ = local_search(space, live_rows(dist, live), labels[live])
        labels, last_full = whole(labels, means), False
    (_, inertia), labels, means, check = best
    # Rows of weight 0 went to the centres they were assigned at; the means the result
    # reports moved after that (and weigh those rows not at all): they go to the nearest.
    if dead.size:
        labels = whole(labels.copy(), means)
        check = from_codes(bounds, labels, k)
    final = BoundedAssignment(
        labels, means, inertia,
        _cost(X, problem.weights, labels, certified_at) * scale, step.lower_bound * scale,
        step.lp_cost * scale, step.nearest_cost * scale, len(history), tuple(history), check,
        step.exact, step.certified, step.n_rounded, step.status)
    if warn and not final.satisfied:
        _call_site.warn(
            f"The rounded assignment leaves a violation of {final.violation:.3g} "
            f"(bounds as asked: {final.check.summary()}). An integral assignment meeting "
            "them may exist: the integer programmes stop at a node limit.",
            BoundNotMetWarning,
        )
    return final


# ------------------------------------------------------------------------------ public entry


# What the solver's parameters accept, for the function and the estimator alike (random_state:
# BoundedKMeans's seeding; the assignment itself draws nothing).
SOLVER_CONSTRAINTS = {
    "max_iter": MAX_ITER,
    "tol": TOL,
    "max_lp_variables": [at_least(1)],
    "random_state": RANDOM_STATE,
}


def check_solver_params(**params):
    """Check the solver's parameters (see ``SOLVER_CONSTRAINTS``)."""
    for name, value in params.items():
        check_param(name, value, SOLVER_CONSTRAINTS[name])


def _check_centers(centers, n_features):
    if isinstance(centers, (str, bytes)) or np.isscalar(centers) or centers is None:
        raise TypeError(f"centers must be an array of shape (n_clusters, n_features), got "
                        f"{centers!r}.")
    centers = check_array(centers, dtype=np.float64, input_name="centers")
    if centers.shape[1] != n_features:
        raise ValueError(
            f"centers has {centers.shape[1]} features but X has {n_features}; they must match."
        )
    return np.ascontiguousarray(centers)


def fair_assignment(X, centers, sensitive_features, *, max_deviation,
                    deviation_kind="additive", numeric_bound=None, sample_weight=None,
                    numeric_sensitive="auto", intersections=None, max_iter=1, tol=1e-4,
                    max_lp_variables=100_000, min_balance=None):
    """Assign rows to centres at the least K-Means cost with every cluster's mix within bounds.

    For every cluster ``C`` and every value ``v`` of every categorical
    sensitive attribute, additive bounds ask
    ``|share_C(v) - share_X(v)| <= max_deviation``; multiplicative ones (Bera,
    Chakrabarty, Flores and Negahbani, "Fair Algorithms for Clustering",
    NeurIPS 2019) ``(1 - max_deviation) p <= share_C(v) <= p / (1 - max_deviation)``
    with ``p = share_X(v)``. ``numeric_bound`` bounds the standardised cluster
    means of numeric attributes. ``min_balance`` asks every cluster's balance
    (its smallest count of a value over its largest, Chierichetti et al. 2017)
    to be at least a target, one-sided. Every cluster is non-empty.

    The assignment minimises ``sum_i w_i ||x_i - center_{label_i}||^2`` as a
    linear programme (scipy's HiGHS), then assigns whole rows by a local
    search from each row's largest share (the moves and swaps that remove
    what that breaks at the least cost, then those that lower the cost while
    every bound holds), falling back on counts per combination of values and
    an integer programme where it cannot meet the bounds. The result carries
    a proven lower bound on the cost of any assignment meeting the bounds
    (``lower_bound``; ``gap``: how far above it). With ``max_iter > 1`` the
    centres become the clusters' means and the rows move to the new centres by
    the same local search, while the cost falls by more than ``tol``; a last
    assignment on every row at the final centres certifies the result.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive features. A DataFrame pairs pandas
        ``sensitive_features`` and ``sample_weight`` with its rows by index
        label.
    centers : array-like of shape (n_clusters, n_features)
        Starting centres: ``FairKM(...).cluster_centers_``,
        ``KMeans(...).cluster_centers_`` or your own.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
            Series or DataFrame
        One column per sensitive attribute.
    max_deviation : float, dict or None
        The bound on every categorical attribute, ``{name: bound}`` for some
        (the others are reported, not bounded), or None (no categorical bound).
        Additive: a share distance in [0, 1] (above 1 is refused as a
        percentage: 0.05 for 5%). Multiplicative: in [0, 1). 0 asks
        for the dataset's exact mix where whole rows can hold it, else for
        the tightest floor found that whole rows meet, with every cluster's
        size within 1% of the exact mix's on problems beyond 1,000 rows x
        clusters (``check.note`` and ``check.table["bound"]`` say which).
    deviation_kind : {"additive", "multiplicative"}, default="additive"
        How ``max_deviation`` reads.
    numeric_bound : float, dict or None, default=None
        Bound on ``|mean_C(z)|``, ``z`` a numeric attribute standardised over
        the dataset (standard deviations); None leaves numeric attributes free.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights: in the cost and in the shares (read to 10 significant
        digits, so that weights scaled alike give the same labels). Rows of
        weight 0 go to their nearest centre.
    numeric_sensitive : "auto", bool or list, default="auto"
        Which attributes are numeric (as in :class:`fairkm.FairKM`).
    intersections : sequence of sequence of str, default=None
        Combined attributes (``[("sex", "race")]``), bounded like the others.
    max_iter : int, default=1
        Number of assignments at most; 1 assigns to ``centers`` only.
    tol : float, default=1e-4
        Stop when an assignment lowers the K-Means cost by no more than
        ``tol`` times its value.
    max_lp_variables : int, default=100_000
        Largest programme solved at once, in (row, cluster) pairs. Beyond
        it, the bound rows' prices assign every row: the 5,000 rows nearest
        to a tie are solved exactly, the rest in blocks of one type and
        alike in their priced costs (coarser blocks, down to one per type
        and cheapest cluster, when finer ones would not fit), all within
        ``max_lp_variables`` pairs, again until the prices show the solution
        optimal on every row (``certified``) or the relaxation's cost is
        within 1e-6 of its lower bound. When even those blocks do not fit
        (more combinations of the bounded values, times clusters, than the
        budget), no programme is solved: the prices come from the Lagrangian
        alone and ``lp_cost`` is nan.
    min_balance : float, dict or None, default=None
        A balance target in [0, 1] for every categorical attribute,
        ``{name: target}`` for some, or None: every cluster's smallest
        (weighted) count of a value present in the dataset at least that
        fraction of its largest (0 when it lacks a value). It may be combined
        with ``max_deviation`` (pass ``max_deviation=None`` for the target
        alone). A target above the dataset's own balance raises
        :class:`InfeasibleBoundError`.

    Returns
    -------
    BoundedAssignment
        ``labels``, ``centers``, ``inertia``, ``violation``, ``check`` (per
        attribute, with the worst cluster), ``lower_bound`` and ``gap`` (the
        certificate), ``nearest_cost``, ``n_iter``, ``status``, ...

    Raises
    ------
    InfeasibleBoundError
        (a ``ValueError``) When no integral assignment to non-empty clusters
        can meet the bounds; its message, ``tightest`` and ``excess_rows``
        give the tightest bound that can be met and the least excess, in
        rows, that any assignment leaves.
    ValueError
        When the bounds asked bound no attribute (``max_deviation`` with no
        categorical attribute, ``{}``, every bound None, ...).

    Warns
    -----
    BoundNotMetWarning
        When the result leaves a violation that was not proved unavoidable.

    See Also
    --------
    BoundedKMeans : The estimator (seeding, restarts, alternation, ``predict``).
    check_bounds : Measure any clustering against the bounds.

    Notes
    -----
    The relaxation is always feasible (each row split evenly over the
    clusters gives every cluster the dataset's mix), so a bound can only fail
    on whole rows. Counting decides first (a cluster of ``s`` rows can meet
    the bounds only for some ``s``, and ``n_clusters`` such sizes must add up
    to the number of rows); then an integer programme on every row (up to
    5,000 rows x clusters), or on the number of rows of each combination of
    values in each cluster (unit weights).

    Examples
    --------
    >>> import numpy as np
    >>> from fairkm.bounds import fair_assignment
    >>> X = np.array([[0.0], [0.4], [1.0], [2.0], [7.0], [8.0], [8.5], [9.0]])
    >>> group = np.array(["a", "a", "a", "b", "b", "b", "b", "a"])
    >>> fair_assignment(X, [[0.0], [9.0]], group, max_deviation=0.25).labels.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    >>> result = fair_assignment(X, [[0.0], [9.0]], group, max_deviation=0.0)
    >>> result.labels.tolist(), result.satisfied
    ([0, 0, 1, 0, 0, 1, 1, 1], True)
    """
    check_kind(deviation_kind)
    check_solver_params(max_iter=max_iter, tol=tol, max_lp_variables=max_lp_variables)
    index = row_index(X)
    X = np.ascontiguousarray(check_array(X, dtype=np.float64, input_name="X"))
    centers = _check_centers(centers, X.shape[1])
    if sensitive_features is None:
        raise TypeError("sensitive_features must be given: the bounds are on them.")
    bounds = resolve_bounds(sensitive_features, X.shape[0], max_deviation=max_deviation,
                            deviation_kind=deviation_kind, numeric_bound=numeric_bound,
                            sample_weight=sample_weight, numeric_sensitive=numeric_sensitive,
                            intersections=intersections, index=index, min_balance=min_balance)
    if not (bounds.categorical() or bounds.numeric()):
        kinds = {a.name: a.kind for a in bounds.attributes}
        raise ValueError(
            f"max_deviation={max_deviation!r}, numeric_bound={numeric_bound!r} and "
            f"min_balance={min_balance!r} bound no sensitive attribute (their kinds: {kinds}): "
            "max_deviation and min_balance bound categorical attributes, numeric_bound numeric "
            "ones. Without a bound, the cheapest assignment is each row's nearest centre."
        )
    with decided_threads():  # one thread count for the call's parallel kernels
        return solve(X, centers, bounds, max_iter=max_iter, tol=tol,
                     max_lp_variables=max_lp_variables)
