"""docs/attributes.md says what docs/attributes/points.csv says.

The page is written by benchmarks/bench_attributes.py; nothing here imports it
or fits anything. Every figure and file the page links must exist; every table
(marked by a MyST comment ``% table: ...`` above it) is parsed and each cell
worked out again from the CSV with plain pandas; and every number of the
findings is recomputed, so a page left behind by a rerun of the benchmark, or
a claim the data no longer bears, fails here.
"""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

DOCS = Path(__file__).parents[1] / "docs"
PAGE = DOCS / "attributes.md"
FOLDER = DOCS / "attributes"
# The page's threshold for a loss or a gain, in TV (half a percentage point of the rows).
TOLERANCE = 0.005
NUMBER = r"(\d+(?:,\d{3})*(?:\.\d+)?)"


@pytest.fixture(scope="module")
def text():
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def flat(text):
    """The page on one line, so that a sentence wrapped across lines reads whole."""
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def points():
    data = pd.read_csv(FOLDER / "points.csv", keep_default_na=False, na_values=[""])
    data["fitted"] = data["fitted"].fillna("")
    return data


@pytest.fixture(scope="module")
def adult(points):
    return points[points["study"] == "adult"]


def table(text, name):
    """The pipe table under ``% table: name``, as a list of dicts of cells."""
    lines = text.splitlines()
    start = lines.index(f"% table: {name}") + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    header, body = rows[0], rows[2:]
    assert set("".join(rows[1])) <= set("-"), name
    return [dict(zip(header, row, strict=True)) for row in body]


def shown(cell, value, decimals=3):
    """Whether a cell is ``value`` as the page rounds it."""
    return float(cell.replace(",", "")) == pytest.approx(value, abs=0.5 * 10**-decimals + 1e-9)


def number(text):
    return float(text.replace(",", ""))


def test_page_links_only_files_that_exist(text):
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    downloads = re.findall(r"\{download\}`([^`]+)`", text)
    assert len(images) >= 4 and downloads == ["attributes/points.csv"]
    for target in images + downloads:
        path = DOCS / target
        assert path.is_file(), target
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", target
    # Every figure the benchmark drew is on the page.
    assert {p.name for p in FOLDER.glob("*.png")} == {Path(t).name for t in images}


def test_page_names_its_run(text, points):
    run = json.loads((FOLDER / "run.json").read_text(encoding="utf-8"))
    assert not run["quick"]
    assert run["command"] in text and run["date"] in text and f"`{run['commit']}`" in text
    n_seeds = points["seed"].nunique()
    assert f"Numbers are means over {n_seeds} seeds" in re.sub(r"\s+", " ", text)
    assert n_seeds >= 2


def test_the_study_covers_what_it_says(points, adult):
    """Four orders of all five attributes, each prefix fitted; the synthetic series asked for."""
    attributes = list(dict.fromkeys(adult["attribute"]))
    assert len(attributes) == 5 and sorted(adult["k"].unique()) == [5, 15]
    fair = adult[adult["method"] == "FairKM"]
    for (k, seed, order), fits in fair.groupby(["k", "seed", "order"]):
        fitted = sorted(set(fits["fitted"]), key=len)
        assert [f.count("|") + 1 for f in fitted] == [1, 2, 3, 4, 5], (k, seed, order)
        assert all(b.startswith(a + "|") for a, b in zip(fitted, fitted[1:], strict=False))
    assert fair["order"].nunique() == 4
    alone = adult[adult["method"] == "FairKM alone"]
    assert sorted(set(alone["fitted"])) == sorted(attributes)
    count = points[(points["study"] == "attributes") & (points["method"] == "FairKM")]
    assert sorted(count["n_fitted"].unique()) == [1, 2, 5, 10, 20]
    assert count["attribute"].nunique() == 20
    values = points[points["study"] == "values"]
    assert sorted(values["design_values"].unique()) == [2, 10, 100, 1000]
    assert values.groupby("design_values")["n_values"].max().to_dict() == {
        2: 2, 10: 10, 100: 100, 1000: 1000}


