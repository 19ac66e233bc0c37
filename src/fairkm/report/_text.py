"""The audit in words: the headline, the worst clusters, what to do, the text summary."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from fairkm.utils._options import PAPER_WEIGHTING, SIZE_WEIGHTING
from fairkm.utils._printable import visible

from ._measure import TOLERANCE

__all__ = [
    "advice",
    "audit_text",
    "bound_cell",
    "bound_sentences",
    "cost_lines",
    "costs_note",
    "cluster_size",
    "format_number",
    "headline",
    "worst_sentences",
]

def format_number(value):
    """Format a measure: 4 significant digits, large magnitudes in full with separators.

    Parameters
    ----------
    value : float
        The number to show.

    Returns
    -------
    str
        ``value`` as a report prints it.
    """
    if 1e4 <= abs(value) < 1e12:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _change(value, reference):
    if reference == 0:
        return "no change" if value == 0 else "up from 0"
    change = value / reference - 1
    # Equal up to rounding (the same clustering, weights in other units): no sign to show.
    return "no change" if abs(change) < 1e-9 else f"{change:+.1%}"


def _objective(audit):
    """Name the K-Means objective as the audit measured it (weighted or not)."""
    return "the weighted K-Means objective (CO)" if audit.weighted else "the K-Means objective (CO)"


def _cost_sentence(audit):
    main, ref = audit.main, audit.reference
    co = audit.quality["CO"]
    if co[ref] == 0:  # every row on its centre: no price to state as a ratio
        change = 0.0 if co[main] == 0 else np.inf
    else:
        change = co[main] / co[ref] - 1.0
    objective = _objective(audit)
    if change < -1e-9:
        text = (
            f"{objective[0].upper()}{objective[1:]} is {format_number(co[main])} for {main}, "
            f"{-change:.1%} LOWER than {format_number(co[ref])} for {ref}. Both are local "
            "optima of the same objective, so this is not fairness for free: the reference's "
            "starts missed a clustering at least as tight as this one."
        )
        # The fit's own pair, both in its weighting: the audit's CO may be in another
        # (a fit weighted, audited without its weights) or on other features.
        own, blind = audit.own_inertia, audit.own_blind_inertia
        if np.isfinite(own) and np.isfinite(blind) and blind > 0:
            text += (
                f" Against the S-blind clustering {main} started from, fairness cost "
                f"{own / blind - 1:+.1%} (its K-Means objective against that clustering's, "
                "as the fit measured both)."
            )
        return text
    return (
        f"Price of fairness: {objective} is {format_number(co[main])} for "
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


def _costlier_groups(audit):
    """``[(attribute, ratio, reference's ratio)]`` where the cost ratio rose beyond TOLERANCE.

    The cost ratio (the worst-served group's mean cost over the best-served's,
    :func:`fairkm.metrics.cost_gaps`) of each categorical attribute, in the
    audited clustering against the reference; empty without features. A ratio
    that is not finite in either (a best-served group of cost 0) is left to
    the table.
    """
    if audit.costs is None or audit.reference is None:
        return []
    ratio = audit.costs["cost ratio"]
    found = []
    for attribute in audit.costs.index.unique("attribute"):
        now, before = ratio[(attribute, audit.main)], ratio[(attribute, audit.reference)]
        if np.isfinite(now) and np.isfinite(before) and now > before * (1.0 + TOLERANCE):
            found.append((attribute, float(now), float(before)))
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
        sentences.append(
            f"{attribute}: cluster {row['cluster']} ({cluster_size(audit, row)}) is the least "
            f"fair; {row['detail']}."
        )
    return sentences


def cluster_size(audit, row):
    """Say how large a cluster of ``audit.worst`` is: its rows and its share (of the weight).

    Parameters
    ----------
    audit : Audit
    row : pandas.Series
        A row of :attr:`Audit.worst`.

    Returns
    -------
    str
        Such as ``"159 rows, 17.7%, small"`` or, weighted, ``"159 rows, 17.7%
        of the weight"``.
    """
    small = ", small" if row["small"] else ""
    if audit.weighted:
        return f"{int(row['rows']):,} rows, {row['share']:.1%} of the weight{small}"
    return f"{row['size']:,} rows, {row['share']:.1%}{small}"


def bound_cell(row, weighted=False):
    """Say where an attribute comes closest to its bound: a row of a ``BoundsCheck.table``.

    Parameters
    ----------
    row : pandas.Series
    weighted : bool, default=False
        Whether ``cluster_size`` is a total weight rather than a count of rows.

    Returns
    -------
    str
        Such as ``"cluster 2 (159 rows): 'Male' 0.860 against 0.730 overall"``.
    """
    size = (f"weight {format_number(row['cluster_size'])}" if weighted
            else f"{row['cluster_size']:,.0f} rows")
    where = f"cluster {row['cluster']} ({size})"
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


def _number(value):
    """Format a weight or budget as a user would type it."""
    return f"{value:.3g}"


def _flagged(audit):
    """Return the attributes to act on: less fair, worst cluster unchanged, or small."""
    names = list(audit.sensitive.columns)
    flagged = set()
    if audit.verdicts is not None:
        table = audit.verdicts.drop(index="mean", level="attribute")
        flagged |= {a for (a, _), v in table["verdict"].items() if v == "less fair"}
        flagged |= {a for a in names if table.loc[(a, "MW"), "verdict"] == "same"}
    worst = audit.worst.xs(audit.main, level="clustering")
    flagged |= {a for a in names if worst.loc[a, "small"]}
    return [a for a in names if a in flagged]


def _lost(audit):
    """Return the attributes a bounded FairKM's repair left further from the mix."""
    repair = audit.bound_repair
    return [] if repair is None else repair.attributes_worse


def _why(settings, attributes, lost=()):
    """Say why the flagged attributes' clusters stayed as they are, for the run that made them."""
    if lost:
        return (f"FairKM's clustering broke the bound asked (max_deviation="
                f"{settings.get('max_deviation')!r}), and no clustering of whole rows found "
                "meets it without leaving "
                f"{', '.join(lost)} further from the dataset's mix than FairKM left them: the "
                "one of least loss was kept (bound_repair_ has the table).")
    if settings is not None and settings.get("estimator") == "BoundedKMeans":
        return ("This clustering was made by BoundedKMeans: the cheapest clustering it found "
                "under the bound, which weighs the sensitive attributes only through the "
                "bound, so inside it each cluster keeps the mix its features give it.")
    if settings is None or settings.get("estimator") != "FairKM":
        # Labels alone do not say which method made them: FairKM's own labels, passed as an
        # array, reach here too.
        made = ("The audit was given labels, not the model that made them (pass the fitted "
                "model to say which)" if settings is None
                else f"This clustering was made by {settings['estimator']}")
        return (f"{made}: a method that does not weigh the sensitive attributes against "
                "the K-Means cost leaves each cluster with the mix its features give it.")
    weighting = settings.get("cluster_weighting_")
    if weighting == PAPER_WEIGHTING:
        return ("FairKM's fairness term weighed each cluster by the square of its share of "
                "the rows (cluster_weighting='paper'), so a cluster holding 2% of the rows "
                "counted 1/2,500 as much as one holding them all: making it fair bought "
                "almost nothing in the objective.")
    if weighting == SIZE_WEIGHTING:
        return ("FairKM's fairness term weighed each cluster by its share of the rows "
                "(cluster_weighting='size'), so a small cluster's mix counted little.")
    return ("Every cluster counted alike in FairKM's fairness term: the clusters furthest "
            f"from the dataset's mix of {', '.join(attributes)} stayed so because, at the price "
            "asked, moving rows into or out of them cost more K-Means cost than their "
            "fairness was worth.")


def _tighter(met):
    """Return a round bound (1, 2 or 5 times a power of ten) well below ``met``, or None."""
    if not np.isfinite(met) or met <= 0:
        return None
    top = 0.7 * met
    scale = 10.0 ** np.floor(np.log10(top))
    bound = max(m * scale for m in (1, 2, 5) if m * scale <= top)
    return float(f"{bound:.1g}") if bound >= 1e-4 else None


def _guarantee(met, fairkm):
    """Suggest a bound only where it would change the worst cluster, naming the one met."""
    bound = _tighter(met)
    if bound is None:
        return []
    python = f"FairKM(max_deviation={bound:g})" if not fairkm else f"max_deviation={bound:g}"
    return [f"or ask for a guarantee tighter than the one every cluster already meets "
            f"(every share within {met:.3g} of the dataset's): {python}, --max-deviation "
            f"{bound:g}, brings the worst cluster within {bound:g}"]


def _remedies(settings, attributes, met=np.nan):
    """List what to try next, in Python and on the command line, fitted to the run."""
    if settings is None or settings.get("estimator") != "FairKM":
        return [
            "fit FairKM on the same features and sensitive attributes (FairKM(n_clusters="
            "k).fit(X, sensitive_features=S); fairkm fit DATA --sensitive ...), which trades "
            "K-Means cost for every cluster's mix",
            *_guarantee(met, fairkm=False),
        ]
    out = []
    given = settings.get("attribute_weights")
    current = (dict(given) if isinstance(given, dict) else {})
    if attributes:
        raised = {a: 3 * float(current.get(a, 1.0)) for a in attributes}
        python = ", ".join(f"{a!r}: {_number(w)}" for a, w in raised.items())
        cli = ",".join(f"{a}={_number(w)}" for a, w in raised.items())
        out.append(f"weigh {', '.join(attributes)} more (attribute_weights={{{python}}}, "
                   f"--attribute-weights {cli})")
    if settings.get("cluster_weighting_") in (PAPER_WEIGHTING, SIZE_WEIGHTING):
        out.append("count every cluster alike (cluster_weighting='equal')")
    if settings.get("max_cost") is not None:
        # A budget is a share of at most 1 (above, it reads as a percentage), in Python as
        # on the command line; at 1 there is no larger one to suggest.
        if settings["max_cost"] < 1:
            budget = min(2 * settings["max_cost"], 1.0)
            out.append(f"allow a larger budget (max_cost={_number(budget)}, "
                       f"--max-cost {_number(100 * budget)}%)")
    elif settings.get("max_unfairness") is not None:
        target = settings["max_unfairness"] / 2
        out.append(f"aim lower (max_unfairness={_number(target)}, "
                   f"--max-unfairness {_number(100 * target)}%)")
    elif isinstance(settings.get("fairness_weight"), str) and settings["fairness_weight"] == "auto":
        weight = 2 * float(settings.get("relative_weight", 1.0))
        out.append(f"value fairness more overall (relative_weight={_number(weight)}, "
                   f"--relative-weight {_number(weight)})")
    else:
        out.append("use the scale-free weight with a budget (max_cost=0.1, --max-cost 10%) "
                   "instead of an absolute fairness_weight")
    k = settings.get("n_clusters")
    if isinstance(k, int) and k > 2:
        out.append(f"ask for fewer clusters (n_clusters below {k}): larger clusters mirror "
                   "the dataset more easily")
    if settings.get("max_deviation") is None:
        out += _guarantee(met, fairkm=True)
    return out


def advice(audit):
    """Say what to do about the clusters that stayed unfair, fitted to the attributes and run.

    Parameters
    ----------
    audit : Audit

    Returns
    -------
    str
        One paragraph: which attributes, why their clusters stayed unfair in
        the run that made them (:attr:`Audit.settings`), and what to change,
        leaving out what the run already set; empty when nothing is flagged.
    """
    lost = _lost(audit)
    attributes = [*_flagged(audit), *(a for a in lost if a not in _flagged(audit))]
    missed = audit.main in audit.bounds and not audit.bounds[audit.main].satisfied
    if not attributes and not missed:
        return ""
    settings = audit.settings
    subject = (f"What to do about {', '.join(attributes)}: " if attributes
               else "What to do about the bound: ")
    text = (subject + _why(settings, attributes or ["the bounded attributes"], lost)
            + " Try to ")
    text += "; ".join(_remedies(settings, attributes, audit.met_bound)) + "."
    if missed:
        # Never a looser bound than the one asked: the user chose it.
        text += (" The bound asked was not met by every cluster (see the guarantee above): "
                 "whole rows may not hold it in this many clusters; fewer clusters make it "
                 "easier to meet.")
    return text + " Then audit again: sign off on the worst clusters, not on the averages."


def headline(audit):
    """See :meth:`Audit.headline`."""
    lines = []
    main, ref = audit.main, audit.reference
    if ref is not None and audit.quality is not None:
        lines.append(("cost", _cost_sentence(audit)))
    cw, mw = (audit.fairness.loc["mean", measure] for measure in ("CW", "MW"))
    weighted = "weighted by the rows' weights; " if audit.weighted else ""
    what = (f"Distance of each cluster's mix from the dataset's ({weighted}lower is fairer; "
            f"total variation for a categorical attribute, averaged over the "
            f"{audit.sensitive.shape[1]} attribute(s))")
    if ref is not None:
        lines.append(("summary", (
            f"{what}: {cw[main]:.3g} for {main} against {cw[ref]:.3g} for {ref} "
            f"({_change(cw[main], cw[ref])}) on average over the clusters, each counted once "
            f"(CW); {mw[main]:.3g} against {mw[ref]:.3g} ({_change(mw[main], mw[ref])}) in "
            "the worst cluster (MW)."
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
                f"No attribute's clusters got further from the dataset's mix on any measure: "
                f"fairer on {fairer} of {len(judged)} (attribute, measure) pairs"
                + (f", the same (within {TOLERANCE:.0%}) on {same}." if same else ".")
            )))
        costlier = _costlier_groups(audit)
        if costlier:
            listed = "; ".join(f"{attribute} {now:.4g} against {before:.4g}"
                               for attribute, now, before in costlier)
            lines.append(("costs", (
                f"Groups served less alike than by {ref}: {listed} (equitable cost, the "
                "worst-served group's mean cost over the best-served's; changes within "
                f"{TOLERANCE:.0%} count as the same). Clusters that mirror the dataset's mix "
                "need not serve its groups alike."
            )))
        stuck = [
            attribute for attribute in audit.sensitive.columns
            if audit.verdicts.loc[(attribute, "MW"), "verdict"] == "same"
        ]
        if stuck:
            lines.append(("unchanged", (
                f"The least fair cluster is no fairer than {ref}'s for {', '.join(stuck)} "
                f"(MW the same within {TOLERANCE:.0%}): whatever the averages say, the worst "
                "cluster did not get fairer."
            )))
    else:
        lines.append(("summary", (
            f"{what}: {cw[main]:.3g} on average over the clusters, each counted once (CW); "
            f"{mw[main]:.3g} in the worst cluster (MW)."
        )))
    lines += [("guarantee", sentence) for _, _, sentence in bound_sentences(audit)]
    if _lost(audit):
        lines.append(("alert", (
            f"The bound was met only with a loss: {', '.join(_lost(audit))} ended further from "
            f"the dataset's mix than FairKM's own clustering left them ("
            f"{'; '.join(map(str, audit.bound_repair.loss))}).")))
    paragraph = advice(audit)
    if paragraph:
        lines.append(("advice", paragraph))
    return lines


COSTS_HELP = ("Each group's mean cost: the mean squared distance of its rows to their "
              "cluster's centre (the K-Means objective per row{weighted}). worst/best, the cost "
              "ratio: the worst-served group's mean cost over the best-served group's (1: every "
              "group served alike); a small group can set it alone. Socially fair k-means "
              "minimises the worst group's mean cost.")


def costs_note(audit):
    """Say which attributes have no group costs (numeric ones), or return ``""``."""
    numeric = [a for a in audit.sensitive.columns if a in audit.numeric_sensitive]
    if not numeric:
        return ""
    return (f"{', '.join(map(str, numeric))}: numeric, so no groups and no group costs; cut "
            "into bands (pd.qcut, say) and passed as categories, they would have some.")


def _costs_shown(audit):
    """Return the gaps as the text shows them: each group with its size, in 100 columns."""
    costs = audit.costs

    def named(which):
        return [f"{group} ({format_number(size) if audit.weighted else f'{size:,.0f}'})"
                for group, size in zip(costs[f"{which} group"], costs[f"{which} group size"],
                                       strict=True)]

    return pd.DataFrame({
        "worst group (size)": named("worst"), "worst cost": costs["worst group cost"],
        "best group (size)": named("best"), "best cost": costs["best group cost"],
        "worst/best": costs["cost ratio"],
    }, index=costs.index)


def cost_lines(audit):
    """Return the equitable-cost section of the text summary, a table per (attribute, clustering).

    Parameters
    ----------
    audit : Audit

    Returns
    -------
    list of str
        Empty without :attr:`Audit.costs`.
    """
    if audit.costs is None:
        return []
    weighted = ", weighted" if audit.weighted else ""
    lines = ["\nEquitable cost per attribute"]
    lines += textwrap.wrap(COSTS_HELP.format(weighted=weighted), 98, initial_indent="  ",
                           subsequent_indent="  ")
    lines.append(_costs_shown(audit).to_string(na_rep="-"))
    note = costs_note(audit)
    if note:
        lines += textwrap.wrap(note, 98, initial_indent="  ", subsequent_indent="  ")
    return lines


def audit_text(audit):
    """Return the text summary the command line prints (see :meth:`Audit.to_text`).

    Control characters from the data (NUL, a terminal's escapes) read as
    visible escapes (:func:`fairkm.utils._printable.visible`): printed, the text
    cannot recolour or rewrite the terminal.
    """
    out = []
    width = max(len(name) for name in audit.labels)
    if audit.weighted:
        total = format_number(float(audit.sample_weight.sum()))
        out.append(f"Cluster sizes (total weight; the rows weigh {total} in all, over "
                   f"{len(audit.sample_weight):,} rows)")
    else:
        out.append("Cluster sizes")
    for name, table in audit.clusters.items():
        shown = format_number if audit.weighted else "{:,}".format
        sizes = "  ".join(f"{cluster}: {shown(size)}" for cluster, size in table["size"].items())
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
        out += cost_lines(audit)
    out.append(f"\nLeast fair cluster of each attribute ({audit.main})")
    out += [textwrap.fill(s, 100, initial_indent="  ", subsequent_indent="    ")
            for s in worst_sentences(audit)]
    out.append("")
    for kind, sentence in audit.headline():
        prefix = "WARNING: " if kind == "alert" else ""
        out.append(textwrap.fill(prefix + sentence, 100))
    return visible("\n".join(out))
