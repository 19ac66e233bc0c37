"""Time fairness_report on 1,000,000 points x 5 sensitive attributes.

Run with ``python benchmarks/bench_metrics.py``. Timings are relative to
baselines measured in the same process on the same labels, so the ratios
carry over between machines better than the absolute times.
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics.cluster import contingency_matrix

from fairkm.metrics import MEASURES, fairness_report
from fairkm.utils._sensitive import check_sensitive_features

# Domain sizes of the Adult sensitive attributes used in the paper:
# marital-status, relationship, race, sex, native-country.
N_VALUES = (7, 6, 5, 2, 41)


def best_time(func, repeat):
    """Best wall-clock time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-clusters", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    n = args.n_samples
    labels = rng.integers(0, args.n_clusters, n)
    sensitive = pd.DataFrame({f"s{j}": rng.integers(0, t, n) for j, t in enumerate(N_VALUES)})
    with_numeric = sensitive.assign(s4=rng.normal(size=n))

    timings = {
        "fairness_report (5 categorical)": best_time(
            lambda: fairness_report(labels, sensitive_features=sensitive), args.repeat
        ),
        "  of which check_sensitive_features": best_time(
            lambda: check_sensitive_features(sensitive, n_samples=n), args.repeat
        ),
        "fairness_report (4 categorical + 1 numeric)": best_time(
            lambda: fairness_report(labels, sensitive_features=with_numeric), args.repeat
        ),
    }
    fairness = [m.function for m in MEASURES.values() if m.kind == "fairness"]
    codes = [sensitive[c].to_numpy() for c in sensitive]
    baselines = {
        "np.bincount(labels)": best_time(lambda: np.bincount(labels), args.repeat),
        # The counting the report cannot avoid: one (cluster, value) table per attribute.
        "5 x np.bincount(labels * t_j + s_j)": best_time(
            lambda: [np.bincount(labels * t + s) for t, s in zip(N_VALUES, codes, strict=True)],
            args.repeat,
        ),
        "5 x contingency_matrix(labels, s_j)": best_time(
            lambda: [contingency_matrix(labels, sensitive[c]) for c in sensitive],
            args.repeat,
        ),
        # What the report saves: each fairness measure of MEASURES called on its own.
        f"{len(fairness)} fairness functions, one call each": best_time(
            lambda: [f(labels, sensitive_features=sensitive) for f in fairness], args.repeat
        ),
    }
    print(f"n_samples={n}, n_clusters={args.n_clusters}, attributes with {N_VALUES} values")
    print(f"best of {args.repeat} runs")
    for name, seconds in {**timings, **baselines}.items():
        print(f"{name:<46s} {seconds * 1e3:9.1f} ms")
    report = timings["fairness_report (5 categorical)"]
    for name, seconds in baselines.items():
        print(f"fairness_report / {name:<37s} {report / seconds:7.1f}x")


if __name__ == "__main__":
    main()
