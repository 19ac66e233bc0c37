"""The command line's reliability: its files survive a broken stdout, an interrupt or a late
failure; existing files are refused, replaced keeping their mode, or left intact; odd inputs
(duplicate column names, list and decimal Parquet columns, identifiers as labels, semicolons,
"NA" as a category) get a clear answer before any fit; charts show every user string as typed.
"""

import decimal
import html
import io
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import fairkm
import fairkm.experiments
from fairkm.cli import main
from fairkm.report import audit

from ._people import FIT, SCRIPT, run
from ._people import make_people as shared_people


def make_people():
    """The shared table without its age column: these tests use two sensitive columns."""
    return shared_people().drop(columns="age")


@pytest.fixture
def pa():
    """pyarrow (the parquet extra); the Parquet tests skip without it."""
    return pytest.importorskip("pyarrow")


@pytest.fixture
def pq(pa):
    return pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def no_work(monkeypatch):
    """Make any fit or audit fail the test: the command must stop before the work."""

    def work(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(fairkm.FairKM, "fit", work)
    monkeypatch.setattr("fairkm.cli._commands.audit", work)
    monkeypatch.setattr("fairkm.cli._commands.fairness_tradeoff", work)
    monkeypatch.setattr(fairkm.experiments, "reproduce", work)


def _complete_outputs(out_csv, report):
    """Both files of a fit are there and whole."""
    result = pd.read_csv(out_csv)
    assert len(result) == 90 and result.columns[-1] == "cluster"
    assert report.read_text(encoding="utf-8").rstrip().endswith("</html>")


def _unwritable_directory(tmp_path):
    """A directory no file can be created in (even as root), or skip."""
    candidates = [tmp_path / "read-only"]
    candidates[0].mkdir()
    candidates[0].chmod(0o555)
    candidates.append(Path("/sys"))  # sysfs refuses new files, even to root
    for directory in candidates:
        try:
            (directory / "probe.tmp").open("w").close()
        except OSError:
            return directory
        (directory / "probe.tmp").unlink()
    pytest.skip("no unwritable directory here")


# --------------------------------------------------------------------------- 1. broken stdout


class _BrokenStdout(io.TextIOBase):
    """A stdout whose reader has gone: every write fails, after noting what was on disk."""

    def __init__(self, error, paths):
        self.error, self.paths, self.seen = error, paths, None

    def write(self, text):
        if self.seen is None:
            self.seen = {p.name: p.exists() and p.stat().st_size > 0 for p in self.paths}
        raise self.error

    def flush(self):
        if self.seen is not None:
            raise self.error


@pytest.mark.parametrize(("error", "status"), [
    (BrokenPipeError(32, "Broken pipe"), 0),
    (OSError(28, "No space left on device"), 1),
])
def test_files_are_written_before_the_summary(people_csv, tmp_path, monkeypatch, capsys,
                                              error, status):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    stdout = _BrokenStdout(error, [out_csv, report])
    monkeypatch.setattr(sys, "stdout", stdout)
    code = main(["fit", str(people_csv), *FIT, "--output", str(out_csv), "--report",
                 str(report)])
    err = capsys.readouterr().err
    assert stdout.seen == {"out.csv": True, "r.html": True}
    _complete_outputs(out_csv, report)
    assert code == status, err
    if status == 0:  # the reader stopped reading: not an error
        assert err == ""
    else:
        assert "No space left on device" in err and "out.csv" in err and "r.html" in err


@pytest.mark.skipif(not SCRIPT.exists(), reason=f"no fairkm console script at {SCRIPT}")
@pytest.mark.parametrize("stdout", ["closed pipe", "/dev/full", "closed"])
def test_console_script_with_a_broken_stdout(people_csv, tmp_path, stdout):
    if stdout == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    argv = [str(SCRIPT), "fit", "people.csv", *FIT, "--output", "out.csv", "--report", "r.html"]
    if stdout == "closed pipe":  # `| head -0`: the reader is gone before the first line
        with subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            proc.stdout.close()
            err = proc.stderr.read().decode()
            status = proc.wait(timeout=120)
    else:
        with open(os.devnull if stdout == "closed" else stdout, "w") as sink:
            done = subprocess.run(
                argv, cwd=tmp_path, stdout=sink, stderr=subprocess.PIPE, timeout=120,
                # `>&-`: no standard output at all
                preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None,
            )
        err, status = done.stderr.decode(), done.returncode
    _complete_outputs(tmp_path / "out.csv", tmp_path / "r.html")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if stdout == "/dev/full":
        assert status == 1
        assert "No space left on device" in err and "out.csv" in err
    else:
        assert (status, err) == (0, "")


# --------------------------------------------------------------------------- 2. reproduce


@pytest.fixture
def fake_reproduce(monkeypatch):
    """Replace the paper's reproduction with one that writes two of its files."""
    calls = []

    def fake(output_dir, **kwargs):
        calls.append(output_dir)
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        (Path(output_dir) / "tables.md").write_text("# new tables\n")
        (Path(output_dir) / "run.json").write_text("{}\n")
        return {"table4": pd.DataFrame()}

    monkeypatch.setattr(fairkm.experiments, "reproduce", fake)
    return calls


def test_reproduce_refuses_existing_outputs_before_any_work(capsys, tmp_path, fake_reproduce):
    res = tmp_path / "res"
    res.mkdir()
    (res / "tables.md").write_text("NOTES\n")
    (res / "figure1_adult_aw.png").write_text("mine\n")
    (res / "notes.txt").write_text("unrelated\n")
    status, _, err = run(capsys, "reproduce", "--quick", "--output-dir", res, "--quiet")
    assert status == 1
    assert "tables.md" in err and "figure1_adult_aw.png" in err and "--overwrite" in err
    assert "notes.txt" not in err
    assert fake_reproduce == []
    assert (res / "tables.md").read_text() == "NOTES\n"
    status, _, err = run(capsys, "reproduce", "--quick", "--output-dir", res, "--quiet",
                         "--overwrite")
    assert status == 0, err
    assert (res / "tables.md").read_text() == "# new tables\n"
    assert (res / "notes.txt").read_text() == "unrelated\n"


def test_reproduce_into_a_folder_of_other_files(capsys, tmp_path, fake_reproduce):
    res = tmp_path / "res"
    res.mkdir()
    (res / "notes.txt").write_text("unrelated\n")
    status, _, err = run(capsys, "reproduce", "--quick", "--output-dir", res, "--quiet",
                         "--datasets", "kinematics")
    assert status == 0, err
    assert sorted(p.name for p in res.iterdir()) == ["notes.txt", "run.json", "tables.md"]


@pytest.mark.parametrize(("failure", "status"), [
    (ValueError("no data"), 1), (KeyboardInterrupt(), 130),
])
def test_failed_reproduce_leaves_no_folder_it_created(capsys, tmp_path, monkeypatch,
                                                      failure, status):
    def fail(output_dir, **kwargs):
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        raise failure

    monkeypatch.setattr(fairkm.experiments, "reproduce", fail)
    assert run(capsys, "reproduce", "--output-dir", tmp_path / "a" / "b", "--quiet")[0] == status
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept"
    kept.mkdir()
    assert run(capsys, "reproduce", "--output-dir", kept, "--quiet")[0] == status
    assert kept.is_dir()


def test_reproduce_output_dir_that_is_a_file(capsys, tmp_path, no_work):
    (tmp_path / "res").write_text("a file\n")
    status, _, err = run(capsys, "reproduce", "--output-dir", tmp_path / "res", "--quiet")
    assert status == 1 and "not a directory" in err


@pytest.mark.slow
def test_reproduce_writes_exactly_the_files_it_checks(capsys, tmp_path, shared_data):
    """The names checked before the run are the names a real (quick, Adult) run writes."""
    from fairkm.cli._commands import reproduction_files

    home = tmp_path / "home"
    (home / "adult").mkdir(parents=True)
    for path in (shared_data / "adult").iterdir():
        (home / "adult" / path.name).write_bytes(path.read_bytes())
    res = tmp_path / "res"
    status, _, err = run(capsys, "reproduce", "--quick", "--datasets", "adult", "--output-dir",
                         res, "--data-home", home, "--quiet")
    assert status == 0, err
    assert sorted(p.name for p in res.iterdir()) == sorted(reproduction_files(["adult"]))


def test_reproduction_files_for_both_datasets():
    from fairkm.cli._commands import reproduction_files

    # tests/test_experiments.py::test_files_written checks these on a real run.
    names = reproduction_files(["adult", "kinematics"])
    for stem in ["table4_adult_quality", "table5_adult_fairness", "table6_kinematics_quality",
                 "table7_kinematics_fairness", "runs_summary"]:
        assert {f"{stem}.csv", f"{stem}.md"} <= set(names)
    for stem in ["figures1-4_per_attribute", "lambda_sensitivity", "runs_quality",
                 "runs_fairness", "lambda_runs"]:
        assert f"{stem}.csv" in names
    for stem in ["figure1_adult_aw", "figure2_adult_mw", "figure3_kinematics_aw",
                 "figure4_kinematics_mw", "figure5_kinematics_co_sh",
                 "figure6_kinematics_devc_devo", "figure7_kinematics_fairness"]:
        assert f"{stem}.png" in names
    assert {"tables.md", "run.json"} <= set(names)
    assert len(names) == len(set(names)) == 24


# --------------------------------------------------------------------------- 3. late failures


@pytest.mark.parametrize("command", ["fit", "evaluate", "tradeoff", "demo"])
def test_unwritable_output_fails_before_any_work(capsys, tmp_path, no_work, command):
    target = _unwritable_directory(tmp_path)
    people = make_people().assign(segment=lambda d: d["group"])
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    out_csv = tmp_path / "out.csv"
    argv = {
        "fit": ["fit", source, *FIT, "--output", out_csv, "--report", target / "r.html"],
        "evaluate": ["evaluate", source, "--labels", "segment", "--sensitive", "sex",
                     "--report", target / "r.html"],
        "tradeoff": ["tradeoff", source, *FIT, "--output", out_csv, "--plot",
                     target / "p.png"],
        "demo": ["demo", "--report", target / "r.html"],
    }[command]
    status, _, err = run(capsys, *argv, "--quiet")
    assert status == 1
    assert f"cannot write {str(target / 'r.html')!r}" in err or "p.png" in err
    assert not out_csv.exists()


@pytest.mark.parametrize("command", ["fit", "evaluate", "tradeoff"])
def test_sensitive_column_named_mean_is_refused_before_any_work(capsys, tmp_path, no_work,
                                                                 command):
    people = make_people().rename(columns={"group": "mean"}).assign(segment=lambda d: d["sex"])
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    extra = ["--labels", "segment"] if command == "evaluate" else ["--exclude", "id"]
    status, _, err = run(capsys, command, source, "--sensitive", "sex,mean", *extra, "--quiet")
    assert status == 1
    assert "'mean'" in err and "rename" in err


def test_a_feature_named_cluster_is_reported(capsys, tmp_path):
    people = make_people().rename(columns={"region": "cluster"})
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    report = tmp_path / "r.html"
    status, _, err = run(capsys, "fit", source, *FIT, "--report", report, "--output",
                         tmp_path / "out.csv", "--cluster-column", "segment", "--quiet")
    assert status == 0, err
    assert "cluster (data)" in report.read_text(encoding="utf-8")
    assert list(pd.read_csv(tmp_path / "out.csv").columns) == [*people.columns, "segment"]


def test_interrupt_between_the_renames_keeps_the_pair_consistent(capsys, people_csv,
                                                                 tmp_path, monkeypatch):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    out_csv.write_text("OLD\n")
    report.write_text("OLD\n")
    replace = os.replace

    def replace_then_interrupt(source, destination):
        replace(source, destination)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C right after the first rename

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--report",
                         report, "--overwrite", "--quiet")
    monkeypatch.undo()
    assert status == 130 and "interrupted" in err
    _complete_outputs(out_csv, report)  # both new, not one new and one stale
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "people.csv", "r.html"]


