"""A damaged numba cache (as a crash leaves it) costs a recompile and a warning, not a crash."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ._people import FIT, make_people

_SRC = str(Path(__file__).resolve().parents[1] / "src")

# One small cached kernel, called on fixed arrays; prints what it computed.
_KERNEL = """
import numpy as np
from fairkm.bounds._kernels import group_sums
rows = np.arange(5); group = np.array([0, 1, 0, 1, 1]); weights = np.arange(1.0, 6.0)
dist = np.arange(10.0).reshape(5, 2); z = np.ones((1, 5))
g_weight, g_cost, g_z = np.zeros(2), np.zeros((2, 2)), np.zeros((1, 2))
group_sums(rows, group, weights, dist, z, g_weight, g_cost, g_z)
print(g_weight.tolist(), g_cost.tolist(), g_z.tolist())
"""


def _env(cache):
    path = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": path}


def _run(argv, cache, cwd):
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd,
                          env=_env(cache), timeout=600, check=False)


def _damage(cache, how):
    """Damage every file of the kind ``how`` names; return how many were damaged."""
    suffix = ".nbi" if how.startswith("index") else ".nbc"
    files = sorted(cache.rglob("*" + suffix))
    for path in files:
        if how.endswith("garbage"):
            path.write_bytes(b"garbage\n")
        elif how.endswith("empty"):
            path.write_bytes(b"")
        else:  # truncated, as a write cut short
            path.write_bytes(path.read_bytes()[:64])
    return len(files)


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A private cache holding the kernel's files, and what the kernel printed."""
    cache = tmp_path_factory.mktemp("numba-cache")
    done = _run(["-c", _KERNEL], cache, cache)
    assert done.returncode == 0, done.stderr
    assert "KernelCacheWarning" not in done.stderr
    return cache, done.stdout


@pytest.mark.parametrize("how", ["index garbage", *(
    pytest.param(how, marks=pytest.mark.slow)
    for how in ("index empty", "data empty", "data truncated"))])
def test_a_damaged_cache_is_rebuilt_with_one_warning(warm_cache, tmp_path, how):
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache[0], cache)
    assert _damage(cache, how) >= 1
    done = _run(["-c", _KERNEL], cache, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == warm_cache[1]
    assert done.stderr.count("KernelCacheWarning") == 1
    assert "Traceback" not in done.stderr
    # The warning names the directory and what happened to the files.
    directory = str(next(p for p in cache.iterdir() if p.is_dir()))
    assert repr(directory) in done.stderr and "recompiles" in done.stderr
    # The kernel's files were written afresh: the next run reads them without a word.
    again = _run(["-c", _KERNEL], cache, tmp_path)
    assert again.returncode == 0 and again.stdout == warm_cache[1]
    assert again.stderr == ""


# The kernel for two types of weights: two signatures, two data files of one index.
_TWO_SIGNATURES = _KERNEL + """
g_weight, g_cost, g_z = np.zeros(2), np.zeros((2, 2)), np.zeros((1, 2))
group_sums(rows, group, np.arange(1, 6), dist, z, g_weight, g_cost, g_z)
print(g_weight.tolist(), g_cost.tolist(), g_z.tolist())
"""


def test_an_entry_holding_another_signatures_kernel_is_recompiled(tmp_path):
    cache = tmp_path / "cache"
    first = _run(["-c", _TWO_SIGNATURES], cache, tmp_path)
    assert first.returncode == 0, first.stderr
    # Integer weights of the same values: the same sums.
    lines = first.stdout.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    # As two processes saving their new signature at once leave it: the index names, for
    # each signature, the file holding the other's code.
    data = sorted(cache.rglob("_kernels.group_sums-*.nbc"))
    assert len(data) == 2
    one, two = data[0].read_bytes(), data[1].read_bytes()
    data[0].write_bytes(two)
    data[1].write_bytes(one)
    done = _run(["-c", _TWO_SIGNATURES], cache, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == first.stdout
    assert done.stderr.count("KernelCacheWarning") == 1
    assert "holds the kernel compiled for" in done.stderr and "recompiles" in done.stderr
    again = _run(["-c", _TWO_SIGNATURES], cache, tmp_path)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert again.stderr == ""


def test_a_damaged_cache_that_cannot_be_removed_names_the_directory(warm_cache, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache[0], cache)
    _damage(cache, "index garbage")
    # As on a read-only installation: removing a file fails.
    refuse = "import os\ndef refuse(path):\n    raise PermissionError(13, 'denied', path)\n" \
        "os.remove = refuse\n"
    done = _run(["-c", refuse + _KERNEL], cache, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == warm_cache[1]
    assert "could not be removed" in done.stderr and "delete the directory" in done.stderr
    directory = str(next(p for p in cache.iterdir() if p.is_dir()))
    assert repr(directory) in done.stderr


@pytest.mark.slow
def test_fit_on_the_command_line_survives_a_damaged_cache(tmp_path):
    make_people().to_csv(tmp_path / "people.csv", index=False)
    cache = tmp_path / "numba-cache"
    argv = ["-m", "fairkm", "fit", "people.csv", *FIT, "--output", "out.csv", "--quiet",
            "--overwrite"]
    first = _run(argv, cache, tmp_path)
    assert first.returncode == 0, first.stderr
    labels = (tmp_path / "out.csv").read_text()
    assert _damage(cache, "index garbage") > 10
    done = _run(argv, cache, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "damaged" in done.stderr
    assert (tmp_path / "out.csv").read_text() == labels
