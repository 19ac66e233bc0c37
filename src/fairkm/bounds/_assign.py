"""Fair assignment with guaranteed bounds (Bera et al., 2019), and its alternation with centres.

One assignment: solve the linear programme of :mod:`fairkm.bounds._model` on
every row (or, beyond ``max_lp_variables``, on a seeded sample whose prices
assign the rest, then again on the rows closest to changing cluster), then
round its few fractional rows by an integer programme on them alone that keeps
the bounds exactly. The alternation recomputes the centres as the clusters'
means and assigns again while the K-Means cost falls.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_array, check_random_state

from .._validation import check_int, check_real
from ._check import BoundsCheck, from_codes
from ._infeasible import check_rare_values, explain_infeasible
from ._model import (
    EXACT_MILP_PAIRS,
    excess,
    fixed_offsets,
    make_context,
    solve_lp,
    solve_milp,
    sq_distances,
)
from ._spec import resolve_bounds

__all__ = [
    "BoundNotMetWarning",
    "BoundedAssignment",
    "check_common",
    "fair_assignment",
    "solve",
]

_EXTRA_ROWS = (1000,)  # rows freed for a second rounding when the first falls short
_FRACTIONAL = 1e-6      # a row is fractional when no cluster holds 1 - this of it


class BoundNotMetWarning(UserWarning):
    """The rounded assignment leaves a violation (its size is on the result)."""


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
    lp_cost : float
        The linear programme's optimum for that assignment (plus the cost of
        the rows it kept fixed, when not ``exact``). On more than 200 (row,
        cluster) pairs the programme keeps one row's weight of headroom on
        every bound, so that rounding its fractional rows can keep the bounds;
        it is then stricter than the bounds, and ``assignment_cost`` can be
        below it. Without headroom it is a lower bound on the cost of any
        assignment meeting the bounds.
    n_iter : int
        Number of assignments made (centres -> assignment steps).
    cost_history : tuple of float
        ``inertia`` after each assignment.
    check : BoundsCheck
        The bounds measured on ``labels``: ``satisfied``, ``violation``, the
        per-attribute table and ``summary()``.
    exact : bool
        Whether the last programme was solved on every row (False: on a
        sample, then on the rows closest to changing cluster).
    n_rounded : int
        Rows the last assignment left fractional and the rounding assigned.
    status : str
        What HiGHS said, in words.
    """

    labels: np.ndarray
    centers: np.ndarray
    inertia: float
    assignment_cost: float
    lp_cost: float
    n_iter: int
    cost_history: tuple
    check: BoundsCheck
    exact: bool
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
    def attribute_violation(self):
        """Per attribute, the largest violation left (a Series)."""
        return self.check.table["violation"]

    @property
    def deviation(self):
        """Per attribute, the largest deviation reached (a Series, in the bound's units)."""
        return self.check.table["deviation"]


# ------------------------------------------------------------------------------ one assignment


@dataclass
class _Step:
    labels: np.ndarray
    lp_cost: float
    exact: bool
    n_rounded: int
    status: str
    proven_infeasible: bool = False


def _nearest(X, centers):
    return np.argmin(sq_distances(X, centers), axis=1).astype(np.int64)


def _sample(ctx, live, m, rng):
    """Draw about ``m`` live rows, stratified by type, reweighted to the types' weight."""
    order = live[rng.permutation(live.shape[0])]
    order = order[np.argsort(ctx.types[order], kind="stable")]
    types = ctx.types[order]
    starts = np.flatnonzero(np.r_[True, types[1:] != types[:-1]])
    counts = np.diff(np.r_[starts, types.shape[0]])
    take = np.maximum(1, np.floor(counts * (m / live.shape[0]))).astype(np.int64)
    rank = np.arange(types.shape[0]) - np.repeat(starts, counts)
    chosen = order[rank < np.repeat(take, counts)]
    w = ctx.weights
    type_weight = np.bincount(ctx.types[live], weights=w[live],
                              minlength=ctx.type_table.shape[0])
    sample_weight = np.bincount(ctx.types[chosen], weights=w[chosen],
                                minlength=ctx.type_table.shape[0])
    w_rows = np.zeros_like(w)
    w_rows[chosen] = w[chosen] * (type_weight / np.maximum(sample_weight, 1e-300))[
        ctx.types[chosen]]
    return np.sort(chosen), w_rows


