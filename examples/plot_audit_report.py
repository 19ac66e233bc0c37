"""
The audit report in a notebook
==============================

:func:`fairkm.report.audit` compares a clustering with S-blind K-Means (the
best of 10 starts): the price of fairness, a verdict per attribute and
measure, and each attribute's least fair cluster. The :class:`~fairkm.report.Audit`
renders itself where a notebook would show it, as here.

The data is scikit-learn's diabetes data: ``sex`` is coded 1.0 / 2.0, a float
column, which fairkm would take as numeric; passed as integers it is a
category, as it should be (the audit warns otherwise).
"""

# %%
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.report import audit

frame = load_diabetes(as_frame=True, scaled=False).frame
sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age"]))
model = FairKM(n_clusters=5, random_state=0).fit(X, sensitive_features=sensitive)

report = audit(model, X, sensitive_features=sensitive,
               title="FairKM on scikit-learn's diabetes data")
report

# %%
# The tables behind it are DataFrames: here, each attribute's least fair
# cluster in both clusterings.
report.worst[["cluster", "size", "share", "detail"]]

# %%
# The mix behind the verdicts: each cluster's share of ``sex == 1`` (a dot as
# large as the cluster) in both clusterings, against the dataset's share
# (dashed). FairKM's clusters keep near it; K-Means' spread out.
import matplotlib.pyplot as plt
import numpy as np

is_one = sensitive["sex"].eq(1).to_numpy()
fig, ax = plt.subplots(figsize=(6, 3))
for x, name in enumerate([report.main, report.reference]):
    labels = report.labels[name]
    clusters = np.unique(labels)
    shares = [is_one[labels == c].mean() for c in clusters]
    sizes = [(labels == c).sum() for c in clusters]
    ax.scatter(np.full(len(clusters), x), shares, s=sizes, alpha=0.6)
ax.axhline(is_one.mean(), color="k", linestyle="--", linewidth=1, label="dataset")
ax.set_xticks([0, 1], [report.main, report.reference])
ax.set(xlim=(-0.6, 1.6), ylim=(0, 1), ylabel="cluster's share of sex 1")
ax.legend(loc="upper right")
fig.tight_layout()

# %%
# The same page, self-contained, for a colleague: ``report.to_html("audit.html")``.
# The text summary is what ``fairkm fit`` prints:
print(report.to_text())
