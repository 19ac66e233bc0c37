"""The public face of fairkm.metrics: its names, their documentation, the table of measures."""

import dataclasses
import inspect
import types
from collections import Counter

import numpy as np
import pandas as pd
import pytest

import fairkm.metrics
from fairkm import metrics
from fairkm.metrics._checks import prepare_fairness
from fairkm.metrics._pieces import AttributePieces
from fairkm.metrics._table import attribute_fairness
from fairkm.report import audit

# The functions that return tables rather than one measure (no row of MEASURES).
REPORTS = (metrics.fairness_report, metrics.clustering_report, metrics.check_bounds,
           metrics.group_costs)
HAND_LABELS = [0] * 6 + [1] * 4
HAND_S = list("aaaabc") + list("abbc")


# --------------------------------------------------------------------------- names


def test_all_lists_exactly_the_public_names():
    public = {name for name in dir(fairkm.metrics) if not name.startswith("_")
              and not isinstance(getattr(fairkm.metrics, name), types.ModuleType)}
    assert public == set(metrics.__all__)
    assert len(metrics.__all__) == len(set(metrics.__all__))
    # Every public name is introduced in the module's docstring.
    for name in metrics.__all__:
        assert name in metrics.__doc__, name


def test_star_import_brings_only_the_public_names():
    namespace = {}
    exec("from fairkm.metrics import *", namespace)  # noqa: S102
    assert set(namespace) - {"__builtins__"} == set(metrics.__all__)


# --------------------------------------------------------------------------- the table of measures


def _public_functions():
    return {name: getattr(metrics, name) for name in metrics.__all__
            if inspect.isfunction(getattr(metrics, name))}


def test_every_measure_function_is_in_the_table_once():
    takes_labels = {
        func for func in _public_functions().values()
        if "labels" in inspect.signature(func).parameters and func not in REPORTS
    }
    in_table = Counter(m.function for m in metrics.MEASURES.values())
    assert set(in_table) == takes_labels
    assert all(count == 1 for count in in_table.values())
    assert all(name == m.name for name, m in metrics.MEASURES.items())
    assert isinstance(metrics.MEASURES, dict)
    with pytest.raises(dataclasses.FrozenInstanceError):
        metrics.MEASURES["AE"].name = "other"


def test_table_fields_agree_with_the_signatures():
    for m in metrics.MEASURES.values():
        params = inspect.signature(m.function).parameters
        assert m.kind == ("fairness" if "sensitive_features" in params else "quality")
        assert m.needs_reference == ("reference_labels" in params)
        assert m.help and "\n" not in m.help
        # A fairness measure's value for one attribute is registered with it.
        assert (m.of_attribute is None) == (m.kind == "quality"), m.name


def test_report_columns_follow_the_table():
    report = metrics.fairness_report(HAND_LABELS, sensitive_features=HAND_S)
    fairness = [m.name for m in metrics.MEASURES.values() if m.kind == "fairness"]
    assert list(report.columns) == fairness
    X = np.arange(10.0).reshape(-1, 1)
    quality = [m.name for m in metrics.MEASURES.values() if m.kind == "quality"]
    with_reference = metrics.clustering_report(X, HAND_LABELS, reference_labels=HAND_LABELS)
    assert list(with_reference.index) == quality
    without = metrics.clustering_report(X, HAND_LABELS)
    needs_reference = [name for name in quality if metrics.MEASURES[name].needs_reference]
    assert list(without.index) == [name for name in quality if name not in needs_reference]
    # The table's order: quality first, then fairness.
    assert list(metrics.MEASURES) == quality + fairness


def test_categorical_only_is_nan_for_a_numeric_attribute():
    rng = np.random.RandomState(0)
    labels = np.repeat([0, 1, 2], 10)
    sensitive = pd.DataFrame({"group": rng.choice(list("abc"), 30), "age": rng.normal(size=30)})
    report = metrics.fairness_report(labels, sensitive_features=sensitive)
    for m in metrics.MEASURES.values():
        if m.kind == "quality":
            assert not m.categorical_only
            continue
        scores = m.function(labels, sensitive_features=sensitive, multioutput="raw_values")
        assert not np.isnan(scores[0])
        assert np.isnan(scores[1]) == m.categorical_only, m.name
        assert np.isnan(report.loc["age", m.name]) == m.categorical_only, m.name


def _mixed_problem():
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 4, 60)
    sensitive = pd.DataFrame({"group": rng.choice(list("abc"), 60), "age": rng.normal(size=60),
                              "sex": rng.choice(["f", "m"], 60)})
    return labels, sensitive


