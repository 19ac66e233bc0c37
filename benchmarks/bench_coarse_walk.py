"""The coarse-to-fine walk against the walk on every row, on large data, in one process.

A relative weight's fit on 400,000 rows or more climbs the ladder of weights
on a seeded 100,000-row sample and then minimises every row once
(``fairkm.cluster._walk``). This script fits each data set at each
``relative_weight`` twice, with that walk (the library's default) and with
the walk on every row (``coarse_walk=False``: the clustering the library
gave before the coarse walk), and prints for each:

* the seconds of each, as ratios to ``KMeans(n_init=1)`` fitted on the same
  rows first (one thread for all three, so the machine's second core does not
  decide), and the passes over every row;
* the objective the walk on every row minimised (its ``fairness_weight_``,
  with the same attribute weights), of the coarse walk's clustering over its
  own, minus 1 (below 0: the coarse walk found the lower optimum of it);
* the product's rule for a faster walk: the K-Means cost at most 0.5% above
  the walk on every row's, and each attribute's mean and worst cluster (its
  total-variation distance from the dataset's mix, numeric attributes by
  their standardised mean's gap) at most 1% above; "ok" or what broke.

Data sets: ``bench_regimes.py``'s overlapping 1,000,000 x 10 blobs, k=10 (every
attribute tied to the blobs); ``make_sensitive_blobs`` 1,000,000 x 8 with 12
blobs, k=8, three categorical attributes and a numeric one; and UCI Adult
(``fetch_adult``'s standard pipeline, five attributes) with each row
repeated to 450,000 rows or more plus a little noise (the count in its
header), k=10: data no parameter was tuned to.

The coarse walk serves relative weights up to 1 (``COARSE_UP_TO``): at larger
ones both fits walk every row and agree to the bit. ``--coarse-up-to W`` makes
it serve weights up to ``W`` (how ``docs/scale.md`` measured it above 1).

Run: ``python benchmarks/bench_coarse_walk.py [--weights 0.5,1] [--seeds 0,1,2]
[--sets overlapping,blobs,adult] [--coarse-up-to W] [--data-home DATA]``.
"""

import argparse
import time
import warnings

import bench_scale
import numba
import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from fairkm import FairKM
from fairkm.cluster import _weighting
from fairkm.datasets import fetch_adult, make_sensitive_blobs

# The product's rule (issue 41): a faster walk's clustering may cost at most this much more,
# and leave each attribute's mean and worst cluster at most this much further from the mix.
COST_SLACK = 0.005
MIX_SLACK = 0.01


def overlapping():
    X, sensitive = bench_scale.data(1_000_000, 10, 10)
    return X, sensitive, 10


def blobs():
    X, sensitive, _ = make_sensitive_blobs(1_000_000, n_features=8, centers=12,
                                           n_values=(2, 3, 4), numeric=1, cluster_std=2.5,
                                           random_state=3)
    return X, sensitive, 8


def adult(data_home):
    bunch = fetch_adult(data_home=data_home, download_if_missing=False)
    X = np.ascontiguousarray(bunch.features, dtype=float)
    rng = np.random.default_rng(0)
    repeats = -(-450_000 // X.shape[0])
    X = np.repeat(X, repeats, axis=0)
    X += rng.normal(scale=0.01 * X.std(axis=0), size=X.shape)
    sensitive = bunch.sensitive.loc[bunch.sensitive.index.repeat(repeats)]
    sensitive = sensitive.reset_index(drop=True)
    return np.ascontiguousarray(X), sensitive, 10


def mix_distances(model):
    """Per attribute, (mean, worst) distance of the clusters from the dataset's mix."""
    deviation = model.cluster_deviation_  # tests/test_weights.py checks it against a recount
    return {name: (float(np.nanmean(row)), float(np.nanmax(row)))
            for name, row in zip(model.sensitive_attributes_.names, deviation, strict=True)}


def fit(X, sensitive, k, weight, seed, **params):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = FairKM(k, relative_weight=weight, random_state=seed, **params).fit(
            X, sensitive_features=sensitive)
    return model, time.perf_counter() - start


def compare(name, X, sensitive, k, weights, seeds):
    with threadpool_limits(1):
        start = time.perf_counter()
        KMeans(k, n_init=1, random_state=0).fit(X)
        kmeans = time.perf_counter() - start
    print(f"\n{name}: {X.shape[0]:,} x {X.shape[1]}, k={k}, KMeans(n_init=1) {kmeans:.2f} s")
    print("weight seed | coarse      passes | every row   passes | objective  | cost     worst "
          "attribute (mean, worst)   rule")
    for weight in weights:
        for seed in seeds:
            coarse, coarse_s = fit(X, sensitive, k, weight, seed)
            whole, whole_s = fit(X, sensitive, k, weight, seed, coarse_walk=False)
            cost = coarse.inertia_ / whole.inertia_ - 1.0
            # The walk on every row's objective (its fairness_weight_ and attribute weights),
            # of both clusterings: which is the lower optimum of the problem it solved.
            same = np.array_equal(coarse.attribute_weights_, whole.attribute_weights_)
            priced = coarse.inertia_ + whole.fairness_weight_ * coarse.fairness_
            objective = (f"{priced / whole.objective_ - 1.0:+.3%}" if same
                         else "other weights")
            a, b = mix_distances(coarse), mix_distances(whole)
            rises = {attr: (a[attr][0] / b[attr][0] - 1.0, a[attr][1] / b[attr][1] - 1.0)
                     for attr in a}
            worst_mean = max(rises, key=lambda attr: rises[attr][0])
            worst_max = max(rises, key=lambda attr: rises[attr][1])
            broke = []
            if cost > COST_SLACK:
                broke.append(f"cost {cost:+.2%}")
            broke += [f"{attr} {which} {rise:+.2%}" for attr, pair in rises.items()
                      for which, rise in zip(("mean", "worst"), pair, strict=True)
                      if rise > MIX_SLACK]
            print(f"{weight:<6g} {seed:<4d} | {coarse_s:5.2f} s {coarse_s / kmeans:4.2f}x "
                  f"{coarse.n_iter_:3d} | {whole_s:5.2f} s {whole_s / kmeans:4.2f}x "
                  f"{whole.n_iter_:3d}"
                  f" | {objective:>10} | {cost:+.3%} {worst_mean} {rises[worst_mean][0]:+.2%}, "
                  f"{worst_max} {rises[worst_max][1]:+.2%} | "
                  f"{'ok' if not broke else 'BROKE: ' + '; '.join(broke)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="0.5,1")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sets", default="overlapping,blobs,adult")
    parser.add_argument("--coarse-up-to", type=float, default=None)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    if args.coarse_up_to is not None:
        _weighting.COARSE_UP_TO = args.coarse_up_to
    weights = [float(w) for w in args.weights.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    numba.set_num_threads(1)
    # Compile (or load) every kernel the fits use before anything is timed.
    X, sensitive, k = overlapping()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FairKM(k, random_state=0).fit(X[:400_000], sensitive_features=sensitive.iloc[:400_000])
    makers = {"overlapping": overlapping, "blobs": blobs,
              "adult": lambda: adult(args.data_home)}
    for name in args.sets.split(","):
        X, sensitive, k = makers[name]()
        compare(name, X, sensitive, k, weights, seeds)


if __name__ == "__main__":
    main()
