"""Reading and writing the command line's tables and files.

The format follows the file name: ``.csv`` (optionally compressed:
``.csv.gz``, ``.csv.bz2``, ``.csv.xz``) or ``.parquet``/``.pq``.
A command's outputs (:class:`OutputFiles`) are checked before any work (a
free name or a regular file only, never a link, a device or a pipe), each
written to a temporary file in its destination's directory, then put in
place together at the end: created only where the name is still free, or,
with ``--overwrite``, replacing the old files once all of them are moved
aside. A reader never sees a half-written file, nor a new file beside a
stale one, and a failed or interrupted run leaves every previous file intact.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
import uuid
from pathlib import Path

import pandas as pd

from ._errors import DataError, Terminated, UsageError, one_line

__all__ = [
    "OutputFiles",
    "check_output_path",
    "check_writable",
    "read_table",
    "table_format",
]

_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz")
_PARQUET_SUFFIXES = (".parquet", ".pq")
PARQUET_HINT = 'Parquet files need pyarrow: pip install "fairkm[parquet]"'


def table_format(path):
    """Return ``"csv"`` or ``"parquet"`` from a file name, or None when it is neither.

    Parameters
    ----------
    path : str or path-like
        File name.

    Returns
    -------
    str or None
        The format the name's extension stands for.
    """
    name = Path(path).name.lower()
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    return None


def _require_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataError(PARQUET_HINT + ".") from None


def read_table(path, *, sep=None, keep_na_strings=False):
    """Read a CSV or Parquet file into a DataFrame, with one-line errors.

    Parameters
    ----------
    path : str or path-like
        The file; its extension gives the format (see :func:`table_format`).
    sep : str, default=None
        A CSV file's field separator; None is a comma.
    keep_na_strings : bool, default=False
        CSV only. False: pandas' default, ``NA``, ``None``, ``NULL``, ``nan``,
        empty fields and the like are missing values. True: every field of a
        text column is a value (``"NA"`` a category like any other); only an
        empty field in a column of numbers is missing.

    Returns
    -------
    pandas.DataFrame
        The rows, at least one.

    Raises
    ------
    DataError
        When the file is missing, unreadable, empty, has no rows or has two
        columns of the same name, or when a CSV file reads as one column
        whose name holds another likely separator.
    """
    path = Path(path)
    kind = table_format(path)
    if not path.exists():
        raise DataError(f"{str(path)!r}: no such file.")
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a directory, not a data file.")
    if kind == "parquet":
        _require_pyarrow()
    elif path.stat().st_size == 0:
        raise DataError(f"{str(path)!r} is empty.")
    sep = "," if sep is None else sep
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            _check_unique_names(pq.read_schema(path).names, path)
            frame = pd.read_parquet(path)
        else:
            header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str,
                                 na_filter=False)
            _check_unique_names([name for name in header.iloc[0] if name != ""], path)
            # low_memory=False reads each column in one piece, so a column's type
            # does not depend on where the parser's chunks happen to fall.
            na = {"keep_default_na": False, "na_values": []} if keep_na_strings else {}
            frame = pd.read_csv(path, sep=sep, low_memory=False, **na)
            if keep_na_strings:
                frame = _empty_fields_missing_in_numbers(frame)
    except DataError:
        raise
    except pd.errors.EmptyDataError:
        raise DataError(f"{str(path)!r} is empty.") from None
    except UnicodeDecodeError as exc:
        raise DataError(
            f"cannot read {str(path)!r}: it is not UTF-8 text ({exc.reason})."
        ) from None
    except Exception as exc:  # any parser or I/O failure means the file cannot be used
        raise DataError(f"cannot read {str(path)!r}: {one_line(exc)}.") from None
    if frame.shape[1] == 0:
        raise DataError(f"{str(path)!r} has no columns.")
    if kind == "csv" and frame.shape[1] == 1:
        _hint_separator(frame.columns[0], sep, path)
    if frame.shape[0] == 0:
        raise DataError(f"{str(path)!r} has no data rows (only a header).")
    return frame


def _check_unique_names(names, path):
    """Refuse two columns of one name (pandas would rename the copy, ``sex.1``)."""
    positions = {}
    for position, name in enumerate(names, start=1):
        positions.setdefault(name, []).append(position)
    repeated = [
        f"{name!r} {'twice' if len(where) == 2 else f'{len(where)} times'} (columns "
        f"{', '.join(map(str, where))})"
        for name, where in positions.items() if len(where) > 1
    ]
    if repeated:
        raise DataError(
            f"{str(path)!r} names {'; '.join(repeated)}; column names must be unique: rename "
            "the copies."
        )


# Separators a one-column CSV file's header may show, with how --sep names them.
_OTHER_SEPARATORS = {";": "';'", "\t": "tab", "|": "'|'"}


def _hint_separator(header, sep, path):
    for separator, option in _OTHER_SEPARATORS.items():
        if separator != sep and separator in str(header):
            shown = "tabs" if separator == "\t" else repr(separator)
            raise DataError(
                f"{str(path)!r} reads as one column named {str(header)!r}: its fields look "
                f"separated by {shown}, not {sep!r}; pass --sep {option}."
            )


def _empty_fields_missing_in_numbers(frame):
    """Read as numbers, empty fields missing, the text columns whose other fields are numbers."""
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        empty = column.astype(str) == ""
        if empty.any() and pd.to_numeric(column[~empty], errors="coerce").notna().all():
            frame[name] = pd.to_numeric(column.where(~empty))
    return frame


def _what_is(mode):
    """Name the kind of a file that is not a regular one."""
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")]
    return next((what for test, what in kinds if test(mode)), "not a regular file")


def _check_kind(path):
    """Refuse an output that exists and is not a regular file; return whether it exists.

    A symbolic link is refused rather than written through: replacing it would
    cut the link, and following it would write somewhere the command line does
    not name.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISLNK(mode):
        raise DataError(
            f"output {str(path)!r} is a symbolic link (to {os.readlink(path)!r}); fairkm does "
            "not write through links: name the file itself, or remove the link."
        )
    if stat.S_ISDIR(mode):
        raise DataError(f"output {str(path)!r} is a directory.")
    raise DataError(
        f"output {str(path)!r} is {_what_is(mode)}, not a regular file; fairkm writes regular "
        "files only: name a file."
    )


