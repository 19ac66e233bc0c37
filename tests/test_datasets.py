"""Dataset loaders: against the real files in ../shared/data, and through a local HTTP server."""

import http.server
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans

import fairkm
from fairkm.datasets import _base, _doc2vec, fetch_adult, fetch_kinematics, get_data_home
from fairkm.datasets._adult import _undersample_indices

ADULT_SENSITIVE = ["marital-status", "relationship", "race", "sex", "native-country"]
KINEMATICS_JSON = "Kinematics_161.json"


@pytest.fixture
def adult_home(shared_data):
    # Loading Adult only reads files, so the read-only shared folder serves as data home.
    return shared_data


@pytest.fixture
def kinematics_home(shared_data, tmp_path):
    # The Doc2Vec cache is written next to the JSON file, so it needs a writable copy.
    (tmp_path / "kinematics").mkdir()
    shutil.copy(shared_data / "kinematics" / KINEMATICS_JSON, tmp_path / "kinematics")
    return tmp_path


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ../shared/data under /good/, /corrupt/ (a flipped byte), /truncated/ and
    /flaky/ (error 503 at the first request for each file, then the file)."""

    def do_GET(self):
        mode, _, rel = self.path.lstrip("/").partition("/")
        path = self.server.root / rel
        if mode not in ("good", "corrupt", "truncated", "flaky") or not path.is_file():
            self.send_error(404)
            return
        if mode == "flaky" and self.path not in self.server.asked:
            self.server.asked.add(self.path)
            self.send_error(503)
            return
        body = path.read_bytes()
        sent = body
        if mode == "corrupt":
            sent = bytes([body[0] ^ 1]) + body[1:]
        elif mode == "truncated":
            sent = body[: len(body) // 2]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(sent)

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def server(shared_data):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.root = shared_data
    httpd.asked = set()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def _serve(monkeypatch, server, mode):
    # A failed download is not retried (test_a_failed_request_is_retried retries).
    monkeypatch.setattr(_base, "_N_RETRIES", 0)
    for dataset in ("adult", "kinematics"):
        monkeypatch.setitem(_base.BASE_URLS, dataset, f"{server}/{mode}/{dataset}/")


def _files(directory):
    return sorted(p.name for p in Path(directory).rglob("*") if p.is_file())


def _mean_deviation(labels, sensitive):
    """Cluster-size-weighted mean Euclidean distance between the cluster's and the
    dataset's value proportions, averaged over the attributes (the paper's AE)."""
    n = len(labels)
    per_attribute = []
    for column in sensitive.columns:
        _, codes = np.unique(sensitive[column].astype(str).to_numpy(), return_inverse=True)
        overall = np.bincount(codes) / n
        total = 0.0
        for cluster in np.unique(labels):
            members = codes[labels == cluster]
            share = np.bincount(members, minlength=overall.size) / members.size
            total += members.size * np.linalg.norm(share - overall)
        per_attribute.append(total / n)
    return float(np.mean(per_attribute))


# --- data home ---------------------------------------------------------------------------


def test_get_data_home_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("FAIRKM_DATA", str(tmp_path / "env"))
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_home() == tmp_path / "env"
    monkeypatch.delenv("FAIRKM_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(sys, "platform", "linux")
    assert get_data_home() == tmp_path / "xdg" / "fairkm"
    assert get_data_home("~/data") == Path.home() / "data"


def test_data_home_from_environment(monkeypatch, adult_home):
    monkeypatch.setenv("FAIRKM_DATA", str(adult_home))
    assert fetch_adult(download_if_missing=False).data.shape == (15682, 15)


# --- Adult -------------------------------------------------------------------------------


def test_undersample_indices_match_the_authors(adult_home):
    want = np.loadtxt(adult_home / "adult" / "adult_undersample_rs27_indices.txt", dtype=np.int64)
    train = fetch_adult(data_home=adult_home, subset="train", preprocess=None)
    assert_array_equal(_undersample_indices(train.target.to_numpy(dtype=str)), want)
    sample = fetch_adult(data_home=adult_home, download_if_missing=False)
    assert_array_equal(sample.data.index.to_numpy(), want)
    assert_array_equal(sample.features.index.to_numpy(), want)


def test_adult_undersample(adult_home):
    adult = fetch_adult(data_home=adult_home, download_if_missing=False)
    assert adult.data.shape == (15682, 15)
    assert adult.sensitive_names == ADULT_SENSITIVE
    assert list(adult.sensitive.columns) == ADULT_SENSITIVE
    assert adult.sensitive.nunique().tolist() == [7, 6, 5, 2, 41]
    assert all(isinstance(d, pd.CategoricalDtype) for d in adult.sensitive.dtypes)
    assert "Holand-Netherlands" not in adult.sensitive["native-country"].cat.categories
    assert adult.target.value_counts().to_dict() == {"<=50K": 7841, ">50K": 7841}
    # "?" is a category of its own, and text has no leading space.
    assert (adult.data == "?").any(axis=1).sum() == 1003
    assert adult.data["sex"].cat.categories.tolist() == ["Female", "Male"]
    assert not adult.data.isna().any().any()
    assert "Adult" in adult.DESCR


def test_adult_paper_layout(adult_home):
    adult = fetch_adult(data_home=adult_home, preprocess="paper")
    features = adult.features
    assert features.shape == (15682, 44)
    names = adult.feature_names
    assert names == list(features.columns)
    assert [n.split("_")[0] for n in names[:40]] == (
        ["workclass"] * 9 + ["education"] * 16 + ["occupation"] * 15
    )
    assert names[:2] == ["workclass_?", "workclass_Federal-gov"]
    assert names[40:] == ["education-num", "capital-gain", "capital-loss", "hours-per-week"]
    assert_allclose(np.linalg.norm(features.to_numpy(), axis=1), 1.0)
    row = adult.data.iloc[0]
    raw = np.zeros(44)
    for attribute in ("workclass", "education", "occupation"):
        raw[names.index(f"{attribute}_{row[attribute]}")] = 1.0
    raw[40:] = row[["education-num", "capital-gain", "capital-loss", "hours-per-week"]]
    assert_allclose(features.iloc[0].to_numpy(), raw / np.linalg.norm(raw))


def test_adult_standard_and_raw(adult_home):
    standard = fetch_adult(data_home=adult_home)
    assert standard.features.shape == (15682, 45)
    numeric = standard.features[["age", "education-num", "capital-gain", "capital-loss"]]
    assert_allclose(numeric.mean(), 0.0, atol=1e-12)
    assert_allclose(numeric.std(ddof=0), 1.0)
    assert "fnlwgt" not in standard.feature_names
    raw = fetch_adult(data_home=adult_home, preprocess=None)
    assert raw.feature_names == [
        "age",
        "workclass",
        "fnlwgt",
        "education",
        "education-num",
        "occupation",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
    ]
    assert_array_equal(raw.features["age"], raw.data["age"])


def test_adult_subsets(adult_home):
    train = fetch_adult(data_home=adult_home, subset="train", preprocess=None)
    assert train.data.shape == (32561, 15)
    assert train.target.value_counts().to_dict() == {"<=50K": 24720, ">50K": 7841}
    assert train.sensitive["native-country"].nunique() == 42
    test = fetch_adult(data_home=adult_home, subset="test", preprocess="paper")
    assert test.data.shape == (16281, 15)
    assert test.data["age"].iloc[0] == 25
    assert set(test.target) == {"<=50K", ">50K"}
    everything = fetch_adult(data_home=adult_home, subset="all", preprocess=None)
    assert everything.data.shape == (48842, 15)
    assert_array_equal(everything.data.index.to_numpy(), np.arange(48842))


def test_adult_as_arrays(adult_home):
    adult = fetch_adult(data_home=adult_home, as_frame=False, preprocess="paper")
    assert isinstance(adult.features, np.ndarray)
    assert adult.features.dtype == np.float64 and adult.features.shape == (15682, 44)
    assert adult.sensitive.shape == (15682, 5) and adult.sensitive.dtype == object
    assert adult.data.shape == (15682, 15)
    assert adult.target.shape == (15682,)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"subset": "full"}, "subset"), ({"preprocess": "minmax"}, "preprocess")],
)
def test_adult_invalid_parameters(adult_home, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fetch_adult(data_home=adult_home, **kwargs)


# --- Kinematics (no embedding) ------------------------------------------------------------


def test_kinematics_types(shared_data, kinematics_home):
    kin = fetch_kinematics(data_home=kinematics_home, embed=None, download_if_missing=False)
    assert kin.data.shape == (161, 4)
    # The CSV in ../shared/data was derived from the JSON independently of the loader.
    derived = pd.read_csv(shared_data / "kinematics" / "kinematics_161.csv")
    assert_array_equal(kin.data["id"], derived["iIndex"])
    assert_array_equal(kin.data["type"], derived["paper_type"])
    assert_array_equal(kin.data["type_name"], derived["type_name"])
    assert_array_equal(kin.data["question"], derived["sQuestion"])
    assert kin.data["type"].value_counts().sort_index().tolist() == [60, 36, 15, 31, 19]
    assert kin.sensitive_names == ["type_1", "type_2", "type_3", "type_4", "type_5"]
    assert all(dtype == np.bool_ for dtype in kin.sensitive.dtypes)
    assert kin.sensitive.sum().tolist() == [60, 36, 15, 31, 19]
    assert (kin.sensitive.sum(axis=1) == 1).all()
    assert kin.data["type_name"].iloc[0] == "Horizontal motion"
    assert kin.features.iloc[0].startswith("An athlete swims")
    assert kin.feature_names == ["question"]
    assert "doc2vec_params" not in kin


def test_kinematics_single_type_attribute(kinematics_home):
    kin = fetch_kinematics(data_home=kinematics_home, embed=False, sensitive="type")
    assert kin.sensitive_names == ["type"]
    assert kin.sensitive["type"].value_counts().sort_index().tolist() == [60, 36, 15, 31, 19]
    arrays = fetch_kinematics(
        data_home=kinematics_home, embed=None, sensitive="type", as_frame=False
    )
    assert arrays.sensitive.shape == (161, 1)
    assert arrays.features.shape == (161,)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"sensitive": "types"}, "sensitive"), ({"embed": "bert"}, "embed")],
)
def test_kinematics_invalid_parameters(kinematics_home, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fetch_kinematics(data_home=kinematics_home, **kwargs)


# --- local files: missing or altered -------------------------------------------------------


def test_missing_file_without_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="download_if_missing=False") as info:
        fetch_adult(data_home=tmp_path, download_if_missing=False)
    assert str(tmp_path / "adult" / "adult.data") in str(info.value)
    assert "FAIRKM_DATA environment variable" in str(info.value)
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "kinematics" / KINEMATICS_JSON)):
        fetch_kinematics(data_home=tmp_path, download_if_missing=False, embed=None)
    assert _files(tmp_path) == []


def test_altered_local_file_is_rejected(kinematics_home):
    path = kinematics_home / "kinematics" / KINEMATICS_JSON
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(OSError, match="not the original file") as info:
        fetch_kinematics(data_home=kinematics_home, embed=None)
    assert str(path) in str(info.value)
    assert path.is_file()


# --- downloads from a local HTTP server -----------------------------------------------------


@pytest.mark.network
def test_download_then_offline(monkeypatch, server, shared_data, tmp_path):
    _serve(monkeypatch, server, "good")
    adult = fetch_adult(data_home=tmp_path, subset="all", preprocess=None)
    assert adult.data.shape == (48842, 15)
    kin = fetch_kinematics(data_home=tmp_path, embed=None)
    assert kin.data.shape == (161, 4)
    assert _files(tmp_path) == [KINEMATICS_JSON, "adult.data", "adult.test"]
    for name in ("adult/adult.data", "adult/adult.test", f"kinematics/{KINEMATICS_JSON}"):
        assert (tmp_path / name).read_bytes() == (shared_data / name).read_bytes()
    # With the files in place nothing is downloaded: an unreachable server is never asked.
    _serve(monkeypatch, "http://127.0.0.1:9", "good")
    assert fetch_adult(data_home=tmp_path, download_if_missing=False).data.shape == (15682, 15)
    assert fetch_kinematics(data_home=tmp_path, embed=None).data.shape == (161, 4)


@pytest.mark.network
@pytest.mark.parametrize(
    ("mode", "match"),
    [("corrupt", "SHA256 checksum"), ("truncated", "retrieval incomplete"),
     ("missing", "HTTP Error 404")],
)
def test_failed_download_leaves_nothing(monkeypatch, server, tmp_path, mode, match):
    _serve(monkeypatch, server, mode)
    url = f"{server}/{mode}/kinematics/{KINEMATICS_JSON}"
    home = tmp_path / "new" / "home"  # made for the download, removed with it
    with pytest.raises(OSError, match=match) as info:
        fetch_kinematics(data_home=home, embed=None)
    assert url in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.network
def test_a_failed_request_is_retried(monkeypatch, server, shared_data, tmp_path):
    _serve(monkeypatch, server, "flaky")
    monkeypatch.setattr(_base, "_N_RETRIES", 1)
    monkeypatch.setattr(_base, "_RETRY_DELAY_S", 0)
    with pytest.warns(UserWarning, match=f"Retry downloading from url: {server}/flaky/"):
        fetch_kinematics(data_home=tmp_path, embed=None)
    name = f"kinematics/{KINEMATICS_JSON}"
    assert (tmp_path / name).read_bytes() == (shared_data / name).read_bytes()
    assert _files(tmp_path) == [KINEMATICS_JSON]


@pytest.mark.network
def test_unreachable_server(monkeypatch, tmp_path):
    _serve(monkeypatch, "http://127.0.0.1:9", "good")
    with pytest.raises(OSError, match="Could not download http://127.0.0.1:9/") as info:
        fetch_kinematics(data_home=tmp_path, embed=None)
    # Nothing left behind: no file, and no empty kinematics/ folder.
    assert list(tmp_path.iterdir()) == []
    message = str(info.value)
    assert f"looked for {KINEMATICS_JSON} at {tmp_path / 'kinematics' / KINEMATICS_JSON}" in message
    for way in ("data_home argument", "FAIRKM_DATA environment variable", "--data-home"):
        assert way in message


@pytest.mark.network
def test_offline_command_line_says_where_it_looked(monkeypatch, tmp_path, capsys):
    from fairkm.cli import main

    _serve(monkeypatch, "http://127.0.0.1:9", "good")
    home = tmp_path / "data"
    assert main(["demo", "--dataset", "adult", "--data-home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"looked for adult.data at {home / 'adult' / 'adult.data'}" in err
    assert "FAIRKM_DATA" in err and "--data-home" in err
    assert not home.exists()


@pytest.fixture
def umask():
    """Set the process umask for a test, and restore it."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.network
