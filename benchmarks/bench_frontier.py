"""Frontiers of K-Means cost against per-cluster fairness, for every method a user could pick.

A user reads a clustering cluster by cluster: for each sensitive attribute,
how far each cluster's mix is from the dataset's. This benchmark measures,
for each method over its knob, the K-Means cost (over ``KMeans(n_init=10)``'s
of the same seed) against

* **mean TV**: each attribute's mean over clusters, each counting once, of the
  total-variation distance between the cluster's mix and the dataset's
  (:func:`fairkm.metrics.mean_cluster_wasserstein`, CW; for a numeric
  attribute the 1-D Wasserstein distance of its standardised values), then
  averaged over the attributes;
* **worst TV**: each attribute's worst cluster (MW), averaged over the
  attributes; the worst attribute's own numbers are in the CSV.

Methods, all in one process except fair-kmeans:

* ``K-Means(10)``: scikit-learn's S-blind ``KMeans(n_init=10)``, the reference;
* ``FairKM <weighting>``: ``cluster_weighting`` "equal" (the default),
  "size" and "paper", over ``relative_weight`` and over ``max_cost`` budgets;
* ``FairKM(max_deviation)`` and ``BoundedKMeans``: additive bounds (every
  cluster's share of every categorical value within the bound);
* ``ZGYA``: Ziko et al.'s variational fair clustering over its ``lambda``
  (1 to 10,000), on one categorical attribute (Adult's sex);
* ``fair-kmeans`` (PyPI, Chierichetti et al.'s exact 50/50 balance of a
  binary colour) on a balanced sample of Adult's sex. It needs numpy < 2, so
  it runs in its own environment (``--fair-kmeans-python``), in a
  subprocess; its time includes that process's start.
* ``FCA`` (Fair Clustering via Alignment, ICML 2025) on its own setting only,
  from the labels its released code wrote when run apart (``--fca-results``:
  a folder with its ``results.csv`` and one ``labels_eps<epsilon>.npy`` per
  run); its time is that run's, measured apart.

The panel: Adult (the paper's pipeline and the standard one; sex alone and
all five attributes; k = 5 and 15), FCA's own Adult setting (sex, k=10; the
bounds there reach down to "as fair as whole rows allow", ``max_deviation=0``),
Kinematics (k=5), scikit-learn's diabetes data (sex categorical, age numeric;
k=5) and overlapping blobs with one attribute that follows the blobs
("hard") and one that barely does ("easy").

Writes ``points.csv`` (every fit), ``wins.md`` (per dataset and cost cap, the
best mean and worst TV each method reaches) and one PNG per dataset into
``--output-dir``. Run: ``python benchmarks/bench_frontier.py [--data-home
../shared/data] [--output-dir docs/frontier] [--fair-kmeans-python
/path/to/python] [--fca-results /path/to/fca/folder] [--quick] [--replot
points.csv]``.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from bench_bounds import fca_adult
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from fairkm import ZGYA, FairKM
from fairkm.bounds import BoundedKMeans, InfeasibleBoundError
from fairkm.datasets import fetch_adult, fetch_kinematics
from fairkm.metrics import fairness_report

WEIGHTINGS = ("equal", "size", "paper")
RELATIVE = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
BUDGETS = (0.02, 0.05, 0.1, 0.2)
BOUNDS = (0.2, 0.1, 0.05)
# FCA's setting: the bounds reach down to "as fair as whole rows allow" (0), where FCA aims.
FCA_BOUNDS = (0.1, 0.05, 0.02, 0.01, 0.0)
FCA_SETTING = "Adult, FCA's setting (32,561 rows), sex, k=10"
LAMBDAS = (1.0, 10.0, 100.0, 1000.0, 10000.0)
COST_CAPS = (1.05, 1.10, 1.20)


def easy_hard(n=6000, seed=0):
    """Overlapping blobs; "hard" (3 values) follows the blobs, "easy" (2 values) barely does."""
    rng = np.random.RandomState(seed)
    centers = rng.normal(scale=1.5, size=(6, 5))
    blob = rng.randint(6, size=n)
    X = centers[blob] + rng.normal(size=(n, 5))
    hard = np.where(rng.rand(n) < 0.6, blob % 3, rng.randint(3, size=n))
    easy = np.where(rng.rand(n) < 0.1, blob % 2, rng.randint(2, size=n))
    return X, pd.DataFrame({"easy": easy, "hard": hard})


def balanced_sex_sample(X, S, per_group, seed=0):
    """As many women as men, drawn from Adult, for the exact-balance peer."""
    rng = np.random.RandomState(seed)
    sex = S["sex"].to_numpy()
    rows = np.sort(np.concatenate([
        rng.choice(np.flatnonzero(sex == value), per_group, replace=False)
        for value in np.unique(sex)
    ]))
    return np.ascontiguousarray(X[rows]), S.iloc[rows][["sex"]].reset_index(drop=True)


def panel(data_home, quick):
    """Yield (name, X, sensitive, numeric attributes, k, seeds, bounds)."""
    adult = {}
    for preprocess in ("paper", "standard"):
        bunch = fetch_adult(data_home=data_home, preprocess=preprocess, download_if_missing=False)
        adult[preprocess] = (np.ascontiguousarray(bunch.features, dtype=np.float64),
                             bunch.sensitive)
    X, S = adult["paper"]
    yield "Adult paper, sex, k=5", X, S[["sex"]], [], 5, (0, 1), BOUNDS
    Xb, Sb = balanced_sex_sample(X, S, 250 if quick else 750)
    yield f"Adult paper, balanced sex sample ({len(Xb):,}), k=5", Xb, Sb, [], 5, (0,), BOUNDS
    for preprocess in ("paper", "standard"):
        X, S = adult[preprocess]
        for k in (5,) if quick else (5, 15):
            yield f"Adult {preprocess}, 5 attributes, k={k}", X, S, [], k, (0,), BOUNDS
    if quick:
        return
    X, sex = fca_adult(data_home)
    yield FCA_SETTING, X, pd.DataFrame({"sex": sex}), [], 10, (0,), FCA_BOUNDS
    with tempfile.TemporaryDirectory() as home:
        # The Doc2Vec vectors are cached next to the data: a writable copy.
        shutil.copytree(Path(data_home) / "kinematics", Path(home) / "kinematics")
        try:
            kinematics = fetch_kinematics(data_home=home, download_if_missing=False)
        except ImportError as exc:
            print(f"Kinematics left out: {exc}", file=sys.stderr)
            kinematics = None
    if kinematics is not None:
        yield ("Kinematics, k=5", np.ascontiguousarray(kinematics.features, dtype=np.float64),
               kinematics.sensitive, [], 5, (0,), BOUNDS)
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    yield "diabetes, k=5", X, sensitive, ["age"], 5, (0,), BOUNDS
    X, sensitive = easy_hard()
    yield "blobs, easy and hard attribute, k=6", X, sensitive, [], 6, (0,), BOUNDS


def measure(labels, sensitive, numeric):
    """Per attribute, the clusters' mean and worst distance from the dataset's mix."""
    report = fairness_report(labels, sensitive_features=sensitive,
                             numeric_sensitive=numeric).drop(index="mean")
    return report["CW"], report["MW"]


def fit_point(method, knob, make, X, sensitive, numeric, reference):
    """Fit one setting; return its row (None when the setting is infeasible)."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            labels = make()
        except InfeasibleBoundError:
            return None
    seconds = time.perf_counter() - start
    # What a user is told: an attribute left less fair, an unmet bound, no convergence.
    warned = [w.category.__name__ for w in caught
              if "sensitive attribute" in str(w.message)
              or w.category.__name__ == "BoundNotMetWarning"
              or issubclass(w.category, ConvergenceWarning)]
    return row_of(method, knob, labels, X, sensitive, numeric, reference, seconds, warned)


