"""Guaranteed bounds (fairkm.bounds): the time of one bounded assignment, and Adult.

``scale``: one bounded assignment (``fair_assignment(..., max_iter=1)``,
additive bound 0.05 on three attributes of 2, 5 and 3 values) of
``make_sensitive_blobs`` rows (10 features, 8 overlapping blobs) to
``KMeans(n_init=1)``'s centres, for n = 1e3 .. 1e6 and k = 5, 20. Each case
runs in a child process with a wall-clock cap (``--cap``, seconds); the
baseline is that child's ``KMeans(n_init=1)`` fit on the same data, and the
ratio printed is bounded-assignment time / K-Means fit time. Modes:

* exact: the linear programme on every row (rows x clusters variables),
  solved by HiGHS, then the rounding; run while rows x clusters <= ``--max-exact``;
* sample: the default ``max_lp_variables=300_000`` beyond it (a stratified
  sample of 300,000 / k rows, its prices for every row, the rows closest to
  changing cluster solved again with the rest held, then the rounding);
  where both ran, the sample mode's cost (to the same centres) over the exact one's.

The time spent rounding (the integer programmes on the fractional rows) is
shown apart from the total.

``adult``: the paper's pipeline (``fetch_adult(preprocess="paper")``, 15,682
rows, 44 features, all five sensitive attributes), k = 5 and 15, seeds 0..2:
K-Means (scikit-learn, best of 10 starts), FairKM (default weight) and one
bounded assignment from FairKM's centres (``fair_assignment(max_iter=1)``,
what ``FairKM(max_deviation=...)`` does) at each additive bound of
``--deltas``; with ``--alternate``, also the alternation
(``max_iter=20``) at the tightest bound. Means over the seeds of CO
(squared), AE, ME, MW (principled), MPV (delta 0.2), the mean being over the
attributes, then each attribute's ME.

Run: ``python benchmarks/bench_bounds.py scale [--max-exact 5000000] [--cap 300]``
and ``python benchmarks/bench_bounds.py adult --alternate [--data-home ../shared/data]``
(the numbers of ``docs/bounds.md``).
"""

import argparse
import multiprocessing
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans

from fairkm import FairKM
from fairkm.bounds import BoundNotMetWarning, _assign, fair_assignment
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.metrics import clustering_objective, fairness_report

LP_VARIABLES = 300_000  # fair_assignment's default max_lp_variables


def timed(function, *args, **kwargs):
    """Call ``function``; return its result, wall seconds, and the seconds spent rounding."""
    spent = [0.0]
    rounding = _assign._round

    def counted(*a, **kw):
        start = time.perf_counter()
        try:
            return rounding(*a, **kw)
        finally:
            spent[0] += time.perf_counter() - start

    _assign._round = counted
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BoundNotMetWarning)
            out = function(*args, **kwargs)
    finally:
        _assign._round = rounding
    return out, time.perf_counter() - start, spent[0]


def _case(n, k, mode):
    """One scale case (in a child process): K-Means' fit, then one bounded assignment."""
    X, S, _ = make_sensitive_blobs(n, n_features=10, centers=8, n_values=(2, 5, 3),
                                   cluster_std=2.0, random_state=0)
    start = time.perf_counter()
    centers = KMeans(k, n_init=1, random_state=0).fit(X).cluster_centers_
    kmeans_seconds = time.perf_counter() - start
    limit = n * k + 1 if mode == "exact" else LP_VARIABLES
    result, seconds, rounding = timed(fair_assignment, X, centers, S, max_deviation=0.05,
                                      max_lp_variables=limit, random_state=0)
    return {"kmeans": kmeans_seconds, "seconds": seconds, "rounding": rounding,
            "cost": result.assignment_cost, "met": result.satisfied,
            "violation": result.violation, "rounded": result.n_rounded,
            "exact": result.exact}


