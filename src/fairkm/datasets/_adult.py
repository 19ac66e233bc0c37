"""The UCI Adult (Census Income) dataset, as used in the FairKM paper."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, dataset_file, fill_docstring

__all__ = ["fetch_adult"]

_TRAIN = RemoteFile(
    "adult", "adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"
)
_TEST = RemoteFile(
    "adult", "adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"
)

_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
_SENSITIVE = ["marital-status", "relationship", "race", "sex", "native-country"]
_TARGET = "income"
_RAW_FEATURES = [c for c in _COLUMNS if c not in _SENSITIVE and c != _TARGET]
_ONE_HOT = ["workclass", "education", "occupation"]
_PAPER_NUMERIC = ["education-num", "capital-gain", "capital-loss", "hours-per-week"]
_STANDARD_NUMERIC = ["age", *_PAPER_NUMERIC]

_SUBSETS = ("undersample", "train", "test", "all")
_PREPROCESS = ("standard", "paper", None)
_UNDERSAMPLE_SEED = 27

_DESCR = """\
UCI Adult (Census Income) dataset
---------------------------------

Extract of the 1994 US census by Barry Becker, donated to the UCI Machine
Learning Repository by Ronny Kohavi and Barry Becker (1996): 32,561 rows in
``adult.data`` and 16,281 in ``adult.test``, 14 attributes and the income label
(``<=50K`` / ``>50K``). Missing values are written ``?``; they are kept as their
own category.

FairKM (Abraham, Deepak P and Sundaram, EDBT 2020) clusters the income-balanced
undersample of ``adult.data`` (15,682 rows: every ``>50K`` row and as many
``<=50K`` rows drawn at random with seed 27). Its sensitive attributes are
marital-status, relationship, race, sex and native-country (7, 6, 5, 2 and 41
values in the undersample); the other attributes are the non-sensitive ones.

