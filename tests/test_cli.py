"""The ``fairkm`` command: main([...]) in-process, the console script in a subprocess."""

import contextlib
import io
import sys
import warnings
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
import tqdm

import fairkm
import fairkm.experiments
from fairkm.cli import main
from fairkm.cli._progress_bar import progress_bar
from fairkm.utils._progress import Progress, report

from ._people import BASE, FIT, make_people, run
from ._people import write_table as _write

# Where the command line's progress bar takes tqdm from.
TQDM = "fairkm.cli._progress_bar.tqdm"


# --------------------------------------------------------------------------- parser


def test_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0
    assert out.strip() == f"fairkm {fairkm.__version__}"


@pytest.mark.parametrize("command", ["fit", "evaluate", "tradeoff", "demo", "reproduce", None])
def test_help_has_examples(capsys, command):
    status, out, _ = run(capsys, *([command] if command else []), "--help")
    assert status == 0
    assert "examples:" in out
    assert "fairkm " in out.split("examples:")[1]


def test_no_command_is_a_usage_error(capsys):
    status, _, err = run(capsys)
    assert status == 2
    assert "usage: fairkm" in err


# --------------------------------------------------------------------------- fit


def test_fit_writes_input_rows_plus_cluster_column(capsys, people_csv, tmp_path):
    out_path = tmp_path / "clusters.csv"
    status, out, err = run(capsys, "fit", people_csv, *FIT, "--output", out_path)
    assert status == 0, err
    assert err == ""
    original = pd.read_csv(people_csv)
    result = pd.read_csv(out_path)
    assert list(result.columns) == [*original.columns, "cluster"]
    pd.testing.assert_frame_equal(result[original.columns], original)
    assert sorted(result["cluster"].unique()) == [0, 1, 2]
    for text in ("Cluster sizes", "Quality", "Fairness per attribute", "FairKM",
                 "S-blind K-Means (best of 10)", "balance", "DevO", "(CW)",
                 "1 one-hot encoded, 3 numeric standardised", "sex (2 values)"):
        assert text in out
    # Only the output file: no temporary file is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clusters.csv", "people.csv"]