def _capped(cap, *args):
    """Run ``_case`` in a child process; None if it runs past ``cap`` seconds."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(_case, args)
        try:
            return pending.get(timeout=cap)
        except multiprocessing.TimeoutError:
            pool.terminate()
            return None


def scale(max_exact, sizes, ks, cap):
    print("| n | k | mode | programme size (rows x k) | K-Means fit (s) | bounded (s) "
          "| of which rounding (s) | bounded / K-Means | cost / exact | bound met | violation "
          "| rows rounded |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        for n in sizes:
            modes = (["exact"] if n * k <= max_exact else []) + (
                ["sample"] if n * k > LP_VARIABLES else [])
            exact_cost = None
            for mode in modes:
                size = (f"{n * k:,}" if mode == "exact"
                        else f"2 x {(LP_VARIABLES // k) * k:,}")
                out = _capped(cap, n, k, mode)
                if out is None:
                    print(f"| {n:,} | {k} | {mode} | {size} | | > {cap} (stopped) | | | | | | |",
                          flush=True)
                    continue
                if mode == "exact":
                    exact_cost = out["cost"]
                ratio = ("" if exact_cost is None or mode == "exact"
                         else f"{out['cost'] / exact_cost:.4f}")
                print(f"| {n:,} | {k} | {mode} | {size} | {out['kmeans']:.2f} | "
                      f"{out['seconds']:.1f} | {out['rounding']:.1f} | "
                      f"{out['seconds'] / out['kmeans']:.0f} | {ratio} | "
                      f"{'yes' if out['met'] else 'no'} | {out['violation']:.2g} | "
                      f"{out['rounded']} |", flush=True)


MEASURES = ["CO", "AE", "ME", "MW", "MPV"]


def _scores(X, S, labels):
    report = fairness_report(labels, sensitive_features=S)
    row = {"CO": clustering_objective(X, labels)}
    row.update({m: float(report.loc["mean", m]) for m in MEASURES[1:]})
    row.update({f"ME {a}": float(report.loc[a, "ME"]) for a in S.columns})
    return row


def adult(data_home, deltas, seeds, alternate):
    bunch = fetch_adult(data_home=data_home, preprocess="paper", download_if_missing=False)
    X = np.ascontiguousarray(bunch.features, dtype=np.float64)
    S = bunch.sensitive
    rows = []
    for k in (5, 15):
        for seed in seeds:
            start = time.perf_counter()
            kmeans = KMeans(k, n_init=10, random_state=seed).fit(X)
            rows.append({"k": k, "seed": seed, "method": "K-Means (best of 10)",
                         "seconds": time.perf_counter() - start,
                         **_scores(X, S, kmeans.labels_)})
            start = time.perf_counter()
            fair = FairKM(k, random_state=seed).fit(X, sensitive_features=S)
            fair_seconds = time.perf_counter() - start
            rows.append({"k": k, "seed": seed, "method": "FairKM (default weight)",
                         "seconds": fair_seconds, **_scores(X, S, fair.labels_)})
            runs = [(delta, 1) for delta in deltas]
            if alternate:
                runs.append((min(deltas), 20))
            for delta, max_iter in runs:
                result, seconds, rounding = timed(
                    fair_assignment, X, fair.cluster_centers_, S, max_deviation=delta,
                    max_iter=max_iter, random_state=seed)
                name = (f"FairKM + bounds {delta}" if max_iter == 1
                        else f"FairKM + bounds {delta}, alternated")
                rows.append({"k": k, "seed": seed, "method": name,
                             "seconds": fair_seconds + seconds, "rounding": rounding,
                             "met": float(result.satisfied), "violation": result.violation,
                             "assignments": result.n_iter,
                             **_scores(X, S, result.labels)})
            print(f"# k={k} seed={seed} done", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    mean = table.drop(columns="seed").groupby(["k", "method"], sort=False).mean()
    base = mean.xs("K-Means (best of 10)", level="method")["CO"]
    mean["CO / K-Means"] = mean["CO"] / base.reindex(mean.index.get_level_values("k")).values
    met = mean["met"].map(lambda v: "" if np.isnan(v) else f"{v * len(seeds):.0f}/{len(seeds)}")
    print(f"Means over seeds {', '.join(map(str, seeds))}; ME, MW, MPV, AE: mean over the "
          "attributes.\n")
    print("| k | method | CO (squared) | CO / K-Means | AE | ME | MW | MPV | bound met "
          "| worst violation | assignments | time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = table.drop(columns="seed").groupby(["k", "method"], sort=False)["violation"].max()
    for (k, method), r in mean.iterrows():
        violation = worst[(k, method)]
        print(f"| {k} | {method} | {r['CO']:.0f} | {r['CO / K-Means']:.3f} | {r['AE']:.4f} | "
              f"{r['ME']:.4f} | {r['MW']:.4f} | {r['MPV']:.4f} | {met[(k, method)]} | "
              f"{'' if np.isnan(violation) else f'{violation:.2g}'} | "
              f"{'' if np.isnan(r['assignments']) else f'{r.assignments:.1f}'} | "
              f"{r['seconds']:.1f} |")
    print("\nME per attribute (means over the seeds):\n")
    names = list(S.columns)
    print("| k | method | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for (k, method), r in mean.iterrows():
        print(f"| {k} | {method} | " + " | ".join(f"{r[f'ME {a}']:.4f}" for a in names) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["scale", "adult"])
    parser.add_argument("--max-exact", type=int, default=5_000_000,
                        help="largest rows x clusters solved exactly (default 5,000,000)")
    parser.add_argument("--cap", type=float, default=300.0,
                        help="seconds one scale case may run before it is stopped (default 300)")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--ks", default="5,20")
    parser.add_argument("--deltas", default="0.2,0.1,0.05")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--alternate", action="store_true",
                        help="also alternate centres and assignments (max_iter=20) at the "
                             "tightest bound")
    parser.add_argument("--data-home", default="../shared/data")
    args = parser.parse_args(argv)
    if args.part == "scale":
        scale(args.max_exact, [int(s) for s in args.sizes.split(",")],
              [int(k) for k in args.ks.split(",")], args.cap)
    else:
        adult(args.data_home, [float(d) for d in args.deltas.split(",")],
              [int(s) for s in args.seeds.split(",")], args.alternate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