def test_a_failed_write_leaves_no_output_at_all(capsys, people_csv, tmp_path, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", tmp_path / "out.csv",
                         "--report", tmp_path / "r.html", "--quiet")
    assert status == 1 and "No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


# --------------------------------------------------------------------------- 4. modes


def test_overwrite_keeps_the_mode_of_the_replaced_file(capsys, people_csv, tmp_path):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    out_csv.write_text("OLD\n")
    out_csv.chmod(0o600)
    report.write_text("OLD\n")
    report.chmod(0o640)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--report",
                         report, "--overwrite", "--quiet")
    assert status == 0, err
    _complete_outputs(out_csv, report)
    assert stat.S_IMODE(out_csv.stat().st_mode) == 0o600
    assert stat.S_IMODE(report.stat().st_mode) == 0o640


def test_new_files_get_the_umask_mode(capsys, people_csv, tmp_path):
    old = os.umask(0o027)
    try:
        status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", tmp_path / "o.csv",
                             "--quiet")
    finally:
        os.umask(old)
    assert status == 0, err
    assert stat.S_IMODE((tmp_path / "o.csv").stat().st_mode) == 0o640


# --------------------------------------------------------------------------- 7. duplicates


def test_duplicate_csv_column_names_are_refused(capsys, tmp_path, no_work):
    source = tmp_path / "people.csv"
    source.write_text("id,sex,income,sex,group\n1,F,3.0,M,a\n2,M,4.0,F,b\n")
    status, _, err = run(capsys, "fit", source, *FIT)
    assert status == 1
    assert "'sex'" in err and "twice" in err


