"""The README's quickstart runs and prints labelled numbers that compare FairKM with K-Means."""

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _python_block(path, section):
    text = path.read_text(encoding="utf-8")
    start = text.index(section)
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)


def test_quickstart_prints_labelled_compared_numbers(tmp_path, monkeypatch):
    code = _python_block(ROOT / "README.md", "## Quickstart")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md quickstart", "exec"), {})
    printed = out.getvalue()
    # Every number has a label, and FairKM is set against S-blind K-Means.
    assert re.search(r"K-Means objective \(lower is tighter\): FairKM \d+, S-blind K-Means \d+ "
                     r"\([+-]\d+\.\d%\)", printed)
    assert re.search(r"FairKM\s+S-blind K-Means", printed)
    assert "mean" in printed and "lower is fairer" in printed
    assert "Within a 5% budget: K-Means objective" in printed
    assert "Price of fairness" in printed and "S-blind K-Means (best of 10)" in printed
    assert (tmp_path / "audit.html").is_file()
    # The printed output shown under the code is what it prints.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme[readme.index("## Quickstart"):].split("```text\n")[1].split("```")[0]
    assert [line.split() for line in shown.splitlines() if line.strip()] == [
        line.split() for line in printed.splitlines() if line.strip()]


def test_docs_quickstart_is_the_readme_quickstart():
    assert (_python_block(ROOT / "docs" / "quickstart.md", "# Quickstart")
            == _python_block(ROOT / "README.md", "## Quickstart"))
