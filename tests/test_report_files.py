"""A report's file: the format its extension names or a refusal, and never part of a file."""

from pathlib import Path

import numpy as np
import pytest

from fairkm.report import audit

from ._people import FIT, run


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    X = rng.random((60, 2))
    S = rng.integers(0, 2, size=(60, 1))
    return audit(np.arange(60) % 3, X, sensitive_features=S)


@pytest.mark.parametrize("name", ["r.pdf", "r.txt", "r", "r.html.gz"])
def test_to_html_refuses_another_extension(report, tmp_path, name):
    with pytest.raises(ValueError, match=rf"path='.*{name}': the extension must be .html, "
                                         r"\.htm \(HTML\)"):
        report.to_html(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("name", "start"), [("r.html", "<!DOCTYPE html>"),
                                             ("R.HTM", "<!DOCTYPE html>"),
                                             ("r.txt", None), ("r.md", None)])
def test_save_writes_the_format_its_extension_names(report, tmp_path, name, start):
    report.save(tmp_path / name)
    text = (tmp_path / name).read_text(encoding="utf-8")
    if start is None:
        assert text == report.to_text() + "\n" and "<" not in text.split("\n")[0]
    else:
        assert text.startswith(start)
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_save_refuses_a_pdf(report, tmp_path):
    with pytest.raises(ValueError, match=r"path='.*r\.pdf': the extension must be \.html, "
                                         r"\.htm, \.txt, \.md \(HTML or text\), got '\.pdf'"):
        report.save(tmp_path / "r.pdf")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_report_whole(report, tmp_path, monkeypatch):
    target = tmp_path / "r.html"
    target.write_text("OLD", encoding="utf-8")
    write_text = Path.write_text

    def half_then_fail(self, text, **kwargs):
        write_text(self, text[: len(text) // 2], **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        report.to_html(target)
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_the_command_line_refuses_a_pdf_report(capsys, people_csv, tmp_path):
    status, out, err = run(capsys, "fit", people_csv, *FIT, "--report", tmp_path / "r.pdf")
    assert status == 2 and out == ""
    assert "argument --report: the extension must be .html, .htm, .txt, .md" in err
    assert not (tmp_path / "r.pdf").exists()


def test_the_command_line_writes_a_text_report_as_it_prints(capsys, people_csv, tmp_path):
    status, out, _ = run(capsys, "fit", people_csv, *FIT, "--report", tmp_path / "r.txt")
    assert status == 0
    text = (tmp_path / "r.txt").read_text(encoding="utf-8")
    assert not text.startswith("<")
    # The printed summary is the file's, apart from the time stamp and the closing line.
    printed = out.split(f"wrote the report to {tmp_path / 'r.txt'}")[0]
    kept = [line for line in text.splitlines() if not line.startswith("made by:")]
    assert [line for line in printed.splitlines() if line.strip()] == \
        [line for line in kept if line.strip()]
