"""The part of docs/bounds.md that bench_guarantee.py writes, from its CSVs alone.

``write_page(folder, page)`` reads ``heldout_fits.csv``, ``heldout_attributes.csv``,
``seeds.csv``, ``numeric.csv`` and the ``run_<version>.json`` files of ``folder``, writes
``attributes.md`` beside them and replaces the page's text between :data:`BEGIN` and
:data:`END`. Each table is preceded by a MyST comment naming it (``% table: heldout``), which
tests/test_bounds_page.py reads to recompute every cell.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

BEGIN = ("<!-- bench_guarantee: begin. Written by benchmarks/bench_guarantee.py from "
         "docs/bounds/*.csv: edit those, not this part. -->")
END = "<!-- bench_guarantee: end -->"
WORSE = 0.01  # "worse than FairKM()": more than 1% above it
BLIND = 0.02  # "less fair than K-Means(10)": more than 2% above it, as issue 40 counts
PRIMARY = ("TV", "W1")  # the measures the audit and fairness_report judge an attribute by
SPREAD = 0.001  # seeds whose costs differ by more than 0.1% "differ"
TEXT = ("status", "warned", "warnings", "repair", "repair loss", "labeling", "method", "set",
        "version", "attribute", "measure")


def read(folder, name):
    path = Path(folder) / f"{name}.csv"
    if not path.exists():
        return None
    text = [c for c in TEXT if c in pd.read_csv(path, nrows=0).columns]
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""],
                        dtype=dict.fromkeys(text, str))
    frame[text] = frame[text].fillna("")
    return frame


def table(name, header, rows):
    lines = [f"% table: {name}", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def bound_text(value):
    return "-" if pd.isna(value) else f"{value:g}"


def above(value, reference, tolerance):
    """``value`` more than ``tolerance`` (a fraction) above ``reference``."""
    return value > reference * (1 + tolerance) + 1e-12


def losses(attributes, fit, against, tolerance):
    """Each (attribute, measure, statistic) of ``fit`` over ``tolerance`` above ``against``'s."""
    same = ((attributes["version"] == fit["version"]) & (attributes["set"] == fit["set"])
            & (attributes["k"] == fit["k"]))
    mine = attributes[same & (attributes["method"] == fit["method"])
                      & (attributes["bound"].fillna(-1) == (-1 if pd.isna(fit["bound"])
                                                             else fit["bound"]))]
    reference = attributes[same & (attributes["method"] == against)].set_index(
        ["attribute", "measure"])
    out = []
    for row in mine.to_dict("records"):
        ref = reference.loc[(row["attribute"], row["measure"])]
        out += [dict(attribute=row["attribute"], measure=row["measure"], statistic=s,
                     value=row[s], reference=ref[s]) for s in ("mean", "worst")
                if above(row[s], ref[s], tolerance)]
    return out


def relative(loss):
    return loss["value"] / loss["reference"] - 1 if loss["reference"] > 0 else np.inf


def words(loss):
    rel = f"{relative(loss):+.0%}" if loss["reference"] > 0 else "from 0"
    return (f"{loss['attribute']} {loss['measure']} {loss['statistic']} "
            f"{loss['value'] - loss['reference']:+.4f} ({rel})")


def interleaved(frame, keys):
    """``frame`` in the order its ``keys`` first appear: the versions of one key side by side."""
    ranks = pd.DataFrame({k: frame[k].fillna(-1).map(
        {v: i for i, v in enumerate(pd.unique(frame[k].fillna(-1)))}) for k in keys})
    return frame.loc[ranks.sort_values(keys, kind="stable").index]


