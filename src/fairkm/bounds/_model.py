"""The bounded assignment as a linear programme, and its integer versions, solved by HiGHS.

Variables, for the free rows ``F`` and the (row, cluster) pairs allowed:

* ``x[i, c]`` in [0, 1]: the share of row ``i`` assigned to cluster ``c``;
* ``z[t, c] = sum_{i in F of type t} w_i x[i, c]``: the weight of type ``t``
  in cluster ``c``, a type being one combination of the bounded categorical
  attributes' values (the bounds see a row only through its type, so the
  fairness rows have one entry per type, not per row: for Adult's five
  attributes, 656 types for 15,682 rows);
* ``s[c] = sum_t z[t, c]``: the free weight in cluster ``c``.

Rows: every free row is assigned once; ``z`` and ``s`` are defined as above;
for every cluster and value, ``count_c(v) <= upper_v * size_c`` and
``count_c(v) >= lower_v * size_c`` (sides that cannot bind are left out);
for bounded numeric attributes ``|sum w z x| <= bound * size_c``; and every
cluster keeps at least the smallest row weight. ``count`` and ``size`` include
the weight of rows held fixed elsewhere. The objective is ``sum w_i d[i, c]
x[i, c]`` with ``d`` the squared distance to the centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

__all__ = [
    "EXACT_MILP_PAIRS",
    "MILP_NODE_LIMIT",
    "MILP_TIME_LIMIT",
    "Context",
    "Fixed",
    "excess",
    "fixed_offsets",
    "make_context",
    "solve_lp",
    "solve_milp",
    "sq_distances",
    "type_feasible",
]

# Branch-and-bound nodes HiGHS may explore in one integer programme (rounding, or
# one step of the search for the tightest feasible bound); the best solution found
# is used. A node limit ends the search at the same point on any machine, so the
# labels are reproducible; the time limit is only a backstop.
MILP_NODE_LIMIT = 300
# Up to this many (row, cluster) pairs the integral problem is solved exactly
# as one integer programme whenever the relaxation is fractional.
EXACT_MILP_PAIRS = 200
MILP_TIME_LIMIT = 60.0
_CHUNK = 65536


@dataclass(frozen=True)
class Context:
    """The data and bounds of one problem, as arrays.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    weights : ndarray of shape (n_samples,)
        Row weights (ones for unit weights).
    unit : bool
        Whether every weight is 1.
    cat : list of (codes, lower, upper)
        The bounded categorical attributes: value codes per row and share band.
    num : list of (z, bound)
        The bounded numeric attributes: standardised values and bound.
    types : ndarray of shape (n_samples,), int64
        Type of each row (its combination of bounded categorical values).
    type_table : ndarray of shape (n_types, len(cat)), int64
        The values of each type.
    n_clusters : int
    w_min : float
        The smallest positive weight: every cluster keeps at least that much.
    """

    X: np.ndarray
    weights: np.ndarray
    unit: bool
    cat: list
    num: list
    types: np.ndarray
    type_table: np.ndarray
    n_clusters: int
    w_min: float


def make_context(X, bounds, n_clusters):
    """Arrays of one problem from ``X`` and a :class:`~fairkm.bounds._spec.BoundSet`."""
    n = X.shape[0]
    weights = np.ones(n) if bounds.weights is None else bounds.weights
    cat = [(a.values, a.lower, a.upper) for a in bounds.categorical()]
    num = [(a.values, a.delta) for a in bounds.numeric()]
    if cat:
        codes = np.stack([c[0] for c in cat], axis=1)
        type_table, types = np.unique(codes, axis=0, return_inverse=True)
        types = types.reshape(-1).astype(np.int64)
    else:
        type_table, types = np.zeros((1, 0), dtype=np.int64), np.zeros(n, dtype=np.int64)
    w_min = float(weights[weights > 0].min())
    return Context(X, weights, bounds.weights is None, cat, num, types,
                   type_table.astype(np.int64), n_clusters, w_min)


def sq_distances(X, centers):
    """Squared Euclidean distances of the rows of ``X`` to ``centers``, in row chunks."""
    out = np.empty((X.shape[0], centers.shape[0]))
    cc = np.einsum("ij,ij->i", centers, centers)
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start:start + _CHUNK]
        d = np.einsum("ij,ij->i", block, block)[:, None] - 2.0 * block @ centers.T + cc
        out[start:start + _CHUNK] = np.maximum(d, 0.0)
    return out


@dataclass(frozen=True)
class Fixed:
    """The weight that rows held fixed put in each cluster: size, value counts, numeric sums."""

    size: np.ndarray
    counts: list
    sums: list


def fixed_offsets(ctx, rows, labels):
    """Offsets of the rows ``rows`` held in clusters ``labels`` (both may be empty)."""
    k = ctx.n_clusters
    w = ctx.weights[rows]
    size = np.bincount(labels, weights=w, minlength=k)
    counts = []
    for codes, lower, _ in ctx.cat:
        n_values = lower.shape[0]
        counts.append(np.bincount(labels * n_values + codes[rows], weights=w,
                                  minlength=k * n_values).reshape(k, n_values))
    sums = [np.bincount(labels, weights=w * z[rows], minlength=k) for z, _ in ctx.num]
    return Fixed(size, counts, sums)


def excess(ctx, rows, labels, fixed):
    """Per cluster, the weight by which ``rows`` in ``labels`` exceed the bounds (the slacks)."""
    off = fixed_offsets(ctx, rows, labels)
    size = off.size + fixed.size
    excess = np.zeros(ctx.n_clusters)
    for (_, lower, upper), a, b in zip(ctx.cat, off.counts, fixed.counts, strict=True):
        count = a + b
        over = np.maximum(count - upper[None, :] * size[:, None], 0.0)
        under = np.maximum(lower[None, :] * size[:, None] - count, 0.0)
        excess += np.where(upper[None, :] < 1.0, over, 0.0).sum(1)
        excess += np.where(lower[None, :] > 0.0, under, 0.0).sum(1)
    for (_, bound), a, b in zip(ctx.num, off.sums, fixed.sums, strict=True):
        excess += np.maximum(np.abs(a + b) - bound * size, 0.0)
    return excess


@dataclass
class _Model:
    c: np.ndarray
    A_eq: sparse.csr_matrix
    b_eq: np.ndarray
    A_ub: sparse.csr_matrix | None
    b_ub: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    n_pairs: int
    n_rows: int
    combos: np.ndarray
    n_slack: int


def _build(ctx, rows, w_rows, pos, clu, cost, fixed, elastic, margin=0.0):
    k = ctx.n_clusters
    m_r, m = rows.shape[0], pos.shape[0]
    w = w_rows[rows][pos]
    combo = ctx.types[rows][pos] * k + clu
    combos, link = np.unique(combo, return_inverse=True)
    nz = combos.shape[0]
    zt, zc = combos // k, combos % k
    iz, i_s = m, m + nz
    eq = [
        (pos, np.arange(m), np.ones(m)),
        (m_r + link, np.arange(m), -w),
        (m_r + np.arange(nz), iz + np.arange(nz), np.ones(nz)),
        (m_r + nz + zc, iz + np.arange(nz), -np.ones(nz)),
        (m_r + nz + np.arange(k), i_s + np.arange(k), np.ones(k)),
    ]
    ub, b_ub, n_ub = [], [], 0
    for a, ((_, lower, upper), counts) in enumerate(zip(ctx.cat, fixed.counts, strict=True)):
        n_values = lower.shape[0]
        zv = ctx.type_table[zt, a]
        for bound, sign, keep in ((upper, 1.0, upper < 1.0), (lower, -1.0, lower > 0.0)):
            keep = np.broadcast_to(keep, (k, n_values))
            row_id = np.full((k, n_values), -1, dtype=np.int64)
            row_id[keep] = n_ub + np.arange(int(keep.sum()))
            r = row_id[zc, zv]
            sel = np.flatnonzero(r >= 0)
            ub.append((r[sel], iz + sel, np.full(sel.shape[0], sign)))
            cc, vv = np.nonzero(keep)
            ub.append((row_id[cc, vv], i_s + cc, -sign * bound[vv]))
            b_ub.append(sign * (bound[vv] * fixed.size[cc] - counts[cc, vv]) - margin)
            n_ub += cc.shape[0]
    for (z, bound), sums in zip(ctx.num, fixed.sums, strict=True):
        wz = w * z[rows][pos]
        for sign in (1.0, -1.0):
            ub.append((n_ub + clu, np.arange(m), sign * wz))
            ub.append((n_ub + np.arange(k), i_s + np.arange(k), np.full(k, -bound)))
            b_ub.append(bound * fixed.size - sign * sums)
            n_ub += k
    n_slack = n_ub if elastic else 0
    n_var = m + nz + k + n_slack
    if n_slack:
        ub.append((np.arange(n_ub), m + nz + k + np.arange(n_ub), -np.ones(n_ub)))
    n_eq = m_r + nz + k

    def matrix(parts, n_rows):
        if not parts:
            return sparse.csr_matrix((n_rows, n_var))
        r, c_, v = (np.concatenate(p) for p in zip(*parts, strict=True))
        return sparse.csr_matrix((v, (r, c_)), shape=(n_rows, n_var))

    c = np.concatenate([cost, np.zeros(nz + k + n_slack)])
    lb = np.zeros(n_var)
    lb[i_s:i_s + k] = np.maximum(0.0, ctx.w_min - fixed.size)
    ubound = np.full(n_var, np.inf)
    ubound[:m] = 1.0
    b_eq = np.concatenate([np.ones(m_r), np.zeros(nz + k)])
    return _Model(c, matrix(eq, n_eq), b_eq, matrix(ub, n_ub) if n_ub else None,
                  np.concatenate(b_ub) if b_ub else np.zeros(0), lb, ubound, m, m_r, combos,
                  n_slack)


@dataclass(frozen=True)
class LPOutcome:
    """A solved relaxation: shares ``x`` (rows x clusters), optimum, type prices, status."""

    x: np.ndarray | None
    fun: float
    prices: np.ndarray | None
    status: int
    message: str


def solve_lp(ctx, rows, w_rows, dist, fixed, margin=0.0):
    """Solve the relaxation over ``rows`` (every cluster allowed) with the rest ``fixed``.

    Parameters
    ----------
    ctx : Context
    rows : ndarray of shape (m,), int64
        The free rows.
    w_rows : ndarray of shape (n_samples,)
        Weights to use for every row (a sample's rows are reweighted).
    dist : ndarray of shape (m, n_clusters)
        Squared distances of the free rows to the centres.
    fixed : Fixed
        What the other rows put in each cluster.
    margin : float, default=0.0
        Headroom, in weight, that every categorical bound must keep (so that
        rounding the fractional rows has room to stay within the bounds).

    Returns
    -------
    LPOutcome
        ``prices[t, c]`` is the dual of type ``t``'s weight in cluster ``c``
        (per unit of weight, in distance units; NaN where the type is absent).
    """
    k = ctx.n_clusters
    m_r = rows.shape[0]
    pos, clu = np.repeat(np.arange(m_r), k), np.tile(np.arange(k), m_r)
    cost = (w_rows[rows][:, None] * dist).reshape(-1)
    scale = float(cost.mean()) if cost.size and cost.mean() > 0 else 1.0
    model = _build(ctx, rows, w_rows, pos, clu, cost / scale, fixed, elastic=False,
                   margin=margin)
    res = linprog(model.c, A_ub=model.A_ub, b_ub=model.b_ub if model.A_ub is not None else None,
                  A_eq=model.A_eq, b_eq=model.b_eq, bounds=np.stack([model.lb, model.ub], 1),
                  method="highs")
    if res.status != 0:
        return LPOutcome(None, np.nan, None, int(res.status), str(res.message))
    x = np.clip(res.x[:model.n_pairs].reshape(m_r, k), 0.0, 1.0)
    prices = np.full((ctx.type_table.shape[0], k), np.nan)
    duals = res.eqlin.marginals[m_r:m_r + model.combos.shape[0]] * scale
    prices[model.combos // k, model.combos % k] = duals
    return LPOutcome(x, float(res.fun) * scale, prices, 0, str(res.message))


def _milp(model, c, *, time_limit=None, gap=1e-4, extra=(), presolve=True):
    integrality = np.zeros(c.shape[0])
    integrality[:model.n_pairs] = 1
    constraints = [LinearConstraint(model.A_eq, model.b_eq, model.b_eq)]
    if model.A_ub is not None:
        constraints.append(LinearConstraint(model.A_ub, -np.inf, model.b_ub))
    constraints.extend(extra)
    return milp(c, integrality=integrality, bounds=Bounds(model.lb, model.ub),
                constraints=constraints,
                options={**_options(time_limit, gap=gap), "presolve": presolve})


def _message(res):
    """HiGHS's ending in words (scipy does not name its node-limit status)."""
    if "Solution limit reached" in str(res.message):
        return (f"stopped at the node limit ({MILP_NODE_LIMIT} nodes) with the best solution "
                "found")
    return str(res.message)


def _options(time_limit, gap=1e-4):
    return {"time_limit": time_limit or MILP_TIME_LIMIT, "mip_rel_gap": gap,
            "node_limit": MILP_NODE_LIMIT}


def solve_milp(ctx, rows, pos, clu, dist_pairs, fixed, *, hard=True, soft=True,
               time_limit=None, gap=1e-4):
    """Assign ``rows`` integrally, each to one of its allowed clusters, at the least cost.

    Parameters
    ----------
    ctx : Context
    rows : ndarray of shape (m,), int64
        The free rows.
    pos, clu : ndarray of shape (n_pairs,), int64
        The allowed (position in ``rows``, cluster) pairs.
    dist_pairs : ndarray of shape (n_pairs,)
        Squared distance of each pair.
    fixed : Fixed
        What the other rows put in each cluster.
    hard : bool, default=True
        First try with the bounds as hard constraints.
    soft : bool, default=True
        If that fails (or is skipped), let the bounds be exceeded, lexicographically:
        first the least total excess (in weight) any assignment of these
        rows to their allowed clusters leaves, then the least cost at that
        excess. (A price per unit of excess would not do: an excess is often
        a fraction of a row's weight, cheaper than moving a row.)
    time_limit : float, default=None
        Seconds per programme (``MILP_TIME_LIMIT`` if None); a backstop, the
        node limit ``MILP_NODE_LIMIT`` normally ends a search first, so that
        the result does not depend on the machine's speed.
    gap : float, default=1e-4
        Relative optimality gap at which HiGHS may stop.

    Returns
    -------
    labels : ndarray of shape (m,), int64, or None
        None when no programme gave a solution.
    status : str
        How HiGHS ended, in words.
    met : bool
        Whether the hard bounds were met.
    proven : bool
        Whether the hard programme proved that no assignment of these rows
        meets them.
    """
    cost = ctx.weights[rows][pos] * dist_pairs
    scale = float(cost.mean()) if cost.size and cost.mean() > 0 else 1.0

    def labels_of(res):
        labels = np.full(rows.shape[0], -1, dtype=np.int64)
        if res is not None and res.x is not None:
            chosen = res.x[:pos.shape[0]] > 0.5
            labels[pos[chosen]] = clu[chosen]
        return labels

    def meets(labels):
        return labels.min() >= 0 and excess(ctx, rows, labels, fixed).max() <= 1e-9

    def solve(model, c, **kwargs):
        res = _milp(model, c, time_limit=time_limit, gap=gap, **kwargs)
        failed = res.x is None and res.status not in (1, 2)  # neither a limit nor infeasible
        broken = res.x is not None and not model.n_slack and not meets(labels_of(res))
        if failed or broken:
            # HiGHS's presolve can fail ("Solve error") or hand back a solution that
            # breaks a bound (its transformNewIntegerFeasibleSolution repair) on bounds
            # with no slack; the same programme without presolve answers correctly.
            res = _milp(model, c, time_limit=time_limit, gap=gap, presolve=False, **kwargs)
        return res

    res, proven = None, False
    if hard:
        model = _build(ctx, rows, ctx.weights, pos, clu, cost / scale, fixed, elastic=False)
        res = solve(model, model.c)
        proven = res.status == 2
    if not (hard and meets(labels_of(res))) and soft and (
            model := _build(ctx, rows, ctx.weights, pos, clu, cost / scale, fixed,
                            elastic=True)).n_slack:
        n_var, n_slack = model.c.shape[0], model.n_slack
        excess_only = np.zeros(n_var)
        excess_only[-n_slack:] = 1.0
        least = solve(model, excess_only)
        if least.x is not None:
            total_excess = float(least.x[-n_slack:].sum())
            total = sparse.csr_matrix(
                (np.ones(n_slack), (np.zeros(n_slack, np.int64), np.arange(n_var - n_slack,
                                                                           n_var))),
                shape=(1, n_var))
            cap = LinearConstraint(total, -np.inf, total_excess * (1.0 + 1e-9) + 1e-9)
            cheapest = solve(model, model.c, extra=(cap,))
            res = cheapest if cheapest.x is not None else least
    labels = labels_of(res)
    if res is None or res.x is None or labels.min() < 0:
        return None, "" if res is None else _message(res), False, proven
    return labels, _message(res), meets(labels), proven


def type_feasible(ctx, rows, time_limit=None):
    """Whether some integral assignment of ``rows`` (unit weights) meets the categorical bounds.

    Rows of one type are interchangeable for the bounds, so the question is
    an integer programme on the number of rows of each type in each cluster
    (types x clusters variables, whatever the number of rows).

    Parameters
    ----------
    ctx : Context
    rows : ndarray of shape (m,), int64
        The rows to assign.
    time_limit : float, default=None
        Seconds (``MILP_TIME_LIMIT`` if None).

    Returns
    -------
    bool or None
        None when HiGHS stopped at its time limit without an answer.
    """
    k = ctx.n_clusters
    types, n_t = np.unique(ctx.types[rows], return_counts=True)
    n_types = types.shape[0]
    # One "row" per type, of weight n_t, split in integer parts over the clusters.
    pos, clu = np.repeat(np.arange(n_types), k), np.tile(np.arange(k), n_types)
    proxy = Context(ctx.X, np.ones(ctx.types.shape[0]), True, ctx.cat, [], ctx.types,
                    ctx.type_table, k, 1.0)
    reps = np.array([rows[ctx.types[rows] == t][0] for t in types], dtype=np.int64)
    w_rows = np.zeros(ctx.types.shape[0])
    w_rows[reps] = n_t
    empty = Fixed(np.zeros(k), [np.zeros((k, c[1].shape[0])) for c in ctx.cat], [])
    model = _build(proxy, reps, w_rows, pos, clu, np.zeros(pos.shape[0]), empty, elastic=False)
    # The shares of a type become integer counts: x[t, c] * n_t integral.
    model.ub[:model.n_pairs] = 1.0
    integrality = np.zeros(model.c.shape[0])
    integrality[:model.n_pairs] = 1
    # Substitute x = y / n_t with integer y in [0, n_t].
    scale = np.ones(model.c.shape[0])
    scale[:model.n_pairs] = 1.0 / n_t[pos]
    A_eq = model.A_eq @ sparse.diags(scale)
    constraints = [LinearConstraint(A_eq, model.b_eq, model.b_eq)]
    if model.A_ub is not None:
        constraints.append(LinearConstraint(model.A_ub @ sparse.diags(scale), -np.inf,
                                            model.b_ub))
    ub = model.ub.copy()
    ub[:model.n_pairs] = n_t[pos]
    res = milp(np.zeros(model.c.shape[0]), integrality=integrality,
               bounds=Bounds(model.lb, ub), constraints=constraints,
               options=_options(time_limit, gap=0.0))
    if res.status == 2:
        return False
    if res.x is not None:
        return True
    return None
