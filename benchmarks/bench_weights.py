"""The fairness weight on a panel of datasets: what the default and two budgets buy, at what cost.

For each dataset of the panel, FairKM at its defaults (the scale-free weight,
``relative_weight=1``, every cluster counted alike), with ``max_cost=0.02``
and with ``max_cost=0.10``, against S-blind K-Means (scikit-learn's
``KMeans``, best of 10 k-means++ starts, the clustering a user would pick
instead), in one process, measured as a user reads a clustering, cluster by
cluster (:func:`fairkm.metrics.mean_cluster_wasserstein`, CW, and
:func:`fairkm.metrics.max_wasserstein`, MW: each cluster's total-variation
distance from the dataset's mix for a categorical attribute, the 1-D
Wasserstein distance of the standardised values for a numeric one):

* cost: FairKM's K-Means term over KMeans(n_init=10)'s, in %;
* mean CW / mean MW: the change of the clusters' mean and worst distance,
  averaged over the sensitive attributes, in %;
* least improved: the largest per-attribute change of CW and of MW, and which
  attribute;
* worse (> 2%): every attribute whose mean or worst cluster ended more than 2%
  further from the dataset's mix than under KMeans(n_init=10), and whether the
  fit warned naming it;
* sweeps (``n_iter_``, the kept start's passes) and warnings;
* time: FairKM's fit over KMeans(n_init=1)'s and over KMeans(n_init=10)'s.

The panel: Adult (``preprocess="standard"`` and ``"paper"``, k = 5 and 15,
all five attributes; the paper pipeline with sex alone, k=5), Kinematics (k=5,
Doc2Vec vectors; needs gensim), scikit-learn's diabetes data
(``load_diabetes(scaled=False)``: sex categorical, age numeric, the other
columns standardised as features; k=5), overlapping blobs with one attribute
that follows the blobs and one that barely does (k=6), ``make_sensitive_blobs``
(well separated, 100,000 rows, two attributes; k=5) and ``bench_scale.py``'s
overlapping blobs (five attributes; k=10) at 20,000 and 1,000,000 rows.

Run: ``python benchmarks/bench_weights.py [--data-home ../shared/data]
[--markdown docs/fairness-weight-panel.md] [--quick]``.
"""

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import bench_scale
import numpy as np
import pandas as pd
from bench_frontier import easy_hard
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.datasets import fetch_adult, fetch_kinematics, make_sensitive_blobs
from fairkm.metrics import fairness_report

SETTINGS = (("default", {}), ("max_cost=2%", {"max_cost": 0.02}),
            ("max_cost=10%", {"max_cost": 0.10}))


def panel(data_home, quick):
    """Yield (name, X, sensitive, numeric attribute names, k)."""
    for preprocess in ("standard", "paper"):
        adult = fetch_adult(data_home=data_home, preprocess=preprocess, download_if_missing=False)
        X = np.ascontiguousarray(adult.features, dtype=np.float64)
        for k in (5, 15):
            yield f"Adult ({preprocess}), k={k}", X, adult.sensitive, [], k
    yield "Adult (paper), sex alone, k=5", X, adult.sensitive[["sex"]], [], 5
    try:
        with tempfile.TemporaryDirectory() as home:
            # The Doc2Vec vectors are cached next to the data: a writable copy.
            shutil.copytree(Path(data_home) / "kinematics", Path(home) / "kinematics")
            kinematics = fetch_kinematics(data_home=home, download_if_missing=False)
        X = np.ascontiguousarray(kinematics.features, dtype=np.float64)
        yield "Kinematics, k=5", X, kinematics.sensitive, [], 5
    except ImportError as exc:
        print(f"Kinematics left out: {exc}", file=sys.stderr)
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    yield "diabetes, k=5", X, sensitive, ["age"], 5
    X, sensitive = easy_hard()
    yield "blobs, easy and hard attribute, k=6", X, sensitive, [], 6
    X, sensitive, _ = make_sensitive_blobs(20_000 if quick else 100_000, n_values=(2, 5),
                                           random_state=0)
    yield f"separated blobs {len(X):,}, k=5", X, sensitive, [], 5
    for n in (20_000,) if quick else (20_000, 1_000_000):
        X, sensitive = bench_scale.data(n, 10, 10)
        yield f"overlapping blobs {n:,}, k=10", X, sensitive, [], 10


