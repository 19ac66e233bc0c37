"""Command line: ``fairkm`` (or ``python -m fairkm``).

The CLI parses arguments, calls the library and prints; it holds no algorithm.
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd
from sklearn.cluster import KMeans

from . import __version__
from ._fairkm import FairKM
from .datasets import make_sensitive_blobs
from .metrics import clustering_report, fairness_report

DEMO_DESCRIPTION = """\
Cluster a synthetic dataset whose blobs over-represent some groups of three
sensitive attributes (two categorical, one numeric), with fairness-blind
K-Means and with FairKM, and print quality (CO: K-Means objective, SH:
silhouette) and fairness (AE/ME: mean/max Euclidean distance between a
cluster's and the dataset's mix, AW/MW: the same with Wasserstein; lower is
fairer; means over attributes) for both.

example:
  fairkm demo --n-samples 20000 --n-clusters 6 --random-state 1
"""


def _demo(args):
    X, sensitive, _ = make_sensitive_blobs(
        args.n_samples, n_features=4, centers=args.n_clusters, n_values=(2, 5),
        numeric=1, cluster_std=2.5, random_state=args.random_state,
    )
    sensitive.columns = ["sex", "region", "age"]
    print(f"fairkm {__version__} demo: {args.n_samples:,} points, 4 features, sensitive "
          f"attributes {list(sensitive.columns)}, k={args.n_clusters}\n")
    start = time.perf_counter()
    kmeans = KMeans(args.n_clusters, n_init=1, random_state=args.random_state).fit(X)
    t_kmeans = time.perf_counter() - start
    start = time.perf_counter()
    fair = FairKM(args.n_clusters, fairness_weight=args.fairness_weight,
                  random_state=args.random_state).fit(X, sensitive_features=sensitive)
    t_fair = time.perf_counter() - start
    rows = {}
    for name, labels, seconds in (("K-Means (S-blind)", kmeans.labels_, t_kmeans),
                                  ("FairKM", fair.labels_, t_fair)):
        quality = clustering_report(X, labels, sample_size=min(5000, len(X)),
                                    random_state=0)
        fairness = fairness_report(labels, sensitive_features=sensitive).loc["mean"]
        rows[name] = {"CO": quality["CO"], "SH": quality["SH"],
                      **{m: fairness[m] for m in ("AE", "AW", "ME", "MW")},
                      "seconds": seconds}
    table = pd.DataFrame(rows).T
    with pd.option_context("display.float_format", "{:.4g}".format, "display.width", 120):
        print(table)
    fair_row, blind_row = table.loc["FairKM"], table.loc["K-Means (S-blind)"]
    print(f"\nFairKM (fairness_weight={fair.fairness_weight_:.3g}) lowers mean AE by "
          f"{1 - fair_row['AE'] / blind_row['AE']:.0%} for a K-Means objective "
          f"{fair_row['CO'] / blind_row['CO'] - 1:+.1%}.")
    return 0


def _fairness_weight(text):
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number, got {text!r}") from None


def build_parser():
    """Return the argument parser of the ``fairkm`` command."""
    parser = argparse.ArgumentParser(
        prog="fairkm",
        description="Fair clustering with many sensitive attributes at once (FairKM).",
    )
    parser.add_argument("--version", action="version", version=f"fairkm {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="compare K-Means and FairKM on built-in synthetic data",
        description=DEMO_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--n-samples", type=int, default=5000, help="points (default 5000)")
    demo.add_argument("--n-clusters", type=int, default=5, help="clusters (default 5)")
    demo.add_argument("--fairness-weight", type=_fairness_weight, default="auto",
                      help="FairKM's fairness weight: 'auto' (the paper's (n/k)^2, the default) "
                      "or a number")
    demo.add_argument("--random-state", type=int, default=0, help="seed (default 0)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    """Run the ``fairkm`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"fairkm: error: {exc}", file=sys.stderr)
        return 1
