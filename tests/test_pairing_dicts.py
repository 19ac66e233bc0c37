"""Sensitive features given as a dict of pandas Series are paired with X's rows by label.

A dict of columns is a documented form of ``sensitive_features``; its Series
carry index labels, and the rows they describe are those labels, whatever
the Series' order. The expected values come from the same columns put in
X's row order by hand (``S.loc[X.index]``), which pairs them by label without
any of fairkm's reading: a fit, a measure or the audit on the dict must equal
it on that hand-ordered table.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from fairkm import BoundedKMeans, FairKM
from fairkm.metrics import fairness_report
from fairkm.report import audit

pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.one_thread


def table(n=300, seed=0):
    """X with labels of a filtered table, and two attributes that lean on X's clusters."""
    rng = np.random.RandomState(seed)
    index = pd.Index(rng.permutation(5 * n)[:n], name="person")
    group = rng.randint(0, 3, n)
    X = pd.DataFrame(rng.normal(size=(n, 2)) + 3.0 * group[:, None], index=index,
                     columns=["x", "y"])
    sex = np.where(rng.uniform(size=n) < np.array([0.8, 0.3, 0.5])[group], "f", "m")
    S = pd.DataFrame({"sex": sex, "band": rng.choice(["lo", "mid", "hi"], n)}, index=index)
    return X, S


def shuffled_dict(S, seed=1):
    """The columns of S as a dict of Series, each in its own order of the same labels."""
    return {name: S[name].sample(frac=1.0, random_state=seed + j)
            for j, name in enumerate(S.columns)}


@pytest.mark.parametrize("make", [
    lambda: FairKM(3, random_state=0),
    lambda: BoundedKMeans(3, max_deviation=0.05, random_state=0, n_init=1),
], ids=["FairKM", "BoundedKMeans"])
def test_fit_pairs_a_dict_of_series_by_label(make):
    X, S = table()
    by_hand = make().fit(X, sensitive_features=S.loc[X.index]).labels_
    # Each Series in its own order: a positional reading moves the attributes between rows.
    assert not all(series.index.equals(X.index) for series in shuffled_dict(S).values())
    assert_array_equal(make().fit(X, sensitive_features=shuffled_dict(S)).labels_, by_hand)


def test_measures_and_audit_pair_a_dict_of_series_by_label():
    X, S = table()
    labels = FairKM(3, random_state=0).fit(X, sensitive_features=S).labels_
    expected = fairness_report(labels, sensitive_features=S.loc[X.index].to_numpy())
    got = fairness_report(pd.Series(labels, index=X.index), sensitive_features=shuffled_dict(S))
    pd.testing.assert_frame_equal(got, expected.set_axis(got.index), check_names=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = audit(labels, X, sensitive_features=S.loc[X.index], n_init=2)
        got = audit(labels, X, sensitive_features=shuffled_dict(S), n_init=2)
    pd.testing.assert_frame_equal(got.verdicts, expected.verdicts)


def test_a_series_with_other_labels_is_refused_naming_the_attribute():
    X, S = table()
    columns = shuffled_dict(S)
    columns["band"] = columns["band"].set_axis(columns["band"].index + 1)
    with pytest.raises(ValueError, match=r"sensitive_features\['band'\] has an index"):
        FairKM(3, random_state=0).fit(X, sensitive_features=columns)
    columns["band"] = S["band"].iloc[:-1]
    with pytest.raises(ValueError, match=r"sensitive_features\['band'\] has 299 rows"):
        FairKM(3, random_state=0).fit(X, sensitive_features=columns)


def test_a_default_index_beside_labels_pairs_by_position_with_a_warning():
    # As a Series or a DataFrame with the default index does.
    X, S = table()
    columns = {"sex": S["sex"].reset_index(drop=True), "band": S["band"]}
    with pytest.warns(UserWarning, match=r"sensitive_features\['sex'\] has the default index"):
        labels = FairKM(3, random_state=0).fit(X, sensitive_features=columns).labels_
    assert_array_equal(labels, FairKM(3, random_state=0).fit(X, sensitive_features=S).labels_)


def test_without_labels_on_x_a_dict_pairs_by_position_as_a_dataframe_does():
    X, S = table()
    X = X.to_numpy()
    frame = S.iloc[::-1]  # one index, not X's order: a DataFrame pairs by position
    by_position = FairKM(3, random_state=0).fit(X, sensitive_features=frame).labels_
    assert_array_equal(
        FairKM(3, random_state=0).fit(X, sensitive_features=frame.to_numpy()).labels_,
        by_position)
    columns = {name: frame[name] for name in frame.columns}
    assert_array_equal(FairKM(3, random_state=0).fit(X, sensitive_features=columns).labels_,
                       by_position)
    # Series of one dict in different orders: no order pairs them with X's rows.
    with pytest.raises(ValueError, match=r"sensitive_features\['band'\] has another index"):
        FairKM(3, random_state=0).fit(X, sensitive_features=shuffled_dict(S))


# --------------------------------------------------------------------------- Dask


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def test_dask_pairs_each_partition_by_label(client):
    import dask.dataframe as dd

    from fairkm.dask import FairKM as DaskFairKM

    X, S = table(400)
    Xd = dd.from_pandas(X, npartitions=4, sort=False)
    lengths = [len(part) for part in Xd.partitions]
    # Each partition of S holds its partition of X's labels, reversed.
    starts = np.cumsum([0, *lengths])
    reordered = pd.concat([S.iloc[a:b].iloc[::-1]
                           for a, b in zip(starts[:-1], starts[1:], strict=True)])
    Sd = dd.from_pandas(reordered, npartitions=4, sort=False)
    assert [len(part) for part in Sd.partitions] == lengths
    in_order = dd.from_pandas(S, npartitions=4, sort=False)

    def fit(sensitive):
        model = DaskFairKM(3, random_state=0).fit(Xd, sensitive_features=sensitive,
                                                 client=client)
        return client.compute(model.labels_).result()

    assert_array_equal(fit(Sd), fit(in_order))
    # Labels of another partition cannot be paired partition by partition: refused.
    moved = dd.from_pandas(S.iloc[::-1], npartitions=4, sort=False)
    with pytest.raises(ValueError, match="partition 0 of sensitive_features holds other"):
        fit(moved)
