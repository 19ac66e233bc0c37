"""Where datasets live, and how their files are downloaded and verified.

Every file a loader needs is described by a :class:`RemoteFile`: the dataset it
belongs to, its file name and its SHA-256 sum. The file is looked up in
``<data_home>/<dataset>/<filename>``; when missing it is downloaded from
``BASE_URLS[dataset] + filename`` by scikit-learn's
:func:`sklearn.datasets.fetch_file`, which writes a temporary file in that
directory and moves it into place only once its checksum is right, retrying
network errors.
"""

from __future__ import annotations

import hashlib
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.error import HTTPError

from sklearn.datasets import fetch_file

from fairkm.utils._docstrings import docstring_filler

__all__ = ["BASE_URLS", "RemoteFile", "create_like_open", "dataset_file", "fill_docstring",
           "get_data_home"]

#: Where each dataset's files are downloaded from; the file name is appended.
#: Replace an entry to use a mirror (any URL scheme urllib opens, ``file://`` included).
BASE_URLS = {
    "adult": "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/",
    "kinematics": (
        "https://raw.githubusercontent.com/savithaabraham/Datasets/"
        "b8bc926b8ced3ee2b13d97f8a56540d79d7f13d8/"
    ),
}

# What every loader's docstring says of its files, written once.
fill_docstring = docstring_filler({
    "download_if_missing": """\
download_if_missing : bool, default=True
    Whether to download missing files. If False and a file is missing, a
    ``FileNotFoundError`` names the path searched.""",
    "as_frame": """\
as_frame : bool, default=True
    Return pandas objects (True) or NumPy arrays (False).""",
    "column_names": """\
feature_names : list of str
    Column names of ``features``.
sensitive_names : list of str
    Column names of ``sensitive``.""",
    "DESCR": """\
DESCR : str
    Description of the dataset.""",
    "download_raises": """\
FileNotFoundError
    If a file is missing and ``download_if_missing`` is False.
OSError
    If a download fails or a file does not match its checksum.""",
})

_ENV_VAR = "FAIRKM_DATA"
_CHUNK_SIZE = 1 << 16
# Network errors are retried (scikit-learn warns at each retry), this many times and seconds apart.
_N_RETRIES = 3
_RETRY_DELAY_S = 1


@dataclass(frozen=True)
class RemoteFile:
    """A file of a dataset, identified by its SHA-256 sum.

    Attributes
    ----------
    dataset : str
        Key into :data:`BASE_URLS` and name of the sub-directory of the data home.
    filename : str
        File name, both on the server and on disk.
    sha256 : str
        Expected SHA-256 sum, lower-case hex.
    """

    dataset: str
    filename: str
    sha256: str

    @property
    def url(self):
        """Download URL of the file."""
        return BASE_URLS[self.dataset] + self.filename


def get_data_home(data_home=None):
    r"""Return the directory where fairkm's datasets are searched for and stored.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Directory to use. When None, the ``FAIRKM_DATA`` environment variable is
        used if set, otherwise a per-user cache directory: ``%LOCALAPPDATA%\fairkm``
        on Windows, ``~/Library/Caches/fairkm`` on macOS and
        ``$XDG_CACHE_HOME/fairkm`` (default ``~/.cache/fairkm``) elsewhere.

    Returns
    -------
    pathlib.Path
        The directory, with ``~`` expanded. It is not created here; loaders create
        it when they download a file.
    """
    if data_home is None:
        data_home = os.environ.get(_ENV_VAR) or _user_cache_dir()
    return Path(data_home).expanduser()


def _user_cache_dir():
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "fairkm"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fairkm"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fairkm"


