"""Fairness as sensitive attributes are added, one by one (the paper's future work, item 1).

Follows every sensitive attribute, fitted or not, as others join a default
``FairKM(k, random_state=seed)`` fit: its CW and MW (the mean and the worst
cluster's total-variation distance from the dataset's mix), the K-Means cost
over ``KMeans(n_clusters=k, n_init=10, random_state=seed)``'s and the time
over that fit's (the median of three), in one process on one thread. Studies
(``study``): ``adult`` (the paper's pipeline, k = 5 and 15, the five
attributes added in four orders, each attribute alone as a reference);
``attributes`` (``make_sensitive_blobs``, 20 attributes of 5 values, the
first 1, 2, 5, 10, 20 fitted, all measured); ``values`` (5 attributes of 2,
10, 100, 1,000 values). Seeds 0, 1, 2. docs/attributes.md says more.

``points.csv`` is long, one row per fit and measured attribute: ``study,
dataset, n_samples, design_values`` (the values per attribute asked of the
generator; empty on Adult), ``k, seed, method`` (``K-Means(10)``,
``FairKM``, ``FairKM alone``, ``random labels``), ``order`` (an Adult order,
``alone`` or empty), ``n_fitted, fitted`` (the fit's attributes, joined by
``|``), ``attribute, n_values`` (the one measured and its values that occur:
a 1,000-valued one may show 999), ``in_fit, CW, MW``, then the fit's own
``cost, seconds, kmeans_seconds, time_ratio, relative_weight, n_iter,
warnings`` (repeated on its attribute rows; no cost or time for random
labels). ``run.json`` records the command, date, machine, commit and wall
time. The page (the output folder's name + ``.md``: ``docs/attributes.md``)
and the figures are written from these two files alone.

Run: ``python benchmarks/bench_attributes.py --data-home ../shared/data
--output-dir docs/attributes [--quick] [--replot docs/attributes/points.csv]``.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

import fairkm
from fairkm import FairKM
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.metrics import max_wasserstein, mean_cluster_wasserstein

SEEDS = (0, 1, 2)
ADULT_KS = (5, 15)
ORDER_SEED = 2020
BLOBS = {"n_samples": 20_000, "n_features": 5, "centers": 8, "cluster_std": 3.0}
BLOBS_K = 8
COUNTS = (1, 2, 5, 10, 20)
COUNT_VALUES = 5
VALUES = (2, 10, 100, 1000)
VALUES_ATTRIBUTES = 5
# A change of TV under half a percentage point of the rows is called neither a loss nor a gain.
TOLERANCE = 0.005
MEASURES = ("CW", "MW")


def orders(columns):
    rng, columns = np.random.RandomState(ORDER_SEED), list(columns)
    return {"data order": columns, "reverse": columns[::-1],
            **{f"random {i}": [columns[j] for j in rng.permutation(len(columns))] for i in (1, 2)}}


def inertia(X, labels):
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
               for c in np.unique(labels))


class Setting:
    """One dataset, k and seed: its K-Means reference and the rows of every fit on it."""

    def __init__(self, study, dataset, X, sensitive, k, seed, design_values=np.nan):
        self.X, self.sensitive, self.rows = X, sensitive, []
        self.about = {"study": study, "dataset": dataset, "n_samples": len(X),
                      "design_values": design_values, "k": k, "seed": seed}
        times = []
        for _ in range(3):  # the median of three: one slow run on a busy machine skews no ratio
            start = time.perf_counter()
            km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X)
            times.append(time.perf_counter() - start)
        self.kmeans_seconds, self.reference = float(np.median(times)), km.inertia_
        self.add("K-Means(10)", "", [], km.labels_, self.kmeans_seconds)
        self.add("random labels", "", [], np.random.RandomState(seed).randint(k, size=len(X)),
                 np.nan)

    def add(self, method, order, fitted, labels, seconds, model=None, caught=()):
        kwargs = dict(sensitive_features=self.sensitive, numeric_sensitive=False,
                      multioutput="raw_values")
        cw, mw = mean_cluster_wasserstein(labels, **kwargs), max_wasserstein(labels, **kwargs)
        own = {"method": method, "order": order, "n_fitted": len(fitted),
               "fitted": "|".join(fitted),
               "cost": np.nan if np.isnan(seconds) else inertia(self.X, labels) / self.reference,
               "seconds": seconds, "kmeans_seconds": self.kmeans_seconds,
               "time_ratio": seconds / self.kmeans_seconds,
               "relative_weight": getattr(model, "relative_weight_", np.nan),
               "n_iter": getattr(model, "n_iter_", np.nan),
               "warnings": " | ".join(str(w.message).replace("\n", " ") for w in caught)}
        for j, attribute in enumerate(self.sensitive.columns):
            self.rows.append({**self.about, **own, "attribute": attribute,
                              "n_values": self.sensitive[attribute].nunique(),
                              "in_fit": attribute in fitted, "CW": cw[j], "MW": mw[j]})

    def fairkm(self, method, order, fitted):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            model = FairKM(self.about["k"], random_state=self.about["seed"]).fit(
                self.X, sensitive_features=self.sensitive[list(fitted)])
            seconds = time.perf_counter() - start
        self.add(method, order, fitted, model.labels_, seconds, model, caught)
        print(f"  {method:12} {order:10} {'+'.join(fitted)[:60]:60} cost "
              f"{self.rows[-1]['cost']:.3f} {seconds:5.2f} s", flush=True)


def adult_settings(data_home, seeds, ks):
    bunch = fetch_adult(data_home=data_home, preprocess="paper", download_if_missing=False)
    X = np.ascontiguousarray(bunch.features, dtype=np.float64)
    sensitive = bunch.sensitive.reset_index(drop=True)
    for k in ks:
        for seed in seeds:
            print(f"Adult paper, k={k}, seed {seed}", flush=True)
            setting = Setting("adult", f"Adult paper, k={k}", X, sensitive, k, seed)
            for attribute in sensitive.columns:
                setting.fairkm("FairKM alone", "alone", [attribute])
            for name, order in orders(sensitive.columns).items():
                for size in range(1, len(order) + 1):
                    setting.fairkm("FairKM", name, order[:size])
            yield setting


def blob_settings(seeds, quick):
    for seed in seeds:
        params = {**BLOBS, "n_samples": 5_000 if quick else BLOBS["n_samples"],
                  "random_state": seed}
        X, sensitive, _ = make_sensitive_blobs(n_values=(COUNT_VALUES,) * max(COUNTS), **params)
        setting = Setting("attributes", f"blobs, {max(COUNTS)} attributes of {COUNT_VALUES} "
                          "values", X, sensitive, BLOBS_K, seed, COUNT_VALUES)
        for count in COUNTS:
            setting.fairkm("FairKM", "", list(sensitive.columns[:count]))
        yield setting
        for values in VALUES:
            # The same seed gives the same X: make_blobs draws first.
            X, sensitive, _ = make_sensitive_blobs(n_values=(values,) * VALUES_ATTRIBUTES,
                                                   **params)
            setting = Setting("values", f"blobs, {VALUES_ATTRIBUTES} attributes of {values} "
                              "values", X, sensitive, BLOBS_K, seed, values)
            setting.fairkm("FairKM", "", list(sensitive.columns))
            yield setting


# ---- The page and the figures: everything below reads points.csv alone. ----


def tv(value):
    return f"{value:.3f}"


def fit_name(fitted):
    """A fit's attributes as a set: sorted, so that one set has one name whatever its order."""
    return " + ".join(sorted(fitted.split("|"))) if fitted else ""


