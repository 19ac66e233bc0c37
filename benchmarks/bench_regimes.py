"""The default fit in three regimes of data, on 1 and 2 threads, against KMeans(n_init=1).

1,000,000 x 10 points, k=10, five categorical sensitive attributes (2, 5, 6, 7
and 41 values), in one process:

* (a) separated blobs, the attributes independent of them;
* (b) separated blobs, two attributes tied to the blob label (60% of the
  points), three independent;
* (c) overlapping blobs (``bench_scale.py``'s), every attribute tied.

For each regime and thread count: scikit-learn's ``KMeans(n_init=1)`` fit
(the baseline, its BLAS on as many threads), FairKM at its defaults, and the
exact and mini-batch engines named explicitly, each as a ratio to the
baseline (best of ``--repeats``), with the passes of FairKM's S-blind and
fair phases; then, at k = 5, 10, 20 and 50 on the overlapping blobs, one
exact sweep against one Lloyd iteration, both on one thread
(scikit-learn's own kernel, ``lloyd_iter_chunked_dense``):

* the first sweep from a 3-iteration K-Means (5 attributes, every cluster
  counted alike, weight 1,000: about 5% of the points move);
* a steady sweep of a whole fit (the paper's weight, from k-means++ centres):
  a 6-sweep fit minus a 1-sweep fit, over 5, as ``bench_scale.py`` times it;
* the floor: one pass that only finds each point's nearest centre with the
  sweep's blocked distances (``fairkm.cluster._kernels``), nothing else.

``--load N`` runs N busy processes beside the measurements, so the 1- and
2-thread times compare on a shared machine (a 2-thread fit must not be slower
than a 1-thread one).

Run: ``python benchmarks/bench_regimes.py [--n 1000000] [--repeats 2] [--load 0]
[--regimes abc] [--sweep-ks 5,10,20,50]``.
"""

import argparse
import multiprocessing
import time
import warnings

import bench_scale
import numba
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense  # one Lloyd iteration
from threadpoolctl import threadpool_limits

from fairkm import FairKM
from fairkm.cluster import _kernels
from fairkm.cluster._encoding import SensitiveEncoding
from fairkm.cluster._engine import Stats, sweep
from fairkm.utils._progress import listening
from fairkm.utils._sensitive import check_sensitive_features

N_VALUES = bench_scale.N_VALUES


def separated(n, tied, seed=0):
    """Blobs 10 apart (unit spread) whose first ``tied`` attributes follow the blob label."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=10.0, size=(10, 10))
    blob = rng.integers(0, 10, n)
    X = centers[blob] + rng.normal(size=(n, 10))
    columns = {}
    for a, m in enumerate(N_VALUES[:5]):
        random = rng.integers(0, m, n)
        columns[f"s{a}"] = (np.where(rng.random(n) < 0.6, blob % m, random) if a < tied
                            else random)
    return np.ascontiguousarray(X), pd.DataFrame(columns)


def regimes(n):
    yield "(a) separated, independent attributes", *separated(n, tied=0)
    yield "(b) separated, 2 tied attributes", *separated(n, tied=2)
    yield "(c) overlapping, tied attributes", *bench_scale.data(n, 10, 10)


def best(func, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def passes(X, sensitive, **params):
    """Fit FairKM; return (model, passes of each kind in order, e.g. 'sweep 4, epoch 2')."""
    kinds = []
    with warnings.catch_warnings(), listening(lambda p: kinds.append(p.kind)):
        warnings.simplefilter("ignore")
        model = FairKM(10, random_state=0, **params).fit(X, sensitive_features=sensitive)
    runs = []
    for kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return model, ", ".join(f"{k} {c}" for k, c in runs)


def phases(X, sensitive, params):
    """Passes of the S-blind phase and of the fair phase(s), and the fit's own description."""
    blind, _ = passes(X, sensitive, relative_weight=0.0, **params)
    model, described = passes(X, sensitive, **params)
    return blind.n_iter_, model.n_iter_ - blind.n_iter_, described


@numba.njit(cache=True, nogil=True)
def nearest_pass(X, order, centers, labels):
    """The floor of a sweep: each point's nearest centre, by the sweep's blocks of distances."""
    block = _kernels.BLOCK
    coords, dist = np.empty((X.shape[1], block)), np.empty((centers.shape[1], block))
    for start in range(0, X.shape[0], block):
        m = min(block, X.shape[0] - start)
        _kernels.gather_block(X, order, start, m, coords)
        _kernels.all_distances(coords, m, centers, dist)
        for r in range(m):
            best = 0
            for c in range(1, centers.shape[1]):
                if dist[c, r] < dist[best, r]:
                    best = c
            labels[start + r] = best