def kmeans_levels(adult):
    """K-Means' CW and MW per k and attribute, means over seeds."""
    km = adult[adult["method"] == "K-Means(10)"]
    return km.pivot_table(index=["k", "attribute"], values=["CW", "MW"], aggfunc="mean")


@pytest.mark.parametrize("k", [5, 15])
def test_alone_table(text, adult, k):
    rows = table(text, f"alone k={k}")
    data = adult[adult["k"] == k]
    assert [r["attribute"] for r in rows] == list(dict.fromkeys(data["attribute"]))
    for row in rows:
        own = data[data["attribute"] == row["attribute"]]
        levels = {
            "K-Means": own[own["method"] == "K-Means(10)"],
            "alone": own[(own["method"] == "FairKM alone") & (own["fitted"] == row["attribute"])],
            "all 5": own[(own["method"] == "FairKM") & (own["fitted"].str.count(r"\|") == 4)],
        }
        assert len(levels["alone"]) == own["seed"].nunique()
        for name, fits in levels.items():
            for m in ("CW", "MW"):
                assert shown(row[f"{m}: {name}"], fits[m].mean()), (row["attribute"], name, m)
        chance = own[own["method"] == "random labels"]["MW"].mean()
        assert shown(row["MW: random labels"], chance)
        assert int(row["values"]) == own["n_values"].iloc[0]


def expected_losers(adult):
    """(k, set fitted, attribute, measure) -> (K-Means, fit, seeds worse), worked out afresh."""
    km = kmeans_levels(adult)
    per_seed = adult[adult["method"] == "K-Means(10)"].set_index(["k", "seed", "attribute"])
    fits = adult[adult["method"].isin(["FairKM", "FairKM alone"])].copy()
    fits["set"] = fits["fitted"].map(lambda f: frozenset(f.split("|")))
    found = {}
    for (k, fitted, attribute), rows in fits.groupby(["k", "set", "attribute"]):
        rows = rows.drop_duplicates("seed")  # the orders give the same fit (a test below)
        for m in ("CW", "MW"):
            value, reference = rows[m].mean(), km.loc[(k, attribute), m]
            if value - reference >= TOLERANCE:
                worse = sum(r[m] - per_seed.loc[(k, r["seed"], attribute), m] >= TOLERANCE
                            for _, r in rows.iterrows())
                found[(k, fitted, attribute, m)] = (reference, value, worse,
                                                    attribute in fitted)
    return found


def test_losers_table(text, adult):
    expected = expected_losers(adult)
    rows = table(text, "losers")
    n_seeds = adult["seed"].nunique()
    got = {}
    for row in rows:
        key = (int(row["k"]), frozenset(row["FairKM fits"].split(" + ")), row["attribute"],
               row["measure"])
        got[key] = row
    assert set(got) == set(expected) and len(rows) == len(expected)
    for key, (reference, value, worse, inside) in expected.items():
        row = got[key]
        assert shown(row["K-Means"], reference) and shown(row["this fit"], value), key
        assert row["seeds worse"] == f"{worse} of {n_seeds}", key
        assert row["in the fit"] == ("yes" if inside else "no"), key


def test_losers_sentence(flat, adult):
    expected = expected_losers(adult)
    found = re.search(r"In (\d+) cases .*? an attribute ends at least 0\.005 further", flat)
    assert found and int(found[1]) == len(expected)
    outside = sum(not inside for *_, inside in expected.values())
    if outside == len(expected):
        assert "all of them attributes left out of the fit" in flat
    (k, fitted, attribute, m), (reference, value, worse, _) = max(
        expected.items(), key=lambda item: item[1][1] - item[1][0])
    top = re.search(r"The largest: at k=(\d+), fitting (.+?) takes (\S+)'s (CW|MW) from "
                    r"(\d\.\d+) \(K-Means\) to (\d\.\d+) \(worse in (\d+) of (\d+) seeds\)", flat)
    assert top, "the largest loss is not quoted"
    assert (int(top[1]), frozenset(top[2].split(" + ")), top[3], top[4]) == (
        k, fitted, attribute, m)
    assert shown(top[5], reference) and shown(top[6], value) and int(top[7]) == worse



