"""How much of a default fit's sweeps a sound skip test could save: points settled between sweeps.

A sweep prices every point against every cluster. Between two sweeps under the
same weights most points stay, and a test in the spirit of Hamerly's bounds for
K-Means could prove it for many of them without pricing them: a point stays
when the margin by which it stayed last time exceeds how far any of its prices
can have moved since. This script measures that potential on a default
``FairKM`` fit before anyone builds it. After each sweep it prices every point
at the statistics the sweep ended on (the end of one sweep standing in for the
moment a point is visited in it) and, against the previous sweep's prices under
the same weights, counts the points:

* ``stayed``: whose cluster the sweep did not change;
* ``oracle``: whose margin (its cheapest move's price less its stay's) exceeds
  the exact change of every one of its prices: what a test storing every price
  of every point could settle;
* ``bound``: whose margin exceeds a bound computable from one margin and one
  distance per point and per-cluster summaries of the change: the K-Means part
  from each centre's drift and the centres' distances to the point's own
  (triangle inequality, as Hamerly's), the fairness part from the largest change of
  a value's share of ``lin`` per attribute and cluster (the sweep's lin table)
  and the change of the clusters' size factors. ``wrong`` counts points this
  bound settled that moved all the same (0 if the end-of-sweep proxy holds);
* ``split``: a simpler test that prices the K-Means part exactly at the visit
  (the sweep computes the blocks' distances anyway) and bounds only the
  fairness part of the margin, kept per point as its least over the other
  clusters: it settles fewer, and would save only the fairness terms' pricing.

The first sweep of each phase (new weights) is not counted: every price changed.
Sweep times are measured around the sweep alone; ``saved at most`` is the sum
over the counted sweeps of their time times the share ``bound`` settles, the
time a skip test would save if a settled point cost nothing, as a share of a
clean fit's time (the same fit in the same process, without the analysis),
and the ratio that fit would then have to ``KMeans(n_init=1)`` fitted on the
same data in the same process.

Unit sample weights only (the fits here have none).

The share is a ceiling: it counts neither the test nor keeping what it needs
(each point's margin and distance, the windows' snapshots and odometers). A
settling sweep built on the ``bound`` column and measured on 2026-11-30 saved
less than that upkeep cost on the overlapping blobs, where most sweeps are a
phase's first or follow a busy one (``docs/scale.md``), and was withdrawn.

Run: ``python benchmarks/bench_sweep_skips.py [--n 1000000] [--adult DATA_HOME]``.
"""

import argparse
import time
import warnings

import bench_scale
import numba
import numpy as np
from sklearn.cluster import KMeans

from fairkm import FairKM
from fairkm.cluster import _engine
from fairkm.cluster import _kernels as K


@numba.njit(cache=True)
def every_price(X, terms, labels, stats, dist_out, price_out):
    """Each point's squared distances and its sweep prices (``price[i, a]``: leaving a)."""
    codes, Z = terms.codes, terms.Z
    counts = stats.counts
    k = counts.shape[0]
    p = 2 - terms.cluster_exponent
    grow, shrink = K.size_factors(counts)
    _, factors = K.fair_factors(terms, stats, p)
    dist, lin, costs = np.empty(k), np.empty(k), np.empty(k)
    for i in range(X.shape[0]):
        K.point_terms(X, codes, terms.value_prop, terms.cat_coef, Z, terms.num_coef, i,
                      stats.centers, counts, stats.value_counts, stats.cat_dev, stats.num_sums,
                      dist, lin)
        change = K.point_base(codes, terms.value_const, terms.cat_coef, Z, terms.num_coef, i)
        K.move_prices(False, 1.0, change, dist, lin, labels[i], counts, grow, shrink, p,
                      factors, costs)
        for c in range(k):
            dist_out[i, c] = dist[c]
            price_out[i, c] = costs[c]


def lin_table(stats, terms):
    """Each categorical value's share of ``lin`` per cluster, (V, k), as the sweep's table."""
    excess = stats.value_counts - stats.counts[None, :] * terms.value_prop[:, None]
    table = np.empty_like(excess)
    for t in range(len(terms.offsets) - 1):
        rows = slice(terms.offsets[t], terms.offsets[t + 1])
        dev = (terms.value_prop[rows, None] * excess[rows]).sum(axis=0)
        table[rows] = terms.cat_coef[t] * (excess[rows] - dev[None, :])
    return table