def inertia(X, labels):
    total = 0.0
    for cluster in np.unique(labels):
        members = X[labels == cluster]
        total += float(((members - members.mean(axis=0)) ** 2).sum())
    return total


def row_of(method, knob, labels, X, sensitive, numeric, reference, seconds, warned):
    mean, worst = measure(labels, sensitive, numeric)
    row = {
        "method": method, "knob": knob,
        "cost": inertia(X, labels) / reference,
        "mean TV": float(mean.mean()), "worst TV": float(worst.mean()),
        "seconds": seconds, "warnings": ";".join(warned),
    }
    row.update({f"mean TV[{a}]": v for a, v in mean.items()})
    row.update({f"worst TV[{a}]": v for a, v in worst.items()})
    return row


def fair_kmeans_labels(python, X, colour, k, seed):
    """Labels of fair-kmeans' ``FairKMeans`` run in another environment, and its time."""
    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "in.npz", Path(folder) / "out.npz"
        np.savez(data, X=X, colour=colour)
        script = (
            "import sys, time, numpy as np\n"
            "from fair_kmeans import FairKMeans\n"
            "d = np.load(sys.argv[1])\n"
            "start = time.perf_counter()\n"
            f"m = FairKMeans(n_clusters={k}, random_state={seed}).fit(d['X'], color=d['colour'])\n"
            "np.savez(sys.argv[2], labels=m.labels_, seconds=time.perf_counter() - start)\n"
        )
        subprocess.run([python, "-c", script, str(data), str(out)], check=True)
        result = np.load(out)
        return result["labels"], float(result["seconds"])