def check_output_path(path, *, inputs=(), overwrite=False):
    """Check, before any work is done, that an output can be written at ``path``.

    Parameters
    ----------
    path : str or path-like
        The output file.
    inputs : sequence of path-like, default=()
        Files that must never be overwritten (the input data).
    overwrite : bool, default=False
        Whether an existing file may be replaced.

    Raises
    ------
    DataError
        When ``path`` is an input, is not a regular file (a directory, a
        symbolic link, a device, a pipe), exists (without ``overwrite``),
        when its directory does not exist, or when no file can be created in
        it (a file is created there and removed to find out).
    """
    path = Path(path)
    for source in inputs:
        source = Path(source)
        same = (
            os.path.samefile(path, source)
            if path.exists() and source.exists()
            else path.resolve() == source.resolve()
        )
        if same:
            raise DataError(f"refusing to write over the input file {str(source)!r}.")
    if _check_kind(path) and not overwrite:
        raise DataError(f"output {str(path)!r} exists; pass --overwrite to replace it.")
    if not path.parent.is_dir():
        raise DataError(
            f"cannot write {str(path)!r}: directory {str(path.parent)!r} does not exist."
        )
    check_writable(path.parent, what=path)


def check_writable(directory, *, what=None):
    """Check that a file can be created in ``directory``, by creating one and removing it.

    Parameters
    ----------
    directory : path-like
        An existing directory.
    what : path-like, default=None
        The file the error names (default: the directory).

    Raises
    ------
    DataError
        When no file can be created there (permissions, a read-only file system).
    """
    directory = Path(directory)
    probe = _temporary_name(directory / "fairkm")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise DataError(
            f"cannot write {str(directory if what is None else what)!r}: {one_line(exc)}."
        ) from None
    probe.unlink(missing_ok=True)