def test_fit_same_seed_same_clusters(capsys, people_csv, tmp_path):
    paths = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in paths:
        assert main(["fit", str(people_csv), *FIT, "--output", str(path), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    first, second = (pd.read_csv(p)["cluster"] for p in paths)
    pd.testing.assert_series_equal(first, second)


def test_fit_parquet_in_and_out(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    source = tmp_path / "people.parquet"
    make_people().to_parquet(source, index=False)
    out_path = tmp_path / "clusters.pq"
    status, _, err = run(capsys, "fit", source, *FIT, "--output", out_path,
                         "--cluster-column", "segment", "--quiet")
    assert status == 0, err
    result = pd.read_parquet(out_path)
    assert result.columns[-1] == "segment"
    assert len(result) == 90


def test_fit_options_reach_fairkm(capsys, people_csv, monkeypatch):
    seen = {}
    fit = fairkm.FairKM.fit

    def spy(self, X, y=None, *, sensitive_features=None):
        seen.update(self.get_params(), X=X, sensitive=sensitive_features)
        return fit(self, X, sensitive_features=sensitive_features)

    monkeypatch.setattr(fairkm.FairKM, "fit", spy)
    status, out, err = run(
        capsys, "fit", people_csv, "--sensitive", "sex,group,age", "--numeric-sensitive", "age",
        "--features", "income,region", "--scale", "none", "--n-clusters", "4",
        "--fairness-weight", "250", "--attribute-weights", "group=2,sex=0.5",
        "--random-state", "7",
    )
    assert status == 0, err
    assert seen["n_clusters"] == 4
    assert seen["fairness_weight"] == 250.0
    assert seen["attribute_weights"] == {"group": 2.0, "sex": 0.5}
    assert seen["numeric_sensitive"] == ["age"]
    assert seen["random_state"] == 7
    assert list(seen["sensitive"].columns) == ["sex", "group", "age"]
    assert seen["sensitive"]["age"].dtype == np.float64
    # income unscaled, region one-hot encoded into 3 columns.
    people = make_people()
    assert seen["X"].shape == (90, 4)
    np.testing.assert_allclose(np.sort(seen["X"], axis=1)[:, -1],
                               np.maximum(people["income"], 1.0))
    assert "age (numeric)" in out
    assert "2 column(s) -> 4 after encoding" in out


def test_sensitive_columns_reach_the_library_as_in_the_file(capsys, tmp_path, monkeypatch):
    """Read with the library's reader (to check them, to count values), passed on as they are."""
    people = make_people().assign(age=lambda d: d["age"].astype(np.int64),
                                  group=lambda d: d["group"].map({"a": 1, "b": 2, "c": 3}))
    path = _write(tmp_path, "people.csv", people)
    seen = {}
    fit = fairkm.FairKM.fit

    def spy(self, X, y=None, *, sensitive_features=None, **kwargs):
        seen["sensitive"] = sensitive_features
        return fit(self, X, sensitive_features=sensitive_features, **kwargs)

    monkeypatch.setattr(fairkm.FairKM, "fit", spy)
    status, out, err = run(capsys, "fit", path, "--sensitive", "sex,group,age",
                           "--numeric-sensitive", "age", "--exclude", "id", "--n-clusters", "3")
    assert status == 0, err
    pd.testing.assert_frame_equal(seen["sensitive"], pd.read_csv(path)[["sex", "group", "age"]])
    assert "sex (2 values), group (3 values), age (numeric)" in " ".join(out.split())


@pytest.mark.parametrize(("weighting", "words"), [
    ("auto", "each cluster counted alike"),
    ("paper", "each cluster counted by the square of its share of the rows"),
])
def test_fit_cluster_weighting_reaches_fairkm_and_the_summary(capsys, people_csv, weighting,
                                                              words):
    status, out, err = run(capsys, "fit", people_csv, *FIT, "--cluster-weighting",
                           weighting)
    assert status == 0, err
    assert words in " ".join(out.split())


def test_fit_standardises_numeric_features_by_default(capsys, people_csv, monkeypatch):
    seen = {}
    fit = fairkm.FairKM.fit

    def spy(self, X, y=None, *, sensitive_features=None):
        seen["X"] = X
        return fit(self, X, sensitive_features=sensitive_features)

    monkeypatch.setattr(fairkm.FairKM, "fit", spy)
    assert main(["fit", str(people_csv), *BASE, "--features", "income,tenure", "--quiet"]) == 0
    np.testing.assert_allclose(seen["X"].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(seen["X"].std(axis=0), 1.0)


def test_fit_refuses_to_replace_output_without_overwrite(capsys, people_csv, tmp_path):
    out_path = tmp_path / "clusters.csv"
    out_path.write_text("precious\n")
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_path)
    assert status == 1
    assert "--overwrite" in err and "clusters.csv" in err
    assert out_path.read_text() == "precious\n"
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_path, "--overwrite",
                         "--quiet")
    assert status == 0, err
    assert "cluster" in pd.read_csv(out_path).columns


def test_fit_never_writes_over_its_input(capsys, people_csv):
    before = people_csv.read_bytes()
    for target in (people_csv, people_csv.parent / "." / people_csv.name):
        status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", target, "--overwrite")
        assert status == 1
        assert "input file" in err
    assert people_csv.read_bytes() == before


def test_failed_write_leaves_previous_output_intact(capsys, people_csv, tmp_path, monkeypatch):
    out_path = tmp_path / "clusters.csv"
    out_path.write_text("previous\n")

    def half_write(self, path, **kwargs):
        Path(path).write_text("partial")
        raise OSError("No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_write)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_path, "--overwrite",
                         "--quiet")
    assert status == 1
    assert "No space left on device" in err
    assert out_path.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clusters.csv", "people.csv"]


def test_fit_with_existing_cluster_column_needs_a_new_name(capsys, tmp_path):
    path = tmp_path / "people.csv"
    make_people().assign(cluster=1).to_csv(path, index=False)
    status, _, err = run(capsys, "fit", path, *FIT, "--output", tmp_path / "out.csv")
    assert status == 1
    assert "'cluster'" in err and "--cluster-column" in err


def test_fit_output_and_report_must_differ(capsys, people_csv, tmp_path):
    target = tmp_path / "same.csv"
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", target, "--report", target)
    assert status == 2
    # A table's extension is never a report's, so the report's is what is refused.
    assert "argument --report: the extension must be .html" in err
    assert not target.exists()


def test_fit_compressed_csv_output(capsys, people_csv, tmp_path):
    target = tmp_path / "clusters.csv.gz"
    assert main(["fit", str(people_csv), *FIT, "--output", str(target), "--quiet"]) == 0
    assert target.read_bytes()[:2] == b"\x1f\x8b"
    assert len(pd.read_csv(target)) == 90


def test_warnings_become_one_line_notes(capsys, people_csv, monkeypatch):
    from sklearn.exceptions import ConvergenceWarning

    fit = fairkm.FairKM.fit

    def warn(self, *args, **kwargs):
        warnings.warn("FairKM did not converge\nwithin max_iter.", ConvergenceWarning,
                      stacklevel=2)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(fairkm.FairKM, "fit", warn)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--quiet")
    assert status == 0
    assert err == "fairkm: warning: FairKM did not converge within max_iter.\n"


def test_interrupt_exits_130(capsys, people_csv, tmp_path, monkeypatch):
    def interrupt(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupt)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", tmp_path / "out.csv",
                         "--quiet")
    assert status == 130
    assert err == "fairkm: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


# --------------------------------------------------------------------------- errors


DATA_ERRORS = {
    "missing column": (lambda p: make_people(), ["--sensitive", "sex,gender"], "'gender'"),
    "nan in sensitive": (
        lambda p: make_people().assign(sex=lambda d: d["sex"].where(d.index != 4)),
        FIT, "'sex' has 1 missing value(s), the first on data row 5",
    ),
    "nan in feature": (
        lambda p: make_people().assign(tenure=lambda d: d["tenure"].where(d.index != 2)),
        FIT, "'tenure' has 1 missing",
    ),
    "feature with too many values": (
        lambda p: make_people().assign(note=lambda d: [f"text {i}" for i in d.index]),
        [*FIT, "--max-categories", "50"], "'note' is not numeric and has 90 distinct values",
    ),
    "numeric feature with a typo": (
        lambda p: make_people().assign(tenure=lambda d: d["tenure"].astype(str).where(
            d.index != 6, "4,5")),
        FIT, "'tenure' is numbers except '4,5' on data row 7",
    ),
    "non-numeric numeric sensitive": (
        lambda p: make_people().assign(age=lambda d: d["age"].astype(str).where(
            d.index != 0, "old")),
        [*FIT, "--sensitive", "sex,age", "--numeric-sensitive", "age"],
        "sensitive attribute 'age' is numeric but data row 1 holds 'old'",
    ),
    "many-valued categorical sensitive": (
        lambda p: make_people(), [*FIT, "--sensitive", "sex,income", "--max-categories", "50"],
        "'income' has 90 distinct values",
    ),
    "no feature left": (
        lambda p: make_people()[["sex", "group"]], ["--sensitive", "sex,group"],
        "no feature columns",
    ),
    "more clusters than rows": (
        lambda p: make_people(n=4), [*FIT, "--n-clusters", "6"], "n_clusters=6",
    ),
}


@pytest.mark.parametrize("case", list(DATA_ERRORS), ids=list(DATA_ERRORS))
def test_data_errors_exit_1_with_one_line(capsys, tmp_path, case):
    make, options, expected = DATA_ERRORS[case]
    path = _write(tmp_path, "data.csv", make(tmp_path))
    status, out, err = run(capsys, "fit", path, *options)
    assert status == 1
    assert err.startswith("fairkm: error: ")
    assert err.count("\n") == 1
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.csv", "", "empty.csv' is empty"),
        ("header.csv", "sex,group,x\n", "has no data rows"),
        ("broken.parquet", "not parquet at all", "cannot read"),
        ("latin1.csv", None, "not UTF-8"),
        ("absent.csv", None, "no such file"),
    ],
)
def test_file_errors_exit_1(capsys, tmp_path, name, content, expected):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")  # without it, the error is the missing extra
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    elif name == "latin1.csv":
        path.write_bytes("sex,group,x\nF,caf\xe9,1\n".encode("latin-1"))
    status, _, err = run(capsys, "fit", path, *FIT)
    assert status == 1
    assert expected in err
    assert err.count("\n") == 1


