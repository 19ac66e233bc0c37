import matplotlib
import matplotlib.pyplot

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from fairkm import FairKM  # noqa: E402
from fairkm.datasets import make_sensitive_blobs  # noqa: E402
from fairkm.metrics import fairness_report  # noqa: E402
from fairkm.tradeoff import fairness_tradeoff, plot_tradeoff  # noqa: E402


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
    for column in ["objective", "inertia", "fairness", "n_iter", "CO", "SH", "AE", "AW", "ME",
                   "MW", "balance", "KL"]:
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
    with pytest.raises(TypeError, match="fairness_weights must hold numbers or 'auto', got 'x'"):
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
