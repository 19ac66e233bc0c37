"""The audit in words: the headline, the worst clusters, what to do, the text summary."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from ._measure import TOLERANCE

__all__ = [
    "SMALL_CLUSTERS",
    "audit_text",
    "bound_cell",
    "bound_sentences",
    "format_number",
    "headline",
    "worst_sentences",
]

#: Why small clusters can stay unfair, and what to do about it.
SMALL_CLUSTERS = (
    "Why a small cluster can stay unfair: FairKM's fairness term weighs each cluster by the "
    "square of its share of the rows, so a cluster holding 2% of the rows counts 1/2,500 as "
    "much as one holding them all; making it fair buys almost nothing in the objective, and "
    "it can keep the mix K-Means gave it. What you can do: weigh that attribute more "
    "(attribute_weights={'sex': 3}, --attribute-weights sex=3), value fairness more "
    "overall (relative_weight=2, --relative-weight 2), ask for fewer clusters (larger "
    "clusters weigh more), or set a budget (max_cost=0.1, --max-cost 10%) and take the "
    "fairest clustering within it; or ask for a guarantee (FairKM(max_deviation=0.05), "
    "--max-deviation 0.05: every cluster's share of every value within 0.05 of the "
    "dataset's). Then audit again: sign off on the worst clusters, not on "
    "the averages."
)


def format_number(value):
    """Format a measure: 4 significant digits, large magnitudes in full with separators.

    Parameters
    ----------
    value : float

    Returns
    -------
    str
    """
    if 1e4 <= abs(value) < 1e12:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _change(value, reference):
    if reference == 0:
        return "no change" if value == 0 else "up from 0"
    return f"{value / reference - 1:+.1%}"


def _cost_sentence(audit):
    main, ref = audit.main, audit.reference
    co = audit.quality["CO"]
    if co[ref] == 0:  # every row on its centre: no price to state as a ratio
        change = 0.0 if co[main] == 0 else np.inf
    else:
        change = co[main] / co[ref] - 1.0
    if change < -1e-9:
        text = (
            f"The K-Means objective (CO) is {format_number(co[main])} for {main}, "
            f"{-change:.1%} LOWER than {format_number(co[ref])} for {ref}. Both are local "
            "optima of the same objective, so this is not fairness for free: the reference's "
            "starts missed a clustering at least as tight as this one."
        )
        own = audit.own_blind_inertia
        if np.isfinite(own) and own > 0:
            text += (
                f" Against the S-blind clustering {main} started from (CO {format_number(own)}),"
                f" fairness cost {co[main] / own - 1:+.1%}."
            )
        return text
    return (
        f"Price of fairness: the K-Means objective (CO) is {format_number(co[main])} for "
        f"{main} against {format_number(co[ref])} for {ref}, {change:+.1%}."
    )


def _worsenings(audit):
    """``{attribute: ["ME +85%", ...]}`` for every measure that got less fair, "mean" too."""
    table = audit.verdicts
    worse = table[table["verdict"] == "less fair"]
    found = {}
    for (attribute, measure), row in worse.iterrows():
        change = "up from 0" if np.isinf(row["change"]) else f"{row['change']:+.0%}"
        found.setdefault(attribute, []).append(f"{measure} {change}")
    return found


def worst_sentences(audit, name=None):
    """One sentence per attribute: the least fair cluster of clustering ``name``.

    Parameters
    ----------
    audit : Audit
    name : str, default=None
        The clustering (default: the audited one).

    Returns
    -------
    list of str
    """
    name = name or audit.main
    sentences = []
    for attribute in audit.sensitive.columns:
        row = audit.worst.loc[(attribute, name)]
        small = ", small" if row["small"] else ""
        sentences.append(
            f"{attribute}: cluster {row['cluster']} ({row['size']:,} rows, "
            f"{row['share']:.1%}{small}) is the least fair; {row['detail']}."
        )
    return sentences


def bound_cell(row):
    """Say where an attribute comes closest to its bound: a row of a ``BoundsCheck.table``.

    Parameters
    ----------
    row : pandas.Series

    Returns
    -------
    str
        Such as ``"cluster 2 (159 rows): 'Male' 0.860 against 0.730 overall"``.
    """
    where = f"cluster {row['cluster']} ({row['cluster_size']:,.0f} rows)"
    if row["kind"] == "numeric":
        return f"{where}: standardised mean {row['cluster_value']:+.3f}"
    value = row["value"].item() if isinstance(row["value"], np.generic) else row["value"]
    return (f"{where}: {value!r} {row['cluster_value']:.3f} against "
            f"{row['dataset_value']:.3f} overall")


def bound_sentences(audit):
    """One sentence per clustering: is every cluster within the bound asked, and the worst.

    Parameters
    ----------
    audit : Audit

    Returns
    -------
    list of (str, bool, str)
        ``(clustering, satisfied, sentence)``, the audited clustering first;
        empty when no bound was asked.
    """
    return [(name, check.satisfied, f"{name}: {check.summary()}")
            for name, check in audit.bounds.items()]


def headline(audit):
    """See :meth:`Audit.headline`."""
    lines = []
    main, ref = audit.main, audit.reference
    if ref is not None and audit.quality is not None:
        lines.append(("cost", _cost_sentence(audit)))
    ae = audit.fairness.loc["mean", "AE"]
    if ref is not None:
        lines.append(("summary", (
            f"Mean AE (lower is fairer): {ae[main]:.3g} for {main} against {ae[ref]:.3g} for "
            f"{ref}, {_change(ae[main], ae[ref])}."
        )))
        worse = _worsenings(audit)
        if worse:
            listed = "; ".join(f"{a}: {', '.join(m)}" for a, m in worse.items())
            n_worse = len([a for a in worse if a != "mean"])
            lines.append(("alert", (
                f"Less fair than {ref} on {n_worse} of {audit.sensitive.shape[1]} "
                f"attribute(s), for some measures: {listed} (changes within "
                f"{TOLERANCE:.0%} count as the same)."
            )))
        else:
            table = audit.verdicts.drop(index="mean", level="attribute")
            judged = table[table["verdict"] != "n/a"]
            fairer = int((judged["verdict"] == "fairer").sum())
            same = len(judged) - fairer
            lines.append(("summary", (
                f"No attribute got less fair on any measure: fairer on {fairer} of "
                f"{len(judged)} (attribute, measure) pairs"
                + (f", the same (within {TOLERANCE:.0%}) on {same}." if same else ".")
            )))
        stuck = [
            attribute for attribute in audit.sensitive.columns
            if audit.verdicts.loc[(attribute, "ME"), "verdict"] == "same"
        ]
        if stuck:
            lines.append(("unchanged", (
                f"The least fair cluster is no fairer than {ref}'s for {', '.join(stuck)} "
                f"(ME the same within {TOLERANCE:.0%}): whatever the averages say, the worst "
                "cluster did not get fairer."
            )))
    else:
        lines.append(("summary", f"Mean AE (lower is fairer): {ae[main]:.3g}."))
    lines += [("guarantee", sentence) for _, _, sentence in bound_sentences(audit)]
    worst = audit.worst.xs(main, level="clustering")
    missed = main in audit.bounds and not audit.bounds[main].satisfied
    flagged = missed or bool(worst["small"].any()) or any(kind in ("alert", "unchanged")
                                                           for kind, _ in lines)
    if flagged:
        lines.append(("advice", SMALL_CLUSTERS))
    return lines


def audit_text(audit):
    """Return the text summary the command line prints (see :meth:`Audit.to_text`)."""
    out = []
    width = max(len(name) for name in audit.labels)
    out.append("Cluster sizes")
    for name, table in audit.clusters.items():
        sizes = "  ".join(f"{cluster}: {size:,}" for cluster, size in table["size"].items())
        out.append(textwrap.fill(sizes, 100, initial_indent=f"  {name:<{width}}  ",
                                 subsequent_indent=" " * (width + 4)))
    with pd.option_context("display.float_format", format_number, "display.width", 120,
                           "display.max_columns", None, "display.max_rows", None):
        if audit.quality is not None:
            out.append("\nQuality (CO: K-Means objective, lower is tighter; SH: silhouette, "
                       "higher is better separated;\n  DevC, DevO: distance to the reference "
                       "clustering)")
            out.append(audit.quality.to_string(na_rep="-"))
        out.append("\nFairness per attribute (AE, AW: mean and ME, MW: max distance between "
                   "a cluster's mix and\n  the dataset's, lower is fairer; balance: higher is "
                   "fairer; KL, MPV: lower is fairer)")
        out.append(audit.fairness.to_string(na_rep="-"))
    out.append(f"\nLeast fair cluster of each attribute ({audit.main})")
    out += [textwrap.fill(s, 100, initial_indent="  ", subsequent_indent="    ")
            for s in worst_sentences(audit)]
    out.append("")
    for kind, sentence in audit.headline():
        prefix = "WARNING: " if kind == "alert" else ""
        out.append(textwrap.fill(prefix + sentence, 100))
    return "\n".join(out)
