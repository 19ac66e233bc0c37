"""Frontiers of K-Means cost against per-cluster fairness, for every method a user could pick.

Each method over its knob on each dataset: cost over ``KMeans(n_init=10)``'s, and the clusters'
mean and worst total-variation distance from the dataset's mix (CW and MW of
:func:`fairkm.metrics.fairness_report`). Writes ``points.csv`` (every fit, failed ones too),
``run.json``, ``wins.md``, a PNG per dataset and the page (``--page``, default
``OUTPUT_DIR.md``) from ``docs/frontier/template.md``, every number and verdict computed from
``points.csv``. Run: ``python benchmarks/bench_frontier.py --data-home DATA
--output-dir docs/frontier --fair-kmeans-python FAIR_KMEANS_PYTHON --fca-results FCA_RESULTS``
(fair-kmeans needs numpy < 2; FCA's released code ran apart); ``--replot points.csv`` fits nothing.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import date
from pathlib import Path
from string import Template

import numpy as np
import pandas as pd
from _command import recorded_command
from bench_bounds import fca_adult
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import fairkm
from fairkm import ZGYA, FairKM
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import fetch_adult, fetch_kinematics
from fairkm.exceptions import InfeasibleBoundError
from fairkm.metrics import fairness_report

WEIGHTINGS = ("equal", "size", "paper")
RELATIVE = tuple(0.25 * 2.0**i for i in range(9))  # 0.25 to 64: the knob's whole range
BUDGETS = (0.02, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2)
BOUNDS = (0.2, 0.1, 0.05)
# FCA's setting: the bounds reach down to "as fair as whole rows allow" (0), where FCA aims.
FCA_BOUNDS = (0.1, 0.05, 0.02, 0.01, 0.0)
LAMBDAS = (1, 2, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000, 1500, 2000, 3000, 4000, 5000,
           7000, 10000)
COST_CAPS = (1.05, 1.10, 1.20)
HEADLINE = "Adult paper, sex, k=5"
FCA_SETTING = "Adult, FCA's setting, sex, k=10"
DEFAULT = ("FairKM equal", "FairKM equal budget")  # FairKM's default: its knob and its budgets
MEASURES = ("mean TV", "worst TV")
TEMPLATE = Path(__file__).resolve().parents[1] / "docs" / "frontier" / "template.md"


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
    rows = np.sort(np.concatenate([rng.choice(np.flatnonzero(sex == value), per_group,
                                              replace=False) for value in np.unique(sex)]))
    return np.ascontiguousarray(X[rows]), S.iloc[rows][["sex"]].reset_index(drop=True)


def panel(data_home, quick):
    """Yield (name, X, sensitive, numeric attributes, k, seeds, bounds)."""
    adult = {p: fetch_adult(data_home=data_home, preprocess=p, download_if_missing=False)
             for p in ("paper", "standard")}
    adult = {p: (np.ascontiguousarray(b.features, float), b.sensitive) for p, b in adult.items()}
    X, S = adult["paper"]
    yield HEADLINE, X, S[["sex"]], [], 5, (0,) if quick else (0, 1), BOUNDS
    Xb, Sb = balanced_sex_sample(X, S, 250 if quick else 750)
    yield f"Adult paper, balanced sex sample ({len(Xb):,}), k=5", Xb, Sb, [], 5, (0,), BOUNDS
    with tempfile.TemporaryDirectory() as home:
        # The Doc2Vec vectors are cached next to the data: a writable copy.
        shutil.copytree(Path(data_home) / "kinematics", Path(home) / "kinematics")
        try:
            kinematics = {kind: fetch_kinematics(data_home=home, download_if_missing=False,
                                                 sensitive=kind) for kind in ("type", "indicators")}
        except ImportError as exc:
            print(f"Kinematics left out: {exc}", file=sys.stderr)
            kinematics = {}
    for kind, bunch in kinematics.items():  # "type": one attribute, ZGYA's input; or 5 binary
        if not (quick and kind == "indicators"):
            yield (f"Kinematics, {'type (5 values)' if kind == 'type' else '5 type indicators'}"
                   ", k=5", np.ascontiguousarray(bunch.features, dtype=np.float64),
                   bunch.sensitive, [], 5, (0,), BOUNDS)
    if quick:
        return
    for preprocess in ("paper", "standard"):
        X, S = adult[preprocess]
        for k in (5, 15):
            yield f"Adult {preprocess}, 5 attributes, k={k}", X, S, [], k, (0,), BOUNDS
    X, sex = fca_adult(data_home)
    yield FCA_SETTING, X, pd.DataFrame({"sex": sex}), [], 10, (0,), FCA_BOUNDS
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    yield "diabetes, k=5", X, sensitive, ["age"], 5, (0,), BOUNDS
    X, sensitive = easy_hard()
    yield "blobs, easy and hard attribute, k=6", X, sensitive, [], 6, (0,), BOUNDS


def inertia(X, labels):
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
               for c in np.unique(labels))


def row_of(ctx, method, knob, seconds, labels=None, status="ok", note="", texts=(), model=None):
    """One fit's row: cost, each attribute's mean and worst cluster, status, fitted attributes."""
    row = {"dataset": ctx["name"], "seed": ctx["seed"], "rows": len(ctx["X"]), "k": ctx["k"],
           "method": method, "knob": knob, "seconds": seconds, "status": status,
           "note": note, "warnings": " | ".join(texts)}
    if labels is None:  # an infeasible bound: no clustering to measure
        return row
    report = fairness_report(labels, sensitive_features=ctx["sensitive"],
                             numeric_sensitive=ctx["numeric"]).drop(index="mean")
    row.update({"cost": inertia(ctx["X"], labels) / ctx["reference"],
                "mean TV": float(report["CW"].mean()), "worst TV": float(report["MW"].mean()),
                "clusters": len(np.unique(labels))})
    row.update({a: float(getattr(model, a, np.nan))
                for a in ("relative_weight_", "cost_increase_", "unfairness_ratio_")})
    refit = getattr(model, "refit_params_", None)  # which parameters refit a budget's clustering
    row["refit_params_"] = "" if refit is None else json.dumps(refit, default=str)
    row.update({f"mean TV[{a}]": v for a, v in report["CW"].items()})
    row.update({f"worst TV[{a}]": v for a, v in report["MW"].items()})
    return row


def status_of(model, labels, k, caught):
    """What a user of this fit is told, in one word: the worst first."""
    texts = sorted({str(w.message) for w in caught})
    status = ("collapsed" if len(np.unique(labels)) < k or any("trivial solution" in t
                                                               for t in texts)
              else "reseeded" if getattr(model, "n_reseeds_", 0)
              else "not converged" if any(issubclass(w.category, ConvergenceWarning)
                                          for w in caught)
              else "bound not met" if any(w.category.__name__ == "BoundNotMetWarning"
                                          for w in caught)
              else "warned" if texts else "ok")
    return status, texts


def fit_point(method, knob, make, ctx):
    """Fit one setting and return its row and labels, also when it fails (no row is dropped)."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = make()
        except InfeasibleBoundError as exc:
            return row_of(ctx, method, knob, time.perf_counter() - start, status="infeasible",
                          note=str(exc).splitlines()[0]), None
    seconds, labels = time.perf_counter() - start, model.labels_
    status, texts = status_of(model, labels, ctx["k"], caught)
    note = f"n_reseeds_={model.n_reseeds_}" if isinstance(model, ZGYA) else ""
    return row_of(ctx, method, knob, seconds, labels, status, note, texts, model), labels


