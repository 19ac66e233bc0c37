"""FairKM at scale on one machine: the mini-batch engine against the exact one.

Three parts, each comparing engines in the same process (or, for memory, in
fresh child processes of the same script):

``minibatch``
    1,000,000 x 10, k=10, 5 categorical attributes (2, 5, 6, 7, 41 values),
    ``fairness_weight="paper"`` (the paper's (n/k)^2) and ``tol=1e-6``, the
    settings of the published measurements: the exact engine and the mini-batch engine
    (several batch sizes) from the same k-means++ centres. Prints wall times,
    passes, the objective gap to the exact engine in % (target: within 1%)
    and the wall-time ratio mini-batch / exact.
``large``
    10,000,000 x 20, k=20, 5 attributes, each engine in a fresh process:
    wall time of the fit (target: under 5 minutes), passes, and peak memory:
    the fit's own peak allocations from ``tracemalloc`` (numpy's are traced)
    against ``X``'s size and against a ``KMeans(n_init=1)`` fit's peak on the
    same ``X`` in the same process (target: X plus the fit's peak at most 1.2
    times X plus K-Means'). The paper's weight with each engine, and the
    default fit (the walk, whose snapshots of the labels a fixed weight
    does not keep).
``curves``
    Seconds per exact sweep and per mini-batch epoch against n (10^4 to
    10^7; d=10, k=10, 5 attributes), against k (n=10^6) and against the
    number of attributes (n=10^6), written to ``docs/scaling.png``.

Threads are numba's (all cores unless ``NUMBA_NUM_THREADS`` says otherwise).

Run: ``python benchmarks/bench_scale.py [--part minibatch|large|curves|all]
[--quick] [--timeout S]``.
"""

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numba
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from fairkm import FairKM

N_VALUES = (2, 5, 6, 7, 41, 3, 4, 8, 12, 20)
DOCS = Path(__file__).resolve().parent.parent / "docs"
# The engines are compared at the paper's weight and the stopping rule of the
# numbers in docs/scale.md (the default weight's fits end in a few sweeps: bench_weights.py).
PAPER = {"fairness_weight": "paper", "tol": 1e-6}


def data(n, d, k, n_attributes=5, seed=0):
    """Overlapping blobs with integer-coded attributes that follow the blobs for 60% of the points.

    The blobs' standard deviation is 5 (centres in [-10, 10]^d), so that they
    overlap and the fairness term moves points: well-separated blobs start
    at a local optimum that no engine leaves.
    """
    X, y = make_blobs(n, n_features=d, centers=k, cluster_std=5.0, random_state=seed)
    rng = np.random.default_rng(seed)
    columns = {}
    for a in range(n_attributes):
        m = N_VALUES[a]
        follow = rng.random(n) < 0.6
        columns[f"s{a}"] = np.where(follow, y % m, rng.integers(0, m, n))
    return np.ascontiguousarray(X), pd.DataFrame(columns)


def start_centers(X, k, seed=0):
    sample = np.random.default_rng(seed).choice(X.shape[0], min(X.shape[0], 100_000), replace=False)
    centers, _ = kmeans_plusplus(X[np.sort(sample)], k, random_state=seed)
    return centers


def timed_fit(X, sensitive, centers, **params):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = FairKM(len(centers), init=centers, random_state=0, **{**PAPER, **params}).fit(
            X, sensitive_features=sensitive
        )
    return time.perf_counter() - start, model


