"""FairKM engine speed against scikit-learn's KMeans, in one process, on the same data.

Prints
1. the time of one exact FairKM sweep against one Lloyd iteration of
   ``KMeans(n_init=1)`` at 15,682 x 8 (k=5 and 15) and 1,000,000 x 10 (k=10),
   both on one thread (the sweep is serial; ``algorithm="exact"`` named, as
   ``"auto"`` runs mini-batch epochs at the paper's weight above 100,000 rows);
2. the ratio of a whole default FairKM fit (every parameter at its default:
   the scale-free weight, one k-means++ start at this size, ``tol=1e-4``) to
   a whole default ``KMeans(n_init=1)`` fit, on these 1,000,000 x 10 blobs
   (k=10) and on ``bench_scale.py``'s overlapping ones (target: <= 3 for
   both), with the paper's ``fairness_weight="paper"`` ((n/k)^2, the former
   default, ``tol=1e-6``) beside them for comparison.

The data carry 5 categorical sensitive attributes with 2, 5, 6, 7 and 41
values, each following the blobs for 60% of the points.

Run: ``python benchmarks/bench_fit.py [--quick]``.
"""

import argparse
import time
import warnings

import bench_scale
import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs

N_VALUES = (2, 5, 6, 7, 41)


def data(n, d, k, seed=0):
    X, sensitive, _ = make_sensitive_blobs(
        n, n_features=d, centers=k, n_values=N_VALUES, random_state=seed
    )
    # Integer codes, as a user with a million rows would pass (categorical dtype works too).
    sensitive = sensitive.apply(lambda col: col.str[1:].astype(np.int64))
    return np.ascontiguousarray(X), sensitive


def best_of(repeats, func):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def per_iteration(fit, iterations, repeats):
    """Seconds per iteration: the difference between a long and a one-iteration fit."""
    long = best_of(repeats, lambda: fit(1 + iterations))
    short = best_of(repeats, lambda: fit(1))
    return (long - short) / iterations


def sweep_vs_lloyd(n, d, k, repeats):
    X, sensitive = data(n, d, k)
    centers = X[np.random.RandomState(1).choice(n, k, replace=False)]

    def lloyd(max_iter):
        with warnings.catch_warnings():
            # A one-iteration fit from sampled points may leave a cluster empty.
            warnings.simplefilter("ignore", ConvergenceWarning)
            km = KMeans(k, init=centers, n_init=1, max_iter=max_iter, tol=0.0).fit(X)
        assert km.n_iter_ == max_iter, "KMeans converged early: timing would be wrong"

    def fairkm(max_iter):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # One phase at an absolute weight: max_iter sweeps exactly.
            FairKM(k, fairness_weight="paper", init=centers, n_init=1, max_iter=max_iter,
                   tol=0.0, algorithm="exact").fit(
                X, sensitive_features=sensitive
            )

    t_lloyd = per_iteration(lloyd, 5, repeats)
    t_sweep = per_iteration(fairkm, 5, repeats)
    print(
        f"{n:>9,d} x {d:<3d} k={k:<3d} FairKM sweep {t_sweep * 1e3:8.1f} ms   "
        f"Lloyd iteration {t_lloyd * 1e3:7.1f} ms   ratio {t_sweep / t_lloyd:5.2f}"
    )


def whole_fit(name, X, sensitive, k, repeats):
    t_km = best_of(repeats, lambda: KMeans(k, n_init=1, random_state=0).fit(X))
    km = KMeans(k, n_init=1, random_state=0).fit(X)
    print(f"whole fit, {name} {X.shape[0]:,d} x {X.shape[1]}, k={k}: KMeans(n_init=1) "
          f"{t_km:6.2f} s ({km.n_iter_} iterations)")
    for label, params, target in (("defaults", {}, " (target <= 3)"),
                                  ("paper's (n/k)^2, tol=1e-6",
                                   {"fairness_weight": "paper", "tol": 1e-6}, "")):
        model = FairKM(k, random_state=0, **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            t_fair = best_of(repeats, lambda m=model: m.fit(X, sensitive_features=sensitive))
        note = "  (did not converge)" if caught else ""
        print(f"  FairKM {label:<26s} {t_fair:6.2f} s ({model.n_iter_} sweeps)  "
              f"ratio {t_fair / t_km:5.2f}{target}{note}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    big = 100_000 if args.quick else 1_000_000
    repeats = 1 if args.quick else 3
    # Compile the kernels outside the timings.
    X, s = data(200, 3, 3)
    FairKM(3, random_state=0).fit(X, sensitive_features=s)
    with threadpool_limits(1):
        sweep_vs_lloyd(15_682, 8, 5, repeats)
        sweep_vs_lloyd(15_682, 8, 15, repeats)
        sweep_vs_lloyd(big, 10, 10, repeats)
    whole_fit("separated blobs", *data(big, 10, 10), 10, repeats)
    whole_fit("overlapping blobs (bench_scale.py)", *bench_scale.data(big, 10, 10), 10, repeats)


if __name__ == "__main__":
    main()