def fair_kmeans_labels(python, X, colour, k, seed):
    """Labels of fair-kmeans' ``FairKMeans`` run in another environment, and its time."""
    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "in.npz", Path(folder) / "out.npz"
        np.savez(data, X=X, colour=colour)
        script = ("import sys, time, numpy as np\nfrom fair_kmeans import FairKMeans\n"
                  "d = np.load(sys.argv[1])\nstart = time.perf_counter()\nm = FairKMeans("
                  f"n_clusters={k}, random_state={seed}).fit(d['X'], color=d['colour'])\n"
                  "np.savez(sys.argv[2], labels=m.labels_, seconds=time.perf_counter() - start)")
        subprocess.run([python, "-c", script, str(data), str(out)], check=True)
        result = np.load(out)
        return result["labels"], float(result["seconds"])


def frontier_rows(name, X, sensitive, numeric, k, seed, bounds, args):
    """Every method's fits on one dataset and seed."""
    start = time.perf_counter()
    km = KMeans(k, n_init=10, random_state=seed).fit(X)
    ctx = dict(name=name, X=X, sensitive=sensitive, numeric=numeric, k=k, seed=seed,
               reference=km.inertia_)
    rows = [row_of(ctx, "K-Means(10)", "", time.perf_counter() - start, km.labels_)]
    categorical = [c for c in sensitive.columns if c not in numeric]

    def fairkm(**params):
        return FairKM(k, random_state=seed, numeric_sensitive=numeric, **params).fit(
            X, sensitive_features=sensitive)

    settings = [(f"FairKM {c}{suffix}", f"{knob}={v:g}",
                 lambda c=c, knob=knob, v=v: fairkm(cluster_weighting=c, **{knob: v}))
                for c in WEIGHTINGS for suffix, knob, values in (
                    ("", "relative_weight", RELATIVE), (" budget", "max_cost", BUDGETS))
                for v in values]
    bounded = {"FairKM(max_deviation)": fairkm, "BoundedKMeans": lambda **p: BoundedKMeans(
        k, numeric_sensitive=numeric, random_state=seed, progress=False, **p).fit(
        X, sensitive_features=sensitive)}
    settings += [(m, f"max_deviation={d:g}", lambda f=f, d=d: f(
        max_deviation=dict.fromkeys(categorical, d))) for m, f in bounded.items()
        for d in (bounds if categorical else ())]
    if len(categorical) == 1 and not numeric:
        settings += [("ZGYA", f"lambda={lam:g}",
                      lambda lam=lam: ZGYA(k, fairness_weight=lam, random_state=seed)
                      .fit(X, sensitive_features=sensitive[categorical[0]])) for lam in LAMBDAS]
    default_labels = None
    for method, knob, make in settings:
        row, labels = fit_point(method, knob, make, ctx)
        if (method, knob) == ("FairKM equal", "relative_weight=1"):
            default_labels = labels
        if method == "FairKM(max_deviation)" and labels is not None:
            row["note"] = ("unchanged: FairKM's clustering met the bound"
                           if np.array_equal(labels, default_labels) else "rows moved")
        rows.append(row)
        print(f"  {method:22} {knob:20} {row['status']:13}", *(f"{c} {row.get(c, np.nan):.4f}"
              for c in ("cost", *MEASURES, "seconds")), flush=True)
    if "balanced" in name and args.fair_kmeans_python:
        colour = pd.factorize(sensitive["sex"])[0]
        labels, seconds = fair_kmeans_labels(args.fair_kmeans_python, X, colour, k, seed)
        rows.append(row_of(ctx, "fair-kmeans", "exact balance", seconds, labels))
    if name == FCA_SETTING and args.fca_results:
        runs = pd.read_csv(Path(args.fca_results) / "results.csv")
        for run in runs.sort_values("epsilon").itertuples():
            labels = np.load(Path(args.fca_results) / f"labels_eps{run.epsilon}.npy")
            rows.append(row_of(ctx, "FCA", f"epsilon={run.epsilon:g}", float(run.process_wall_s),
                               labels, note="run apart, one thread"))
    return rows


