"""The FairKM paper's datasets (downloaded and cached) and a synthetic generator.

The data files are not shipped with fairkm: each ``fetch_*`` function downloads
them from their public home on first use, checks their SHA-256 sums and keeps
them in the data home (see :func:`get_data_home`).
"""

from ._adult import fetch_adult
from ._base import get_data_home
from ._kinematics import fetch_kinematics
from ._synthetic import make_sensitive_blobs

__all__ = ["fetch_adult", "fetch_kinematics", "get_data_home", "make_sensitive_blobs"]
