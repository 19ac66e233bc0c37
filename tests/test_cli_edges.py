"""The command line at the edges: features it chose, numbers too large, outputs raced for,
signals, files that are not files, usage mistakes, and the first run's compilation."""

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

import fairkm
import fairkm.experiments
from fairkm.cli._progress_bar import COMPILE_NOTICE, compile_notice

from ._people import FIT, make_people, run

PEOPLE_COLUMNS = ["id", "income", "tenure", "region", "sex", "group", "age"]


@pytest.fixture
def no_work(monkeypatch):
    """Make any fit, audit or reproduction fail the test: the command must stop before."""

    def work(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(fairkm.FairKM, "fit", work)
    monkeypatch.setattr("fairkm.cli._commands.audit", work)
    monkeypatch.setattr(fairkm.experiments, "reproduce", work)


def _during_the_work(monkeypatch, action):
    """Run ``action`` once the data is read and the fit done, before the files are written."""
    from fairkm.cli import _commands

    audit = _commands.audit

    def audit_then_act(*args, **kwargs):
        result = audit(*args, **kwargs)
        action()
        return result

    monkeypatch.setattr(_commands, "audit", audit_then_act)


def _listing(directory):
    return sorted(p.name for p in Path(directory).iterdir())


def _whole(out_csv, report):
    """Both files of a fit are there and whole."""
    assert len(pd.read_csv(out_csv)) == 90
    assert report.read_text(encoding="utf-8").rstrip().endswith("</html>")


# --------------------------------------------------------------------------- 11. features


def _penguins(tmp_path, n=120):
    """A table like the penguins one: the species (the target) and the year among its columns."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "species": rng.choice(["Adelie", "Gentoo", "Chinstrap"], n),
        "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
        "bill_length_mm": rng.normal(44, 5, n).round(1),
        "flipper_length_mm": rng.normal(200, 14, n).round(0),
        "body_mass_g": rng.normal(4200, 800, n).round(0),
        "sex": rng.choice(["male", "female"], n),
        "year": rng.choice([2007, 2008, 2009], n),
    })
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    return path


def test_features_taken_by_default_are_listed_and_the_odd_ones_warned_about(capsys, tmp_path):
    source = _penguins(tmp_path)
    status, out, err = run(capsys, "fit", source, "--sensitive", "sex,island", "--n-clusters",
                           "3")
    assert status == 0, err
    features = next(line for line in out.splitlines() if line.startswith("features:"))
    assert ("features: species, bill_length_mm, flipper_length_mm, body_mass_g, year: 5 "
            "column(s)") in features
    assert "by default every column not sensitive or excluded" in features
    warnings = [line for line in err.splitlines() if line.startswith("fairkm: warning:")]
    assert len(warnings) == 2, err
    assert "'species' is named like a prediction target" in warnings[0]
    assert "--exclude species" in warnings[0]
    assert "'year' looks like a year (2007-2009)" in warnings[1]
    assert "--exclude year" in warnings[1]


def test_chosen_features_are_listed_without_the_default_note(capsys, tmp_path):
    source = _penguins(tmp_path)
    status, out, err = run(capsys, "fit", source, "--sensitive", "sex,island", "--features",
                           "bill_length_mm,body_mass_g", "--n-clusters", "3")
    assert status == 0, err
    assert "features: bill_length_mm, body_mass_g: 2 column(s) -> 2 after encoding" in out
    assert "by default" not in out
    assert err == ""


@pytest.mark.parametrize(("name", "values", "warned"), [
    ("label", ["a", "b"] * 45, "is named like a prediction target"),
    ("churn_class", ["a", "b"] * 45, "is named like a prediction target"),
    ("birth_year", np.arange(90) % 30 + 1950, "looks like a year (1950-1979)"),
    ("built", np.arange(90) % 3 + 1990, "looks like a year (1990-1992)"),
    ("classic", ["a", "b"] * 45, None),  # "class" inside a word is no target
    ("visit_count", np.arange(90) % 3 + 10, None),  # a count of visits, no target nor weight
    ("count", np.arange(90) % 3 + 10, "is named like a row weight or count"),
])
def test_target_and_year_warnings(capsys, tmp_path, name, values, warned):
    source = tmp_path / "people.csv"
    make_people().assign(**{name: values}).to_csv(source, index=False)
    status, _, err = run(capsys, "fit", source, *FIT, "--quiet")
    assert status == 0, err
    if warned is None:
        assert err == ""
    else:
        assert f"feature column {name!r} {warned}" in err


# --------------------------------------------------------------------------- 12. huge numbers


@pytest.mark.parametrize("scale", ["standard", "none"])
def test_a_feature_too_large_for_float64_is_named(capsys, tmp_path, scale):
    people = make_people()
    people.loc[3, "income"] = 1e200
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    status, _, err = run(capsys, "fit", source, *FIT, "--scale", scale)
    assert status == 1
    assert "feature column 'income'" in err and "1e+200 on data row 4" in err
    assert "rescale that column" in err and "NaN" not in err
    assert len(err.strip().splitlines()) == 1, err


# --------------------------------------------------------------------------- 14. races


def test_an_output_taken_meanwhile_is_not_replaced_and_the_result_is_kept(
        capsys, people_csv, tmp_path, monkeypatch):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    # Another run (or program) writes out.csv while this one fits.
    _during_the_work(monkeypatch, lambda: out_csv.write_text("THE OTHER RUN\n"))
    status, out, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--report",
                           report)
    assert status == 1
    assert out == ""  # no summary for a run whose files are not in place
    assert "'" + str(out_csv) + "' was created by another program" in err
    assert out_csv.read_text() == "THE OTHER RUN\n"
    # One unit: the report, whose name was free, is not written either.
    assert not report.exists()
    kept = sorted(set(_listing(tmp_path)) - {"people.csv", "out.csv"})
    assert len(kept) == 2, kept
    kept_csv = next(tmp_path / name for name in kept if name.endswith(".csv"))
    kept_html = next(tmp_path / name for name in kept if name.endswith(".html"))
    assert kept_csv.name.startswith("out.") and kept_html.name.startswith("r.")
    for path in (kept_csv, kept_html):
        assert repr(str(path)) in err  # the names are printed
    _whole(kept_csv, kept_html)


@pytest.mark.slow
def test_two_runs_racing_for_one_output(people_csv, tmp_path):
    """Two processes write out.csv without --overwrite: one wins, the other keeps its file."""
    script = textwrap.dedent("""
        import os, sys, time
        from pathlib import Path
        from fairkm.cli import _commands, main
        audit = _commands.audit
        def slow_audit(*args, **kwargs):
            # Both runs have passed the check of out.csv (the audit comes after it) before
            # either goes on to write: each waits for the other's mark, whatever the load,
            # then the second waits its delay so that the first writes first.
            Path(f"ready.{os.getpid()}").touch()
            while len(list(Path().glob("ready.*"))) < 2:
                time.sleep(0.05)
            time.sleep(float(sys.argv[1]))
            return audit(*args, **kwargs)
        _commands.audit = slow_audit
        sys.exit(main(sys.argv[2:]))
    """)
    argv = ["fit", "people.csv", *FIT, "--output", "out.csv", "--quiet"]
    procs = [subprocess.Popen([sys.executable, "-c", script, delay, *argv], cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True) for delay in ("0", "3")]
    results = []
    for proc in procs:
        err = proc.communicate(timeout=300)[1]
        results.append((proc.returncode, err))
    assert results[0] == (0, ""), results
    assert results[1][0] == 1 and "was created by another program" in results[1][1]
    kept = {name for name in _listing(tmp_path) if not name.startswith("ready.")} - {
        "people.csv", "out.csv"}
    assert len(kept) == 1 and kept.pop().startswith("out.")


def test_overwrite_replaces_a_file_written_meanwhile(capsys, people_csv, tmp_path,
                                                     monkeypatch):
    out_csv = tmp_path / "out.csv"
    _during_the_work(monkeypatch, lambda: out_csv.write_text("THE OTHER RUN\n"))
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--overwrite",
                         "--quiet")
    assert status == 0, err
    assert len(pd.read_csv(out_csv)) == 90
    assert _listing(tmp_path) == ["out.csv", "people.csv"]


# --------------------------------------------------------------------------- 15. signals


class _SigtermReachedTheTest(Exception):
    pass


@pytest.fixture
def sigterm_caught():
    """While the test runs, a SIGTERM that main does not handle fails it (not kills pytest)."""

    def fail(signum, frame):
        raise _SigtermReachedTheTest

    previous = signal.signal(signal.SIGTERM, fail)
    yield fail
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_while_writing_cleans_up_like_ctrl_c(capsys, people_csv, tmp_path,
                                                     monkeypatch, sigterm_caught):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    out_csv.write_text("OLD\n")
    report.write_text("OLD\n")
    to_csv = pd.DataFrame.to_csv

    def write_then_terminate(self, *args, **kwargs):
        to_csv(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # `kill PID` while the files are written

    monkeypatch.setattr(pd.DataFrame, "to_csv", write_then_terminate)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--report",
                         report, "--overwrite", "--quiet")
    assert status == 143 and "fairkm: terminated" in err
    # No hidden temporary file is left, and the old files are as they were.
    assert _listing(tmp_path) == ["out.csv", "people.csv", "r.html"]
    assert out_csv.read_text() == "OLD\n" and report.read_text() == "OLD\n"
    # The handler is the caller's again once main returns.
    assert signal.getsignal(signal.SIGTERM) is sigterm_caught


def test_sigterm_while_putting_files_in_place_finishes_them_first(capsys, people_csv, tmp_path,
                                                                 monkeypatch, sigterm_caught):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    out_csv.write_text("OLD\n")
    report.write_text("OLD\n")
    replace = os.replace

    def replace_then_terminate(source, destination):
        replace(source, destination)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(os, "replace", replace_then_terminate)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--report",
                         report, "--overwrite", "--quiet")
    monkeypatch.undo()
    assert status == 143, err
    _whole(out_csv, report)  # both new
    assert _listing(tmp_path) == ["out.csv", "people.csv", "r.html"]


_KILLED_BETWEEN_TWO_FILES = textwrap.dedent("""
    import os, sys
    from fairkm.cli import main
    replace = os.replace
    def replace_then_die(source, destination):
        replace(source, destination)
        os._exit(9)  # as SIGKILL: no handler, no cleanup
    os.replace = replace_then_die
    main(sys.argv[1:])
""")


@pytest.mark.slow
def test_killed_between_two_files_leaves_no_new_file_beside_a_stale_one(people_csv, tmp_path):
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.html"
    out_csv.write_text("OLD\n")
    report.write_text("OLD\n")
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_BETWEEN_TWO_FILES, "fit", "people.csv", *FIT, "--output",
         "out.csv", "--report", "r.html", "--overwrite", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 9, done.stderr
    # out.csv was put in place, then the process died: the old report is gone from view
    # (moved aside before any new file came), not left beside the new table.
    assert len(pd.read_csv(out_csv)) == 90
    assert not report.exists()
    visible = [name for name in _listing(tmp_path) if not name.startswith(".")]
    assert visible == ["out.csv", "people.csv"]


# --------------------------------------------------------------------------- 16. not files


def test_an_output_that_is_a_device_is_refused(capsys, people_csv, no_work):
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    # A report's name must end in .html (or .htm, .txt, .md): /dev/null is refused for that.
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--report", "/dev/null",
                         "--overwrite")
    assert status == 2 and "the extension must be .html" in err
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes")
    # A named pipe with a report's name: not a regular file either.
    pipe = people_csv.parent / "r.html"
    os.mkfifo(pipe)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--report", pipe, "--overwrite")
    assert status == 1
    assert "r.html' is a named pipe, not a regular file" in err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_output_that_is_a_named_pipe_is_refused(capsys, people_csv, tmp_path, no_work):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    pipe = tmp_path / "out.csv"
    os.mkfifo(pipe)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", pipe, "--overwrite")
    assert status == 1 and "is a named pipe, not a regular file" in err
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


@pytest.mark.parametrize("target_exists", [True, False])
def test_an_output_that_is_a_symbolic_link_is_refused(capsys, people_csv, tmp_path, no_work,
                                                      target_exists):
    target, link = tmp_path / "real.html", tmp_path / "r.html"
    if target_exists:
        target.write_text("MINE\n")
    link.symlink_to(target)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--report", link, "--overwrite")
    assert status == 1
    assert f"{str(link)!r} is a symbolic link (to {str(target)!r})" in err
    assert "name the file itself" in err
    assert link.is_symlink() and os.readlink(link) == str(target)
    if target_exists:
        assert target.read_text() == "MINE\n"


def test_an_output_turned_into_a_link_meanwhile_is_left_alone(capsys, people_csv, tmp_path,
                                                              monkeypatch):
    out_csv, elsewhere = tmp_path / "out.csv", tmp_path / "elsewhere.csv"
    out_csv.write_text("OLD\n")
    elsewhere.write_text("ELSEWHERE\n")

    def make_it_a_link():
        out_csv.unlink()
        out_csv.symlink_to(elsewhere)

    _during_the_work(monkeypatch, make_it_a_link)
    status, _, err = run(capsys, "fit", people_csv, *FIT, "--output", out_csv, "--overwrite",
                         "--quiet")
    assert status == 1 and "is a symbolic link" in err
    assert out_csv.is_symlink() and elsewhere.read_text() == "ELSEWHERE\n"
    assert _listing(tmp_path) == ["elsewhere.csv", "out.csv", "people.csv"]


# --------------------------------------------------------------------------- 17. usage


@pytest.mark.parametrize(("argv", "message"), [
    (["fit", "{data}", *FIT, "--max-unfairness", "100%"], "expected a share below 100%"),
    (["fit", "{data}", *FIT, "--max-unfairness", "1.5"], "expected a share below 100%"),
    (["fit", "{data}", *FIT, "--random-state", "-1"], "expected a seed from 0 to 4294967295"),
    (["fit", "{data}", *FIT, "--random-state", "4294967296"], "expected a seed from 0"),
    (["evaluate", "{data}", "--labels", "group", "--sensitive", "sex", "--random-state", "-1"],
     "expected a seed from 0"),
    (["demo", "--random-state", "-3"], "expected a seed from 0"),
    (["reproduce", "--n-jobs", "0"], "expected a number of processes >= 1, or -1"),
    (["fit", "{data}", *FIT, "--max-cost", "5%", "--fairness-weight", "1e6"],
     "--max-cost goes with --fairness-weight auto"),
    (["fit", "{data}", *FIT, "--relative-weight", "2", "--fairness-weight", "paper"],
     "--relative-weight goes with --fairness-weight auto"),
    (["demo", "--max-unfairness", "50%", "--relative-weight", "2"],
     "--max-unfairness chooses the relative weight itself"),
])
def test_usage_mistakes_exit_2_before_reading_the_data(capsys, tmp_path, no_work, argv,
                                                       message):
    # The data file does not even exist: a usage error is found before it is read.
    missing = tmp_path / "nowhere.csv"
    status, _, err = run(capsys, *(str(missing) if a == "{data}" else a for a in argv))
    assert status == 2, err
    assert message in err and "usage: fairkm" in err


# --------------------------------------------------------------------------- 19. first run


def test_compile_notice_says_once_that_numba_compiles(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)

    @numba.njit  # a new function: numba compiles it on its first call, here
    def twice(x):
        return 2 * x

    @numba.njit
    def thrice(x):
        return 3 * x

    with compile_notice(quiet=False):
        assert twice(2) + thrice(1) == 7
    assert capsys.readouterr().err == COMPILE_NOTICE + "\n"
    with compile_notice(quiet=False):
        assert twice(3) == 6  # compiled already: nothing to say
    assert capsys.readouterr().err == ""


def test_compile_notice_is_quiet_off_a_terminal_and_with_quiet(capsys, monkeypatch):
    @numba.njit
    def plus_one(x):
        return x + 1

    with compile_notice(quiet=False):  # pytest's stderr is no terminal
        assert plus_one(1) == 2

    @numba.njit
    def plus_two(x):
        return x + 2

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with compile_notice(quiet=True):
        assert plus_two(1) == 3
    assert capsys.readouterr().err == ""


def _modules_after(code):
    """The heavy libraries a fresh interpreter has loaded after running ``code``."""
    probe = code + "\nimport sys\nprint(sorted(m for m in ('sklearn', 'numba', 'pandas', " \
        "'scipy', 'matplotlib') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_fairkm_loads_no_heavy_library():
    assert _modules_after("import fairkm") == "[]"
    # The estimators load on first use.
    assert _modules_after("import fairkm\nfairkm.FairKM") == \
        "['numba', 'pandas', 'scipy', 'sklearn']"


def test_help_loads_no_clustering_library():
    loaded = _modules_after(
        "from fairkm.cli import main\ntry:\n    main(['fit', '--help'])\nexcept SystemExit:\n"
        "    pass")
    assert "sklearn" not in loaded and "numba" not in loaded and "matplotlib" not in loaded


@pytest.mark.slow
def test_first_run_says_it_compiles_and_the_second_does_not(people_csv, tmp_path):
    """On a terminal, a cold numba cache (a new NUMBA_CACHE_DIR) gets the notice, once."""
    pty = pytest.importorskip("pty")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}

    def fit_on_a_terminal():
        leader, follower = pty.openpty()
        done = subprocess.run(
            [sys.executable, "-m", "fairkm", "fit", str(people_csv), *FIT], env=env,
            stdout=subprocess.DEVNULL, stderr=follower, timeout=600,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once read to its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0
        return b"".join(chunks).decode(errors="replace")

    first = fit_on_a_terminal()
    assert first.count(COMPILE_NOTICE) == 1, first
    assert COMPILE_NOTICE not in fit_on_a_terminal()


def test_the_parsers_cluster_weightings_are_the_estimators():
    """The parser spells them itself (--help loads no scikit-learn): the same options."""
    from fairkm.cli._parser import build_parser
    from fairkm.cluster._weighting import CLUSTER_EXPONENTS

    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    action = next(a for a in fit._actions if "--cluster-weighting" in a.option_strings)
    assert set(action.choices) == {"auto", *CLUSTER_EXPONENTS}
