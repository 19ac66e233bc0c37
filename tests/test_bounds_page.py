"""docs/bounds.md's held-out, seed and numeric-bound sections say what docs/bounds/*.csv say.

The sections between the ``bench_guarantee`` markers of the page, and the per-attribute tables
of docs/bounds/attributes.md that they include, are written by
benchmarks/bench_guarantee.py; nothing here imports it or fits anything. Every table (named
by a MyST comment ``% table: ...`` above it) is parsed and each cell worked out again from the
CSVs with plain pandas, every fit of the CSVs must have its row, every number of the sentences
under the tables is recounted, and each run the CSVs hold must be named with its commit and
command.
"""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

DOCS = Path(__file__).parents[1] / "docs"
PAGE = DOCS / "bounds.md"
FOLDER = DOCS / "bounds"
BEGIN, END = "<!-- bench_guarantee: begin.", "<!-- bench_guarantee: end -->"
PRIMARY = {"TV", "W1"}
TEXT = ["status", "warned", "warnings", "repair", "repair loss", "labeling"]


def csv(name):
    path = FOLDER / f"{name}.csv"
    text = [c for c in TEXT if c in pd.read_csv(path, nrows=0).columns]
    data = pd.read_csv(path, keep_default_na=False, na_values=[""],
                       dtype=dict.fromkeys(text, str))
    data[text] = data[text].fillna("")
    return data


@pytest.fixture(scope="module")
def fits():
    return csv("heldout_fits")


@pytest.fixture(scope="module")
def attributes():
    return csv("heldout_attributes")


@pytest.fixture(scope="module")
def seeds():
    return csv("seeds")


@pytest.fixture(scope="module")
def numeric():
    return csv("numeric")


@pytest.fixture(scope="module")
def block():
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def tables(text):
    """Each table named by the ``% table: NAME`` line above it: a list of row dicts."""
    out, name, header = {}, None, None
    for line in text.splitlines():
        if line.startswith("% table: "):
            name, header = line[len("% table: "):], None
            out[name] = []
        elif line.startswith("|") and name is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set(line) <= set("|-"):
                out[name].append(dict(zip(header, cells, strict=True)))
        elif not line.startswith("|"):
            name = None
    return out


@pytest.fixture(scope="module")
def page_tables(block):
    found = tables(block)
    found.update(tables((FOLDER / "attributes.md").read_text(encoding="utf-8")))
    return found


def close(text, value):
    """``text`` (as written, with its decimals; commas, signs and % allowed) is ``value``."""
    text = text.replace(",", "").replace("**", "")
    scale = 100 if text.endswith("%") else 1
    text = text.rstrip("%")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - scale * value) <= 0.5 * 10**-decimals + 1e-9


def same_bound(column, cell):
    return column.isna() if cell == "-" else column == float(cell)


def one(frame):
    assert len(frame) == 1, frame
    return frame.iloc[0]


def fit_of(fits, row):
    return one(fits[(fits["version"] == row["version"]) & (fits["set"] == row["set"])
                    & (fits["k"] == int(row["k"])) & (fits["method"] == row["method"])
                    & same_bound(fits["bound"], row["bound"])])


def distances_of(attributes, version, name, k, method, bound):
    mine = attributes[(attributes["version"] == version) & (attributes["set"] == name)
                      & (attributes["k"] == k) & (attributes["method"] == method)]
    mine = mine[mine["bound"].isna()] if pd.isna(bound) else mine[mine["bound"] == bound]
    return mine.set_index(["attribute", "measure"])[["mean", "worst"]]


def worse(attributes, fit, against, tolerance):
    """(attribute, measure, statistic, value, reference) more than ``tolerance`` above."""
    mine = distances_of(attributes, fit["version"], fit["set"], fit["k"], fit["method"],
                        fit["bound"])
    ref = distances_of(attributes, fit["version"], fit["set"], fit["k"], against, np.nan)
    joined = mine.join(ref.add_suffix(" ref"))
    assert len(joined) == len(mine) == len(ref)
    return [(a, m, s, r[s], r[f"{s} ref"]) for (a, m), r in joined.iterrows()
            for s in ("mean", "worst") if r[s] > r[f"{s} ref"] * (1 + tolerance) + 1e-12]