@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_downloads_get_the_umask_permissions(monkeypatch, server, tmp_path, umask, mask):
    _serve(monkeypatch, server, "good")
    umask(mask)
    fetch_kinematics(data_home=tmp_path, embed=None)
    mode = (tmp_path / "kinematics" / KINEMATICS_JSON).stat().st_mode & 0o777
    assert mode == 0o666 & ~mask


@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_doc2vec_cache_gets_the_umask_permissions(monkeypatch, kinematics_home, umask, mask):
    monkeypatch.setattr(_doc2vec, "doc_vectors", _fake_vectors)
    umask(mask)
    fetch_kinematics(data_home=kinematics_home)
    cache = kinematics_home / "kinematics" / "kinematics_doc2vec.npz"
    assert cache.stat().st_mode & 0o777 == 0o666 & ~mask


# --- Doc2Vec cache (with a stand-in for training) --------------------------------------------


def _fake_vectors(texts):
    return np.arange(len(texts) * 100, dtype=np.float32).reshape(len(texts), 100)


def test_doc2vec_cache_is_reused_and_keyed(monkeypatch, kinematics_home):
    calls = []

    def fake(texts):
        calls.append(len(texts))
        return _fake_vectors(texts)

    monkeypatch.setattr(_doc2vec, "doc_vectors", fake)
    first = fetch_kinematics(data_home=kinematics_home)
    assert first.features.shape == (161, 100)
    assert first.feature_names[0] == "doc2vec_0" and first.features.dtypes.iloc[0] == np.float64
    assert first.doc2vec_params["vector_size"] == 100 and first.doc2vec_params["workers"] == 1
    cache = kinematics_home / "kinematics" / "kinematics_doc2vec.npz"
    assert cache.is_file()
    second = fetch_kinematics(data_home=kinematics_home, as_frame=False)
    assert calls == [161]
    assert_array_equal(second.features, first.features.to_numpy())
    with np.load(cache, allow_pickle=False) as stored:
        key = json.loads(str(stored["key"]))
    monkeypatch.setitem(_doc2vec.DOC2VEC_PARAMS, "epochs", key["epochs"] + 1)
    fetch_kinematics(data_home=kinematics_home)
    assert calls == [161, 161]


