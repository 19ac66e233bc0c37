"""fairkm.dask: FairKM on partitioned Dask collections, on a LocalCluster of two processes."""

import copy
import importlib
import os
import signal
import sys

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.pipeline import Pipeline

pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402

from fairkm import FairKM as LocalFairKM
from fairkm.dask import FairKM
from fairkm.dask._tasks import random_labels as _random_labels
from fairkm.datasets import make_sensitive_blobs

from . import _reference  # noqa: E402
from ._problems import EXPONENT_OF_WEIGHTING  # noqa: E402

N, K, CHUNK = 2000, 4, 500


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    # Not the default client: the test of a missing client needs none, and the
    # others pass it explicitly (as a user with several clusters would).
    with Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def data():
    """Blobs with two categorical (string) attributes and a numeric one, in four partitions."""
    X, sensitive, _ = make_sensitive_blobs(
        N, n_features=3, centers=K, n_values=(2, 3), numeric=1, cluster_std=1.5, random_state=0
    )
    centers, _ = kmeans_plusplus(X, K, random_state=1)
    return dict(
        X=X,
        S=sensitive,
        Xd=da.from_array(X, chunks=(CHUNK, 3)),
        Sd=dd.from_pandas(sensitive, chunksize=CHUNK),
        centers=centers,
    )


def compute(client, collection):
    return client.compute(collection).result()


def problem(data, fairness_weight):
    S = data["S"]
    return _reference.Problem(
        data["X"], [S["s0"].to_numpy(), S["s1"].to_numpy()], [S["z0"].to_numpy()],
        np.ones(2), np.ones(1), fairness_weight, K,
    )


@pytest.fixture(scope="module")
def fitted(client, data):
    """A fit from given centres, and the single-machine exact fit from the same centres."""
    model = FairKM(K, fairness_weight="paper", init=data["centers"]).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    exact = LocalFairKM(K, fairness_weight="paper", init=data["centers"], algorithm="exact").fit(
        data["X"], sensitive_features=data["S"]
    )
    return model, compute(client, model.labels_), exact


def test_import_without_dask_names_the_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "fairkm.dask")
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"pip install 'fairkm\[dask\]'"):
        importlib.import_module("fairkm.dask")


def test_objective_within_one_percent_of_the_exact_engine_from_the_same_start(data, fitted):
    model, labels, exact = fitted
    # The same centres give the same initial labels: the starts agree.
    assert_allclose(model.objective_history_[0], exact.objective_history_[0], rtol=1e-9)
    assert abs(model.objective_ - exact.objective_) <= 0.01 * exact.objective_
    # The reported objective is that of the labels, recomputed from scratch.
    lam = (N / K) ** 2
    assert model.fairness_weight_ == lam
    assert_allclose(model.objective_, _reference.objective(problem(data, lam), labels),
                    rtol=1e-9)


def test_objective_history_never_rises(fitted):
    model, _, _ = fitted
    history = model.objective_history_
    assert history.shape == (model.n_iter_ + 1,)
    assert model.n_iter_ > 1
    assert np.all(np.diff(history) <= 0)
    assert_allclose(history[-1], model.objective_, rtol=1e-9)


