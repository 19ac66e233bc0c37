"""Experiments over the public API: the fairness trade-off and the paper's evaluation."""

from ._reproduce import reproduce
from ._tradeoff import fairness_tradeoff, plot_tradeoff

__all__ = ["fairness_tradeoff", "plot_tradeoff", "reproduce"]