def fitted(data):
    return data[data["cost"].notna()]  # an infeasible bound has no clustering


def first_seed(data):
    return data[data["seed"] == data["seed"].min()]


def fairer(a, b):
    """``a`` fairer than ``b``: lower at three decimals (a smaller difference is a tie)."""
    return round(a, 3) < round(b, 3)


def matched(data, challengers, defenders):
    """For each challenger fit, the defenders' fairest fits of no greater cost (same seed)."""
    out = []
    for _, rows in fitted(data).groupby("seed"):
        ours = rows[rows["method"].isin(defenders)]
        blind = rows[rows["method"] == "K-Means(10)"].iloc[0]
        for point in rows[rows["method"].isin(challengers)].to_dict("records"):
            within = ours[ours["cost"] <= point["cost"] + 1e-12]
            best = {m: None if within.empty else within.loc[within[m].idxmin()].to_dict()
                    for m in MEASURES}
            out.append(dict(point=point, best=best, uncovered=within.empty and any(
                fairer(point[m], blind[m]) for m in MEASURES), wins={
                m: best[m] is not None and fairer(point[m], best[m][m]) for m in MEASURES}))
    return out


def code(knob):
    return f"`{knob}`" if knob else ""


def quote(row, seeds):
    """A fit as the page quotes it; tests/test_frontier_page.py reads this form back."""
    seed = f", seed {row['seed']}" if row["seed"] != min(seeds) else ""
    return (f"{row['method']} {code(row['knob'])}".rstrip() + f"{seed} (cost {row['cost']:.3f}, "
            f"mean {row['mean TV']:.4f}, worst {row['worst TV']:.4f})")