def _priced(ctx, centers, rows, prices):
    """Each row's cheapest cluster under the sample's prices, and its margin to the next."""
    k = ctx.n_clusters
    labels, regret = np.empty(rows.shape[0], np.int64), np.empty(rows.shape[0])
    for start in range(0, rows.shape[0], 65536):
        block = rows[start:start + 65536]
        priced = sq_distances(ctx.X[block], centers) + prices[ctx.types[block]]
        two = np.partition(priced, 1, axis=1)[:, :2] if k > 1 else np.c_[priced, priced]
        labels[start:start + 65536] = np.argmin(priced, axis=1)
        regret[start:start + 65536] = two[:, 1] - two[:, 0]
    return labels, regret


def _with_headroom(ctx, rows, dist, fixed):
    """Solve the relaxation with one row's weight of headroom on every categorical bound.

    Rounding moves the few fractional rows by less than a row each, so the
    headroom lets it keep the bounds exactly; if no fractional solution has
    that headroom (bounds of a few rows), the bounds are solved as they are.
    Small problems, rounded exactly, get no headroom.
    """
    margin = 0.0
    if rows.shape[0] * ctx.n_clusters > EXACT_MILP_PAIRS and ctx.cat:
        margin = float(ctx.weights[rows].max())
        lp = solve_lp(ctx, rows, ctx.weights, dist, fixed, margin=margin)
        if lp.x is not None:
            return lp
    return solve_lp(ctx, rows, ctx.weights, dist, fixed)


