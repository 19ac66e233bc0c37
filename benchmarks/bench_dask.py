"""fairkm.dask against the single-machine exact engine, from the same initial centres.

Fits ``make_sensitive_blobs`` data (default 1,000,000 x 10, k=10, five
categorical sensitive attributes with 2, 5, 6, 7 and 41 values, blobs of
standard deviation 5 so that they overlap: at the generator's default of 1
the k-means++ start is already a local optimum and no row moves) with
``fairkm.dask.FairKM`` on a ``LocalCluster`` (2 worker processes, one thread
each, the rows scattered to them in ``--partitions`` partitions) and with
``fairkm.FairKM(algorithm="exact")`` in this process, both from the same
k-means++ centres, with the paper's ``fairness_weight="paper"`` ((n/k)^2) and
``tol=1e-6``, the settings of the numbers in docs/scale.md.

Prints the wall time, number of rounds (sweeps) and objective of each, the
ratio of the times (dask / exact) and the objective gap in percent.

Run: ``python benchmarks/bench_dask.py [--n-samples N] [--partitions P] [--cluster-std S]``.
"""

import argparse
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from sklearn.cluster import kmeans_plusplus

from fairkm import FairKM
from fairkm.dask import FairKM as DaskFairKM
from fairkm.datasets import make_sensitive_blobs

N_VALUES = (2, 5, 6, 7, 41)


PAPER = {"fairness_weight": "paper", "tol": 1e-6}

def data(n, d, k, cluster_std, seed=0):
    X, sensitive, _ = make_sensitive_blobs(
        n, n_features=d, centers=k, n_values=N_VALUES, cluster_std=cluster_std,
        random_state=seed,
    )
    # Integer codes, as a user with a million rows would pass.
    codes = sensitive.apply(lambda col: col.str[1:].astype(np.int64)).to_numpy()
    return np.ascontiguousarray(X), np.ascontiguousarray(codes)


def scattered(client, array, n_partitions):
    """A dask array whose row partitions are held by the workers (not embedded in the graph)."""
    blocks = np.array_split(array, n_partitions)
    futures = client.scatter(blocks)
    return da.concatenate([
        da.from_delayed(future, shape=block.shape, dtype=block.dtype)
        for future, block in zip(futures, blocks, strict=True)
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=10)
    parser.add_argument("--n-clusters", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--cluster-std", type=float, default=5.0)
    args = parser.parse_args()
    n, d, k = args.n_samples, args.n_features, args.n_clusters
    X, codes = data(n, d, k, args.cluster_std)
    centers, _ = kmeans_plusplus(X, k, random_state=0)

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        Xd = scattered(client, X, args.partitions)
        Sd = scattered(client, codes, args.partitions)
        # Compile (or load) the kernels here and on the workers outside the timings.
        small_X, small_codes = data(300, d, k, args.cluster_std)
        FairKM(k, random_state=0).fit(small_X, sensitive_features=small_codes)
        DaskFairKM(k, random_state=0).fit(
            da.from_array(small_X, chunks=(150, d)),
            sensitive_features=da.from_array(small_codes, chunks=(150, codes.shape[1])),
        )

        start = time.perf_counter()
        distributed = DaskFairKM(k, init=centers, **PAPER).fit(Xd, sensitive_features=Sd)
        t_dask = time.perf_counter() - start
        start = time.perf_counter()
        exact = FairKM(k, init=centers, algorithm="exact", **PAPER).fit(
            X, sensitive_features=codes
        )
        t_exact = time.perf_counter() - start

    print(f"{n:,d} x {d}, k={k}, cluster_std={args.cluster_std:g}, "
          f"{args.partitions} partitions on 2 workers")
    print(f"  fairkm.dask   {t_dask:8.2f} s  {distributed.n_iter_:4d} rounds  "
          f"objective {distributed.objective_:.10g}")
    print(f"  FairKM exact  {t_exact:8.2f} s  {exact.n_iter_:4d} sweeps  "
          f"objective {exact.objective_:.10g}")
    gap = 100.0 * (distributed.objective_ - exact.objective_) / exact.objective_
    print(f"  time ratio dask/exact {t_dask / t_exact:6.2f}   objective gap {gap:+.4f} %")


if __name__ == "__main__":
    main()