def fca_rows(folder, X, sensitive, numeric, reference):
    """Rows of FCA's released code, run apart: its labels read back, measured here."""
    runs = pd.read_csv(Path(folder) / "results.csv")
    rows = []
    for run in runs.sort_values("epsilon").itertuples():
        labels = np.load(Path(folder) / f"labels_eps{run.epsilon}.npy")
        rows.append(row_of("FCA", f"epsilon={run.epsilon:g}", labels, X, sensitive, numeric,
                           reference, float(run.process_wall_s), []))
    return rows


def frontier_rows(name, X, sensitive, numeric, k, seed, bounds, args):
    km = KMeans(k, n_init=10, random_state=seed).fit(X)
    reference = km.inertia_
    rows = [row_of("K-Means(10)", "", km.labels_, X, sensitive, numeric, reference, 0.0, [])]
    categorical = [c for c in sensitive.columns if c not in numeric]

    def fairkm(**params):
        return FairKM(k, random_state=seed, numeric_sensitive=numeric, **params).fit(
            X, sensitive_features=sensitive).labels_

    settings = []
    for weighting in WEIGHTINGS:
        settings += [(f"FairKM {weighting}", f"relative_weight={w:g}",
                      lambda w=w, c=weighting: fairkm(cluster_weighting=c, relative_weight=w))
                     for w in RELATIVE]
        settings += [(f"FairKM {weighting} budget", f"max_cost={b:g}",
                      lambda b=b, c=weighting: fairkm(cluster_weighting=c, max_cost=b))
                     for b in BUDGETS]
    if categorical:
        bounded = {c: 0 for c in categorical}
        settings += [("FairKM(max_deviation)", f"max_deviation={d:g}",
                      lambda d=d: fairkm(max_deviation={c: d for c in bounded}))
                     for d in bounds]
        settings += [("BoundedKMeans", f"max_deviation={d:g}",
                      lambda d=d: BoundedKMeans(k, max_deviation={c: d for c in bounded},
                                                numeric_sensitive=numeric, random_state=seed,
                                                progress=False)
                      .fit(X, sensitive_features=sensitive).labels_)
                     for d in bounds]
    if len(categorical) == 1 and not numeric:
        column = sensitive[categorical[0]]
        settings += [("ZGYA", f"lambda={lam:g}",
                      lambda lam=lam: ZGYA(k, fairness_weight=lam, random_state=seed)
                      .fit(X, sensitive_features=column).labels_)
                     for lam in LAMBDAS]
    for method, knob, make in settings:
        row = fit_point(method, knob, make, X, sensitive, numeric, reference)
        if row is not None:
            rows.append(row)
            print(f"  {method:24} {knob:22} cost {row['cost']:.3f}  mean TV "
                  f"{row['mean TV']:.4f}  worst TV {row['worst TV']:.4f}  "
                  f"{row['seconds']:.1f} s {row['warnings']}", flush=True)
    if "balanced" in name and args.fair_kmeans_python:
        colour = pd.factorize(sensitive["sex"])[0]
        labels, seconds = fair_kmeans_labels(args.fair_kmeans_python, X, colour, k, seed)
        rows.append(row_of("fair-kmeans", "exact balance", labels, X, sensitive, numeric,
                           reference, seconds, []))
        print(f"  fair-kmeans cost {rows[-1]['cost']:.3f} mean TV {rows[-1]['mean TV']:.4f} "
              f"worst TV {rows[-1]['worst TV']:.4f} {seconds:.1f} s", flush=True)
    if name == FCA_SETTING and args.fca_results:
        rows += fca_rows(args.fca_results, X, sensitive, numeric, reference)
        for row in rows[-len(pd.read_csv(Path(args.fca_results) / "results.csv")):]:
            print(f"  FCA {row['knob']:18} cost {row['cost']:.3f} mean TV {row['mean TV']:.4f} "
                  f"worst TV {row['worst TV']:.4f} {row['seconds']:.0f} s (run apart)",
                  flush=True)
    for row in rows:
        row.update(dataset=name, seed=seed)
    return rows


