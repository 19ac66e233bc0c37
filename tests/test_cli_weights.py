"""The command line's row weights (--weight-column), weight-like and copied feature columns,
and --max-cost's range (issue 31)."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import fairkm
from fairkm.cli import _commands
from fairkm.cli._parser import build_parser
from fairkm.metrics import fairness_report
from fairkm.report import format_number

from ._people import BASE, FIT, make_people, run


def _people_with_weights(tmp_path, **extra):
    people = make_people()
    rng = np.random.default_rng(1)
    people = people.assign(perwt=rng.integers(1, 2000, len(people)).astype(float), **extra)
    path = tmp_path / "people.csv"
    people.to_csv(path, index=False)
    return people, path


@pytest.fixture
def spy(monkeypatch):
    """Record what FairKM.fit and the audit are given, and let them run."""
    seen = {}
    fit, audit = fairkm.FairKM.fit, _commands.audit

    def fit_spy(self, X, *args, **kwargs):
        seen["X"], seen["fit"] = X, kwargs
        return fit(self, X, *args, **kwargs)

    def audit_spy(*args, **kwargs):
        seen["audit"] = kwargs
        return audit(*args, **kwargs)

    monkeypatch.setattr(fairkm.FairKM, "fit", fit_spy)
    monkeypatch.setattr(_commands, "audit", audit_spy)
    return seen


def test_fit_weighs_the_fit_and_the_audit_and_drops_the_column(capsys, tmp_path, spy):
    people, path = _people_with_weights(tmp_path)
    status, out, err = run(capsys, "fit", path, *FIT, "--weight-column", "perwt")
    assert status == 0, err
    assert err == ""  # perwt, now the weights, is no feature to warn about
    np.testing.assert_array_equal(spy["fit"]["sample_weight"], people["perwt"])
    np.testing.assert_array_equal(spy["audit"]["sample_weight"], people["perwt"])
    # income, tenure, region (3 values), age: 6 encoded columns, perwt not among them.
    assert spy["X"].shape == (90, 6)
    features = next(line for line in out.splitlines() if line.startswith("features:"))
    assert "perwt" not in features
    total = format_number(people["perwt"].sum())
    assert (f"weights: column 'perwt' (--weight-column), total {total} over 90 rows: a row of "
            "weight w counts as w rows") in out
    assert "weighted by sample_weight" not in out  # the column's fact, said once
    assert "Price of fairness: the weighted K-Means objective" in " ".join(out.split())


def test_evaluate_reports_the_weighted_measures(capsys, tmp_path):
    people, path = _people_with_weights(tmp_path)
    status, out, err = run(capsys, "evaluate", path, "--labels", "group", "--sensitive",
                           "sex,region", "--weight-column", "perwt")
    assert status == 0, err
    weighted = fairness_report(people["group"], sensitive_features=people[["sex", "region"]],
                               sample_weight=people["perwt"])
    plain = fairness_report(people["group"], sensitive_features=people[["sex", "region"]])
    mean_line = next(line for line in out.splitlines() if line.startswith("mean"))
    assert format_number(weighted.loc["mean", "CW"]) in mean_line.split()
    assert format_number(plain.loc["mean", "CW"]) not in mean_line.split()
    assert "weights: column 'perwt'" in out


@pytest.mark.parametrize(("values", "message"), [
    (None, "column 'wt' (from --weight-column) is not in"),
    (["heavy"] * 90, "--weight-column 'wt' of '{path}' must hold numbers (row weights), but "
                     "holds 'heavy' on data row 1"),
    ([1.0] * 89 + [-2.0], "--weight-column 'wt' of '{path}' holds -2.0 on data row 90; a row "
                          "weight must be a finite number >= 0"),
    ([1.0] * 40 + [np.inf] * 50, "holds inf on data row 41"),
    ([0.0] * 90, "--weight-column 'wt' of '{path}' is 0 on every row"),
    ([1.0] * 5 + [None] * 85, "weight column 'wt' has 85 missing value(s), the first on data "
                              "row 6"),
])
def test_bad_weight_columns_are_one_line_errors(capsys, tmp_path, values, message):
    people = make_people()
    if values is not None:
        people["wt"] = values
    path = tmp_path / "people.csv"
    people.to_csv(path, index=False)
    for command in (("fit", path, *FIT),
                    ("evaluate", path, "--sensitive", "sex,group", "--labels", "region")):
        status, out, err = run(capsys, *command, "--weight-column", "wt")
        assert status == 1, err
        assert message.format(path=path) in err
        assert err.count("\n") == 1 and out == ""


def test_a_feature_that_is_not_finite_is_named_with_its_plain_value(capsys, tmp_path):
    people = make_people()
    people.loc[4, "income"] = np.inf
    path = tmp_path / "people.csv"
    people.to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, *FIT)
    assert status == 1
    assert "feature column 'income' holds inf on data row 5; features must be finite" in err


def test_dropna_drops_rows_without_a_weight(capsys, tmp_path, spy):
    people = make_people().assign(wt=[2.0] * 80 + [None] * 10)
    path = tmp_path / "people.csv"
    people.to_csv(path, index=False)
    status, out, err = run(capsys, "fit", path, *FIT, "--weight-column", "wt", "--dropna")
    assert status == 0, err
    assert "dropped (--dropna): 10 of 90 rows (missing values: wt 10)" in out
    np.testing.assert_array_equal(spy["fit"]["sample_weight"], np.full(80, 2.0))


@pytest.mark.parametrize(("options", "message"), [
    (["--weight-column", "sex"], "column 'sex' is both --weight-column and in --sensitive"),
    (["--weight-column", "income", "--features", "income,tenure"],
     "column 'income' is both --weight-column and in --features"),
])
def test_a_weight_column_with_another_role_is_a_usage_error(capsys, people_csv, options,
                                                            message):
    status, _, err = run(capsys, "fit", people_csv, *BASE, *options)
    assert status == 2 and message in err


def test_the_labels_cannot_be_the_weights(capsys, people_csv):
    status, _, err = run(capsys, "evaluate", people_csv, "--sensitive", "sex", "--labels",
                         "group", "--weight-column", "group")
    assert status == 2 and "column 'group' is both --weight-column and in --labels" in err


def test_tradeoff_is_weighted_and_reads_only_the_weights_ratios(capsys, tmp_path):
    people, path = _people_with_weights(tmp_path)
    people.assign(perwt_k=people["perwt"] * 1000.0).to_csv(path, index=False)
    tables = {}
    for column in ("perwt", "perwt_k", None):
        out = tmp_path / f"{column}.csv"
        drop = "perwt,perwt_k" if column is None else ("perwt_k" if column == "perwt"
                                                       else "perwt")
        status, _, err = run(capsys, "tradeoff", path, "--sensitive", "sex,group",
                             "--exclude", f"id,{drop}", "--n-clusters", "3",
                             "--relative-weights", "0,1", "--output", out, "--quiet",
                             *(() if column is None else ("--weight-column", column)))
        assert status == 0, err
        tables[column] = pd.read_csv(out)
    measures = ["CW", "MW", "AE", "cost_increase", "unfairness_ratio"]
    assert_allclose(tables["perwt_k"][measures], tables["perwt"][measures], rtol=1e-9)
    assert_allclose(tables["perwt_k"]["inertia"], 1000.0 * tables["perwt"]["inertia"],
                    rtol=1e-9)
    # ... and the weights do count: the unweighted table is another one.
    assert not np.allclose(tables[None]["inertia"], tables["perwt"]["inertia"])


# --------------------------------------------------------------------------- weight-like names


@pytest.mark.parametrize("name", ["perwt", "PWGTP", "sample_weight", "Weight", "n", "count",
                                  "freq"])
def test_a_weight_like_feature_is_warned_about(capsys, tmp_path, name):
    path = tmp_path / "people.csv"
    make_people().assign(**{name: np.arange(90) % 5 + 1}).to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, *FIT, "--quiet")
    assert status == 0
    warnings = [line for line in err.splitlines() if "row weight or count" in line]
    assert warnings == [
        f"fairkm: warning: feature column {name!r} is named like a row weight or count; as a "
        "feature it pulls the clusters by its value, and every row counts once. If it says how "
        f"many people (or rows) each row stands for, pass it with --weight-column {name} (it "
        "then leaves the features); if it is a quantity to cluster on (a body weight, a number "
        "of visits), ignore this."
    ]


@pytest.mark.parametrize(("name", "values"), [
    ("visit_count", np.arange(90) % 5 + 1),  # a count of something, a feature
    ("weight_kg", 60.0 + np.arange(90) % 30),
    ("n", np.arange(90) % 5 - 2),  # negative: no count of rows
    ("counter", np.arange(90) % 5),
])
def test_names_that_only_look_like_weights_are_not_warned_about(capsys, tmp_path, name,
                                                                 values):
    path = tmp_path / "people.csv"
    make_people().assign(**{name: values}).to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, *FIT, "--quiet")
    assert status == 0 and err == ""


def test_tradeoff_says_to_pass_a_weight_like_feature_as_weights(capsys, tmp_path):
    _, path = _people_with_weights(tmp_path)
    status, _, err = run(capsys, "tradeoff", path, *FIT, "--relative-weights", "0,1",
                         "--quiet")
    assert status == 0
    assert "pass it with --weight-column perwt (it then leaves the features)" in err


# --------------------------------------------------------------------------- copied columns


def test_a_copied_sensitive_column_is_named_as_in_the_file(capsys, tmp_path):
    """Issue 31: the warning named 'x0', 'x1' (FairKM's names for the encoded matrix)."""
    people = make_people()
    people = people.assign(gender=people["sex"].map({"F": "woman", "M": "man"}),
                           grp=people["group"], age2=2 * people["age"] + 1)
    path = tmp_path / "people.csv"
    people.to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, "--sensitive", "sex,group,age",
                         "--numeric-sensitive", "age", "--exclude", "id", "--n-clusters", "3",
                         "--quiet")
    assert status == 0
    lines = err.splitlines()
    assert len(lines) == 3, err  # one per file column, not one per encoded column
    for column, attribute in (("gender", "sex"), ("grp", "group"), ("age2", "age")):
        assert (f"fairkm: warning: feature column {column!r} copies the sensitive column "
                f"{attribute!r} (or one of its values) row for row: with it among the "
                "features, K-Means itself separates the groups and fairness has to undo it. "
                f"Leave it out with --exclude {column}.") in lines
    assert "'x" not in err and "out of X" not in err


