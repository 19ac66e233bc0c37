"""A better lower bound from the relaxation's prices: its Lagrangian dual, maximised smoothly.

For any non-negative multipliers of the bound rows, the Lagrangian

    ``L = sum_i w_i min_c (d[i, c] + price[i, c]) + w_min * sum_c mu_c``

is a lower bound on the cost of every assignment meeting the bounds (weak
duality; :mod:`fairkm.bounds._model` describes the prices). The relaxation by
prices (:mod:`fairkm.bounds._relax`) stops after a few programmes, and on a
large problem its prices certify a bound some way below the relaxation's
optimum. Here ``L`` is raised from those prices: ``min`` is smoothed into a
soft minimum at temperature ``tau`` (below the minimum by at most
``tau log k`` per unit of weight), which makes ``L`` smooth and concave in the
multipliers; L-BFGS-B maximises it over the multipliers >= 0, at decreasing
``tau`` (on many rows, at all but the last on a sample of the rows in which each
type keeps its total weight). The bound kept is ``L`` itself, on every row, at
the best multipliers found, so it holds whatever the optimiser does.

The multipliers, flat: per bounded categorical attribute, those of the upper
bands that can bind (``upper < 1``) then of the lower ones (``lower > 0``),
cluster-major; per bounded numeric attribute, those of ``+sum w z <= b size``
then of ``-sum w z <= b size`` (one per cluster each); per attribute with a
balance target ``b``, those of ``b count(u) - count(v) <= 0`` (per cluster,
per ordered pair of present values); last, one per cluster for "non-empty".
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy.optimize import minimize

from fairkm.utils._sums import group_totals
from fairkm.utils._threads import serial_blas

from ._cache import guard_kernel_caches
from ._model import Prices, balance_pairs

__all__ = ["Multipliers", "raise_bound"]

# A cluster priced this many temperatures above a row's least would add exp(-50), about
# 1.9e-22, or less to the row's total, in which the least counts exactly 1.0: it is skipped
# with its share (at most 1.9e-22 of the row's weight), which moves the total by less than
# an ulp of 1.0 unless half a million clusters are skipped. A row with no other cluster
# within then takes no exp, log or division: 92% of bench_bounds' 1,000,000 rows (k=10) at
# the last temperature. Skipping only the clusters whose exp rounds to 0.0 (747 temperatures
# above) took 2.9 times as long on those rows.
_EXP_NEAR = 50.0
_CHUNKS = 16            # rows are summed in this many fixed blocks: the same sums on any machine
_TEMPERATURES = (1e-2, 1e-3, 1e-4)  # times the rows' mean spread of cost between clusters
_ITERATIONS = 40        # L-BFGS-B iterations per temperature, from a programme's prices
# ... and from prices of coarse blocks or of no programme at all (too many types for one
# within max_lp_variables): the Lagrangian must do more of the work. At 20,000 rows of
# 11,834 types (no programme), 40 left the cheapest clusters 96 rows' weight outside the
# bands, 200 left 18 (1,000: 15); at 1,000,000 rows, k=20 (coarse blocks), the assignment
# ended 0.0109% above its bound after 40, 0.0034% after 200 (docs/bounds.md, "Scale").
_ITERATIONS_THOROUGH = 200
# Above twice this many live rows, the search at every temperature but the last runs on a
# sample of this many (type_sample), the last on every row: at 1,000,000 rows, k=10, the
# first two temperatures took 140 of the search's 150 calls of _soft (6.2 of its 6.7 s).
_SAMPLE_ROWS = 100_000


@dataclass(frozen=True)
class Multipliers:
    """Where each multiplier of a problem sits in the flat vector, and how it prices."""

    ups: list      # per categorical attribute: (k, n_values) bool, upper bands that can bind
    los: list      # ... lower bands that can bind
    uppers: list   # (k, n_values) upper bands
    lowers: list
    bounds: list   # per numeric attribute: its bound per cluster, (k,)
    k: int
    pairs: list = ()  # per attribute with a balance target: (a, b, (k, V, V) bool mask)

    @classmethod
    def of(cls, problem):
        """Return the layout of ``problem``'s bound rows."""
        k = problem.n_clusters
        ups, los, uppers, lowers = [], [], [], []
        for _, lower, upper in problem.cat:
            shape = (k, lower.shape[-1])
            upper, lower = np.broadcast_to(upper, shape), np.broadcast_to(lower, shape)
            ups.append(upper < 1.0)
            los.append(lower > 0.0)
            uppers.append(upper)
            lowers.append(lower)
        bounds = [np.broadcast_to(np.asarray(b, dtype=np.float64), (k,)) for _, b in problem.num]
        pairs = []
        for a, b, v, u in balance_pairs(problem):
            n_values = problem.cat[a][1].shape[-1]
            mask = np.zeros((k, n_values, n_values), bool)
            mask[:, v, u] = True
            pairs.append((a, b, mask))
        return cls(ups, los, uppers, lowers, bounds, k, pairs)

    @property
    def size(self):
        """Number of multipliers."""
        return (sum(int(u.sum()) + int(lo.sum()) for u, lo in zip(self.ups, self.los,
                                                                   strict=True))
                + 2 * self.k * len(self.bounds)
                + sum(int(mask.sum()) for _, _, mask in self.pairs) + self.k)

    def from_rows(self, meta, duals):
        """Scatter the duals of a programme's inequality rows (``_Programme.meta``) to the vector.

        Rows of cut attributes (none here) and rows the layout lacks are skipped.
        """
        kind, cluster = meta[:, 0].astype(np.int64), meta[:, 1].astype(np.int64)
        attr, value, sign = meta[:, 2].astype(np.int64), meta[:, 3].astype(np.int64), meta[:, 4]
        parts = self._parts(np.zeros(self.size))
        lam = np.maximum(duals, 0.0)
        for r in range(meta.shape[0]):
            if kind[r] == 0:
                grid = parts["up" if sign[r] > 0 else "lo"][attr[r]]
                grid[cluster[r], value[r]] += lam[r]
            elif kind[r] == 1:
                parts["pos" if sign[r] > 0 else "neg"][attr[r]][cluster[r]] += lam[r]
            elif kind[r] == 3:
                j = [a for a, _, _ in self.pairs].index(attr[r])
                n_values = self.pairs[j][2].shape[1]
                parts["bal"][j][cluster[r], value[r] // n_values, value[r] % n_values] += lam[r]
            else:
                parts["mu"][cluster[r]] += lam[r]
        return self._flatten(parts)

    def _parts(self, vector):
        """Return ``vector`` as grids (k, n_values) per attribute and side, and the rest."""
        out = {"up": [], "lo": [], "pos": [], "neg": [], "bal": []}
        start = 0
        for up, lo in zip(self.ups, self.los, strict=True):
            for name, mask in (("up", up), ("lo", lo)):
                grid = np.zeros(mask.shape)
                n = int(mask.sum())
                grid[mask] = vector[start:start + n]
                out[name].append(grid)
                start += n
        for _ in self.bounds:
            for name in ("pos", "neg"):
                out[name].append(vector[start:start + self.k].copy())
                start += self.k
        for _, _, mask in self.pairs:
            grid = np.zeros(mask.shape)
            n = int(mask.sum())
            grid[mask] = vector[start:start + n]
            out["bal"].append(grid)
            start += n
        out["mu"] = vector[start:start + self.k].copy()
        return out

    def _flatten(self, parts):
        pieces = []
        for up, lo, gu, gl in zip(self.ups, self.los, parts["up"], parts["lo"], strict=True):
            pieces += [gu[up], gl[lo]]
        for pos, neg in zip(parts["pos"], parts["neg"], strict=True):
            pieces += [pos, neg]
        for (_, _, mask), grid in zip(self.pairs, parts["bal"], strict=True):
            pieces.append(grid[mask])
        pieces.append(parts["mu"])
        return np.concatenate(pieces) if pieces else np.zeros(0)

    def prices(self, problem, vector):
        """Return the prices the multipliers ``vector`` charge (see :class:`Prices`)."""
        parts = self._parts(vector)
        k = self.k
        base = np.zeros((problem.n_types, k))
        const = -parts["mu"].copy()
        for a, (up, lo) in enumerate(zip(parts["up"], parts["lo"], strict=True)):
            base += (up - lo)[:, problem.type_table[:, a]].T
            const -= (up * self.uppers[a]).sum(axis=1) - (lo * self.lowers[a]).sum(axis=1)
        for (a, b, _), grid in zip(self.pairs, parts["bal"], strict=True):
            # grid[c, v, u] prices b count(u) - count(v): per value, b times its column sum
            # less its row sum.
            per_value = b * grid.sum(axis=1) - grid.sum(axis=2)
            base += per_value[:, problem.type_table[:, a]].T
        slope = np.zeros((len(self.bounds), k))
        for b, bound in enumerate(self.bounds):
            slope[b] = parts["pos"][b] - parts["neg"][b]
            const -= (parts["pos"][b] + parts["neg"][b]) * bound
        return Prices(base + const[None, :], slope, problem.w_min * float(parts["mu"].sum()),
                      vector)

    def gradient(self, problem, per_type, per_slope):
        """Return the gradient in the multipliers from those in the prices' base and slopes."""
        sizes = per_type.sum(axis=0)
        parts = {"up": [], "lo": [], "pos": [], "neg": [], "bal": []}
        for a, b, mask in self.pairs:
            counts = group_totals(problem.type_table[:, a], per_type, mask.shape[1]).T
            parts["bal"].append(np.where(mask, b * counts[:, None, :] - counts[:, :, None], 0.0))
        for a, (upper, lower) in enumerate(zip(self.uppers, self.lowers, strict=True)):
            counts = group_totals(problem.type_table[:, a], per_type, upper.shape[1]).T
            parts["up"].append(counts - upper * sizes[:, None])
            parts["lo"].append(lower * sizes[:, None] - counts)
        for b, bound in enumerate(self.bounds):
            parts["pos"].append(per_slope[b] - bound * sizes)
            parts["neg"].append(-per_slope[b] - bound * sizes)
        parts["mu"] = problem.w_min - sizes
        return self._flatten(parts)


@numba.njit(cache=True, parallel=True)
def _soft(dist, live, types, weights, base, z, slope, tau, value, per_type, per_slope):
    """Soft-minimum Lagrangian of the live rows: its value and its gradient in the prices.

    IN: dist (n, k), live (m,), types (n,), weights (n,), base (T, k),
    z (B, n), slope (B, k), tau. OUT (summed per fixed block of rows, zeroed
    by the caller): value (blocks,), per_type (blocks, T, k), per_slope
    (blocks, B, k).
    """
    m = live.shape[0]
    k = dist.shape[1]
    blocks = value.shape[0]
    n_num = z.shape[0]
    near = _EXP_NEAR * tau
    for blk in numba.prange(blocks):
        priced = np.empty(k)
        for j in range(blk * m // blocks, (blk + 1) * m // blocks):
            i = live[j]
            t = types[i]
            least = np.inf
            cheapest = 0
            for c in range(k):
                v = dist[i, c] + base[t, c]
                for b in range(n_num):
                    v += z[b, i] * slope[b, c]
                priced[c] = v
                if v < least:
                    least = v
                    cheapest = c
            within = 0
            for c in range(k):
                within += priced[c] - least < near
            w = weights[i]
            if within == 1:
                # The bits of the general case below: a total of exactly 1.0, whose log is
                # not taken, and the least's share w * 1.0 / 1.0.
                value[blk] += w * least
                per_type[blk, t, cheapest] += w
                for b in range(n_num):
                    per_slope[blk, b, cheapest] += w * z[b, i]
                continue
            total = 0.0
            for c in range(k):
                d = priced[c] - least
                priced[c] = (1.0 if d == 0.0 else np.exp(-d / tau)) if d < near else 0.0
                total += priced[c]
            value[blk] += w * (least - (tau * np.log(total) if total != 1.0 else 0.0))
            for c in range(k):
                if priced[c] > 0.0:
                    share = w * priced[c] / total
                    per_type[blk, t, c] += share
                    for b in range(n_num):
                        per_slope[blk, b, c] += share * z[b, i]


def type_sample(dist, live, types, weights, z, n_types, size):
    """Every ``r``-th live row of each type, for a search at a coarse temperature.

    Returns ``(dist, live, types, weights, z)`` of the sample, copied
    contiguous (``_soft`` on rows scattered over ``dist`` took three times as
    long as on as many rows in a block), each row weighted up so that its type
    keeps its total weight; None when ``live`` has at most ``2 * size`` rows.
    Rows are taken by rank within their type in row order, one in
    ``len(live) // size``, from the first: every type keeps a row.
    """
    if live.shape[0] <= 2 * size:
        return None
    stride = live.shape[0] // size
    live_types = types[live]
    order = np.argsort(live_types, kind="stable")
    by_type = live_types[order]
    rank = np.arange(order.shape[0]) - np.searchsorted(by_type, by_type)
    rows = live[np.sort(order[rank % stride == 0])]
    total = np.bincount(live_types, weights=weights[live], minlength=n_types)
    kept = np.bincount(types[rows], weights=weights[rows], minlength=n_types)
    up = np.divide(total, kept, out=np.zeros(n_types), where=kept > 0)
    return (np.ascontiguousarray(dist[rows]), np.arange(rows.shape[0]), types[rows],
            weights[rows] * up[types[rows]], np.ascontiguousarray(z[:, rows]))


def raise_bound(problem, dist, live, prices, bound, lower_bound, rows=None, *,
                thorough=False):
    """Raise the Lagrangian lower bound from the multipliers behind ``prices``.

    Parameters
    ----------
    problem : Problem
    dist : ndarray of shape (n_samples, n_clusters)
    live : ndarray of shape (m,), int64
    prices : Prices
        The relaxation's last prices.
    bound : float
        The bound those prices give.
    lower_bound : callable
        ``lower_bound(problem, dist, live, prices)``: the exact Lagrangian.
    rows : tuple or None
        ``(meta, duals)`` of the programme that made ``prices``: the
        multipliers to start from (else the prices' own, else zeros).
    thorough : bool, default=False
        Whether the prices came from coarsened blocks or from no programme:
        the search runs longer.

    Returns
    -------
    (float, Prices)
        The best bound found (at least ``bound``) and its prices.
    """
    layout = Multipliers.of(problem)
    if rows is not None:
        start = layout.from_rows(*rows)
    elif prices.multipliers is not None:
        start = prices.multipliers
    else:
        start = np.zeros(layout.size)
    z = (np.ascontiguousarray(np.stack([zz for zz, _ in problem.num]))
         if problem.num else np.zeros((0, problem.weights.shape[0])))
    spread = dist[live[:4096]]
    scale = float(np.mean(spread.max(axis=1) - spread.min(axis=1))) or 1.0
    best, best_prices = bound, prices
    x = start
    every_row = (dist, live, problem.types, problem.weights, z)
    sample = type_sample(*every_row, problem.n_types, _SAMPLE_ROWS)
    for step, temperature in enumerate(_TEMPERATURES):
        tau = temperature * scale
        searched = every_row if sample is None or step == len(_TEMPERATURES) - 1 else sample

        def negative(vector, tau=tau, searched=searched):
            row_dist, row_live, row_types, row_weights, row_z = searched
            p = layout.prices(problem, vector)
            value = np.zeros(_CHUNKS)
            per_type = np.zeros((_CHUNKS, problem.n_types, layout.k))
            per_slope = np.zeros((_CHUNKS, z.shape[0], layout.k))
            _soft(row_dist, row_live, row_types, row_weights, p.base, row_z, p.slope, tau, value,
                  per_type, per_slope)
            grad = layout.gradient(problem, per_type.sum(axis=0), per_slope.sum(axis=0))
            return -(float(value.sum()) + p.bonus), -grad

        with serial_blas():  # the search's BLAS on one thread, _soft on the call's
            x = minimize(negative, x, jac=True, method="L-BFGS-B",
                         bounds=[(0.0, None)] * layout.size,
                         options={"maxiter": _ITERATIONS_THOROUGH if thorough
                                          else _ITERATIONS}).x
        candidate = layout.prices(problem, x)
        exact = lower_bound(problem, dist, live, candidate)
        if exact > best:
            best, best_prices = exact, candidate
    return best, best_prices


guard_kernel_caches(globals())
