"""Reading and writing the command line's tables and files.

The format follows the file name: ``.csv`` (optionally compressed:
``.csv.gz``, ``.csv.bz2``, ``.csv.xz``) or ``.parquet``/``.pq``.
Every output is written to a temporary file in the destination's directory
and then renamed over the destination, so a reader never sees a half-written
file and an interrupted run leaves any previous file intact.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pandas as pd

from ._errors import DataError, one_line

__all__ = [
    "check_output_path",
    "read_table",
    "table_format",
    "write_atomic",
    "write_table",
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


def read_table(path):
    """Read a CSV or Parquet file into a DataFrame, with one-line errors.

    Parameters
    ----------
    path : str or path-like
        The file; its extension gives the format (see :func:`table_format`).

    Returns
    -------
    pandas.DataFrame
        The rows, at least one.

    Raises
    ------
    DataError
        When the file is missing, unreadable, empty or has no rows.
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
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            # low_memory=False reads each column in one piece, so a column's type
            # does not depend on where the parser's chunks happen to fall.
            frame = pd.read_csv(path, low_memory=False)
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
    if frame.shape[0] == 0:
        raise DataError(f"{str(path)!r} has no data rows (only a header).")
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
        directory, or when its directory does not exist.
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


def write_atomic(path, write):
    """Write a file through a temporary file in the same directory, then rename it.

    Parameters
    ----------
    path : str or path-like
        The destination.
    write : callable
        ``write(temporary_path)`` creates the file's content at the given path.

    Raises
    ------
    DataError
        When writing fails; the temporary file is removed and ``path`` is left
        as it was.
    """
    path = Path(path)
    # A name of our own (rather than mkstemp's 0600 file) keeps the user's umask
    # for the final file; the random part avoids clashing with a concurrent run.
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException as exc:  # interrupted too: never leave the temporary file behind
        temporary.unlink(missing_ok=True)
        if isinstance(exc, Exception) and not isinstance(exc, DataError):
            # A full disk, a permission problem, an encoder failure.
            raise DataError(f"cannot write {str(path)!r}: {one_line(exc)}.") from None
        raise


def write_table(frame, path):
    """Write a DataFrame as CSV or Parquet (by extension), atomically.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its index is not written.
    path : str or path-like
        The destination; see :func:`table_format`.

    Raises
    ------
    DataError
        When pyarrow is missing for Parquet, or writing fails.
    """
    kind = table_format(path)
    if kind == "parquet":
        _require_pyarrow()

        def write(temporary):
            frame.to_parquet(temporary, index=False)
    else:
        # The temporary name hides the extension, so the compression is named here.
        compression = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}.get(
            Path(path).suffix.lower()
        )

        def write(temporary):
            frame.to_csv(temporary, index=False, compression=compression)

    write_atomic(path, write)
