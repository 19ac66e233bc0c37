"""The FairKM paper's evaluation over the public API (and the weight trade-off, re-exported)."""

from ..tradeoff import fairness_tradeoff, plot_tradeoff
from ._reproduce import reproduce

__all__ = ["fairness_tradeoff", "plot_tradeoff", "reproduce"]
