"""fairkm.report: the audit's numbers, verdicts and words, its HTML, and rendering in Chromium."""

import base64
import io
import re
import subprocess
import warnings

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans

from fairkm import FairKM
from fairkm.cli import main
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import DataWarning
from fairkm.metrics import fairness_report
from fairkm.report import Audit, audit, drop_missing, format_number, missing_values
from fairkm.report._charts import segments

IMAGE_URI = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
BLIND = "S-blind K-Means (best of 10)"


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(300, n_features=3, centers=3, n_values=(2, 12),
                                           numeric=1, random_state=0)
    sensitive.columns = ["sex <b>", "country", "age"]
    return X, sensitive


@pytest.fixture(scope="module")
def random_audit(blobs):
    X, sensitive = blobs
    rng = np.random.default_rng(0)
    profile = pd.DataFrame({"x0": X[:, 0], "colour": rng.choice(["red", "blue"], 300),
                            "size": rng.choice(["S", "M"], 300)})
    return audit(rng.integers(0, 3, 300), X, sensitive_features=sensitive,
                 numeric_sensitive=["age"], name="FairKM", reference=rng.integers(0, 3, 300),
                 profile=profile)


@pytest.fixture(scope="module")
def fair_data():
    X, sensitive, _ = make_sensitive_blobs(600, n_values=(2, 3), numeric=1, random_state=0)
    return X, sensitive


@pytest.fixture(scope="module")
def fair_audit(fair_data):
    X, sensitive = fair_data
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive)
    return model, audit(model, X, sensitive_features=sensitive)


# --------------------------------------------------------------------------- the numbers


def test_audit_tables(random_audit):
    audit_ = random_audit
    assert isinstance(audit_, Audit)
    assert (audit_.main, audit_.reference) == ("FairKM", "reference")
    assert list(audit_.quality.columns) == ["CO", "SH", "DevC", "DevO"]
    assert np.isnan(audit_.quality.loc["reference", "DevC"])
    assert list(audit_.fairness.index.get_level_values(0).unique()) == [
        "sex <b>", "country", "age", "mean"]
    assert np.isnan(audit_.fairness.loc[("age", "FairKM"), "balance"])
    table = audit_.clusters["FairKM"]
    assert table["size"].sum() == 300
    assert table["colour"].str.match(r"(red|blue) \(\d+%\)").all()
    assert table["size (data)"].str.match(r"(S|M) \(\d+%\)").all()


def test_reference_is_kmeans_best_of_several_starts(fair_data, fair_audit):
    """The price of fairness is measured against the best of 10 starts, and named so."""
    X, _ = fair_data
    _, audit_ = fair_audit
    assert audit_.reference == BLIND
    best = KMeans(3, n_init=10, random_state=0).fit(X)
    np.testing.assert_allclose(audit_.quality.loc[BLIND, "CO"], best.inertia_, rtol=1e-9)
    facts = dict(audit_.facts)
    assert "lowest K-Means objective of 10 k-means++ starts" in facts["reference"]
    kind, sentence = audit_.headline()[0]
    assert kind == "cost" and sentence.startswith("Price of fairness")
    assert BLIND in sentence


def test_lower_kmeans_cost_is_said_plainly(fair_data, fair_audit):
    """A clustering cheaper than the reference: both are local optima, not fairness for free."""
    X, sensitive = fair_data
    model, _ = fair_audit
    worse = np.arange(600) % 3  # a K-Means clustering no one would keep
    audit_ = audit(model, X, sensitive_features=sensitive, reference=worse)
    cost = dict(audit_.headline())["cost"]
    assert "LOWER than" in cost and "local optima" in cost and "not fairness for free" in cost
    # A FairKM model knows its own S-blind start: the price against it is stated too.
    assert f"fairness cost {model.inertia_ / model.blind_clustering_.inertia - 1:+.1%}" in cost
    assert "LOWER" in audit_.to_html()


