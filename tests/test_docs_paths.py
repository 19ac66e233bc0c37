"""No page holds a path of the machine it was written on.

The README, the CHANGELOG, CONTRIBUTING and every text file under docs/ (pages, the benchmarks'
templates, their run.json and CSV files) are read; a developer's home or scratch folder, or
another user's, must not appear. Benchmarks record their commands through
benchmarks/_command.py, which writes such paths as names in capitals.
"""

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
# Absolute folders of one machine: Unix homes and scratch, macOS homes, Windows drives.
MACHINE = re.compile(r"(?<![\w.])(?:/work/|/home/|/tmp/|/root/|/mnt/|/Users/|/var/folders/"
                     r"|/private/|[A-Za-z]:\\)")
SUFFIXES = {".md", ".rst", ".json", ".csv", ".py", ".txt"}


def _files():
    yield from (ROOT / name for name in ("README.md", "CHANGELOG.md", "CONTRIBUTING.md"))
    for path in sorted((ROOT / "docs").rglob("*")):
        parts = path.relative_to(ROOT / "docs").parts
        if path.suffix in SUFFIXES and parts[0] not in ("_build", "auto_examples"):
            yield path


def test_no_machine_path_in_the_readme_or_the_docs():
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if MACHINE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)


def test_the_pattern_finds_what_it_should():
    for line in ("--fca-results /tmp/fca", "python at /work/venvs/x/bin/python",
                 "see /home/me/data", "C:\\Users\\me", "/Users/me/data"):
        assert MACHINE.search(line), line
    for line in ("docs/frontier/points.csv", "../shared/data", "$XDG_CACHE_HOME/fairkm",
                 "~/.cache/fairkm", "%LOCALAPPDATA%\\fairkm", "https://example.org/work/x"):
        assert not MACHINE.search(line), line