def size_terms(stats, terms):
    """Per cluster: K-Means factors (join, leave), fairness 1/|C'|^p and f*growth/|C'|^p."""
    counts = stats.counts
    p = 2 - terms.cluster_exponent
    grow = counts / (counts + 1.0)
    shrink = np.where(counts > 1, counts / np.maximum(counts - 1.0, 1e-300), 0.0)
    if p == 0:
        one, zero = np.ones_like(counts), np.zeros_like(counts)
        return grow, shrink, one, one, zero, zero
    quad = K.cluster_quad(terms.value_prop, terms.offsets, terms.cat_coef, terms.num_coef,
                          counts, stats.value_counts, stats.num_sums)
    f = quad / counts**p
    join_inv, leave_inv = 1.0 / (counts + 1.0) ** p, 1.0 / (counts - 1.0) ** p
    join_f = f * ((counts + 1.0) ** p - counts**p) * join_inv
    leave_f = f * (counts**p - (counts - 1.0) ** p) * leave_inv
    return grow, shrink, join_inv, leave_inv, join_f, leave_f


class Recorder:
    """Wraps the engine's sweep: times it, then compares the prices with the last sweep's."""

    def __init__(self):
        self.last, self.rows = None, []

    def __call__(self, X, terms, lam, order, labels, stats, quiet=None):
        began = time.perf_counter()
        moved = self.sweep(X, terms, lam, order, labels, stats, quiet)
        seconds = time.perf_counter() - began
        exact = stats.copy()
        exact.recompute(X, terms, labels)
        kernel_terms = terms.kernel(lam)
        n, k = X.shape[0], exact.counts.shape[0]
        dist, price = np.empty((n, k)), np.empty((n, k))
        every_price(X, kernel_terms, labels, exact.kernel(), dist, price)
        now = {"key": (lam, terms.cat_weight.tobytes(), terms.num_weight.tobytes()),
               "labels": labels.copy(), "dist": dist, "price": price, "stats": exact,
               "terms": kernel_terms}
        if self.last is not None and self.last["key"] == now["key"]:
            self.rows.append((lam > 0, moved, seconds, *self.compare(self.last, now)))
        else:
            self.rows.append((lam > 0, moved, seconds, None, None, None, None, None))
        self.last = now
        return moved

    @staticmethod
    def compare(before, after):
        a = before["labels"]
        n = a.shape[0]
        rows = np.arange(n)
        terms, s0, s1 = after["terms"], before["stats"], after["stats"]
        stay0 = before["price"][rows, a]
        others = before["price"].copy()
        others[rows, a] = np.inf
        margin = others.min(axis=1) - stay0
        stayed = after["labels"] == a
        oracle = stayed & (margin > np.abs(after["price"] - before["price"]).max(axis=1))
        # K-Means part: centres' drift, distances bounded through the own centre
        c0, c1 = s0.centers, s1.centers
        drift = np.sqrt(((c1 - c0) ** 2).sum(axis=0))
        apart = np.sqrt(((c0[:, :, None] - c0[:, None, :]) ** 2).sum(axis=0))
        reach = np.sqrt(before["dist"][rows, a])[:, None] + apart[a]
        g0, h0, ji0, li0, jf0, lf0 = size_terms(s0, terms)
        g1, h1, ji1, li1, jf1, lf1 = size_terms(s1, terms)
        km = g1 * (2 * reach * drift + drift**2) + np.abs(g1 - g0) * reach**2
        km[rows, a] = (h1[a] * (2 * reach[rows, a] * drift[a] + drift[a] ** 2)
                       + np.abs(h1[a] - h0[a]) * reach[rows, a] ** 2)
        # fairness part: the lin table's drift per attribute and cluster
        t0, t1 = lin_table(s0, terms), lin_table(s1, terms)
        moved_lin, size_lin = np.zeros_like(drift), np.zeros_like(drift)
        for t in range(len(terms.offsets) - 1):
            values = slice(terms.offsets[t], terms.offsets[t + 1])
            moved_lin += np.abs(t1[values] - t0[values]).max(axis=0)
            size_lin += np.abs(t0[values]).max(axis=0)
        num = np.abs(terms.Z * terms.num_coef[None, :])  # (n, B)
        num_moved = num @ np.abs(s1.num_sums - s0.num_sums)
        num_size = num @ np.abs(s0.num_sums)
        change = np.zeros(n)
        for t in range(terms.codes.shape[1]):
            change += terms.cat_coef[t] * terms.value_const[terms.codes[:, t]]
        change += (terms.Z**2 * terms.num_coef[None, :]).sum(axis=1)
        change = np.abs(change)[:, None]
        join = (change * np.abs(ji1 - ji0) + 2 * ((moved_lin + num_moved) * ji1
                                                  + (size_lin + num_size) * np.abs(ji1 - ji0))
                + np.abs(jf1 - jf0))
        leave = (change * np.abs(li1 - li0) + 2 * ((moved_lin + num_moved) * li1
                                                   + (size_lin + num_size) * np.abs(li1 - li0))
                 + np.abs(lf1 - lf0))
        fair = join
        fair[rows, a] = leave[rows, a]
        # distances exact at the visit, the fairness part's margin bounded
        km0 = before["dist"] * g0[None, :]
        km0[rows, a] = before["dist"][rows, a] * h0[a]
        fair0 = before["price"] - km0
        phi = fair0 - fair0[rows, a][:, None]
        phi[rows, a] = np.inf
        km1 = after["dist"] * g1[None, :]
        own1 = after["dist"][rows, a] * h1[a]
        km1[rows, a] = np.inf
        fb = fair.copy()
        fb_own = fb[rows, a].copy()
        fb[rows, a] = -np.inf
        exact_km = stayed & ((km1.min(axis=1) - own1) + phi.min(axis=1)
                             > (fb.max(axis=1) + fb_own) * (1.0 + 1e-9))
        moves = km + fair
        own = moves[rows, a].copy()
        moves[rows, a] = -np.inf
        settled = margin > (moves.max(axis=1) + own) * (1.0 + 1e-9)
        return (stayed.mean(), oracle.mean(), settled.mean(), int((settled & ~stayed).sum()),
                exact_km.mean())


