"""Progress of a fit, reported pass by pass to whoever listens.

The engines call :func:`report` after every pass over the data (a sweep, a
mini-batch epoch, a Dask round). ``verbose`` printing is one listener; a
caller such as the command line's progress bar subscribes another with
:func:`listening`, without parsing any printed text. Listeners live in a
context variable, so they follow the code that registered them and never leak
into fits running in other threads.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass

__all__ = ["Progress", "Steps", "listening", "report"]

_LISTENERS = contextvars.ContextVar("fairkm_progress_listeners", default=())


@dataclass(frozen=True)
class Progress:
    """One pass of a fit over the data.

    Attributes
    ----------
    kind : {"sweep", "sample sweep", "epoch", "round", "fit", "assignment", "repair", "audit"}
        An exact sweep, an exact sweep of a coarse walk's sample of the rows
        (``docs/fairness-weight.md``), a mini-batch epoch, a round of the Dask engine, a
        whole fit of a series (:func:`fairkm.tradeoff.fairness_tradeoff`), a
        bounded assignment (:mod:`fairkm.bounds`; ``objective`` is then the
        K-Means cost), a step of the repair that keeps a FairKM clustering
        within its bound (``objective``: the K-Means cost of the clustering
        it tried, NaN for a step that tries none) or a step of
        :func:`fairkm.report.audit` (``objective`` NaN); ``step`` says which.
    iteration : int
        Passes of this run so far, this one included (1 for the first); for
        ``"fit"``, the fits of the series so far.
    objective : float
        The objective after the pass.
    n_moved : int
        Points that changed cluster during the pass.
    inertia, fairness : float
        The objective's two terms, when the engine computed them (else NaN).
    n_rejected, n_partitions : int
        Dask rounds only: partitions whose moves were rejected, of how many.
    step : str
        Repair and audit steps only: what the step did, in words.
    """

    kind: str
    iteration: int
    objective: float
    n_moved: int
    inertia: float = math.nan
    fairness: float = math.nan
    n_rejected: int = 0
    n_partitions: int = 0
    step: str = ""

    def describe(self):
        """Return the line ``verbose`` prints for this pass."""
        if self.kind in ("repair", "audit"):
            what = "FairKM bound repair" if self.kind == "repair" else "Audit"
            tried = ("" if math.isnan(self.objective) else
                     f": inertia {self.objective:.10g}, {self.n_moved} moved")
            return f"{what} step {self.iteration}: {self.step}{tried}"
        if self.kind == "fit":
            return f"FairKM fit {self.iteration}: objective {self.objective:.10g}"
        if self.kind == "assignment":
            return f"Bounded assignment {self.iteration}: inertia {self.objective:.10g}"
        if self.kind == "round":
            return (
                f"FairKM (dask) round {self.iteration}: objective {self.objective:.10g}, "
                f"{self.n_moved} moved, {self.n_rejected} of {self.n_partitions} partitions' "
                "moves rejected"
            )
        return (
            f"FairKM {self.kind} {self.iteration}: objective {self.objective:.10g} "
            f"(inertia {self.inertia:.10g}, fairness {self.fairness:.6g}), "
            f"{self.n_moved} moved"
        )


@contextlib.contextmanager
def listening(callback):
    """Call ``callback(progress)`` after every pass of every fit run inside the block.

    Parameters
    ----------
    callback : callable
        Called with one :class:`Progress` per pass, in the fitting thread.
    """
    token = _LISTENERS.set((*_LISTENERS.get(), callback))
    try:
        yield
    finally:
        _LISTENERS.reset(token)


def report(progress, verbose):
    """Tell every listener about ``progress``, and print it when ``verbose``."""
    if verbose:
        print(progress.describe())
    for callback in _LISTENERS.get():
        callback(progress)


class Steps:
    """Report the numbered steps of a ``kind`` of work ("repair", "audit") as they happen.

    Each call reports the next step: a :class:`Progress` whose ``step`` says
    what it did, with the K-Means cost and rows moved of what it tried (NaN
    and 0 for a step that tries no clustering), to every listener, and
    printed when ``verbose``.
    """

    def __init__(self, kind, verbose):
        self.kind, self.verbose, self.count = kind, verbose, 0

    def __call__(self, step, objective=math.nan, n_moved=0):
        self.count += 1
        report(Progress(self.kind, self.count, objective, n_moved, step=step), self.verbose)