def markdown(rows):
    """A pipe table from a list of dicts of already formatted cells."""
    columns = list(rows[0])
    return "\n".join(["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
                     + ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows])


def bullet(text):
    # No break at a hyphen: "marital-\nstatus" would read "marital- status".
    return textwrap.fill(text, 100, initial_indent="- ", subsequent_indent="  ",
                         break_on_hyphens=False, break_long_words=False)


def fair_fits(adult):
    fair = adult[adult["method"].str.startswith("FairKM")]
    return fair.assign(fit=fair["fitted"].map(fit_name))


def alone_table(adult, k):
    """Per attribute, means over seeds: K-Means, FairKM on it alone, on all, random labels."""
    data = adult[adult["k"] == k]
    picks = {"K-Means": data["method"] == "K-Means(10)",
             "alone": (data["method"] == "FairKM alone") & data["in_fit"],
             "all": (data["method"] == "FairKM") & (data["n_fitted"] == data["n_fitted"].max()),
             "random": data["method"] == "random labels"}
    table = pd.DataFrame({f"{m} {name}": data[rows].groupby("attribute", sort=False)[m].mean()
                          for name, rows in picks.items() for m in MEASURES})
    return table.assign(values=data.groupby("attribute", sort=False)["n_values"].first())


def losers(adult):
    """Every (fit, attribute, measure) whose mean over seeds is TOLERANCE worse than K-Means'."""
    # One fit per set of attributes: the orders agree (the page says how closely).
    fair = fair_fits(adult).drop_duplicates(["k", "seed", "fit", "attribute"])
    km = adult[adult["method"] == "K-Means(10)"][["k", "seed", "attribute", *MEASURES]]
    joined = fair.merge(km, on=["k", "seed", "attribute"], suffixes=("", " K-Means"))
    found = []
    for m in MEASURES:
        table = joined.assign(worse=joined[m] - joined[f"{m} K-Means"] >= TOLERANCE).groupby(
            ["k", "fit", "attribute", "in_fit"], sort=False).agg(
            seeds=("worse", "sum"), kmeans=(f"{m} K-Means", "mean"), value=(m, "mean"))
        found.append(table.reset_index().assign(measure=m))
    table = pd.concat(found, ignore_index=True)
    table["increase"] = table["value"] - table["kmeans"]
    table = table[table["increase"] >= TOLERANCE]
    return table.sort_values(["k", "increase"], ascending=[True, False], ignore_index=True)