def table(header, rows, dataset=None, compare=None):
    """A markdown table; MyST comments name its dataset and compared methods for the test."""
    lines = [f"% dataset: {dataset}"] if dataset else []
    lines += [f"% compare: {', '.join(compare)}"] if compare else []
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


CELL = {"cost": "{:.3f}", "mean TV": "{:.4f}", "worst TV": "{:.4f}", "cost_increase_": "{:+.2%}",
        "relative_weight_": "{:.3g}"}


def cell(row, column):
    value = row.get(column)
    if column == "knob" or value is None or (isinstance(value, float) and np.isnan(value)):
        return code(value) if column == "knob" else "-"
    return CELL[column].format(value) if column in CELL else value


def best_cell(best, m):
    return ("none that cheap" if best is None else
            f"{best[m]:.4f}: {best['method']} {code(best['knob'])} at {best['cost']:.3f}")


def matched_table(results, dataset, defenders):
    """Challenger fits against the defenders' fairest of no greater cost (bold: fairer)."""
    header = ["method", "knob", "seed", "status", "cost", "mean TV", "worst TV",
              "fairest mean TV at no more cost", "fairest worst TV at no more cost"]
    body = [[cell(r["point"], c) for c in ("method", "knob", "seed", "status", "cost")]
            + [f"**{r['point'][m]:.4f}**" if r["wins"][m] else f"{r['point'][m]:.4f}"
               for m in MEASURES] + [best_cell(r["best"][m], m) for m in MEASURES]
            for r in results]
    return table(header, body, dataset, defenders)


def knobs(results, key):  # the fits that won on ``key`` (a measure), or are "uncovered"
    return ", ".join(code(r["point"]["knob"]) + (f" (seed {r['point']['seed']})"
                                                 if r["point"]["seed"] else "")
                     for r in results if r.get(key) or r["wins"].get(key)) or "none"


def verdict(results, challenger, defender, seeds):
    """The sentence on who dominates whom, whichever way the data fall."""
    wins = {m: [r for r in results if r["wins"][m]] for m in MEASURES}
    n_cheap = sum(r["uncovered"] for r in results)
    cheap = (f"{n_cheap} of its fits ({knobs(results, 'uncovered')}) cost less than any fit of "
             f"{defender} and are fairer than K-Means(10)")
    if not wins["mean TV"] and not wins["worst TV"]:
        why = f", only because {cheap}; at each of its other" if n_cheap else " at each of its"
        return (f"**{defender} {'does not dominate' if n_cheap else 'dominates'} {challenger} "
                f"here**{why} fits {defender} has fits of no greater cost at least as fair on "
                "the mean and on the worst cluster.")
    text = (f"**{defender} does not dominate {challenger} here.** At matched cost {challenger} "
            f"is fairer on the mean at {len(wins['mean TV'])} of its {len(results)} fits "
            f"({knobs(results, 'mean TV')}) and on the worst cluster at {len(wins['worst TV'])} "
            f"({knobs(results, 'worst TV')}){'; ' + cheap if n_cheap else ''}.")
    for m in MEASURES:
        if wins[m]:
            top = max(wins[m], key=lambda r: r["best"][m][m] - r["point"][m])
            text += (f" The widest margin on the {m.split()[0]}: {quote(top['point'], seeds)}"
                     f" against {quote(top['best'][m], seeds)}.")
    return text


def cap_table(data, name):
    """Per cost cap, each method's fairest mean and worst TV within the cap; bold: the fairest."""
    data = fitted(data)
    header = ["method"] + [f"{m}, cost <= {cap:.2f}" for cap in COST_CAPS for m in MEASURES]
    body = []
    for method, rows in data.groupby("method", sort=False):
        line = [method]
        for cap in COST_CAPS:
            within, every = rows[rows["cost"] <= cap + 1e-12], data[data["cost"] <= cap + 1e-12]
            for m in MEASURES:
                value = within[m].min()
                line.append("-" if within.empty else f"**{value:.3f}**"
                            if not fairer(every[m].min(), value) else f"{value:.3f}")
        body.append(line)
    return table(header, body, name)