def test_directory_as_data_file(capsys, tmp_path):
    folder = tmp_path / "data.csv"
    folder.mkdir()
    status, _, err = run(capsys, "fit", folder, *FIT)
    assert status == 1
    assert "is a directory" in err


def test_parquet_without_pyarrow_names_the_extra(capsys, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")  # to write the file
    path = tmp_path / "people.parquet"
    make_people().to_parquet(path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    status, _, err = run(capsys, "fit", path, *FIT)
    assert status == 1
    assert 'pip install "fairkm[parquet]"' in err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--fairness-weight", "strong"], "expected 'auto', 'paper' or a number"),
        (["--fairness-weight", "-1"], "a number >= 0"),
        (["--n-clusters", "1"], "at least 2 clusters"),
        (["--attribute-weights", "sex"], "name=weight"),
        (["--attribute-weights", "height=2"], "--attribute-weights names 'height'"),
        (["--numeric-sensitive", "age"], "--numeric-sensitive names 'age'"),
        (["--features", "sex,income"], "'sex' is both in --features and in --sensitive"),
        (["--features", "income", "--exclude", "id"], "not allowed with argument"),
        (["--output", "out.xlsx"], "extension must be .csv"),
        (["--sensitive", "sex,,group"], "comma-separated column names"),
        (["--scale", "minmax"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(capsys, people_csv, options, expected):
    status, _, err = run(capsys, "fit", people_csv, *BASE, *options)
    assert status == 2
    assert expected in err
    assert "usage: fairkm fit" in err


# --------------------------------------------------------------------------- progress


class RecordingBar:
    """Stands in for tqdm and records what the CLI tells it."""

    instances = []

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.disable = False
        self.n = 0
        self.postfix = []
        RecordingBar.instances.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        self.n += n

    def set_postfix_str(self, text, refresh=True):
        self.postfix.append(text)


@pytest.fixture
def bars(monkeypatch):
    RecordingBar.instances = []
    monkeypatch.setattr(TQDM, RecordingBar)
    return RecordingBar.instances


@pytest.fixture
def fitted(monkeypatch):
    """The FairKM models the command fits, in order."""
    models = []
    fit = fairkm.FairKM.fit

    def keep(self, *args, **kwargs):
        models.append(fit(self, *args, **kwargs))
        return models[-1]

    monkeypatch.setattr(fairkm.FairKM, "fit", keep)
    return models


def test_fit_progress_counts_fairkm_sweeps(capsys, people_csv, bars, fitted):
    # One start and one phase, so the passes are those of the kept run.
    status, out, _ = run(capsys, "fit", people_csv, *FIT, "--fairness-weight", "paper")
    assert status == 0
    bar, audit_bar = bars
    assert bar.kwargs["desc"] == "FairKM"
    assert bar.n == fitted[0].n_iter_
    assert bar.postfix[-1].startswith("objective ")
    # Then the audit's bar: one step each for the reference's fit, fairness, quality (the
    # silhouettes), equitable cost and the cluster tables, each named as it begins.
    assert audit_bar.kwargs["desc"] == "audit" and audit_bar.n == 5
    assert audit_bar.postfix[0].startswith("fitting the S-blind K-Means reference")
    assert audit_bar.postfix[-1] == "describing the clusters"
    # The sweep lines feed the bar and do not reach the output.
    assert "FairKM sweep" not in out


def test_fit_with_the_minibatch_engine(capsys, people_csv, bars, fitted):
    status, out, _ = run(
        capsys, "fit", people_csv, *FIT, "--algorithm", "minibatch", "--batch-size", "16",
        "--fairness-weight", "paper",
    )
    assert status == 0
    (model,) = fitted
    assert (model.algorithm, model.batch_size) == ("minibatch", 16)
    # Epoch lines feed the bar like sweep lines.
    assert bars[0].n == model.n_iter_
    assert "FairKM epoch" not in out


def test_walk_every_row_reaches_fairkm(capsys, people_csv, bars, fitted):
    assert run(capsys, "fit", people_csv, *FIT)[0] == 0
    assert run(capsys, "fit", people_csv, *FIT, "--walk-every-row")[0] == 0
    assert [model.coarse_walk for model in fitted] == [True, False]


def test_default_fit_progress_counts_every_start(capsys, people_csv, bars, fitted):
    """The scale-free weight's S-blind starts and the fair phase all move the bar."""
    assert run(capsys, "fit", people_csv, *FIT)[0] == 0
    bar = bars[0]  # then the audit's
    (model,) = fitted
    assert model.n_init == "auto" and bar.n > model.n_iter_


def test_quiet_shows_no_bar(capsys, people_csv, bars):
    assert run(capsys, "fit", people_csv, *FIT, "--quiet") == (0, "", "")
    assert bars == []


def test_progress_bar_on_a_terminal(capsys, people_csv, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    # Without the delay, so that the bar shows even on this quick fit.
    real = tqdm.tqdm
    monkeypatch.setattr(TQDM, lambda **kwargs: real(**{**kwargs, "delay": 0}))
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["fit", str(people_csv), *FIT]) == 0
    assert "FairKM:" in terminal.getvalue() and "sweeps" in terminal.getvalue()


def test_sweep_progress_passes_other_lines_through(bars):
    # The bar listens to the fits' reports and leaves standard output alone.
    passthrough = io.StringIO()
    with contextlib.redirect_stdout(passthrough), progress_bar(False, desc="trade-off",
                                                               total=2, unit=" weights"):
        (bar,) = bars
        report(Progress("sweep", 1, 10.0, 3, inertia=9.0, fairness=1.0), verbose=0)
        print("hello", end="")
        print(" world")
        report(Progress("sweep", 2, 9.0, 1), verbose=0)
        report(Progress("fit", 1, 9.0, 0), verbose=0)  # the trade-off's first fit ends
        report(Progress("sweep", 1, 8.0, 0), verbose=0)
        assert passthrough.getvalue() == "hello world\n"
        print("bye", end="")
        assert passthrough.getvalue() == "hello world\nbye"
        assert bar.n == 1
        assert bar.postfix[-1] == "sweep 1, objective 8"

# --------------------------------------------------------------------------- tradeoff


def test_tradeoff_table_and_plot(capsys, people_csv, tmp_path, bars):
    table_path, plot_path = tmp_path / "tradeoff.csv", tmp_path / "tradeoff.png"
    status, out, err = run(capsys, "tradeoff", people_csv, *FIT,
                           "--fairness-weights", "0,100,1e4,paper",
                           "--output", table_path, "--plot", plot_path)
    assert status == 0, err
    table = pd.read_csv(table_path)
    assert len(table) == 4
    assert table["fairness_weight"].tolist()[:3] == [0.0, 100.0, 1e4]
    assert {"CO", "SH", "DevC", "DevO", "AE", "AW", "balance"} <= set(table.columns)
    image = matplotlib.image.imread(plot_path)
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert "fairness_weight" in out
    (bar,) = bars
    assert bar.kwargs["total"] == 4 and bar.n == 4


def test_tradeoff_usage_errors(capsys, people_csv):
    status, _, err = run(capsys, "tradeoff", people_csv, *FIT, "--fairness-weights", "1,x")
    assert status == 2 and "expected 'paper' or a number" in err
    status, _, err = run(capsys, "tradeoff", people_csv, *FIT, "--fairness-weights", "1",
                         "--plot", "plot.gif")
    assert status == 2 and ".png, .svg or .pdf" in err

def test_fit_with_a_budget_says_what_it_bought(capsys, people_csv, tmp_path, fitted):
    report = tmp_path / "budget.html"
    status, out, err = run(capsys, "fit", people_csv, *FIT, "--max-cost", "5%",
                           "--report", report)
    assert status == 0, err
    (model,) = fitted
    assert model.max_cost == 0.05
    assert "budget: K-Means cost at most 5.0% above the S-blind clustering's" in out
    assert f"ended at relative weight {model.relative_weight_:.3g}" in out
    # The way to refit the clustering is said, and is the model's.
    if model.refit_params_:
        weight = model.refit_params_["relative_weight"]
        assert f"--relative-weight {weight!r} gives the same" in out  # in full: it refits
    else:
        assert "the same budget gives it again" in out
    assert f"K-Means cost {model.cost_increase_:+.1%}" in out
    page = report.read_text(encoding="utf-8")
    assert "at most 5.0% above the S-blind clustering" in page
    assert f"unfairness {model.unfairness_ratio_:.0%} of its" in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-cost", "0"], "expected a share above 0"),
        (["--max-cost", "cheap"], "expected a fraction such as 0.05 or 5%"),
        (["--max-cost", "5%", "--max-unfairness", "50%"], "not allowed with argument"),
        (["--relative-weight", "-1"], "a number >= 0"),
    ],
)
def test_weight_options_usage_errors(capsys, people_csv, args, message):
    status, _, err = run(capsys, "fit", people_csv, *FIT, *args)
    assert status == 2 and message in err


def test_fit_default_and_paper_weights_are_described(capsys, people_csv):
    status, out, _ = run(capsys, "fit", people_csv, *FIT)
    assert status == 0
    assert ("fairness weight: relative 1: 1% less unfairness is worth 1% more K-Means cost at "
            "the S-blind clustering, less as the cost mounts") in out
    status, out, _ = run(capsys, "fit", people_csv, *FIT, "--fairness-weight", "paper")
    assert status == 0
    assert "(the paper's (n/k)^2), absolute" in out and "price and gain" not in out


def test_tradeoff_with_relative_weights_and_a_budget(capsys, people_csv, tmp_path, bars):
    table_path = tmp_path / "relative.csv"
    status, out, err = run(capsys, "tradeoff", people_csv, *FIT, "--relative-weights", "0,1,4",
                           "--max-cost", "5%", "--output", table_path)
    assert status == 0, err
    table = pd.read_csv(table_path, keep_default_na=False)
    assert len(table) == 4
    assert sorted(table["mark"]) == ["", "", "default", "max_cost=0.05"]
    assert {"CW[sex]", "CW[group]", "MW[sex]", "MW[group]", "cost_increase",
            "unfairness_ratio"} <= set(table.columns)
    (bar,) = bars
    assert bar.kwargs["total"] == 4 and bar.n == 4
    status, _, err = run(capsys, "tradeoff", people_csv, *FIT, "--fairness-weights", "1,10",
                         "--max-cost", "5%")
    assert status == 2 and "--max-cost goes with --relative-weights" in err