def test_doc2vec_cache_not_writable_warns(monkeypatch, kinematics_home):
    def refuse(path, **arrays):
        raise PermissionError(f"read-only: {path}")

    monkeypatch.setattr(_doc2vec, "doc_vectors", _fake_vectors)
    monkeypatch.setattr(_doc2vec, "_write_npz", refuse)
    with pytest.warns(RuntimeWarning, match="Could not cache"):
        kin = fetch_kinematics(data_home=kinematics_home)
    assert kin.features.shape == (161, 100)


def test_doc2vec_without_gensim(monkeypatch, kinematics_home):
    for name in ("gensim", "gensim.models", "gensim.models.doc2vec"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r'pip install "fairkm\[text\]"'):
        fetch_kinematics(data_home=kinematics_home)
    assert fetch_kinematics(data_home=kinematics_home, embed=None).data.shape == (161, 4)


# --- Doc2Vec training (needs gensim) ----------------------------------------------------------


@pytest.fixture(scope="module")
def kinematics_vectors(shared_data, tmp_path_factory):
    pytest.importorskip("gensim", reason="Doc2Vec features need gensim (fairkm[text])")
    home = tmp_path_factory.mktemp("kinematics_home")
    (home / "kinematics").mkdir()
    shutil.copy(shared_data / "kinematics" / KINEMATICS_JSON, home / "kinematics")
    return fetch_kinematics(data_home=home)