def test_attribute_fairness_computes_every_fairness_measure_of_the_table():
    labels, sensitive = _mixed_problem()
    codes, n_clusters, sf, weights = prepare_fairness(labels, sensitive, "auto")
    sizes = np.bincount(codes, minlength=n_clusters)
    fairness = [m for m in metrics.MEASURES.values() if m.kind == "fairness"]
    assert any(m.categorical_only for m in fairness)
    for j, name in enumerate(sf.names):
        scores = attribute_fairness(AttributePieces(codes, n_clusters, sizes, sf, j, weights))
        assert list(scores) == [m.name for m in fairness]
        for m in fairness:
            # No silent NaN: a categorical attribute gets every measure, a numeric one
            # every measure but the categorical-only ones.
            assert np.isnan(scores[m.name]) == (name == "age" and m.categorical_only), m.name


def test_public_functions_and_the_report_give_the_same_bits():
    # One definition per measure: the public function and the report both call the
    # table's per-attribute function on the same pieces.
    labels, sensitive = _mixed_problem()
    weights = np.random.RandomState(2).exponential(size=60)
    report = metrics.fairness_report(labels, sensitive_features=sensitive, sample_weight=weights,
                                     intersections=[("group", "sex")])
    for m in metrics.MEASURES.values():
        if m.kind == "fairness":
            raw = m.function(labels, sensitive_features=sensitive, sample_weight=weights,
                             intersections=[("group", "sex")], multioutput="raw_values")
            np.testing.assert_array_equal(raw, report[m.name].to_numpy()[:-1], err_msg=m.name)


def test_a_measure_registered_once_is_in_the_report_and_the_audit(monkeypatch):
    # The toy measure is the number of observed values of a categorical attribute: 3 for
    # HAND_S, whatever the clustering.
    toy = metrics.Measure(
        # The reports call only of_attribute, never the public function.
        "toy", None, "fairness", categorical_only=True, higher_is_better=False,
        needs_reference=False, in_paper=False, help="number of values",
        of_attribute=lambda pieces: float(pieces.counts.shape[1]),
    )
    monkeypatch.setitem(metrics.MEASURES, "toy", toy)
    sensitive = pd.DataFrame({"group": HAND_S, "age": np.arange(10.0)})
    report = metrics.fairness_report(HAND_LABELS, sensitive_features=sensitive)
    assert list(report.columns)[-1] == "toy"
    assert report.loc["group", "toy"] == 3.0
    assert np.isnan(report.loc["age", "toy"])
    assert report.loc["mean", "toy"] == 3.0
    X = np.arange(10.0).reshape(-1, 1)
    result = audit(HAND_LABELS, X, sensitive_features=sensitive, check_data=False)
    assert (result.fairness.loc["group", "toy"] == 3.0).all()
    assert result.verdicts.loc[("group", "toy"), "verdict"] == "same"
    assert result.verdicts.loc[("age", "toy"), "verdict"] == "n/a"
    assert "<dt>toy</dt><dd>number of values</dd>" in result.to_html()


def _score(measure, X, labels, reference, sensitive):
    params = inspect.signature(measure.function).parameters
    given = {"X": X, "labels": labels, "reference_labels": reference,
             "sensitive_features": sensitive}
    return measure.function(**{k: v for k, v in given.items() if k in params})


def test_higher_is_better_agrees_with_a_fair_and_an_unfair_clustering():
    # Two well-separated blobs, each holding the values a and b alternately. Following
    # the blobs is coherent and perfectly fair (each cluster has the dataset's half-half
    # mix); following the attribute cuts both blobs and puts one value per cluster.
    X = np.array([[0.0], [0.1], [0.2], [0.3], [10.0], [10.1], [10.2], [10.3]])
    sensitive = list("abababab")
    good = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    bad = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    for m in metrics.MEASURES.values():
        better = _score(m, X, good, good, sensitive)
        worse = _score(m, X, bad, good, sensitive)
        assert better != worse, m.name
        assert (better > worse) == m.higher_is_better, m.name


def test_docstrings_document_every_parameter():
    for name, func in _public_functions().items():
        doc = inspect.getdoc(func)
        assert "%(" not in doc, name
        assert "Parameters\n----------\n" in doc and "Returns\n-------\n" in doc, name
        for param in inspect.signature(func).parameters:
            # numpydoc may document several parameters on one line ("p, q : ...").
            documented = [line.split(" : ")[0] for line in doc.splitlines() if " : " in line]
            assert any(param in entry.split(", ") for entry in documented), (name, param)


def test_the_audits_one_reading_measures_as_fairness_report():
    """The audit measures many clusterings on one reading: the same table as fairness_report."""
    from fairkm.datasets import make_sensitive_blobs
    from fairkm.metrics import fairness_of_read
    from fairkm.utils._sensitive import check_sensitive_features

    _, S, labels = make_sensitive_blobs(300, n_values=(2, 3), numeric=1, random_state=0)
    read = check_sensitive_features(S)
    for clustering in (labels, np.arange(300) % 4, np.where(labels == 0, "a", "b")):
        pd.testing.assert_frame_equal(
            fairness_of_read(clustering, read),
            metrics.fairness_report(clustering, sensitive_features=S))
