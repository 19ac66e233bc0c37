"""
FairKM against S-blind K-Means
==============================

Cluster synthetic people whose sensitive attributes follow the blobs, so that
fairness-blind ("S-blind") K-Means makes unfair clusters, then compare FairKM
with K-Means (the best of 10 starts) on the same features: the price on the
K-Means objective, and each attribute's fairness.
"""

# %%
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.cluster import KMeans

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import fairness_report

X, sensitive, _ = make_sensitive_blobs(2000, n_values=(2, 5), numeric=1, random_state=0)
sensitive.columns = ["sex", "region", "age"]
fair = FairKM(n_clusters=4, random_state=0).fit(X, sensitive_features=sensitive)
blind = KMeans(n_clusters=4, n_init=10, random_state=0).fit(X)

print(f"K-Means objective (lower is tighter): FairKM {fair.inertia_:.0f}, "
      f"S-blind K-Means {blind.inertia_:.0f} ({fair.inertia_ / blind.inertia_ - 1:+.1%})")

# %%
# Each cluster's distance from the dataset's mix of an attribute (total
# variation for a categorical one; lower is fairer): CW is its mean over the
# clusters, each counted once, MW the worst cluster.
pd.concat({
    name: fairness_report(labels, sensitive_features=sensitive)[["CW", "MW"]]
    for name, labels in (("FairKM", fair.labels_), ("S-blind K-Means", blind.labels_))
}, axis=1)

# %%
# Each cluster's share of women, against the dataset's (dashed line).
fig, ax = plt.subplots(figsize=(6, 3))
share = sensitive["sex"].eq(sensitive["sex"].iloc[0])
for offset, (name, labels) in zip((-0.2, 0.2), (("FairKM", fair.labels_),
                                               ("S-blind K-Means", blind.labels_)), strict=True):
    by_cluster = share.groupby(labels).mean()
    ax.bar(by_cluster.index + offset, by_cluster.to_numpy(), width=0.4, label=name)
ax.axhline(share.mean(), color="k", linestyle="--", linewidth=1)
ax.set_xlabel("cluster")
ax.set_ylabel(f"share of sex = {sensitive['sex'].iloc[0]}")
ax.legend()
fig.tight_layout()