def test_left_out_sentence_gives_its_denominators(flat, adult):
    """Of every (fit, attribute left out), how many ended better and worse than K-Means."""
    km = kmeans_levels(adult)
    fits = adult[adult["method"].isin(["FairKM", "FairKM alone"])].copy()
    fits["set"] = fits["fitted"].map(lambda f: frozenset(f.split("|")))
    counts = {m: [0, 0, 0] for m in ("CW", "MW")}  # cases, better, worse
    for (k, fitted, attribute), rows in fits.groupby(["k", "set", "attribute"]):
        if attribute in fitted:
            continue
        rows = rows.drop_duplicates("seed")
        for m in ("CW", "MW"):
            change = rows[m].mean() - km.loc[(k, attribute), m]
            counts[m][0] += 1
            counts[m][1] += change <= -TOLERANCE
            counts[m][2] += change >= TOLERANCE
    found = re.search(r"Of the (\d+) cases of an attribute left out of a fit, its worst cluster "
                      r"\(MW\) ended at least 0\.005 closer to the dataset's mix than K-Means left "
                      r"it in (\d+) and further in (\d+); its mean cluster \(CW\) closer in (\d+) "
                      r"and further in (\d+)\.", flat)
    assert found, "the left-out cases are not counted"
    assert [int(g) for g in found.groups()] == [counts["MW"][0], counts["MW"][1],
                                                counts["MW"][2], counts["CW"][1],
                                                counts["CW"][2]]
    assert counts["CW"][0] == counts["MW"][0]


def test_fixed_weight_contrast(flat, adult):
    """The default's 'alone is fairer' counts, beside the reproduction's fixed-weight finding."""
    found = re.search(r"end fairer than with all of them in the fit \((\d+) of (\d+) at k=5, "
                      r"(\d+) of (\d+) at k=15, above\)", flat)
    assert found
    for k, losing, total in ((5, found[1], found[2]), (15, found[3], found[4])):
        said = re.search(rf"k={k}: all 5 together against each alone\.\*\* With all 5 in the "
                         r"fit, (\d+) of the (\d+) attributes end", flat)
        assert (said[1], said[2]) == (losing, total)
    reproduction = (DOCS / "reproduction.md").read_text(encoding="utf-8")
    assert "FairKM(All) fairer than FairKM(S) per attribute" in reproduction

@pytest.mark.parametrize("k", [5, 15])
def test_all_against_alone_sentence(flat, adult, k):
    data = adult[adult["k"] == k]
    alone = data[(data["method"] == "FairKM alone") & (data["fitted"] == data["attribute"])]
    alone = alone.groupby("attribute")[["CW", "MW"]].mean()
    full = data[(data["method"] == "FairKM") & (data["fitted"].str.count(r"\|") == 4)]
    full = full.groupby("attribute")[["CW", "MW"]].mean()
    km = kmeans_levels(adult).loc[k]
    loss = (full - alone).stack()
    sentence = re.search(rf"k={k}: all 5 together against each alone\.\*\* (.+?)(?: - \*\*|$)",
                         flat)[1]
    found = re.search(r"(\d+) of the 5 attributes end at least 0\.005 worse", sentence)
    losing = {a for (a, _), v in loss.items() if v >= TOLERANCE}
    assert int(found[1]) == len(losing)
    (attribute, m) = loss.idxmax()
    top = re.search(r"the largest loss is (\S+)'s (CW|MW): (\d\.\d+) alone, (\d\.\d+) with all",
                    sentence)
    assert (top[1], top[2]) == (attribute, m)
    assert shown(top[3], alone.loc[attribute, m]) and shown(top[4], full.loc[attribute, m])
    no_gain = {(a, m_) for a in full.index for m_ in ("CW", "MW")
               if km.loc[a, m_] - full.loc[a, m_] < TOLERANCE}
    quoted = re.findall(r"(\S+)'s (CW|MW) \((\d\.\d+), K-Means (\d\.\d+)\)", sentence)
    assert {(a, m_) for a, m_, *_ in quoted} == no_gain
    for a, m_, value, reference in quoted:
        assert shown(value, full.loc[a, m_]) and shown(reference, km.loc[a, m_])
    if not no_gain:
        assert "Every attribute still gains at least 0.005" in sentence


