"""BoundedKMeans(max_deviation=0) against the PyPI package fair-kmeans on its own problem.

fair-kmeans (Chierichetti et al.'s exact 50/50 balance for a binary colour,
by min-cost flow, alternated with centre updates from k-means++) solves the
problem ``BoundedKMeans(max_deviation=0)`` states: every cluster holds as many
rows of each colour. The data: ``make_blobs`` (4,000 rows, 4 blobs, 2
features, ``cluster_std=1.5``) with the colour tied to the blobs (blobs 0 and
1 one colour, 2 and 3 the other: 2,000 each), k = 4, seeds ``--seeds``. Both
objectives are measured the same way: the K-Means cost of the labels to their
own means (``fairkm.metrics.clustering_objective``); the balance of both
clusterings is checked.

fair-kmeans is not a fairkm dependency. Install it in a separate virtual
environment (``python -m venv /work/venvs/fairkmeans &&
/work/venvs/fairkmeans/bin/pip install fair-kmeans``) and pass its interpreter
as ``--fair-kmeans-python``; its fit runs there, on the same arrays (written
to a temporary folder). Without it, only fairkm runs.

Run: ``python benchmarks/bench_bounds_peer.py --fair-kmeans-python
/work/venvs/fairkmeans/bin/python [--seeds 0,1]``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs

from fairkm.cluster import BoundedKMeans
from fairkm.metrics import clustering_objective

N_CLUSTERS = 4

# Runs in fair-kmeans' environment: fit, then write the labels and the time.
_PEER = f"""
import json, sys, time
import numpy as np
from fair_kmeans import FairKMeans
folder, seed = sys.argv[1], int(sys.argv[2])
X, colour = np.load(folder + "/X.npy"), np.load(folder + "/colour.npy")
start = time.perf_counter()
model = FairKMeans(n_clusters={N_CLUSTERS}, random_state=seed).fit(X, color=colour)
seconds = time.perf_counter() - start
np.save(folder + "/labels.npy", np.asarray(model.labels_))
json.dump({{"seconds": seconds}}, open(folder + "/peer.json", "w"))
"""


def data(seed):
    """4,000 rows in 4 blobs, the colour tied to them: blobs 0 and 1 against 2 and 3."""
    X, blob = make_blobs(n_samples=4000, centers=N_CLUSTERS, n_features=2, cluster_std=1.5,
                         random_state=seed)
    return X, (blob < 2).astype(np.int32)


def balanced(labels, colour):
    """Whether every cluster holds as many rows of each colour."""
    k = int(labels.max()) + 1
    return bool(np.array_equal(np.bincount(labels[colour == 0], minlength=k),
                               np.bincount(labels[colour == 1], minlength=k)))


def peer(python, X, colour, seed):
    """fair-kmeans' labels and fit time, from its own interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        np.save(Path(folder) / "X.npy", X)
        np.save(Path(folder) / "colour.npy", colour)
        subprocess.run([python, "-c", _PEER, folder, str(seed)], check=True,
                       stdout=subprocess.DEVNULL)
        labels = np.load(Path(folder) / "labels.npy")
        seconds = json.loads((Path(folder) / "peer.json").read_text())["seconds"]
    return labels, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fair-kmeans-python", default=None,
                        help="interpreter of a virtual environment with fair-kmeans")
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args(argv)
    print("| seed | fairkm objective | fairkm time (s) | fair-kmeans objective "
          "| fair-kmeans time (s) | fairkm / fair-kmeans | both balanced |")
    print("|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.seeds.split(",")):
        X, colour = data(seed)
        start = time.perf_counter()
        model = BoundedKMeans(N_CLUSTERS, max_deviation=0.0, random_state=seed).fit(
            X, sensitive_features=colour)
        seconds = time.perf_counter() - start
        ours = clustering_objective(X, model.labels_)
        if args.fair_kmeans_python is None:
            print(f"| {seed} | {ours:,.1f} | {seconds:.1f} | | | | "
                  f"{balanced(model.labels_, colour)} |", flush=True)
            continue
        labels, peer_seconds = peer(args.fair_kmeans_python, X, colour, seed)
        theirs = clustering_objective(X, labels)
        both = balanced(model.labels_, colour) and balanced(labels, colour)
        print(f"| {seed} | {ours:,.1f} | {seconds:.1f} | {theirs:,.1f} | {peer_seconds:.0f} | "
              f"{ours / theirs:.4f} | {'yes' if both else 'no'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
