"""The 161 kinematics word problems of the FairKM paper."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, dataset_file, fill_docstring
from ._doc2vec import DOC2VEC_PARAMS, TOKEN_PATTERN, cached_doc_vectors

__all__ = ["fetch_kinematics"]

_JSON = RemoteFile(
    "kinematics",
    "Kinematics_161.json",
    "e31f4875ab10c31d20977f0f389fb84684a06ffb8db442d99642cd12d46e5480",
)
_CACHE_NAME = "kinematics_doc2vec.npz"

#: Problem types in the paper's numbering (the JSON's 0-4 plus one).
TYPE_NAMES = {
    1: "Horizontal motion",
    2: "Vertical motion with an initial velocity",
    3: "Free fall",
    4: "Horizontally projected",
    5: "Two-dimensional",
}
_SENSITIVE = ("indicators", "type")

_DESCR = """\
Kinematics word problems
------------------------

161 high-school kinematics word problems, from the GitHub repository
savithaabraham/Datasets linked from the FairKM paper (Abraham, Deepak P and
Sundaram, "Fairness in Clustering with Multiple Sensitive Attributes", EDBT
2020; cite it when using the data, the repository has no licence file).

Each problem has a text and one of five types, numbered 1-5 as in the paper
(0-4 in the JSON file): 1 horizontal motion (60 problems), 2 vertical motion
with an initial velocity (36), 3 free fall (15), 4 horizontally projected (31),
5 two-dimensional (19). In the paper the sensitive attributes are the five
binary indicators "type == t" and the non-sensitive features are 100-dimensional
Doc2Vec vectors of the texts; its fairness weight (lambda) is 1e3, with 5
clusters. Its Doc2Vec settings were not published, so fairkm trains its own
with fixed hyper-parameters (see ``doc2vec_params``).
"""


@fill_docstring
def fetch_kinematics(
    *,
    data_home=None,
    download_if_missing=True,
    as_frame=True,
    sensitive="indicators",
    embed="doc2vec",
):
    r"""Load the kinematics word problems with their type as sensitive attribute.

    The JSON file is downloaded from GitHub on first use (a fixed commit of
    savithaabraham/Datasets), checked against its SHA-256 sum and kept in the
    data home; the Doc2Vec vectors are cached next to it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Directory holding ``kinematics/Kinematics_161.json``. None means the
        ``FAIRKM_DATA`` environment variable, else the per-user cache directory;
        see :func:`get_data_home`.
    %(download_if_missing)s
    %(as_frame)s
    sensitive : {"indicators", "type"}, default="indicators"
        ``"indicators"``: five boolean attributes ``type_1`` ... ``type_5``,
        ``type_t`` being "the problem is of type t" (the paper's setting: each
        cluster should hold about the dataset's share of every type).
        ``"type"``: one categorical attribute ``type`` with the values 1-5.
    embed : {"doc2vec"} or None, default="doc2vec"
        ``"doc2vec"``: ``features`` are 100-dimensional Doc2Vec vectors of the
        problem texts (needs gensim: ``pip install "fairkm[text]"``). None (or
        False): ``features`` is the text column itself, for your own embedding.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        Dictionary-like object with the following attributes.

        data : DataFrame of shape (161, 4) or ndarray of object
            Columns ``id`` (``iIndex`` in the file: 1-163 without 46 and 66),
            ``type`` (1-5),
            ``type_name`` and ``question`` (the text, verbatim).
        sensitive : DataFrame of shape (161, 5) or (161, 1), or ndarray
            As ``sensitive`` says; pass it as ``sensitive_features``.
        features : DataFrame of shape (161, 100) or Series of shape (161,), or ndarray
            Doc2Vec vectors (float64; columns ``doc2vec_0`` ... ``doc2vec_99``),
            or the texts when ``embed`` is None.
        %(column_names)s
        doc2vec_params : dict
            The Doc2Vec hyper-parameters and the tokenizer's regular expression
            (``token_pattern``); only when ``embed="doc2vec"``.
        %(DESCR)s

    Raises
    ------
    %(download_raises)s
    ImportError
        If ``embed="doc2vec"``, gensim is not installed and no cached vectors exist.

    See Also
    --------
    fetch_adult : The paper's other dataset.

    Notes
    -----
    Texts are lower-cased and split into words and numbers (the regular
    expression ``[a-z]+|[0-9]+(?:\.[0-9]+)?``). Doc2Vec is then trained on the 161
    documents with gensim's ``Doc2Vec(vector_size=100, dm=1, window=5,
    min_count=2, sample=0, negative=5, hs=0, alpha=0.025, min_alpha=0.0001,
    epochs=100, seed=0, workers=1)``; ``features`` row ``i`` is the trained
    vector of document ``i``. With one worker and a fixed seed the vectors are
    the same in every run and process (independently of ``PYTHONHASHSEED``) for
    a given machine and gensim version. They are stored in
    ``kinematics/kinematics_doc2vec.npz`` next to the JSON file and reused while
    the file and hyper-parameters are unchanged, so results stay identical even
    if gensim is later upgraded or removed.

    Examples
    --------
    >>> from fairkm.datasets import fetch_kinematics
    >>> kin = fetch_kinematics(embed=None)  # doctest: +SKIP
    >>> kin.sensitive.sum().tolist()  # doctest: +SKIP
    [60, 36, 15, 31, 19]
    """
    if sensitive not in _SENSITIVE:
        raise ValueError(f"sensitive must be 'indicators' or 'type', got {sensitive!r}.")
    if embed not in ("doc2vec", None, False):
        raise ValueError(f"embed must be 'doc2vec' or None, got {embed!r}.")

    path = dataset_file(_JSON, data_home, download_if_missing=download_if_missing)
    with open(path, encoding="utf-8") as f:
        problems = json.load(f)
    types = np.array([int(p["type"][0]) + 1 for p in problems], dtype=np.int64)
    frame = pd.DataFrame(
        {
            "id": np.array([int(p["iIndex"]) for p in problems], dtype=np.int64),
            "type": types,
            "type_name": [TYPE_NAMES[t] for t in types],
            "question": [p["sQuestion"] for p in problems],
        }
    )

    if sensitive == "indicators":
        sens = pd.DataFrame({f"type_{t}": types == t for t in TYPE_NAMES})
    else:
        sens = pd.DataFrame({"type": pd.Categorical(types, categories=list(TYPE_NAMES))})

    bunch = Bunch(sensitive_names=[str(c) for c in sens.columns], DESCR=_DESCR)
    if embed == "doc2vec":
        vectors = cached_doc_vectors(
            frame["question"].tolist(), path.parent / _CACHE_NAME, _JSON.sha256
        )
        features = pd.DataFrame(
            vectors.astype(np.float64),
            columns=[f"doc2vec_{j}" for j in range(vectors.shape[1])],
        )
        bunch.doc2vec_params = {**DOC2VEC_PARAMS, "token_pattern": TOKEN_PATTERN}
    else:
        features = frame["question"].copy()
    bunch.feature_names = list(features.columns) if embed else ["question"]

    if as_frame:
        bunch.update(data=frame, sensitive=sens, features=features)
    else:
        bunch.update(
            data=frame.to_numpy(dtype=object),
            sensitive=sens.to_numpy(),
            features=features.to_numpy(),
        )
    return bunch
