"""Per-run measures aggregated into the paper's tables, beside the published numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._protocol import CONVENTIONS, FAIRKM_ALL, FAIRKM_S, KMEANS, ZGYA_S, run_columns
from ._published import FAIRNESS_MEASURES, QUALITY_MEASURES, published_table

__all__ = [
    "fairness_table",
    "lambda_table",
    "markdown_summary",
    "markdown_table",
    "per_attribute_table",
    "quality_table",
    "summary_table",
]

# DevC and DevO are fairkm's definitions: the paper's could not be
# reconstructed, so its values are shown beside ours for reference only.
_LIBRARY_DEFINITIONS = ("DevC", "DevO")


def _rows(measures):
    """(measure, convention, per-run column, compared with the paper) per per-run column.

    "paper" is the convention behind the published values, "library" fairkm's
    definition where it differs, "shared" where both agree.
    """
    rows = []
    for measure in measures:
        columns = run_columns(measure)
        if measure in CONVENTIONS:
            (paper, library), (paper_column, library_column) = CONVENTIONS[measure], columns
            rows.append((measure, f"paper: {paper}", paper_column, True))
            rows.append((measure, f"library: {library}", library_column, False))
        else:
            convention = "library" if measure in _LIBRARY_DEFINITIONS else "shared"
            rows.append((measure, convention, *columns, True))
    return tuple(rows)


_QUALITY_ROWS = _rows(QUALITY_MEASURES)
_FAIRNESS_ROWS = _rows(FAIRNESS_MEASURES)
_QUALITY_METHODS = {KMEANS: KMEANS, ZGYA_S: "Avg. ZGYA", FAIRKM_ALL: "FairKM"}
_FAIRNESS_METHODS = {KMEANS: KMEANS, ZGYA_S: "ZGYA(S)", FAIRKM_ALL: "FairKM"}
IMPROVEMENT = "FairKM Impr(%)"


def _paper_dataset(dataset):
    # Variants of a dataset (the row-normalised Kinematics) share its published numbers.
    return "kinematics" if dataset.startswith("kinematics") else dataset


def _summarise(per_seed, keys, columns):
    """Mean, standard deviation (ddof=1) and count over seeds, in long format."""
    long = per_seed.melt(id_vars=[*keys, "seed"], value_vars=list(columns), var_name="column")
    grouped = long.groupby([*keys, "column"], sort=False)["value"]
    return grouped.agg(mean="mean", std="std", n_runs="count").reset_index()


def _attach_paper(table, published, on, rows):
    has_paper = {column: paper for _, _, column, paper in rows}
    names = {column: (measure, convention) for measure, convention, column, _ in rows}
    table = table.copy()
    table["measure"] = [names[c][0] for c in table["column"]]
    table["convention"] = [names[c][1] for c in table["column"]]
    table = table.merge(published, on=on, how="left")
    compared = table["column"].map(has_paper).astype(bool)
    table.loc[~compared, ["paper", "paper_ref"]] = [np.nan, ""]
    table["paper_ref"] = table["paper_ref"].fillna("")
    return table


def quality_table(runs_quality):
    """Tables 4 and 6: clustering quality of K-Means(N), Avg. ZGYA and FairKM.

    Parameters
    ----------
    runs_quality : pandas.DataFrame
        Per-fit quality rows from :func:`~fairkm.experiments._protocol.run_seed`.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, k, measure, convention and method: ``mean``,
        ``std`` and ``n_runs`` over seeds (Avg. ZGYA averages the per-attribute
        ZGYA(S) runs of each seed first), then ``paper`` and ``paper_ref``.
    """
    columns = [c for _, _, c, _ in _QUALITY_ROWS]
    runs = runs_quality[runs_quality["method"].isin(list(_QUALITY_METHODS))]
    per_seed = (
        runs.assign(method=runs["method"].map(_QUALITY_METHODS))
        .groupby(["dataset", "k", "method", "seed"], sort=False)[columns].mean().reset_index()
    )
    table = _summarise(per_seed, ["dataset", "k", "method"], columns)
    parts = []
    for dataset, part in table.groupby("dataset", sort=False):
        published = published_table("quality", _paper_dataset(dataset))
        parts.append(_attach_paper(part, published, ["k", "measure", "method"], _QUALITY_ROWS))
    table = pd.concat(parts, ignore_index=True)
    order = {
        "column": {c: i for i, c in enumerate(columns)},
        "method": {m: i for i, m in enumerate(_QUALITY_METHODS.values())},
    }
    table = table.sort_values(
        ["dataset", "k", "column", "method"],
        key=lambda s: s.map(order[s.name]) if s.name in order else s, kind="stable",
    )
    keep = ["dataset", "k", "measure", "convention", "method", "mean", "std", "n_runs", "paper",
            "paper_ref"]
    return table[keep].reset_index(drop=True)


def _fairness_per_seed(runs_fairness):
    """Per seed and attribute: K-Means(N), ZGYA fitted on that attribute, FairKM(All)."""
    runs = runs_fairness
    own = (runs["method"] == ZGYA_S) & (runs["sensitive"] == runs["attribute"])
    picked = runs[runs["method"].isin([KMEANS, FAIRKM_ALL]) | own]
    picked = picked.assign(method=picked["method"].map(_FAIRNESS_METHODS))
    columns = [c for _, _, c, _ in _FAIRNESS_ROWS]
    per_seed = picked[["dataset", "k", "seed", "method", "attribute", *columns]]
    # The paper's "Mean across S Attributes" block: each method's mean over attributes.
    means = (
        per_seed.groupby(["dataset", "k", "seed", "method"], sort=False)[columns].mean()
        .reset_index().assign(attribute="mean")
    )
    return pd.concat([means, per_seed], ignore_index=True), columns


def fairness_table(runs_fairness):
    """Tables 5 and 7: fairness per attribute and its mean, with FairKM's improvement.

    Parameters
    ----------
    runs_fairness : pandas.DataFrame
        Per-fit, per-attribute rows from
        :func:`~fairkm.experiments._protocol.run_seed`.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, k, attribute (``"mean"`` first), measure,
        convention and method: ``mean``, ``std``, ``n_runs`` over seeds, then
        ``paper`` and ``paper_ref``. ZGYA(S) on attribute S is the ZGYA run
        fitted on S alone; FairKM is fitted on all attributes at once. The
        method ``FairKM Impr(%)`` is ``100 (best - FairKM) / best`` of the
        means, ``best`` being the lower of K-Means(N) and ZGYA(S).
    """
    per_seed, columns = _fairness_per_seed(runs_fairness)
    keys = ["dataset", "k", "attribute", "method"]
    table = _summarise(per_seed, keys, columns)
    means = table.pivot_table(
        index=["dataset", "k", "attribute", "column"], columns="method", values="mean",
        sort=False,
    )
    best = np.minimum(means[KMEANS], means["ZGYA(S)"])
    gain = (100.0 * (best - means["FairKM"]) / best).rename("mean").reset_index()
    gain = gain.assign(method=IMPROVEMENT, std=np.nan, n_runs=table["n_runs"].max())
    table = pd.concat([table, gain], ignore_index=True)
    parts = []
    for dataset, part in table.groupby("dataset", sort=False):
        published = published_table("fairness", _paper_dataset(dataset))
        parts.append(_attach_paper(part, published, ["k", "attribute", "measure", "method"],
                                   _FAIRNESS_ROWS))
    table = pd.concat(parts, ignore_index=True)
    attributes = list(dict.fromkeys(per_seed["attribute"]))
    methods = [*_FAIRNESS_METHODS.values(), IMPROVEMENT]
    order = {
        "attribute": {a: i for i, a in enumerate(attributes)},
        "column": {c: i for i, c in enumerate(columns)},
        "method": {m: i for i, m in enumerate(methods)},
    }
    table = table.sort_values(
        ["dataset", "k", "attribute", "column", "method"],
        key=lambda s: s.map(order[s.name]) if s.name in order else s, kind="stable",
    )
    keep = ["dataset", "k", "attribute", "measure", "convention", "method", "mean", "std",
            "n_runs", "paper", "paper_ref"]
    return table[keep].reset_index(drop=True)


def per_attribute_table(runs_fairness):
    """Figures 1-4: fairness on each attribute of ZGYA(S), FairKM(All) and FairKM(S).

    Parameters
    ----------
    runs_fairness : pandas.DataFrame
        Per-fit, per-attribute rows.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, k, attribute, measure, convention and method
        (``ZGYA(S)`` and ``FairKM(S)`` fitted on that attribute alone,
        ``FairKM(All)`` on all attributes): ``mean``, ``std`` and ``n_runs``.
    """
    runs = runs_fairness
    own = runs["method"].isin([ZGYA_S, FAIRKM_S]) & (runs["sensitive"] == runs["attribute"])
    picked = runs[own | (runs["method"] == FAIRKM_ALL)]
    columns = [c for _, _, c, _ in _FAIRNESS_ROWS]
    table = _summarise(picked, ["dataset", "k", "attribute", "method"], columns)
    names = {c: (m, conv) for m, conv, c, _ in _FAIRNESS_ROWS}
    table.insert(3, "measure", [names[c][0] for c in table["column"]])
    table.insert(4, "convention", [names[c][1] for c in table["column"]])
    return table.drop(columns="column")


def lambda_table(lambda_runs):
    """Figures 5-7: means and standard deviations over seeds per fairness weight.

    Parameters
    ----------
    lambda_runs : pandas.DataFrame
        :func:`~fairkm.experiments._protocol.sweep_seed` tables, concatenated.

    Returns
    -------
    pandas.DataFrame
        One row per dataset and ``fairness_weight``; each measure of
        :func:`~fairkm.experiments.fairness_tradeoff` as its mean (same name)
        and its standard deviation (``<name>_std``), and ``n_runs``.
    """
    columns = [c for c in lambda_runs.columns if c not in ("dataset", "seed", "fairness_weight")]
    grouped = lambda_runs.groupby(["dataset", "fairness_weight"], sort=False)[columns]
    means, stds = grouped.mean(), grouped.std().add_suffix("_std")
    counts = grouped.size().rename("n_runs")
    return pd.concat([means, stds, counts], axis=1).reset_index()


def summary_table(runs_quality):
    """How the fits ended: iterations, convergence, non-empty clusters and fit time.

    Parameters
    ----------
    runs_quality : pandas.DataFrame
        Per-fit quality rows.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, k and method: ``n_fits``, ``n_iter`` (mean),
        ``n_updates`` and ``n_reseeds`` (means; ZGYA's bound updates and
        reseeds, NaN for the other methods or for runs recorded without
        them), ``converged`` (share of fits without ``ConvergenceWarning``),
        ``n_nonempty`` (mean and minimum) and ``fit_seconds`` (mean and total).
    """
    runs_quality = runs_quality.copy()
    for column in ("n_updates", "n_reseeds"):
        if column not in runs_quality:
            runs_quality[column] = np.nan
    grouped = runs_quality.groupby(["dataset", "k", "method"], sort=False)
    return grouped.agg(
        n_fits=("seed", "size"),
        n_iter=("n_iter", "mean"),
        n_updates=("n_updates", "mean"),
        n_reseeds=("n_reseeds", "mean"),
        converged=("converged", "mean"),
        n_nonempty=("n_nonempty", "mean"),
        n_nonempty_min=("n_nonempty", "min"),
        fit_seconds=("fit_seconds", "mean"),
        fit_seconds_total=("fit_seconds", "sum"),
    ).reset_index()


# --------------------------------------------------------------------------- Markdown


def _cell(mean, std=np.nan, digits=4):
    if pd.isna(mean):
        return "-"
    if pd.isna(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _grid(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# Each kind of the paper's tables: its rows' keys, its methods' columns and its heading.
_LAYOUTS = {
    "quality": (["measure", "convention"], list(_QUALITY_METHODS.values()),
                "clustering quality"),
    "fairness": (["attribute", "measure", "convention"],
                 [*_FAIRNESS_METHODS.values(), IMPROVEMENT], "fairness (lower is fairer)"),
}


def markdown_table(kind, table, number):
    """Markdown for one of Tables 4-7: our mean ± std beside the paper's value.

    Parameters
    ----------
    kind : {"quality", "fairness"}
        Tables 4 and 6 (:func:`quality_table`) or Tables 5 and 7
        (:func:`fairness_table`).
    table : pandas.DataFrame
        Output of :func:`quality_table` or :func:`fairness_table`.
    number : int
        The paper's table number, for the headings.

    Returns
    -------
    str
        One grid per (dataset, k).
    """
    keys, methods, heading = _LAYOUTS[kind]
    out = []
    for (dataset, k), part in table.groupby(["dataset", "k"], sort=False):
        header = [*(name.capitalize() for name in keys)]
        for method in methods:
            header += [f"{method} (ours)", "paper"]
        rows = []
        for labels, group in part.groupby(keys, sort=False):
            labels = labels if isinstance(labels, tuple) else (labels,)
            by_method = group.set_index("method")
            row = [str(v) for v in labels]
            for method in methods:
                entry = by_method.loc[method]
                row += [_cell(entry["mean"], entry["std"]), _cell(entry["paper"])]
            rows.append(row)
        runs = int(part["n_runs"].max())
        title = f"Table {number}: {heading}, {dataset}, k={k}"
        out.append(f"#### {title} ({runs} seeds)\n\n{_grid(header, rows)}\n")
    return "\n".join(out)


def markdown_summary(table):
    """Markdown for :func:`summary_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`summary_table`.

    Returns
    -------
    str
    """
    header = ["dataset", "k", "method", "fits", "mean n_iter", "mean updates", "mean reseeds",
              "converged", "non-empty (mean)", "non-empty (min)", "fit s (mean)", "fit s (total)"]
    rows = [
        [r.dataset, str(r.k), r.method, str(r.n_fits), f"{r.n_iter:.1f}",
         _cell(r.n_updates, digits=0), _cell(r.n_reseeds, digits=2), f"{r.converged:.0%}",
         f"{r.n_nonempty:.2f}", str(r.n_nonempty_min), f"{r.fit_seconds:.3f}",
         f"{r.fit_seconds_total:.1f}"]
        for r in table.itertuples(index=False)
    ]
    return _grid(header, rows) + "\n"
