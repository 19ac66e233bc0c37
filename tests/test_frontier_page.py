"""docs/frontier.md says what docs/frontier/points.csv says.

The page is written by benchmarks/bench_frontier.py; nothing here imports it or
fits anything. Each table of the page (and of wins.md) is parsed and every cell
recomputed from the CSV with plain pandas, every fit a sentence quotes is looked
up, every knob the page names must have been fitted, and the verdicts (who
dominates whom at matched cost, how often the default is the fairest) are worked
out again from the rows. The page names the dataset of what follows it in MyST
comments (``% dataset: ...``, not rendered) and, above a matched-cost table, the
methods compared (``% compare: ...``).
"""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

DOCS = Path(__file__).parents[1] / "docs"
PAGE = DOCS / "frontier.md"
FOLDER = DOCS / "frontier"
# The page's definition of FairKM's default: its knob and its budgets, "equal" weighting.
DEFAULT = ["FairKM equal", "FairKM equal budget"]
MEASURES = ("mean TV", "worst TV")
METHOD = (r"K-Means\(10\)|ZGYA|FCA|fair-kmeans|BoundedKMeans|FairKM\(max_deviation\)"
          r"|FairKM (?:equal|size|paper)(?: budget)?")
QUOTE = re.compile(rf"(?P<method>{METHOD})(?: `(?P<knob>[^`]+)`)?(?:, seed (?P<seed>\d+))? "
                   r"\(cost (?P<cost>\d+\.\d+), mean (?P<mean>\d\.\d+), worst (?P<worst>\d\.\d+)\)")
CITED = re.compile(rf"^(?P<value>\d\.\d+): (?P<method>{METHOD}) `(?P<knob>[^`]+)` "
                   r"at (?P<cost>\d+\.\d+)$")
KNOB = re.compile(r"`((?:relative_weight|max_cost|max_deviation|lambda|epsilon)=[^`]+)`")
KNOB_LIST = re.compile(r"`(relative_weight|max_cost|lambda)` (\d+(?:\.\d+)?(?:, \d+(?:\.\d+)?)*)")


@pytest.fixture(scope="module")
def points():
    data = pd.read_csv(FOLDER / "points.csv", keep_default_na=False, na_values=[""])
    data[["knob", "note", "status"]] = data[["knob", "note", "status"]].fillna("")
    return data


def parse(text):
    """Tables (with the dataset and compared methods named above them) and prose lines."""
    tables, prose, dataset, compare, current, fenced = [], [], None, None, None, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = dict(dataset=dataset, compare=compare, header=cells, rows=[])
            elif not set(line) <= set("|-"):
                current["rows"].append(dict(zip(current["header"], cells, strict=True)))
            continue
        if current is not None:
            tables.append(current)
            current, compare = None, None
        if line.startswith("% dataset: "):
            dataset = line[len("% dataset: "):]
        elif line.startswith("% compare: "):
            compare = line[len("% compare: "):].split(", ")
        elif not fenced:
            prose.append((dataset, line))
    return tables + ([current] if current else []), prose


def page_tables():
    return parse(PAGE.read_text(encoding="utf-8"))[0]


def all_tables():
    return page_tables() + parse((FOLDER / "wins.md").read_text(encoding="utf-8"))[0]


def plain(cell):
    return cell.replace("**", "").replace("`", "").strip()


def close(text, value):
    """``text`` (as written, with its decimals) is ``value`` rounded the same way."""
    text = plain(text).rstrip("%").lstrip("+")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - value) <= 0.5 * 10**-decimals + 1e-9


def fit(points, dataset, method, knob, seed=None):
    rows = points[(points["dataset"] == dataset) & (points["method"] == method)
                  & (points["knob"] == knob)]
    rows = rows[rows["seed"] == (rows["seed"].min() if seed is None else int(seed))]
    assert len(rows) == 1, f"{dataset} / {method} / {knob} / seed {seed}: {len(rows)} rows"
    return rows.iloc[0]