Source: Dua, D. and Graff, C. (2019). UCI Machine Learning Repository.
University of California, Irvine. Distributed under CC BY 4.0.
"""


@fill_docstring
def fetch_adult(
    *,
    data_home=None,
    download_if_missing=True,
    as_frame=True,
    subset="undersample",
    preprocess="standard",
):
    """Load the UCI Adult dataset with FairKM's sensitive attributes.

    The files are downloaded from the UCI repository on first use, checked
    against their SHA-256 sums and kept in the data home.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Directory holding ``adult/adult.data`` (and ``adult/adult.test``). None
        means the ``FAIRKM_DATA`` environment variable, else the per-user cache
        directory; see :func:`get_data_home`.
    %(download_if_missing)s
    %(as_frame)s
    subset : {"undersample", "train", "test", "all"}, default="undersample"
        Rows to return.

        - ``"undersample"``: the 15,682 rows of ``adult.data`` used in the FairKM
          paper, in the order the authors' code produced them: the ``<=50K``
          rows drawn without replacement with ``numpy.random.RandomState(27)``
          (the draw of imbalanced-learn's ``RandomUnderSampler(random_state=27)``),
          then every ``>50K`` row in file order;
        - ``"train"``: all 32,561 rows of ``adult.data``;
        - ``"test"``: the 16,281 rows of ``adult.test`` (the trailing ``.`` of
          its income labels removed);
        - ``"all"``: ``adult.data`` followed by ``adult.test`` (48,842 rows).
    preprocess : {"standard", "paper"} or None, default="standard"
        How the non-sensitive attributes become ``features``.

        - ``"standard"``: one-hot workclass, education and occupation, and
          age, education-num, capital-gain, capital-loss and hours-per-week
          standardised to zero mean and unit variance over the returned rows;
          45 columns on the undersample. fnlwgt, a census sampling weight rather
          than an attribute of the person, is dropped.
        - ``"paper"``: the pipeline behind the paper's published tables: one-hot
          workclass, education and occupation, and raw education-num,
          capital-gain, capital-loss and hours-per-week, with each row divided
          by its Euclidean norm; 44 columns on the undersample. Age and fnlwgt
          are dropped (the paper's text lists age, its code drops it).
        - None: the raw non-sensitive columns (age, workclass, fnlwgt,
          education, education-num, occupation, capital-gain, capital-loss,
          hours-per-week).

        One-hot columns are named ``"<attribute>_<value>"``, one per value
        present in the returned rows, values in sorted order.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        Dictionary-like object with the following attributes.

        data : DataFrame of shape (n_samples, 15) or ndarray of object
            All columns, income included. Text columns are categorical with the
            values present in the returned rows (``?`` included).
        sensitive : DataFrame of shape (n_samples, 5) or ndarray of object
            marital-status, relationship, race, sex and native-country, as
            categoricals; pass it as ``sensitive_features``.
        features : DataFrame or ndarray of shape (n_samples, n_features)
            The non-sensitive attributes, prepared as ``preprocess`` says
            (float64, except for ``preprocess=None``).
        target : Series or ndarray of shape (n_samples,)
            Income, ``"<=50K"`` or ``">50K"``.
        %(column_names)s
        %(DESCR)s

    Raises
    ------
    %(download_raises)s

    See Also
    --------
    fetch_kinematics : The paper's other dataset.

    Notes
    -----
    The frames' index gives each row's position in its source: its 0-based
    data row in ``adult.data`` for ``"undersample"`` and ``"train"``, in
    ``adult.test`` for ``"test"``, and in the two files concatenated for
    ``"all"``. On the undersample it is therefore the row-index list of the
    authors' preprocessing. The paper's fairness weight (lambda) on this data is
    1e6, for both 5 and 15 clusters.

    Examples
    --------
    >>> from fairkm.datasets import fetch_adult
    >>> adult = fetch_adult(preprocess="paper")  # doctest: +SKIP
    >>> adult.features.shape, list(adult.sensitive.nunique())  # doctest: +SKIP
    ((15682, 44), [7, 6, 5, 2, 41])
    """
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}.")
    if preprocess not in _PREPROCESS:
        raise ValueError(f"preprocess must be 'standard', 'paper' or None, got {preprocess!r}.")

    parts = []
    if subset != "test":
        path = dataset_file(_TRAIN, data_home, download_if_missing=download_if_missing)
        parts.append(_read(path, skiprows=0))
    if subset in ("test", "all"):
        path = dataset_file(_TEST, data_home, download_if_missing=download_if_missing)
        # adult.test opens with a "|1x3 Cross validator" line and ends labels with ".".
        test = _read(path, skiprows=1)
        test[_TARGET] = test[_TARGET].str.removesuffix(".")
        parts.append(test)
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame.index.name = "row"
    if subset == "undersample":
        frame = frame.iloc[_undersample_indices(frame[_TARGET].to_numpy(dtype=str))]
    frame = _as_categories(frame)

    features = _features(frame, preprocess)
    sensitive = frame[_SENSITIVE]
    target = frame[_TARGET]
    bunch = Bunch(
        data=frame,
        sensitive=sensitive,
        features=features,
        target=target,
        feature_names=[str(c) for c in features.columns],
        sensitive_names=list(_SENSITIVE),
        DESCR=_DESCR,
    )
    if not as_frame:
        bunch.data = frame.to_numpy(dtype=object)
        bunch.sensitive = sensitive.to_numpy(dtype=object)
        dtype = object if preprocess is None else np.float64
        bunch.features = features.to_numpy(dtype=dtype)
        bunch.target = target.to_numpy(dtype=object)
    return bunch


def _read(path, *, skiprows):
    """Read an Adult file into a frame with clean strings and a 0-based row index."""
    dtypes = {c: ("int64" if c in _NUMERIC else str) for c in _COLUMNS}
    # Fields are separated by ", "; "?" and "NA"-like strings are values, not missing.
    return pd.read_csv(path, header=None, names=_COLUMNS, dtype=dtypes, skiprows=skiprows,
                       skipinitialspace=True, na_filter=False)


def _undersample_indices(y, random_state=_UNDERSAMPLE_SEED):
    """Row indices of the class-balanced undersample of ``y``, in sampler order.

    For each class in sorted order: the minority class keeps all its rows in
    their original order, every other class is reduced to the minority count by
    ``RandomState(random_state).choice(n_class, size=n_min, replace=False)``.
    This is the draw of imbalanced-learn's ``RandomUnderSampler`` with its
    default strategy, so the FairKM authors' undersample is reproduced exactly.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class labels.
    random_state : int, default=27
        Seed of the ``RandomState``.

    Returns
    -------
    ndarray of shape (n_classes * n_min,) of int
    """
    rng = np.random.RandomState(random_state)
    classes, counts = np.unique(y, return_counts=True)
    minority = classes[np.argmin(counts)]
    n_min = counts.min()
    parts = []
    for cls, count in zip(classes, counts, strict=True):
        rows = np.flatnonzero(y == cls)
        if cls != minority:
            rows = rows[rng.choice(count, size=n_min, replace=False)]
        parts.append(rows)
    return np.concatenate(parts)


def _as_categories(frame):
    """Text columns as categoricals holding only the values present in ``frame``."""
    frame = frame.copy()
    for column in _COLUMNS:
        if column not in _NUMERIC:
            frame[column] = pd.Categorical(frame[column].to_numpy(dtype=object))
    return frame


def _features(frame, preprocess):
    """Build the non-sensitive block of ``frame`` as ``preprocess`` says."""
    if preprocess is None:
        return frame[_RAW_FEATURES].copy()
    one_hot = pd.get_dummies(frame[_ONE_HOT], prefix_sep="_", dtype=np.float64)
    if preprocess == "paper":
        block = pd.concat([one_hot, frame[_PAPER_NUMERIC].astype(np.float64)], axis=1)
        values = block.to_numpy()
        # Each row has one 1 per one-hot attribute, so no norm is zero.
        values = values / np.linalg.norm(values, axis=1, keepdims=True)
        return pd.DataFrame(values, index=block.index, columns=block.columns)
    numeric = frame[_STANDARD_NUMERIC].astype(np.float64)
    numeric = (numeric - numeric.mean()) / numeric.std(ddof=0)
    return pd.concat([one_hot, numeric], axis=1)