def blob_table(points, study, by):
    """Per step of a series, means over seeds of: the fitted attributes' mean CW, mean MW and
    worst MW; K-Means' mean CW on those attributes; the mean MW of those left out; cost and
    time."""
    data, per_seed = points[points["study"] == study], []
    kmeans = data[data["method"] == "K-Means(10)"]
    for (method, level, seed), fit in data.groupby(["method", by, "seed"]):
        fitted = fit[fit["in_fit"]] if method == "FairKM" else fit
        rest = fit[~fit["in_fit"]] if method == "FairKM" else fit.iloc[:0]
        same = kmeans[(kmeans["seed"] == seed)  # K-Means of the same rows, same attributes
                      & (kmeans["design_values"] == fit["design_values"].iloc[0])
                      & kmeans["attribute"].isin(fitted["attribute"])]
        per_seed.append({"method": method, by: level, "CW": fitted["CW"].mean(),
                         "K-Means CW": same["CW"].mean(),
                         "MW": fitted["MW"].mean(), "worst MW": fitted["MW"].max(),
                         "MW left out": rest["MW"].mean(), "cost": fit["cost"].iloc[0],
                         "time_ratio": fit["time_ratio"].iloc[0],
                         "seconds": fit["seconds"].iloc[0]})
    return pd.DataFrame(per_seed).groupby(["method", by]).mean()


def save(fig, path, title, bottom=0.0):
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, bottom, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_adult(adult, k, path, seeds):
    """CW and MW of every attribute against the number of attributes in the fit, per order."""
    data = adult[adult["k"] == k]
    table = alone_table(adult, k)
    fig, axes = plt.subplots(2, len(table), figsize=(3.2 * len(table), 6.6), sharex=True)
    levels = {"K-Means": ("K-Means(10)", dict(color="black", linestyle="--")),
              "alone": ("FairKM, this attribute alone", dict(color="tab:green", linestyle=":")),
              "random": ("random labels", dict(color="grey", linestyle="-."))}
    for col, attribute in enumerate(table.index):
        ours = data[(data["attribute"] == attribute) & (data["method"] == "FairKM")]
        for row, m in enumerate(MEASURES):
            ax = axes[row, col]
            for name, (label, style) in levels.items():
                ax.axhline(table.loc[attribute, f"{m} {name}"], label=label, linewidth=1.4,
                           **style)
            for i, (order, rows) in enumerate(ours.groupby("order", sort=False)):
                stats = rows.groupby("n_fitted").agg(mean=(m, "mean"), low=(m, "min"),
                                                     high=(m, "max"), in_fit=("in_fit", "first"))
                x = stats.index + (i - 1.5) * 0.06  # the orders side by side, not on top
                ax.plot(x, stats["mean"], color=f"C{i}", label=order, linewidth=1.3)
                ax.vlines(x, stats["low"], stats["high"], color=f"C{i}", linewidth=0.8)
                ax.scatter(x, stats["mean"], s=22, zorder=3, edgecolors=f"C{i}",
                           facecolors=[f"C{i}" if f else "white" for f in stats["in_fit"]])
            ax.set_ylim(bottom=0)
            ax.set_xticks(range(1, len(table) + 1))
            ax.grid(alpha=0.3)
        axes[0, col].set_title(f"{attribute} ({table.loc[attribute, 'values']} values)",
                               fontsize=10)
        axes[1, col].set_xlabel("attributes in the fit")
    axes[0, 0].set_ylabel("CW (mean cluster's TV)")
    axes[1, 0].set_ylabel("MW (worst cluster's TV)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    save(fig, path, f"Adult (paper pipeline), k={k}: each attribute as attributes are added "
         f"(filled: in the fit; bars: min-max over {seeds})", bottom=0.05)