def fairer(a, b):
    """The page's rule: lower at three decimals."""
    return round(a, 3) < round(b, 3)


def test_the_page_and_everything_it_links_exist(points):
    text = PAGE.read_text(encoding="utf-8")
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert figures and all((DOCS / f).is_file() for f in figures)
    # One figure per dataset, none left over from an older panel.
    assert len(set(figures)) == points["dataset"].nunique()
    assert {DOCS / f for f in figures} == set(FOLDER.glob("*.png"))
    for target in re.findall(r"\{download\}`([^`]+)`", text):
        assert (DOCS / target).is_file()
    assert "```{include} frontier/wins.md" in text
    meta = json.loads((FOLDER / "run.json").read_text(encoding="utf-8"))
    assert meta["command"] in text and meta["commit"] in text


def test_every_fit_cell_agrees_with_points(points):
    checked = 0
    for table in all_tables():
        if "knob" not in table["header"]:
            continue
        for row in table["rows"]:
            dataset = row.get("set", table["dataset"])
            for column, text in row.items():
                method, _, measure = column.rpartition(": ")
                method = method or row.get("method")
                if measure not in ("cost", *MEASURES, "status", "note", "cost_increase_",
                                   "relative_weight_"):
                    continue
                want = fit(points, dataset, method, plain(row["knob"]), row.get("seed"))[measure]
                if text == "-":
                    assert pd.isna(want), (dataset, method, row["knob"], measure)
                elif measure in ("status", "note"):
                    assert text == want, (dataset, method, row["knob"], measure)
                elif measure == "cost_increase_":
                    assert close(text, 100 * want), (dataset, row["knob"], text, want)
                elif measure == "relative_weight_":
                    assert float(text) == pytest.approx(want, rel=5e-3)
                else:
                    assert close(text, want), (dataset, method, row["knob"], measure, text, want)
                checked += 1
    assert checked > 300


def test_budget_tables_say_whether_each_budget_held(points):
    tables = [t for t in page_tables() if "held" in t["header"]]
    assert tables
    for row in (r for t in tables for r in t["rows"]):
        got = fit(points, tables[0]["dataset"], row["method"], plain(row["knob"]), row["seed"])
        held = got["cost_increase_"] <= float(plain(row["knob"]).split("=")[1]) + 1e-12
        assert plain(row["held"]) == ("yes" if held else "no")


def test_matched_cells_are_the_fairest_fits_of_no_greater_cost(points):
    tables = [t for t in page_tables() if "fairest mean TV at no more cost" in t["header"]]
    assert len(tables) >= 3
    for table in tables:
        assert table["compare"], "a matched table names the methods it compares with"
        for row in table["rows"]:
            point = fit(points, table["dataset"], row["method"], plain(row["knob"]), row["seed"])
            pool = points[(points["dataset"] == table["dataset"])
                          & (points["seed"] == point["seed"])
                          & points["method"].isin(table["compare"])
                          & (points["cost"] <= point["cost"] + 1e-12)]
            for m in MEASURES:
                cell = row[f"fairest {m} at no more cost"]
                if pool.empty:
                    assert cell == "none that cheap"
                    assert "**" not in row[m]
                    continue
                cited = CITED.match(cell)
                assert cited, cell
                assert close(cited["value"], pool[m].min())
                best = fit(points, table["dataset"], cited["method"], cited["knob"],
                           point["seed"])
                assert best["cost"] <= point["cost"] + 1e-12 and close(cited["value"], best[m])
                assert ("**" in row[m]) == fairer(point[m], pool[m].min()), (row, m)


