"""The fairness audit as one self-contained HTML page.

:func:`render_html` turns an :class:`~._audit.Audit` into one HTML file whose
charts are PNG images embedded as ``data:`` URIs, so the report opens offline,
can be mailed as a single file, and loads nothing from the network.
"""

from __future__ import annotations

import base64
import html
import io

import pandas as pd

from ..metrics import MEASURES
from ._audit import comparison_sentence
from ._charts import composition_chart

__all__ = ["format_number", "render_html"]


def _png_data_uri(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 78em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; } .facts th, .facts td { text-align: left; }
.summary { background: #eef6ee; border-left: 4px solid #4a4; padding: 0.6em 1em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
dt { font-weight: bold; } dd { margin: 0 0 0.4em 1.5em; }
"""


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


def _table(frame, *, percent=(), table_id=None):
    formatters = {column: "{:.1%}".format for column in percent if column in frame.columns}
    attrs = f' id="{table_id}"' if table_id else ""
    # A named index becomes a plain first column, so its name heads it.
    named = frame.index.nlevels == 1 and frame.index.name is not None
    body = (frame.reset_index() if named else frame).to_html(
        float_format=format_number, na_rep="–", formatters=formatters, border=0,
        index=not named,
    )
    return f'<div class="scroll"{attrs}>{body}</div>'


def render_html(audit, *, title, facts):
    """Render an audit as one self-contained HTML page.

    Parameters
    ----------
    audit : Audit
    title : str
        Page title and heading.
    facts : list of (str, str)
        Labelled facts shown at the top (input file, rows, parameters...).

    Returns
    -------
    str
        The HTML document; images are embedded, nothing is fetched.
    """
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        '<table class="facts">',
        *(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts),
        "</table>",
    ]
    sentence = comparison_sentence(audit)
    if sentence:
        parts.append(f'<p class="summary">{esc(sentence)}</p>')

    parts.append("<h2>Measures</h2>")
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

    parts.append("<h2>Cluster sizes</h2>")
    for k, (name, table) in enumerate(audit.clusters.items()):
        # One table per clustering: cluster names need not match across clusterings.
        sizes = pd.DataFrame([table["size"].to_numpy()], columns=table.index.tolist(),
                             index=pd.Index([name], name="clustering"))
        parts.append(_table(sizes, table_id=f"sizes-{k}"))

    parts.append("<h2>Composition of each sensitive attribute</h2>")
    parts.append(
        "<p>Top bar: the dataset's mix. A fair clustering gives every cluster about the same "
        "mix.</p>"
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
        "<p>Size and share of the rows; with features, the root-mean-square distance of "
        "the rows to their centre and the centre's distance to the data's mean (in the "
        "encoded feature space); then each profile column: the mean of a numeric column or "
        "the most frequent value of another, with its share.</p>"
    )
    for k, (name, table) in enumerate(audit.clusters.items()):
        parts += [f"<h3>{esc(name)}</h3>", _table(table, percent=("share",),
                                                   table_id=f"clusters-{k}")]
    parts.append(
        "<p><small>Made by fairkm. FairKM: Abraham, Deepak P and Sundaram, "
        "<i>Fairness in Clustering with Multiple Sensitive Attributes</i>, EDBT 2020."
        "</small></p></body></html>"
    )
    return "\n".join(parts)
