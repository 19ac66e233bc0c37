"""Fixtures shared by the test modules: the real datasets next to the checkout."""

import shutil
from pathlib import Path

import pytest

# The real datasets live in ../shared/data next to the checkout; they are never committed.
SHARED_DATA = Path(__file__).parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """The read-only ../shared/data folder; tests that need it skip when it is absent."""
    if not (SHARED_DATA / "adult" / "adult.data").is_file():
        pytest.skip(f"the real data files are not at {SHARED_DATA} (the shared/ folder)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def writable_data_home(shared_data, tmp_path_factory):
    """A writable copy of ../shared/data (the loaders cache derived files next to the data)."""
    home = tmp_path_factory.mktemp("data_home")
    for name in ("adult", "kinematics"):
        shutil.copytree(shared_data / name, home / name)
        for path in (home / name).iterdir():
            path.chmod(0o644)
        (home / name).chmod(0o755)
    return home