def test_cap_tables_hold_each_methods_fairest_fit_within_the_cap(points):
    tables = [t for t in all_tables() if "mean TV, cost <= 1.05" in t["header"]]
    assert len(tables) == points["dataset"].nunique() + 1  # wins.md, and the headline again
    for table in tables:
        data = points[points["dataset"] == table["dataset"]]
        data = data[(data["seed"] == data["seed"].min()) & data["cost"].notna()]
        assert [r["method"] for r in table["rows"]] == list(data["method"].unique())
        for row in table["rows"]:
            for column, text in row.items():
                if column == "method":
                    continue
                measure, cap = column.split(", cost <= ")
                every = data[data["cost"] <= float(cap) + 1e-12]
                within = every[every["method"] == row["method"]]
                if within.empty:
                    assert text == "-"
                    continue
                assert close(text, within[measure].min()), (table["dataset"], row, column)
                top = not fairer(every[measure].min(), within[measure].min())
                assert ("**" in text) == top, (table["dataset"], row["method"], column)


def test_every_fit_a_sentence_quotes_is_a_row_of_points(points):
    _, prose = parse(PAGE.read_text(encoding="utf-8"))
    quotes = [(dataset, q) for dataset, line in prose for q in QUOTE.finditer(line)]
    assert len(quotes) >= 8
    for dataset, q in quotes:
        assert dataset is not None, q[0]
        row = fit(points, dataset, q["method"], q["knob"] or "", q["seed"])
        assert close(q["cost"], row["cost"]), q[0]
        assert close(q["mean"], row["mean TV"]) and close(q["worst"], row["worst TV"]), q[0]


def test_no_fit_number_is_typed_outside_a_quote_or_a_table():
    for _, line in parse(PAGE.read_text(encoding="utf-8"))[1]:
        left = re.sub(r"`[^`]*`", "", QUOTE.sub("", line))
        assert not re.search(r"\d\.\d{3}", left), line


def test_every_knob_the_page_names_was_fitted(points):
    text = PAGE.read_text(encoding="utf-8") + (FOLDER / "wins.md").read_text(encoding="utf-8")
    named = set(KNOB.findall(text))
    for name, values in KNOB_LIST.findall(text):
        named |= {f"{name}={v}" for v in values.split(", ")}
    assert {"max_cost=0.06", "max_cost=0.12", "lambda=3000"} <= named
    assert named <= set(points["knob"]), named - set(points["knob"])


def matched_wins(points, dataset, challenger, defenders):
    """Per challenger fit: fairer at matched cost on each measure, or cheaper and useful."""
    data = points[(points["dataset"] == dataset) & points["cost"].notna()]
    rows = []
    for _, p in data[data["method"] == challenger].iterrows():
        same = data[data["seed"] == p["seed"]]
        pool = same[same["method"].isin(defenders) & (same["cost"] <= p["cost"] + 1e-12)]
        blind = same[same["method"] == "K-Means(10)"].iloc[0]
        rows.append(dict(
            knob=p["knob"], seed=p["seed"],
            **{m: not pool.empty and fairer(p[m], pool[m].min()) for m in MEASURES},
            uncovered=pool.empty and any(fairer(p[m], blind[m]) for m in MEASURES)))
    return rows


def test_the_verdicts_follow_from_the_points(points):
    _, prose = parse(PAGE.read_text(encoding="utf-8"))
    verdicts = [(d, line) for d, line in prose if re.search(r"\*\*\S.* dominates? ", line)
                or "does not dominate" in line]
    said = {(d, re.search(r"dominates? (\S+) here", line)[1]) for d, line in verdicts}
    peers = points[points["method"].isin(["ZGYA", "FCA"])]
    assert set(zip(peers["dataset"], peers["method"], strict=True)) <= said
    for dataset, line in verdicts:
        challenger = re.search(r"dominates? (\S+) here", line)[1]
        defenders = (DEFAULT if challenger == "ZGYA" else
                     [m for m in points["method"].unique() if m.startswith(("FairKM", "Bounded"))])
        rows = matched_wins(points, dataset, challenger, defenders)
        wins = {m: sum(r[m] for r in rows) for m in MEASURES}
        dominated = not (wins["mean TV"] or wins["worst TV"] or any(r["uncovered"] for r in rows))
        assert ("does not dominate" not in line) == dominated, line
        cheap = sum(r["uncovered"] for r in rows)
        if cheap:
            assert re.search(rf"{cheap} of its fits \(.*?\) cost less than any fit", line)
        if wins["mean TV"] or wins["worst TV"]:
            assert f"fairer on the mean at {wins['mean TV']} of its {len(rows)} fits" in line
            assert f"on the worst cluster at {wins['worst TV']} (" in line
        elif not dominated:
            assert "only because" in line


