"""A run without the real data says so once, not once per test that needs it."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_run_without_the_data_says_so_in_one_line(tmp_path):
    # FAIRKM_DATA at an empty folder: every test that needs the data skips.
    env = {**os.environ, "FAIRKM_DATA": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/test_datasets.py", "tests/test_cli_commands.py", "-k", "adult"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, result.stdout
    assert f"the real data files are not at {tmp_path}" in skipped[0]
    counted = int(re.search(r"SKIPPED \[(\d+)\]", skipped[0]).group(1))
    total = int(re.search(r"(\d+) skipped", result.stdout).group(1))
    assert counted == total >= 2