class Page:
    """The generated sections of the page, from one run's points."""

    def __init__(self, points, meta, folder):
        self.points, self.meta, self.folder = points, meta, folder
        self.names = list(points["dataset"].unique())

    def of(self, name):
        return self.points[self.points["dataset"] == name]

    def size(self, name):
        return f"{name}: {int(self.of(name)['rows'].iloc[0]):,} rows"

    def seeds(self, name):
        return tuple(sorted(self.of(name)["seed"].unique()))

    def intro(self, name):
        """The MyST comment that names the set of the quotes below, its size and figure."""
        found = [c[len("mean TV["):-1] for c in self.of(name).dropna(axis=1, how="all")
                 if c.startswith("mean TV[")]
        return (f"% dataset: {name}\n{self.size(name)}, sensitive {', '.join(found)}, "
                f"seed{'s' * (len(self.seeds(name)) > 1)} {', '.join(map(str, self.seeds(name)))}."
                f"\n\n![{name}]({self.folder}/frontier_{self.names.index(name)}.png)")

    def headline(self):
        data, first, seeds = self.of(HEADLINE), first_seed(self.of(HEADLINE)), self.seeds(HEADLINE)
        blind = first[first["method"] == "K-Means(10)"].iloc[0].to_dict()
        back = matched(first, DEFAULT, ["ZGYA"])
        beaten = sum(any(r["best"][m] is not None and fairer(r["best"][m][m], r["point"][m])
                         for m in MEASURES) for r in back)
        columns = ["method", "knob", "seed", "status", "cost", "cost_increase_", "relative_weight_"]
        return "\n\n".join([
            self.intro(HEADLINE), f"The reference: {quote(blind, seeds)}. The fairest each "
            "method reaches within a cost cap (first seed; **bold**: the fairest of all):",
            cap_table(first, HEADLINE),
            "- " + verdict(matched(data, ["ZGYA"], DEFAULT), "ZGYA", "FairKM's default", seeds),
            f"- The other way round (first seed): at {beaten} of the default's {len(back)} fits "
            "ZGYA has a fit of no greater cost fairer on the mean or the worst cluster; at "
            f"{sum(r['wins']['mean TV'] and r['wins']['worst TV'] for r in back)} the default is "
            "fairer on both than every ZGYA fit of no greater cost.",
            paper_sentence(first, blind, seeds),
            "ZGYA's fits against the default's (first seed):",
            matched_table(matched(first, ["ZGYA"], DEFAULT), HEADLINE, DEFAULT),
            "The default's fits against ZGYA's (first seed):",
            matched_table(back, HEADLINE, ["ZGYA"]),
            "The budgets, every seed: `cost_increase_` is the cost over FairKM's own S-blind "
            "start, which the budget bounds (\"held\": at most `max_cost`), `cost` over "
            "K-Means(10)'s:", table([*columns, *MEASURES, "held"], [
                [cell(r, c) for c in (*columns, *MEASURES)] + [
                    "yes" if r["cost_increase_"] <= float(r["knob"][9:]) + 1e-12 else "**no**"]
                for r in fitted(data[data["method"] == "FairKM equal budget"]).to_dict(
                    "records")], HEADLINE)])

    def zgya_sets(self):
        return list(self.points.loc[self.points["method"] == "ZGYA", "dataset"].unique())

    def zgya(self):
        summary, part = [], []
        for name in self.zgya_sets():
            for seed, rows in self.of(name).groupby("seed"):
                res, z = matched(rows, ["ZGYA"], DEFAULT), rows[rows["method"] == "ZGYA"]
                flagged = "; ".join(f"{s}: " + ", ".join(code(k) for k in g["knob"])
                                    for s, g in z[z["status"] != "ok"].groupby("status"))
                summary.append([name, seed, len(z), flagged or "none"]
                               + [knobs(res, key) for key in (*MEASURES, "uncovered")])
            if name != HEADLINE:
                res = matched(first_seed(self.of(name)), ["ZGYA"], DEFAULT)
                part += [f"### {name}", self.intro(name),
                         verdict(res, "ZGYA", "FairKM's default", self.seeds(name)),
                         matched_table(res, name, DEFAULT)]
        return "\n\n".join([
            f"ZGYA ran on {len(self.zgya_sets())} sets, over `lambda` "
            f"{', '.join(map(str, LAMBDAS))}. Each set's fits against FairKM's default at "
            "matched cost:",
            table(["set", "seed", "ZGYA fits", "not ok", "ZGYA fairer on the mean",
                   "ZGYA fairer on the worst cluster",
                   "ZGYA cheaper than every default fit and fairer than K-Means(10)"], summary),
            *part])

    def panel(self):
        lost, counts = [], {}
        for name in self.names:
            data = fitted(first_seed(self.of(name)))
            for cap in COST_CAPS:
                within = data[data["cost"] <= cap + 1e-12]
                ours = within[within["method"].isin(DEFAULT)]
                for m in MEASURES:
                    best = within.loc[within[m].idxmin()]
                    mine = None if ours.empty else ours.loc[ours[m].idxmin()]
                    kind = ("the default" if mine is not None and not fairer(best[m], mine[m])
                            else best["method"])
                    counts[kind] = counts.get(kind, 0) + 1
                    if kind != "the default":
                        lost.append([name, f"+{cap - 1:.0%}", m, best_cell(mine, m),
                                     best_cell(best, m)])
        others = ", ".join(f"{k} in {v}" for k, v in counts.items() if k != "the default")
        return "\n\n".join([
            f"Over the {len(self.names)} sets (first seed), the {len(COST_CAPS)} cost caps and "
            f"the two measures, FairKM's default is the fairest of all methods in "
            f"{counts.get('the default', 0)} of the {sum(counts.values())} cells. Elsewhere "
            f"the fairest is {others or 'none'}. Every such cell:",
            table(["set", "cost cap", "measure", "the default's fairest", "the fairest of all"],
                  lost)])

    def bounds(self):
        pairs, moved, kept, infeasible = [], [], 0, 0
        for name in self.names:
            data = first_seed(self.of(name))
            for knob in data.loc[data["method"] == "BoundedKMeans", "knob"]:
                a, b = (data[(data["method"] == m) & (data["knob"] == knob)].iloc[0].to_dict()
                        for m in ("FairKM(max_deviation)", "BoundedKMeans"))
                pairs.append([name, code(knob)] + [cell(r, c) for r in (a, b) for c in
                                                   (*MEASURES, "cost", "status")] + [a["note"]])
                kept += a["note"].startswith("unchanged")
                infeasible += "infeasible" in (a["status"], b["status"])
                if a["note"] == "rows moved" and b["status"] != "infeasible":
                    moved.append((a, b))
        count = {m: sum(fairer(a[m], b[m]) for a, b in moved) for m in MEASURES}
        return "\n\n".join([
            f"Of the {len(pairs)} (set, bound) settings (first seed), `FairKM(max_deviation)` "
            f"kept FairKM's clustering in {kept}; {infeasible} were infeasible for one of the "
            f"two. Where it moved rows ({len(moved)} settings) it was fairer than "
            f"`BoundedKMeans` on the mean in {count['mean TV']} and on the worst cluster in "
            f"{count['worst TV']}, and less fair in "
            f"{sum(fairer(b[m], a[m]) for a, b in moved for m in MEASURES)} (setting, measure) "
            "pairs:",
            table(["set", "knob"] + [f"{m}: {c}" for m in ("FairKM(max_deviation)",
                                                         "BoundedKMeans")
                                     for c in (*MEASURES, "cost", "status")]
                  + ["FairKM(max_deviation): note"], pairs)])

    def fca(self):
        data = self.of(FCA_SETTING)
        if (data["method"] != "FCA").all():
            return "This run did not include FCA's setting with its labels (`--fca-results`)."
        ours = [m for m in data["method"].unique() if m.startswith(("FairKM", "Bounded"))]
        res = matched(data, ["FCA"], ours)
        return "\n\n".join([self.intro(FCA_SETTING),
                            verdict(res, "FCA", "fairkm", self.seeds(FCA_SETTING)),
                            matched_table(res, FCA_SETTING, ours)])

    def figures(self):
        shown = {HEADLINE, FCA_SETTING, *self.zgya_sets()}
        return "\n\n".join(self.intro(n) for n in self.names if n not in shown)

    def time(self):
        body = []
        for method, g in self.points.groupby("method", sort=False):
            slow = g.loc[g["seconds"].idxmax()]
            body.append([method, len(g), f"{g['seconds'].median():.1f}", f"{slow['seconds']:.1f}",
                         f"{slow['dataset']}{' ' + code(slow['knob']) if slow['knob'] else ''}"
                         f" ({int(slow['rows']):,} rows)"])
        return table(["method", "fits", "median s", "slowest s", "slowest fit"], body)

    @staticmethod
    def rounding():
        """The clusterings ZGYA's rounding-sensitive fit lands on (bench_zgya_rounding.py)."""
        fits = pd.read_csv(TEMPLATE.parent / "zgya_rounding.csv").round(
            {"cost": 3, "mean TV": 4, "worst TV": 4})
        counts = fits.groupby(["cost", "mean TV", "worst TV"]).size()
        return "% rounding: frontier/zgya_rounding.csv\n" + table(
            ["cost", "mean TV", "worst TV", "fits"],
            [[f"{c:.3f}", f"{m:.4f}", f"{w:.4f}", n] for (c, m, w), n in counts.items()])

    def render(self):
        meta, lists = self.meta, {"relative": RELATIVE, "budgets": BUDGETS, "lambdas": LAMBDAS,
                                  "bound_list": BOUNDS, "fca_bounds": FCA_BOUNDS}
        fields = {k: ", ".join(f"{v:g}" for v in values) for k, values in lists.items()}
        fields.update(
            datasets="; ".join(map(self.size, self.names)),
            command=meta["command"],
            run_line=(f"It ran on {meta['machine']}, {meta['date']}, at commit "
                      f"`{meta['commit']}` (fairkm {meta['version']}), in "
                      f"{meta['wall_s'] / 60:.0f} min."),
            headline=self.headline(), zgya=self.zgya(), panel=self.panel(), bounds=self.bounds(),
            fca=self.fca(), figures=self.figures(), time=self.time(),
            rounding=self.rounding())
        return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(fields)


