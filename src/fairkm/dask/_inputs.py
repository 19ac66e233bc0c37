"""The in-memory rules on ``X`` and the weights, applied to the partitions' summaries.

:meth:`fairkm.FairKM.fit` refuses ``X`` whose squared distances would overflow
and weights that are all zero or span more than 100 powers of ten, and runs on
the weights divided by a power of two near their geometric mean
(:func:`fairkm.utils._validation.weight_unit`). Those rules read only a few numbers
of the whole data (the largest ``|x|``, the extremes of the positive weights,
the sum of their logarithms and their count), which each partition sends
(:func:`fairkm.dask._tasks.shape_summary`); here they are applied to them, so
a Dask fit refuses what an in-memory fit refuses, in the same words, and runs
in the same unit.
"""

from __future__ import annotations

import numpy as np

from fairkm.utils._validation import check_no_overflow, unit_of_summary

__all__ = ["check_largest", "weight_unit"]


def check_largest(largest, n_features):
    """Refuse ``X`` as :func:`fairkm.utils._validation.check_no_overflow` refuses it.

    That rule reads the largest ``|x|`` and the number of columns alone: one
    row holding the largest value in every column is refused exactly when
    ``X`` is.
    """
    check_no_overflow(np.full((1, n_features), largest))


def weight_unit(summaries):
    """Return the weights' unit over all partitions, or None when every weight is 1.

    ``summaries`` are the partitions' :func:`fairkm.dask._tasks.weight_summary`.
    The unit is :func:`fairkm.utils._validation.weight_unit`'s, read from the
    summaries (:func:`fairkm.utils._validation.unit_of_summary`): the sum of
    the log2 weights is summed per partition, so the mean may differ in its
    last bit; the unit is still a power of two near the weights, and dividing
    by a power of two is exact, so the fit is the same whichever it is.

    Raises
    ------
    ValueError
        When every weight is zero, or the positive weights span more than
        100 powers of ten (the in-memory messages).
    """
    if all(summary[4] for summary in summaries):
        return None
    return unit_of_summary(sum(summary[0] for summary in summaries),
                           min(summary[1] for summary in summaries),
                           max(summary[2] for summary in summaries),
                           sum(summary[3] for summary in summaries))