def _sha256sum(path):
    """SHA-256 sum of a file, as lower-case hex.

    Parameters
    ----------
    path : str or path-like
        File to hash.

    Returns
    -------
    str
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_file(remote, data_home=None, *, download_if_missing=True):
    """Return the local path of a dataset file, downloading it if needed.

    Parameters
    ----------
    remote : RemoteFile
        The file.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    download_if_missing : bool, default=True
        Whether to download the file when it is not in the data home.

    Returns
    -------
    pathlib.Path
        ``<data_home>/<remote.dataset>/<remote.filename>``, whose checksum matches.

    Raises
    ------
    FileNotFoundError
        If the file is missing and ``download_if_missing`` is False.
    OSError
        If the download fails (HTTP or network error, truncated body), or if the
        downloaded or existing file does not have the expected checksum. A failed
        download leaves no file behind.
    """
    path = get_data_home(data_home) / remote.dataset / remote.filename
    if path.is_file():
        got = _sha256sum(path)
        if got != remote.sha256:
            raise OSError(
                f"{path} has SHA-256 {got}, expected {remote.sha256}: it is not the original "
                f"file. Delete it to download it again from {remote.url}."
            )
        return path
    if not download_if_missing:
        raise FileNotFoundError(
            f"{remote.filename} was not found at {path} and download_if_missing=False. "
            f"Download it from {remote.url} to that path, or pass download_if_missing=True. "
            + _local_copy_hint(remote, path)
        )
    created = _missing_dirs(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fetch_file(remote.url, path.parent, remote.filename, sha256=remote.sha256,
                   n_retries=_N_RETRIES, delay=_RETRY_DELAY_S)
    except BaseException as exc:
        # Also on KeyboardInterrupt: scikit-learn removes its temporary file, and an empty
        # folder made for it goes too.
        _remove_created_dirs(created)
        if isinstance(exc, HTTPError):
            exc.close()  # it holds the open response
        if not isinstance(exc, OSError):
            raise
        # A URLError's reason reads better than its "<urlopen error ...>".
        reason = exc if isinstance(exc, HTTPError) else getattr(exc, "reason", exc)
        raise OSError(f"Could not download {remote.url}: {str(reason).rstrip('.')}. "
                      f"{_local_copy_hint(remote, path)}") from exc
    _chmod_like_open(path)
    return path


def _local_copy_hint(remote, path):
    """Say where a file was looked for and the three ways to point fairkm at a local copy.

    Parameters
    ----------
    remote : RemoteFile
        The file.
    path : pathlib.Path
        Where it was looked for.

    Returns
    -------
    str
    """
    where = f"{remote.dataset}/{remote.filename}"
    return (
        f"fairkm looked for {remote.filename} at {path}. If you have the file, put it there, "
        f"or point fairkm at the folder that holds {where}: the data_home argument of the "
        f"fetch_* functions, the {_ENV_VAR} environment variable, or --data-home on the "
        "command line."
    )


def create_like_open(path):
    """Create a new, empty temporary file next to ``path``, with the umask's permissions.

    ``tempfile.mkstemp`` makes files readable by their owner only (0600)
    whatever the umask; a file created with ``open`` gets ``0666 & ~umask``,
    as a downloaded or cached file should once it is renamed into place.

    Parameters
    ----------
    path : pathlib.Path
        The final file; the temporary one is a hidden file in its directory.

    Returns
    -------
    fd : int
        An open file descriptor, for writing.
    name : pathlib.Path
        The temporary file.
    """
    name = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                   0o666), name


def _missing_dirs(directory):
    """List the directories that ``mkdir(parents=True)`` would create, deepest first."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    return missing


def _remove_created_dirs(created):
    """Remove the directories a failed write created, deepest first, if they are empty.

    Parameters
    ----------
    created : list of pathlib.Path
        Directories created for the write, deepest first.
    """
    for directory in created:
        try:
            directory.rmdir()
        except OSError:  # not empty (another process wrote there) or already gone
            break


def _chmod_like_open(path):
    """Give ``path`` the permissions a new file made with ``open`` gets there.

    scikit-learn downloads to a ``tempfile`` file, readable by its owner only
    (0600) whatever the umask; a downloaded file should be like any file the
    user creates. The permissions are read from an empty file made beside it.
    """
    fd, probe = create_like_open(path)
    try:
        os.close(fd)
        os.chmod(path, os.stat(probe).st_mode & 0o777)
    finally:
        probe.unlink()