def wins(points):
    """Per dataset and cost cap, each method's best mean and worst TV within the cap."""
    lines = []
    for name, data in points.groupby("dataset", sort=False):
        data = data[data["seed"] == data["seed"].min()]
        lines += [f"### {name}", "",
                  "| method | " + " | ".join(
                      f"mean TV, cost <= {cap:.2f} | worst TV, cost <= {cap:.2f}"
                      for cap in COST_CAPS) + " |",
                  "|---|" + "---|---|" * len(COST_CAPS)]
        best = {}
        for cap in COST_CAPS:
            within = data[data["cost"] <= cap + 1e-12]
            best[cap] = (within["mean TV"].min(), within["worst TV"].min())
        for method, rows in data.groupby("method", sort=False):
            cells = []
            for cap in COST_CAPS:
                within = rows[rows["cost"] <= cap + 1e-12]
                for column, top in zip(("mean TV", "worst TV"), best[cap], strict=True):
                    if within.empty:
                        cells.append("-")
                        continue
                    value = within[column].min()
                    mark = "**" if value <= top * (1 + 1e-9) else ""
                    cells.append(f"{mark}{value:.3f}{mark}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(points, name, path, max_cost=1.35):
    """Both frontiers of one dataset; each method's points joined in the order of its knob.

    Settings that cost more than ``max_cost`` times K-Means are drawn at the
    right edge with a ">" and their cost written beside them, so that one
    expensive bound does not squash every other frontier against the left axis.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = points[(points["dataset"] == name) & (points["seed"] == points["seed"].min())]
    right = min(max_cost, max(1.05, float(data["cost"].max()) + 0.01))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharex=True)
    for ax, column in zip(axes, ("mean TV", "worst TV"), strict=True):
        for i, (method, rows) in enumerate(data.groupby("method", sort=False)):
            # Ten colours, then another palette: no two methods of a figure share one.
            colour = f"C{i}" if i < 10 else plt.get_cmap("Dark2")(i - 10)
            style = dict(marker="o", linestyle="-", color=colour)
            if method in ("K-Means(10)", "fair-kmeans") or "budget" in method:
                style.update(linestyle="none", marker="*" if method != "K-Means(10)" else "D",
                             markersize=9)
            cost = rows["cost"].clip(upper=right)
            ax.plot(cost, rows[column], label=method, **style)
            for c, value in zip(rows["cost"][rows["cost"] > right],
                                rows[column][rows["cost"] > right], strict=True):
                ax.plot([right], [value], marker=">", color=style["color"], markersize=8)
                ax.annotate(f"{c:.2f}x", (right, value), textcoords="offset points",
                            xytext=(-6, 4), ha="right", fontsize=7, color=style["color"])
        ax.set_xlim(0.99, right + 0.01)
        ax.set_xlabel("K-Means cost / KMeans(n_init=10)'s")
        ax.set_ylabel(f"{column} (lower is fairer)")
        ax.set_title(f"{column}: each attribute's {'mean' if column == 'mean TV' else 'worst'} "
                     "cluster", fontsize=10)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper right")
    fig.suptitle(name, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(points, output_dir):
    points.to_csv(output_dir / "points.csv", index=False)
    (output_dir / "wins.md").write_text(wins(points), encoding="utf-8")
    for i, name in enumerate(points["dataset"].unique()):
        plot(points, name, output_dir / f"frontier_{i}.png")
    (output_dir / "datasets.json").write_text(
        json.dumps(list(points["dataset"].unique()), indent=1), encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results/frontier"))
    parser.add_argument("--fair-kmeans-python",
                        help="a Python with the PyPI package fair-kmeans (numpy < 2)")
    parser.add_argument("--fca-results", metavar="FOLDER",
                        help="FCA's released code run apart: results.csv and labels_eps*.npy")
    parser.add_argument("--quick", action="store_true", help="fewer datasets and a smaller sample")
    parser.add_argument("--replot", type=Path, metavar="POINTS.csv",
                        help="redraw the plots and tables from a run's points.csv; fit nothing")
    args = parser.parse_args()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    if args.replot is not None:
        points = pd.read_csv(args.replot, keep_default_na=False, na_values=[""])
        write_outputs(points, args.output_dir)
        return
    rows = []
    for name, X, sensitive, numeric, k, seeds, bounds in panel(args.data_home, args.quick):
        for seed in seeds:
            print(f"{name}, seed {seed}", flush=True)
            rows.extend(frontier_rows(name, X, sensitive, numeric, k, seed, bounds, args))
    points = pd.DataFrame(rows)
    write_outputs(points, args.output_dir)
    print(wins(points))


if __name__ == "__main__":
    main()
