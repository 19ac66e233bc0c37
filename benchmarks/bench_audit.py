"""An audit's time against the fit it audits, quiet and beside busy processes.

A new user's first steps: ``FairKM(k).fit`` on about 1,000 rows of Adult, then
:func:`fairkm.report.audit` of it (its reference, scikit-learn's
``KMeans(n_init=10)``, and the silhouettes), and the scorer of
:func:`fairkm.metrics.make_fair_clustering_scorer` on the same fit. Each is
timed with no busy process beside it and then beside ``--load`` processes
that spin (``python -c "while True: pass"``, started and killed here); the
script prints the median of ``--repeats`` runs of each and the audit's and
the scorer's ratio to the fit, measured in the same process. The issue's
target: an audit at most 2x its fit beside two busy processes.

Run: ``python benchmarks/bench_audit.py [--data-home ../shared/data] [--n 1000]
[--load 2] [--repeats 5]``.
"""

import argparse
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.datasets import fetch_adult
from fairkm.metrics import make_fair_clustering_scorer
from fairkm.report import audit

ATTRIBUTES = ["marital-status", "race", "sex", "relationship"]
FEATURES = ["age", "education-num", "hours-per-week"]


def rows(data_home, n):
    """``n`` rows of Adult's undersample (seed 0): standardised features, attributes."""
    frame = fetch_adult(data_home=data_home, preprocess=None, download_if_missing=False).data
    picked = np.random.RandomState(0).choice(len(frame), size=n, replace=False)
    frame = frame.iloc[picked].reset_index(drop=True)
    X = StandardScaler().fit_transform(frame[FEATURES].to_numpy(dtype=float))
    return X, frame[ATTRIBUTES].astype(str)


def median_seconds(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(X, S, k, repeats):
    """Median seconds of the fit, the audit and the scorer."""
    model = FairKM(k, random_state=0).fit(X, sensitive_features=S)
    scorer = make_fair_clustering_scorer()
    return {
        "fit": median_seconds(lambda: FairKM(k, random_state=0).fit(X, sensitive_features=S),
                              repeats),
        "audit": median_seconds(lambda: audit(model, X, sensitive_features=S,
                                              check_data=False), repeats),
        "scorer": median_seconds(lambda: scorer(model, X, sensitive_features=S), repeats),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--load", type=int, default=2, help="busy processes beside the runs")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, S = rows(args.data_home, args.n)
    warnings.simplefilter("ignore")
    measure(X, S, args.k, 1)  # compiles the kernels and loads the libraries
    print(f"Adult, {args.n} rows x {X.shape[1]}, {S.shape[1]} attributes, k={args.k}; "
          f"median of {args.repeats}")
    for load in (0, args.load):
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(load)]
        try:
            times = measure(X, S, args.k, args.repeats)
        finally:
            for process in busy:
                process.kill()
                process.wait()
        print(f"  {load} busy: fit {times['fit']:.3f} s | audit {times['audit']:.3f} s "
              f"({times['audit'] / times['fit']:.2f}x the fit) | scorer "
              f"{times['scorer']:.3f} s ({times['scorer'] / times['fit']:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
