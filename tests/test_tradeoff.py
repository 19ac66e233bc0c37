import matplotlib
import matplotlib.pyplot

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import fairness_report
from fairkm.tradeoff import fairness_tradeoff, plot_tradeoff


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        600, n_values=(2, 4), numeric=1, cluster_std=2.5, random_state=0
    )
    return X, sensitive


def test_tradeoff_table(blobs):
    X, sensitive = blobs
    weights = [0.0, 1e5, 1e7]
    table = fairness_tradeoff(FairKM(4, random_state=0), X, sensitive, weights)
    assert list(table["fairness_weight"]) == weights
    for column in ["objective", "inertia", "fairness", "n_iter", "CO", "SH", "AE", "AW", "CW",
                   "ME", "MW", "balance", "KL"]:
        assert column in table.columns
    assert_allclose(table["objective"], table["inertia"] + table["fairness_weight"]
                    * table["fairness"])
    # Fairness bought with quality: the weighted term falls and the K-Means term rises.
    assert table["fairness"].iloc[-1] < 0.2 * table["fairness"].iloc[0]
    assert table["AE"].iloc[-1] < 0.5 * table["AE"].iloc[0]
    assert table["inertia"].iloc[-1] > table["inertia"].iloc[0]


def test_tradeoff_rows_match_direct_fits(blobs):
    X, sensitive = blobs
    template = FairKM(4, random_state=0)
    table = fairness_tradeoff(template, X, sensitive, [1e5, 1e6], warm_start=False,
                              reference_labels=np.arange(len(X)) % 4)
    direct = FairKM(4, fairness_weight=1e6, random_state=0).fit(X, sensitive_features=sensitive)
    assert_allclose(table["objective"].iloc[1], direct.objective_)
    report = fairness_report(direct.labels_, sensitive_features=sensitive)
    assert_allclose(table["AE"].iloc[1], report.loc["mean", "AE"])
    assert {"DevC", "DevO"} <= set(table.columns)


def test_weighted_tradeoff_rows_are_weighted_fits_and_ignore_the_weights_scale(blobs):
    X, sensitive = blobs
    weights = 1.0 + np.arange(len(X)) % 3
    template = FairKM(4, random_state=0)
    table = fairness_tradeoff(template, X, sensitive, relative_weights=[0.5, 2.0],
                              sample_weight=weights)
    direct = FairKM(4, relative_weight=2.0, random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=weights)
    assert_allclose(table["objective"].iloc[1], direct.objective_)
    report = fairness_report(direct.labels_, sensitive_features=sensitive, sample_weight=weights)
    assert_allclose(table["CW"].iloc[1], report.loc["mean", "CW"])
    # Weights normalised to sum 1: the same table but for the sums, which scale.
    scaled = fairness_tradeoff(template, X, sensitive, relative_weights=[0.5, 2.0],
                               sample_weight=weights / weights.sum())
    sums = ["objective", "inertia", "fairness_weight", "CO"]
    assert_allclose(scaled[sums].to_numpy() * weights.sum(), table[sums].to_numpy(), rtol=1e-9)
    rest = [c for c in table.columns if c not in sums and c != "mark"]
    assert_allclose(scaled[rest].to_numpy(dtype=float), table[rest].to_numpy(dtype=float),
                    rtol=1e-9)


def test_weighted_co_is_the_weighted_sum_of_squared_distances(blobs):
    # CO in the weights' unit: sum_i w_i ||x_i - mu_c||^2 with weighted means, recounted
    # here; as KMeans' inertia_ with sample_weight, so as the fitted model's inertia_.
    X, sensitive = blobs
    weights = 0.25 + 40.0 * (np.arange(len(X)) % 3)
    table = fairness_tradeoff(FairKM(4, random_state=0), X, sensitive, relative_weights=[1.0],
                              sample_weight=weights)
    labels = FairKM(4, relative_weight=1.0, random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=weights).labels_
    recount = 0.0
    for c in np.unique(labels):
        rows, w = X[labels == c], weights[labels == c]
        mean = (w[:, None] * rows).sum(axis=0) / w.sum()
        recount += float(np.sum(w * ((rows - mean) ** 2).sum(axis=1)))
    assert_allclose(table["CO"].iloc[0], recount, rtol=1e-10)
    assert_allclose(table["CO"].iloc[0], table["inertia"].iloc[0], rtol=1e-9)


def test_warm_start_starts_from_previous_centres(blobs, monkeypatch):
    X, sensitive = blobs
    inits = []
    original = FairKM.fit

    def recording(self, *args, **kwargs):
        inits.append(self.init if isinstance(self.init, str) else np.array(self.init))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(FairKM, "fit", recording)
    fairness_tradeoff(FairKM(4, random_state=0), X, sensitive, [1e3, 1e4])
    assert inits[0] == "k-means++"
    assert inits[1].shape == (4, 2)