def test_worst_cluster_sets_me(random_audit):
    worst = random_audit.worst
    for attribute in ["sex <b>", "country", "age"]:
        for name in ["FairKM", "reference"]:
            row = worst.loc[(attribute, name)]
            np.testing.assert_allclose(
                row["distance"], random_audit.fairness.loc[(attribute, name), "ME"], rtol=1e-9)
            labels = random_audit.labels[name]
            assert row["size"] == np.sum(labels == row["cluster"])
            assert row["share"] == pytest.approx(row["size"] / 300)
    row = worst.loc[("sex <b>", "FairKM")]
    column = random_audit.sensitive["sex <b>"].astype(str)
    in_cluster = column[random_audit.labels["FairKM"] == row["cluster"]]
    assert row["cluster share"] == pytest.approx((in_cluster == row["value"]).mean())
    assert row["dataset share"] == pytest.approx((column == row["value"]).mean())
    assert f"{row['value']}: {row['cluster share']:.0%} of the cluster" in row["detail"]
    assert "standard deviations" in worst.loc[("age", "FairKM"), "detail"]


def _worsened(n=600, seed=0):
    """Two groups of rows, each mixing sex evenly; the clustering splits one by sex."""
    rng = np.random.default_rng(seed)
    blob = np.repeat([0, 1], n // 2)
    X = np.c_[blob * 10.0 + rng.normal(size=n), rng.normal(size=n)]
    sex = np.where(rng.random(n) < 0.5, "F", "M")
    race = np.where(rng.random(n) < 0.2 + 0.6 * blob, "a", "b")
    labels = blob.copy()
    # Cluster 2: a small, all-female slice of blob 0: sex gets less fair, race does not.
    labels[(blob == 0) & (sex == "F") & (np.arange(n) < 60)] = 2
    reference = np.where(blob == 0, np.arange(n) % 2 + 0, 2)
    frame = pd.DataFrame({"sex": sex, "race": race})
    return X, frame, labels, reference


def test_worsened_attribute_is_flagged_in_the_headline():
    X, frame, labels, reference = _worsened()
    audit_ = audit(labels, X, sensitive_features=frame, reference=reference, name="segments")
    verdicts = audit_.verdicts
    assert verdicts.loc[("sex", "ME"), "verdict"] == "less fair"
    lines = audit_.headline()
    alerts = [text for kind, text in lines if kind == "alert"]
    assert len(alerts) == 1 and "sex: " in alerts[0] and "ME +" in alerts[0]
    # race's worst cluster is no worse (its mean over clusters moves by the small one's noise).
    assert "race: ME" not in alerts[0] and "race: AE" not in alerts[0]
    # The worst cluster is the small one; the advice says why and what to do.
    row = audit_.worst.loc[("sex", "segments")]
    assert row["cluster"] == 2 and row["small"]
    # Labels from another tool: the advice names the attribute and points to FairKM.
    advice = dict(lines)["advice"]
    assert advice.startswith("What to do about sex")
    for words in ("given labels, not the model", "FairKM(n_clusters=k)", "max_deviation"):
        assert words in advice
    text = audit_.to_text()
    assert "WARNING: Less fair than reference" in text
    assert "sex: cluster 2 (" in text and "small" in text
    page = audit_.to_html()
    assert '<p class="alert">' in page and 'class="less-fair"' in page
    assert '<tr class="small">' in page


def test_no_worsening_says_so(fair_audit):
    _, audit_ = fair_audit
    assert audit_.verdicts.loc[("mean", "AE"), "verdict"] == "fairer"
    kinds = [kind for kind, _ in audit_.headline()]
    assert "alert" not in kinds
    assert "No attribute's clusters got further from the dataset's mix on any measure" in (
        audit_.to_text())


def test_fairness_only_without_features(blobs):
    _, sensitive = blobs
    labels = np.arange(300) % 4
    audit_ = audit(labels, sensitive_features=sensitive, numeric_sensitive=["age"])
    assert audit_.reference is None and audit_.quality is None and audit_.verdicts is None
    assert [kind for kind, _ in audit_.headline()][0] == "summary"
    assert 'id="verdicts"' not in audit_.to_html()


def test_sensitive_features_read_as_fairkm_and_fairness_report_read_them(blobs):
    # One reader: a negative position and a dict of columns mean what they mean
    # to FairKM and fairness_report (they used to raise here).
    _, sensitive = blobs
    labels = np.arange(300) % 4
    named = audit(labels, sensitive_features=sensitive, numeric_sensitive=["age"])
    by_position = audit(labels, sensitive_features=sensitive, numeric_sensitive=[-1])
    as_dict = audit(labels, sensitive_features={c: sensitive[c] for c in sensitive.columns},
                    numeric_sensitive=["age"])
    reference = fairness_report(labels, sensitive_features=sensitive, numeric_sensitive=["age"])
    for other in (by_position, as_dict):
        pd.testing.assert_frame_equal(other.fairness, named.fairness)
    row = named.fairness.loc[("age", "clustering")]
    assert row["AW"] == reference.loc["age", "AW"]
    assert np.isnan(row["KL"])  # read as numeric, as asked: KL is for categorical attributes


# --------------------------------------------------------------------------- data checks


def test_two_valued_float_sensitive_is_warned_about():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    sex = pd.Series(np.where(rng.random(200) < 0.5, 1.0, 2.0), name="sex")  # diabetes' coding
    with pytest.warns(DataWarning, match=r"'sex' is treated as numeric but has only 2 values"):
        audit_ = audit(np.arange(200) % 2, X, sensitive_features=sex)
    assert np.isnan(audit_.fairness.loc[("sex", "clustering"), "balance"])
    assert audit_.notes and "numeric_sensitive" in audit_.notes[0]
    # As categories, no warning and balance applies.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        audit_ = audit(np.arange(200) % 2, X, sensitive_features=sex.astype(int))
    assert not np.isnan(audit_.fairness.loc[("sex", "clustering"), "balance"])


def test_many_valued_numbers_left_categorical_are_warned_about():
    rng = np.random.default_rng(0)
    age = pd.Series(rng.integers(18, 80, 300), name="age")
    with pytest.warns(DataWarning, match=r"'age' holds numbers with \d+ distinct values"):
        audit(np.arange(300) % 3, sensitive_features=age)


def test_id_like_feature_columns_are_warned_about():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"customer_id": rng.permutation(100) + 7, "income": rng.normal(size=100),
                      "row": np.arange(100)})
    with pytest.warns(DataWarning) as caught:
        audit(np.arange(100) % 2, X, sensitive_features=np.arange(100) % 2)
    messages = [str(w.message) for w in caught]
    assert any("'customer_id' is named like an identifier" in m for m in messages)
    assert any("'row' holds a different value on each of its 100 rows" in m for m in messages)
    assert not any("'income'" in m for m in messages)


