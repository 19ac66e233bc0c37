"""Never worse, never silent: FairKM() against FairKM(max_deviation=d) on held-out data.

Two small sets the defaults were not tuned on: scikit-learn's diabetes (442
rows; sex categorical, age numeric, the other eight columns as features) and
a 2,000-row sample of Adult's test file (sex and race categorical, age
numeric; education-num, hours-per-week and capital-gain standardised). For
k = 3, 4, 5 and each bound of ``--deltas``: which step of the repair the
bounded fit took (``how``; the last resort is "reassigned" before issue 40,
"least loss" after), the
(attribute, measure) pairs whose mean or worst cluster ended above
``FairKM()``'s (recounted in plain NumPy, ``tests/_never_worse_reference``),
whether a :class:`fairkm.exceptions.FairnessLossWarning` was raised, and the
cost and time of the bounded fit as ratios to ``FairKM()``'s. Run with any
``fairkm`` on the path: the repair's step is read by wrapping ``constrain``.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes

import fairkm.cluster._fairkm as fairkm_module
from fairkm import FairKM
from fairkm.datasets import fetch_adult

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests._never_worse_reference import summaries, worse  # noqa: E402


def diabetes():
    data = load_diabetes(as_frame=True).frame
    sensitive = {"sex": (data["sex"] > 0).astype(int).to_numpy(), "age": data["age"].to_numpy()}
    X = data.drop(columns=["sex", "age", "target"]).to_numpy()
    return "diabetes", X, sensitive


def adult(rows=2000, seed=0):
    data = fetch_adult(data_home="/work/shared/data", subset="test", preprocess=None,
                       download_if_missing=False).data
    data = data.iloc[np.random.RandomState(seed).choice(len(data), rows, replace=False)]
    X = data[["education-num", "hours-per-week", "capital-gain"]].to_numpy(dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    sensitive = {"sex": data["sex"].astype(str).to_numpy(),
                 "race": data["race"].astype(str).to_numpy(),
                 "age": data["age"].to_numpy(dtype=float)}
    return "adult-test-2000", X, sensitive


def inertia(X, labels):
    return sum(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum()
               for c in np.unique(labels))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", default="0.2,0.1,0.05,0.02,0")
    parser.add_argument("--ks", default="3,4,5")
    args = parser.parse_args()
    seen = []
    original = fairkm_module.constrain

    def recording(*a, **kw):
        out = original(*a, **kw)
        seen.append(out)
        return out

    fairkm_module.constrain = recording
    numeric = ["age"]
    totals = {"fits": 0, "fallbacks": 0, "worse": 0, "warned": 0, "unwarned_worse": 0}
    cost, times = [], []
    sets = (diabetes(), adult())
    # Compiled once before any fit is timed.
    FairKM(3, random_state=0, numeric_sensitive=numeric, max_deviation=0.01).fit(
        sets[0][1], sensitive_features=pd.DataFrame(sets[0][2]))
    for name, X, sensitive in sets:
        S = pd.DataFrame(sensitive)
        for k in map(int, args.ks.split(",")):
            start = time.process_time()
            free = FairKM(k, random_state=0, numeric_sensitive=numeric).fit(
                X, sensitive_features=S)
            t_free = time.process_time() - start
            before = summaries(free.labels_, sensitive, numeric)
            for d in map(float, args.deltas.split(",")):
                seen.clear()
                start = time.process_time()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    bound = FairKM(k, random_state=0, numeric_sensitive=numeric,
                                   max_deviation=d).fit(X, sensitive_features=S)
                t_bound = time.process_time() - start
                warned = any(type(w.message).__name__ == "FairnessLossWarning" for w in caught)
                lost = worse(before, summaries(bound.labels_, sensitive, numeric))
                how = seen[0].how if seen else "?"
                ratio = inertia(X, bound.labels_) / inertia(X, free.labels_)
                totals["fits"] += 1
                totals["fallbacks"] += how in ("reassigned", "least loss")
                totals["worse"] += bool(lost)
                totals["warned"] += warned
                totals["unwarned_worse"] += bool(lost) and not warned
                cost.append(ratio)
                times.append(t_bound / t_free)
                print(f"{name:16s} k={k} d={d:<5g} how={how:10s} moved={bound.n_moved_by_bound_:5d}"
                      f" cost x{ratio:.4f} time x{t_bound / t_free:.2f} warned={warned} "
                      f"worse={['/'.join(p) for p in lost]}", flush=True)
    print(totals)
    print(f"cost ratio median {np.median(cost):.4f} max {np.max(cost):.4f}; "
          f"time ratio median {np.median(times):.2f} max {np.max(times):.2f}")


if __name__ == "__main__":
    main()