def plot_cost_time(adult, path, seeds):
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.0), sharex=True)
    for ax, column, label in zip(axes, ("cost", "time_ratio"), (
            "K-Means cost / KMeans(n_init=10)'s", "fit time / KMeans(n_init=10)'s"), strict=True):
        for k, style in zip(sorted(adult["k"].unique()), ("-", "--", ":"), strict=False):
            fair = adult[(adult["k"] == k) & (adult["method"] == "FairKM")]
            for i, (order, rows) in enumerate(fair.groupby("order", sort=False)):
                mean = rows.groupby("n_fitted")[column].mean()
                ax.plot(mean.index, mean, marker="o", linestyle=style, color=f"C{i}",
                        label=f"{order}, k={k}")
            alone = adult[(adult["k"] == k) & (adult["method"] == "FairKM alone")]
            mean = alone.groupby("fitted")[column].mean()
            ax.scatter(np.ones(len(mean)), mean, marker="x", color="black", zorder=3,
                       label="each attribute alone (x)" if k == adult["k"].min() else None)
        ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="KMeans(n_init=10)")
        ax.set(xlabel="attributes in the fit", ylabel=label, xticks=range(1, 6),
               ylim=(0.95, None) if column == "cost" else (0, None))
        ax.grid(alpha=0.3)
    fig.legend(*axes[1].get_legend_handles_labels(), loc="lower center", ncol=5, fontsize=8,
               frameon=False)
    save(fig, path, f"Adult (paper pipeline): K-Means cost and fit time (means over {seeds})",
         bottom=0.12)


def plot_blobs(series, path, seeds):
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.8))
    for row, (label, table) in enumerate(series):
        fair, km, chance = (table.loc[m] for m in ("FairKM", "K-Means(10)", "random labels"))
        x = fair.index
        ax = axes[row, 0]
        for i, (column, name) in enumerate((("CW", "mean CW"), ("MW", "mean MW"),
                                            ("worst MW", "worst attribute's MW"))):
            ax.plot(x, fair[column], marker="o", color=f"C{i}", label=f"FairKM: {name}")
            ax.plot(x, km[column].reindex(x, method="nearest"), linestyle="--", color=f"C{i}",
                    label=f"K-Means: {name}")
        if fair["MW left out"].notna().any():
            ax.plot(x, fair["MW left out"], marker="s", color="C3",
                    label="FairKM: mean MW, left out")
        ax.plot(x, chance["MW"].reindex(x, method="nearest"), linestyle="-.", color="grey",
                label="random labels: mean MW")
        # Headroom above the curves for the legend.
        ax.set(ylabel="TV from the dataset's mix", ylim=(0, 1.0))
        ax.legend(fontsize=6.5, ncol=2, loc="upper left")
        for ax, column, name in ((axes[row, 1], "cost", "K-Means cost / KMeans(n_init=10)'s"),
                                 (axes[row, 2], "time_ratio", "fit time / KMeans(n_init=10)'s")):
            ax.plot(x, fair[column], marker="o", color="C0", label="FairKM")
            ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="KMeans(n_init=10)")
            ax.set(ylabel=name, ylim=(0.95, None) if column == "cost" else (0, None))
            ax.legend(fontsize=7, loc="center right")
        for ax in axes[row]:
            ax.set_xscale("log")
            ax.set_xticks(list(x), [f"{v:,g}" for v in x])
            ax.minorticks_off()
            ax.set_xlabel(label)
            ax.grid(alpha=0.3)
    save(fig, path, "Blobs (k=8): the fitted attributes' distance from the dataset's mix, cost "
         f"and time (means over {seeds})")


def left_out(adult):
    """Per measure, the (fit, attribute left out) cases and how many ended better or worse.

    Means over seeds, against K-Means' on the same seeds; better or worse by ``TOLERANCE``.
    """
    fair = fair_fits(adult).drop_duplicates(["k", "seed", "fit", "attribute"])
    km = adult[adult["method"] == "K-Means(10)"][["k", "seed", "attribute", *MEASURES]]
    joined = fair[~fair["in_fit"]].merge(km, on=["k", "seed", "attribute"],
                                         suffixes=("", " K-Means"))
    counts = {}
    for m in MEASURES:
        means = joined.groupby(["k", "fit", "attribute"])[[m, f"{m} K-Means"]].mean()
        change = means[m] - means[f"{m} K-Means"]
        counts[m] = dict(cases=len(change), better=int((change <= -TOLERANCE).sum()),
                         worse=int((change >= TOLERANCE).sum()))
    return counts


