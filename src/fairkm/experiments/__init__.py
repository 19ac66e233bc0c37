"""The FairKM paper's evaluation over the public API (and the weight trade-off, re-exported).

:func:`reproduce` reruns the paper's protocol; :func:`zgya_2019` is ZGYA as the
paper ran it (the June 2019 code of Ziko et al.) and :func:`zgya_2019_comparison`
sets it beside the released algorithm (:class:`fairkm.ZGYA`) on Adult.
"""

from fairkm.tradeoff import fairness_tradeoff, plot_tradeoff

from ._reproduce import reproduce
from ._zgya_2019 import zgya_2019, zgya_2019_comparison

__all__ = ["fairness_tradeoff", "plot_tradeoff", "reproduce", "zgya_2019", "zgya_2019_comparison"]
