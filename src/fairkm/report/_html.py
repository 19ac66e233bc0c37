"""The audit as HTML: one self-contained page, or one ``<div>`` for a notebook.

Charts are PNG images embedded as ``data:`` URIs, so the page opens offline,
can be mailed as a single file, and loads nothing from the network. The style
sheet is scoped to ``.fairkm-report``, so the notebook fragment does not
restyle the page around it.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

from fairkm.metrics import MEASURES
from fairkm.utils._options import MULTIPLICATIVE
from fairkm.utils._printable import visible

from ._charts import composition_chart
from ._measure import TOLERANCE
from ._text import (
    COSTS_HELP,
    advice,
    bound_cell,
    bound_sentences,
    cluster_size,
    costs_note,
    format_number,
    headline,
)

__all__ = ["render_html"]


def _png_data_uri(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


_CSS = """
.fairkm-report { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
  line-height: 1.4; max-width: 78em; }
.fairkm-report h1 { font-size: 1.6em; }
.fairkm-report h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; font-size: 1.3em; }
.fairkm-report table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
.fairkm-report th, .fairkm-report td { border: 1px solid #ddd; padding: 0.25em 0.6em;
  text-align: right; }
.fairkm-report th { background: #f3f3f3; }
.fairkm-report td:first-child, .fairkm-report th:first-child { text-align: left; }
.fairkm-report .scroll { overflow-x: auto; }
.fairkm-report .facts th, .fairkm-report .facts td, .fairkm-report .worst td,
.fairkm-report .worst th { text-align: left; }
.fairkm-report .summary { background: #eef6ee; border-left: 4px solid #4a4;
  padding: 0.6em 1em; margin: 0.5em 0; }
.fairkm-report .cost { background: #eef2f8; border-left: 4px solid #46a; padding: 0.6em 1em;
  margin: 0.5em 0; }
.fairkm-report .cost.high { background: #fdf6e3; border-left-color: #c90; }
.fairkm-report .cost.steep { background: #fbeaea; border-left: 6px solid #c33; }
.fairkm-report .cost .price { font-weight: bold; text-transform: uppercase; font-size: 0.85em;
  letter-spacing: 0.04em; margin-right: 0.4em; }
.fairkm-report .cost.high .price { color: #8a6100; }
.fairkm-report .cost.steep .price { color: #a11; }
.fairkm-report .alert { background: #fbeaea; border-left: 4px solid #c33; padding: 0.6em 1em;
  margin: 0.5em 0; font-weight: bold; }
.fairkm-report .advice, .fairkm-report .unchanged, .fairkm-report .costs { background: #fdf6e3;
  border-left: 4px solid #c90; padding: 0.6em 1em; margin: 0.5em 0; }
.fairkm-report td.fairer { background: #e3f3e3; } .fairkm-report td.less-fair {
  background: #f8d7d7; font-weight: bold; }
.fairkm-report td.same { color: #555; } .fairkm-report td.na { color: #999; }
.fairkm-report tr.small td { background: #fff4d6; }
.fairkm-report .guarantee { padding: 0.6em 1em; margin: 0.5em 0; }
.fairkm-report .guarantee.met { background: #eef6ee; border-left: 4px solid #4a4; }
.fairkm-report .guarantee.missed { background: #fbeaea; border-left: 4px solid #c33; }
.fairkm-report td.met { background: #e3f3e3; } .fairkm-report td.missed {
  background: #f8d7d7; font-weight: bold; }
.fairkm-report figure { margin: 1em 0; }
.fairkm-report figure img { max-width: 100%; height: auto; }
.fairkm-report dt { font-weight: bold; } .fairkm-report dd { margin: 0 0 0.4em 1.5em; }
"""

_PAGE_CSS = "body { margin: 2em auto; max-width: 80em; padding: 0 1em; }"


# The price of fairness (the K-Means objective's rise against the reference)
# from which the headline's box is shaded amber, and red: a few percent is the
# usual price of the default weight, a doubling rarely what anyone meant to pay.
PRICE_HIGH = 0.10
PRICE_STEEP = 0.50


def _price(audit):
    """Return the K-Means objective's relative rise from the reference to the audited one."""
    co = audit.quality["CO"]
    reference, main = co[audit.reference], co[audit.main]
    if reference == 0:
        return 0.0 if main == 0 else np.inf
    return main / reference - 1.0


def _cost_box(audit, text):
    """Return the price of fairness in a box shaded by how high it is, with a word saying so."""
    price = _price(audit)
    css, label = "cost", ""
    if price > PRICE_STEEP:
        css, label = "cost steep", "steep price"
    elif price > PRICE_HIGH:
        css, label = "cost high", "high price"
    badge = f'<span class="price">{label}</span>' if label else ""
    return f'<p class="{css}">{badge}{html.escape(text)}</p>'


def _size(value):
    """Format a size as the charts do: a whole count with separators (3,663), else a measure."""
    if np.isnan(value):
        return "–"
    return f"{value:,.0f}" if float(value).is_integer() else format_number(value)


def _table(frame, *, percent=(), sizes=(), table_id=None):
    formatters = {column: "{:.1%}".format for column in percent if column in frame.columns}
    formatters.update({column: _size for column in sizes if column in frame.columns})
    attrs = f' id="{table_id}"' if table_id else ""
    # A named index becomes a plain first column, so its name heads it.
    named = frame.index.nlevels == 1 and frame.index.name is not None
    body = (frame.reset_index() if named else frame).to_html(
        float_format=format_number, na_rep="–", formatters=formatters, border=0,
        index=not named,
    )
    return f'<div class="scroll"{attrs}>{body}</div>'


def _verdict_cell(row):
    if row["verdict"] == "n/a":
        return '<td class="na">–</td>'
    change = "up from 0" if np.isinf(row["change"]) else f"{row['change']:+.0%}"
    css = row["verdict"].replace(" ", "-")
    return f'<td class="{css}">{html.escape(change)} {html.escape(row["verdict"])}</td>'


def _verdict_table(audit):
    """Attributes down, fairness measures across: change against the reference, coloured."""
    measures = list(audit.fairness.columns)
    head = "".join(f"<th>{html.escape(m)}</th>" for m in measures)
    rows = []
    for attribute in audit.fairness.index.get_level_values(0).unique():
        cells = "".join(_verdict_cell(audit.verdicts.loc[(attribute, m)]) for m in measures)
        rows.append(f"<tr><td>{html.escape(str(attribute))}</td>{cells}</tr>")
    return (
        '<div class="scroll" id="verdicts"><table><thead><tr><th>attribute</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _worst_table(audit):
    rows = []
    for (attribute, name), row in audit.worst.iterrows():
        css = ' class="small"' if row["small"] else ""
        rows.append(
            f"<tr{css}><td>{html.escape(str(attribute))}</td><td>{html.escape(name)}</td>"
            f"<td>{html.escape(str(row['cluster']))}</td>"
            f"<td>{html.escape(cluster_size(audit, row))}</td>"
            f"<td>{html.escape(row['detail'])}</td><td>{format_number(row['distance'])}</td></tr>"
        )
    return (
        '<div class="scroll" id="worst"><table class="worst"><thead><tr><th>attribute</th>'
        "<th>clustering</th><th>cluster</th><th>size</th><th>its mix against the "
        "data's</th><th>distance (sets ME)</th></tr></thead><tbody>"
        f"{''.join(rows)}</tbody></table></div>"
    )


def _bounds_table(audit):
    """Per attribute and clustering: the bound, the largest deviation, met or not, and where."""
    esc = html.escape
    first = next(iter(audit.bounds.values()))
    kind, table = first.deviation_kind, first.table
    rows = []
    for attribute in table.index[table["kind"] != "numeric"]:  # categorical bounds only
        for name, check in audit.bounds.items():
            row = check.table.loc[attribute]
            target = not np.isnan(row["min_balance"])
            if np.isnan(row["bound"]) and not target:
                bound, verdict = "–", '<td class="na">not bounded</td>'
            else:
                met = bool(row["satisfied"])
                bound = "–" if np.isnan(row["bound"]) else format_number(row["bound"])
                verdict = (f'<td class="{"met" if met else "missed"}">'
                           f'{"yes" if met else "no"}</td>')
            where = bound_cell(row, audit.weighted)
            if target:
                # The balance against its target, beside the band.
                bound += f"; balance ≥ {format_number(row['min_balance'])}"
                where += (f"; lowest balance {row['balance']:.4f} (cluster "
                          f"{row['balance_cluster']})")
            rows.append(
                f"<tr><td>{esc(str(attribute))}</td><td>{esc(name)}</td><td>{esc(bound)}</td>"
                f"<td>{format_number(row['deviation'])}</td>{verdict}"
                f"<td>{esc(where)}</td></tr>"
            )
    what = ("the smallest delta whose band [(1 - delta) p, p / (1 - delta)] holds every "
            "share" if kind == MULTIPLICATIVE else "the largest |share - p|")
    return (
        '<div class="scroll" id="bounds"><table class="worst"><thead><tr><th>attribute</th>'
        f"<th>clustering</th><th>bound ({esc(kind)})</th><th>deviation: {esc(what)}</th>"
        "<th>every cluster within</th><th>where it comes closest (or misses most)</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _guarantee_lines(audit):
    """Return one paragraph per clustering saying whether every cluster is within the bound."""
    esc = html.escape
    return [f'<p class="guarantee {"met" if met else "missed"}">{esc(sentence)}</p>'
            for _, met, sentence in bound_sentences(audit)]


def _guarantee(audit):
    """Return the section on the bound asked (``max_deviation``), per attribute."""
    return [
        '<h2 id="guarantee">Every cluster within the bound of the dataset\'s mix?</h2>',
        "<p>For every value of every categorical attribute, each cluster's share against "
        "the dataset's (p): the cluster that comes closest to the bound, or misses it most. "
        "Unlike the averages, a small cluster counts as much as a large one. A violation (in "
        "the sentences above) is how far that share lies outside the bound's band.</p>",
        _bounds_table(audit),
    ]


def _measures(audit):
    esc = html.escape
    parts = ["<h2>Measures</h2>"]
    # Every fairness measure is in the tables; quality ones only with features.
    shown = [measure.name for measure in MEASURES.values() if measure.kind == "fairness"]
    if audit.quality is not None:
        shown = [*audit.quality.columns, *shown]
        parts += ["<h3>Quality</h3>", _table(audit.quality, table_id="quality")]
    parts += [
        "<h3>Fairness, mean over the sensitive attributes</h3>",
        _table(audit.fairness.loc["mean"], table_id="fairness-mean"),
        "<h3>Fairness per attribute</h3>",
        _table(audit.fairness.drop(index="mean"), table_id="fairness"),
        "<details><summary>What the measures mean</summary><dl>",
        *(f"<dt>{esc(k)}</dt><dd>{esc(MEASURES[k].help)}</dd>" for k in shown),
        "</dl><p>Numeric attributes are standardised; their AE/ME compare cluster means, "
        "AW/MW whole distributions, and balance, KL and MPV do not apply (–).</p></details>",
    ]
    return parts


def _costs(audit):
    """Return the equitable-cost section: each attribute's gap, then each group's mean cost."""
    if audit.costs is None:
        return []
    weighted = ", weighted" if audit.weighted else ""
    note = costs_note(audit)
    return [
        '<h2 id="equitable-cost">Equitable cost: which group the clustering serves worst</h2>',
        f"<p>{html.escape(COSTS_HELP.format(weighted=weighted))}</p>",
        _table(audit.costs, sizes=("worst group size", "best group size"), table_id="costs"),
        *([f"<p>{html.escape(note)}</p>"] if note else []),
        "<details><summary>Each group's mean cost</summary>",
        _table(audit.group_costs, sizes=("size",), table_id="group-costs"),
        "</details>",
    ]


def _clusters(audit):
    esc = html.escape
    parts = ["<h2>Cluster sizes</h2>"]
    if audit.weighted:
        parts.append("<p>The total weight of each cluster's rows (a row of weight w counts as w "
                     "rows); every share, mix and measure of this report is weighted alike.</p>")
    for k, (name, table) in enumerate(audit.clusters.items()):
        # One table per clustering: cluster names need not match across clusterings.
        sizes = pd.DataFrame([table["size"].to_numpy()], columns=table.index.tolist(),
                             index=pd.Index([name], name="clustering"))
        parts.append(_table(sizes, sizes=sizes.columns, table_id=f"sizes-{k}"))
    parts.append("<h2>Composition of each sensitive attribute</h2>")
    parts.append(
        "<p>Top bar: the dataset's mix. A fair clustering gives every cluster about the same "
        "mix. Each panel marks its least fair cluster in red.</p>"
    )
    for attribute in audit.sensitive.columns:
        uri = _png_data_uri(composition_chart(audit, attribute))
        alt = f"Per-cluster composition of {attribute}"
        caption = f"{alt}, {' and '.join(audit.labels)}."
        if attribute in audit.numeric_sensitive:
            caption += (
                " Thin line: 5th to 95th percentile; bar: 25th to 75th; dot: mean; dashed "
                "line: the dataset's mean."
            )
        parts.append(
            f'<figure><img src="{uri}" alt="{esc(alt)}"><figcaption>{esc(caption)}'
            "</figcaption></figure>"
        )
    parts.append("<h2>Clusters</h2>")
    parts.append(
        "<p>Size and share of the rows (with weights: total weight, rows and share of the "
        "weight); with features, the root-mean-square distance of "
        "the rows to their centre and the centre's distance to the data's mean (in the "
        "encoded feature space); then each profile column: the mean of a numeric column or "
        "the most frequent value of another, with its share.</p>"
    )
    for k, (name, table) in enumerate(audit.clusters.items()):
        parts += [f"<h3>{esc(name)}</h3>", _table(table, percent=("share",), sizes=("size",),
                                                   table_id=f"clusters-{k}")]
    return parts


def render_html(audit, *, full_page=True):
    r"""Render an audit as HTML.

    Parameters
    ----------
    audit : Audit
    full_page : bool, default=True
        A whole document (True) or one ``<div class="fairkm-report">`` with
        its scoped style sheet, for a notebook.

    Returns
    -------
    str
        The page, every control character from the data (NUL is invalid in
        HTML, a terminal's escapes show as nothing) written as a visible
        escape such as ``\x1b`` (:func:`fairkm.utils._printable.visible`).
    """
    esc = html.escape
    heading = "h1" if full_page else "h2"
    parts = [
        f"<style>{_CSS}</style>",
        '<div class="fairkm-report">',
        f"<{heading}>{esc(audit.title)}</{heading}>",
        '<table class="facts">',
        *(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in audit.facts),
        "</table>",
    ]
    lines = headline(audit)
    parts += [_cost_box(audit, text) if kind == "cost" else f'<p class="{kind}">{esc(text)}</p>'
              for kind, text in lines if kind not in ("advice", "guarantee")]
    parts += _guarantee_lines(audit)
    if audit.notes:
        parts.append('<h2>Data checks</h2><ul id="notes">')
        parts += [f"<li>{esc(note)}</li>" for note in audit.notes]
        parts.append("</ul>")
    if audit.verdicts is not None:
        parts += [
            f"<h2>Fairness per attribute against {esc(audit.reference)}</h2>",
            f"<p>Each measure's change from {esc(audit.reference)} to {esc(audit.main)}: "
            f"green is fairer, red less fair, grey the same within {TOLERANCE:.0%} "
            "(balance: higher is fairer; the others: lower is fairer).</p>",
            _verdict_table(audit),
        ]
    parts += [
        "<h2>Least fair cluster of each attribute</h2>",
        "<p>The cluster whose mix of the attribute is farthest from the dataset's (it sets "
        "ME); small clusters (under half the average size) are shaded.</p>",
        _worst_table(audit),
    ]
    paragraph = advice(audit)
    if paragraph:
        parts.append(f'<p class="advice">{esc(paragraph)}</p>')
    if audit.bounds:
        parts += _guarantee(audit)
    parts += _measures(audit)
    parts += _costs(audit)
    parts += _clusters(audit)
    parts.append(
        "<p><small>Made by fairkm. FairKM: Abraham, Deepak P and Sundaram, "
        "<i>Fairness in Clustering with Multiple Sensitive Attributes</i>, EDBT 2020."
        "</small></p></div>"
    )
    # Last, over the whole page: the tables pandas writes escape <>& but no control character.
    body = visible("\n".join(parts))
    if not full_page:
        return body
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{visible(esc(audit.title))}</title><style>{_PAGE_CSS}</style></head><body>",
        body,
        "</body></html>",
    ])