def listed(cell):
    """The (attribute, measure, statistic, change, relative) of a cell's list."""
    if cell in ("none", "-"):
        return []
    out = []
    for item in cell.split("; "):
        match = re.fullmatch(r"(.+) (TV|Euclid|W1|mean-z) (mean|worst) ([-+]\d\.\d{4}) "
                             r"\(([-+]\d+%|from 0)\)", item)
        assert match, item
        out.append(match.groups())
    return out


def check_list(cell, expected):
    items = listed(cell)
    assert [i[:3] for i in items] == [e[:3] for e in expected], (cell, expected)
    for (_, _, _, delta, rel), (*_, value, ref) in zip(items, expected, strict=True):
        assert close(delta, value - ref)
        assert rel == "from 0" if ref == 0 else close(rel, value / ref - 1)


def test_the_block_includes_its_tables_and_names_every_run(block, fits, seeds, numeric):
    assert "```{include} bounds/attributes.md" in block
    versions = set(fits["version"]) | set(seeds["version"]) | set(numeric["version"])
    assert "before" in versions
    for version in versions:
        meta = json.loads((FOLDER / f"run_{version}.json").read_text(encoding="utf-8"))
        line = next(x for x in block.splitlines() if x.startswith(f"- **{version}**: commit"))
        assert f"`{meta['commit']}`" in line and f"`{meta['command']}`" in line
        for section, wall in meta["wall_s"].items():
            assert re.search(rf"{section} (\d+\.\d) min", line)
            assert close(re.search(rf"{section} (\d+\.\d) min", line)[1], wall / 60)


def test_the_setup_the_prose_states(block, fits):
    flat = re.sub(r"\s+", " ", block)
    sample = fits[fits["set"] == "Adult test sample"]
    assert set(sample["rows"]) == {4000} and "a 4,000-row sample of Adult's test file" in flat
    assert sorted(set(fits["k"])) == [3, 5] and "at k = 3 and 5" in flat
    bounds = sorted(set(fits["bound"].dropna()), reverse=True)
    assert bounds == [0.2, 0.1, 0.05, 0.02, 0.01, 0.0]


def test_every_heldout_cell_is_the_csv(page_tables, fits, attributes):
    rows = page_tables["heldout"]
    shown = fits[fits["method"] != "K-Means(10)"]
    assert len(rows) == len(shown)
    for row in rows:
        fit = fit_of(fits, row)
        same = fits[(fits["version"] == fit["version"]) & (fits["set"] == fit["set"])
                    & (fits["k"] == fit["k"])]
        own = one(same[same["method"] == "FairKM()"])
        ok, bounded = fit["status"] == "ok", fit["method"] != "FairKM()"
        assert row["status"] == fit["status"].split(":")[0]
        assert row["enforced"] == "-" if pd.isna(fit["enforced"]) else close(
            row["enforced"], fit["enforced"])
        if ok:
            assert row["rows moved"] == f"{int(fit['moved']):,}"
            assert close(row["cost / FairKM()"], fit["cost"] / own["cost"])
        else:
            assert row["rows moved"] == row["cost / FairKM()"] == "-"
        assert close(row["time / K-Means"], fit["seconds"] / fit["kmeans_seconds"])
        if bounded and ok:
            # The bound asked, or at 0 the one the model enforced: recounted shares within it.
            limit = fit["bound"] if fit["bound"] > 0 else fit["enforced"]
            assert bool(fit["met"]) == (fit["largest_share_gap"] <= limit + 1e-9)
            assert row["bound met"] == ("yes" if fit["met"] else "**no**")
        else:
            assert row["bound met"] == "-"
        assert row["warned"] == (fit["warned"] or "none")
        assert row["repair"] == (fit["repair"] or "-")
        loss = [c for c in row if c.startswith("worse than FairKM()")][0]
        blind = [c for c in row if c.startswith("less fair than K-Means(10)")][0]
        if bounded and ok:
            check_list(row[loss], worse(attributes, fit, "FairKM()", 0.01))
        else:
            assert row[loss] == "-"
        if ok:
            check_list(row[blind], worse(attributes, fit, "K-Means(10)", 0.02))
        else:
            assert row[blind] == "-"


