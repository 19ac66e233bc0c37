"""The command line's progress bar, and its notice that the kernels are being compiled.

The engines tell listeners about every pass over the data
(:func:`fairkm.utils._progress.listening`); :class:`BarListener` is such a listener,
so the bar follows the fit without reading anything it prints.
"""

from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm

from fairkm.utils._progress import listening

__all__ = ["COMPILE_NOTICE", "BarListener", "compile_notice", "progress_bar"]

COMPILE_NOTICE = (
    "fairkm: compiling the clustering kernels (numba), once for this installation, which "
    "takes a while; later runs load them from the cache"
)


class BarListener:
    """Move a progress bar by one step per pass, or per fit.

    Parameters
    ----------
    bar : tqdm
        The bar to update.
    per_fit : bool
        False: one step per pass (sweep or epoch), the objective shown next
        to the bar, or per step of the audit; a step of the bound's repair
        is named next to the bar. True: one step per finished fit (a ``"fit"`` report of
        :func:`fairkm.tradeoff.fairness_tradeoff`), the passes shown next to
        the bar.
    """

    def __init__(self, bar, *, per_fit):
        self._bar = bar
        self._per_fit = per_fit

    def __call__(self, progress):
        """Take one :class:`fairkm.utils._progress.Progress` report."""
        if progress.kind in ("repair", "audit"):
            # A step of the bound's repair (within a fit's bar) or of the audit (its own bar,
            # one step each): named beside the bar at once, as these steps are few and long.
            if progress.kind == "audit":
                self._bar.update(1)
            self._bar.set_postfix_str(progress.step)
            return
        # The objective as FairKM's verbose line prints it.
        objective = f"{progress.objective:.10g}"
        if self._per_fit:
            if progress.kind == "fit":
                self._bar.update(1)
            else:
                self._bar.set_postfix_str(
                    f"{progress.kind} {progress.iteration}, objective {objective}",
                    refresh=False,
                )
        elif progress.kind != "fit":
            self._bar.update(1)
            self._bar.set_postfix_str(f"objective {objective}", refresh=False)


@contextlib.contextmanager
def progress_bar(quiet, *, desc, total=None, unit=" sweeps"):
    """Show a bar that the fits run inside the block move.

    Without ``total``, the bar counts passes; with it, fits (``total`` of
    them; the bar is full when the block ends). The bar appears only when
    the work lasts more than a second, only when standard error is a
    terminal, and never with ``quiet``.
    """
    if quiet:
        yield
        return
    # disable=None: no bar when standard error is not a terminal (logs, CI).
    with tqdm(desc=desc, total=total, unit=unit, delay=1.0, leave=False, file=sys.stderr,
              disable=None) as bar:
        if bar.disable:
            yield
            return
        with listening(BarListener(bar, per_fit=total is not None)):
            yield
        if total is not None:
            bar.update(total - bar.n)


def _on_terminal(stream):
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def compile_notice(quiet):
    """Say once, on standard error, that numba is compiling, while it does.

    Numba announces a compilation (its ``numba:compile`` event) only when no
    cached machine code fits: the first run after an installation, or after
    numba or the kernels changed. So the notice tells a cold cache from a slow
    fit by what numba does, not by a guess from the time taken. Like the bar,
    it appears only when standard error is a terminal, and never with
    ``quiet``.
    """
    if quiet or not _on_terminal(sys.stderr):
        yield
        return
    from numba.core import event

    class Notice(event.Listener):
        said = False

        def on_start(self, ev):
            if not self.said:
                self.said = True
                tqdm.write(COMPILE_NOTICE, file=sys.stderr)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Notice()):
        yield