def test_order_sentence(flat, adult):
    fits = adult[adult["method"].isin(["FairKM", "FairKM alone"])].copy()
    fits["set"] = fits["fitted"].map(lambda f: frozenset(f.split("|")))
    spread = fits.groupby(["k", "seed", "set", "attribute"])[["CW", "MW", "cost"]].agg(
        lambda s: s.max() - s.min())
    if "fits of one set in two orders are identical in CW, MW and cost" in flat:
        assert spread.to_numpy().max() == 0
    else:
        gap = re.search(r"orders (?:differ by at most|differ by up to) (\S+) in CW", flat)
        assert gap and float(gap[1]) == pytest.approx(spread.to_numpy().max(), rel=0.05)


def test_adult_cost_and_time_sentence(flat, adult):
    fits = adult[adult["method"].isin(["FairKM", "FairKM alone"])]
    found = re.search(r"Every FairKM fit on Adult cost (\S+) to (\S+) times K-Means' and took "
                      r"(\S+) to (\S+) times KMeans\(n_init=10\)'s time \((\S+) to (\S+) s\); "
                      r"(\d+) of the (\d+) fits warned", flat)
    assert found
    assert shown(found[1], fits["cost"].min()) and shown(found[2], fits["cost"].max())
    assert shown(found[3], fits["time_ratio"].min(), 1)
    assert shown(found[4], fits["time_ratio"].max(), 1)
    assert shown(found[5], fits["seconds"].min(), 2) and shown(found[6], fits["seconds"].max(), 2)
    one_row_per_fit = fits.drop_duplicates(["k", "seed", "method", "order", "fitted"])
    assert int(found[8]) == len(one_row_per_fit)
    assert int(found[7]) == one_row_per_fit["warnings"].notna().sum()


def blob_levels(points, study, by):
    """Per method and step of a synthetic series: the per-seed summaries, then their mean."""
    rows = []
    data = points[points["study"] == study]
    for (method, level, seed), fit in data.groupby(["method", by, "seed"]):
        fitted = fit[fit["in_fit"]] if method == "FairKM" else fit
        left_out = fit[~fit["in_fit"]] if method == "FairKM" else fit.iloc[0:0]
        rows.append(dict(method=method, level=level, seed=seed, CW=fitted["CW"].mean(),
                         MW=fitted["MW"].mean(), worst=fitted["MW"].max(),
                         left_out=left_out["MW"].mean() if len(left_out) else float("nan"),
                         cost=fit["cost"].iloc[0], time=fit["time_ratio"].iloc[0],
                         seconds=fit["seconds"].iloc[0]))
    return pd.DataFrame(rows).groupby(["method", "level"]).mean()


@pytest.mark.parametrize(("name", "by", "unit"), [("attributes", "n_fitted", "attribute"),
                                                  ("values", "design_values", "value")])
def test_synthetic_tables(text, points, name, by, unit):
    levels = blob_levels(points, name, by)
    rows = table(text, name)
    expected = [key for key in levels.index if key[0] != "random labels"]
    assert len(rows) == len(expected)
    for row in rows:
        found = re.fullmatch(rf"(FairKM|K-Means\(10\))(?:, {NUMBER} {unit}s?)?", row["fit"])
        assert found, row["fit"]
        level = number(found[2]) if found[2] else 0
        expect = levels.loc[(found[1], level)]
        assert shown(row["mean CW"], expect["CW"]) and shown(row["mean MW"], expect["MW"])
        assert shown(row["worst attribute's MW"], expect["worst"])
        assert shown(row["cost"], expect["cost"]) and shown(row["time / K-Means"],
                                                            expect["time"], 1)
        assert shown(row["seconds"], expect["seconds"], 2)
        if "mean MW, left out" in row and row["mean MW, left out"] != "-":
            assert shown(row["mean MW, left out"], expect["left_out"])


