"""The pages' worked examples run and print what the page shows under them.

Each example is the ```python block under a heading, and the ```text block after it is what it
prints: the test runs the code and compares the two, word for word on each line. The scorer's
example fits a grid search on Adult (about a minute), so both are marked slow.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest
import sklearn

DOCS = Path(__file__).parents[1] / "docs"

pytestmark = pytest.mark.slow


def example(page, heading):
    """The code under ``heading`` in ``page`` and the output the page shows for it."""
    text = (DOCS / page).read_text(encoding="utf-8")
    rest = text[text.index(heading):]
    code = re.search(r"```python\n(.*?)```", rest, re.S)
    shown = re.search(r"```text\n(.*?)```", rest[code.end():], re.S)
    return code.group(1), shown.group(1)


def run(code, name):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), sklearn.config_context():
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
    return out.getvalue()


def words(text):
    return [line.split() for line in text.splitlines() if line.strip()]


def test_bounds_example_prints_what_the_page_shows():
    code, shown = example("bounds.md", "## At a glance")
    assert "from fairkm import BoundedKMeans, FairKM" in code
    assert words(run(code, "docs/bounds.md")) == words(shown)


def test_scorer_example_prints_what_the_page_shows(shared_data, monkeypatch, tmp_path):
    code, shown = example("metrics.md", "## Choosing settings")
    assert "fetch_adult()" in code
    monkeypatch.setenv("FAIRKM_DATA", str(shared_data))  # where fetch_adult() reads Adult
    monkeypatch.chdir(tmp_path)
    printed = run(code, "docs/metrics.md")  # in a config context: its routing stays there
    assert words(printed) == words(shown)
    # The best setting is within the 5% budget and fairer than K-Means.
    assert "(within 5%: True)" in printed
    ratio = float(re.search(r": ratio (\d\.\d+)", printed)[1])
    assert 0 < ratio < 1