def test_missing_values_are_all_named_at_once():
    frame = pd.DataFrame({"sex": ["F", None, "M", "F"], "race": ["a", "b", None, None]})
    X = np.array([[0.0], [np.nan], [1.0], [2.0]])
    with pytest.raises(ValueError) as info:
        audit([0, 0, 1, 1], X, sensitive_features=frame, reference=None)
    message = str(info.value)
    assert "'sex' (1, the first on row 2)" in message
    assert "'race' (2, the first on row 3)" in message
    assert "X (1 rows" in message and "drop_missing" in message


def test_drop_missing_counts_what_it_dropped():
    frame = pd.DataFrame({"age": [30, None, 50, 40], "sex": ["F", "M", None, "M"],
                          "note": [None, "x", "y", None]})
    kept, dropped = drop_missing(frame, ["age", "sex"])
    assert list(kept.index) == [0, 3] and list(dropped.index) == [1, 2]
    table = missing_values(frame)
    assert table.to_dict("index") == {"age": {"missing": 1, "first_row": 2},
                                      "sex": {"missing": 1, "first_row": 3},
                                      "note": {"missing": 2, "first_row": 1}}
    assert missing_values(kept, ["age", "sex"]).empty


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="reference must be 'kmeans'"):
        audit([0, 1], sensitive_features=["a", "b"], reference="best")
    with pytest.raises(ValueError, match="numeric_sensitive names 'height'"):
        audit([0, 1], sensitive_features=pd.DataFrame({"s": ["a", "b"]}),
              numeric_sensitive=["height"])
    with pytest.raises(ValueError, match="sensitive_features has 3 rows, but labels has 2"):
        audit([0, 1], sensitive_features=["a", "b", "c"])