def test_doc2vec_vectors_are_reproducible(kinematics_vectors, tmp_path):
    vectors = kinematics_vectors.features.to_numpy()
    assert vectors.shape == (161, 100) and np.isfinite(vectors).all()
    assert np.unique(vectors, axis=0).shape[0] == 161
    texts = kinematics_vectors.data["question"].tolist()
    assert_array_equal(_doc2vec.doc_vectors(texts), vectors.astype(np.float32))
    # Another process, with another string-hash seed, trains the same vectors.
    texts_path, out = tmp_path / "texts.json", tmp_path / "vectors.npy"
    texts_path.write_text(json.dumps(texts), encoding="utf-8")
    code = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        from fairkm.datasets._doc2vec import doc_vectors
        texts = json.loads(open(sys.argv[1], encoding="utf-8").read())
        np.save(sys.argv[2], doc_vectors(texts))
        """
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run(
        [sys.executable, "-W", "error", "-c", code, str(texts_path), str(out)],
        env=env,
        check=True,
        timeout=120,
    )
    assert_array_equal(np.load(out), vectors.astype(np.float32))


# --- end to end: FairKM is fairer than fairness-blind K-Means --------------------------------

FairKM = getattr(fairkm, "FairKM", None)
needs_fairkm = pytest.mark.skipif(FairKM is None, reason="fairkm.FairKM is not available")


@needs_fairkm
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fairkm_fairer_than_kmeans_on_adult(adult_home):
    adult = fetch_adult(data_home=adult_home, preprocess="paper")
    X = adult.features.to_numpy()
    blind = KMeans(n_clusters=5, n_init=3, random_state=0).fit(X)
    # The paper's setting for Adult: lambda = 1e6; a few sweeps suffice to show the effect.
    fair = FairKM(5, fairness_weight=1e6, max_iter=5, random_state=0)
    fair.fit(X, sensitive_features=adult.sensitive)
    assert _mean_deviation(fair.labels_, adult.sensitive) < _mean_deviation(
        blind.labels_, adult.sensitive
    )


@needs_fairkm
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fairkm_fairer_than_kmeans_on_kinematics(kinematics_vectors):
    X = kinematics_vectors.features.to_numpy()
    sensitive = kinematics_vectors.sensitive
    blind = KMeans(n_clusters=5, n_init=10, random_state=0).fit(X)
    # The paper's setting for Kinematics: lambda = 1e3.
    fair = FairKM(5, fairness_weight=1e3, random_state=0).fit(X, sensitive_features=sensitive)
    assert _mean_deviation(fair.labels_, sensitive) < _mean_deviation(blind.labels_, sensitive)
