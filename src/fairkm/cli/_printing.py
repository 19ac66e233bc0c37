"""What the commands print: labelled facts and the trade-off table.

An audit prints itself (:meth:`fairkm.report.Audit.to_text`). Names and values
from the data are printed with their control characters made visible
(:func:`fairkm.utils._printable.visible`), as in the audit's text.
"""

from __future__ import annotations

import pandas as pd

from fairkm.report import format_number
from fairkm.utils._printable import visible

__all__ = ["fact_lines", "print_facts", "print_tradeoff"]


def fact_lines(facts):
    """Return the ``label: value`` lines of ``facts``, each ending in a newline."""
    return "".join(visible(f"{label}: {value}") + "\n" for label, value in facts)


def print_facts(facts):
    """Print ``label: value`` lines, then an empty line."""
    print(fact_lines(facts))


def print_tradeoff(table):
    """Print the trade-off table, one row per fairness weight."""
    with pd.option_context("display.float_format", format_number, "display.width", 150,
                           "display.max_columns", None):
        print(visible(table.to_string(index=False)))
