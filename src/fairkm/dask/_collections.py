"""Dask collections on the client side: partitions, their lengths, gathering results."""

from __future__ import annotations

import asyncio
import numbers
import time

import dask.array as da
import dask.dataframe as dd
import numpy as np
from dask.base import get_scheduler
from distributed import Client, KilledWorker, get_client, wait
from distributed.comm import CommClosedError
from distributed.utils import CancelledError

from fairkm.utils._sensitive import check_sensitive_features, with_intersections
from fairkm.utils._validation import check_sample_weight

__all__ = [
    "LOST",
    "NO_WORKERS_PATIENCE",
    "check_same_partitions",
    "default_distributed_client",
    "gather",
    "label_array",
    "resolve_client",
    "row_array",
    "s_blocks",
    "s_kinds",
    "w_blocks",
    "x_blocks",
]

# What a lost worker, a cancelled future or a dead scheduler raise at a gather.
# A task's own errors (bad data) are not among them and propagate unchanged.
LOST = (KilledWorker, CancelledError, CommClosedError)

# How long a fit waits with no worker at all before it raises, and how often it
# looks: the error comes at most 61 s after the last worker went. Workers
# restarted by their nannies come back well within it.
NO_WORKERS_PATIENCE = 60.0
_POLL_SECONDS = 1.0


def resolve_client(client):
    if client is None:
        try:
            return get_client()
        except ValueError as exc:
            raise RuntimeError(
                "fairkm.dask.FairKM needs a dask.distributed Client: start one "
                "(distributed.Client(...)) or pass client= to fit."
            ) from exc
    if not isinstance(client, Client):
        raise TypeError(f"client must be a distributed.Client or None, got {client!r}.")
    return client