def test_the_heldout_sentences_count_the_fits(block, fits, attributes):
    for version, mine in fits.groupby("version"):
        bounded = mine[mine["method"] == "FairKM(max_deviation)"]
        ok = bounded[bounded["status"] == "ok"]
        losses = {i: worse(attributes, f, "FairKM()", 0.01) for i, f in ok.iterrows()}
        primary = {i: [x for x in v if x[1] in PRIMARY] for i, v in losses.items()}
        blind = sum(any(x[1] in PRIMARY for x in worse(attributes, f, "K-Means(10)", 0.02))
                    for _, f in ok.iterrows())
        silent = sum(bool(v) and not ok.loc[i, "warned"] for i, v in primary.items())
        line = next(x for x in block.splitlines() if x.startswith(f"- **{version}**: of "))
        assert (f"of {len(bounded)} bounded fits, {int(ok['met'].astype(bool).sum())} met "
                f"their bound by a recount; infeasible: "
                f"{bounded['status'].str.startswith('infeasible').sum()}; failed: "
                f"{bounded['status'].str.startswith('error').sum()}; warned: "
                f"{(bounded['warned'] != '').sum()}.") in line
        assert (f" {sum(map(bool, primary.values()))} left an attribute more than 1% further "
                f"from the mix than `FairKM()` by TV or W1 ({silent} of them without a "
                f"warning), {sum(map(bool, losses.values()))} by any measure; {blind} left "
                "one") in line
        ranked = [(x[3] / x[4] - 1, i, x) for i, v in primary.items() for x in v if x[4] > 0]
        if not ranked:
            assert "The largest" not in line
            continue
        _, i, (a, m, s, value, ref) = max(ranked, key=lambda r: r[0])
        said = re.search(r"The largest by TV or W1: (.+) \((.+), k=(\d+), bound (\S+)\)\.",
                         line)
        check_list(said[1], [(a, m, s, value, ref)])
        assert (said[2], int(said[3])) == (ok.loc[i, "set"], ok.loc[i, "k"])
        assert float(said[4]) == ok.loc[i, "bound"]


def test_the_kmeans_times_are_the_csvs(block, fits):
    for version, mine in fits.groupby("version"):
        line = next(x for x in block.splitlines()
                    if x.startswith(f"- **{version}**: a `KMeans(n_init=10)` fit took"))
        low, high = re.search(r"took (\d+\.\d+)-(\d+\.\d+) s\.", line).groups()
        assert close(low, mine["kmeans_seconds"].min())
        assert close(high, mine["kmeans_seconds"].max())


def test_every_attribute_cell_is_the_csv(page_tables, fits, attributes):
    checked = 0
    for name, group in attributes.groupby("set"):
        rows = page_tables[f"attributes: {name}"]
        assert len(rows) == len(group.drop_duplicates(["version", "k", "method", "bound"]))
        for row in rows:
            fit = fit_of(fits, dict(row, set=name))
            blind = one(fits[(fits["version"] == row["version"]) & (fits["set"] == name)
                             & (fits["k"] == int(row["k"]))
                             & (fits["method"] == "K-Means(10)")])
            assert close(row["cost / K-Means"], fit["cost"] / blind["cost"])
            values = distances_of(attributes, row["version"], name, int(row["k"]),
                                  row["method"], fit["bound"])
            columns = [c for c in row if c not in ("version", "k", "method", "bound",
                                                   "cost / K-Means")]
            assert {tuple(c.rsplit(" ", 1)) for c in columns} == set(values.index)
            for column in columns:
                mean, worst = row[column].split(" / ")
                got = values.loc[tuple(column.rsplit(" ", 1))]
                assert close(mean, got["mean"]) and close(worst, got["worst"]), (row, column)
                checked += 1
    assert checked > 200


def seed_cells(seeds):
    cells = []
    for (version, name, k, bound), rows in seeds.groupby(["version", "set", "k", "bound"]):
        bounded = rows[(rows["method"] == "BoundedKMeans") & (rows["status"] == "ok")]
        fairkm = one(rows[rows["method"] == "FairKM(max_deviation)"])
        cells.append(dict(version=version, set=name, k=k, bound=bound, rows=rows,
                          cheapest=bounded["cost_kmeans"].min(),
                          dearest=bounded["cost_kmeans"].max(), fairkm=fairkm))
    return cells


