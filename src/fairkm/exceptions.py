"""Every error and warning fairkm raises of its own, in one public home.

Each is also a built-in exception (``ValueError``, ``TypeError``,
``UserWarning``), so code that catches those keeps working. A parameter
outside what it accepts raises scikit-learn's own ``InvalidParameterError``,
as every scikit-learn estimator does; it is here under the same name.
"""

from sklearn.utils._param_validation import InvalidParameterError

__all__ = ["BoundNotMetWarning", "DataWarning", "FairnessLossWarning", "InfeasibleBoundError",
           "InvalidParameterError", "KernelCacheWarning"]


class DataWarning(UserWarning):
    """A column is probably not what the analysis takes it for (a kind, a role).

    Raised by :func:`fairkm.report.audit` and :meth:`fairkm.FairKM.fit`; the
    ``fairkm`` command prints the same sentences as ``fairkm: warning: ...``
    lines.
    """


class BoundNotMetWarning(UserWarning):
    """The rounded assignment leaves a violation (its size is on the result)."""


class FairnessLossWarning(UserWarning):
    """A bound was met only by leaving some attribute further from the dataset's mix.

    Raised by :meth:`fairkm.FairKM.fit` with ``max_deviation`` when no
    clustering it found meets the bound without some attribute's mean or worst
    cluster ending further from the dataset's mix than FairKM's own clustering
    had it (by a distance the reports measure); the message names each
    attribute, distance and amount, and ``bound_repair_.loss`` holds them.
    """


class KernelCacheWarning(RuntimeWarning):
    """A compiled kernel's file in numba's cache could not be used, and was rebuilt.

    A crash while numba writes its cache (next to fairkm's sources, or under
    ``NUMBA_CACHE_DIR``) can leave a file empty or truncated, and two processes
    compiling new signatures of one kernel at once can leave the index naming
    one signature's file for the other. fairkm then
    removes that kernel's files and compiles it again, once; where the files
    cannot be removed, it compiles the kernel for the run only, and the
    message names the directory to delete.
    """


class InfeasibleBoundError(ValueError):
    """No integral assignment of the rows to non-empty clusters meets the bound asked for.

    Attributes
    ----------
    max_deviation : float or dict
        The bound asked for.
    tightest : float or None
        The tightest bound found that an integral assignment meets (None if
        none was found).
    excess_rows : float or None
        With unit weights: over the assignments to non-empty clusters, the
        least largest number of rows by which a cluster's count of a value
        lies outside its band (the least found when the search stops at its
        node limit, as the message says); None if not computed.
    """

    def __init__(self, message, *, max_deviation=None, tightest=None, excess_rows=None):
        super().__init__(message)
        self.max_deviation = max_deviation
        self.tightest = tightest
        self.excess_rows = excess_rows
