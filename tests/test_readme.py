"""The README: short, its two commands, its quickstart and every number it prints, recounted.

The quickstart runs and prints labelled numbers that compare FairKM with K-Means; the table
and sentences of "Where it wins, and what it costs" are recounted from docs/frontier/points.csv
and docs/fairness-weight-panel.md with plain pandas (benchmarks/readme_numbers.py writes them).
"""

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _python_block(path, section):
    text = path.read_text(encoding="utf-8")
    start = text.index(section)
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)


def test_quickstart_prints_labelled_compared_numbers(tmp_path, monkeypatch):
    code = _python_block(ROOT / "README.md", "## Quickstart")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md quickstart", "exec"), {})
    printed = out.getvalue()
    # Every number has a label, and FairKM is set against S-blind K-Means.
    assert re.search(r"K-Means objective \(lower is tighter\): FairKM \d+, S-blind K-Means \d+ "
                     r"\([+-]\d+\.\d%\)", printed)
    assert re.search(r"FairKM\s+S-blind K-Means", printed)
    assert "mean" in printed and "lower is fairer" in printed
    assert "Within a 5% budget: K-Means objective" in printed
    assert "Price of fairness" in printed and "S-blind K-Means (best of 10)" in printed
    assert (tmp_path / "audit.html").is_file()
    # The printed output shown under the code is what it prints.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme[readme.index("## Quickstart"):].split("```text\n")[1].split("```")[0]
    assert [line.split() for line in shown.splitlines() if line.strip()] == [
        line.split() for line in printed.splitlines() if line.strip()]


def test_docs_quickstart_is_the_readme_quickstart():
    assert (_python_block(ROOT / "docs" / "quickstart.md", "# Quickstart")
            == _python_block(ROOT / "README.md", "## Quickstart"))


# ---- The README a newcomer reads: short, two commands, and numbers recounted from the data. ----

POINTS = ROOT / "docs" / "frontier" / "points.csv"
PANEL = ROOT / "docs" / "fairness-weight-panel.md"
CAPS = (1.05, 1.10, 1.20)
MEASURES = ("mean TV", "worst TV")
DEFAULT = ("FairKM equal", "FairKM equal budget")  # the default: its knob and its budgets


def _readme():
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _flat(text):
    return re.sub(r"\s+", " ", text)


def _points():
    import pandas as pd

    data = pd.read_csv(POINTS, keep_default_na=False, na_values=[""])
    data["knob"] = data["knob"].fillna("")
    return data[data["cost"].notna()]


def _lower(a, b):
    """Fairer as the frontier page says it: lower at three decimals."""
    return round(a, 3) < round(b, 3)


def _bash_block_after(text, heading):
    start = text.index(heading)
    return re.search(r"```bash\n(.*?)```", text[start:], re.S).group(1).strip()


def test_readme_is_short_and_links_only_pages_that_exist():
    text = _readme()
    assert len(text.splitlines()) <= 250
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets and all((ROOT / target).is_file() for target in targets), [
        t for t in targets if not (ROOT / t).is_file()]
    # Every page of the site in docs/ is linked from the README.
    pages = {f"docs/{name}.md" for name in (
        "install", "quickstart", "usage", "fairness-weight", "frontier", "attributes", "bounds",
        "report", "metrics", "cli", "datasets", "scale", "baselines", "reproduction",
        "development")}
    assert pages <= set(targets), pages - set(targets)


def test_ci_runs_exactly_the_readmes_test_command():
    text = _readme()
    run = _bash_block_after(text, "Install and run the main job")
    assert run.endswith("pip install . && python -m fairkm demo")
    command = _bash_block_after(text, "Install and run the test suite")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci
    assert "pytest -m slow" in ci and "ruff check ." in ci


def test_the_suite_time_is_the_development_pages():
    said = re.search(r"it took (\d+ min \d+ s) on 2 cores in a fresh clone on (\S+) ",
                     _flat(_readme()))
    development = _flat((ROOT / "docs" / "development.md").read_text(encoding="utf-8"))
    assert said and f"took {said[1]} on 2 cores in a fresh clone on {said[2]}," in development