def adult_findings(adult, n_seeds):
    lines = []
    fair = fair_fits(adult)
    table = losers(adult)
    out, alone_fairer = left_out(adult), []
    if len(table):
        top, outside = table.loc[table["increase"].idxmax()], int((~table["in_fit"]).sum())
        where = ("all of them attributes left out of the fit: no fitted attribute ended worse "
                 "than K-Means" if outside == len(table) else f"{outside} of them left out")
        lines.append(
            f"**Attributes left worse than K-Means.** In {len(table)} cases (set of attributes "
            f"fitted, attribute, measure: the table below) an attribute ends at least "
            f"{TOLERANCE} further from the dataset's mix than K-Means left it, {where}. The "
            f"largest: at k={top['k']}, fitting {top['fit']} takes {top['attribute']}'s "
            f"{top['measure']} from {tv(top['kmeans'])} (K-Means) to {tv(top['value'])} (worse "
            f"in {int(top['seeds'])} of {n_seeds} seeds). Of the {out['MW']['cases']} cases of "
            f"an attribute left out of a fit, its worst cluster (MW) ended at least {TOLERANCE} "
            f"closer to the dataset's mix than K-Means left it in {out['MW']['better']} and "
            f"further in {out['MW']['worse']}; its mean cluster (CW) closer in "
            f"{out['CW']['better']} and further in {out['CW']['worse']}. So an attribute left "
            "out is not protected: fixing one attribute at a time usually helps the others, "
            "but can leave another one's worst cluster worse than fairness-blind K-Means left "
            "it.")
    else:
        lines.append(f"**No attribute ends {TOLERANCE} worse than K-Means** in any fit.")
    for k in sorted(adult["k"].unique()):
        table = alone_table(adult, k)
        full = int(adult[adult["k"] == k]["n_fitted"].max())
        loss = pd.concat({m: table[f"{m} all"] - table[f"{m} alone"] for m in MEASURES})
        (m, worst) = loss.idxmax()
        losing = [a for a in table.index if max(loss[m_][a] for m_ in MEASURES) >= TOLERANCE]
        alone_fairer.append(f"{len(losing)} of {len(table)} at k={k}")
        no_gain = [f"{a}'s {m_} ({tv(table.loc[a, f'{m_} all'])}, K-Means "
                   f"{tv(table.loc[a, f'{m_} K-Means'])})" for m_ in MEASURES
                   for a in table.index
                   if table.loc[a, f"{m_} K-Means"] - table.loc[a, f"{m_} all"] < TOLERANCE]
        lines.append(
            f"**k={k}: all {full} together against each alone.** With all {full} in the fit, "
            f"{len(losing)} of the {len(table)} attributes end at least {TOLERANCE} worse on CW "
            f"or MW than when fitted alone{' (' + ', '.join(losing) + ')' if losing else ''}; "
            f"the largest loss is {worst}'s {m}: {tv(table.loc[worst, f'{m} alone'])} alone, "
            f"{tv(table.loc[worst, f'{m} all'])} with all {full}. "
            + (f"Against K-Means, all {full} together gain less than {TOLERANCE} on "
               + "; ".join(no_gain) + "." if no_gain else
               f"Every attribute still gains at least {TOLERANCE} on both over K-Means."))
    lines.append(
        "**Against the paper's fixed weight.** With the default weight, attributes fitted alone "
        f"end fairer than with all of them in the fit ({', '.join(alone_fairer)}, above); with "
        "the paper's fixed weight (`fairness_weight=1e6`) the [reproduction](reproduction.md) "
        "finds the reverse on the same data: FairKM on all attributes is the fairer one per "
        "attribute.")
    gap = float(fair.groupby(["k", "seed", "fit", "attribute"])[["CW", "MW", "cost"]]
                .agg(lambda s: s.max() - s.min()).to_numpy().max())
    lines.append(
        "**The order does not change the end.** A set of attributes gives the same clustering "
        "whatever their column order: fits of one set in two orders "
        + ("are identical" if gap == 0 else f"differ by at most {gap:.1e}")
        + " in CW, MW and cost. The four orders differ only in the sets they pass "
        "through on the way to all five." if gap < 1e-9 else
        f"**The column order matters.** Fits of one set of attributes in two orders differ by "
        f"up to {gap:.3f} in CW, MW or cost.")
    warned = fair.drop_duplicates(["k", "seed", "method", "order", "fitted"])["warnings"]
    lines.append(
        f"**Cost and time.** Every FairKM fit on Adult cost {fair['cost'].min():.3f} to "
        f"{fair['cost'].max():.3f} times K-Means' and took {fair['time_ratio'].min():.1f} to "
        f"{fair['time_ratio'].max():.1f} times KMeans(n_init=10)'s time "
        f"({fair['seconds'].min():.2f} to {fair['seconds'].max():.2f} s); "
        f"{warned.notna().sum()} of the {len(warned)} fits warned.")
    return "\n".join(bullet(line) for line in lines)