# --------------------------------------------------------------------------- HTML


def test_report_is_self_contained(random_audit, tmp_path):
    page = random_audit.to_html(tmp_path / "audit.html")
    assert (tmp_path / "audit.html").read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no scripts, stylesheets, or remote addresses.
    for forbidden in ("<script", "<link", "http://", "https://", "src=\"/", "url("):
        assert forbidden not in page
    assert "sex &lt;b&gt;" in page and "sex <b>" not in page
    for table_id in ("quality", "fairness-mean", "fairness", "sizes-0", "sizes-1", "clusters-0",
                     "clusters-1", "verdicts", "worst"):
        assert f'id="{table_id}"' in page
    images = IMAGE_URI.findall(page)
    assert len(images) == 3  # one chart per sensitive attribute
    for data in images:
        image = matplotlib.image.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert image.shape[0] > 200 and image.shape[1] > 500
        # A chart, not a blank canvas.
        assert image[..., :3].std() > 0.05


def test_notebook_html_is_a_scoped_fragment(random_audit):
    fragment = random_audit._repr_html_()
    for tag in ("<!DOCTYPE", "<html", "<head", "<body", "<script", "<h1>"):
        assert tag not in fragment
    assert fragment.startswith("<style>") and '<div class="fairkm-report">' in fragment
    # Every style rule is scoped to the report, so the notebook around it keeps its look.
    css = fragment[len("<style>"):fragment.index("</style>")]
    selectors = [rule.split("{")[0] for rule in css.split("}") if "{" in rule]
    assert selectors and all(
        all(part.strip().startswith(".fairkm-report") for part in sel.split(","))
        for sel in selectors
    )
    assert len(IMAGE_URI.findall(fragment)) == 3
    assert repr(random_audit).startswith("<Audit of 'FairKM' against 'reference'")


def test_notebook_display_uses_the_html():
    formatters = pytest.importorskip("IPython.core.formatters",
                                     reason="IPython is not installed")
    rng = np.random.default_rng(1)
    audit_ = audit(rng.integers(0, 2, 50), sensitive_features=rng.choice(["a", "b"], 50))
    data, _ = formatters.DisplayFormatter().format(audit_)
    assert '<div class="fairkm-report">' in data["text/html"]


def test_many_values_pooled_as_other():
    column = pd.Series([f"v{i:02d}" for i in range(15) for _ in range(i + 1)])
    segment, order = segments(column)
    assert len(order) == 10 and order[-1] == "other"
    assert order[0] == "v14"
    assert (segment == 9).sum() == sum(range(1, 7))


def test_segments_group_by_the_readers_codes():
    """A value that prints as the pooled tail's name stays a segment of its own."""
    column = pd.Series(["other"] * 20 + [f"v{i:02d}" for i in range(12) for _ in range(i + 1)])
    segment, order = segments(column)
    assert order[0] == "other" and order[-1] == "other"
    assert (segment == 0).sum() == 20 and (segment == 9).sum() == sum(range(1, 5))


