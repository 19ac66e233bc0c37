"""The fairness audit of a clustering, as tables, text and a self-contained HTML page.

:func:`audit` measures a clustering (labels from any tool, or a fitted
:class:`fairkm.FairKM`) against S-blind K-Means, the best of several
k-means++ starts on the same features: the price of fairness on the K-Means
objective, every fairness measure of :data:`fairkm.metrics.MEASURES` per
attribute with a verdict (fairer, less fair, the same), and each attribute's
least fair cluster with its mix against the dataset's. The :class:`Audit`
it returns prints as text, writes HTML (:meth:`Audit.to_html`) and renders
itself in a notebook. The ``fairkm`` command's reports are made here.

:func:`drop_missing` drops incomplete rows and says how many went (the
command line's ``--dropna``); :class:`fairkm.exceptions.DataWarning` flags
columns whose kind or role looks wrong.
"""

from fairkm.utils._data_checks import drop_missing, missing_values

from ._audit import Audit, audit
from ._text import format_number

__all__ = ["Audit", "audit", "drop_missing", "format_number", "missing_values"]