def run(name, X, sensitive, k, fit_params):
    warnings.simplefilter("ignore")
    began = time.perf_counter()
    KMeans(k, n_init=1, random_state=0).fit(X)
    t_kmeans = time.perf_counter() - began
    FairKM(k, random_state=0, **fit_params).fit(X, sensitive_features=sensitive)  # compiled
    began = time.perf_counter()
    FairKM(k, random_state=0, **fit_params).fit(X, sensitive_features=sensitive)
    t_fit = time.perf_counter() - began
    recorder = Recorder()
    recorder.sweep, _engine.sweep = _engine.sweep, recorder
    try:
        FairKM(k, random_state=0, **fit_params).fit(X, sensitive_features=sensitive)
    finally:
        _engine.sweep = recorder.sweep
    print(f"{name}: KMeans(n_init=1) {t_kmeans:.2f} s, FairKM {t_fit:.2f} s "
          f"({t_fit / t_kmeans:.2f}x), {len(recorder.rows)} sweeps")
    print("  phase   moved      ms   stayed  oracle   bound  wrong   split")
    saved = 0.0
    for fair, moved, seconds, stayed, oracle, bound, wrong, split in recorder.rows:
        phase = "fair " if fair else "blind"
        if stayed is None:
            print(f"  {phase} {moved:8d} {seconds * 1e3:7.1f}   (new weights: not counted)")
            continue
        saved += seconds * bound
        print(f"  {phase} {moved:8d} {seconds * 1e3:7.1f}   {stayed:6.4f}  {oracle:6.4f}  "
              f"{bound:6.4f}  {wrong:5d}  {split:6.4f}")
    print(f"  saved at most {saved:.2f} s of the fit's {t_fit:.2f} s ({saved / t_fit:.0%}): "
          f"{(t_fit - saved) / t_kmeans:.2f}x KMeans(n_init=1) instead of "
          f"{t_fit / t_kmeans:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--adult", default=None, metavar="DATA_HOME",
                        help="also Adult (preprocess='paper') at k=5 and 15, from DATA_HOME")
    args = parser.parse_args()
    numba.set_num_threads(args.threads)
    X, sensitive = bench_scale.data(args.n, 10, 10)
    run(f"(c) overlapping, {args.n:,} x 10, k=10", X, sensitive, 10, {})
    if args.adult:
        from fairkm.datasets import fetch_adult

        bunch = fetch_adult(preprocess="paper", data_home=args.adult,
                            download_if_missing=False)
        X = np.ascontiguousarray(bunch.features, dtype=np.float64)
        for k in (5, 15):
            run(f"Adult (paper), k={k}", X, bunch.sensitive, k, {})


if __name__ == "__main__":
    main()