def test_format_number():
    assert format_number(99999.4) == "99,999"
    assert format_number(0.012345) == "0.01235"
    assert format_number(1.5e13) == "1.5e+13"


def test_same_numbers_as_the_metrics(random_audit):
    ref = fairness_report(random_audit.labels["FairKM"],
                          sensitive_features=random_audit.sensitive, numeric_sensitive=["age"])
    pd.testing.assert_frame_equal(
        random_audit.fairness.xs("FairKM", level="clustering"), ref, check_names=False)


# --------------------------------------------------------------------------- in a browser


def _headless(browser, tmp_path, *args):
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


PROBE = (
    "<script>window.addEventListener('load', () => {"
    "const images = Array.from(document.images);"
    "const decoded = images.filter(i => i.complete && i.naturalWidth > 0).length;"
    "const mark = document.createElement('p'); mark.id = 'image-check';"
    "mark.textContent = `decoded ${decoded} of ${images.length}`;"
    "document.body.appendChild(mark);});</script>"
)


def test_report_renders_in_chromium(tmp_path, chromium):
    people = pd.DataFrame({
        "income": np.r_[np.linspace(0, 1, 40), np.linspace(5, 6, 40)],
        "sex": np.r_[["F"] * 30 + ["M"] * 10, ["F"] * 10 + ["M"] * 30],
        "age": np.r_[np.linspace(20, 40, 40), np.linspace(40, 60, 40)],
    })
    people.to_csv(tmp_path / "people.csv", index=False)
    report = tmp_path / "audit.html"
    assert main(["fit", str(tmp_path / "people.csv"), "--sensitive", "sex,age",
                 "--numeric-sensitive", "age", "--n-clusters", "2", "--quiet",
                 "--report", str(report)]) == 0

    # A copy of the page reports, once loaded, how many images the browser decoded.
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                     encoding="utf-8")
    done = _headless(chromium, tmp_path, "--virtual-time-budget=10000", "--dump-dom",
                     probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert '<p id="image-check">decoded 2 of 2</p>' in dom
    for table_id in ("quality", "fairness-mean", "fairness", "sizes-0", "clusters-0",
                     "verdicts", "worst"):
        assert f'id="{table_id}"' in dom
    assert "Fairness audit of FairKM on people.csv" in dom

    shot = tmp_path / "audit.png"
    done = _headless(chromium, tmp_path, "--window-size=1280,2400", f"--screenshot={shot}",
                     report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (2400, 1280)
    # The page drew something: text, tables and charts, not a blank or error page.
    assert pixels[..., :3].std() > 0.05


def test_notebook_fragment_renders_in_chromium(random_audit, tmp_path, chromium):
    """The _repr_html_ fragment inside a page of its own, as a notebook shows it."""
    page = tmp_path / "notebook.html"
    page.write_text(
        "<!DOCTYPE html><html><body><h1>Notebook</h1><p id='before'>cell above</p>"
        f"{random_audit._repr_html_()}<p id='after'>cell below</p>{PROBE}</body></html>",
        encoding="utf-8",
    )
    done = _headless(chromium, tmp_path, "--virtual-time-budget=10000", "--dump-dom",
                     page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert '<p id="image-check">decoded 3 of 3</p>' in done.stdout
    assert "cell below" in done.stdout and 'id="verdicts"' in done.stdout


def _fitted_advice(**params):
    """The advice for a FairKM fit of the worsened data with ``params``."""
    X, frame, _, _ = _worsened()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an attribute may end less fair
        model = FairKM(3, random_state=0, **params).fit(X, sensitive_features=frame)
    return dict(audit(model, X, sensitive_features=frame).headline()).get("advice", "")


@pytest.mark.parametrize(
    ("params", "present", "absent"),
    [
        ({"fairness_weight": "paper"},
         ["square of its share", "cluster_weighting='equal'", "max_cost=0.1"],
         ["relative_weight="]),
        ({"max_cost": 0.02},
         ["max_cost=0.04", "--max-cost 4%", "Every cluster counted alike"],
         ["max_cost=0.1", "relative_weight="]),
        ({"relative_weight": 0.5, "max_deviation": 0.45},
         ["relative_weight=1", "--relative-weight 1"],
         ["max_deviation=0.05", "max_cost"]),
        ({"attribute_weights": {"race": 2.0}, "cluster_weighting": "size"},
         ["cluster_weighting='size'", "'race': 6"],
         []),
    ],
)
def test_the_advice_fits_the_run(params, present, absent):
    """It names the flagged attributes and suggests what the run did not already set."""
    advice = _fitted_advice(**params)
    if "attribute_weights" not in params:
        assert advice.startswith("What to do about "), advice
    for words in present:
        assert words in advice, (words, advice)
    for words in absent:
        assert words not in advice, (words, advice)


def test_a_worst_cluster_no_fairer_than_the_reference_is_said():
    """The same least fair cluster as the reference: the headline says the worst did not move."""
    X, frame, labels, _ = _worsened()
    audit_ = audit(labels, X, sensitive_features=frame, reference=labels.copy(), name="mine")
    kinds = dict(audit_.headline())
    assert "alert" not in kinds
    assert "no fairer than reference's for sex, race" in kinds["unchanged"]
    assert "advice" in kinds
    assert '<p class="unchanged">' in audit_.to_html()


def test_profile_columns_named_like_the_cluster_table_keep_their_own_names(blobs, tmp_path):
    # The cluster table's index is "cluster" and its columns start with "size": a data
    # column of either name is shown as "NAME (data)", beside the table's own.
    X, sensitive = blobs
    labels = np.arange(300) % 3
    profile = pd.DataFrame({"cluster": np.arange(300.0), "size": labels * 10.0})
    report = audit(labels, X, sensitive_features=sensitive, numeric_sensitive=["age"],
                   reference=labels[::-1].copy(), profile=profile)
    table = report.clusters[report.main]
    assert table.index.name == "cluster"
    assert table["size"].tolist() == [100, 100, 100]
    assert table["size (data)"].tolist() == [0.0, 10.0, 20.0]
    assert table["cluster (data)"].tolist() == [148.5, 149.5, 150.5]
    assert "cluster (data)" in report.to_html(tmp_path / "audit.html")


def test_the_advice_suggests_a_bound_only_below_the_one_every_cluster_meets():
    """The bound met is named, and a guarantee suggested only below it (it moves the worst)."""
    X, frame, labels, _ = _worsened()
    report = audit(labels, X, sensitive_features=frame, reference=None)
    # The tightest bound met, by hand: the largest distance of a share from the dataset's.
    met = max(abs(np.mean(frame[col].to_numpy()[labels == c] == v) - np.mean(frame[col] == v))
              for col in frame for v in np.unique(frame[col]) for c in np.unique(labels))
    assert report.met_bound == pytest.approx(met, abs=1e-12)
    advice = dict(report.headline())["advice"]
    assert f"every share within {met:.3g} of the dataset's" in advice
    suggested = float(re.search(r"--max-deviation ([0-9.e-]+)", advice).group(1))
    # A round number (1, 2 or 5 times a power of ten) between 0.28 and 0.7 of the bound met.
    assert 0.28 * met <= suggested <= 0.7 * met
    assert f"{suggested:g}".lstrip("0.").rstrip("0")[0] in "125"
    # A clustering whose every cluster already holds the exact mix gets no bound suggested.
    even = np.arange(600) % 4 // 2  # rows 0,1 -> 0, 2,3 -> 1, ...: each cluster half "F"
    mixed = pd.DataFrame({"sex": np.tile(["F", "M"], 300)})
    exact = audit(even, X, sensitive_features=mixed, reference=None)
    assert exact.met_bound == 0.0
    assert "max-deviation" not in dict(exact.headline()).get("advice", "")