def paper_sentence(data, blind, seeds):
    """Whether the paper's weighting repairs the worst cluster, within the widest cap and at all."""
    paper = fitted(data[data["method"].str.startswith("FairKM paper")])
    text = f"- **The paper's weighting** ({len(paper)} fits):"
    for label, rows in ((f"within +{COST_CAPS[-1] - 1:.0%}", paper[paper["cost"] <= COST_CAPS[-1]]),
                        ("at any cost", paper)):
        if rows.empty:
            continue
        best = rows.loc[rows["worst TV"].idxmin()].to_dict()
        never = "" if fairer(best["worst TV"], blind["worst TV"]) else "never "
        text += (f" {label} its worst cluster is {never}fairer than K-Means(10)'s, at best "
                 f"{quote(best, seeds)};")
    return text[:-1] + ". It weighs a cluster by its size squared: fair where the rows are."


def plot(points, name, path, max_cost=1.35):
    """Both frontiers of one dataset; each method's points joined in the order of its knob."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = fitted(first_seed(points[points["dataset"] == name]))
    right = min(max_cost, max(1.05, float(data["cost"].max()) + 0.01))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2), sharex=True)
    for ax, column in zip(axes, MEASURES, strict=True):
        for i, (method, rows) in enumerate(data.groupby("method", sort=False)):
            # Ten colours, then another palette: no two methods of a figure share one.
            colour = f"C{i}" if i < 10 else plt.get_cmap("Dark2")(i - 10)
            style = dict(marker="o", linestyle="-", color=colour, markersize=4)
            if method in ("K-Means(10)", "fair-kmeans") or "budget" in method:
                style.update(linestyle="none", marker="D" if method == "K-Means(10)" else "*",
                             markersize=9)
            on = rows[rows["status"] != "collapsed"]  # a collapsed fit is marked, not joined
            ax.plot(on["cost"].clip(upper=right), on[column], label=method, **style)
            off = rows[rows["status"] != "ok"]
            ax.plot(off["cost"].clip(upper=right), off[column], "x", color="black", label="_")
            # Beyond the right edge: a ">" with the cost, so one dear bound squashes nothing.
            for c, value in rows.loc[rows["cost"] > right, ["cost", column]].to_numpy():
                ax.plot([right], [value], marker=">", color=colour, markersize=8)
                ax.annotate(f"{c:.2f}x", (right, value), textcoords="offset points",
                            xytext=(-6, 4), ha="right", fontsize=7, color=colour)
        ax.set_xlim(0.99, right + 0.01)
        ax.set_xlabel("K-Means cost / KMeans(n_init=10)'s")
        ax.set_ylabel(f"{column}: each attribute's {column.split()[0]} cluster (lower: fairer)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], marker="x", color="black", linestyle="none"))
    fig.legend(handles, [*labels, "status not ok"], loc="lower center", ncol=6, fontsize=8,
               frameon=False)
    fig.suptitle(name, fontsize=11)
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_outputs(points, meta, output_dir, page):
    points.to_csv(output_dir / "points.csv", index=False)
    (output_dir / "run.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    (output_dir / "wins.md").write_text("\n\n".join(
        f"### {name}\n\n{cap_table(first_seed(data), name)}"
        for name, data in points.groupby("dataset", sort=False)) + "\n", encoding="utf-8")
    for stale in output_dir.glob("frontier_*.png"):  # a panel of fewer sets leaves none behind
        stale.unlink()
    for i, name in enumerate(points["dataset"].unique()):
        plot(points, name, output_dir / f"frontier_{i}.png")
    page.write_text(Page(points, meta, output_dir.name).render().rstrip() + "\n",
                    encoding="utf-8")


def run_meta():
    src = Path(__file__).resolve().parents[1] / "src"
    commit, edited = (subprocess.run(["git", *words], capture_output=True, text=True,
                                     check=False).stdout.strip() for words in
                      (("rev-parse", "--short", "HEAD"), ("status", "--porcelain", src)))
    # Fitted with this checkout's src/ (not a clean copy of the commit): say if it was edited.
    if edited and Path(fairkm.__file__).resolve().parents[1] == src:
        commit += " with uncommitted changes to src/"
    threads = ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in ("OMP_NUM_THREADS",
                                                                      "NUMBA_NUM_THREADS"))
    return dict(command=recorded_command("bench_frontier.py"),
                machine=f"{platform.machine()}, {os.cpu_count()} cores ({threads})",
                date=date.today().isoformat(), version=fairkm.__version__, commit=commit)


def read_points(path):
    text = dict.fromkeys(("knob", "note", "warnings", "refit_params_"), "")
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=dict.fromkeys(
        text, str)).fillna(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results/frontier"))
    parser.add_argument("--page", type=Path, help="the page to write (default: OUTPUT_DIR.md)")
    parser.add_argument("--fair-kmeans-python", help="a Python with fair-kmeans (numpy < 2)")
    parser.add_argument("--fca-results", help="a folder: results.csv and labels_eps*.npy")
    parser.add_argument("--quick", action="store_true", help="three small sets, one seed")
    parser.add_argument("--replot", type=Path, help="a run's points.csv (run.json beside it)")
    args = parser.parse_args()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    page = args.page or args.output_dir.with_suffix(".md")
    if args.replot is not None:
        meta = json.loads((args.replot.parent / "run.json").read_text(encoding="utf-8"))
        write_outputs(read_points(args.replot), meta, args.output_dir, page)
        return
    # The kernels compile on first use: fit a small problem first, so no fit's time includes it.
    X, S = easy_hard(300)
    for sensitive, numeric in ((S[["hard"]], []), (S.assign(easy=S["easy"] + 0.5), ["easy"])):
        frontier_rows("warm-up", X, sensitive, numeric, 3, 0, (0.2,), args)
    start, rows, meta = time.perf_counter(), [], run_meta()  # the commit the fits start from
    for name, X, sensitive, numeric, k, seeds, bounds in panel(args.data_home, args.quick):
        for seed in seeds:
            print(f"{name}, seed {seed}", flush=True)
            rows.extend(frontier_rows(name, X, sensitive, numeric, k, seed, bounds, args))
    pd.DataFrame(rows).to_csv(args.output_dir / "points.csv", index=False)  # read as --replot does
    meta["wall_s"] = time.perf_counter() - start
    write_outputs(read_points(args.output_dir / "points.csv"), meta, args.output_dir, page)


if __name__ == "__main__":
    main()
