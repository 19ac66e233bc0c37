"""What the commands print: labelled facts, an audit's tables, the trade-off table."""

from __future__ import annotations

import textwrap

import pandas as pd

from ._audit import comparison_sentence
from ._report import format_number

__all__ = ["print_audit", "print_facts", "print_tradeoff"]


def print_facts(facts):
    """Print ``label: value`` lines, then an empty line."""
    for label, value in facts:
        print(f"{label}: {value}")
    print()


def print_audit(audit):
    """Print an audit: cluster sizes, quality and fairness tables, the comparison."""
    width = max(len(name) for name in audit.labels)
    print("Cluster sizes")
    for name, table in audit.clusters.items():
        sizes = "  ".join(f"{cluster}: {size:,}" for cluster, size in table["size"].items())
        print(textwrap.fill(sizes, 100, initial_indent=f"  {name:<{width}}  ",
                            subsequent_indent=" " * (width + 4)))
    with pd.option_context("display.float_format", format_number, "display.width", 120,
                           "display.max_columns", None, "display.max_rows", None):
        if audit.quality is not None:
            print("\nQuality (CO: K-Means objective, lower is tighter; SH: silhouette, higher "
                  "is better separated;\n  DevC, DevO: distance to the K-Means clustering)")
            print(audit.quality.to_string(na_rep="-"))
        print("\nFairness per attribute (AE, AW: mean and ME, MW: max distance between a "
              "cluster's mix and\n  the dataset's, lower is fairer; balance: higher is fairer; "
              "KL, MPV: lower is fairer)")
        print(audit.fairness.to_string(na_rep="-"))
    sentence = comparison_sentence(audit)
    if sentence:
        print("\n" + textwrap.fill(sentence, 100))


def print_tradeoff(table):
    """Print the trade-off table, one row per fairness weight."""
    with pd.option_context("display.float_format", format_number, "display.width", 150,
                           "display.max_columns", None):
        print(table.to_string(index=False))
