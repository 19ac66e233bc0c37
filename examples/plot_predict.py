"""
New rows: predict with their sensitive features
===============================================

``predict(X)`` sends each new row to its nearest centre, as K-Means would, and
most of the fairness FairKM bought is lost; ``predict(X, sensitive_features=S)``
places each row where it raises the fitted objective least. FairKM warns when
a model fitted with sensitive features predicts without them.
"""

# %%
import warnings

from sklearn.model_selection import train_test_split

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import fairness_report

X, sensitive, _ = make_sensitive_blobs(3000, n_values=(2, 4), random_state=0)
X_train, X_new, S_train, S_new = train_test_split(X, sensitive, test_size=0.3, random_state=0)
model = FairKM(n_clusters=4, random_state=0).fit(X_train, sensitive_features=S_train)


def mean_ae(labels, S):
    return fairness_report(labels, sensitive_features=S).loc["mean", "AE"]


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nearest = model.predict(X_new)
print("warning:", caught[0].message)
scores = {
    "training rows (fit)": mean_ae(model.labels_, S_train),
    "new rows, predict(X, sensitive_features=S)": mean_ae(
        model.predict(X_new, sensitive_features=S_new), S_new),
    "new rows, predict(X)": mean_ae(nearest, S_new),
}
for case, score in scores.items():
    print(f"mean AE, {case}: {score:.3f}")

# %%
# The three side by side (lower is fairer): the training rows, and the new rows
# placed with and without their sensitive features.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 2.6))
ax.barh(list(scores)[::-1], list(scores.values())[::-1], color=["#c33", "#4a4", "#46a"])
ax.set_xlabel("mean AE (lower is fairer)")
fig.tight_layout()
