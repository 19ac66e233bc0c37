"""Numba's on-disk kernel cache, read so that a damaged file costs a recompile, not a crash.

Every fairkm kernel is compiled with ``cache=True``: numba keeps, per kernel, an
index file (``.nbi``) and one data file per compiled signature (``.nbc``) in
its cache directory (next to the sources, or under ``NUMBA_CACHE_DIR``). A
crash or a full disk while numba writes them can leave them empty or
truncated, and numba then fails on every later call of the kernel with the
unpickler's error (``UnpicklingError``, ``EOFError``, ``ValueError``), naming
neither the file nor the fix. Two processes compiling new signatures of one
kernel at once can also leave the index naming, for one signature, the file of
the other. :func:`guard_kernel_caches` gives each kernel of a module a cache
that treats an unreadable entry, or one compiled for other argument types, as a
miss instead: it removes
the kernel's files, warns once per directory, and lets numba compile the
kernel again and write fresh files. Where the files cannot be removed, the
kernel is compiled in memory for this process and the warning says which
directory to delete.
"""

import glob
import os
import sys
import warnings

import numba
from numba.core import sigutils
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from fairkm.exceptions import KernelCacheWarning

__all__ = ["guard_kernel_caches"]

# The directories already named in a warning, so that a damaged cache warns once per process.
_warned = set()
# Frames in these directories are fairkm's or numba's own: the warning points past them.
_INNER = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep
    for module in (numba, sys.modules["fairkm"])
)


def _warn(message):
    """Warn, attributed to the first caller outside fairkm and numba (the user's fit)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_INNER):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, KernelCacheWarning, stacklevel=level)


def _types(args):
    """Write the argument types of a signature as numba prints them."""
    return "(" + ", ".join(str(arg) for arg in args) + ")"


class _GuardedCache(FunctionCache):
    """Numba's per-kernel cache, with an unreadable entry read as a miss."""

    def load_overload(self, sig, target_context):
        try:
            compiled = super().load_overload(sig, target_context)
        except Exception as exc:  # whatever unpickling damaged bytes raises
            self._discard(exc)
            return None
        if compiled is None:
            return None
        wanted = tuple(sigutils.normalize_signature(sig)[0])
        if tuple(compiled.signature.args) != wanted:
            # numba numbers a new signature's data file from the index it read: two processes
            # saving new signatures of one kernel at once can both write file 1, and the index
            # then names, for one signature, the code compiled for the other (which would fail
            # to unbox its arguments, or run the other case's loop on them).
            self._discard(ValueError(
                f"the entry for {_types(wanted)} holds the kernel compiled for "
                f"{_types(compiled.signature.args)}"))
            return None
        return compiled

    def _discard(self, exc):
        """Remove this kernel's index and data files; disable the cache if that fails."""
        base = os.path.join(self._cache_path, self._impl.filename_base)
        files = [base + ".nbi", *glob.glob(glob.escape(base) + ".*.nbc")]
        removed = True
        for path in files:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            except OSError:
                removed = False
        if not removed:
            # numba would read the same damaged index again before saving.
            self.disable()
        if self._cache_path in _warned:
            return
        _warned.add(self._cache_path)
        if removed:
            outcome = (
                "fairkm removed them and recompiles the kernel (this run takes longer, once); "
                "other damaged files of this directory are rebuilt the same way"
            )
        else:
            outcome = (
                "it could not be removed, so the kernel is compiled for this run only; "
                f"delete the directory {self._cache_path!r} (or point NUMBA_CACHE_DIR "
                "elsewhere) to rebuild the cache"
            )
        _warn(
            f"numba's kernel cache in {self._cache_path!r} is damaged: the files "
            f"{os.path.basename(base)}.nbi / .nbc could not be used "
            f"({type(exc).__name__}: {exc}); {outcome}."
        )


def guard_kernel_caches(namespace):
    """Give every cached numba kernel in ``namespace`` (a module's ``globals()``) the guarded cache.

    Call it at the end of a module that defines kernels with ``cache=True``;
    the kernels compile and cache exactly as before while their files read.
    """
    for value in list(namespace.values()):
        if isinstance(value, CPUDispatcher) and type(value._cache) is FunctionCache:
            value._cache = _GuardedCache(value.py_func)
