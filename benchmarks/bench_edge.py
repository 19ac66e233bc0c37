"""Weights on a real survey, as a new user would try them: does their scale matter anywhere?

Adult's held-out file (``adult.test``, 16,281 people) with its census weight
``fnlwgt`` as ``sample_weight``; features age, education-num and
hours-per-week, standardised; four sensitive attributes (marital-status,
race, sex, relationship). For every estimator that takes weights, the fit is
repeated with the weights multiplied by 1e6, by 1e-6 and normalised to sum 1,
and the script prints, against the weights as given:

* labels: how many rows changed cluster;
* predict: how many of 5,000 rows of ``adult.data`` (with their attributes)
  were predicted into another cluster;
* score / inertia: the relative change after undoing the factor;
* audit: the largest change of any measure of :func:`fairkm.report.audit`
  given the same weights (0 means the same report).

Then the weighted truth (the issue's example): race's mean cluster distance
(CW) of a weighted fit, audited with and without its weights. Last,
frequency weights: the same rows collapsed into distinct rows with counts
against the rows repeated, how many people end in another cluster and the
K-Means cost of each (a fit moves a weighted row as one, where the repeated
rows could part).

Run: ``python benchmarks/bench_edge.py [--data-home ../shared/data] [--k 5]``.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import fetch_adult
from fairkm.report import audit

ATTRIBUTES = ["marital-status", "race", "sex", "relationship"]
FEATURES = ["age", "education-num", "hours-per-week"]
FACTORS = {"x1e6": 1e6, "x1e-6": 1e-6, "sum to 1": None}


def survey(data_home, subset):
    bunch = fetch_adult(data_home=data_home, subset=subset, preprocess=None,
                        download_if_missing=False)
    frame = bunch.data
    X = frame[FEATURES].to_numpy(dtype=float)
    S = frame[ATTRIBUTES].astype(str).reset_index(drop=True)
    return X, S, frame["fnlwgt"].to_numpy(dtype=float)


def estimators(k):
    return {
        "FairKM()": lambda: FairKM(k, random_state=0),
        "FairKM(max_cost=0.05)": lambda: FairKM(k, max_cost=0.05, random_state=0),
        "FairKM(max_deviation=0.05)": lambda: FairKM(k, max_deviation=0.05, random_state=0),
        "BoundedKMeans(max_deviation=0.05)": lambda: BoundedKMeans(k, max_deviation=0.05,
                                                                   random_state=0),
    }


def audit_numbers(model, X, S, weights):
    report = audit(model, X, sensitive_features=S, sample_weight=weights, n_init=1,
                   check_data=False)
    return report.fairness.select_dtypes("number").to_numpy()


def scale_table(X, S, w, X_new, S_new, k):
    print("| estimator | weights | labels changed | predictions changed (of 5,000) "
          "| score, after the factor | audit, largest change | fit (s) |")
    print("|---|---|---|---|---|---|---|")
    for name, make in estimators(k).items():
        start = time.perf_counter()
        base = make().fit(X, sensitive_features=S, sample_weight=w)
        seconds = time.perf_counter() - start
        base_pred = base.predict(X_new, sensitive_features=S_new)
        base_score = base.score(X, sensitive_features=S, sample_weight=w) if hasattr(
            base, "score") else -base.inertia_
        base_audit = audit_numbers(base, X, S, w)
        print(f"| {name} | as given | | | | | {seconds:.1f} |", flush=True)
        for label, factor in FACTORS.items():
            scaled = w / w.sum() if factor is None else w * factor
            ratio = scaled[0] / w[0]
            start = time.perf_counter()
            model = make().fit(X, sensitive_features=S, sample_weight=scaled)
            seconds = time.perf_counter() - start
            changed = int(np.count_nonzero(model.labels_ != base.labels_))
            moved = int(np.count_nonzero(model.predict(X_new, sensitive_features=S_new)
                                         != base_pred))
            score = (model.score(X, sensitive_features=S, sample_weight=scaled)
                     if hasattr(model, "score") else -model.inertia_)
            drift = abs(score / ratio / base_score - 1.0)
            worst = float(np.nanmax(np.abs(audit_numbers(model, X, S, scaled) - base_audit)))
            print(f"| {name} | {label} | {changed} | {moved} | {drift:.1e} | {worst:.1e} "
                  f"| {seconds:.1f} |", flush=True)


def weighted_truth(X, S, w, k):
    model = FairKM(k, random_state=0).fit(X, sensitive_features=S, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = audit(model, X, sensitive_features=S, n_init=1, check_data=False)
    weighted = audit(model, X, sensitive_features=S, sample_weight=w, n_init=1,
                     check_data=False)
    cw = {name: float(report.fairness.loc[("race", "FairKM"), "CW"])
          for name, report in (("with", weighted), ("without", plain))}
    print(f"\nRace, the clusters' mean distance from the dataset's mix (CW) of a weighted "
          f"FairKM({k}) fit: audited with its weights {cw['with']:.4f}, without "
          f"{cw['without']:.4f}.")


def frequency(X, S, k):
    frame = pd.concat([pd.DataFrame(X, columns=FEATURES), S], axis=1)
    collapsed = frame.groupby(list(frame.columns), observed=True, sort=True).size()
    rows = collapsed.index.to_frame(index=False)
    counts = collapsed.to_numpy(dtype=float)
    print(f"\nFrequency weights: {len(frame):,} rows are {len(rows):,} distinct rows.")
    print("| estimator | people in another cluster (matched clusters) | cost, collapsed "
          "/ repeated |")
    print("|---|---|---|")
    expanded_X = np.repeat(rows[FEATURES].to_numpy(), counts.astype(int), axis=0)
    expanded_S = rows[ATTRIBUTES].loc[rows.index.repeat(counts.astype(int))].reset_index(
        drop=True)
    for name, make in estimators(k).items():
        if "max_cost" in name:
            continue
        few = make().fit(rows[FEATURES].to_numpy(), sensitive_features=rows[ATTRIBUTES],
                         sample_weight=counts)
        many = make().fit(expanded_X, sensitive_features=expanded_S)
        spread = np.repeat(few.labels_, counts.astype(int))
        # Clusters are matched by their centres (the labels' numbering is arbitrary).
        match = np.argmin(((many.cluster_centers_[:, None] - few.cluster_centers_[None]) ** 2)
                          .sum(axis=2), axis=1)
        other = int(np.count_nonzero(match[many.labels_] != spread))
        print(f"| {name} | {other:,} of {len(expanded_X):,} | "
              f"{few.inertia_ / many.inertia_:.4f} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args(argv)
    X, S, w = survey(args.data_home, "test")
    scaler = StandardScaler().fit(X)
    X = scaler.transform(X)
    X_new, S_new, _ = survey(args.data_home, "train")
    X_new, S_new = scaler.transform(X_new[:5000]), S_new.iloc[:5000]
    print(f"adult.test: {len(X):,} people, fnlwgt from {w.min():,.0f} to {w.max():,.0f}; "
          f"k={args.k}\n")
    scale_table(X, S, w, X_new, S_new, args.k)
    weighted_truth(X, S, w, args.k)
    frequency(X, S, args.k)


if __name__ == "__main__":
    main()