def timed(func):
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def per_cluster(labels, sensitive, numeric):
    """Each attribute's mean (CW) and worst (MW) cluster distance from the dataset's mix."""
    report = fairness_report(labels, sensitive_features=sensitive,
                             numeric_sensitive=numeric).drop(index="mean")
    return report["CW"], report["MW"]


def measure(name, X, sensitive, numeric, k):
    """Return one table row per setting."""
    _, t_km1 = timed(lambda: KMeans(k, n_init=1, random_state=0).fit(X))
    km, t_km10 = timed(lambda: KMeans(k, n_init=10, random_state=0).fit(X))
    blind_mean, blind_worst = per_cluster(km.labels_, sensitive, numeric)
    rows = []
    for label, params in SETTINGS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model, seconds = timed(lambda params=params: FairKM(
                k, numeric_sensitive=numeric, random_state=0, **params
            ).fit(X, sensitive_features=sensitive))
        mean, worst = per_cluster(model.labels_, sensitive, numeric)
        mean_change, worst_change = 100 * (mean / blind_mean - 1), 100 * (worst / blind_worst - 1)
        warned = " ".join(str(w.message) for w in caught)
        worse = [a for a in sensitive.columns
                 if mean_change[a] > 2 or worst_change[a] > 2]
        rows.append({
            "dataset": name,
            "setting": label,
            "relative weight": model.relative_weight_,
            "cost %": 100 * (model.inertia_ / km.inertia_ - 1),
            "mean CW %": 100 * (mean.mean() / blind_mean.mean() - 1),
            "mean MW %": 100 * (worst.mean() / blind_worst.mean() - 1),
            "least improved CW %": mean_change.max(),
            "least improved MW %": worst_change.max(),
            "least improved": worst_change.idxmax(),
            "worse (> 2%)": ", ".join(
                f"{a} ({'warned' if repr(a) in warned else 'not warned'})" for a in worse
            ) or "-",
            "sweeps": model.n_iter_,
            "time / KMeans(1)": seconds / t_km1,
            "time / KMeans(10)": seconds / t_km10,
            "warnings": "; ".join(type(w.message).__name__ for w in caught) or "-",
        })
        print(" | ".join(f"{v:.3g}" if isinstance(v, float) else str(v)
                         for v in rows[-1].values()), flush=True)
    return rows


# How markdown() writes this table's number columns (others as they are).
FORMATS = {"relative weight": "{:.3g}", "cost %": "{:+.1f}", "mean CW %": "{:+.0f}",
           "mean MW %": "{:+.0f}", "least improved CW %": "{:+.0f}",
           "least improved MW %": "{:+.0f}", "time / KMeans(1)": "{:.1f}",
           "time / KMeans(10)": "{:.2f}"}


def markdown(table, formats=FORMATS):
    """The table as Markdown, ``formats`` naming each number column's format; NaN blank."""
    lines = ["| " + " | ".join(table.columns) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    for _, row in table.iterrows():
        cells = [
            "" if isinstance(value, float) and np.isnan(value)
            else formats[column].format(value) if column in formats else str(value)
            for column, value in row.items()
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--quick", action="store_true", help="small blobs only")
    args = parser.parse_args()
    # Compile the kernels outside the timings.
    X, sensitive, _ = make_sensitive_blobs(300, random_state=0)
    FairKM(3, random_state=0).fit(X, sensitive_features=sensitive)
    rows = []
    for case in panel(args.data_home, args.quick):
        rows.extend(measure(*case))
    table = pd.DataFrame(rows)
    text = markdown(table)
    print()
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