def _relaxation(ctx, centers, live, max_lp_variables, rng):
    """Solve the relaxation: on every live row, or on a sample and then a repair set.

    Returns the free rows, their distances, the outcome, the offsets of the
    held rows, whether every row was free, and the held rows with their labels.
    """
    k = ctx.n_clusters
    empty = fixed_offsets(ctx, live[:0], live[:0])
    if live.shape[0] * k <= max_lp_variables:
        dist = sq_distances(ctx.X[live], centers)
        lp = _with_headroom(ctx, live, dist, empty)
        return live, dist, lp, empty, True, live[:0], live[:0]
    m = max(k, max_lp_variables // k)
    sample, w_rows = _sample(ctx, live, m, rng)
    lp = solve_lp(ctx, sample, w_rows, sq_distances(ctx.X[sample], centers), empty)
    if lp.x is None:
        raise RuntimeError(f"HiGHS failed on the sample's linear programme: {lp.message}")
    labels, regret = _priced(ctx, centers, live, np.nan_to_num(lp.prices, nan=np.inf))
    size = m
    while True:
        # The rows closest to changing cluster are assigned again, exactly, with the
        # rest held; if the held rows leave no way to meet the bounds, free twice as many.
        if size < live.shape[0]:
            free_pos = np.sort(np.argpartition(regret, size - 1)[:size])
        else:
            free_pos = np.arange(live.shape[0])
        keep = np.ones(live.shape[0], bool)
        keep[free_pos] = False
        held, held_labels = live[keep], labels[keep]
        fixed = fixed_offsets(ctx, held, held_labels)
        rows = live[free_pos]
        dist = sq_distances(ctx.X[rows], centers)
        lp = _with_headroom(ctx, rows, dist, fixed)
        if lp.x is not None or size >= live.shape[0]:
            break
        size = min(live.shape[0], 2 * size)
    if lp.x is not None:
        held_cost = _cost(ctx.X[held], ctx.weights[held], held_labels, centers)
        lp = type(lp)(lp.x, lp.fun + held_cost, lp.prices, lp.status,
                      f"{lp.message} (sample of {sample.shape[0]} rows, then {rows.shape[0]} "
                      f"rows again with {held.shape[0]} held)")
    return rows, dist, lp, fixed, False, held, held_labels


def _assign(ctx, centers, live, max_lp_variables, rng):
    rows, dist, lp, fixed, exact, held, held_labels = _relaxation(
        ctx, centers, live, max_lp_variables, rng)
    if lp.x is None:
        raise RuntimeError(f"HiGHS failed on the linear programme: {lp.message}")
    labels_all = np.full(ctx.X.shape[0], -1, dtype=np.int64)
    labels_all[held] = held_labels
    x = lp.x
    labels = np.argmax(x, axis=1).astype(np.int64)
    frac = np.flatnonzero(x.max(axis=1) < 1.0 - _FRACTIONAL)
    step = _Step(labels, lp.fun, exact, int(frac.shape[0]), f"LP: {lp.message}")
    if frac.size:
        labels, status, proven = _round(ctx, rows, dist, x, labels, frac, fixed)
        step.labels, step.proven_infeasible = labels, proven
        step.status += f"; rounding {frac.shape[0]} fractional rows: {status}"
    labels_all[rows] = step.labels
    step.labels = labels_all
    return step


def _pairs(dist, sets):
    pos = np.concatenate([np.full(len(s), i) for i, s in enumerate(sets)]).astype(np.int64)
    clu = np.concatenate(sets).astype(np.int64)
    return pos, clu


def _round(ctx, rows, dist, x, labels, frac, fixed):
    """Round the fractional rows ``frac`` (positions in ``rows``) keeping the bounds.

    First an integer programme on the fractional rows alone (each may go to a
    cluster the relaxation gave it a share of, or to its 3 nearest). If no
    rounding of them meets the bounds (a small cluster's shares move in steps
    of 1/its size), the rows of the clusters left outside their band and the
    rows next to them are freed too, cheapest to move first, up to 1,000
    rows. Bounds that cannot be met then are exceeded as little as the
    allowed moves make possible; a rounding is kept only if it lowers the
    excess.

    Returns the labels of ``rows``, HiGHS's status and whether the programme
    proved that no integral assignment of these rows meets the bounds.
    """
    k = ctx.n_clusters
    if rows.shape[0] * k <= EXACT_MILP_PAIRS:
        pos, clu = np.repeat(np.arange(rows.shape[0]), k), np.tile(np.arange(k), rows.shape[0])
        out, status, _, proven = solve_milp(ctx, rows, pos, clu, dist[pos, clu], fixed,
                                            gap=1e-7)
        return (labels if out is None else out), f"exact integer programme: {status}", proven
    near = np.argsort(dist, axis=1)[:, :min(k, 3)]
    is_frac = np.zeros(rows.shape[0], bool)
    is_frac[frac] = True
    free, current, status = frac, labels, "no integer solution"
    for extra in (0, *_EXTRA_ROWS):
        if extra:
            bad = np.flatnonzero(excess(ctx, rows, current, fixed) > 1e-9)
            touches = np.isin(current, bad) | np.isin(near, bad).any(axis=1)
            others = np.flatnonzero(touches & ~is_frac)
            gap = dist[others] - dist[others, current[others]][:, None]
            gap[np.arange(others.shape[0]), current[others]] = np.inf
            pick = others[np.argsort(gap.min(axis=1), kind="stable")[:extra]]
            free = np.sort(np.concatenate([frac, pick]))
        held = np.ones(rows.shape[0], bool)
        held[free] = False
        base = fixed_offsets(ctx, rows[held], current[held])
        base = type(base)(base.size + fixed.size,
                          [a + b for a, b in zip(base.counts, fixed.counts, strict=True)],
                          [a + b for a, b in zip(base.sums, fixed.sums, strict=True)])
        sets = [np.union1d(np.flatnonzero(x[i] > 1e-9), near[i]) if is_frac[i]
                else np.union1d([current[i]], near[i]) for i in free]
        pos, clu = _pairs(dist, sets)
        out, message, met, _ = solve_milp(ctx, rows[free], pos, clu, dist[free[pos], clu],
                                          base)
        if out is None:
            continue
        new = current.copy()
        new[free] = out
        if extra and excess(ctx, rows, new, fixed).sum() >= excess(
                ctx, rows, current, fixed).sum():
            continue
        current, status = new, f"integer programme on {free.shape[0]} rows: {message}"
        if met:
            break
    return current, status, False


# ------------------------------------------------------------------------------ the alternation


def _means(X, weights, labels, k):
    sizes = np.bincount(labels, weights=weights, minlength=k)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, labels, X * weights[:, None])
    return sums / np.maximum(sizes, 1e-300)[:, None]