def test_fitted_statistics_match_the_labels(data, fitted):
    model, labels, _ = fitted
    X = data["X"]
    assert isinstance(model.labels_, da.Array)
    assert model.labels_.chunks == ((CHUNK,) * (N // CHUNK),)
    counts = np.bincount(labels, minlength=K)
    assert np.all(counts > 0)
    assert_array_equal(model._fitted_stats[0], counts)
    for c in range(K):
        assert_allclose(model.cluster_centers_[c], X[labels == c].mean(axis=0))
    assert_allclose(model.inertia_, _reference.inertia(X, labels, K), rtol=1e-10)
    assert_allclose(model.fairness_, _reference.fairness(problem(data, 0.0), labels),
                    rtol=1e-9)
    assert_allclose(model.objective_, model.inertia_ + model.fairness_weight_ * model.fairness_)


def test_sensitive_encoding_matches_fairkm(fitted):
    model, _, exact = fitted
    got, want = model.sensitive_attributes_, exact.sensitive_attributes_
    assert_array_equal(got.names, ["s0", "s1", "z0"])
    assert_array_equal(got.kinds, want.kinds)
    assert_array_equal(got.kinds, ["categorical", "categorical", "numeric"])
    for got_values, want_values in zip(got.categories[:2], want.categories[:2], strict=True):
        assert_array_equal(got_values, want_values)
    for got_shares, want_shares in zip(got.proportions[:2], want.proportions[:2], strict=True):
        assert_allclose(got_shares, want_shares, rtol=1e-15)
    assert got.categories[2] is None
    assert_allclose(got.means[2], want.means[2], rtol=1e-12)
    assert_allclose(got.scales[2], want.scales[2], rtol=1e-12)
    assert_array_equal(model.attribute_weights_, [1.0, 1.0, 1.0])


def test_same_seed_and_partitioning_give_identical_labels(client, data):
    # A sample smaller than the data: the seeds come from sampled rows.
    runs = []
    for _ in range(2):
        with pytest.warns(ConvergenceWarning):
            runs.append(FairKM(K, fairness_weight="paper", init_size=300, random_state=5,
                               max_iter=6).fit(
                data["Xd"], sensitive_features=data["Sd"], client=client
            ))
    assert_array_equal(compute(client, runs[0].labels_), compute(client, runs[1].labels_))
    assert_array_equal(runs[0].objective_history_, runs[1].objective_history_)
    assert runs[0].objective_ == runs[1].objective_


@pytest.mark.slow
def test_routed_pipeline_passes_sensitive_features(client, data, fitted):
    # As for the in-memory estimators (test_family.py): sensitive_features are
    # requested by default; the client, like sample_weight, is requested by hand.
    model, labels, _ = fitted
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("fairkm", FairKM(K, fairness_weight="paper", init=data["centers"])
                                    .set_fit_request(client=True))])
        routed = pipe.fit_predict(data["Xd"], sensitive_features=data["Sd"], client=client)
        assert_array_equal(compute(client, routed), labels)
        assert_array_equal(
            compute(client, pipe.predict(data["Xd"], sensitive_features=data["Sd"])),
            compute(client, model.predict(data["Xd"], sensitive_features=data["Sd"])))


def test_small_data_k_means_plus_plus_starts_as_fairkm(client, data):
    # Fewer rows than init_size: k-means++ sees every row, with FairKM's seed.
    with pytest.warns(ConvergenceWarning, match="max_iter=1 rounds"):
        model = FairKM(K, fairness_weight="paper", random_state=3, max_iter=1).fit(
            data["Xd"], sensitive_features=data["Sd"], client=client
        )
    with pytest.warns(ConvergenceWarning):
        exact = LocalFairKM(K, fairness_weight="paper", random_state=3, max_iter=1).fit(
            data["X"], sensitive_features=data["S"]
        )
    assert_allclose(model.objective_history_[0], exact.objective_history_[0], rtol=1e-9)


def test_one_partition_sweeps_exactly_as_the_exact_engine(client, data):
    one = dict(Xd=da.from_array(data["X"], chunks=(N, 3)),
               Sd=dd.from_pandas(data["S"], npartitions=1))
    with pytest.warns(ConvergenceWarning):
        model = FairKM(K, fairness_weight="paper", init=data["centers"], max_iter=3,
                       tol=0.0).fit(one["Xd"], sensitive_features=one["Sd"], client=client)
    with pytest.warns(ConvergenceWarning):
        exact = LocalFairKM(K, fairness_weight="paper", init=data["centers"], max_iter=3,
                            tol=0.0).fit(data["X"], sensitive_features=data["S"])
    assert_array_equal(compute(client, model.labels_), exact.labels_)
    assert_allclose(model.objective_history_, exact.objective_history_, rtol=1e-9)


def test_empty_initial_cluster_gets_the_farthest_point_as_in_fairkm(client, data):
    centers = data["centers"].copy()
    centers[2] = 1e3  # no row is nearest to it
    with pytest.warns(ConvergenceWarning):
        model = FairKM(K, fairness_weight="paper", init=centers, max_iter=1).fit(
            data["Xd"], sensitive_features=data["Sd"], client=client
        )
    with pytest.warns(ConvergenceWarning):
        exact = LocalFairKM(K, fairness_weight="paper", init=centers, max_iter=1).fit(
            data["X"], sensitive_features=data["S"]
        )
    assert_allclose(model.objective_history_[0], exact.objective_history_[0], rtol=1e-9)
    assert np.all(np.bincount(compute(client, model.labels_), minlength=K) > 0)


def test_random_init_gives_equal_sizes_and_a_consistent_fit(client, data):
    # Each partition continues the cycle 0..k-1 where the previous one stopped.
    start = np.concatenate([_random_labels(n, offset, 3, seed) for n, offset, seed in
                            [(5, 0, 1), (0, 5, 2), (7, 5, 3), (4, 12, 4)]])
    assert_array_equal(np.bincount(start), [6, 5, 5])
    model = FairKM(K, fairness_weight="paper", init="random", random_state=0).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    labels = compute(client, model.labels_)
    lam = model.fairness_weight_
    assert_allclose(model.objective_, _reference.objective(problem(data, lam), labels),
                    rtol=1e-9)
    assert np.all(np.diff(model.objective_history_) <= 0)
    assert model.objective_ < model.objective_history_[0]


