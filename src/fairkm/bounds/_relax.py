"""The linear relaxation on every row, by prices: a few rows solved, the rest checked.

Up to ``max_lp_variables`` (row, cluster) pairs the programme is solved on
every row at once. Beyond, the bounds see rows only through their type, so a
price per (type, cluster) (the duals of the bound rows) assigns every row:
each goes where its squared distance plus its price is least, and only rows
close to a tie can change cluster when the prices move. So:

1. prices: none at first (or those of the previous centres when
   alternating);
2. the rows nearest to a tie under the prices are freed, each with the
   clusters it is nearly tied between; the others are grouped in blocks of
   one type, best and second cluster and similar margin, which the programme
   may move or split as a whole (so it is always feasible, and sees every
   row); the programme is solved on the free rows and the blocks. It holds
   at most ``max_pairs`` pairs: past them the blocks are coarser (fewer
   margin bins, then one per type and cheapest cluster), and when even those
   do not fit (many types) no programme is solved: the prices so far go to
   the Lagrangian (below);
3. its duals price every row again. If every held row is still where its
   priced cost is least, and no free row prefers a cluster it was not allowed,
   the primal and the dual solutions satisfy complementary slackness on the
   whole data: the relaxation is solved on every row. Otherwise the rows that
   break it by the least are freed and step 2 repeats with the new prices,
   until the cost is within ``_CLOSE`` of the bound.

Whatever the outcome, the prices give a lower bound on the cost of any
assignment meeting the bounds (:mod:`fairkm.bounds._model`): the certificate.
When the programmes stop short of certifying the solution, the bound is
raised from their prices by maximising the Lagrangian itself
(:mod:`fairkm.bounds._dual`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairkm.utils._sums import weighted_sum

from ._dual import raise_bound
from ._kernels import group_sums, priced_pass
from ._model import INFEASIBLE, Prices, Problem, held_offsets, solve_lp

__all__ = ["Relaxation", "lower_bound", "relax"]

# Pricing rounds at most before the relaxation is left uncertified: past two, the Lagrangian
# maximised from their prices (_dual) gives a bound and a start that more rounds did not
# improve (measured in docs/bounds.md, "Scale").
_ROUNDS = 2
_CANDIDATES = 3        # pairs per free row the budget plans for
_FREE_ROWS = 5_000     # rows freed in the first round (more when the check fails)
# Stop once the relaxation's cost is within this fraction of the proven lower bound.
_CLOSE = 1e-6
# Margin bins of the groups of held rows (factor 2 apart), finest first; 0: one group per
# type and best cluster.
_BINS = (16, 4, 1, 0)
_BLOCK = 65536


@dataclass
class Relaxation:
    """The relaxation's solution on every live row.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,), int64
        Each live row's cluster: where it is held, or its largest share (when
        not certified, its cheapest cluster under ``prices``); -1 for rows of
        weight 0.
    free : ndarray of shape (m,), int64
        The rows the last programme solved.
    pos, clu, x : ndarray of shape (n_pairs,)
        Their allowed pairs (position in ``free``, cluster) and shares.
    prices : Prices
        The last programme's prices, or, when it was not certified, those that
        raise the Lagrangian bound from them (:mod:`fairkm.bounds._dual`).
    value : float
        The relaxation's cost: the programme's optimum plus the held rows' cost
        (the relaxation's optimum when certified, else above it); nan when no
        programme fitted in ``max_pairs``.
    bound : float
        The best Lagrangian lower bound found (see :func:`lower_bound`).
    certified : bool
        Whether the solution was shown optimal on every row.
    exact : bool
        Whether the programme was solved on every row at once.
    rounds : int
        Programmes solved on the free rows.
    """

    labels: np.ndarray
    free: np.ndarray
    pos: np.ndarray
    clu: np.ndarray
    x: np.ndarray
    prices: Prices
    value: float
    bound: float
    certified: bool
    exact: bool
    rounds: int


def lower_bound(problem, dist, live, prices):
    """Lagrangian lower bound on the cost of any assignment of ``live`` meeting the bounds.

    ``sum_i w_i min_c (d[i, c] + price[i, c]) + bonus`` for prices from
    non-negative duals (weak duality).

    Parameters
    ----------
    problem : Problem
    dist : ndarray of shape (n_samples, n_clusters)
        Squared distances of every row.
    live : ndarray of shape (n_live,), int64
        The rows of positive weight.
    prices : Prices

    Returns
    -------
    float
    """
    total = 0.0
    for start in range(0, live.shape[0], _BLOCK):
        rows = live[start:start + _BLOCK]
        priced = dist[rows] + prices.of(problem, rows)
        total += weighted_sum(priced.min(axis=1), problem.weights[rows])
    return total + prices.bonus


def _all_pairs(n_rows, k):
    return np.repeat(np.arange(n_rows), k), np.tile(np.arange(k), n_rows)


def _numeric(problem):
    """Return the bounded numeric attributes' values as one (n_numeric, n_samples) array."""
    n = problem.weights.shape[0]
    if not problem.num:
        return np.zeros((0, n))
    return np.ascontiguousarray(np.stack([z for z, _ in problem.num]))


def _groups(problem, rows, best, second, regret, scale, bins):
    """Group held rows of one type, best and second cluster, and similar margin between them.

    The margins are binned on a logarithmic scale (factor 2 up from ``scale``;
    ``bins`` of them, the last holding every larger margin), so rows nearly
    tied between two clusters fall in small groups and rows far from any tie
    in large ones. ``bins=0``: one group per type and best cluster.
    """
    k = problem.n_clusters
    key = problem.types[rows] * k + best
    if bins:
        part = np.clip(np.floor(np.log2(np.maximum(regret, scale) / scale)), 0, bins - 1)
        key = (key * k + second) * bins + part.astype(np.int64)
    _, group = np.unique(key, return_inverse=True)
    return group.reshape(-1)


def _n_groups(group):
    return int(group.max()) + 1 if group.size else 0


def _proxy(problem, dist, z, free, held, group):
    """Build a problem whose rows are the free rows, then one per group of held rows.

    A group is a row of the group's weight and type, whose cost per cluster is
    its rows' mean: it can move, or split, as a block. So the programme stays
    feasible (a block can split evenly) whatever the prices that grouped it.
    """
    k = problem.n_clusters
    n_groups = _n_groups(group)
    g_weight, g_cost = np.zeros(n_groups), np.zeros((n_groups, k))
    g_z = np.zeros((z.shape[0], n_groups))
    group_sums(held, group, problem.weights, dist, z, g_weight, g_cost, g_z)
    g_type = np.zeros(n_groups, dtype=np.int64)
    g_type[group] = problem.types[held]
    types = np.concatenate([problem.types[free], g_type])
    weights = np.concatenate([problem.weights[free], g_weight])
    cat = [(problem.type_table[types, a], lower, upper)
           for a, (_, lower, upper) in enumerate(problem.cat)]
    num = [(np.concatenate([z[a, free], g_z[a] / g_weight]), bound)
           for a, (_, bound) in enumerate(problem.num)]
    proxy = Problem(None, weights, problem.unit, cat, num, types, problem.type_table, k,
                    problem.w_min, balance=problem.balance)
    return proxy, np.concatenate([dist[free], g_cost / g_weight[:, None]])


class _Pricing:
    """Every live row priced at once: best and second cluster, margin, least cost."""

    def __init__(self, problem, dist, live, z, prices, labels=None):
        m = live.shape[0]
        self.best = np.empty(m, dtype=np.int64)
        self.second = np.empty(m, dtype=np.int64)
        self.regret, self.floor, self.at_label = np.empty(m), np.empty(m), np.empty(m)
        labels = np.full(m, -1, dtype=np.int64) if labels is None else labels
        priced_pass(dist, live, problem.types, prices.base, z, prices.slope, labels,
                    self.best, self.second, self.regret, self.floor, self.at_label)


def _largest_share(n_rows, pos, clu, x):
    """Per free row, the cluster holding its largest share."""
    order = np.lexsort((-x, pos))
    first = order[np.r_[True, pos[order][1:] != pos[order][:-1]]]
    out = np.empty(n_rows, dtype=np.int64)
    out[pos[first]] = clu[first]
    return out


def _split_groups(labels, held, group, g_share, g_whole, dist, weights):
    """Share out the rows of each group the programme split, as it split the group's weight.

    A group's rows are alike (one type, the same best and second clusters,
    a similar margin): each cluster the group has a share of takes about that
    share of its weight, the rows cheapest there first. So whole rows keep the
    relaxation's counts as nearly as they can, and the rounding has little to
    repair.
    """
    split = np.flatnonzero(~g_whole)
    if not split.size:
        return
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(g_share.shape[0] + 1))
    for g in split:
        rows = held[order[starts[g]:starts[g + 1]]]
        shares = g_share[g]
        clusters = np.flatnonzero(shares > 1e-9)
        room = shares[clusters] * weights[rows].sum()
        # The rows go where they cost least against the clusters' other rows, in turn.
        cost = dist[np.ix_(rows, clusters)]
        regret = cost - cost.min(axis=1, keepdims=True)
        taken = np.zeros(rows.shape[0], dtype=bool)
        for j in np.argsort(-room):
            free = np.flatnonzero(~taken)
            if not free.size:
                break
            want = free[np.argsort(regret[free, j] - regret[free].mean(axis=1),
                                   kind="stable")]
            filled = np.cumsum(weights[rows[want]])
            chosen = want[:max(1, int(np.searchsorted(filled, room[j] - 1e-9)) + 1)]
            labels[rows[chosen]] = clusters[j]
            taken[chosen] = True