def _cost(X, weights, labels, centers):
    total = 0.0
    for start in range(0, X.shape[0], 65536):
        diff = X[start:start + 65536] - centers[labels[start:start + 65536]]
        total += float(np.dot(weights[start:start + 65536], np.einsum("ij,ij->i", diff, diff)))
    return total


def solve(X, centers, bounds, *, max_iter=1, tol=1e-4, max_lp_variables=300_000,
          random_state=None):
    """Alternate bounded assignments and centres from ``centers`` (validated inputs).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    centers : ndarray of shape (n_clusters, n_features), float64
    bounds : BoundSet
    max_iter, tol, max_lp_variables, random_state
        As in :func:`fair_assignment`.

    Returns
    -------
    BoundedAssignment
    """
    rng = check_random_state(random_state)
    k = centers.shape[0]
    ctx = make_context(X, bounds, k)
    live = np.flatnonzero(ctx.weights > 0)
    if live.shape[0] < k:
        raise ValueError(
            f"n_samples={live.shape[0]} (of positive weight) should be >= n_clusters={k}."
        )
    check_rare_values(bounds, live, k)
    dead = np.flatnonzero(ctx.weights <= 0)
    best, history, previous = None, [], None
    for it in range(max_iter):
        step = _assign(ctx, centers, live, max_lp_variables, rng)
        labels = step.labels
        if dead.size:
            labels[dead] = _nearest(X[dead], centers)
        means = _means(X, ctx.weights, labels, k)
        inertia = _cost(X, ctx.weights, labels, means)
        check = from_codes(bounds, labels, k)
        if it == 0 and not check.satisfied:
            explain_infeasible(ctx, bounds, live, check, exact=step.exact,
                               proven=step.proven_infeasible)
        result = BoundedAssignment(labels, means, inertia, _cost(X, ctx.weights, labels, centers),
                                   step.lp_cost, it + 1, (), check, step.exact, step.n_rounded,
                                   step.status)
        history.append(inertia)
        key = (round(check.violation, 9), inertia)
        if best is None or key < (round(best.check.violation, 9), best.inertia):
            best = result
        if previous is not None and inertia >= previous * (1.0 - tol):
            break
        previous, centers = inertia, means
    final = BoundedAssignment(best.labels, best.centers, best.inertia, best.assignment_cost,
                              best.lp_cost, len(history), tuple(history), best.check,
                              best.exact, best.n_rounded, best.status)
    if not final.satisfied:
        warnings.warn(
            f"The rounded assignment leaves a violation of {final.violation:.3g} "
            f"(bounds as asked: {final.check.summary()}). An integral assignment meeting "
            "them may exist: rounding keeps most rows where the linear programme put them.",
            BoundNotMetWarning, stacklevel=3,
        )
    return final


# ------------------------------------------------------------------------------ public entry


def check_common(max_iter, tol, max_lp_variables):
    """Check the solver's parameters shared by the function and the estimator."""
    check_int("max_iter", max_iter, 1)
    check_real("tol", tol)
    check_int("max_lp_variables", max_lp_variables, 1)


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