def part_minibatch(quick):
    n, d, k = (100_000, 10, 10) if quick else (1_000_000, 10, 10)
    X, sensitive = data(n, d, k)
    centers = start_centers(X, k)
    print(f"{n:,} x {d}, k={k}, 5 attributes, fairness_weight='paper', "
          f"{numba.get_num_threads()} threads; same k-means++ start")
    timed_fit(X[:2000], sensitive[:2000], centers, algorithm="minibatch")  # compile
    t_exact, exact = timed_fit(X, sensitive, centers, algorithm="exact")
    print(f"  exact               {t_exact:7.2f} s  {exact.n_iter_:4d} sweeps   "
          f"objective {exact.objective_:.8g}")
    for batch_size in (1024, 4096, 16384):
        t_mini, mini = timed_fit(X, sensitive, centers, algorithm="minibatch",
                                 batch_size=batch_size)
        gap = 100.0 * (mini.objective_ - exact.objective_) / exact.objective_
        print(f"  minibatch b={batch_size:<6d} {t_mini:7.2f} s  {mini.n_iter_:4d} passes   "
              f"objective {mini.objective_:.8g}  gap {gap:+.3f}%   "
              f"ratio minibatch/exact {t_mini / t_exact:.2f}")


def traced_peak(fit):
    """Run ``fit()``; return its result and the peak of the allocations it traced (bytes)."""
    tracemalloc.start()
    try:
        result = fit()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def child_large(n, d, k, algorithm):
    """Run in a fresh process: one fit, its time and its peak allocations, and K-Means'.

    ``algorithm`` "default" fits FairKM at its defaults (the walk, ``algorithm="auto"``);
    an engine's name fits it at the paper's weight from the same k-means++ centres.
    """
    X, sensitive = data(n, d, k)
    centers = start_centers(X, k)
    data_bytes = X.nbytes + sensitive.memory_usage(index=False).sum()
    # Compiled before the clock and the tracing start, on a slice.
    KMeans(k, n_init=1, random_state=0).fit(X[:2000])
    if algorithm == "default":
        def fit():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = FairKM(k, random_state=0).fit(X, sensitive_features=sensitive)
            return time.perf_counter() - start, model
        FairKM(k, random_state=0).fit(X[:2000], sensitive_features=sensitive[:2000])
    else:
        def fit():
            return timed_fit(X, sensitive, centers, algorithm=algorithm)
        timed_fit(X[:2000], sensitive[:2000], centers, algorithm=algorithm)
    (seconds, model), peak = traced_peak(fit)
    _, kmeans_peak = traced_peak(lambda: KMeans(k, n_init=1, random_state=0).fit(X))
    return dict(seconds=seconds, passes=int(model.n_iter_), objective=float(model.objective_),
                converged=bool(model.n_iter_ < model.max_iter),
                data_gb=data_bytes / 1e9, x_gb=X.nbytes / 1e9, fit_peak_gb=peak / 1e9,
                kmeans_peak_gb=kmeans_peak / 1e9)


def part_large(quick, timeout):
    n, d, k = (1_000_000, 20, 20) if quick else (10_000_000, 20, 20)
    print(f"{n:,} x {d}, k={k}, 5 attributes, fairness_weight='paper', each engine in a "
          f"fresh process (stopped after {timeout} s)")
    results = {}
    for algorithm in ("minibatch", "exact", "default"):
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--child", json.dumps([n, d, k, algorithm])],
                check=True, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            print(f"  {algorithm:<9s} not finished after {timeout} s (data generation included)")
            continue
        r = results[algorithm] = json.loads(out.stdout.strip().splitlines()[-1])
        total = (r["data_gb"] + r["fit_peak_gb"]) / r["data_gb"]
        held = (r["x_gb"] + r["fit_peak_gb"]) / (r["x_gb"] + r["kmeans_peak_gb"])
        per_x, per_kmeans = r["fit_peak_gb"] / r["x_gb"], r["fit_peak_gb"] / r["kmeans_peak_gb"]
        print(f"  {algorithm:<9s} fit {r['seconds']:7.1f} s  {r['passes']:4d} passes  "
              f"objective {r['objective']:.8g}  data {r['data_gb']:.2f} GB (X "
              f"{r['x_gb']:.2f} GB)  fit's peak allocations {r['fit_peak_gb']:.2f} GB  "
              f"(data + peak) / data {total:.2f}\n"
              f"            peak / X {per_x:.2f}  K-Means(n_init=1)'s peak "
              f"{r['kmeans_peak_gb']:.2f} GB  peak / K-Means' {per_kmeans:.2f}  "
              f"(X + peak) / (X + K-Means') {held:.2f}", flush=True)
    if "exact" in results and "minibatch" in results:
        exact, mini = results["exact"], results["minibatch"]
        gap = 100.0 * (mini["objective"] - exact["objective"]) / exact["objective"]
        print(f"  ratio minibatch/exact {mini['seconds'] / exact['seconds']:.2f}, "
              f"objective gap {gap:+.3f}%")