def blob_findings(count, values):
    fair, km = count.loc["FairKM"], count.loc["K-Means(10)"].iloc[0]
    one, many = fair.index.min(), fair.index.max()
    vfair, vkm, chance = (values.loc[m] for m in ("FairKM", "K-Means(10)", "random labels"))
    few, lots = vfair.index.min(), vfair.index.max()
    # Against K-Means on the same attributes: with n fitted, K-Means' mean CW over those n.
    removed = 1 - fair["CW"] / fair["K-Means CW"]
    vremoved = 1 - vfair["CW"] / vkm["CW"]
    both = pd.concat([fair, vfair])
    return "\n".join(bullet(line) for line in [
        f"**More attributes, less for each.** From {one:g} to {many:g} fitted attributes, "
        f"their mean CW goes from {tv(fair.loc[one, 'CW'])} to {tv(fair.loc[many, 'CW'])} "
        f"and their mean MW from {tv(fair.loc[one, 'MW'])} to {tv(fair.loc[many, 'MW'])} "
        f"(K-Means on all {many:g}: {tv(km['CW'])} and {tv(km['MW'])}). On the fitted "
        f"attributes FairKM removes {removed.loc[one]:.0%} of K-Means' mean CW with {one:g} "
        f"attribute (K-Means {tv(fair.loc[one, 'K-Means CW'])} on it) and "
        f"{removed.loc[many]:.0%} with {many:g}. The worst attribute's worst cluster is at "
        f"{tv(fair.loc[many, 'worst MW'])} with {many:g} attributes (K-Means: "
        f"{tv(km['worst MW'])}).",
        f"**The attributes left out** keep a mean MW of {tv(fair['MW left out'].min())} to "
        f"{tv(fair['MW left out'].max())} (K-Means: {tv(km['MW'])}): here, where every "
        "attribute follows the same blobs, fitting some moves the others too.",
        f"**Values per attribute.** With {few:,g} values FairKM's mean CW is "
        f"{tv(vfair.loc[few, 'CW'])} against K-Means' {tv(vkm.loc[few, 'CW'])} "
        f"({vremoved.loc[few]:.0%} removed); with {lots:,g}, {tv(vfair.loc[lots, 'CW'])} "
        f"against {tv(vkm.loc[lots, 'CW'])} ({vremoved.loc[lots]:.0%}). Many values raise the "
        f"floor: random labels show a mean MW of {tv(chance.loc[few, 'MW'])} with {few:,g} "
        f"values and {tv(chance.loc[lots, 'MW'])} with {lots:,g}.",
        f"**Cost and time.** FairKM's cost is {both['cost'].min():.3f} to "
        f"{both['cost'].max():.3f} times K-Means' and its time {both['time_ratio'].min():.1f} "
        f"to {both['time_ratio'].max():.1f} times KMeans(n_init=10)'s over both series.",
    ])


def alone_markdown(adult, k):
    table, full = alone_table(adult, k), int(adult[adult["k"] == k]["n_fitted"].max())
    return markdown([{"attribute": a, "values": int(row["values"]),
                      **{f"{m}: {label}": tv(row[f"{m} {name}"]) for m in MEASURES
                         for name, label in (("K-Means", "K-Means"), ("alone", "alone"),
                                             ("all", f"all {full}"))},
                      "MW: random labels": tv(row["MW random"])}
                     for a, row in table.iterrows()])


def losers_markdown(adult, n_seeds):
    return markdown([{"k": r["k"], "FairKM fits": r["fit"], "attribute": r["attribute"],
                      "in the fit": "yes" if r["in_fit"] else "no", "measure": r["measure"],
                      "K-Means": tv(r["kmeans"]), "this fit": tv(r["value"]),
                      "seeds worse": f"{int(r['seeds'])} of {n_seeds}"}
                     for _, r in losers(adult).iterrows()])


def blob_markdown(table, unit):
    rows = []
    for (method, level), r in table.drop(index="random labels").iterrows():
        name = unit if level != 1 else unit[:-1]
        rows.append({"fit": f"{method}, {level:,g} {name}" if level else method,
                     "mean CW": tv(r["CW"]), "mean MW": tv(r["MW"]),
                     "worst attribute's MW": tv(r["worst MW"]),
                     **({"mean MW, left out": "-" if np.isnan(r["MW left out"])
                         else tv(r["MW left out"])} if unit == "attributes" else {}),
                     "cost": f"{r['cost']:.3f}", "time / K-Means": f"{r['time_ratio']:.1f}",
                     "seconds": f"{r['seconds']:.2f}"})
    return markdown(rows)


