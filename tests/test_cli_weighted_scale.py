"""The command line standardises numeric features with the row weights (--weight-column).

A row of weight w stands for w people, so a file of distinct rows with
counts must be clustered in the space of the same people listed one per row:
the standardised features of the collapsed file, each row repeated its count
of times, are those of the expanded file (whose standardisation counts each
person once, with no weights), and each numeric column has weighted mean 0
and weighted variance 1, recounted here with NumPy.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import fairkm

from ._people import FIT, make_people, run


@pytest.fixture
def fitted_X(monkeypatch):
    """Record the X each FairKM.fit is given, and let it run."""
    seen = []
    fit = fairkm.FairKM.fit

    def fit_spy(self, X, *args, **kwargs):
        seen.append(np.array(X))
        return fit(self, X, *args, **kwargs)

    monkeypatch.setattr(fairkm.FairKM, "fit", fit_spy)
    return seen


def test_collapsed_rows_with_counts_are_standardised_as_the_people_expanded(
        capsys, tmp_path, fitted_X):
    people = make_people()
    counts = 1 + np.random.default_rng(2).integers(0, 4, len(people))
    collapsed, expanded = tmp_path / "collapsed.csv", tmp_path / "expanded.csv"
    people.assign(n=counts).to_csv(collapsed, index=False)
    people.loc[people.index.repeat(counts)].to_csv(expanded, index=False)
    status, out, err = run(capsys, "fit", collapsed, *FIT, "--weight-column", "n", "--quiet")
    assert status == 0, err
    status, _, err = run(capsys, "fit", expanded, *FIT, "--quiet")
    assert status == 0, err
    weighted, one_per_person = fitted_X
    assert_allclose(np.repeat(weighted, counts, axis=0), one_per_person, rtol=1e-12,
                    atol=1e-12)
    numeric = weighted[:, -3:]  # income, tenure, age: numeric columns come last
    mean = counts @ numeric / counts.sum()
    assert_allclose(mean, 0.0, atol=1e-12)
    assert_allclose(counts @ (numeric - mean) ** 2 / counts.sum(), 1.0, rtol=1e-12)
