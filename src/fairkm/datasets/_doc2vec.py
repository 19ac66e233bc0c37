"""Reproducible Doc2Vec document vectors (needs the optional ``gensim`` dependency)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from fairkm.utils._call_site import warn

from ._base import create_like_open

__all__ = ["DOC2VEC_PARAMS", "TOKEN_PATTERN", "cached_doc_vectors", "doc_vectors", "tokenize"]

#: Words and numbers, after lower-casing; punctuation and units' symbols split off.
TOKEN_PATTERN = r"[a-z]+|[0-9]+(?:\.[0-9]+)?"

#: Hyper-parameters of :class:`gensim.models.Doc2Vec`. The paper gives only the
#: dimension (100). PV-DM with many epochs and no down-sampling suits a corpus of
#: a few thousand tokens; one worker and a fixed seed make training deterministic.
DOC2VEC_PARAMS = {
    "vector_size": 100,
    "dm": 1,
    "window": 5,
    "min_count": 2,
    "sample": 0.0,
    "negative": 5,
    "hs": 0,
    "alpha": 0.025,
    "min_alpha": 0.0001,
    "epochs": 100,
    "seed": 0,
    "workers": 1,
}

_INSTALL_HINT = 'pip install "fairkm[text]"'


def tokenize(text):
    """Split a text into lower-case words and numbers.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        The matches of :data:`TOKEN_PATTERN` in ``text.lower()``.
    """
    return re.findall(TOKEN_PATTERN, text.lower())


def doc_vectors(texts):
    """Train Doc2Vec on ``texts`` and return one vector per text.

    Parameters
    ----------
    texts : sequence of str
        The documents.

    Returns
    -------
    ndarray of shape (len(texts), 100), dtype float32
        Row ``i`` is the trained vector of ``texts[i]``.

    Raises
    ------
    ImportError
        If gensim is not installed.

    Notes
    -----
    gensim 4 seeds every initial vector from ``DOC2VEC_PARAMS["seed"]`` (not from
    Python's salted ``hash``), and a single worker fixes the order of the
    stochastic updates, so the result is the same in every process and run on a
    given machine and gensim version; a test checks this across processes with
    different ``PYTHONHASHSEED`` values.
    """
    try:
        from gensim.models.doc2vec import Doc2Vec, TaggedDocument
    except ImportError as exc:
        raise ImportError(
            "Doc2Vec features need gensim, an optional dependency of fairkm; install it "
            f"with: {_INSTALL_HINT}"
        ) from exc
    corpus = [TaggedDocument(tokenize(text), [i]) for i, text in enumerate(texts)]
    model = Doc2Vec(corpus, **DOC2VEC_PARAMS)
    return np.array(model.dv.vectors, dtype=np.float32)


def _cache_key(source_sha256):
    """Describe what the cached vectors depend on, as a canonical JSON string."""
    return json.dumps(
        {"source_sha256": source_sha256, "token_pattern": TOKEN_PATTERN, **DOC2VEC_PARAMS},
        sort_keys=True,
    )


def cached_doc_vectors(texts, cache_path, source_sha256):
    """Doc2Vec vectors of ``texts``, read from or written to an NPZ cache.

    The cache is used only if it was made from the same source file (by
    checksum) with the same tokenizer and hyper-parameters; otherwise the
    vectors are trained again and the cache replaced. Once cached, the vectors
    no longer depend on the installed gensim, and gensim is not needed.

    Parameters
    ----------
    texts : sequence of str
        The documents.
    cache_path : path-like
        The ``.npz`` file.
    source_sha256 : str
        Checksum of the file the texts come from.

    Returns
    -------
    ndarray of shape (len(texts), 100), dtype float32
    """
    cache_path = Path(cache_path)
    key = _cache_key(source_sha256)
    if cache_path.is_file():
        with np.load(cache_path, allow_pickle=False) as cached:
            if str(cached["key"]) == key and cached["vectors"].shape[0] == len(texts):
                return cached["vectors"]
    vectors = doc_vectors(texts)
    try:
        _write_npz(cache_path, vectors=vectors, key=np.array(key))
    except OSError as exc:
        # A read-only data home must not stop the loader: the vectors are still right.
        warn(
            f"Could not cache the Doc2Vec vectors at {cache_path} ({exc}); they will be "
            "trained again next time.",
            RuntimeWarning,
        )
    return vectors


def _write_npz(path, **arrays):
    """Write an NPZ file atomically: to a temporary file, then moved into place.

    The file gets the permissions the umask gives (as with ``open``), not 0600.
    """
    fd, tmp_name = create_like_open(path)
    try:
        with os.fdopen(fd, "wb") as out:
            np.savez(out, **arrays)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
