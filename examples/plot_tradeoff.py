"""
The price of fairness, weight by weight
=======================================

:func:`fairkm.tradeoff.fairness_tradeoff` fits FairKM at several relative
weights, each from the same S-blind clustering, and a budget
(``max_cost=0.05``: the fairest clustering at most 5% costlier);
:func:`~fairkm.tradeoff.plot_tradeoff` draws the cost against the clusters'
mean (CW) and worst (MW) distance from the dataset's mix.
"""

# %%
import matplotlib.pyplot as plt

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.tradeoff import fairness_tradeoff, plot_tradeoff

X, sensitive, _ = make_sensitive_blobs(1500, n_values=(2, 4), random_state=0)
table = fairness_tradeoff(FairKM(n_clusters=4, random_state=0), X, sensitive,
                          relative_weights=[0, 0.25, 1, 4], max_cost=0.05, random_state=0)
table[["relative_weight", "mark", "cost_increase", "unfairness_ratio", "CW", "MW"]]

# %%
fig, ax = plt.subplots(figsize=(6, 4))
plot_tradeoff(table, axes=ax)
fig.tight_layout()