def test_where_it_wins_is_what_the_script_writes_from_the_data():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "readme_numbers.py"),
                           "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_where_it_wins_table_recounted_from_the_points():
    points = _points()
    data = points[points["dataset"] == "Adult paper, sex, k=5"]
    first = data[data["seed"] == data["seed"].min()]
    text = _readme()
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    groups = {"K-Means(n_init=10)": ["K-Means(10)"],
              "FairKM's default (its weight and budgets)": list(DEFAULT),
              "ZGYA (`lambda` 1 to 10,000)": ["ZGYA"]}
    assert [r.split("|")[1].strip() for r in rows] == list(groups)
    for row in rows:
        label, *cells = [c.strip() for c in row.strip().strip("|").split("|")]
        for cap, cell in zip(CAPS, cells, strict=True):
            every = first[first["cost"] <= cap + 1e-12]
            mine = every[every["method"].isin(groups[label])]
            for m, part in zip(MEASURES, cell.split(" / "), strict=True):
                value = mine[m].min()
                assert float(part.strip("*")) == round(value, 3), (label, cap, m)
                # Bold exactly where no method of the frontier is fairer.
                assert part.startswith("**") == (not _lower(every[m].min(), value)), (
                    label, cap, m)


def test_where_it_wins_sentences_recounted():
    points = _points()
    data = points[points["dataset"] == "Adult paper, sex, k=5"]
    first = data[data["seed"] == data["seed"].min()]
    flat = _flat(_readme())
    blind = first[first["method"] == "K-Means(10)"].iloc[0]
    default = first[(first["method"] == "FairKM equal")
                    & (first["knob"] == "relative_weight=1")].iloc[0]
    said = re.search(r"costs \+(\d+\.\d)% here and brings the mean from (\S+) to (\S+) and the "
                     r"worst cluster from (\S+) to (\S+);", flat)
    assert float(said[1]) == round(100 * (default["cost"] - 1), 1)
    assert [float(said[i]) for i in range(2, 6)] == [round(v, 3) for v in (
        blind["mean TV"], default["mean TV"], blind["worst TV"], default["worst TV"])]

    # The default's cost on the weight panel's real data (not the blobs).
    table = [line for line in PANEL.read_text(encoding="utf-8").splitlines()
             if line.startswith("| ") and "| default |" in line and "blobs" not in line]
    costs = [float(line.split("|")[4]) for line in table]
    said = re.search(r"on the real data of \[the weight panel\]\(docs/weight-panel\.md\) it costs "
                     r"\+(\S+)% to \+(\S+)%\.", flat)
    assert (float(said[1]), float(said[2])) == (min(costs), max(costs))

    # ZGYA's fits fairer than every default fit of no greater cost, and those in 16 -> 32.
    wins, in_step = [], 0
    for _, rows in data.groupby("seed"):
        knob = rows[rows["method"] == "FairKM equal"].set_index("knob")["cost"]
        ours = rows[rows["method"].isin(DEFAULT)]
        for _, z in rows[rows["method"] == "ZGYA"].iterrows():
            pool = ours[ours["cost"] <= z["cost"] + 1e-12]
            if len(pool) and any(_lower(z[m], pool[m].min()) for m in MEASURES):
                wins.append(z["cost"])
                in_step += knob["relative_weight=16"] < z["cost"] <= knob["relative_weight=32"]
    said = re.search(r"ZGYA is fairer than every default fit of no greater cost at (\d+) of its "
                     r"(\d+) fits \(seeds [\d, ]+; costs (\S+) to (\S+)\), (\d+) of them in the "
                     r"default's step", flat)
    assert int(said[1]) == len(wins) and int(said[2]) == (data["method"] == "ZGYA").sum()
    assert (float(said[3]), float(said[4])) == (round(min(wins), 2), round(max(wins), 2))
    assert int(said[5]) == in_step

    # Where none of the three rows is the fairest, the README names the method that is.
    shown = first[first["method"].isin(["K-Means(10)", "ZGYA", *DEFAULT])]
    for cap in CAPS:
        every, ours = first[first["cost"] <= cap + 1e-12], shown[shown["cost"] <= cap + 1e-12]
        for m in MEASURES:
            if _lower(every[m].min(), ours[m].min()):
                best = every.loc[every[m].idxmin()]
                assert f"{best['method']} `{best['knob']}`, {best[m]:.3f}" in flat

    # Across the panel: cells where the default is the fairest of all.
    best, cells = 0, 0
    for _, rows in points.groupby("dataset"):
        rows = rows[rows["seed"] == rows["seed"].min()]
        for cap in CAPS:
            every = rows[rows["cost"] <= cap + 1e-12]
            ours = every[every["method"].isin(DEFAULT)]
            for m in MEASURES:
                cells += 1
                best += bool(len(ours)) and not _lower(every[m].min(), ours[m].min())
    said = re.search(r"\((\d+) sets .*?the default is the fairest of every method in (\d+) of "
                     r"the (\d+) cells", flat)
    assert (int(said[1]), int(said[2]), int(said[3])) == (points["dataset"].nunique(), best,
                                                         cells)
