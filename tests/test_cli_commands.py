"""The ``fairkm`` command's evaluate, demo and reproduce, the installed script, real data, and
the audit's data checks (missing values, --dropna, kinds, identifiers) and verdicts."""

import base64
import io
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

import fairkm
import fairkm.experiments

from ._people import BASE, FIT, SCRIPT, make_people, run
from ._people import write_table as _write

# --------------------------------------------------------------------------- evaluate


@pytest.fixture
def labelled_csv(tmp_path):
    people = make_people()
    people["segment"] = np.where(people["income"] > 10, "high", "low")
    path = tmp_path / "segments.csv"
    people.to_csv(path, index=False)
    return path


def test_evaluate_fairness_only(capsys, labelled_csv, tmp_path):
    report = tmp_path / "audit.html"
    status, out, err = run(capsys, "evaluate", labelled_csv, "--labels", "segment",
                           "--sensitive", "sex,group,age", "--numeric-sensitive", "age",
                           "--report", report)
    assert status == 0, err
    page = report.read_text(encoding="utf-8")
    assert page.count("<img ") == 3
    assert 'id="quality"' not in page and "S-blind K-Means (best of 10)" not in page
    assert "<dt>AE</dt>" in page and "<dt>CO</dt>" not in page
    assert "column 'segment': 2 clusters" in out
    assert "high: " in out and "low: " in out
    assert "Fairness per attribute" in out
    assert "Quality" not in out and "S-blind" not in out
    for name in ("sex", "group", "age", "mean"):
        assert f"\n{name} " in out


def test_evaluate_with_features_compares_with_kmeans(capsys, labelled_csv, tmp_path):
    report = tmp_path / "audit.html"
    status, out, err = run(capsys, "evaluate", labelled_csv, "--labels", "segment",
                           "--sensitive", "sex,group", "--features", "income,tenure,region",
                           "--report", report)
    assert status == 0, err
    assert "Quality" in out and "S-blind K-Means (best of 10)" in out and "DevC" in out
    page = report.read_text(encoding="utf-8")
    assert "Fairness audit of &#x27;segment&#x27;" in page
    assert page.count("<img ") == 2


def test_evaluate_errors(capsys, labelled_csv, tmp_path):
    status, _, err = run(capsys, "evaluate", labelled_csv, "--labels", "nope",
                         "--sensitive", "sex")
    assert status == 1 and "'nope' (from --labels)" in err
    status, _, err = run(capsys, "evaluate", labelled_csv, "--labels", "sex",
                         "--sensitive", "sex")
    assert status == 2 and "both in --labels and in --sensitive" in err
    people = pd.read_csv(labelled_csv)
    people.loc[3, "segment"] = None
    people.to_csv(tmp_path / "gap.csv", index=False)
    status, _, err = run(capsys, "evaluate", tmp_path / "gap.csv", "--labels", "segment",
                         "--sensitive", "sex")
    assert status == 1 and "labels column 'segment' has 1 missing value(s)" in err

# --------------------------------------------------------------------------- demo, reproduce


def test_demo_synthetic_with_report(capsys, tmp_path):
    report = tmp_path / "demo.html"
    status, out, err = run(capsys, "demo", "--n-samples", "800", "--n-clusters", "4",
                           "--report", report)
    assert status == 0, err
    assert "synthetic blobs" in out and "age (numeric)" in out
    assert "from the dataset's (lower is fairer" in out
    assert report.stat().st_size > 10_000
    status, _, err = run(capsys, "demo", "--n-samples", "800", "--report", report)
    assert status == 1 and "--overwrite" in err


def test_demo_n_samples_is_for_synthetic_data(capsys):
    status, _, err = run(capsys, "demo", "--dataset", "adult", "--n-samples", "100")
    assert status == 2 and "--n-samples applies to --dataset synthetic only" in err


def test_reproduce_passes_its_options_through(capsys, tmp_path, monkeypatch):
    calls = []

    def fake(output_dir, **kwargs):
        calls.append((output_dir, kwargs))
        return {"table2": pd.DataFrame(), "table3": pd.DataFrame()}

    monkeypatch.setattr(fairkm.experiments, "reproduce", fake, raising=False)
    status, out, _ = run(capsys, "reproduce", "--output-dir", tmp_path / "res", "--seeds", "7",
                         "--quick", "--data-home", tmp_path / "data", "--n-jobs", "3",
                         "--quiet", "--datasets", "adult", "--no-resume")
    assert status == 0 and out == ""
    assert calls == [(tmp_path / "res", dict(n_seeds=7, quick=True,
                                             data_home=str(tmp_path / "data"), n_jobs=3,
                                             progress=False, datasets=("adult",),
                                             resume=False))]
    calls.clear()
    status, out, _ = run(capsys, "reproduce")
    assert status == 0 and "wrote 2 table(s)" in out
    assert calls == [(Path("fairkm-reproduction"), dict(
        n_seeds=100, quick=False, data_home=None, n_jobs=None, progress=True,
        datasets=("adult", "kinematics"), resume=True))]
    calls.clear()
    assert run(capsys, "reproduce", "--quiet", "--datasets", "kinematics,kinematics-l2")[0] == 0
    assert calls[0][1]["datasets"] == ("kinematics", "kinematics-l2")