def write_page(points, run, output_dir, page):
    adult = points[points["study"] == "adult"]
    n_seeds, ks = points["seed"].nunique(), sorted(adult["k"].unique())
    seeds = f"{n_seeds} seed" + "s" * (n_seeds > 1)
    count = blob_table(points, "attributes", "n_fitted")
    values = blob_table(points, "values", "design_values")
    folder = Path(os.path.relpath(output_dir, page.parent)).as_posix()
    k_list = " and ".join(str(k) for k in ks)
    blobs_rows = points[points["study"] == "attributes"]["n_samples"].iloc[0]
    full = adult[adult["method"] == "FairKM"].groupby("order", sort=False)["fitted"].agg(
        lambda fitted: max(fitted, key=len))
    order_lines = "\n".join(f"- {order}: {fitted.replace('|', ', ')}"
                            for order, fitted in full.items())
    quick = "; a `--quick` smoke run, not the study" if run["quick"] else ""
    text = f"""# Adding sensitive attributes, one by one

The FairKM paper's future work (item 1) asks how fairness behaves as sensitive attributes are
added. A user reads a clustering cluster by cluster, so this page follows every attribute on its
own, fitted or not, as others join the fit: its **CW**, the mean over clusters (each counting
once) of the total-variation (TV) distance between the cluster's mix and the dataset's
(`fairkm.metrics.mean_cluster_wasserstein`), and its **MW**, that distance in its worst cluster
(`fairkm.metrics.max_wasserstein`); lower is fairer. For each fit, the **cost** is its K-Means
cost (sum of squared distances to the cluster means) over that of scikit-learn's fairness-blind
`KMeans(n_clusters=k, n_init=10, random_state=seed)` on the same data, and the **time** its
seconds over that `KMeans` fit's (the median of three), timed in the same process on one thread.

Every FairKM fit is the default, `FairKM(k, random_state=seed)`. Three levels frame each
attribute: K-Means, FairKM fitted on that attribute alone (what a user gets by fixing one
attribute at a time), and random labels (each row in one of k clusters at random: the distance
clusters of that size show by chance alone). Numbers are means over {seeds} unless said
otherwise; a change under {TOLERANCE} (half a percentage point of the rows) is called neither a
loss nor a gain. Everything on this page, its prose included, is written by one run of

```bash
{run['command']}
```

on {run['machine']} ({run['date']}, commit `{run['commit']}`, fairkm {run['fairkm']}, Python
{run['python']}; {run['wall_seconds']:.0f} s in all{quick}). Every fit is in
{{download}}`{folder}/points.csv`, one row per fit and measured attribute (its columns are
described in `benchmarks/bench_attributes.py`); `--replot {folder}/points.csv` rewrites this
page and its figures from it without fitting.

## Adult: five attributes in four orders

Adult with the paper's pipeline ({adult['n_samples'].iloc[0]:,} rows), k = {k_list}. Its five
attributes are added one by one in four orders, every prefix fitted:

{order_lines}

{adult_findings(adult, n_seeds)}

![Adult: cost and time against the number of attributes]({folder}/adult_cost_time.png)
"""
    for k in ks:
        text += f"""
### k={k}

![Adult, k={k}: CW and MW of each attribute as attributes are added]({folder}/adult_k{k}.png)

Each attribute under K-Means, FairKM on it alone, FairKM on all of them, and random labels:

% table: alone k={k}
{alone_markdown(adult, k)}
"""
    text += f"""
### Attributes left worse than K-Means

Every set of attributes FairKM fitted (any order) that leaves an attribute at least {TOLERANCE}
further from the dataset's mix than K-Means did, on the mean over seeds; "seeds worse" counts
the seeds where it was so by itself:

% table: losers
{losers_markdown(adult, n_seeds) if len(losers(adult)) else "None."}

## Synthetic data: up to 20 attributes, up to 1,000 values

`fairkm.datasets.make_sensitive_blobs`: {blobs_rows:,} rows, 5 features, 8 overlapping blobs
(`cluster_std=3`), k = 8. Each attribute gives every blob a preferred value, which 60% of its rows
take (the others take any value at random): K-Means' clusters are far from the dataset's mix on
every attribute, and an attribute of 1,000 values has 8 common values and many rare ones. Two
series: 20 attributes of 5 values, of which the fit takes the first 1, 2, 5, 10 and 20 (all 20
measured); and 5 attributes of 2, 10, 100 and 1,000 values, all fitted (the same rows and features
for a seed).

![Synthetic series: fairness, cost and time]({folder}/synthetic.png)

{blob_findings(count, values)}

By the number of attributes (5 values each; "mean" and "worst" over the fitted attributes):

% table: attributes
{blob_markdown(count, "attributes")}

By the values per attribute (5 attributes, all fitted):

% table: values
{blob_markdown(values, "values")}

## What this study leaves out

- **Only the default.** Every fit is FairKM's default trade; `attribute_weights`, budgets
  (`max_cost`, `max_unfairness`) and bounds (`max_deviation`), which could protect an attribute
  that loses, are not tried here (see [frontiers](frontier.md) and [bounds](bounds.md)).
- **Categorical attributes only**: no numeric attribute, no intersections (`"sex & race"`).
- **One real dataset, one generator.** Adult with the paper's pipeline only. The synthetic
  attributes all follow the same blobs; attributes unrelated to the features' structure, or
  many-valued ones without a few common values, are not generated.
- **Four of Adult's 120 orders** (every set they pass through is in the CSV), {seeds},
  k = {k_list} on Adult and 8 on the blobs.
- **Small data**: up to 20,000 rows, so FairKM's exact engine; the mini-batch engine (above
  100,000 rows) and Dask are not measured. Each fit is timed once on a shared 2-core machine:
  read the time ratios, not the seconds.
"""
    page.write_text(text, encoding="utf-8")