def test_the_default_against_zgya_the_other_way_round(points):
    dataset, line = next((d, line) for d, line in parse(PAGE.read_text(encoding="utf-8"))[1]
                         if "The other way round" in line)
    data = points[(points["dataset"] == dataset) & points["cost"].notna()]
    data = data[data["seed"] == data["seed"].min()]
    zgya, beaten, ahead = data[data["method"] == "ZGYA"], 0, 0
    ours = data[data["method"].isin(DEFAULT)]
    for _, p in ours.iterrows():
        pool = zgya[zgya["cost"] <= p["cost"] + 1e-12]
        beaten += any(not pool.empty and fairer(pool[m].min(), p[m]) for m in MEASURES)
        ahead += all(not pool.empty and fairer(p[m], pool[m].min()) for m in MEASURES)
    assert f"at {beaten} of the default's {len(ours)} fits ZGYA has a fit" in line
    assert f"at {ahead} the default is fairer on both" in line


def test_zgya_summary_lists_every_collapse_and_every_win(points):
    table = next(t for t in page_tables() if "ZGYA fits" in t["header"])
    assert {r["set"] for r in table["rows"]} == set(
        points.loc[points["method"] == "ZGYA", "dataset"])
    for row in table["rows"]:
        zgya = points[(points["dataset"] == row["set"]) & (points["method"] == "ZGYA")
                      & (points["seed"] == int(row["seed"]))]
        assert int(row["ZGYA fits"]) == len(zgya)
        for knob, status in zip(zgya["knob"], zgya["status"], strict=True):
            assert (f"`{knob}`" in row["not ok"]) == (status != "ok"), (row["set"], knob)
        wins = [r for r in matched_wins(points, row["set"], "ZGYA", DEFAULT)
                if r["seed"] == int(row["seed"])]
        for column, key in (("ZGYA fairer on the mean", "mean TV"),
                            ("ZGYA fairer on the worst cluster", "worst TV")):
            listed = set(re.findall(r"`([^`]+)`", row[column]))
            assert listed == {r["knob"] for r in wins if r[key]}, (row["set"], column)


def test_the_default_wins_as_often_as_the_page_says(points):
    count = total = 0
    for _, data in points.groupby("dataset"):
        data = data[(data["seed"] == data["seed"].min()) & data["cost"].notna()]
        for cap in (1.05, 1.10, 1.20):
            within = data[data["cost"] <= cap + 1e-12]
            ours = within[within["method"].isin(DEFAULT)]
            for m in MEASURES:
                total += 1
                count += not ours.empty and not fairer(within[m].min(), ours[m].min())
    text = PAGE.read_text(encoding="utf-8")
    assert f"default is the fairest of all methods in {count} of the {total} cells" in text
    losses = next(t for t in page_tables() if "the default's fairest" in t["header"])
    assert len(losses["rows"]) == total - count


def test_the_time_table_is_this_runs_seconds(points):
    table = next(t for t in page_tables() if "slowest s" in t["header"])
    assert {r["method"] for r in table["rows"]} == set(points["method"])
    for row in table["rows"]:
        mine = points[points["method"] == row["method"]]
        assert int(row["fits"]) == len(mine)
        assert close(row["median s"], mine["seconds"].median())
        assert close(row["slowest s"], mine["seconds"].max())
        slowest = mine.loc[mine["seconds"].idxmax()]
        assert row["slowest fit"].startswith(slowest["dataset"])
        assert f"({slowest['rows']:,} rows)" in row["slowest fit"]
