"""When no assignment of whole rows can meet the bounds: the proof and the tightest bound.

The linear relaxation is always feasible (each row split evenly over the
clusters gives every cluster the dataset's mix), so bounds fail only on whole
rows. An integer programme decides whether any assignment meets them (on every
row for small problems, else on the counts of each type of row), and the
tightest bound that one does is bisected for the error message.
"""

from __future__ import annotations

import numpy as np

from ._model import (
    EXACT_MILP_PAIRS,
    MILP_TIME_LIMIT,
    fixed_offsets,
    make_context,
    solve_milp,
    type_feasible,
)

__all__ = ["InfeasibleBoundError", "check_rare_values", "explain_infeasible"]

_CHECK_TIME = 2.0  # seconds per feasibility check of the search for the tightest bound


class InfeasibleBoundError(ValueError):
    """No integral assignment of the rows to non-empty clusters meets the bound asked for.

    Attributes
    ----------
    max_deviation : float or dict
        The bound asked for.
    tightest : float or None
        The tightest bound found that an integral assignment meets (None if
        none was found).
    """

    def __init__(self, message, *, max_deviation=None, tightest=None):
        super().__init__(message)
        self.max_deviation = max_deviation
        self.tightest = tightest


def _feasible(ctx, bounds, live, floor, all_rows_exact, time_limit=_CHECK_TIME):
    """Whether an integral assignment meets ``bounds`` raised to ``floor`` (None: unknown)."""
    tight = make_context(ctx.X, bounds.with_floor(floor), ctx.n_clusters)
    k = ctx.n_clusters
    if all_rows_exact:
        pos, clu = np.repeat(np.arange(live.shape[0]), k), np.tile(np.arange(k), live.shape[0])
        dist = np.zeros(pos.shape[0])
        empty = fixed_offsets(tight, live[:0], live[:0])
        out, _, met, proven = solve_milp(tight, live, pos, clu, dist, empty, soft=False,
                                         time_limit=time_limit)
        return True if met else (False if proven else None)
    if not ctx.unit or not tight.cat:
        return None
    answer = type_feasible(tight, live, time_limit=time_limit)
    if answer is True and tight.num:
        return None
    return answer


def _tightest(ctx, bounds, live, reached, all_rows_exact):
    """Bisect the smallest floor on the bounds that an integral assignment meets."""
    deltas = [a.delta for a in bounds.categorical()]
    lo = min(deltas) if deltas else 0.0
    hi = reached
    if bounds.kind == "multiplicative":
        hi = min(hi, 1.0 - 1e-9)
    if not _feasible(ctx, bounds, live, hi, all_rows_exact):
        return None
    for _ in range(14):
        if hi - lo <= max(1e-4, 1e-3 * hi):
            break
        mid = 0.5 * (lo + hi)
        if _feasible(ctx, bounds, live, mid, all_rows_exact):
            hi = mid
        else:
            lo = mid
    return float(hi)


def check_rare_values(bounds, live, n_clusters):
    """Multiplicative bounds need every value in every cluster: values with < k rows fail."""
    if bounds.kind != "multiplicative":
        return
    for attr in bounds.categorical():
        counts = np.bincount(attr.values[live], minlength=len(attr.categories))
        short = np.flatnonzero((counts < n_clusters) & (attr.lower > 0))
        if short.size:
            v = int(short[0])
            raise InfeasibleBoundError(
                f"max_deviation={attr.delta!r} (kind='multiplicative') cannot be met: value "
                f"{attr.categories[v]!r} of {attr.name!r} has {counts[v]} row(s) for "
                f"{n_clusters} clusters, so some cluster has none of it, below its lower "
                f"bound (1 - delta) p > 0 for every delta < 1. Use kind='additive', merge "
                "rare values, or leave this attribute out of max_deviation.",
                max_deviation=attr.delta, tightest=None,
            )


def explain_infeasible(ctx, bounds, live, check, *, exact, proven):
    """Raise :class:`InfeasibleBoundError` when no integral assignment can meet the bounds."""
    all_rows_exact = exact and live.shape[0] * ctx.n_clusters <= EXACT_MILP_PAIRS
    if not all_rows_exact:
        proven = _feasible(ctx, bounds, live, 0.0, False, MILP_TIME_LIMIT) is False
    if not proven:
        return
    table = check.table
    bounded = (table["kind"] != "numeric") & table["bound"].notna()
    reached = float(table.loc[bounded, "deviation"].max()) if bounded.any() else 0.0
    tightest = _tightest(ctx, bounds, live, reached, all_rows_exact)
    asked = {a.name: a.delta for a in bounds.categorical()}
    asked_text = (f"{next(iter(asked.values()))!r}" if len(set(asked.values())) == 1
                  else repr(asked))
    found = ("raising max_deviation does not make it feasible (see numeric_bound)"
             if tightest is None
             else f"the tightest bound found that an integral assignment meets is "
                  f"max_deviation={tightest:.4g}")
    raise InfeasibleBoundError(
        f"max_deviation={asked_text} (kind={bounds.kind!r}) cannot be met by any assignment "
        f"of these {live.shape[0]} rows to {ctx.n_clusters} non-empty clusters (each "
        f"cluster's shares are multiples of 1/its size); {found}. The linear relaxation is "
        "always feasible (splitting every row evenly gives every cluster the dataset's mix), "
        "so this is about whole rows.",
        max_deviation=asked if len(asked) > 1 else next(iter(asked.values()), None),
        tightest=tightest,
    )