def test_dataframe_input_matches_array_input(client, data, fitted):
    model, labels, _ = fitted
    frame = dd.from_pandas(pd.DataFrame(data["X"], columns=["a", "b", "c"]), chunksize=CHUNK)
    from_frame = FairKM(K, fairness_weight="paper", init=data["centers"]).fit(
        frame, sensitive_features=data["Sd"], client=client
    )
    assert_array_equal(compute(client, from_frame.labels_), labels)
    assert_array_equal(from_frame.feature_names_in_, ["a", "b", "c"])
    assert from_frame.objective_ == model.objective_
    renamed = dd.from_pandas(pd.DataFrame(data["X"], columns=["a", "b", "x"]), chunksize=CHUNK)
    with pytest.raises(ValueError, match="columns"):
        from_frame.predict(renamed)
    # A dask array as sensitive features, one column per attribute.
    codes = data["S"][["s0", "s1"]].apply(lambda col: col.str[1:].astype(np.int64))
    with pytest.warns(ConvergenceWarning):
        as_array = FairKM(K, fairness_weight="paper", init=data["centers"], max_iter=1).fit(
            data["Xd"], sensitive_features=da.from_array(codes.to_numpy(), chunks=(CHUNK, 2)),
            client=client,
        )
    assert_array_equal(as_array.sensitive_attributes_.kinds, ["categorical", "categorical"])
    assert_array_equal(as_array.sensitive_attributes_.categories[1], [0, 1, 2])


def test_predict_matches_nearest_centre_and_reference_insertion(client, data, fitted):
    model, labels, _ = fitted
    rng = np.random.RandomState(0)
    new = data["X"][:40] + rng.normal(scale=0.5, size=(40, 3))
    new_sensitive = data["S"].iloc[:40].reset_index(drop=True)
    new_sensitive.loc[0, "s1"] = "unseen"
    Sd = dd.from_pandas(new_sensitive, npartitions=3)
    lengths = tuple(int(n) for n in Sd.map_partitions(len).compute(scheduler="sync"))
    Xd = da.from_array(new, chunks=(lengths, 3))

    with pytest.warns(UserWarning, match="none were given"):  # as fairkm.FairKM warns
        nearest = compute(client, model.predict(Xd))
    dist = ((new[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    assert_array_equal(nearest, dist.argmin(axis=1))

    fair = compute(client, model.predict(Xd, sensitive_features=Sd))
    prob = problem(data, model.fairness_weight_)
    for i in range(len(new)):
        row = new_sensitive.iloc[i]
        costs = _reference.insertion_costs(
            prob, labels, model.cluster_centers_, new[i], [row["s0"], row["s1"]], [row["z0"]]
        )
        assert fair[i] == costs.argmin()
    # Block by block, as the single-machine model predicts the whole array.
    whole = model._predictor().predict(new, sensitive_features=new_sensitive)
    assert_array_equal(fair, whole)


def test_without_sensitive_features_and_with_zero_weight(client, data):
    blind = FairKM(K, init=data["centers"]).fit(data["Xd"], client=client)
    exact = LocalFairKM(K, init=data["centers"]).fit(data["X"])
    assert blind.fairness_ == 0.0
    assert len(blind.sensitive_attributes_.names) == 0
    assert abs(blind.inertia_ - exact.inertia_) <= 0.01 * exact.inertia_
    zero = FairKM(K, init=data["centers"], fairness_weight=0.0).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    labels = compute(client, zero.labels_)
    assert_array_equal(labels, compute(client, blind.labels_))
    assert_allclose(zero.fairness_, _reference.fairness(problem(data, 0.0), labels), rtol=1e-9)
    assert zero.fairness_ > 0.0
    with pytest.raises(ValueError, match="fitted without them"):
        blind.predict(data["Xd"], sensitive_features=data["Sd"])


def test_an_empty_partition_keeps_its_place(client, data):
    X, S = data["X"], data["S"]
    chunks = (1000, 0, 1000)
    Xd = da.from_array(X, chunks=(chunks, 3))
    Sd = da.from_array(S["s1"].to_numpy(dtype=object), chunks=(chunks,))
    with pytest.warns(ConvergenceWarning):
        model = FairKM(K, init=data["centers"], max_iter=2).fit(
            Xd, sensitive_features=Sd, client=client
        )
    assert model.labels_.chunks == (chunks,)
    labels = compute(client, model.labels_)
    assert_allclose(model.inertia_, _reference.inertia(X, labels, K), rtol=1e-10)
    predicted = model.predict(Xd, sensitive_features=Sd)
    assert predicted.chunks == (chunks,)
    assert compute(client, predicted).shape == (N,)


def test_default_client(client, data):
    with client.as_current(), pytest.warns(ConvergenceWarning):
        model = FairKM(K, init=data["centers"], max_iter=1).fit(
            data["Xd"], sensitive_features=data["Sd"]
        )
        assert model.labels_.compute().shape == (N,)


def test_without_a_client_the_error_says_so(data):
    with pytest.raises(RuntimeError, match=r"needs a dask\.distributed Client"):
        FairKM(K).fit(data["Xd"], sensitive_features=data["Sd"])


def test_partitions_must_match(client, data):
    with pytest.raises(ValueError, match="has 2 partitions but X has 4"):
        FairKM(K).fit(data["Xd"], sensitive_features=dd.from_pandas(data["S"], npartitions=2),
                      client=client)
    uneven = da.from_array(np.zeros(N, dtype=np.int64), chunks=((400, 600, 500, 500),))
    with pytest.raises(ValueError, match="partition 0 of sensitive_features has 400 rows"):
        FairKM(K).fit(data["Xd"], sensitive_features=uneven, client=client)
    # Unknown lengths are compared once the partitions have been read.
    shifted = dd.from_pandas(data["S"], chunksize=CHUNK).repartition(
        divisions=[0, 400, 1000, 1500, N - 1]
    )
    with pytest.raises(ValueError, match="partition 0 of sensitive_features has 400 rows"):
        FairKM(K).fit(data["Xd"], sensitive_features=shifted, client=client)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"fairness_weight": -1.0}, "fairness_weight"),
        ({"fairness_weight": "big"}, "fairness_weight"),
        ({"init": "farthest"}, "init"),
        ({"init": np.zeros((3, 3))}, "init array"),
        ({"init_size": 0}, "init_size"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1.0}, "tol"),
        ({"attribute_weights": [1.0]}, "attribute_weights"),
        ({"numeric_sensitive": "yes"}, "numeric_sensitive"),
    ],
)
def test_invalid_parameters(client, data, params, match):
    with pytest.raises(ValueError, match=match):
        FairKM(**{"n_clusters": K, **params}).fit(
            data["Xd"], sensitive_features=data["Sd"], client=client
        )


