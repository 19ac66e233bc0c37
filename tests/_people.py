"""Shared by the command line's test modules: a small table and a way to run ``main``."""

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairkm.cli import main

SCRIPT = Path(sys.executable).parent / ("fairkm.exe" if os.name == "nt" else "fairkm")


def make_people(n=90, seed=0):
    """A small table: two numeric and one text feature, three sensitive columns, an id."""
    rng = np.random.default_rng(seed)
    blob = rng.integers(0, 3, size=n)
    return pd.DataFrame({
        "id": np.arange(1000, 1000 + n),
        "income": blob * 10.0 + rng.normal(size=n),
        "tenure": blob * 3.0 + rng.normal(size=n),
        "region": np.array(["north", "south", "east"])[(blob + rng.integers(0, 2, n)) % 3],
        "sex": np.where(rng.random(n) < 0.3 + 0.2 * blob, "F", "M"),
        "group": np.array(["a", "b", "c"])[blob],
        "age": 20.0 + 10 * blob + rng.integers(0, 20, size=n),
    })


def run(capsys, *argv):
    """Run main; return (status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


BASE = ("--sensitive", "sex,group", "--n-clusters", "3")
FIT = (*BASE, "--exclude", "id")


def write_table(tmp_path, name, frame=None, text=None):
    """Write a frame as CSV (or ``text``) to ``tmp_path / name``; return the path."""
    path = tmp_path / name
    if frame is not None:
        frame.to_csv(path, index=False)
    else:
        path.write_text(text)
    return path