def per_pass(X, sensitive, centers, algorithm, passes=4, repeats=2):
    """Seconds per sweep (or epoch): a (1 + passes)-pass fit minus a one-pass fit, best of repeats.

    The first pass, which moves the most points, is in both fits; what is
    timed is the steady cost of the later passes.
    """
    def best(max_iter):
        runs = [timed_fit(X, sensitive, centers, algorithm=algorithm, max_iter=max_iter,
                          tol=0.0) for _ in range(repeats)]
        return min(seconds for seconds, _ in runs), runs[0][1]

    short, _ = best(1)
    long, model = best(1 + passes)
    return max(long - short, 0.0) / max(1, model.n_iter_ - 1)


def part_curves(quick):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base_n = 100_000 if quick else 1_000_000
    sizes = [10_000, 100_000] + ([] if quick else [1_000_000, 10_000_000])
    ks = [5, 10, 20, 40]
    attributes = [0, 1, 2, 5, 10]
    rows = []

    def measure(axis, value, n, k, n_attributes):
        X, sensitive = data(n, 10, k, n_attributes)
        centers = start_centers(X, k)
        sens = sensitive if n_attributes else None
        for algorithm in ("exact", "minibatch"):
            seconds = per_pass(X, sens, centers, algorithm)
            rows.append(dict(axis=axis, value=value, algorithm=algorithm, seconds=seconds))
            print(f"  {axis:<11s} {value:>10,}  {algorithm:<9s} {seconds * 1e3:9.1f} ms per pass")

    X, sensitive = data(2000, 10, 5)
    for algorithm in ("exact", "minibatch"):  # compile
        per_pass(X, sensitive, start_centers(X, 5), algorithm)
    print(f"seconds per pass, d=10, {numba.get_num_threads()} threads")
    for n in sizes:
        measure("n", n, n, 10, 5)
    for k in ks:
        measure("k", k, base_n, k, 5)
    for a in attributes:
        measure("attributes", a, base_n, 10, a)

    table = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    labels = {"n": "n (samples)", "k": f"k (clusters), n={base_n:,}",
              "attributes": f"sensitive attributes, n={base_n:,}"}
    for ax, axis in zip(axes, ("n", "k", "attributes"), strict=True):
        part = table[table["axis"] == axis]
        for algorithm, marker in (("exact", "o"), ("minibatch", "s")):
            line = part[part["algorithm"] == algorithm]
            ax.plot(line["value"], line["seconds"], marker=marker, label=algorithm)
        if axis == "n":
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(labels[axis])
        ax.set_ylabel("seconds per sweep / epoch")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"FairKM time per pass over the data (d=10, k=10, 5 attributes unless "
                 f"varied; {numba.get_num_threads()} threads)")
    fig.tight_layout()
    DOCS.mkdir(exist_ok=True)
    name = "scaling-quick.png" if quick else "scaling.png"
    fig.savefig(DOCS / name, dpi=110)
    print(f"wrote {DOCS / name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("minibatch", "large", "curves", "all"), default="all")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    parser.add_argument("--timeout", type=int, default=900,
                        help="seconds each engine may take in the large part (default 900)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child_large(*json.loads(args.child))))
        return
    parts = ("minibatch", "large", "curves") if args.part == "all" else (args.part,)
    for part in parts:
        print(f"== {part}")
        if part == "large":
            part_large(args.quick, args.timeout)
        else:
            globals()[f"part_{part}"](args.quick)


if __name__ == "__main__":
    main()
