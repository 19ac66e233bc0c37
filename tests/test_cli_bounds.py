"""The command line's guarantee: --max-deviation and --deviation-kind of fit, evaluate and demo."""

import html

import numpy as np
import pandas as pd
import pytest

from fairkm import FairKM
from fairkm.metrics import check_bounds

from ._people import FIT, make_people, run

BLIND = "S-blind K-Means (best of 10)"


@pytest.fixture
def people_150_csv(tmp_path):
    path = tmp_path / "people.csv"
    make_people(150).to_csv(path, index=False)
    return path


def _flat(text):
    return " ".join(text.split())


@pytest.fixture
def fitted(monkeypatch):
    """Record the FairKM models the command line fits."""
    models = []
    fit = FairKM.fit

    def recording(self, *args, **kwargs):
        models.append(self)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(FairKM, "fit", recording)
    return models


def test_fit_passes_the_bound_to_fairkm_and_the_audit(capsys, people_150_csv, tmp_path, fitted):
    report, output = tmp_path / "audit.html", tmp_path / "out.csv"
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, "--max-deviation", "20%",
                           "--report", report, "--output", output)
    assert status == 0, err
    (model,) = fitted
    assert model.max_deviation == 0.2 and model.deviation_kind == "additive"
    assert model.bounds_check_.satisfied
    labels = pd.read_csv(output)["cluster"]
    people = pd.read_csv(people_150_csv)
    check = check_bounds(labels, people[["sex", "group"]], max_deviation=0.2)
    assert check.satisfied
    flat = _flat(out)
    took = ("FairKM's clustering met it unchanged" if model.n_moved_by_bound_ == 0
            else f"{model.n_moved_by_bound_:,} rows moved from FairKM's clustering to meet it")
    assert ("guarantee: every cluster's share of each value within 0.2 of the dataset's "
            f"(additive): {took}; every bound met") in flat
    assert _flat(f"FairKM: {check.summary()}") in flat
    assert f"{BLIND}: Every cluster within 0.2 of the dataset's mix: " in flat
    page = report.read_text(encoding="utf-8")
    assert f'<p class="guarantee met">{html.escape(f"FairKM: {check.summary()}")}</p>' in page
    assert 'id="bounds"' in page


def test_fit_per_column_multiplicative_bound(capsys, people_150_csv, fitted):
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, "--max-deviation", "sex=0.3",
                           "--deviation-kind", "multiplicative")
    assert status == 0, err
    (model,) = fitted
    assert model.max_deviation == {"sex": 0.3} and model.deviation_kind == "multiplicative"
    flat = _flat(out)
    assert "every cluster's share of each value of sex within 0.3 of the dataset's " \
           "(multiplicative)" in flat
    assert "FairKM: Every cluster within 0.3 of the dataset's mix (multiplicative): " in flat


def test_without_a_bound_nothing_changes(capsys, people_150_csv, fitted):
    status, out, _ = run(capsys, "fit", people_150_csv, *FIT)
    assert status == 0
    (model,) = fitted
    assert model.max_deviation is None
    assert "guarantee:" not in out and "Every cluster within" not in out


def test_infeasible_bound_is_one_line_with_the_tightest_bound(capsys, people_150_csv, tmp_path):
    report = tmp_path / "audit.html"
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, "--max-deviation", "0.0001",
                           "--report", report)
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fairkm: error: max_deviation=0.0001")
    assert "tightest bound found" in lines[0]
    assert "Traceback" not in err and out == ""
    assert not report.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--max-deviation", "-0.1"], "expected a share such as 0.05 or 5%, or NAME=SHARE pairs >= 0"),
    (["--max-deviation", "tight"], "expected a share such as 0.05 or 5%, or NAME=SHARE pairs"),
    (["--max-deviation", "sex=-1%"], "for 'sex' >= 0"),
    (["--max-deviation", "sex=0.1,sex=0.2"], "each column once"),
    (["--max-deviation", "height=0.1"],
     "--max-deviation names 'height', which is not a sensitive attribute; the attributes are "
     "['sex', 'group']"),
    (["--max-deviation", "0.1", "--deviation-kind", "ratio"], "invalid choice: 'ratio'"),
    (["--max-deviation", "100%", "--deviation-kind", "multiplicative"],
     "--max-deviation must be < 1 with --deviation-kind='multiplicative'"),
    (["--deviation-kind", "multiplicative"], "--deviation-kind goes with --max-deviation"),
    (["--max-deviation", "group=0.1", "--numeric-sensitive", "group"],
     "--max-deviation names 'group', which is numeric"),
    (["--max-deviation", "0.1", "--numeric-sensitive", "sex,group"],
     "--max-deviation=0.1 bounds categorical attributes, and there is none"),
    (["--min-balance", "1.5"], "expected a balance such as 0.45 (smallest group over largest), "
                               "or NAME=BALANCE pairs at most 1, got '1.5'"),
    (["--min-balance", "45%"], "expected a balance such as 0.45"),
    (["--min-balance", "sex=0.4,sex=0.5"], "each column once"),
    (["--min-balance", "height=0.4"],
     "--min-balance names 'height', which is not a sensitive attribute"),
    (["--min-balance", "group=0.4", "--numeric-sensitive", "group"],
     "--min-balance names 'group', which is numeric"),
    (["--min-balance", "0.4", "--numeric-sensitive", "sex,group"],
     "--min-balance=0.4 asks a balance of categorical attributes, and there is none"),
])
def test_bad_bounds_are_usage_errors_before_any_fit(capsys, people_150_csv, fitted, args, message):
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, *args)
    assert status == 2, err
    assert message in err and "usage: fairkm fit" in err
    assert fitted == [] and out == ""