def heldout_part(fits, attributes):
    header = ["version", "set", "k", "method", "bound", "enforced", "status", "rows moved",
              "cost / FairKM()", "time / K-Means", "bound met", "warned", "repair",
              f"worse than FairKM() (> {WORSE:.0%})",
              f"less fair than K-Means(10) (> {BLIND:.0%})"]
    body, sentences = [], []
    rank = {i: n for n, i in enumerate(interleaved(fits, ["set", "k", "method", "bound"]).index)}
    for version, mine in fits.groupby("version", sort=False):
        counts = dict(fits=0, met=0, infeasible=0, error=0, warned=0, worse=0, any=0, silent=0,
                      blind=0)
        largest = None
        for index, fit in mine[mine["method"] != "K-Means(10)"].iterrows():
            own = mine[(mine["set"] == fit["set"]) & (mine["k"] == fit["k"])
                       & (mine["method"] == "FairKM()")].iloc[0]
            bounded, ok = fit["method"] != "FairKM()", fit["status"] == "ok"
            worse = losses(attributes, fit, "FairKM()", WORSE) if bounded and ok else []
            blind = losses(attributes, fit, "K-Means(10)", BLIND) if ok else []
            body.append((rank[index], [
                version, fit["set"], fit["k"], fit["method"], bound_text(fit["bound"]),
                "-" if pd.isna(fit.get("enforced")) else f"{fit['enforced']:.4g}",
                fit["status"].split(":")[0], "-" if pd.isna(fit["moved"]) else
                f"{int(fit['moved']):,}", "-" if not ok else f"{fit['cost'] / own['cost']:.4f}",
                f"{fit['seconds'] / fit['kmeans_seconds']:.1f}",
                "-" if pd.isna(fit.get("met")) else "yes" if fit["met"] else "**no**",
                fit["warned"] or "none", fit["repair"] or "-",
                "; ".join(map(words, worse)) or ("none" if bounded and ok else "-"),
                "; ".join(map(words, blind)) or ("none" if ok else "-")]))
            if not bounded:
                continue
            counts["fits"] += 1
            counts["infeasible"] += fit["status"].startswith("infeasible")
            counts["error"] += fit["status"].startswith("error")
            counts["met"] += ok and bool(fit["met"])
            counts["warned"] += bool(fit["warned"])
            primary = [w for w in worse if w["measure"] in PRIMARY]
            counts["worse"] += bool(primary)
            counts["any"] += bool(worse)
            counts["silent"] += bool(primary) and not fit["warned"]
            counts["blind"] += any(w["measure"] in PRIMARY for w in blind)
            for loss in primary:
                if largest is None or relative(loss) > relative(largest[0]):
                    largest = (loss, fit)
        text = (f"- **{version}**: of {counts['fits']} bounded fits, {counts['met']} met their "
                f"bound by a recount; infeasible: {counts['infeasible']}; failed: "
                f"{counts['error']}; warned: {counts['warned']}. {counts['worse']} left "
                f"an attribute more than {WORSE:.0%} further from the mix than `FairKM()` by "
                f"TV or W1 ({counts['silent']} of them without a warning), {counts['any']} by "
                f"any measure; {counts['blind']} left one more than {BLIND:.0%} less fair than "
                "K-Means(10) by TV or W1.")
        if largest is not None:
            loss, fit = largest
            text += (f" The largest by TV or W1: {words(loss)} ({fit['set']}, k={fit['k']}, "
                     f"bound {bound_text(fit['bound'])}).")
        sentences.append(text)
    return table("heldout", header, [cells for _, cells in sorted(body)]), sentences


def attributes_part(fits, attributes):
    """Per set: every fit's cost and each (attribute, measure)'s mean / worst cluster."""
    parts = []
    for name, mine in attributes.groupby("set", sort=False):
        columns = list(dict.fromkeys(zip(mine["attribute"], mine["measure"], strict=True)))
        header = ["version", "k", "method", "bound", "cost / K-Means"] + [
            f"{a} {m}" for a, m in columns]
        body = []
        for key, rows in interleaved(mine, ["k", "method", "bound"]).groupby(
                ["version", "k", "method", "bound"], sort=False, dropna=False):
            version, k, method, bound = key
            fit = fits[(fits["version"] == version) & (fits["set"] == name) & (fits["k"] == k)]
            blind = fit[fit["method"] == "K-Means(10)"].iloc[0]
            this = fit[(fit["method"] == method) & (fit["bound"].fillna(-1) == (
                -1 if pd.isna(bound) else bound))].iloc[0]
            values = rows.set_index(["attribute", "measure"])
            body.append([version, k, method, bound_text(bound),
                         f"{this['cost'] / blind['cost']:.4f}"] + [
                f"{values.loc[c, 'mean']:.4f} / {values.loc[c, 'worst']:.4f}" for c in columns])
        first = fits[fits["set"] == name].iloc[0]
        parts += [f"### {name}", f"{int(first['rows']):,} rows. Each cell: the mean over the "
                  "clusters / the worst cluster.", table(f"attributes: {name}", header, body)]
    return "\n\n".join(parts)


