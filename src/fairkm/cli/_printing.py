"""What the commands print: labelled facts and the trade-off table.

An audit prints itself (:meth:`fairkm.report.Audit.to_text`).
"""

from __future__ import annotations

import pandas as pd

from fairkm.report import format_number

__all__ = ["print_facts", "print_tradeoff"]


def print_facts(facts):
    """Print ``label: value`` lines, then an empty line."""
    for label, value in facts:
        print(f"{label}: {value}")
    print()


def print_tradeoff(table):
    """Print the trade-off table, one row per fairness weight."""
    with pd.option_context("display.float_format", format_number, "display.width", 150,
                           "display.max_columns", None):
        print(table.to_string(index=False))