def test_duplicate_parquet_column_names_are_refused(capsys, tmp_path, no_work, pa, pq):
    source = tmp_path / "people.parquet"
    table = pa.table([pa.array([1, 2]), pa.array(["F", "M"]), pa.array([3.0, 4.0])],
                     names=["id", "sex", "id"])
    pq.write_table(table, source)
    status, _, err = run(capsys, "fit", source, "--sensitive", "sex")
    assert status == 1
    assert "'id'" in err and "twice" in err


# --------------------------------------------------------------------------- 8. chart text


def _svg_texts(fig):
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg")
    return {html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>",
                                                 buffer.getvalue())}


def test_charts_show_user_strings_as_typed():
    from fairkm.report._charts import composition_chart

    rng = np.random.default_rng(0)
    n = 80
    values = np.array(["$5-$10", r"$\foo$", "_hidden", r"a\$b"])
    sensitive = pd.DataFrame({
        r"$\bar$ spend": values[np.arange(n) % 4],
        "_flag": np.array(["_x", "y"])[np.arange(n) % 2],
        r"$\mu$ age": rng.uniform(20, 60, n),
    })
    labels = np.array(["$1", "_2"])[(np.arange(n) // 7) % 2]
    X = rng.normal(size=(n, 2))
    result = audit(labels, X, sensitive_features=sensitive, numeric_sensitive=[r"$\mu$ age"],
                   name="column '$seg$'", n_init=1, random_state=0)
    shown = set()
    for attribute in sensitive.columns:
        shown |= _svg_texts(composition_chart(result, attribute))
    expected = {
        *values, "_x", "y",  # legend entries
        r"$\bar$ spend", "_flag",  # legend titles
        r"$\mu$ age",  # the numeric attribute's axis
        "column '$seg$'",  # panel title
        f"cluster $1 (n={int((labels == '$1').sum())})",
    }
    assert expected <= shown, expected - shown
    assert any(text.startswith("cluster _2 (n=") for text in shown)


# --------------------------------------------------------------------------- 11. edge cases


def _parquet(pa, pq, tmp_path, frame, **arrays):
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for name, array in arrays.items():
        table = table.append_column(name, array)
    path = tmp_path / "people.parquet"
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("role", ["feature", "sensitive"])
def test_parquet_list_column_is_named(capsys, tmp_path, no_work, role, pa, pq):
    tags = pa.array([[i % 3, 1] for i in range(90)])
    source = _parquet(pa, pq, tmp_path, make_people(), tags=tags)
    sensitive = "sex,tags" if role == "sensitive" else "sex,group"
    status, _, err = run(capsys, "fit", source, "--sensitive", sensitive, "--exclude", "id")
    assert status == 1
    assert "'tags'" in err and "list" in err and "data row 1" in err


def test_parquet_list_column_left_out_is_kept(capsys, tmp_path, pa, pq):
    tags = pa.array([[i % 3, 1] for i in range(90)])
    source = _parquet(pa, pq, tmp_path, make_people(), tags=tags)
    out = tmp_path / "out.parquet"
    status, _, err = run(capsys, "fit", source, *FIT[:-1], "id,tags", "--output", out,
                         "--quiet")
    assert status == 0, err
    assert pq.read_schema(out).field("tags").type == tags.type


def test_parquet_decimal_column_is_a_number(capsys, tmp_path, pa, pq):
    people = make_people()
    money = pa.array([decimal.Decimal(f"{v:.2f}") for v in people.pop("income")],
                     pa.decimal128(12, 2))
    source = _parquet(pa, pq, tmp_path, people, income=money)
    out = tmp_path / "out.parquet"
    status, stdout, err = run(capsys, "fit", source, *FIT, "--output", out)
    assert status == 0, err
    assert "1 one-hot encoded, 2 numeric standardised" in stdout
    # The output keeps the input's values, exactly.
    assert pa.types.is_decimal(pq.read_schema(out).field("income").type)
    assert pq.read_table(out).column("income").to_pylist() == money.to_pylist()


def test_evaluate_refuses_an_identifier_as_labels_before_any_work(capsys, people_csv, no_work):
    status, _, err = run(capsys, "evaluate", people_csv, "--labels", "id", "--sensitive",
                         "sex,group", "--features", "income")
    assert status == 1
    assert "'id'" in err and "90 distinct values" in err and "--max-categories" in err


@pytest.mark.parametrize(("separator", "option"), [(";", ";"), ("\t", "tab")])
def test_other_separators(capsys, tmp_path, separator, option):
    source = tmp_path / "people.csv"
    make_people().to_csv(source, index=False, sep=separator)
    status, _, err = run(capsys, "fit", source, *FIT)
    assert status == 1
    assert "--sep" in err and "one column" in err
    out = tmp_path / "out.csv"
    status, _, err = run(capsys, "fit", source, *FIT, "--sep", option, "--output", out,
                         "--quiet")
    assert status == 0, err
    assert out.read_text().splitlines()[0] == separator.join(
        [*make_people().columns, "cluster"])


def test_keep_na_strings(capsys, tmp_path):
    people = make_people()
    people["group"] = people["group"].map({"a": "NA", "b": "None", "c": "c"})
    people.loc[::9, "region"] = ""
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    status, _, err = run(capsys, "fit", source, *FIT)
    assert status == 1 and "missing" in err and "'group'" in err
    out = tmp_path / "out.csv"
    status, stdout, err = run(capsys, "fit", source, *FIT, "--keep-na-strings", "--output", out)
    assert status == 0, err
    assert "group (3 values)" in stdout
    result = pd.read_csv(out, keep_default_na=False)
    assert set(result["group"]) == {"NA", "None", "c"}
    assert (result["region"] == "").sum() == 10
    # A column of numbers still reads an empty field as missing.
    people.loc[3, "income"] = np.nan
    people.to_csv(source, index=False)
    status, _, err = run(capsys, "fit", source, *FIT, "--keep-na-strings")
    assert status == 1 and "'income' has 1 missing value(s)" in err