def test_invalid_inputs(client, data):
    with pytest.raises(TypeError, match="dask array or a dask DataFrame"):
        FairKM(K).fit(data["X"], client=client)
    with pytest.raises(TypeError, match="sensitive_features must be a dask"):
        FairKM(K).fit(data["Xd"], sensitive_features=data["S"], client=client)
    with pytest.raises(TypeError, match="client"):
        FairKM(K).fit(data["Xd"], client="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match=r"n_samples=2000 should be >= n_clusters=3000"):
        FairKM(3000).fit(data["Xd"], client=client)
    missing = data["S"].copy()
    missing.loc[1700, "s0"] = None
    with pytest.raises(ValueError,
                       match=r"missing value .* row labelled 1700 \(position 200\) of partition 3"):
        FairKM(K).fit(data["Xd"], sensitive_features=dd.from_pandas(missing, chunksize=CHUNK),
                      client=client)
    constant = data["S"].assign(z0=1.0)
    with pytest.raises(ValueError, match="'z0' has zero variance"):
        FairKM(K).fit(data["Xd"], sensitive_features=dd.from_pandas(constant, chunksize=CHUNK),
                      client=client)
    with pytest.raises(NotFittedError):
        FairKM(K).predict(data["Xd"])


def test_predict_checks_its_input(fitted, data):
    model, _, _ = fitted
    with pytest.raises(ValueError, match="X has 2 features"):
        model.predict(data["Xd"][:, :2])
    with pytest.raises(ValueError, match="columns"):
        model.predict(data["Xd"], sensitive_features=data["Sd"][["s1", "s0", "z0"]])


def cancel_gathers_of(client, monkeypatch, prefix):
    """Cancel the futures of every gather that waits on a task whose key starts with ``prefix``.

    Cancelled futures are what a gather sees when Dask cannot recompute lost results.
    """
    gather = client.gather

    def cancelling(futures, *args, **kwargs):
        if isinstance(futures, list) and any(str(f.key).startswith(prefix) for f in futures):
            client.cancel(futures)
        return gather(futures, *args, **kwargs)

    monkeypatch.setattr(client, "gather", cancelling)


def test_lost_results_raise_a_clear_error(client, data, monkeypatch):
    cancel_gathers_of(client, monkeypatch, "fairkm-moves-r1-")
    model = FairKM(K, init=data["centers"])
    with pytest.raises(RuntimeError,
                       match=r"during round 2 .*; no labels were kept from this fit: call fit "
                             r"again\."):
        model.fit(data["Xd"], sensitive_features=data["Sd"], client=client)
    assert not hasattr(model, "labels_")


def test_lost_results_during_a_score_say_to_score_again(fitted, client, data, monkeypatch):
    model, _, _ = fitted
    cancel_gathers_of(client, monkeypatch, "score_block")
    with pytest.raises(RuntimeError,
                       match=r"during the score .*; no score was computed: call score again\.$"):
        model.score(data["Xd"], sensitive_features=data["Sd"], client=client)


class KillWorkerAtTask(SchedulerPlugin):
    """Kill a worker process the moment a task whose key starts with ``prefix`` is scheduled."""

    def __init__(self, prefix, pid):
        self.prefix, self.pid, self.fired = prefix, pid, False

    def transition(self, key, start, finish, *args, **kwargs):
        if not self.fired and finish == "processing" and str(key).startswith(self.prefix):
            self.fired = True
            os.kill(self.pid, signal.SIGKILL)


def test_worker_killed_mid_fit_recovers_or_fails_clearly(cluster, client, data):
    # Runs last: the killed worker is restarted by its nanny before the module ends.
    def fit():
        with pytest.warns(ConvergenceWarning):
            return FairKM(K, fairness_weight="paper", init=data["centers"], max_iter=5).fit(
                data["Xd"], sensitive_features=data["Sd"], client=client
            )

    labels = compute(client, fit().labels_)
    scheduler = cluster.scheduler
    pid = sorted(client.run(os.getpid).values())[0]
    plugin = KillWorkerAtTask("fairkm-sweep-r2-p0-", pid)
    scheduler.add_plugin(plugin, name="kill-worker")
    try:
        model = fit()
    except RuntimeError as exc:
        assert "no labels were kept from this fit: call fit again." in str(exc)
        model = None
    finally:
        scheduler.remove_plugin(name="kill-worker")
    assert plugin.fired
    if model is not None:
        # Lost results were recomputed from their inputs: the labels are those
        # of the uninterrupted fit, and the objective is theirs.
        got = compute(client, model.labels_)
        assert_array_equal(got, labels)
        lam = model.fairness_weight_
        assert_allclose(model.objective_, _reference.objective(problem(data, lam), got),
                        rtol=1e-9)
    client.wait_for_workers(2, timeout=60)


@pytest.mark.slow
def test_the_scale_free_weight_and_budgets_on_dask(client, data):
    """The default measures against the S-blind clustering, as fairkm.FairKM does."""
    model = FairKM(K, init=data["centers"]).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    exact = LocalFairKM(K, init=data["centers"]).fit(data["X"], sensitive_features=data["S"])
    assert model.relative_weight_ == 1.0
    assert_allclose(model.blind_clustering_.inertia, exact.blind_clustering_.inertia, rtol=0.01)
    assert_allclose(model.blind_clustering_.attribute_fairness,
                    exact.blind_clustering_.attribute_fairness, rtol=0.05)
    assert model.unfairness_ratio_ < 0.9 and exact.unfairness_ratio_ < 0.9
    assert_allclose(model.unfairness_ratio_, exact.unfairness_ratio_, atol=0.05)
    assert abs(model.objective_ - exact.objective_) <= 0.01 * exact.objective_
    labels = compute(client, model.labels_)
    e = EXPONENT_OF_WEIGHTING[model.cluster_weighting_]
    S = data["S"]
    one = [([S["s0"].to_numpy()], []), ([S["s1"].to_numpy()], []), ([], [S["z0"].to_numpy()])]
    assert_allclose(model.attribute_fairness_,
                    [_reference.fairness(_reference.Problem(
                        data["X"], cat, num, np.ones(len(cat)), np.ones(len(num)), 1.0, K,
                        cluster_exponent=e), labels) for cat, num in one],
                    rtol=1e-9)
    budget = FairKM(K, init=data["centers"], max_cost=0.02).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    assert 0 < budget.cost_increase_ <= 0.02
    assert budget.unfairness_ratio_ > model.unfairness_ratio_


def test_intersections_on_dask_match_fairkm(client, data):
    """The combined attribute is formed per partition, as fairkm.FairKM forms it on all rows."""
    pair = [("s0", "s1")]
    model = FairKM(K, fairness_weight="paper", init=data["centers"], intersections=pair).fit(
        data["Xd"], sensitive_features=data["Sd"], client=client
    )
    exact = LocalFairKM(K, fairness_weight="paper", init=data["centers"],
                        intersections=pair).fit(data["X"], sensitive_features=data["S"])
    got, want = model.sensitive_attributes_, exact.sensitive_attributes_
    assert list(got.names) == ["s0", "s1", "z0", "s0 & s1"]
    assert_array_equal(got.kinds, want.kinds)
    assert_array_equal(got.categories[3], want.categories[3])
    assert_allclose(got.proportions[3], want.proportions[3], rtol=1e-15)
    # Two values of s0 and three of s1 all occur together: six combined groups.
    assert len(model.sensitive_attributes_.categories[3]) == 6
    # predict takes the raw attributes and forms the combinations, block by block.
    fair = compute(client, model.predict(data["Xd"], sensitive_features=data["Sd"]))
    whole = model._predictor().predict(data["X"], sensitive_features=data["S"])
    assert_array_equal(fair, whole)


# -------------------------------------------------------------------- parity with fairkm.FairKM


def small(data, n_parts):
    """The first 400 rows, in ``n_parts`` equal partitions, and weights with some zeros."""
    X, S = data["X"][:400], data["S"].iloc[:400]
    weights = np.where(np.arange(400) % 9 == 0, 0.0, 1.0 + np.arange(400) % 3)
    return (X, S, weights, da.from_array(X, chunks=(400 // n_parts, 3)),
            dd.from_pandas(S, npartitions=n_parts))


@pytest.mark.slow
def test_weights_scaled_alike_give_the_same_fit(client, data):
    # The unit is computed over both partitions: 1e200 overflowed the weight total, 1e-300
    # divided by zero.
    _, _, weights, Xd, Sd = small(data, 2)
    factors = [1.0, 1e6, 1e-6, 1.0 / weights.sum(), 1e200, 1e-300]
    with pytest.warns(ConvergenceWarning):  # a few rounds of each phase, the same in each fit
        fits = [FairKM(K, init=data["centers"], max_iter=4).fit(
            Xd, sensitive_features=Sd, sample_weight=da.from_array(weights * f, chunks=200),
            client=client) for f in factors]
    labels = compute(client, fits[0].labels_)
    assert len(np.unique(labels)) == K
    # New rows are priced as rows of the fit's mean weight, whatever the weights' scale.
    predicted = compute(client, fits[0].predict(Xd, sensitive_features=Sd))
    for factor, model in zip(factors, fits, strict=True):
        assert_array_equal(compute(client, model.labels_), labels)
        assert_array_equal(compute(client, model.predict(Xd, sensitive_features=Sd)), predicted)
        for name in ("inertia_", "objective_", "fairness_weight_"):
            assert_allclose(getattr(model, name), factor * getattr(fits[0], name), rtol=1e-9)
        assert_allclose(model.blind_clustering_.inertia,
                        factor * fits[0].blind_clustering_.inertia, rtol=1e-9)
        assert_allclose(model.unfairness_ratio_, fits[0].unfairness_ratio_, rtol=1e-9)


@pytest.mark.parametrize(("fairness_weight", "factor"),
                         [("auto", 1e-300), (1e4 * 1e200, 1e200), ("paper", 1e6)])
def test_weighted_fit_on_one_partition_is_the_in_memory_fit(client, data, fairness_weight,
                                                            factor):
    # An absolute weight is in the weights' unit: scaled with them, it keeps its meaning;
    # the paper's counts the rows the weighted rows stand for, (total weight / k)^2.
    X, S, weights, Xd, Sd = small(data, 1)
    model = FairKM(K, fairness_weight=fairness_weight, init=data["centers"]).fit(
        Xd, sensitive_features=Sd, sample_weight=da.from_array(weights * factor, chunks=400),
        client=client)
    local = LocalFairKM(K, fairness_weight=fairness_weight, init=data["centers"],
                        algorithm="exact").fit(X, sensitive_features=S,
                                               sample_weight=weights * factor)
    assert_array_equal(compute(client, model.labels_), local.labels_)
    assert_allclose(model.objective_, local.objective_, rtol=1e-9)
    assert_allclose(model.fairness_, local.fairness_, rtol=1e-9)
    if fairness_weight == "paper":
        assert_allclose(model.fairness_weight_, (factor * weights.sum() / K) ** 2, rtol=1e-12)


@pytest.mark.parametrize("weights", [
    np.r_[1.0, 1.0, 1.0, -1.0, np.ones(396)], np.r_[np.ones(3), np.nan, np.ones(396)],
    np.r_[np.ones(3), np.inf, np.ones(396)], np.zeros(400), -1.0,
    np.r_[1e-150, np.full(399, 1e150)], np.ones(400, dtype=bool),
    np.r_[1.0, 1.0, np.zeros(398)],
], ids=["negative", "nan", "inf", "all zero", "negative number", "300 decades", "bool",
        "fewer positive rows than clusters"])
def test_bad_weights_are_refused_in_the_in_memory_words(client, data, weights):
    X, _, _, Xd, _ = small(data, 2)
    with pytest.raises((TypeError, ValueError)) as local:
        LocalFairKM(K).fit(X, sample_weight=weights)
    with pytest.raises(type(local.value)) as got:
        FairKM(K).fit(Xd, sample_weight=weights if np.ndim(weights) == 0
                      else da.from_array(weights, chunks=200), client=client)
    want = str(local.value)
    if " at row " in want and np.ndim(weights):  # a row is found within its partition
        want = want[:-1] + " of partition 0."
    assert str(got.value) == want


def test_overflowing_x_and_huge_parameters_as_in_memory(client, data):
    X, _, _, Xd, _ = small(data, 2)
    with pytest.raises(ValueError) as local:
        LocalFairKM(K).fit(X * 1e200)
    with pytest.raises(ValueError) as got:
        FairKM(K).fit(Xd * 1e200, client=client)
    assert str(got.value) == str(local.value)
    for name in ("n_clusters", "max_iter", "init_size"):  # past int64: refused by name
        with pytest.raises(ValueError, match=rf"^The '{name}' parameter of FairKM must be .* "
                                             r"Got 9223372036854775808 instead"):
            FairKM(**{"n_clusters": K, name: 2**63}).fit(Xd, client=client)
    # As in memory, bounds past any data mean no bound: the same seeds, the same fit.
    huge = FairKM(K, init_size=2**63 - 1, max_iter=2**63 - 1, random_state=0).fit(
        Xd, client=client)
    plain = FairKM(K, random_state=0).fit(Xd, client=client)
    assert_array_equal(compute(client, huge.labels_), compute(client, plain.labels_))


def test_sensitive_features_passed_as_y_warn(client, data):
    _, _, _, Xd, Sd = small(data, 2)
    for method in ("fit", "fit_predict", "fit_transform"):
        with pytest.warns(UserWarning, match=r"fit got y but no sensitive_features"):
            getattr(FairKM(K, init=data["centers"]), method)(Xd, Sd, client=client)


def test_transform_and_score_match_fairkm_with_the_same_fitted_state(client, data, fitted):
    model, _, _ = fitted
    X, S, centers = data["X"], data["S"], model.cluster_centers_
    twin = LocalFairKM(K)  # the in-memory model, given the Dask model's fitted state
    twin.__dict__.update({name: v for name, v in vars(model).items() if name != "labels_"})
    squared = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)

    distances = model.transform(data["Xd"])
    assert isinstance(distances, da.Array)
    assert distances.chunks == ((CHUNK,) * (N // CHUNK), (K,))
    assert_allclose(compute(client, distances), np.sqrt(squared), rtol=1e-9, atol=1e-9)
    frame = dd.from_pandas(pd.DataFrame(X), chunksize=CHUNK)
    assert_allclose(compute(client, model.transform(frame)), twin.transform(X), rtol=1e-12)
    assert_array_equal(model.get_feature_names_out(), [f"fairkm{c}" for c in range(K)])

    weights = 1.0 + np.arange(N) % 3
    with pytest.warns(UserWarning, match="none were given"):
        assert_allclose(model.score(data["Xd"], client=client), -squared.min(axis=1).sum(),
                        rtol=1e-12)
        scaled = model.score(data["Xd"], sample_weight=da.from_array(weights * 1e200, CHUNK),
                             client=client)
    assert_allclose(scaled, -1e200 * (weights * squared.min(axis=1)).sum(), rtol=1e-12)
    # With sensitive features: minus the K-Means term to the fitted centres and the
    # weighted fairness term of the predicted labels.
    fair = compute(client, model.predict(data["Xd"], sensitive_features=data["Sd"]))
    want = -(squared[np.arange(N), fair].sum()
             + model.fairness_weight_ * _reference.fairness(problem(data, 0.0), fair))
    assert_allclose(model.score(data["Xd"], sensitive_features=data["Sd"], client=client), want,
                    rtol=1e-9)
    Wd = dd.from_pandas(pd.Series(weights), chunksize=CHUNK)
    assert_allclose(model.score(data["Xd"], sensitive_features=data["Sd"], sample_weight=Wd,
                                client=client),
                    twin.score(X, sensitive_features=S, sample_weight=weights), rtol=1e-12)


def _in_memory_names(data):
    """The columns fairkm.FairKM's transform gives with set_output(transform="pandas")."""
    model = LocalFairKM(K, random_state=0, max_iter=2).set_output(transform="pandas")
    with pytest.warns(ConvergenceWarning):
        return list(model.fit_transform(pd.DataFrame(data["X"]),
                                        sensitive_features=data["S"]).columns)


def test_set_output_pandas_gives_a_dask_dataframe_with_the_in_memory_columns(client, data,
                                                                            fitted):
    model, _, _ = fitted
    names = _in_memory_names(data)
    assert names == [f"fairkm{c}" for c in range(K)]
    want = np.linalg.norm(data["X"][:, None, :] - model.cluster_centers_[None], axis=2)
    # A dask array: rows numbered from 0, one partition per chunk.
    out = copy.copy(model).set_output(transform="pandas").transform(data["Xd"])
    assert isinstance(out, dd.DataFrame) and out.npartitions == N // CHUNK
    assert list(out.columns) == names
    got = compute(client, out)
    assert got.index.equals(pd.RangeIndex(N))
    assert_allclose(got.to_numpy(), want, rtol=1e-9, atol=1e-9)
    # A dask DataFrame, by scikit-learn's global setting: on the rows' own index.
    labels = pd.Index(np.arange(N) * 3 + 7, name="row")
    frame = dd.from_pandas(pd.DataFrame(data["X"], index=labels), chunksize=CHUNK)
    with sklearn.config_context(transform_output="pandas"):
        out = model.transform(frame)
    assert isinstance(out, dd.DataFrame) and out.divisions == frame.divisions
    got = compute(client, out)
    assert list(got.columns) == names and got.index.equals(labels)
    assert_allclose(got.to_numpy(), want, rtol=1e-9, atol=1e-9)
    assert isinstance(model.transform(frame), da.Array)  # the setting is left as it was


def test_fit_transform_honours_set_output_on_a_dataframe(client, data):
    labels = pd.Index(np.arange(N) * 3 + 7)
    frame = dd.from_pandas(pd.DataFrame(data["X"], columns=["a", "b", "c"], index=labels),
                           chunksize=CHUNK)
    S = dd.from_pandas(data["S"].set_axis(labels), chunksize=CHUNK)
    model = FairKM(K, init=data["centers"], max_iter=2).set_output(transform="pandas")
    with pytest.warns(ConvergenceWarning):
        out = model.fit_transform(frame, sensitive_features=S, client=client)
    assert isinstance(out, dd.DataFrame)
    got = compute(client, out)
    assert list(got.columns) == _in_memory_names(data) and got.index.equals(labels)
    want = np.linalg.norm(data["X"][:, None, :] - model.cluster_centers_[None], axis=2)
    assert_allclose(got.to_numpy(), want, rtol=1e-9, atol=1e-9)


def test_set_output_polars_is_refused_by_name(client, data, fitted):
    model, _, _ = fitted
    match = r"cannot honour set_output\(transform='polars'\): Dask has no polars collection"
    with pytest.raises(ValueError, match=match):
        FairKM(K).set_output(transform="polars")
    with sklearn.config_context(transform_output="polars"):
        with pytest.raises(ValueError, match=match):
            model.transform(data["Xd"])
        fresh = FairKM(K)
        with pytest.raises(ValueError, match=match):
            fresh.fit_transform(data["Xd"], sensitive_features=data["Sd"], client=client)
    assert not hasattr(fresh, "labels_")  # refused before the fit


def test_the_fit_decides_its_threads_once_and_records_them(client, data, fitted, monkeypatch):
    from fairkm.bounds import thread_count

    model, _, _ = fitted
    assert model.n_threads_ == thread_count()
    monkeypatch.setenv("FAIRKM_NUM_THREADS", "1")
    with pytest.warns(ConvergenceWarning):
        one = FairKM(K, init=data["centers"], max_iter=1).fit(
            data["Xd"], sensitive_features=data["Sd"], client=client)
    assert one.n_threads_ == 1
    monkeypatch.setenv("FAIRKM_NUM_THREADS", "two")
    with pytest.raises(ValueError, match="FAIRKM_NUM_THREADS must be a positive integer, "
                                         "got 'two'"):
        FairKM(K).fit(data["Xd"], sensitive_features=data["Sd"], client=client)
