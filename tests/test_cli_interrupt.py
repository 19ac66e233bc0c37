"""Ctrl-C at any moment of the command, start-up included: one line, status 130."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ._people import FIT, make_people

_SRC = str(Path(__file__).resolve().parents[1] / "src")

# As the console script runs the command, with Ctrl-C simulated at the N-th line of Python
# the command executes (a trace function raises KeyboardInterrupt there, as the default
# SIGINT handler does): from main's first line, the loading of the command's modules and
# libraries (the start-up's seconds) included, to the end of the fit. Before main runs, the
# console script imports fairkm, fairkm.cli and fairkm.cli._interrupt, small modules of the
# standard library's imports only (test_the_console_scripts_import_is_small): no code of the
# package can catch an interrupt there.
_INTERRUPT_AT_LINE = textwrap.dedent("""
    import sys
    target, seen = int(sys.argv[1]), 0

    def trace(frame, event, arg):
        global seen
        if event == "line":
            seen += 1
            if seen == target:
                sys.settrace(None)
                print("interrupting", file=sys.__stdout__, flush=True)
                raise KeyboardInterrupt
        return trace

    from fairkm.cli import main
    sys.settrace(trace)
    status = main(sys.argv[2:])
    sys.settrace(None)
    sys.exit(status)
""")


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    folder = tmp_path_factory.mktemp("people")
    make_people().to_csv(folder / "people.csv", index=False)
    return folder


@pytest.mark.parametrize("line", [3, 12, 40, 150, 600, 2_500, 10_000, 40_000, 160_000,
                                  640_000, 2_560_000,
                                  pytest.param(10_240_000, marks=pytest.mark.slow)])
def test_ctrl_c_at_any_line_prints_one_line_and_exits_130(people, line):
    path = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_AT_LINE, str(line), "fit", "people.csv", *FIT,
         "--output", "out.csv", "--overwrite"],
        cwd=people, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True,
        timeout=600,
    )
    if "interrupting" not in done.stdout:
        pytest.skip(f"the command ran fewer than {line} lines")
    assert done.returncode == 130, done.stderr
    assert done.stderr == "fairkm: interrupted\n"


def test_the_console_scripts_import_is_small():
    """Before main runs: fairkm, fairkm.cli and its interrupt line, no other library."""
    probe = ("import sys\nbefore = set(sys.modules)\nfrom fairkm.cli import main\n"
             "print(sorted(m for m in set(sys.modules) - before\n"
             "             if m.split('.')[0] not in sys.stdlib_module_names))")
    path = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['fairkm', 'fairkm.cli', 'fairkm.cli._interrupt']"