def default_distributed_client():
    """Return the client Dask's default scheduler computes with, or None if it is not one."""
    owner = getattr(get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


def x_blocks(X):
    """One delayed block per row partition of ``X``, its row lengths and feature names."""
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
        if np.isnan(X.shape[1]):
            raise ValueError("X must have a known number of columns.")
        X = X.rechunk({1: -1})
        lengths = None if any(np.isnan(c) for c in X.chunks[0]) else list(X.chunks[0])
        return list(X.to_delayed().ravel()), int(X.shape[1]), None, lengths
    if isinstance(X, dd.DataFrame):
        columns = list(X.columns)
        names = (
            np.asarray(columns, dtype=object)
            if columns and all(isinstance(c, str) for c in columns)
            else None
        )
        return list(X.to_delayed()), len(columns), names, None
    raise TypeError(
        "X must be a dask array or a dask DataFrame, got "
        f"{type(X).__name__}; use fairkm.FairKM for in-memory data."
    )


def s_blocks(sensitive_features):
    """One delayed block per row partition, an empty sample (for names and dtypes), lengths."""
    s = sensitive_features
    if isinstance(s, da.Array):
        if s.ndim not in (1, 2):
            raise ValueError(
                f"sensitive_features must be 1-D or 2-D, got a dask array of shape {s.shape}."
            )
        if s.ndim == 2:
            s = s.rechunk({1: -1})
        meta = np.empty((0,) + tuple(s.shape[1:]), dtype=s.dtype)
        lengths = None if any(np.isnan(c) for c in s.chunks[0]) else list(s.chunks[0])
        return list(s.to_delayed().ravel()), meta, lengths
    if isinstance(s, (dd.DataFrame, dd.Series)):
        return list(s.to_delayed()), s._meta, None
    raise TypeError(
        "sensitive_features must be a dask DataFrame, Series or array partitioned like X, "
        f"got {type(s).__name__}."
    )


def s_kinds(meta, numeric_sensitive, intersections):
    """Return the sensitive attributes' names and kinds, read from the collection's empty sample.

    ``meta`` is :func:`s_blocks`' sample: it is read, intersections included,
    by the reader every in-memory fit uses
    (:func:`fairkm.utils._sensitive.check_sensitive_features`), so the names,
    the numeric rule and its errors (no columns, a ``numeric_sensitive`` that
    names no attribute, a dtype not taken) are :meth:`fairkm.FairKM.fit`'s,
    before any partition is computed. Each partition's values are read by the
    same reader (:func:`fairkm.dask._tasks.prepare`).
    """
    sample = with_intersections(meta, intersections, numeric=numeric_sensitive)
    features = check_sensitive_features(sample, numeric=numeric_sensitive, allow_empty=True)
    return features.names, features.kinds


def w_blocks(sample_weight, n_parts):
    """One block of sample weights per row partition, and the lengths if known.

    As in :meth:`fairkm.FairKM.fit`, a number stands for that weight on every
    row (each partition's block is then the number itself), and weights that
    are not real numbers (booleans, strings, objects) are refused, not
    converted.
    """
    w = sample_weight
    if isinstance(w, numbers.Real) and not isinstance(w, (bool, np.bool_)):
        # Checked here, as on the first row of an in-memory fit, once for all partitions.
        check_sample_weight(w, 1)
        return [float(w)] * n_parts, None
    if isinstance(w, da.Array):
        if w.ndim != 1:
            raise ValueError(f"sample_weight must be 1-D, got an array of shape {w.shape}.")
        _check_weight_dtype(w.dtype)
        lengths = None if any(np.isnan(c) for c in w.chunks[0]) else list(w.chunks[0])
        return list(w.to_delayed().ravel()), lengths
    if isinstance(w, dd.Series):
        _check_weight_dtype(w.dtype)
        return list(w.to_delayed()), None
    raise TypeError(
        "sample_weight must be a number, or a dask array or Series partitioned like X, "
        f"got {type(w).__name__}."
    )


def _check_weight_dtype(dtype):
    # The rule of fairkm.utils._validation.check_sample_weight, read from the collection's dtype.
    if np.dtype(dtype).kind not in "iuf":
        raise TypeError(
            f"sample_weight must hold real numbers, got an array of dtype {dtype}."
        )


def check_same_partitions(x_count, s_count, x_lengths, s_lengths, name="sensitive_features"):
    if x_count != s_count:
        raise ValueError(
            f"{name} has {s_count} partitions but X has {x_count}; they must be "
            "partitioned alike (the same rows in each partition)."
        )
    if x_lengths is None or s_lengths is None:
        return
    for p, (n_x, n_s) in enumerate(zip(x_lengths, s_lengths, strict=True)):
        if n_x != n_s:
            raise ValueError(
                f"partition {p} of {name} has {n_s} rows but that of X has "
                f"{n_x}; they must be partitioned alike (the same rows in each partition)."
            )


def row_array(blocks, lengths, *, dtype, width=None):
    """Build a dask array of rows from one block (future or delayed) per partition.

    1-D with ``width`` None, else of shape ``(n_rows, width)``; chunked like
    the partitions, an empty one included (``lengths`` NaN where unknown).
    """
    tail = () if width is None else (width,)
    array = da.concatenate([
        da.from_delayed(block, shape=(n, *tail), dtype=dtype)
        for block, n in zip(blocks, lengths, strict=True) if n != 0
    ])
    if 0 in lengths:
        # concatenate drops empty blocks; keep the partitions of X.
        array = array.rechunk((tuple(lengths), *((t,) for t in tail)))
    return array


def label_array(blocks, lengths):
    """Build a 1-D int64 dask array from one block (future or delayed) per partition."""
    return row_array(blocks, lengths, dtype=np.int64)


def gather(client, futures, stage, *, call="fit"):
    """Gather results, turning a lost cluster into a clear RuntimeError.

    Every wait on the cluster goes through here: for the tasks to finish, and
    for their results to be fetched. A lost worker, a cancelled future, or no
    worker at all for :data:`NO_WORKERS_PATIENCE` seconds raises, whenever the
    workers go (while the tasks run, or after they finished and before or
    while their results travel): Dask itself waits for ever for a worker to
    recompute lost results on. The workers are looked for every
    ``_POLL_SECONDS``, so the error comes at most about 61 s after the last
    worker is gone. A task's own error (bad data) is raised as it is, that of
    the first future in ``futures`` that failed (the first partition's).
    ``stage`` and ``call`` (the estimator's method: ``"fit"`` or ``"score"``)
    name, in the error, where the cluster was lost and what to run again.
    """
    patience = _Patience(client, stage, call)
    try:
        while True:
            try:
                with client.as_current():  # the fit's client, default or not
                    wait(futures, timeout=_POLL_SECONDS)
                break
            except TimeoutError:
                patience.check()
        for future in futures:
            if future.status == "error":
                # The first partition's error, whichever task failed first.
                future.result()
        # Finished results can still be lost before they arrive: Dask then
        # recomputes them, and with no worker left would wait for ever.
        fetching = asyncio.run_coroutine_threadsafe(
            client.gather(futures, asynchronous=True), client.loop.asyncio_loop
        )
        while True:
            try:
                return fetching.result(timeout=_POLL_SECONDS)
            except TimeoutError:
                try:
                    patience.check()
                except RuntimeError:
                    fetching.cancel()
                    raise
    except LOST as exc:
        raise RuntimeError(
            f"fairkm.dask.FairKM lost data on the cluster during {stage} "
            f"({type(exc).__name__}: {exc}); {_NOTHING_KEPT[call]}: call {call} again."
        ) from exc


# What a lost cluster leaves of each call, as its error says it.
_NOTHING_KEPT = {"fit": "no labels were kept from this fit",
                 "score": "no score was computed"}


class _Patience:
    """Since when the cluster has been seen without any worker, across one gather's waits.

    ``since`` is the last moment a worker was seen (at first, the gather's
    start): the workers went after it, so raising once it lies
    :data:`NO_WORKERS_PATIENCE` seconds back, at a look made every
    ``_POLL_SECONDS``, raises at most that plus one look after they went.
    """

    def __init__(self, client, stage, call):
        self.client, self.stage, self.call = client, stage, call
        self.since = time.monotonic()

    def check(self):
        """Raise once no worker has been seen for :data:`NO_WORKERS_PATIENCE` seconds."""
        now = time.monotonic()
        if self.client.scheduler_info(n_workers=-1)["workers"]:
            self.since = now
        elif now - self.since >= NO_WORKERS_PATIENCE:
            raise RuntimeError(
                f"fairkm.dask.FairKM has had no worker for {now - self.since:.0f} s during "
                f"{self.stage}: the cluster at {self.client.scheduler.address} lost all of "
                "them, and the results they held with them. "
                f"{_NOTHING_KEPT[self.call].capitalize()}; "
                f"start workers (or a new cluster) and call {self.call} again."
            )