def test_evaluate_checks_the_bound_of_the_clustering_and_of_kmeans(capsys, tmp_path):
    people = make_people(150)
    people["segment"] = people["group"].map({"a": "x", "b": "y", "c": "x"})
    path = tmp_path / "segments.csv"
    people.to_csv(path, index=False)
    report = tmp_path / "audit.html"
    status, out, err = run(capsys, "evaluate", path, "--labels", "segment", "--sensitive",
                           "sex,group", "--features", "income,tenure", "--max-deviation",
                           "0.1", "--report", report)
    assert status == 0, err
    check = check_bounds(people["segment"], people[["sex", "group"]], max_deviation=0.1)
    assert not check.satisfied  # segments follow the groups
    flat = _flat(out)
    assert _flat(f"column 'segment': {check.summary()}") in flat
    assert f"{BLIND}: Every cluster within 0.1 of the dataset's mix: " in flat
    page = report.read_text(encoding="utf-8")
    assert 'class="guarantee missed"' in page
    status, _, err = run(capsys, "evaluate", path, "--labels", "segment", "--sensitive",
                         "sex,group", "--deviation-kind", "additive")
    assert status == 2 and "--deviation-kind goes with --max-deviation" in err


def test_demo_takes_a_bound(capsys):
    status, out, err = run(capsys, "demo", "--n-samples", "400", "--n-clusters", "3",
                           "--max-deviation", "region=0.2")
    assert status == 0, err
    assert "FairKM: Every cluster within 0.2 of the dataset's mix: " in _flat(out)
    status, _, err = run(capsys, "demo", "--n-samples", "400", "--max-deviation", "age=0.2")
    assert status == 2 and "--max-deviation names 'age', which is numeric" in err


def test_fit_with_a_bound_reads_the_sensitive_columns_twice_at_most(
        capsys, people_150_csv, tmp_path, monkeypatch):
    """Once for the fit, once for the audit of both clusterings (bounds and measures alike)."""
    from fairkm.utils._sensitive import SensitiveFeatures

    built = []
    init = SensitiveFeatures.__init__

    def counted(self, *args, **kwargs):
        built.append(kwargs.get("names"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(SensitiveFeatures, "__init__", counted)
    status, _, err = run(capsys, "fit", people_150_csv, *FIT, "--max-deviation", "20%",
                         "--output", tmp_path / "out.csv")
    assert status == 0, err
    assert len(built) == 2


def test_zero_is_audited_against_the_bound_whole_rows_allowed(capsys, people_150_csv, fitted):
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, "--max-deviation", "0")
    assert status == 0, err
    (model,) = fitted
    flat = _flat(out)
    enforced = model.max_deviation_
    assert model.bounds_check_.satisfied
    assert "max_deviation=0 asks for the dataset's exact mix" in flat
    # The report checks the bound FairKM enforced, and finds it met: no "not met" advice.
    # (the report shows numbers to 4 significant digits)
    assert f"FairKM: Every cluster within {enforced:.4g} of the dataset's mix: yes" in flat
    assert "The bound asked was not met by every cluster" not in flat


def _balances(labels, column):
    """Each cluster's balance of ``column``: its smallest value's count over its largest."""
    values = np.unique(column)
    out = []
    for c in np.unique(labels):
        counts = np.array([np.sum((labels == c) & (column == v)) for v in values])
        out.append(counts.min() / counts.max())
    return np.array(out)


def test_fit_and_evaluate_take_a_balance_target(capsys, people_150_csv, tmp_path, fitted):
    output = tmp_path / "out.csv"
    status, out, err = run(capsys, "fit", people_150_csv, *FIT, "--min-balance", "0.5",
                           "--output", output)
    assert status == 0, err
    (model,) = fitted
    assert model.min_balance == 0.5 and model.max_deviation is None
    labels = pd.read_csv(output)["cluster"].to_numpy()
    people = pd.read_csv(people_150_csv)
    for name in ("sex", "group"):  # recounted: every cluster's balance at least the target
        assert _balances(labels, people[name].to_numpy()).min() >= 0.5 - 1e-12
    assert "guarantee: every cluster's balance at least 0.5: " in _flat(out)
    assert "every bound met" in _flat(out)
    # evaluate checks a target on one column, against a recount of the same labels.
    status, out, err = run(capsys, "evaluate", output, "--labels", "cluster", "--sensitive",
                           "sex,group", "--min-balance", "group=0.9")
    assert status == 0, err
    met = _balances(labels, people["group"].to_numpy()).min() >= 0.9
    assert (f"column 'cluster': Every cluster with balance at least 0.9: "
            f"{'yes' if met else 'no'}") in _flat(out)
