"""Reading and writing the command line's tables and files.

The format follows the file name: ``.csv`` (optionally compressed:
``.csv.gz``, ``.csv.bz2``, ``.csv.xz``) or ``.parquet``/``.pq``.
A command's outputs (:class:`OutputFiles`) are checked before any work, each
written to a temporary file in its destination's directory, then all renamed
over their destinations together: a reader never sees a half-written file, and
a failed or interrupted run leaves every previous file intact.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
import uuid
from pathlib import Path

import pandas as pd

from ._errors import DataError, UsageError, one_line

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
        When ``path`` is an input, exists (without ``overwrite``) or is a
        directory, when its directory does not exist, or when no file can be
        created in it (a file is created there and removed to find out).
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
    if path.is_dir():
        raise DataError(f"output {str(path)!r} is a directory.")
    if path.exists() and not overwrite:
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


def _temporary_name(path):
    # A name of our own (rather than mkstemp's 0600 file) keeps the user's umask
    # for a new file; the random part avoids clashing with a concurrent run.
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")


@contextlib.contextmanager
def _interrupts_held():
    """Hold Ctrl-C (SIGINT) back until the block ends, then raise KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
    if received:
        raise KeyboardInterrupt


class OutputFiles:
    """The output files of one command, written together or not at all.

    Each destination is checked when added, before any work
    (:func:`check_output_path`). Each content is written to a temporary file
    next to its destination; :meth:`commit` then renames them all over their
    destinations, with Ctrl-C held back until the last rename, so a command
    never leaves a new file beside a stale one. A replaced file's permission
    bits are kept; a new file gets the umask's. Leaving the ``with`` block
    without a commit (an error, an interrupt) removes the temporary files and
    changes no destination.

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
        """Rename every written file over its destination, Ctrl-C held back till the last.

        Raises
        ------
        DataError
            When a rename fails; the destinations not yet renamed are left as
            they were, and the message says which files were replaced.
        """
        renamed = []
        with _interrupts_held():
            for path, temporary in list(self._temporary.items()):
                try:
                    _keep_mode(path, temporary)
                    os.replace(temporary, path)
                except OSError as exc:
                    self.discard()
                    raise DataError(_partial_commit(path, exc, renamed, self._options)) from None
                del self._temporary[path]
                renamed.append(path)
                self.written.append(path)

    def discard(self):
        """Remove the temporary files not renamed yet."""
        for temporary in self._temporary.values():
            temporary.unlink(missing_ok=True)
        self._temporary.clear()


def _partial_commit(path, exc, renamed, destinations):
    """Say which outputs a failed commit replaced and which it left as they were."""
    left = [path, *(p for p in destinations if p not in renamed and p != path)]
    message = (f"cannot write {str(path)!r}: {one_line(exc)}; left as before: "
               f"{', '.join(repr(str(p)) for p in left)}")
    if renamed:
        message = (f"wrote {', '.join(repr(str(p)) for p in renamed)}, but {message} "
                   "(older than what was written)")
    return message + "."


def _keep_mode(path, temporary):
    """Give the new file the permission bits of the one it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    os.chmod(temporary, mode)