def write_outputs(csv, output_dir, page):
    """The figures and the page, from the CSV alone (and run.json beside it)."""
    plt.switch_backend("Agg")
    points = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    run = json.loads((csv.parent / "run.json").read_text(encoding="utf-8"))
    adult = points[points["study"] == "adult"]
    seeds = f"{points['seed'].nunique()} seed" + "s" * (points["seed"].nunique() > 1)
    for k in sorted(adult["k"].unique()):
        plot_adult(adult, k, output_dir / f"adult_k{k}.png", seeds)
    plot_cost_time(adult, output_dir / "adult_cost_time.png", seeds)
    plot_blobs([("attributes in the fit (5 values each)",
                 blob_table(points, "attributes", "n_fitted")),
                ("values per attribute (5 attributes)",
                 blob_table(points, "values", "design_values"))],
               output_dir / "synthetic.png", seeds)
    write_page(points, run, output_dir, page)


def machine():
    cpu = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in
              (cpu.read_text().splitlines() if cpu.exists() else []) if "model name" in line]
    return f"{(models or [platform.machine()])[0]}, {len(os.sched_getaffinity(0))} cores"


def commit():
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False, cwd=Path(__file__).parents[1])
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True,
                           text=True, check=False, cwd=Path(__file__).parents[1]).stdout.strip()
    return done.stdout.strip() + (" with uncommitted changes to src/" if dirty else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results/attributes"))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: one seed, k=5 only, 5,000 rows of blobs")
    parser.add_argument("--replot", type=Path, metavar="POINTS.csv",
                        help="rewrite the page and figures from a run's points.csv; fit nothing")
    args = parser.parse_args()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    page = args.output_dir.with_suffix(".md")  # docs/attributes -> docs/attributes.md
    if args.replot is not None:
        write_outputs(args.replot, args.output_dir, page)
        return
    seeds = SEEDS[:1] if args.quick else SEEDS
    started = time.perf_counter()
    with threadpool_limits(1):
        X, sensitive, _ = make_sensitive_blobs(500, random_state=0)
        FairKM(3, random_state=0).fit(X, sensitive_features=sensitive)  # compile before timing
        adult = adult_settings(args.data_home, seeds, ADULT_KS[:1] if args.quick else ADULT_KS)
        rows = [row for setting in (*adult, *blob_settings(seeds, args.quick))
                for row in setting.rows]
    run = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
           "date": datetime.date.today().isoformat(), "machine": machine(),
           "python": platform.python_version(), "fairkm": fairkm.__version__,
           "commit": commit(), "wall_seconds": round(time.perf_counter() - started, 1),
           "quick": args.quick}
    (args.output_dir / "run.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    # Six digits are plenty for three-decimal tables, and the page reads the file as written.
    pd.DataFrame(rows).to_csv(args.output_dir / "points.csv", index=False, float_format="%.6g")
    write_outputs(args.output_dir / "points.csv", args.output_dir, page)


if __name__ == "__main__":
    main()
