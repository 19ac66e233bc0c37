"""numba's on-disk kernel cache, keyed by the content of every kernel file.

numba's ``cache=True`` stamps a compiled function with the content of its own
source file only. A kernel that calls or inlines a helper from another file
keeps the helper's old machine code after that file is edited, and runs it on
every later start. :func:`cached_njit` compiles fairkm's kernels with a stamp
that also holds one sha256 over all of :data:`KERNEL_FILES`, so an edit to any
of them recompiles every kernel on the next start.

Everything else stays numba's: where the cache lives (the source's
``__pycache__``, else ``NUMBA_CACHE_DIR`` when set, else the user-wide cache
directory, as for a read-only install), the index by signature, target and
bytecode, and ``NUMBA_DISABLE_JIT``. Only the functions compiled here get the
stamp; other code's ``numba.njit(cache=True)`` is left as it is.

A kernel may use from another module only what a file of :data:`KERNEL_FILES`
defines (numba freezes called functions and global constants into the
caller's code); ``tests/test_kernel_cache.py`` holds the tree to this.
"""

import functools
import hashlib
import os

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.extending import is_jitted

__all__ = ["KERNEL_FILES", "cached_njit", "content_key", "content_keyed_njit"]

# Paths under the package root of every file that defines a compiled kernel,
# and this file (how the stamp is made).
KERNEL_FILES = (
    "_kernel_cache.py",
    "_kernels/_assign.py",
    "_kernels/_blocks.py",
    "_kernels/_moves.py",
    "_kernels/_pricing.py",
    "_kernels/_statistics.py",
    "baselines/_zgya_kernels.py",
    "bounds/_dual.py",
    "bounds/_kernels.py",
    "bounds/_search_kernels.py",
)


def content_key(root, files):
    """Return the sha256 (hex) of the files ``files`` under the folder ``root``.

    Parameters
    ----------
    root : str or os.PathLike
        The folder the names in ``files`` are relative to.
    files : tuple of str
        Relative paths, ``/``-separated; their order is part of the key.

    Returns
    -------
    str
        A digest of every file's name and bytes.
    """
    paths = tuple(os.path.join(root, *name.split("/")) for name in files)
    stamps = tuple((st.st_mtime_ns, st.st_size) for st in map(os.stat, paths))
    return _digest(tuple(files), paths, stamps)


@functools.cache
def _digest(names, paths, stamps):
    # ``stamps`` only keys the memo: a file edited while the process runs (an
    # ``importlib.reload`` in a notebook) is read and hashed again.
    del stamps
    digest = hashlib.sha256()
    for name, path in zip(names, paths, strict=True):
        with open(path, "rb") as source:
            data = source.read()
        # Lengths delimit the entries, so moving bytes across files changes the key.
        for part in (name.encode(), data):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    return digest.hexdigest()


class _KeyedLocator:
    """numba's chosen cache locator, with the content key added to its stamp."""

    def __init__(self, locator, key):
        self._locator = locator
        self._key = key

    def get_source_stamp(self):
        return (self._locator.get_source_stamp(), self._key)

    def __getattr__(self, name):
        return getattr(self._locator, name)


class _KeyedImpl(CompileResultCacheImpl):
    def __init__(self, py_func, key):
        # numba picks the locator (in-tree, NUMBA_CACHE_DIR, user-wide, or
        # NUMBA_CACHE_LOCATOR_CLASSES); only its stamp is extended.
        super().__init__(py_func)
        self._locator = _KeyedLocator(self._locator, key)


class _KeyedCache(FunctionCache):
    def __init__(self, py_func, key):
        # Cache.__init__ builds the impl and reads the stamp at once, so the
        # key has to reach the impl through the class it instantiates.
        self._impl_class = functools.partial(_KeyedImpl, key=key)
        super().__init__(py_func)


def content_keyed_njit(root, files):
    """Return an ``njit`` whose on-disk cache is keyed by the content of ``files``.

    Parameters
    ----------
    root : str or os.PathLike
        The folder the names in ``files`` are relative to.
    files : tuple of str
        Every source file whose edit must recompile the functions compiled
        by the returned decorator.

    Returns
    -------
    callable
        ``njit(**options)``, returning a decorator: ``numba.njit(cache=True,
        **options)``, except that the cache is stale once any of ``files``
        changes. Under ``NUMBA_DISABLE_JIT=1`` the decorator returns the
        function itself, as ``numba.njit`` does.
    """
    files = tuple(files)

    def njit(**options):
        if "cache" in options:
            raise TypeError(
                f"cache is always on for a kernel; do not pass it, got cache={options['cache']!r}."
            )

        def decorate(func):
            dispatcher = numba.njit(**options)(func)
            if is_jitted(dispatcher):
                # What Dispatcher.enable_caching does, with the keyed cache.
                dispatcher._cache = _KeyedCache(func, content_key(root, files))
            return dispatcher

        return decorate

    return njit


# fairkm's kernels: ``@cached_njit(nogil=True)`` where numba's would be
# ``@numba.njit(cache=True, nogil=True)``.
cached_njit = content_keyed_njit(os.path.dirname(os.path.abspath(__file__)), KERNEL_FILES)