def seeds_part(data):
    seeds = sorted(data.loc[data["method"] == "BoundedKMeans", "seed"].unique())
    header = (["version", "set", "k", "bound", "FairKM(max_deviation)"]
              + [f"seed {s}" for s in seeds]
              + ["dearest / cheapest", "time / K-Means (median)", "bound met"])
    body, cells = [], []
    for key, rows in interleaved(data, ["set", "k", "bound"]).groupby(
            ["version", "set", "k", "bound"], sort=False):
        fairkm = rows[rows["method"] == "FairKM(max_deviation)"].iloc[0]
        bounded = rows[rows["method"] == "BoundedKMeans"].set_index("seed")
        costs = bounded.loc[bounded["status"] == "ok", "cost_kmeans"]
        spread = costs.max() / costs.min() - 1 if len(costs) else np.nan
        body.append([*key[:3], bound_text(key[3]), cost_cell(fairkm)]
                    + [cost_cell(bounded.loc[s]) for s in seeds]
                    + ["-" if pd.isna(spread) else f"{spread:+.2%}",
                       f"{(bounded['seconds'] / bounded['kmeans_seconds']).median():.1f}",
                       f"{int(rows['met'].fillna(False).astype(bool).sum())} of {len(rows)}"])
        cells.append(dict(version=key[0], set=key[1], bound=key[3], spread=spread,
                          cheapest=costs.min(), dearest=costs.max(),
                          fairkm=fairkm["cost_kmeans"]))
    cells = pd.DataFrame(cells)
    sentences = []
    for version, mine in cells.groupby("version", sort=False):
        top = mine.loc[mine["spread"].idxmax()]
        text = (f"- **{version}**: the seeds' costs differ by more than {SPREAD:.1%} at "
                f"{int((mine['spread'] > SPREAD).sum())} of {len(mine)} (set, bound) cells, "
                f"by up to {top['spread']:+.2%} ({top['set']}, bound {bound_text(top['bound'])});"
                f" a seed costs more than `FairKM(max_deviation)` at "
                f"{int((mine['dearest'] > mine['fairkm'] + 1e-12).sum())}, the cheapest at "
                f"{int((mine['cheapest'] > mine['fairkm'] + 1e-12).sum())}.")
        if version != "before" and "before" in set(cells["version"]):
            before = cells[cells["version"] == "before"].set_index(["set", "bound"])
            pairs = [(r["dearest"], before.loc[(r["set"], r["bound"]), "cheapest"])
                     for r in mine.to_dict("records") if (r["set"], r["bound"]) in before.index]
            text += (f" Its dearest seed costs no more than before's cheapest at "
                     f"{sum(a <= b + 1e-12 for a, b in pairs)} of {len(pairs)} cells.")
        sentences.append(text)
    return table("seeds", header, body), sentences


def cost_cell(row):
    return row["status"].split(":")[0] if row["status"] != "ok" else f"{row['cost_kmeans']:.4f}"


def numeric_part(data):
    header = ["version", "set", "k", "runs", "labelings", "cost min", "cost max",
              "time (s) median", "time (s) max", "time / without numeric_bound (median)",
              "time / without numeric_bound (max)", "bound met", "labelings without"]
    body = []
    for key, rows in interleaved(data, ["set", "k"]).groupby(["version", "set", "k"],
                                                             sort=False):
        bounded = rows[rows["numeric_bound"].notna()].set_index("run")
        plain = rows[rows["numeric_bound"].isna()].set_index("run")
        ratio = bounded["seconds"] / plain["seconds"]
        ok = bounded[bounded["status"] == "ok"]
        body.append([*key, len(bounded), ok["labeling"].nunique(), f"{ok['cost'].min():.3f}",
                     f"{ok['cost'].max():.3f}", f"{bounded['seconds'].median():.2f}",
                     f"{bounded['seconds'].max():.2f}", f"{ratio.median():.2f}",
                     f"{ratio.max():.2f}",
                     f"{int(bounded['met'].fillna(False).astype(bool).sum())} of {len(bounded)}",
                     plain.loc[plain["status"] == "ok", "labeling"].nunique()])
    return table("numeric", header, body)


def runs_part(folder):
    lines = []
    for path in sorted(Path(folder).glob("run_*.json")):
        meta = json.loads(path.read_text(encoding="utf-8"))
        walls = ", ".join(f"{s} {w / 60:.1f} min" for s, w in meta["wall_s"].items())
        lines.append(f"- **{meta['version']}**: commit `{meta['commit']}` (fairkm "
                     f"{meta['fairkm']}), {meta['date']}, {meta['machine']}; {walls}; "
                     f"`{meta['command']}`.")
    return "\n".join(lines)


