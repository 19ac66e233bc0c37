"""No leaked rows, no silently wrong predictions, no overflow, no rounding cycles, threads."""

import dataclasses
import pickle
import threading

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        2000, n_features=3, centers=4, n_values=(2, 5), numeric=1, cluster_std=2.0,
        random_state=0,
    )
    return X, sensitive


def arrays_in(obj, seen=None):
    """Every numpy array reachable from ``obj`` through attributes, dataclasses and containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield obj
        if obj.dtype == object:
            for item in obj.ravel():
                yield from arrays_in(item, seen)
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from arrays_in(value, seen)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from arrays_in(value, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from arrays_in(getattr(obj, f.name), seen)
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("fairkm"):
        yield from arrays_in(vars(obj), seen)


# --------------------------------------------------------------------------- leak nothing


def test_a_fitted_model_keeps_no_row_of_the_sensitive_features(blobs):
    X, sensitive = blobs
    n = len(X)
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    per_row = [a for a in arrays_in(vars(model)) if a.ndim and a.shape[0] == n]
    # labels_ is the one per-row output, as for scikit-learn's KMeans.
    assert len(per_row) == 1 and per_row[0] is model.labels_
    # Pickled, the model grows by the labels alone as the data grows.
    small = FairKM(4, random_state=0).fit(X[:500], sensitive_features=sensitive[:500])
    growth = len(pickle.dumps(model)) - len(pickle.dumps(small))
    assert growth <= 8 * (n - 500) + 2000


def test_a_dask_model_keeps_no_row_either(blobs):
    pytest.importorskip("distributed")
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from fairkm.dask import FairKM as DaskFairKM

    X, sensitive = blobs
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        model = DaskFairKM(4, random_state=0).fit(
            da.from_array(X, chunks=(500, 3)),
            sensitive_features=dd.from_pandas(sensitive, npartitions=4), client=client,
        )
        state = {k: v for k, v in vars(model).items() if k != "labels_"}
        assert not [a for a in arrays_in(state) if a.ndim and a.shape[0] == len(X)]


# --------------------------------------------------------------------------- never silently wrong


def test_predict_matches_categories_given_as_text(blobs):
    X, sensitive = blobs
    codes = sensitive.assign(s1=sensitive["s1"].str[1:].astype(int))
    model = FairKM(4, random_state=0).fit(X, sensitive_features=codes)
    as_text = codes.assign(s1=codes["s1"].astype(str))
    assert_array_equal(model.predict(X, sensitive_features=as_text),
                       model.predict(X, sensitive_features=codes))


def test_predict_refuses_values_of_another_kind_that_match_nothing(blobs):
    X, sensitive = blobs
    codes = sensitive.assign(s1=sensitive["s1"].str[1:].astype(int))
    model = FairKM(4, random_state=0).fit(X, sensitive_features=codes)
    renamed = codes.assign(s1="group " + codes["s1"].astype(str))
    with pytest.raises(ValueError, match=r"'s1' was fitted with integer values .* string"):
        model.predict(X, sensitive_features=renamed)
    # New values of the fitted kind are unseen values, priced as proportion 0.
    unseen = codes.assign(s1=codes["s1"] + 100)
    assert model.predict(X, sensitive_features=unseen).shape == (len(X),)


def test_overflowing_X_is_refused_with_advice(blobs):
    X, sensitive = blobs
    with pytest.raises(ValueError, match=r"X is too large.*largest \|x\| = 1.5.e\+156.*rescale"):
        FairKM(4).fit(X * 1e155, sensitive_features=sensitive)


def test_overflowing_numeric_attribute_is_not_called_constant(blobs):
    X, sensitive = blobs
    huge = sensitive.assign(z0=sensitive["z0"] * 1e300)
    with pytest.raises(ValueError, match=r"'z0' is too large to standardise.*rescale"):
        FairKM(4).fit(X, sensitive_features=huge)


def test_rounding_alone_never_moves_a_point():
    """Identical points: their move prices differ only by rounding (1e-32).

    pytest turns a ConvergenceWarning (the fit cycling up to max_iter) into an error.
    """
    X = np.full((32, 1), -0.4099717551079468)
    with pytest.warns(ConvergenceWarning) as caught:
        model = FairKM(4, tol=0.0, random_state=88).fit(X)
    # One distinct row and four clusters: that warning, and no other (no cycling).
    assert [str(w.message)[:36] for w in caught] == ["FairKM found 1 distinct clusters, fe"]
    assert model.n_iter_ <= 2
    assert np.all(np.bincount(model.labels_, minlength=4) > 0)


# --------------------------------------------------------------------------- concurrency


def test_fits_in_threads_give_the_labels_of_serial_fits(blobs):
    X, sensitive = blobs
    serial = [FairKM(4, random_state=seed).fit(X, sensitive_features=sensitive).labels_
              for seed in (0, 1)]
    results = [None, None]

    def fit(slot, seed):
        results[slot] = FairKM(4, random_state=seed).fit(X, sensitive_features=sensitive).labels_

    threads = [threading.Thread(target=fit, args=(slot, seed)) for slot, seed in enumerate((0, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for got, want in zip(results, serial, strict=True):
        assert_array_equal(got, want)


def test_the_kernels_release_the_gil():
    from fairkm.cluster import _kernels

    # Every compiled function of the engine's compile unit, helpers included.
    compiled = {f for name, f in vars(_kernels).items()
                if hasattr(f, "targetoptions") and not name.startswith("__")}
    assert len(compiled) > 20
    assert all(f.targetoptions.get("nogil") for f in compiled), [
        f.__name__ for f in compiled if not f.targetoptions.get("nogil")
    ]


def test_pandas_index_does_not_matter(blobs):
    X, sensitive = blobs
    shuffled = sensitive.set_index(pd.Index(np.arange(len(X))[::-1]))
    assert_array_equal(
        FairKM(4, random_state=0).fit(X, sensitive_features=shuffled).labels_,
        FairKM(4, random_state=0).fit(X, sensitive_features=sensitive).labels_,
    )


def test_dask_raises_when_every_worker_is_gone(monkeypatch):
    """Tasks wait for ever for a worker; the fit must not."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from fairkm.dask import _collections

    monkeypatch.setattr(_collections, "NO_WORKERS_PATIENCE", 2.0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        pending = client.submit(sum, [1, 2])
        with pytest.raises(RuntimeError, match=r"no worker for 2 s during round 3"):
            _collections.gather(client, [pending], "round 3")