def _temporary_name(path, kind="tmp"):
    # A name of our own (rather than mkstemp's 0600 file) keeps the user's umask
    # for a new file; the random part avoids clashing with a concurrent run.
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.{kind}")


@contextlib.contextmanager
def _signals_held():
    """Hold Ctrl-C (SIGINT) and SIGTERM back until the block ends, then act on the first."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    received = []
    previous = {signum: signal.signal(signum, lambda signum, frame: received.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    if received:
        raise KeyboardInterrupt if received[0] == signal.SIGINT else Terminated


# A file system without hard links answers os.link with one of these.
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK}
# The extensions a kept file's name keeps at its end (out.csv.gz -> out.1a2b3c4d.csv.gz).
_EXTENSIONS = (*_CSV_SUFFIXES, *_PARQUET_SUFFIXES, ".html", ".png", ".svg", ".pdf")


def _create(temporary, path):
    """Give the written ``temporary`` the name ``path``, which must be free.

    A hard link creates the name only if it is free, in one step; where the
    file system has no hard links, the free name is claimed with an empty file
    (``O_EXCL``), then replaced. Returns whether ``temporary`` still exists
    (the hard link leaves it).

    Raises
    ------
    FileExistsError
        When ``path`` exists (another program created it).
    """
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.replace(temporary, path)
    return False


def _kept_name(path, token):
    """Return the name a run's file is kept under when ``path`` was taken (``out.<token>.csv``)."""
    name = path.name
    extension = max((e for e in _EXTENSIONS if name.lower().endswith(e) and len(e) < len(name)),
                    key=len, default=path.suffix)
    return path.with_name(f"{name[: len(name) - len(extension)]}.{token}{extension}")