def test_every_seed_cell_is_the_csv(page_tables, seeds):
    rows = page_tables["seeds"]
    cells = seed_cells(seeds)
    assert len(rows) == len(cells)
    for cell in cells:
        row = one(pd.DataFrame([r for r in rows if (r["version"], r["set"], int(r["k"]))
                                == (cell["version"], cell["set"], cell["k"])
                                and float(r["bound"]) == cell["bound"]]))
        for _, fit in cell["rows"].iterrows():
            column = ("FairKM(max_deviation)" if fit["method"] == "FairKM(max_deviation)"
                      else f"seed {fit['seed']}")
            if fit["status"] == "ok":
                assert close(row[column], fit["cost_kmeans"])
            else:
                assert row[column] == fit["status"].split(":")[0]
            limit = fit["bound"] if fit["bound"] > 0 else fit["enforced"]
            if fit["status"] == "ok":
                assert bool(fit["met"]) == (fit["largest_share_gap"] <= limit + 1e-9)
        assert close(row["dearest / cheapest"], cell["dearest"] / cell["cheapest"] - 1)
        bounded = cell["rows"][cell["rows"]["method"] == "BoundedKMeans"]
        assert close(row["time / K-Means (median)"],
                     (bounded["seconds"] / bounded["kmeans_seconds"]).median())
        met = int(cell["rows"]["met"].fillna(False).astype(bool).sum())
        assert row["bound met"] == f"{met} of {len(cell['rows'])}"


def test_the_seed_sentences_count_the_cells(block, seeds):
    cells = pd.DataFrame(seed_cells(seeds)).drop(columns=["rows", "fairkm"]).assign(
        fairkm=[c["fairkm"]["cost_kmeans"] for c in seed_cells(seeds)])
    cells["spread"] = cells["dearest"] / cells["cheapest"] - 1
    before = cells[cells["version"] == "before"].set_index(["set", "bound"])
    for version, mine in cells.groupby("version"):
        line = next(x for x in block.splitlines()
                    if x.startswith(f"- **{version}**: the seeds' costs"))
        said = re.search(r"more than 0\.1% at (\d+) of (\d+) \(set, bound\) cells, by up to "
                         r"(\S+) \((.+), bound (\S+)\); a seed costs more than "
                         r"`FairKM\(max_deviation\)` at (\d+), the cheapest at (\d+)\.", line)
        top = mine.loc[mine["spread"].idxmax()]
        assert int(said[1]) == (mine["spread"] > 0.001).sum() and int(said[2]) == len(mine)
        assert close(said[3], top["spread"]) and said[4] == top["set"]
        assert float(said[5]) == top["bound"]
        assert int(said[6]) == (mine["dearest"] > mine["fairkm"] + 1e-12).sum()
        assert int(said[7]) == (mine["cheapest"] > mine["fairkm"] + 1e-12).sum()
        if version == "before":
            assert "before's cheapest" not in line
            continue
        pairs = [(r["dearest"], before.loc[(r["set"], r["bound"]), "cheapest"])
                 for _, r in mine.iterrows() if (r["set"], r["bound"]) in before.index]
        assert (f"no more than before's cheapest at {sum(a <= b + 1e-12 for a, b in pairs)} "
                f"of {len(pairs)} cells") in line


def test_every_numeric_cell_is_the_csv(page_tables, numeric):
    rows = page_tables["numeric"]
    groups = numeric.groupby(["version", "set", "k"])
    assert len(rows) == len(groups)
    for (version, name, k), runs in groups:
        row = one(pd.DataFrame([r for r in rows if (r["version"], r["set"], int(r["k"]))
                                == (version, name, k)]))
        bounded = runs[runs["numeric_bound"].notna()].set_index("run")
        plain = runs[runs["numeric_bound"].isna()].set_index("run")
        ok = bounded[bounded["status"] == "ok"]
        assert int(row["runs"]) == len(bounded) == len(plain)
        assert int(row["labelings"]) == len(set(ok["labeling"]))
        assert int(row["labelings without"]) == len(set(plain.loc[plain["status"] == "ok",
                                                                  "labeling"]))
        assert close(row["cost min"], ok["cost"].min())
        assert close(row["cost max"], ok["cost"].max())
        assert close(row["time (s) median"], bounded["seconds"].median())
        assert close(row["time (s) max"], bounded["seconds"].max())
        ratio = bounded["seconds"] / plain["seconds"]
        assert close(row["time / without numeric_bound (median)"], ratio.median())
        assert close(row["time / without numeric_bound (max)"], ratio.max())
        met = int(bounded["met"].fillna(False).astype(bool).sum())
        assert row["bound met"] == f"{met} of {len(bounded)}"