def test_reproduce_rejects_an_unknown_dataset(capsys):
    status, _, err = run(capsys, "reproduce", "--datasets", "adult,iris")
    assert status == 2
    assert "unknown dataset 'iris'; use adult,kinematics,kinematics-l2" in err


# --------------------------------------------------------------------------- installed script

needs_script = pytest.mark.skipif(
    not SCRIPT.exists(), reason=f"the fairkm console script is not installed at {SCRIPT}"
)


def _subprocess(*argv, cwd):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd,
                          timeout=300, check=False)


@needs_script
def test_console_script_demo_without_arguments(tmp_path):
    done = _subprocess(SCRIPT, "demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "FairKM" in done.stdout and "S-blind K-Means (best of 10)" in done.stdout
    assert "warning" not in done.stderr


@needs_script
def test_console_script_fit_and_exit_codes(tmp_path):
    pytest.importorskip("pyarrow")
    make_people().to_csv(tmp_path / "people.csv", index=False)
    done = _subprocess(SCRIPT, "fit", "people.csv", *FIT, "--output", "out.parquet",
                       "--report", "audit.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(pd.read_parquet(tmp_path / "out.parquet")) == 90
    assert (tmp_path / "audit.html").exists()
    done = _subprocess(SCRIPT, "fit", "missing.csv", *FIT, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "fairkm: error: 'missing.csv': no such file.\n"
    done = _subprocess(SCRIPT, "fit", "people.csv", "--n-clusters", "x", cwd=tmp_path)
    assert done.returncode == 2


def test_python_m_fairkm(tmp_path):
    done = _subprocess(sys.executable, "-m", "fairkm", "--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"fairkm {fairkm.__version__}"


# --------------------------------------------------------------------------- real data


def test_demo_adult(capsys, writable_data_home):
    status, out, err = run(capsys, "demo", "--dataset", "adult",
                           "--data-home", writable_data_home)
    assert status == 0, err
    assert "15,682 rows" in out
    for name in ("marital-status", "relationship", "race", "sex", "native-country"):
        assert f"\n{name} " in out


def test_demo_kinematics(capsys, writable_data_home):
    pytest.importorskip("gensim", reason="Doc2Vec vectors need gensim (fairkm[text])")
    status, out, err = run(capsys, "demo", "--dataset", "kinematics",
                           "--data-home", writable_data_home, "--quiet")
    assert (status, out, err) == (0, "", "")
    status, out, err = run(capsys, "demo", "--dataset", "kinematics",
                           "--data-home", writable_data_home)
    assert status == 0, err
    assert "161 rows, 100 features" in out
    assert "type_5 (2 values)" in out


@pytest.mark.slow
@needs_script
def test_fit_and_evaluate_adult_csv(writable_data_home, tmp_path):
    """The console script on the raw Adult rows written as CSV: fit, then audit the result."""
    pytest.importorskip("pyarrow")
    adult = fairkm.datasets.fetch_adult(data_home=writable_data_home, preprocess=None).data
    adult.to_csv(tmp_path / "adult.csv", index=False)
    done = _subprocess(SCRIPT, "fit", "adult.csv", "--sensitive", "sex,race,age",
                       "--numeric-sensitive", "age", "--exclude", "fnlwgt,income",
                       "--output", "clusters.parquet", "--report", "fit.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(tmp_path / "clusters.parquet")
    assert len(clusters) == 15_682
    done = _subprocess(SCRIPT, "evaluate", "clusters.parquet", "--labels", "cluster",
                       "--sensitive", "sex,race,marital-status", "--quiet",
                       "--report", "evaluate.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "evaluate.html").read_text(encoding="utf-8")
    uris = page.split('src="data:image/png;base64,')[1:]
    assert len(uris) == 3
    for uri in uris:
        image = matplotlib.image.imread(io.BytesIO(base64.b64decode(uri.split('"')[0])))
        assert image.ndim == 3

# --------------------------------------------------------------------------- data checks (issue 14)


def test_missing_values_in_several_columns_are_one_error(capsys, tmp_path):
    people = make_people()
    people.loc[4, "sex"] = None
    people.loc[[2, 7], "tenure"] = np.nan
    path = _write(tmp_path, "gaps.csv", people)
    status, _, err = run(capsys, "fit", path, *FIT)
    assert status == 1 and err.count("\n") == 1
    assert "sensitive column 'sex' has 1 missing value(s), the first on data row 5" in err
    assert "feature column 'tenure' has 2 missing value(s), the first on data row 3" in err
    assert "3 of 90 rows have a missing value" in err and "--dropna" in err


def test_dropna_drops_the_incomplete_rows_and_says_how_many(capsys, tmp_path, people_csv):
    people = make_people()
    people.loc[4, "sex"] = None
    people.loc[[2, 4, 7], "tenure"] = np.nan
    people.loc[9, "id"] = np.nan  # excluded: its gaps do not count
    path = _write(tmp_path, "gaps.csv", people)
    out_path = tmp_path / "clusters.csv"
    status, out, err = run(capsys, "fit", path, *FIT, "--dropna", "--output", out_path)
    assert status == 0, err
    assert "dropped (--dropna): 3 of 90 rows (missing values: sex 1, tenure 3)" in out
    result = pd.read_csv(out_path)
    assert len(result) == 87 and result["sex"].notna().all()
    assert "wrote 87 rows" in out
    status, out, _ = run(capsys, "fit", people_csv, *FIT, "--dropna")
    assert status == 0 and "dropped (--dropna): none (no missing values)" in out


def test_dropna_with_nothing_left(capsys, tmp_path):
    people = make_people(n=10).assign(tenure=np.nan)
    path = _write(tmp_path, "empty.csv", people)
    status, _, err = run(capsys, "fit", path, *FIT, "--dropna")
    assert status == 1 and "nothing is left to cluster" in err


def test_numbers_left_categorical_are_warned_about(capsys, people_csv):
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--sensitive", "sex,age", "--quiet")
    assert status == 0
    assert "fairkm: warning: sensitive column 'age' holds numbers with" in err
    assert "name it in --numeric-sensitive" in err
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--sensitive", "sex,age",
                         "--numeric-sensitive", "age", "--quiet")
    assert status == 0 and err == ""


def test_two_valued_numeric_sensitive_is_warned_about(capsys, tmp_path):
    people = make_people().assign(sex=lambda d: np.where(d["sex"] == "F", 1.0, 2.0))
    path = _write(tmp_path, "coded.csv", people)
    status, _, err = run(capsys, "fit", path, *FIT, "--sensitive", "sex,group",
                         "--numeric-sensitive", "sex", "--quiet")
    assert status == 0
    assert "'sex' is treated as numeric but has only 2 values (2.0, 1.0)" in err
    assert "leave it out of --numeric-sensitive" in err


def test_id_like_feature_is_warned_about(capsys, people_csv, tmp_path):
    report = tmp_path / "audit.html"
    status, _, err = run(capsys, "fit", people_csv, *BASE, "--quiet", "--report", report)
    assert status == 0
    assert "fairkm: warning: feature column 'id' is named like an identifier" in err
    assert "--exclude id" in err
    assert "named like an identifier" in report.read_text(encoding="utf-8")
    people = make_people().rename(columns={"id": "number"})
    path = _write(tmp_path, "numbered.csv", people)
    status, _, err = run(capsys, "fit", path, *BASE, "--features", "number,income", "--quiet")
    assert status == 0
    assert "'number' holds a different value on each of its 90 rows" in err
    assert "leave it out with a --features list without it" in err


def make_worsened(n=400, seed=0):
    """Segments that follow income, plus a small all-female segment: sex gets less fair."""
    rng = np.random.default_rng(seed)
    blob = np.repeat([0, 1], n // 2)
    people = pd.DataFrame({
        "income": blob * 10.0 + rng.normal(size=n),
        "tenure": rng.normal(size=n),
        "sex": np.where(rng.random(n) < 0.5, "F", "M"),
        "group": np.where(rng.random(n) < 0.3 + 0.4 * blob, "a", "b"),
    })
    segment = np.where(blob == 0, "low", "high").astype(object)
    segment[(blob == 0) & (people["sex"] == "F") & (np.arange(n) < 50)] = "niche"
    people["segment"] = segment
    return people


def test_evaluate_flags_a_worsened_attribute(capsys, tmp_path):
    path = _write(tmp_path, "segments.csv", make_worsened())
    report = tmp_path / "audit.html"
    status, out, err = run(capsys, "evaluate", path, "--labels", "segment", "--sensitive",
                           "sex,group", "--features", "income,tenure", "--report", report)
    assert status == 0, err
    assert "WARNING: Less fair than S-blind K-Means (best of 10) on" in out
    assert "sex:" in out.split("WARNING:")[1]
    assert "sex: cluster niche (" in out
    # Labels from another tool get advice for them (FairKM), not FairKM's small-cluster paragraph.
    assert "What to do about sex" in out and "was given labels, not the model that made them" in out
    assert "Why a small cluster can stay unfair" not in out
    page = report.read_text(encoding="utf-8")
    assert '<p class="alert">' in page and 'class="less-fair"' in page


def test_fit_states_the_price_against_the_best_of_ten(capsys, people_csv):
    status, out, _ = run(capsys, "fit", people_csv, *FIT)
    assert status == 0
    assert ("reference: S-blind K-Means (best of 10): scikit-learn's KMeans on the same "
            "features with 3 clusters, the lowest K-Means objective of 10 k-means++ starts") in out
    assert "Price of fairness: the K-Means objective (CO) is" in out or "LOWER than" in out
