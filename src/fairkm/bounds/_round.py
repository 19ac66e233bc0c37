"""From the relaxation to whole rows, keeping the bounds exactly.

First by local search (:mod:`fairkm.bounds._search`): each row to its largest
share, then the cheapest moves and swaps that remove what that breaks, then
the moves that lower the cost while every band holds. When the search cannot
meet the bounds (tight bounds where only some cluster sizes work), by an
integer programme, as follows.

The relaxation's basic solution splits few rows, about as many as there are
bound rows that bind, but the rows it keeps whole leave no slack on those
bounds: rounding the split rows alone often cannot keep them (a small
cluster's shares move in steps of one row over its size, and only some sizes
admit a whole count of every value). So the integer programme is solved on
the split rows *and* the rows cheapest to move, priced by the relaxation's
duals (a reduced cost of 0 is a move the relaxation is indifferent to): for
every cluster and every type (or, with many types, every value), the rows
cheapest to bring in and to take out, and the cheapest moves overall. Every
other row stays where the relaxation put it. The programme's own relaxation
then costs what the whole relaxation costs, so the rounding pays only for
whole rows. When it finds no assignment meeting the bounds, the set of
movable rows grows.

Small problems (up to ``EXACT_PAIRS`` pairs) are solved as one integer
programme on every row: the integer optimum, or a proof that none exists.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment, linprog

from fairkm.utils._sensitive import CATEGORICAL
from fairkm.utils._sums import weighted_sum

from ._model import excess, held_offsets, live_rows, solve_milp
from ._search import SearchSpace, local_search

__all__ = ["EXACT_PAIRS", "Rounded", "move_to_counts", "round_by_search", "round_exact",
           "round_relaxation", "soft_round", "swap_numeric"]

# Up to this many (row, cluster) pairs the integral problem is one integer programme.
EXACT_PAIRS = 1000
# Rows the rounding may move, per attempt: spread over every (cluster, type) (with many
# types, every (cluster, value)) as the rows cheapest to bring in and to take out, plus
# the cheapest moves overall.
_BUDGETS = (8000, 32000)
# The rounding's programme may stop within this fraction of the whole assignment's cost
# (its own relative gap is on the movable rows' cost, a small part of the whole).
_GAP = 1e-5
_FRACTIONAL = 1e-6
# Types up to this many rows are moved to their target counts by an exact assignment of
# all their rows.
_WHOLE_TYPE = 2000
# Beyond this many (row, place) entries the assignment of a type's movable rows is solved
# as the transportation problem it is (rows x clusters), not over one column per place.
_SLOTS_AT_ONCE = 4_000_000
# Swaps at most per cluster in the repair of numeric means (each removes the most excess it can).
_SWAPS = 40
# (row inside, row outside) pairs weighed per swap at most.
_SWAP_PAIRS = 4_000_000


@dataclass
class Rounded:
    """Integral labels of the live rows and how they were found."""

    labels: np.ndarray
    status: str
    met: bool
    proven_infeasible: bool = False
    n_rounded: int = 0


def round_exact(problem, dist, live):
    """Solve the integer programme on every live row and cluster (small problems)."""
    k = problem.n_clusters
    pos, clu = np.repeat(np.arange(live.shape[0]), k), np.tile(np.arange(k), live.shape[0])
    empty = held_offsets(problem, live[:0], live[:0])
    labels, status, met, proven = solve_milp(problem, live, pos, clu, dist[live[pos], clu],
                                             empty, gap=1e-7)
    out = np.full(problem.weights.shape[0], -1, dtype=np.int64)
    if labels is not None:
        out[live] = labels
    return Rounded(out, f"integer programme on every row: {status}", met, proven,
                   live.shape[0])


def round_by_search(problem, bounds, dist, live, relaxation):
    """Round the relaxation by local search from each row's largest share.

    Returns
    -------
    Rounded
        ``met`` says whether the search met the bounds.
    """
    space = SearchSpace.build(bounds, problem, live)
    labels, met = local_search(space, live_rows(dist, live), relaxation.labels[live])
    out = relaxation.labels.copy()
    out[live] = labels
    moved = int(np.count_nonzero(labels != relaxation.labels[live]))
    status = (f"local search from the largest shares: {moved} row(s) moved"
              + ("" if met else ", bounds not met"))
    return Rounded(out, status, met, n_rounded=_n_split(relaxation))


def swap_numeric(problem, bounds, dist, live, labels):
    """Meet the share bands alone, then bring numeric means within bounds by swaps.

    The share bands first, by the local search on them alone when
    ``labels`` break one. Then two rows of one type and one weight trade places between two clusters
    without changing any cluster's size or share of any value, only its sum
    of ``w z``: each step takes the cluster furthest outside and makes
    the swap with any other cluster that removes the most excess, the
    cheapest of those removing at least half of that; then the local search
    lowers the cost while every bound holds. Deterministic (ties go to the
    lowest positions).

    Returns
    -------
    Rounded
        ``met`` says whether every bound holds.
    """
    k = problem.n_clusters
    d = live_rows(dist, live)
    cur = labels[live].copy()
    if problem.cat and excess(replace(problem, num=[]), live, cur).max() > 1e-9:
        shares_only = replace(bounds, attributes=[
            a if a.kind == CATEGORICAL else replace(a, delta=np.nan) for a in bounds.attributes])
        cur, met = local_search(SearchSpace.build(shares_only, problem, live), d, cur)
        if not met:
            return Rounded(labels, "the share bands alone: not met", False)
    w = problem.weights[live]
    z = np.stack([values[live] for values, _ in problem.num], axis=1)
    cap = np.stack([np.broadcast_to(bound, (k,)) for _, bound in problem.num], axis=1)
    size = np.bincount(cur, weights=w, minlength=k)
    zsum = np.stack([np.bincount(cur, weights=w * z[:, b], minlength=k)
                     for b in range(z.shape[1])], axis=1)
    # Rows alike for the shares: one type and one weight.
    kind = np.unique(np.stack([problem.types[live], w]), axis=1,
                     return_inverse=True)[1].reshape(-1)

    def over(sums, c):
        return np.maximum(np.abs(sums) - cap[c] * size[c, None], 0.0).sum(axis=-1)

    for _ in range(_SWAPS * k):
        left = over(zsum, np.arange(k))
        a = int(np.argmax(left))
        if left[a] <= 1e-9 * problem.w_min:
            break
        inside, outside = np.flatnonzero(cur == a), np.flatnonzero(cur != a)
        if inside.shape[0] * outside.shape[0] > _SWAP_PAIRS:
            # The rows that push a's means out most, and the rows outside that pull most.
            pull = z @ np.sign(zsum[a])
            inside = np.sort(inside[np.argsort(-pull[inside], kind="stable")[:1000]])
            outside = np.sort(outside[np.argsort(pull[outside], kind="stable")[
                :_SWAP_PAIRS // inside.shape[0]]])
        same = kind[inside][:, None] == kind[outside][None, :]
        # Moving w (z_j - z_i) into a and out of j's cluster.
        shift = w[inside, None, None] * (z[outside][None] - z[inside][:, None])
        c = cur[outside]
        gain = (left[a] + left[c][None, :] - over(zsum[a] + shift, a)
                - over(zsum[c][None] - shift, c))
        gain = np.where(same, gain, -np.inf)
        best = gain.max()
        if not best > 1e-12 * problem.w_min:
            break
        dcost = w[inside, None] * (d[outside, a][None, :] + d[inside][:, c]
                                   - d[inside, a][:, None] - d[outside, c][None, :])
        pick = np.where(gain >= 0.5 * best, dcost, np.inf)
        r, s = np.unravel_index(int(np.argmin(pick)), pick.shape)
        i, j, b = inside[r], outside[s], cur[outside[s]]
        zsum[a] += shift[r, s]
        zsum[b] -= shift[r, s]
        cur[i], cur[j] = b, a
    out = labels.copy()
    out[live] = cur
    if excess(problem, live, cur).max() > 1e-9:
        return Rounded(out, "swaps for the numeric means: bounds not met", False)
    out[live], _ = local_search(SearchSpace.build(bounds, problem, live), d, cur)
    return Rounded(out, "swaps of rows alike for the shares brought the numeric means within "
                   "their bounds, then polished", True)


def _n_split(relaxation):
    """Rows the relaxation left split between clusters."""
    counts = np.bincount(relaxation.pos[(relaxation.x > _FRACTIONAL)
                                        & (relaxation.x < 1.0 - _FRACTIONAL)],
                         minlength=relaxation.free.shape[0])
    return int(np.count_nonzero(counts))


def _moves(problem, dist, live, prices, cur):
    """Per row and cluster, the priced cost of moving there from ``cur`` (inf: staying)."""
    priced = live_rows(dist, live) + prices.of(problem, live)
    at = np.arange(live.shape[0])
    move = priced - priced[at, cur][:, None]
    move[at, cur] = np.inf
    return move, priced - priced.min(axis=1, keepdims=True)


def _smallest(values, m):
    """Positions of the ``m`` smallest finite entries of ``values``."""
    finite = np.flatnonzero(np.isfinite(values))
    if finite.shape[0] > m:
        finite = finite[np.argpartition(values[finite], m - 1)[:m]]
    return finite


def _groups(codes):
    order = np.argsort(codes, kind="stable")
    edges = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1], True])
    return [order[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _in_and_out(allowed, groups, cur, move, per_group):
    """For every group of rows and cluster: the rows cheapest to bring in and to take out."""
    k = move.shape[1]
    elsewhere = np.argmin(move, axis=1)
    for rows in groups:
        for c in range(k):
            allowed[rows[_smallest(move[rows, c], per_group)], c] = True
            inside = rows[cur[rows] == c]
            out = inside[_smallest(move[inside, elsewhere[inside]], per_group)]
            allowed[out, elsewhere[out]] = True


def _movable(problem, live, cur, move, budget):
    """Return where each row (position in ``live``) may move in the rounding."""
    n, k = move.shape
    allowed = np.zeros((n, k), bool)
    types = problem.types[live]
    per_type = budget // (4 * np.unique(types).shape[0] * k)
    if per_type >= 2:
        _in_and_out(allowed, _groups(types), cur, move, per_type)
    n_values = sum(lower.shape[-1] for _, lower, _ in problem.cat) + 2 * len(problem.num)
    per_value = max(1, budget // (4 * max(n_values, 1) * k))
    for codes, _, _ in problem.cat:
        _in_and_out(allowed, _groups(codes[live]), cur, move, per_value)
    for z, _ in problem.num:
        values = z[live]
        _in_and_out(allowed, [np.flatnonzero(values > 0), np.flatnonzero(values < 0)], cur,
                    move, per_value)
    flat = _smallest(move.reshape(-1), budget // 4)
    allowed[flat // k, flat % k] = True
    return allowed


def _solve_on(problem, dist, live, cur, allowed, soft):
    rows = np.flatnonzero(allowed.any(axis=1))
    allowed[rows, cur[rows]] = True
    pos, clu = np.nonzero(allowed[rows])
    free = live[rows]
    held_mask = np.ones(live.shape[0], bool)
    held_mask[rows] = False
    held = held_offsets(problem, live[held_mask], cur[held_mask])
    w = problem.weights
    total = weighted_sum(dist[live, cur], w[live])
    own = weighted_sum(dist[free, cur[rows]], w[free])
    gap = min(0.1, max(1e-7, _GAP * total / max(own, 1e-300)))
    out, message, met, _ = solve_milp(problem, free, pos, clu, dist[free[pos], clu], held,
                                      soft=soft, gap=gap)
    return free, held, out, message, met


def round_relaxation(problem, dist, live, relaxation):
    """Round the relaxation's split rows, moving the cheapest other rows as needed.

    Returns
    -------
    Rounded
        The labels of every row (-1 for rows of weight 0); ``met`` says
        whether they meet the bounds.
    """
    labels = relaxation.labels.copy()
    k = problem.n_clusters
    shares = np.zeros((relaxation.free.shape[0], k))
    shares[relaxation.pos, relaxation.clu] = relaxation.x
    split = shares.max(axis=1) < 1.0 - _FRACTIONAL
    n_split = int(split.sum())
    if not n_split and excess(problem, live, labels[live]).max() <= 1e-9:
        return Rounded(labels, "the relaxation is integral", True)
    cur = labels[live]
    move, reduced = _moves(problem, dist, live, relaxation.prices, cur)
    frac = np.searchsorted(live, relaxation.free[split])
    support = shares[split] > 1e-9
    nearest_two = np.argsort(reduced[frac], axis=1)[:, :min(k, 2)]
    support[np.arange(frac.shape[0])[:, None], nearest_two] = True
    status = "no integer solution found"
    for budget in _BUDGETS:
        allowed = _movable(problem, live, cur, move, budget)
        allowed[frac] |= support
        free, _, out, message, met = _solve_on(problem, dist, live, cur, allowed, soft=False)
        status = f"integer programme on {free.shape[0]} rows: {message}"
        if met:
            labels[free] = out
            return Rounded(labels, status, True, n_rounded=n_split)
    return Rounded(labels, status, False, n_rounded=n_split)


def soft_round(problem, dist, live, relaxation, labels):
    """From ``labels``: the least total excess the cheapest moves allow, then the least cost."""
    labels = labels.copy()
    cur = labels[live]
    move, _ = _moves(problem, dist, live, relaxation.prices, cur)
    allowed = _movable(problem, live, cur, move, _BUDGETS[0])
    free, held, out, message, met = _solve_on(problem, dist, live, cur, allowed, soft=True)
    if out is not None and excess(problem, free, out, held).sum() < excess(
            problem, live, cur).sum():
        labels[free] = out
    return Rounded(labels, f"least excess on {free.shape[0]} rows: {message}", met)


def move_to_counts(problem, dist, live, labels, target):
    """Move rows so that every (type, cluster) holds ``target`` rows, at the least cost.

    For each type, an exact assignment of its rows to the places (``target``
    of each cluster): on every row of the type up to ``_WHOLE_TYPE`` rows (the
    cheapest assignment with those counts), else, when its counts differ, on
    the rows of the clusters over their target cheapest to move (those
    clusters give up rows, the others take them).

    Parameters
    ----------
    problem : Problem
        With unit weights (counts are rows).
    dist : ndarray of shape (n_samples, n_clusters)
    live : ndarray of shape (n_live,), int64
    labels : ndarray of shape (n_samples,), int64
        Current labels (every live row labelled).
    target : ndarray of shape (n_types, n_clusters), int64
        Row counts to reach; each type's total is its number of live rows.

    Returns
    -------
    ndarray of shape (n_samples,), int64
    """
    labels = labels.copy()
    k = problem.n_clusters
    for rows in _groups(problem.types[live]):
        rows = live[rows]
        t = problem.types[rows[0]]
        need = target[t] - np.bincount(labels[rows], minlength=k)
        if rows.shape[0] <= _WHOLE_TYPE:
            slots = np.repeat(np.arange(k), target[t])
            r, s = linear_sum_assignment(dist[rows][:, slots])
            labels[rows[r]] = slots[s]
            continue
        if not need.any():
            continue
        gain = np.flatnonzero(need > 0)
        # Per surplus cluster, its rows cheapest to move, a few more than must go.
        pool = []
        for c in np.flatnonzero(need < 0):
            inside = rows[labels[rows] == c]
            extra = dist[inside][:, gain].min(axis=1) - dist[inside, c]
            take = min(inside.shape[0], 2 * int(-need[c]) + k)
            pool.append(inside[np.argsort(extra, kind="stable")[:take]])
        pool = np.concatenate(pool)
        own = labels[pool]
        if pool.shape[0] ** 2 > _SLOTS_AT_ONCE:
            moved = _transport(dist, pool, own, gain, need)
            if moved is not None:
                labels[pool] = moved
            continue
        stays = [np.full(int((own == c).sum() + need[c]), c) for c in np.flatnonzero(need < 0)]
        slots = np.concatenate([np.repeat(gain, need[gain]), *stays])
        matrix = dist[pool][:, slots]
        # A row may take a staying place only in its own cluster.
        staying = ~np.isin(slots, gain)
        matrix = np.where(staying[None, :] & (slots[None, :] != own[:, None]), 1e300, matrix)
        r, s = linear_sum_assignment(matrix)
        labels[pool[r]] = slots[s]
    return labels


def _transport(dist, pool, own, gain, need):
    """Labels of ``pool`` that give every cluster of ``gain`` its ``need`` rows at the least cost.

    Each row either moves to a gaining cluster or stays in its own, and each
    losing cluster ``c`` keeps ``(own == c).sum() + need[c]`` of them: a
    transportation problem (rows x (gaining clusters + own)), whose basic
    optimum, found by the dual simplex, is integral. Returns None should the
    solver fail or hand back a split row (the caller keeps its labels then).
    """
    m, g = pool.shape[0], gain.shape[0]
    width = g + 1  # the gaining clusters, then the row's own cluster
    targets = np.concatenate([np.broadcast_to(gain, (m, g)), own[:, None]], axis=1)
    cost = dist[pool[:, None], targets].reshape(-1)
    scale = float(np.abs(cost).max()) or 1.0
    var = np.arange(m * width).reshape(m, width)
    losing = np.flatnonzero(need < 0)
    keep_row = np.searchsorted(losing, own)
    A_eq = sparse.vstack([
        sparse.csr_matrix((np.ones(m * width), (np.repeat(np.arange(m), width), var.ravel())),
                          shape=(m, m * width)),
        sparse.csr_matrix((np.ones(m * g), (np.tile(np.arange(g), m), var[:, :g].ravel())),
                          shape=(g, m * width)),
        sparse.csr_matrix((np.ones(m), (keep_row, var[:, g])), shape=(losing.shape[0], m * width)),
    ], format="csr")
    keep = np.bincount(keep_row, minlength=losing.shape[0]) + need[losing]
    b_eq = np.concatenate([np.ones(m), need[gain], keep]).astype(np.float64)
    res = linprog(cost / scale, A_eq=A_eq, b_eq=b_eq, bounds=(0, 1), method="highs-ds")
    if res.status != 0:
        return None
    x = res.x.reshape(m, width)
    if np.abs(x - np.rint(x)).max() > 1e-6:
        return None
    return targets[np.arange(m), np.argmax(x, axis=1)]

