"""The measurements behind FairKM's default ``tol`` and ``init``.

1. ``tol`` at the default weight (``fairness_weight="auto"``): the objective
   a fit ends at with each candidate ``tol``, relative to the same fit taken
   to strict local optima (``tol=0`` in every phase), with the number of
   sweeps, on Adult (both pipelines, k=5 and 15), diabetes and 20,000
   overlapping blobs. The default must end within 0.5% of ``tol=0``.
2. ``tol`` at the paper's weight (Adult, the paper's pipeline, lambda=1e6),
   for users of absolute weights, and 200,000 blob points at ``(n/k)^2``.
3. ``init``: the objective reached from the paper's random assignment and from
   k-means++ seeding, mean over seeds, on Adult at lambda=1e6.

Run: ``python benchmarks/bench_defaults.py [--data-home ../shared/data] [--seeds 10]``.
"""

import argparse
import time
import warnings
from pathlib import Path

import bench_scale
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.datasets import fetch_adult, make_sensitive_blobs

TOLS = (1e-3, 1e-4, 1e-5, 1e-6)


def fit(X, sensitive, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        model = FairKM(**{"n_init": 1, **params}).fit(X, sensitive_features=sensitive)
    return model, time.perf_counter() - start


def tol_table(name, X, sensitive, k, weight, seeds, **params):
    print(f"\n{name}, k={k}, fairness_weight={weight}: objective gap to tol=0 (mean, max over "
          f"{len(seeds)} seeds), sweeps, seconds")
    exact = [fit(X, sensitive, n_clusters=k, fairness_weight=weight, tol=0.0, max_iter=5000,
                 random_state=s, **params) for s in seeds]
    print(f"  tol=0      gap 0            sweeps {np.mean([m.n_iter_ for m, _ in exact]):7.1f}"
          f"  time {np.mean([t for _, t in exact]):6.2f}s")
    for tol in TOLS:
        runs = [fit(X, sensitive, n_clusters=k, fairness_weight=weight, tol=tol, max_iter=5000,
                    random_state=s, **params) for s in seeds]
        gaps = [(m.objective_ - e.objective_) / e.objective_
                for (m, _), (e, _) in zip(runs, exact, strict=True)]
        print(f"  tol={tol:<7g} gap {np.mean(gaps):9.2e} (max {np.max(gaps):9.2e})  sweeps "
              f"{np.mean([m.n_iter_ for m, _ in runs]):7.1f}  time "
              f"{np.mean([t for _, t in runs]):6.2f}s")


def init_table(X, sensitive, k, weight, seeds):
    print(f"\nAdult k={k}, fairness_weight={weight}: objective by init (mean +- sd over "
          f"{len(seeds)} seeds, default tol)")
    for init in ("random", "k-means++"):
        runs = [fit(X, sensitive, n_clusters=k, fairness_weight=weight, init=init,
                    random_state=s)[0] for s in seeds]
        objective = np.array([m.objective_ for m in runs])
        inertia = np.array([m.inertia_ for m in runs])
        fairness = np.array([m.fairness_ for m in runs])
        print(f"  {init:<10} objective {objective.mean():10.2f} +- {objective.std():8.2f}  "
              f"inertia {inertia.mean():9.2f}  fairness {fairness.mean():.3e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    few = seeds[:3]
    # 1. The default weight, with its default n_init (10 k-means++ starts at these sizes).
    for preprocess in ("standard", "paper"):
        adult = fetch_adult(data_home=args.data_home, download_if_missing=False,
                            preprocess=preprocess)
        X = np.ascontiguousarray(adult.features, dtype=np.float64)
        for k in (5, 15):
            tol_table(f"Adult ({preprocess} pipeline)", X, adult.sensitive, k, "auto", few,
                      n_init="auto")
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    tol_table("diabetes", X, sensitive, 5, "auto", few, n_init="auto")
    Xo, so = bench_scale.data(20_000, 10, 10)
    tol_table("overlapping blobs 20,000 x 10", Xo, so, 10, "auto", few, n_init="auto")
    # 2. The paper's weight.
    adult = fetch_adult(data_home=args.data_home, download_if_missing=False, preprocess="paper",
                        as_frame=True)
    X = np.ascontiguousarray(adult.features, dtype=np.float64)
    for k in (5, 15):
        tol_table("Adult (paper pipeline)", X, adult.sensitive, k, 1e6, seeds)
    Xb, sb, _ = make_sensitive_blobs(200_000, n_features=10, centers=10,
                                     n_values=(2, 5, 6, 7, 41), cluster_std=5.0, random_state=0)
    tol_table("blobs 200,000 x 10", Xb, sb, 10, "paper", few)
    # 3. init, at the paper's weight.
    for k in (5, 15):
        init_table(X, adult.sensitive, k, 1e6, seeds)


if __name__ == "__main__":
    main()