def test_synthetic_sentences(flat, points):
    count = blob_levels(points, "attributes", "n_fitted")
    fair, km = count.loc["FairKM"], count.loc[("K-Means(10)", 0)]
    found = re.search(
        r"From 1 to 20 fitted attributes, their mean CW goes from (\S+) to (\S+) and their mean "
        r"MW from (\S+) to (\S+) \(K-Means on all 20: (\S+) and (\S+)\)\. On the fitted "
        r"attributes FairKM removes (\d+)% of K-Means' mean CW with 1 attribute \(K-Means (\S+) on "
        r"it\) and (\d+)% with 20\. The worst attribute's worst cluster is at (\S+) with 20 "
        r"attributes \(K-Means: ([\d.]+)\)", flat)
    assert found
    for cell, value in zip(found.groups()[:6], (fair.loc[1, "CW"], fair.loc[20, "CW"],
                                                fair.loc[1, "MW"], fair.loc[20, "MW"],
                                                km["CW"], km["MW"]), strict=True):
        assert shown(cell, value)
    # "Removes" is against K-Means on the same (fitted) attributes and seeds, not on all 20.
    data = points[points["study"] == "attributes"]
    kmeans = data[data["method"] == "K-Means(10)"].set_index(["seed", "attribute"])["CW"]
    ours = data[(data["method"] == "FairKM") & data["in_fit"]]
    same = ours.assign(kmeans=[kmeans[(s, a)] for s, a in zip(ours["seed"], ours["attribute"],
                                                               strict=True)])
    per_seed = same.groupby(["n_fitted", "seed"])[["CW", "kmeans"]].mean().groupby(
        "n_fitted").mean()
    assert shown(found[8], per_seed.loc[1, "kmeans"])
    assert int(found[7]) == round(100 * (1 - per_seed.loc[1, "CW"] / per_seed.loc[1, "kmeans"]))
    assert int(found[9]) == round(100 * (1 - per_seed.loc[20, "CW"] / per_seed.loc[20, "kmeans"]))
    assert shown(found[10], fair.loc[20, "worst"]) and shown(found[11], km["worst"])
    left = re.search(r"The attributes left out\*\* keep a mean MW of (\S+) to (\S+) \(K-Means: "
                     r"([\d.]+)\)", flat)
    assert shown(left[1], fair["left_out"].min()) and shown(left[2], fair["left_out"].max())

    values = blob_levels(points, "values", "design_values")
    found = re.search(
        r"With 2 values FairKM's mean CW is (\S+) against K-Means' (\S+) \((\d+)% removed\); "
        r"with 1,000, (\S+) against (\S+) \((\d+)%\)\. Many values raise the floor: random "
        r"labels show a mean MW of (\S+) with 2 values and (\S+) with 1,000", flat)
    assert found
    vf, vk, chance = (values.loc[m] for m in ("FairKM", "K-Means(10)", "random labels"))
    assert shown(found[1], vf.loc[2, "CW"]) and shown(found[2], vk.loc[2, "CW"])
    assert int(found[3]) == round(100 * (1 - vf.loc[2, "CW"] / vk.loc[2, "CW"]))
    assert shown(found[4], vf.loc[1000, "CW"]) and shown(found[5], vk.loc[1000, "CW"])
    assert int(found[6]) == round(100 * (1 - vf.loc[1000, "CW"] / vk.loc[1000, "CW"]))
    assert shown(found[7], chance.loc[2, "MW"]) and shown(found[8], chance.loc[1000, "MW"])

    both = pd.concat([fair, values.loc["FairKM"]])
    found = re.search(r"FairKM's cost is (\S+) to (\S+) times K-Means' and its time (\S+) to "
                      r"(\S+) times KMeans\(n_init=10\)'s over both series", flat)
    assert shown(found[1], both["cost"].min()) and shown(found[2], both["cost"].max())
    assert shown(found[3], both["time"].min(), 1) and shown(found[4], both["time"].max(), 1)