INTRO = """\
## Held-out sets a user might bring: every attribute, every measure

What follows is written by `benchmarks/bench_guarantee.py` from the CSVs of
`docs/bounds/` (every row of every run, with its `version`: **before** is the code issue 40
started from; a later run adds its rows beside them). Every distance is recounted from the
labels in plain NumPy: per attribute, each cluster's distance from the dataset's mix, total
variation (**TV**) and the Euclidean distance of the shares (**Euclid**) for a categorical
attribute, the 1-Wasserstein distance (**W1**) and the gap of the mean (**mean-z**) of the
values standardised over the dataset for a numeric one; the *mean* over the clusters (each
counting once) and the *worst* cluster. TV and W1 are the distances the audit and
`fairness_report` judge an attribute by. The sets: scikit-learn's diabetes (sex; numeric
age), a 4,000-row sample of Adult's test file (`random_state` 0; education-num,
hours-per-week, capital-gain and capital-loss standardised; sex, race, marital-status;
numeric age), Kinematics (Doc2Vec vectors; the problem's type) and statsmodels' ANES 1996
survey (six answers standardised; education; numeric age), the last loaded only where
statsmodels is (`--survey-python`). `FairKM()` and `FairKM(max_deviation=d)`, seed 0, at
k = 3 and 5, against `KMeans(n_init=10)`. "Enforced": the model's `max_deviation_` (at 0,
the tightest bound it says whole rows allow); "bound met": every value's share in every
cluster, recounted, within the bound asked (at 0, within the one enforced); "warned": the
categories of the warnings the fit raised; "repair": how `bound_repair_` says the bound was
met, where the model has that attribute. "Worse than `FairKM()`": each attribute, measure and
statistic more than 1% above `FairKM()`'s, by how much (a cell lists them all); "less fair
than K-Means(10)": more than 2% above `KMeans(n_init=10)`'s. Times are over one
`KMeans(n_init=10)` fit of the same set and k."""

SEEDS_INTRO = """\
## `BoundedKMeans` against every seed

`BoundedKMeans(max_deviation=d, random_state=s)` with its defaults, for each seed, on FCA's
Adult setting (above; sex, k = 10) and on the Adult sample (sex, race, marital-status;
k = 5): its cost over `KMeans(n_init=10, random_state=0)`'s, beside
`FairKM(max_deviation=d, random_state=0)`'s. "Dearest / cheapest": how far the dearest seed's
cost lies above the cheapest's; "bound met": fits whose every cluster is within the bound
enforced, recounted (`FairKM`'s included)."""

NUMERIC_INTRO = """\
## Numeric bounds, fitted again and again

`BoundedKMeans(max_deviation=0.05, numeric_bound=0.1, random_state=0)` on the Adult sample
and on diabetes (both with numeric age; k = 5), fitted once per run, each run beside the same
fit without `numeric_bound`: the number of distinct labelings among the runs (1: repeatable), the
range of their K-Means costs, the time of each fit and its ratio to the fit without
`numeric_bound` in the same run."""


def render(folder):
    fits, attributes = read(folder, "heldout_fits"), read(folder, "heldout_attributes")
    seeds, numeric = read(folder, "seeds"), read(folder, "numeric")
    parts = [BEGIN]
    if fits is not None:
        heldout, sentences = heldout_part(fits, attributes)
        seconds = fits.groupby("version", sort=False)["kmeans_seconds"]
        sentences += [f"- **{v}**: a `KMeans(n_init=10)` fit took {s.min():.2f}-{s.max():.2f} s."
                      for v, s in seconds]
        parts += [INTRO, heldout, "\n".join(sentences),
                  "Every attribute's mean and worst cluster, fit by fit:",
                  "```{include} bounds/attributes.md\n```"]
    if seeds is not None:
        body, sentences = seeds_part(seeds)
        parts += [SEEDS_INTRO, body, "\n".join(sentences)]
    if numeric is not None:
        parts += [NUMERIC_INTRO, numeric_part(numeric)]
    parts += ["The runs:", runs_part(folder), END]
    attributes_text = None if fits is None else attributes_part(fits, attributes) + "\n"
    return "\n\n".join(parts), attributes_text


def write_page(folder, page):
    """Write ``attributes.md`` into ``folder`` and the generated part of ``page``."""
    block, attributes_text = render(folder)
    if attributes_text is not None:
        (Path(folder) / "attributes.md").write_text(attributes_text, encoding="utf-8")
    text = Path(page).read_text(encoding="utf-8")
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        raise SystemExit(f"{page} has no line {BEGIN!r}: place it (and {END!r}) where the "
                         "generated part goes")
    Path(page).write_text(text, encoding="utf-8")
