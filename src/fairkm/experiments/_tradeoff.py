"""Moved to :mod:`fairkm.tradeoff`; kept only while ``_protocol``/``_reproduce`` import it here."""

from ..tradeoff import fairness_tradeoff, plot_tradeoff  # noqa: F401
