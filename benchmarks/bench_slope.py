"""The slope of FairKM's knobs on the panel: every doubling of a weight or a budget, its cost.

A knob has a slope when each step of it buys a step of fairness at a step of
cost: no doubling that leaps (its cost increase many times the one before) and
none that falls (a larger weight or budget costing less). For each dataset of
``bench_weights.py``'s panel (up to 100,000 rows: the 1,000,000-row blobs take
minutes a fit), with the default ``FairKM``:

* ``relative_weight`` 0.25, 0.5, ..., 64: the cost increase of each (FairKM's
  K-Means term over its own S-blind clustering's, minus 1), the largest ratio
  of a doubling's cost increase to the one before, and any that fell;
* ``max_cost`` 0.01, 0.02, ..., 0.32: the same, plus whether each budget held,
  and how many warned that they bought nothing or spent under half of
  themselves. ``refit claimed / refitted``: how many
  budgets' ``refit_params_`` name a ``relative_weight`` (the others name no
  weight: a mixture, a fit that would repair an attribute, or a walk whose
  verdicts a weight would not retrace), and how many of those a fresh fit at
  it gives bit for bit (a claim that failed would be a bug).

Run: ``python benchmarks/bench_slope.py [--data-home ../shared/data]
[--markdown docs/fairness-weight-slope.md] [--quick]``.
"""

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from bench_weights import markdown, panel
from sklearn.base import clone

from fairkm import FairKM

WEIGHTS = tuple(2.0 ** np.arange(-2, 7))
BUDGETS = tuple(0.01 * 2.0 ** np.arange(6))
LARGEST = 100_000


def fit(X, sensitive, numeric, k, **params):
    """Fit the default FairKM with ``params``; return the model and its warnings' text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = FairKM(k, numeric_sensitive=numeric, random_state=0, **params).fit(
            X, sensitive_features=sensitive)
    return model, [str(w.message) for w in caught]


def steps(costs):
    """The largest ratio of a cost increase to the one before, and how many fell."""
    pairs = list(itertools.pairwise(costs))
    ratios = [b / a for a, b in pairs if a > 0]
    return (max(ratios) if ratios else float("nan")), sum(b < a for a, b in pairs)


def measure(name, X, sensitive, numeric, k):
    start = time.perf_counter()
    weights = [fit(X, sensitive, numeric, k, relative_weight=w)[0].cost_increase_
               for w in WEIGHTS]
    budgets, held, claimed, refitted, unspent = [], 0, 0, 0, 0
    for budget in BUDGETS:
        model, said = fit(X, sensitive, numeric, k, max_cost=budget)
        budgets.append(model.cost_increase_)
        held += model.cost_increase_ <= budget
        unspent += any(m.startswith(f"max_cost={budget:g} ") for m in said)
        if model.refit_params_:
            claimed += 1
            again = clone(model).set_params(**model.refit_params_).fit(
                X, sensitive_features=sensitive)
            refitted += bool(np.array_equal(again.labels_, model.labels_))
    weight_step, weight_falls = steps(weights)
    budget_step, budget_falls = steps(budgets)
    row = {
        "dataset": name,
        "relative_weight 0.25 ... 64: cost %": ", ".join(f"{100 * c:+.1f}" for c in weights),
        "largest step": weight_step, "falls": weight_falls,
        "max_cost 0.01 ... 0.32: cost %": ", ".join(f"{100 * c:+.1f}" for c in budgets),
        "largest budget step": budget_step, "budget falls": budget_falls,
        "held": f"{held}/{len(BUDGETS)}", "refit claimed / refitted": f"{claimed} / {refitted}",
        "warned (bought nothing / under half)": unspent,
    }
    print(f"{name}: {time.perf_counter() - start:.0f} s", row, flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default="../shared/data")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--quick", action="store_true", help="small blobs only")
    args = parser.parse_args()
    rows = [measure(name, X, sensitive, numeric, k)
            for name, X, sensitive, numeric, k in panel(args.data_home, args.quick)
            if len(X) <= LARGEST]
    text = markdown(pd.DataFrame(rows), {"largest step": "{:.2f}",
                                         "largest budget step": "{:.2f}"})
    print()
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