def test_a_column_holding_one_value_of_a_sensitive_column_is_named(capsys, tmp_path):
    people = make_people()
    path = tmp_path / "people.csv"
    people.assign(is_a=people["group"] == "a").to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, *BASE, "--features", "income,tenure,is_a",
                         "--quiet")
    assert status == 0
    assert err == ("fairkm: warning: feature column 'is_a' copies the sensitive column 'group' "
                   "(or one of its values) row for row: with it among the features, K-Means "
                   "itself separates the groups and fairness has to undo it. Leave it out with "
                   "a --features list without it.\n")


def test_tradeoff_names_a_copied_column_once(capsys, tmp_path):
    people = make_people()
    path = tmp_path / "people.csv"
    people.assign(gender=people["sex"]).to_csv(path, index=False)
    status, _, err = run(capsys, "tradeoff", path, *FIT, "--relative-weights", "0,1",
                         "--quiet")
    assert status == 0
    assert err.count("fairkm: warning:") == 1 and "feature column 'gender' copies" in err


# --------------------------------------------------------------------------- --max-cost


@pytest.mark.parametrize(("text", "value"), [("5%", 0.05), ("0.05", 0.05), ("1", 1.0),
                                              ("100%", 1.0)])
def test_max_cost_takes_a_share_up_to_one(text, value):
    for command in ("fit", "tradeoff"):
        args = build_parser().parse_args([command, "x.csv", "--sensitive", "s", "--max-cost",
                                          text])
        assert args.max_cost == pytest.approx(value)


@pytest.mark.parametrize(("text", "message"), [
    ("5", "argument --max-cost: got '5', which reads as 500% of the S-blind clustering's "
          "K-Means cost: a share is at most 1 (write 0.05 or 5% for 5%)"),
    ("1.5", "got '1.5', which reads as 150% of the S-blind clustering's K-Means cost: a share "
            "is at most 1 (write 0.015 or 1.5% for 1.5%)"),
    ("150%", "argument --max-cost: got '150%', which is above 100% of the S-blind clustering's "
             "K-Means cost: a share is at most 1"),
])
def test_max_cost_above_one_is_refused_as_a_likely_percentage(capsys, people_csv, text,
                                                               message, monkeypatch):
    monkeypatch.setattr(fairkm.FairKM, "fit", lambda *a, **k: pytest.fail("the fit ran"))
    for command in ("fit", "tradeoff"):
        status, out, err = run(capsys, command, people_csv, *FIT, "--max-cost", text)
        assert status == 2 and out == ""
        assert message in " ".join(err.split())
