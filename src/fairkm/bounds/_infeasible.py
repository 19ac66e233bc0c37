"""When no assignment of whole rows can meet the bounds: the proof, the tightest bound, the excess.

The linear relaxation is always feasible (each row split evenly over the
clusters gives every cluster the dataset's mix), so bounds fail only on whole
rows. With unit weights the question is one of counts:

1. **Counting** (instant): a cluster of ``s`` rows can meet the bounds only if,
   for every bounded attribute, each value's count can lie in
   ``[ceil(lower s), floor(upper s)]`` with the counts adding up to ``s``; so
   some sizes are impossible (at ``max_deviation=0`` only multiples of the
   proportions' common denominator remain), and ``n_clusters`` possible sizes
   must add up to the number of rows. Every cluster also needs one row of each
   value whose lower band is positive.
2. **Type counts**: otherwise an integer programme on the number of rows of each
   type in each cluster decides (clusters ordered by size, as they are
   interchangeable for the bounds).

The tightest bound that whole rows can meet is bisected on the same tests, and
the least excess (in rows) that any assignment must leave is an integer
programme on type counts.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.signal import fftconvolve

from fairkm.exceptions import InfeasibleBoundError
from fairkm.utils._options import MULTIPLICATIVE

from ._model import (
    INFEASIBLE,
    MILP_NODE_LIMIT,
    balance_entries,
    balance_pairs,
    held_offsets,
    make_problem,
    solve_milp,
)
from ._quiet import quiet_stdout
from ._round import EXACT_PAIRS

__all__ = ["check_balance_reachable", "check_rare_values", "counting_reason", "feasible",
           "prove_infeasible", "type_counts"]

_SHARE_TOL = 1e-9       # as fairkm.metrics.check_bounds
_DP_MAX_ROWS = 2_000_000


def _unit(problem, live):
    return bool(np.all(problem.weights[live] == 1.0))


def _possible_sizes(problem, n):
    """For s = 0..n, whether a cluster of s rows can meet every categorical band."""
    s = np.arange(n + 1, dtype=np.float64)
    ok = s >= 1
    for _, lower, upper in problem.cat:
        low_sum, high_sum = np.zeros(n + 1), np.zeros(n + 1)
        for lo_v, hi_v in zip(lower, upper, strict=True):
            lo = np.maximum(np.ceil((lo_v - _SHARE_TOL) * s), 0.0)
            hi = np.minimum(np.floor((hi_v + _SHARE_TOL) * s), s)
            ok &= lo <= hi
            low_sum += lo
            high_sum += hi
        ok &= (low_sum <= s) & (high_sum >= s)
    return ok


def _sums_to(possible, k, n):
    """Whether ``n`` is a sum of exactly ``k`` sizes marked ``possible`` (by FFT doubling)."""
    # k sizes from one run a..b of possible sizes add up to every total from k a to k b:
    # on many rows the sizes past the small ones form one run, and no FFT is needed.
    edges = np.flatnonzero(np.diff(np.concatenate(([0], possible[:n + 1].view(np.int8), [0]))))
    first, last = edges[::2], edges[1::2] - 1
    if np.any((k * first <= n) & (n <= k * last)):
        return True
    indicator = possible[:n + 1].astype(np.float64)
    result, power, e = None, indicator, k
    while e:
        if e & 1:
            result = power if result is None else (
                fftconvolve(result, power)[:n + 1] > 0.5).astype(np.float64)
        e >>= 1
        if e:
            power = (fftconvolve(power, power)[:n + 1] > 0.5).astype(np.float64)
    return bool(result[n] > 0.5)


def counting_reason(problem, live):
    """Why counting alone shows that no assignment meets the bounds (None if it does not).

    Parameters
    ----------
    problem : Problem
    live : ndarray of shape (n_live,), int64
        The rows to assign (unit weights, else nothing is proved).

    Returns
    -------
    str or None
    """
    if not problem.cat or not _unit(problem, live):
        return None
    k, n = problem.n_clusters, live.shape[0]
    for codes, lower, _ in problem.cat:
        counts = np.bincount(codes[live], minlength=lower.shape[0])
        short = np.flatnonzero((counts < k) & (lower > _SHARE_TOL))
        if short.size:
            return (f"a value with a positive lower band has {counts[short[0]]} row(s) for "
                    f"{k} clusters, and every cluster needs one")
    # A balance target above 0 needs every present value in every cluster (the sizes it
    # allows are not counted here: a check of fewer rows proves less, never wrongly).
    for a, _, v, _ in balance_pairs(problem):
        counts = np.bincount(problem.cat[a][0][live], minlength=problem.cat[a][1].shape[-1])
        short = np.unique(v)[counts[np.unique(v)] < k]
        if short.size:
            return (f"a value of an attribute with a balance target has {counts[short[0]]} "
                    f"row(s) for {k} clusters, and every cluster needs one")
    if n > _DP_MAX_ROWS:
        return None
    possible = _possible_sizes(problem, n)
    sizes = np.flatnonzero(possible)
    if not sizes.size:
        return f"no cluster of 1 to {n} rows can meet the bounds"
    smallest = int(sizes[0])
    if k * smallest > n:
        return (f"a cluster meeting the bounds holds at least {smallest} rows, and {k} "
                f"clusters of that size need {k * smallest} rows")
    top = n - (k - 1) * smallest
    if possible[smallest:top + 1].all() or _sums_to(possible, k, n):
        return None
    shown = ", ".join(str(int(s)) for s in sizes[:6]) + (", ..." if sizes.size > 6 else "")
    return (f"the cluster sizes that can meet the bounds are {shown}, and no {k} of them "
            f"add up to {n}")


def _type_programme(problem, live, *, least_excess=False, near=None, sizes=None):
    """Integer programme on the rows of each type in each cluster (and the excess ``e``).

    With ``near`` (current counts per (type, cluster), every type of
    ``problem``), the counts closest to them in total absolute difference: the
    fewest rows to move. The clusters are then not interchangeable. With
    ``sizes`` (the least and the most rows of each cluster, without ``near``),
    the clusters' sizes lie in those windows (matched largest to largest).
    """
    k = problem.n_clusters
    types, n_t = np.unique(problem.types[live], return_counts=True)
    n_types = types.shape[0]
    table = problem.type_table[types]
    n_m = n_types * k
    i_s, i_e = n_m, n_m + k
    i_d = n_m + k + int(least_excess)
    n_var = i_d + (n_m if near is not None else 0)
    var = np.arange(n_m).reshape(n_types, k)
    eq_r, eq_c, eq_v = [np.repeat(np.arange(n_types), k)], [var.reshape(-1)], [np.ones(n_m)]
    eq_r.append(n_types + np.tile(np.arange(k), n_types))
    eq_c.append(var.reshape(-1))
    eq_v.append(np.ones(n_m))
    eq_r.append(n_types + np.arange(k))
    eq_c.append(i_s + np.arange(k))
    eq_v.append(-np.ones(k))
    A_eq = sparse.csr_matrix((np.concatenate(eq_v), (np.concatenate(eq_r),
                                                     np.concatenate(eq_c))),
                             shape=(n_types + k, n_var))
    b_eq = np.r_[n_t.astype(np.float64), np.zeros(k)]
    rows, cols, vals, n_ub = [], [], [], 0
    for a, (_, lower, upper) in enumerate(problem.cat):
        for v in range(lower.shape[0]):
            members = np.flatnonzero(table[:, a] == v)
            for bound, sign, binds in ((upper[v], 1.0, upper[v] < 1.0),
                                       (lower[v], -1.0, lower[v] > 0.0)):
                if not binds:
                    continue
                for c in range(k):
                    rows += [np.full(members.shape[0], n_ub), [n_ub]]
                    cols += [var[members, c], [i_s + c]]
                    vals += [np.full(members.shape[0], sign), [-sign * bound]]
                    if least_excess:
                        rows.append([n_ub])
                        cols.append([i_e])
                        vals.append([-1.0])
                    n_ub += 1
    for a, b, v, u in balance_pairs(problem):
        r, p, coefficient = balance_entries(problem, np.repeat(types, k),
                                            np.tile(np.arange(k), n_types), a, b, v, u, n_ub)
        rows.append(r)
        cols.append(p)
        vals.append(coefficient)
        n_new = k * v.shape[0]
        if least_excess:
            rows.append(n_ub + np.arange(n_new))
            cols.append(np.full(n_new, i_e))
            vals.append(-np.ones(n_new))
        n_ub += n_new
    near_rows = []  # (first row, right-hand side) of the rows d >= +-(x - near)
    if near is None:
        # Clusters are interchangeable here: order them by size.
        for c in range(k - 1):
            rows += [[n_ub], [n_ub]]
            cols += [[i_s + c + 1], [i_s + c]]
            vals += [[1.0], [-1.0]]
            n_ub += 1
    else:
        # d >= x - near and d >= near - x, per (type, cluster).
        current = near[types].reshape(-1).astype(np.float64)
        for sign in (1.0, -1.0):
            rows += [n_ub + np.arange(n_m)] * 2
            cols += [np.arange(n_m), i_d + np.arange(n_m)]
            vals += [np.full(n_m, sign), -np.ones(n_m)]
            near_rows.append((n_ub, sign * current))
            n_ub += n_m
    b_ub = np.zeros(n_ub)
    for first, rhs in near_rows:
        b_ub[first:first + n_m] = rhs
    A_ub = sparse.csr_matrix((np.concatenate(vals).astype(np.float64),
                              (np.concatenate(rows).astype(np.int64),
                               np.concatenate(cols).astype(np.int64))), shape=(n_ub, n_var))
    lb = np.zeros(n_var)
    lb[i_s:i_s + k] = 1.0
    ub = np.full(n_var, np.inf)
    if sizes is not None:
        # The clusters are ordered largest first, and so are the windows.
        lb[i_s:i_s + k] = np.maximum(np.sort(sizes[0])[::-1], 1.0)
        ub[i_s:i_s + k] = np.sort(sizes[1])[::-1]
    integrality = np.zeros(n_var)
    integrality[:n_m] = 1
    c = np.zeros(n_var)
    if least_excess:
        c[i_e] = 1.0
    if near is not None:
        c[i_d:] = 1.0
    return types, c, integrality, Bounds(lb, ub), [
        LinearConstraint(A_eq, b_eq, b_eq), LinearConstraint(A_ub, -np.inf, b_ub)]


def _solve_type_programme(problem, live, **kind):
    """Solve :func:`_type_programme` (``kind``: its keywords); return its types and result.

    The node limit, not a clock, ends the search: the same answer on any machine.
    """
    types, c, integrality, bounds, constraints = _type_programme(problem, live, **kind)
    with quiet_stdout():
        res = milp(c, integrality=integrality, bounds=bounds, constraints=constraints,
                   options={"node_limit": MILP_NODE_LIMIT})
    return types, res


def _counts_meet(problem, types, counts):
    """Whether row counts per (type, cluster) meet every band (share tolerance 1e-9)."""
    size = counts.sum(axis=0)
    if (size < 1).any():
        return False
    for a, (_, lower, upper) in enumerate(problem.cat):
        values = problem.type_table[types, a]
        per_value = np.zeros((lower.shape[0], counts.shape[1]))
        np.add.at(per_value, values, counts)
        share = per_value / size[None, :]
        if (share > upper[:, None] + _SHARE_TOL).any() or (
                share < lower[:, None] - _SHARE_TOL).any():
            return False
    for a, b, v, _ in balance_pairs(problem):
        per_value = np.zeros((problem.cat[a][1].shape[-1], counts.shape[1]))
        np.add.at(per_value, problem.type_table[types, a], counts)
        present = per_value[np.unique(v)]
        if (present.min(axis=0) < (b - _SHARE_TOL) * present.max(axis=0)).any():
            return False
    return True


def type_counts(problem, live, near=None, sizes=None):
    """Row counts per (type, cluster) that meet the bounds, found on types alone (unit weights).

    ``near``: counts per (type, cluster) to stay closest to (the fewest rows
    moved); without it, any counts that meet the bounds. ``sizes``: a pair of
    arrays (n_clusters,), the least and the most rows of the clusters (in any
    order, matched largest to largest).

    Returns
    -------
    ndarray of shape (n_types, n_clusters), int64, or False or None
        The counts (every type of ``problem``, 0 for absent ones); False
        when none exist; None when HiGHS stopped without an answer.
    """
    types, res = _solve_type_programme(problem, live, near=near, sizes=sizes)
    if res.status == INFEASIBLE:
        return False
    if res.x is None:
        return None
    k = problem.n_clusters
    counts = np.rint(res.x[:types.shape[0] * k]).reshape(-1, k).astype(np.int64)
    if not _counts_meet(problem, types, counts):
        return None
    out = np.zeros((problem.n_types, k), dtype=np.int64)
    out[types] = counts
    return out


def least_excess_rows(problem, live):
    """Return the least largest excess, in rows, an assignment leaves (unit weights).

    Returns
    -------
    excess : float or None
        The largest number of rows by which a cluster's count of a value lies
        outside its band, in the closest assignment found (None if none).
    proven : bool
        Whether no assignment leaves less.
    """
    _, res = _solve_type_programme(problem, live, least_excess=True)
    if res.x is None:
        return None, False
    return max(float(res.fun), 0.0), res.status == 0


def feasible(problem, bounds, live, floor, sizes=None):
    """Whether an integral assignment meets ``bounds`` raised to ``floor`` (None: unknown).

    ``floor``: a float, or ``{name: floor}`` (see :meth:`BoundSet.with_floor`).
    ``sizes``: windows on the clusters' sizes, as in :func:`type_counts`
    (decided by type counts only; None when they cannot decide).
    """
    tight = make_problem(problem.X, bounds.with_floor(floor), problem.n_clusters)
    if counting_reason(tight, live) is not None:
        return False
    if tight.cat and _unit(tight, live):
        answer = type_counts(tight, live, sizes=sizes)
        if answer is False:
            return False
        if not tight.num:
            # The type counts decide alone; an integer programme on rows would not do better.
            return None if answer is None else True
    if sizes is not None:
        return None
    k = problem.n_clusters
    if live.shape[0] * k <= EXACT_PAIRS:
        pos, clu = np.repeat(np.arange(live.shape[0]), k), np.tile(np.arange(k), live.shape[0])
        empty = held_offsets(tight, live[:0], live[:0])
        _, _, met, proven = solve_milp(tight, live, pos, clu, np.zeros(pos.shape[0]), empty,
                                       soft=False)
        return True if met else (False if proven else None)
    return None


def _tightest(problem, bounds, live, reached):
    """Bisect the smallest floor on the bounds that an integral assignment meets.

    The top of the bisection is ``reached`` when given, else the first
    feasible floor of 1/2, 3/4, 7/8, ... (a multiplicative band near 1 is
    numerically out of reach of the solver).
    """
    deltas = [a.delta for a in bounds.categorical()]
    lo = min(deltas) if deltas else 0.0
    if reached is not None and feasible(problem, bounds, live, max(reached, lo)):
        hi = max(reached, lo)
    else:
        for step in range(1, 21):
            hi = lo + (1.0 - lo) * (1.0 - 0.5 ** step)
            if feasible(problem, bounds, live, hi):
                break
            lo = hi
        else:
            return None
    for _ in range(20):
        if hi - lo <= max(1e-4, 1e-3 * hi):
            break
        mid = 0.5 * (lo + hi)
        if feasible(problem, bounds, live, mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


def check_rare_values(bounds, live, n_clusters):
    """Refuse what no clustering can meet, whatever its rows' places.

    A balance target above the dataset's own balance
    (:func:`check_balance_reachable`); multiplicative bounds need every value
    in every cluster, so values with fewer than ``n_clusters`` rows fail.
    """
    check_balance_reachable(bounds)
    if bounds.kind != MULTIPLICATIVE:
        return
    _check_multiplicative(bounds, live, n_clusters)


def check_balance_reachable(bounds):
    """Refuse a balance target above the dataset's own balance.

    The clusters' counts add up to the dataset's, so some cluster is no more
    balanced than the dataset; at or below it, splitting every row evenly
    meets the target, so the relaxation stays feasible.
    """
    for attr in bounds.categorical():
        if not attr.balanced:
            continue
        shares = attr.proportions[attr.present]
        own = float(shares.min() / shares.max())
        if attr.balance > own + _SHARE_TOL:
            raise InfeasibleBoundError(
                f"min_balance={attr.balance!r} cannot be met for {attr.name!r}: the dataset's "
                f"own balance (its smallest group over its largest) is {own:.4g}, and the "
                "clusters' counts add up to the dataset's, so some cluster's balance is at "
                f"most that. Ask min_balance <= {own:.4g}.",
                max_deviation=None, tightest=None,
            )


def _check_multiplicative(bounds, live, n_clusters):
    for attr in bounds.categorical():
        counts = np.bincount(attr.values[live], minlength=len(attr.categories))
        short = np.flatnonzero((counts < n_clusters) & (attr.lower > 0))
        if short.size:
            v = int(short[0])
            raise InfeasibleBoundError(
                f"max_deviation={attr.delta!r} (deviation_kind='multiplicative') cannot be met: "
                f"value {attr.categories[v]!r} of {attr.name!r} has {counts[v]} row(s) for "
                f"{n_clusters} clusters, so some cluster has none of it, below its lower "
                f"bound (1 - delta) p > 0 for every delta < 1. Use "
                "deviation_kind='additive', merge rare values, or leave this attribute out of "
                "max_deviation.",
                max_deviation=attr.delta, tightest=None,
            )


def prove_infeasible(problem, bounds, live, *, reason=None, reached=None):
    """Raise :class:`InfeasibleBoundError`: no integral assignment meets the bounds.

    Parameters
    ----------
    problem : Problem
    bounds : BoundSet
    live : ndarray of shape (n_live,), int64
    reason : str or None
        What proved it (counting), for the message.
    reached : float or None
        The largest deviation some assignment reached (the top of the
        bisection); 1 (additive) or just below 1 (multiplicative) if None.
    """
    k = problem.n_clusters
    unit = _unit(problem, live)
    excess_rows, proven = (least_excess_rows(problem, live) if unit and problem.cat
                           else (None, False))
    asked = {a.name: a.delta for a in bounds.categorical() if not np.isnan(a.delta)}
    targets = {a.name: a.balance for a in bounds.categorical() if a.balanced}
    # Raising max_deviation leaves a balance target as it is: no bisection then.
    tightest = None if targets else _tightest(problem, bounds, live, reached)
    asked_text = (f"{next(iter(asked.values()))!r}" if len(set(asked.values())) == 1
                  else repr(asked))
    what = [f"max_deviation={asked_text} (deviation_kind={bounds.kind!r})"] if asked else []
    if targets:
        shown = (f"{next(iter(targets.values()))!r}" if len(set(targets.values())) == 1
                 else repr(targets))
        what.append(f"min_balance={shown}")
    found = ("raising max_deviation does not make it feasible (see numeric_bound)"
             if tightest is None and not targets
             else "lower min_balance to meet it" if targets
             else f"the tightest bound found that an integral assignment meets is "
                  f"max_deviation={tightest:.4g}")
    why = f" ({reason})" if reason else ""
    rows = ("" if excess_rows is None else
            f" The closest assignment {'possible' if proven else 'found'} leaves a "
            f"cluster's count of a value {excess_rows:.3g} row(s) outside its band.")
    whole = ("each cluster's shares are multiples of 1/its size" if unit else
             "each cluster's shares are made of whole rows' weights")
    raise InfeasibleBoundError(
        f"{' with '.join(what)} cannot be met by any "
        f"assignment of these {live.shape[0]} rows to {k} non-empty clusters{why}: "
        f"{whole}; {found}.{rows} The linear relaxation "
        "is always feasible (splitting every row evenly gives every cluster the dataset's "
        "mix), so this is about whole rows.",
        max_deviation=asked if len(asked) > 1 else next(iter(asked.values()), None),
        tightest=tightest, excess_rows=excess_rows,
    )