class OutputFiles:
    """The output files of one command, written together or not at all.

    Each destination is checked when added, before any work
    (:func:`check_output_path`). Each content is written to a temporary file
    next to its destination; :meth:`commit` then puts them all in place,
    Ctrl-C and SIGTERM held back until the last. Without ``overwrite`` each
    name is created only if it is still free (another program may have taken
    it while the command worked): if one is taken, none is written, and the
    files are kept under names of their own, which the error gives. With
    ``overwrite``, the files to replace are all moved aside first, so a run
    killed midway (SIGKILL, a power cut) leaves some new files and some
    missing, never a new file beside a stale one. A replaced file's
    permission bits are kept; a new file gets the umask's. Leaving the
    ``with`` block without a commit (an error, an interrupt) removes the
    temporary files and changes no destination.

    Parameters
    ----------
    inputs : sequence of path-like, default=()
        Files never to write over.
    overwrite : bool, default=False
        Whether existing files may be replaced.
    written : list, default=None
        Each committed destination is appended to it.
    """

    def __init__(self, *, inputs=(), overwrite=False, written=None):
        self._inputs = [Path(p) for p in inputs]
        self._overwrite = overwrite
        self._options = {}  # destination -> the option that named it
        self._temporary = {}  # destination -> its written temporary file
        self.written = [] if written is None else written

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.discard()

    def add(self, path, option):
        """Check the destination ``path`` of ``option`` (``"--report"``); None is skipped."""
        if path is None:
            return
        path = Path(path)
        check_output_path(path, inputs=self._inputs, overwrite=self._overwrite)
        for other, name in self._options.items():
            if other.resolve() == path.resolve():
                raise UsageError(f"{name} and {option} name the same file")
        self._options[path] = option

    def write(self, path, write):
        """Write one destination's content: ``write(temporary_path)`` creates it.

        Raises
        ------
        DataError
            When writing fails (the temporary file is then removed).
        """
        path = Path(path)
        temporary = _temporary_name(path)
        self._temporary[path] = temporary
        try:
            write(temporary)
        except Exception as exc:
            if isinstance(exc, DataError):
                raise
            # A full disk, a permission problem, an encoder failure.
            raise DataError(f"cannot write {str(path)!r}: {one_line(exc)}.") from None

    def write_text(self, path, text):
        """Write a UTF-8 text file."""
        self.write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))

    def write_table(self, path, frame, *, sep=None):
        """Write a DataFrame as CSV (``sep``, default comma) or Parquet, by extension."""
        if table_format(path) == "parquet":
            _require_pyarrow()

            def write(temporary):
                frame.to_parquet(temporary, index=False)
        else:
            # The temporary name hides the extension, so the compression is named here.
            compression = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}.get(
                Path(path).suffix.lower()
            )

            def write(temporary):
                frame.to_csv(temporary, index=False, sep=sep or ",", compression=compression)

        self.write(path, write)

    def commit(self):
        """Put every written file in place, Ctrl-C and SIGTERM held back till the last.

        Raises
        ------
        DataError
            When a destination is no longer a regular file or free, or when a
            file system operation fails; every destination is then left as it
            was, and the message says so (and where this run's files are kept
            when a free name was taken meanwhile).
        """
        with _signals_held():
            for path in self._temporary:
                _check_kind(path)  # it may have changed while the command worked
            if self._overwrite:
                self._replace_all()
            else:
                self._create_all()
        self.written.extend(self._temporary)
        self._temporary.clear()

    def _create_all(self):
        """Create every destination, each only if its name is free; else none of them."""
        created = {}  # destination -> whether its temporary file still exists
        for path, temporary in self._temporary.items():
            try:
                created[path] = _create(temporary, path)
            except OSError as exc:
                for done, linked in created.items():  # one unit: take back the ones made
                    if linked:
                        done.unlink(missing_ok=True)
                    else:
                        os.replace(done, self._temporary[done])
                if isinstance(exc, FileExistsError):
                    kept = self._keep()
                    raise DataError(
                        f"output {str(path)!r} was created by another program while this run "
                        "worked, and --overwrite was not given: nothing was replaced; this "
                        f"run's files are kept as {', '.join(repr(str(p)) for p in kept)}."
                    ) from None
                self.discard()
                raise DataError(
                    f"cannot write {str(path)!r}: {one_line(exc)}; no output was written."
                ) from None
        for path, linked in created.items():
            if linked:
                self._temporary[path].unlink(missing_ok=True)

    def _keep(self):
        """Give every written file a free name of its own beside its destination."""
        kept = []
        for path, temporary in self._temporary.items():
            for _ in range(100):
                name = _kept_name(path, uuid.uuid4().hex[:8])
                try:
                    if _create(temporary, name):
                        temporary.unlink(missing_ok=True)
                except FileExistsError:
                    continue
                except OSError:
                    name = temporary  # keep the hidden name rather than lose the file
                kept.append(name)
                break
        self._temporary.clear()
        return kept

    def _replace_all(self):
        """Move the files to replace aside, put the new ones in place, then drop the old ones."""
        aside, placed = {}, []
        try:
            for path, temporary in self._temporary.items():
                if os.path.lexists(path):
                    _keep_mode(path, temporary)
                    aside[path] = _temporary_name(path, "old")
                    os.rename(path, aside[path])
            for path, temporary in self._temporary.items():
                os.replace(temporary, path)
                placed.append(path)
        except OSError as exc:
            failed = next(p for p in self._temporary if p not in placed)
            left = self._restore(placed, aside)
            self.discard()
            raise DataError(f"cannot write {str(failed)!r}: {one_line(exc)}; {left}.") from None
        for old in aside.values():
            old.unlink(missing_ok=True)

    def _restore(self, placed, aside):
        """Undo a failed :meth:`_replace_all`; return what was left where."""
        lost = []
        for path in placed:
            with contextlib.suppress(OSError):  # the new file goes; failing that, it stays
                os.replace(path, self._temporary[path])
        for path, old in aside.items():
            try:
                os.replace(old, path)
            except OSError:
                lost.append(f"{str(path)!r} is kept as {str(old)!r}")
        if lost:
            return "the previous files could not all be put back: " + "; ".join(lost)
        return "every output was left as it was"

    def discard(self):
        """Remove the temporary files not put in place."""
        for temporary in self._temporary.values():
            temporary.unlink(missing_ok=True)
        self._temporary.clear()


def _keep_mode(path, temporary):
    """Give the new file the permission bits of the one it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    os.chmod(temporary, mode)