def fair_assignment(X, centers, sensitive_features, *, max_deviation, kind="additive",
                    numeric_bound=None, sample_weight=None, numeric_sensitive="auto",
                    intersections=None, max_iter=1, tol=1e-4, max_lp_variables=300_000,
                    random_state=None):
    """Assign rows to centres at the least K-Means cost with every cluster's mix within bounds.

    For every cluster ``C`` and every value ``v`` of every categorical
    sensitive attribute, additive bounds ask
    ``|share_C(v) - share_X(v)| <= max_deviation``; multiplicative ones (Bera,
    Chakrabarty, Flores and Negahbani, "Fair Algorithms for Clustering",
    NeurIPS 2019) ``(1 - max_deviation) p <= share_C(v) <= p / (1 - max_deviation)``
    with ``p = share_X(v)``. ``numeric_bound`` bounds the standardised cluster
    means of numeric attributes. Every cluster is non-empty.

    The assignment minimises ``sum_i w_i ||x_i - center_{label_i}||^2`` as a
    linear programme (scipy's HiGHS; one variable per row and cluster), then
    rounds the few rows it leaves fractional by an integer programme on them
    alone that keeps the bounds exactly, so the result usually meets them with
    no violation; what is left is reported (``violation``) and warned about.
    With ``max_iter > 1`` the centres become the clusters' means and the rows
    are assigned again, while the cost falls by more than ``tol``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive features.
    centers : array-like of shape (n_clusters, n_features)
        Starting centres: ``FairKM(...).cluster_centers_``,
        ``KMeans(...).cluster_centers_`` or your own.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
            Series or DataFrame
        One column per sensitive attribute.
    max_deviation : float, dict or None
        The bound on every categorical attribute, ``{name: bound}`` for some
        (the others are reported, not bounded), or None (no categorical bound).
        Additive: a share distance, >= 0. Multiplicative: in [0, 1).
    kind : {"additive", "multiplicative"}, default="additive"
        How ``max_deviation`` reads.
    numeric_bound : float, dict or None, default=None
        Bound on ``|mean_C(z)|``, ``z`` a numeric attribute standardised over
        the dataset (standard deviations); None leaves numeric attributes free.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights: in the cost and in the shares. Rows of weight 0 go to
        their nearest centre.
    numeric_sensitive : "auto", bool or list, default="auto"
        Which attributes are numeric (as in :class:`fairkm.FairKM`).
    intersections : sequence of sequence of str, default=None
        Combined attributes (``[("sex", "race")]``), bounded like the others.
    max_iter : int, default=1
        Number of assignments at most; 1 assigns to ``centers`` only.
    tol : float, default=1e-4
        Stop when an assignment lowers the K-Means cost by no more than
        ``tol`` times its value.
    max_lp_variables : int, default=300_000
        Largest programme solved at once (rows x clusters). Beyond it, the
        programme is solved on a sample of ``max_lp_variables // n_clusters``
        rows stratified by the attributes' combined values, whose prices
        assign every row; the same number of rows, those closest to changing
        cluster, are then assigned again exactly with the rest held, which
        restores the bounds on the whole data.
    random_state : int, RandomState instance or None, default=None
        Seeds the sample (only used beyond ``max_lp_variables``).

    Returns
    -------
    BoundedAssignment
        ``labels``, ``centers``, ``inertia``, ``violation``, ``check`` (per
        attribute, with the worst cluster), ``n_iter``, ``lp_cost``,
        ``status``, ...

    Raises
    ------
    InfeasibleBoundError
        (a ``ValueError``) When no integral assignment to non-empty clusters
        can meet the bounds; its message and ``tightest`` give the tightest
        bound found that can be met.

    Warns
    -----
    BoundNotMetWarning
        When the rounding leaves a violation that was not proved unavoidable.

    See Also
    --------
    BoundedKMeans : The estimator (seeding, alternation, ``predict``).
    check_bounds : Measure any clustering against the bounds.

    Notes
    -----
    The relaxation is always feasible (each row split evenly over the
    clusters gives every cluster the dataset's mix), so a bound can only fail
    on whole rows. When it does, an integer programme decides whether any
    assignment meets it (on every row up to 200 rows x clusters, else on the
    number of rows of each combination of values in each cluster, unit weights
    only), and the tightest bound is bisected.

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
    check_common(max_iter, tol, max_lp_variables)
    X = np.ascontiguousarray(check_array(X, dtype=np.float64, input_name="X"))
    centers = _check_centers(centers, X.shape[1])
    if sensitive_features is None:
        raise TypeError("sensitive_features must be given: the bounds are on them.")
    bounds = resolve_bounds(sensitive_features, X.shape[0], max_deviation=max_deviation,
                            kind=kind, numeric_bound=numeric_bound,
                            sample_weight=sample_weight, numeric_sensitive=numeric_sensitive,
                            intersections=intersections)
    return solve(X, centers, bounds, max_iter=max_iter, tol=tol,
                 max_lp_variables=max_lp_variables, random_state=random_state)