def test_tradeoff_errors(blobs):
    X, sensitive = blobs
    with pytest.raises(TypeError, match="estimator must be a FairKM"):
        fairness_tradeoff(object(), X, sensitive, [1.0])
    with pytest.raises(ValueError, match="fairness_weights is empty"):
        fairness_tradeoff(FairKM(4), X, sensitive, [])
    with pytest.raises(TypeError, match="fairness_weights must hold numbers or 'paper', got 'x'"):
        fairness_tradeoff(FairKM(4), X, sensitive, ["x"])


def test_plot_tradeoff(blobs, tmp_path):
    X, sensitive = blobs
    table = fairness_tradeoff(FairKM(4, random_state=0), X, sensitive, [0.0, 1e4, 1e6])
    fig = plot_tradeoff(table)
    path = tmp_path / "tradeoff.png"
    fig.savefig(path)
    matplotlib.pyplot.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.axes[0].get_xscale() == "symlog"
    with pytest.raises(ValueError, match="no column"):
        plot_tradeoff(table, quality=("nope",))


def test_relative_tradeoff_shares_one_s_blind_reference(blobs):
    X, sensitive = blobs
    table = fairness_tradeoff(FairKM(4, random_state=0), X, sensitive,
                              relative_weights=[0.0, 0.5, 1.0, 2.0], max_cost=0.05)
    grid = table[table["mark"] != "max_cost=0.05"]
    assert grid["relative_weight"].tolist() == [0.0, 0.5, 1.0, 2.0]
    # Every row's cost is measured against the same S-blind clustering.
    blind = table["inertia"] / (1 + table["cost_increase"])
    assert_allclose(blind, blind.iloc[0], rtol=1e-12)
    assert table["cost_increase"].iloc[0] == 0.0
    assert table["unfairness_ratio"].iloc[0] == pytest.approx(1.0)
    assert np.all(np.diff(grid["unfairness_ratio"]) < 0)
    assert table["mark"].tolist().count("default") == 1
    (budget,) = table.index[table["mark"] == "max_cost=0.05"]
    assert table.loc[budget, "cost_increase"] <= 0.05
    assert np.all(np.diff(table["relative_weight"]) >= 0)
    # Each attribute's mean and worst cluster, as fairness_report gives them for that fit.
    direct = FairKM(4, relative_weight=2.0, random_state=0).fit(X, sensitive_features=sensitive)
    report = fairness_report(direct.labels_, sensitive_features=sensitive)
    for name in sensitive.columns:
        for measure in ("CW", "MW"):
            assert_allclose(table[f"{measure}[{name}]"].iloc[-1], report.loc[name, measure])


def test_relative_tradeoff_errors(blobs):
    X, sensitive = blobs
    with pytest.raises(ValueError, match="either fairness_weights or relative_weights"):
        fairness_tradeoff(FairKM(4), X, sensitive, [1.0], relative_weights=[1.0])
    with pytest.raises(ValueError, match="either fairness_weights or relative_weights"):
        fairness_tradeoff(FairKM(4), X, sensitive)
    with pytest.raises(TypeError, match="relative_weights must hold numbers, got 'paper'"):
        fairness_tradeoff(FairKM(4), X, sensitive, relative_weights=["paper"])
    with pytest.raises(ValueError, match="max_cost goes with relative_weights"):
        fairness_tradeoff(FairKM(4), X, sensitive, [1.0], max_cost=0.05)


def test_plot_marks_the_default_and_the_budget(blobs):
    X, sensitive = blobs
    table = fairness_tradeoff(FairKM(4, n_init=1, random_state=0), X, sensitive,
                              relative_weights=[0.0, 1.0, 4.0], max_cost=0.05)
    fig = plot_tradeoff(table)
    texts = [text.get_text() for text in fig.axes[0].texts]
    matplotlib.pyplot.close(fig)
    # One label per marked weight: a budget that chose the default weight shares its label.
    budget = table.loc[table["mark"] == "max_cost=0.05", "relative_weight"].item()
    if budget == 1.0:
        assert texts == ["default, max_cost=0.05"]
    else:
        assert sorted(texts) == ["default", "max_cost=0.05"]
    assert fig.axes[0].get_xlabel().startswith("relative fairness weight")


def test_marks_close_together_are_labelled_on_either_side_of_their_lines():
    """Labels of nearby weights must not overprint: the second goes left of its line."""
    table = pd.DataFrame({
        "relative_weight": [0.5, 1.0, 1.05, 4.0], "CO": [1.0, 1.1, 1.12, 1.3],
        "CW": [0.3, 0.2, 0.19, 0.1], "MW": [0.5, 0.4, 0.39, 0.2],
        "mark": ["", "default", "max_cost=0.05", ""],
    })
    fig = plot_tradeoff(table)
    fig.canvas.draw()
    texts = {t.get_text(): t for t in fig.axes[0].texts}
    assert set(texts) == {"default", "max_cost=0.05"}
    boxes = {name: t.get_window_extent() for name, t in texts.items()}
    matplotlib.pyplot.close(fig)
    assert not boxes["default"].overlaps(boxes["max_cost=0.05"])