def relax(problem, dist, live, max_pairs, start=None, programmes=None):
    """Solve the relaxation on the live rows (every row, or by prices beyond ``max_pairs``).

    Parameters
    ----------
    problem : Problem
    dist : ndarray of shape (n_samples, n_clusters)
        Squared distances of every row to the centres.
    live : ndarray of shape (n_live,), int64
        The rows of positive weight.
    max_pairs : int
        Largest programme solved at once, in (row, cluster) pairs (free rows'
        and blocks' together).
    start : Prices or None
        Prices to start from (beyond ``max_pairs``).
    programmes : Programmes or None
        The HiGHS of the earlier programmes of the same :func:`fairkm.bounds.solve`:
        a programme of the same constraints as its last starts from that
        one's basis (:func:`fairkm.bounds._model.solve_lp`).

    Returns
    -------
    Relaxation

    Raises
    ------
    RuntimeError
        When HiGHS fails on a programme that is feasible.
    """
    k = problem.n_clusters
    n = live.shape[0]
    labels = np.full(problem.weights.shape[0], -1, dtype=np.int64)
    empty = held_offsets(problem, live[:0], live[:0])
    if n * k <= max_pairs:
        pos, clu = _all_pairs(n, k)
        lp = solve_lp(problem, live, pos, clu, dist[live[pos], clu], empty,
                      programmes=programmes)
        if lp.x is None:
            raise RuntimeError(f"HiGHS failed on the linear programme: {lp.message}")
        labels[live] = np.argmax(lp.x.reshape(n, k), axis=1)
        bound = min(lower_bound(problem, dist, live, lp.prices), lp.fun)
        return Relaxation(labels, live, pos, clu, lp.x, lp.prices, lp.fun, bound, True, True, 1)
    prices = start if start is not None else Prices(
        np.zeros((problem.n_types, k)), np.zeros((len(problem.num), k)), 0.0)
    z = _numeric(problem)
    scale = float(np.mean(dist[live[:4096]])) or 1.0
    tol = 1e-6 * scale
    n_free = max(1, min(n, max_pairs // _CANDIDATES, _FREE_ROWS))
    forced = np.zeros(n, bool)
    best_bound, result, lp, coarse = -np.inf, None, None, False
    now = _Pricing(problem, dist, live, z, prices)
    for round_ in range(1, _ROUNDS + 1):
        best, second, regret = now.best, now.second, now.regret
        room = max(0, n_free - int(forced.sum()))
        candidates = np.flatnonzero(~forced)
        if room < candidates.shape[0]:
            candidates = (candidates[np.argpartition(regret[candidates], room - 1)[:room]]
                          if room else candidates[:0])
        free_pos = np.sort(np.concatenate([np.flatnonzero(forced), candidates]))
        theta = float(regret[candidates].max()) if candidates.size else 0.0
        # Each free row may go to the clusters within twice the cut-off of its best one
        # (at least its two best); a row freed because it broke the optimality check
        # may go anywhere.
        free = live[free_pos]
        at = np.arange(free_pos.shape[0])
        priced = dist[free] + prices.of(problem, free)
        allowed = ((priced - now.floor[free_pos, None] <= 2.0 * theta + tol)
                   | forced[free_pos, None])
        allowed[at, best[free_pos]] = True
        allowed[at, second[free_pos]] = True
        held_mask = np.ones(n, bool)
        held_mask[free_pos] = False
        held_pos = np.flatnonzero(held_mask)
        held = live[held_pos]
        # The finest blocks that fit in the programme beside the free rows.
        left = max_pairs - int(allowed.sum())
        for bins in _BINS:
            group = _groups(problem, held, best[held_pos], second[held_pos],
                            regret[held_pos], max(theta, tol), bins)
            if _n_groups(group) * k <= left:
                break
            coarse = True
        else:
            # Even one block per type and cluster overflows it (many types): the prices
            # so far go to the Lagrangian below.
            break
        proxy, proxy_dist = _proxy(problem, dist, z, free, held, group)
        n_groups = proxy.types.shape[0] - free_pos.shape[0]
        f_pos, f_clu = np.nonzero(allowed)
        g_pos, g_clu = _all_pairs(n_groups, k)
        pos = np.concatenate([f_pos, free_pos.shape[0] + g_pos])
        clu = np.concatenate([f_clu, g_clu])
        pseudo = np.arange(proxy.types.shape[0])
        outcome = solve_lp(proxy, pseudo, pos, clu, proxy_dist[pos, clu],
                           held_offsets(proxy, pseudo[:0], pseudo[:0]), programmes=programmes)
        if outcome.status == INFEASIBLE:
            # The free rows may go only to the clusters near their best: when every row of a
            # value with a lower band is free and kept from a cluster, no share there meets
            # the band, though the relaxation on every row can. The last programme solved (or,
            # in the first round, the prices so far) goes to the Lagrangian below.
            break
        if outcome.x is None:
            raise RuntimeError(f"HiGHS failed on the linear programme: {outcome.message}")
        lp = outcome
        prices = lp.prices
        n_f = f_pos.shape[0]
        # Held rows: each group is whole in one cluster, or split.
        g_share = lp.x[n_f:].reshape(n_groups, k)
        g_whole = g_share.max(axis=1) >= 1.0 - 1e-6
        row_label = np.full(n, -1, dtype=np.int64)
        row_label[held_pos] = np.where(g_whole[group], np.argmax(g_share, axis=1)[group], -1)
        now = _Pricing(problem, dist, live, z, prices, row_label)
        best_bound = max(best_bound, weighted_sum(now.floor, problem.weights[live])
                         + prices.bonus)
        margin = np.where(row_label >= 0, now.at_label - now.floor, np.inf)
        x_free = lp.x[:n_f]
        free_best = np.full(free_pos.shape[0], np.inf)
        np.minimum.at(free_best, f_pos, dist[free[f_pos], f_clu]
                      + prices.of(problem, free)[f_pos, f_clu])
        margin[free_pos] = free_best - now.floor[free_pos]
        broken = margin > tol
        labels[held] = np.where(row_label[held_pos] >= 0, row_label[held_pos],
                                now.best[held_pos])
        _split_groups(labels, held, group, g_share, g_whole, dist, problem.weights)
        labels[free] = _largest_share(free_pos.shape[0], f_pos, f_clu, x_free)
        certified = not broken.any()
        result = Relaxation(labels.copy(), free, f_pos, f_clu, x_free, prices, lp.fun,
                            min(best_bound, lp.fun), certified, False, round_)
        if certified or lp.fun - best_bound <= _CLOSE * abs(best_bound):
            break
        # Keep free the rows the programme split; free those that broke the check by
        # the least (the others go to their new best cluster when regrouped).
        split = np.zeros(n, bool)
        split[free_pos[f_pos[(x_free > 1e-6) & (x_free < 1.0 - 1e-6)]]] = True
        worst = np.flatnonzero(broken & ~split)
        keep = max(0, n_free // 2 - int(split.sum()))
        if worst.shape[0] > keep:
            worst = worst[np.argpartition(margin[worst], keep - 1)[:keep]] if keep else worst[:0]
        forced = split
        forced[worst] = True
        n_free = min(n, max(n_free, 2 * int(forced.sum())))
    if result is None:
        # No programme fitted in max_pairs (or the first could not meet the bands): the
        # Lagrangian alone, from the starting prices.
        labels[live] = now.best
        bound = lower_bound(problem, dist, live, prices)
        result = Relaxation(labels, live[:0], live[:0], live[:0], np.zeros(0), prices, np.nan,
                            bound, False, False, 0)
    if not result.certified:
        # The prices certify less than the programme reached: maximise the Lagrangian from
        # them. Its prices are near the relaxation's optimum on every row, so each row's
        # cheapest cluster under them is a better start for whole rows than the programme's
        # blocks (docs/bounds.md, "Scale").
        raised, prices = raise_bound(problem, dist, live, result.prices, result.bound,
                                     lower_bound, rows=None if lp is None else lp.rows,
                                     thorough=coarse)
        result.bound = raised if np.isnan(result.value) else min(raised, result.value)
        if prices is not result.prices:
            result.prices = prices
            result.labels[live] = _Pricing(problem, dist, live, z, prices).best
    return result