def sweep_against_lloyd(X, sensitive, k, repeats):
    """ns per point, one thread: first sweep, steady sweep, floor and one Lloyd iteration."""
    n = X.shape[0]
    features = check_sensitive_features(sensitive, n_samples=n)
    terms = SensitiveEncoding.from_features(features, n).terms(
        features, np.ones(features.n_attributes), cluster_exponent=0)
    start = KMeans(k, n_init=1, max_iter=3, random_state=0).fit(X)
    labels0 = start.labels_.astype(np.int64)
    order = np.arange(n, dtype=np.int64)

    def one_sweep():
        labels = labels0.copy()
        stats = Stats(k, X.shape[1], terms)
        stats.recompute(X, terms, labels)
        began = time.perf_counter()
        sweep(X, terms, 1e3, order, labels, stats)
        return time.perf_counter() - began

    one_sweep()
    t_sweep = min(one_sweep() for _ in range(repeats))
    t_steady = bench_scale.per_pass(X, sensitive, bench_scale.start_centers(X, k), "exact",
                                    passes=5, repeats=repeats)
    centers = np.ascontiguousarray(start.cluster_centers_)
    by_feature, labels = np.ascontiguousarray(centers.T), np.empty(n, dtype=np.int64)
    nearest_pass(X, order, by_feature, labels)
    t_floor, _ = best(lambda: nearest_pass(X, order, by_feature, labels), repeats)
    # One Lloyd iteration of scikit-learn's KMeans (its own kernel, on one thread).
    centers_new, shift = np.empty_like(centers), np.empty(k)
    weight_in, sample_weight = np.empty(k), np.ones(n)
    lloyd_labels = np.empty(n, dtype=np.int32)
    t_lloyd, _ = best(lambda: lloyd_iter_chunked_dense(
        X, sample_weight, centers, centers_new, weight_in, lloyd_labels, shift, 1), repeats)
    return {name: value * 1e9 / n for name, value in
            (("first", t_sweep), ("steady", t_steady), ("floor", t_floor), ("lloyd", t_lloyd))}


def busy():
    while True:
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the runs")
    parser.add_argument("--regimes", default="abc",
                        help="letters of the regimes to fit (empty: none)")
    parser.add_argument("--sweep-ks", default="5,10,20,50",
                        help="k of the sweep-against-Lloyd table (empty: skip it)")
    args = parser.parse_args()
    workers = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for worker in workers:
        worker.start()
    try:
        print(f"{args.n:,} x 10, k=10; {args.load} busy process(es) beside; best of "
              f"{args.repeats}")
        for name, X, sensitive in regimes(args.n):
            if name[1] not in args.regimes:
                continue
            print(name)
            for threads in (1, 2):
                numba.set_num_threads(threads)
                with threadpool_limits(threads):
                    t_km, _ = best(lambda X=X: KMeans(10, n_init=1, random_state=0).fit(X),
                                   args.repeats)
                    blind, fair, described = phases(X, sensitive, {})
                    t_default, _ = best(lambda X=X, s=sensitive: passes(X, s), args.repeats)
                    t_exact, (exact, _) = best(
                        lambda X=X, s=sensitive: passes(X, s, algorithm="exact"), args.repeats)
                    t_mini, (mini, _) = best(
                        lambda X=X, s=sensitive: passes(X, s, algorithm="minibatch"),
                        args.repeats)
                print(f"  {threads} thread(s): KMeans(n_init=1) {t_km:6.2f} s | default "
                      f"{t_default / t_km:5.2f}x ({blind} S-blind + {fair} fair passes: "
                      f"{described}) | exact {t_exact / t_km:5.2f}x | minibatch "
                      f"{t_mini / t_km:5.2f}x | default / exact {t_default / t_exact:4.2f} | "
                      f"objective minibatch / exact {mini.objective_ / exact.objective_:.5f}",
                      flush=True)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        if args.sweep_ks:
            print("one exact sweep against one Lloyd iteration, one thread, ns per point "
                  "(first: from a 3-iteration K-Means; steady: a whole fit's later sweeps)")
            X, sensitive = bench_scale.data(args.n, 10, 10)
            numba.set_num_threads(1)
            with threadpool_limits(1):
                for k in (int(v) for v in args.sweep_ks.split(",")):
                    t = sweep_against_lloyd(X, sensitive, k, args.repeats)
                    lloyd = t["lloyd"]
                    print(f"  k={k:3}: first sweep {t['first']:6.1f}, steady sweep "
                          f"{t['steady']:6.1f}, floor {t['floor']:6.1f}, Lloyd {lloyd:6.1f}; "
                          f"/ Lloyd: first {t['first'] / lloyd:5.2f}, steady "
                          f"{t['steady'] / lloyd:5.2f}, floor {t['floor'] / lloyd:5.2f}",
                          flush=True)
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    finally:
        for worker in workers:
            worker.terminate()


if __name__ == "__main__":
    main()
