"""The README's "Where it wins, and what it costs": its table and sentences, from committed data.

Reads ``docs/frontier/points.csv`` (written by ``bench_frontier.py``) and
``docs/fairness-weight-panel.md`` (written by ``bench_weights.py``) and writes the part of
``README.md`` between its ``readme_numbers`` markers. It fits nothing. Run
``python benchmarks/readme_numbers.py`` after either benchmark; ``--check`` writes nothing and
exits with status 1 when the README differs from what the data gives.
``tests/test_readme.py`` recounts every number of that part from the same files.
"""

import argparse
import sys
import textwrap
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
POINTS = ROOT / "docs" / "frontier" / "points.csv"
PANEL = ROOT / "docs" / "fairness-weight-panel.md"
START = ("<!-- readme_numbers: written by benchmarks/readme_numbers.py from "
         "docs/frontier/points.csv and docs/fairness-weight-panel.md; edit those. -->")
END = "<!-- readme_numbers: end -->"
HEADLINE = "Adult paper, sex, k=5"
DEFAULT = ("FairKM equal", "FairKM equal budget")  # the default's knob and its budgets
MEASURES = ("mean TV", "worst TV")
CAPS = (1.05, 1.10, 1.20)
ROWS = {"K-Means(n_init=10)": ("K-Means(10)",),
        "FairKM's default (its weight and budgets)": DEFAULT,
        "ZGYA (`lambda` 1 to 10,000)": ("ZGYA",)}
# Blobs built so that fairness means moving points between them: not "real data".
SYNTHETIC = "blobs"


def fairer(a, b):
    """The frontier page's rule: lower at three decimals (a smaller difference is a tie)."""
    return round(a, 3) < round(b, 3)


def read_points(path=POINTS):
    data = pd.read_csv(path, keep_default_na=False, na_values=[""])
    data["knob"] = data["knob"].fillna("")
    return data[data["cost"].notna()]


def within(data, cap):
    return data[data["cost"] <= cap + 1e-12]


def cap_table(first):
    """Rows of the table: per method group and cap, its fairest mean / worst; bold as the page."""
    lines = ["| method (Adult, sex, k=5) | " + " | ".join(f"cost <= {c:.2f}" for c in CAPS) + " |",
             "|---|" + "---|" * len(CAPS)]
    for label, methods in ROWS.items():
        cells = []
        for cap in CAPS:
            every, ours = within(first, cap), within(first[first["method"].isin(methods)], cap)
            parts = []
            for m in MEASURES:
                value = ours[m].min()
                parts.append(f"**{value:.3f}**" if not fairer(every[m].min(), value)
                             else f"{value:.3f}")
            cells.append(" / ".join(parts))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def elsewhere(first):
    """The cells where none of the table's rows is the fairest: which method is, and how fair."""
    shown = first[first["method"].isin([m for ms in ROWS.values() for m in ms])]
    found = []
    for cap in CAPS:
        every, ours = within(first, cap), within(shown, cap)
        for m in MEASURES:
            if fairer(every[m].min(), ours[m].min()):
                best = every.loc[every[m].idxmin()]
                found.append(f"{'the worst cluster' if m == 'worst TV' else 'the mean'} within "
                             f"+{cap - 1:.0%}: {best['method']} `{best['knob']}`, "
                             f"{best[m]:.3f}")
    return found


def step(rows):
    """The costs of the default's knob at 16 and 32, where its slope turns into a step."""
    knob = rows[rows["method"] == "FairKM equal"].set_index("knob")["cost"]
    return knob["relative_weight=16"], knob["relative_weight=32"]


def zgya_wins(data):
    """ZGYA fits fairer, on the mean or the worst cluster, than every default fit no costlier;
    ``in_step``: within that seed's step of the default from 16 to 32."""
    wins = []
    for _, rows in data.groupby("seed"):
        ours, (low, high) = rows[rows["method"].isin(DEFAULT)], step(rows)
        for _, p in rows[rows["method"] == "ZGYA"].iterrows():
            pool = within(ours, p["cost"])
            if not pool.empty and any(fairer(p[m], pool[m].min()) for m in MEASURES):
                wins.append({**p.to_dict(), "in_step": low < p["cost"] <= high})
    return pd.DataFrame(wins)


def panel_wins(points):
    """Per set (first seed), cap and measure: whether the default is the fairest of all."""
    cells = []
    for _, data in points.groupby("dataset", sort=False):
        first = data[data["seed"] == data["seed"].min()]
        for cap in CAPS:
            every = within(first, cap)
            ours = every[every["method"].isin(DEFAULT)]
            for m in MEASURES:
                cells.append(not ours.empty and not fairer(every[m].min(), ours[m].min()))
    return sum(cells), len(cells)


def panel_costs(path=PANEL):
    """The default's cost on the weight panel's real data, from its table."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, [c.strip() for c in line.strip("|").split("|")], strict=True))
            for line in lines[1:]]
    return [float(r["cost %"]) for r in rows
            if r["setting"] == "default" and SYNTHETIC not in r["dataset"]]


def render(points, costs):
    data = points[points["dataset"] == HEADLINE]
    first = data[data["seed"] == data["seed"].min()]
    blind = first[first["method"] == "K-Means(10)"].iloc[0]
    default = first[(first["method"] == "FairKM equal")
                    & (first["knob"] == "relative_weight=1")].iloc[0]
    low, high = step(first)
    wins = zgya_wins(data)
    n_zgya = int((data["method"] == "ZGYA").sum())
    best, cells = panel_wins(points)
    others = elsewhere(first)
    text = [
        START, "",
        f"On Adult (the paper's pipeline, sex alone, k=5, seed {first['seed'].iloc[0]}), the "
        "fairest clustering each method reaches within a cost cap. Cost is the K-Means cost over "
        "S-blind `KMeans(n_init=10)`'s; each cell is the clusters' mean / worst distance from the "
        "dataset's mix (total variation; lower is fairer); **bold**: the fairest of every method "
        "measured, FairKM's other weightings and the bounds included.", "",
        cap_table(first), "",
        f"- **The default** (`FairKM()`) costs {default['cost'] - 1:+.1%} here and brings the "
        f"mean from {blind['mean TV']:.3f} to {default['mean TV']:.3f} and the worst cluster "
        f"from {blind['worst TV']:.3f} to {default['worst TV']:.3f}; on the real data of "
        f"[the weight panel](docs/weight-panel.md) it costs +{min(costs):.1f}% to "
        f"+{max(costs):.1f}%.",
        f"- **Against ZGYA**, which takes one categorical attribute where FairKM takes several: "
        f"ZGYA is fairer than every default fit of no greater cost at {len(wins)} of its "
        f"{n_zgya} fits (seeds {', '.join(map(str, sorted(data['seed'].unique())))}; costs "
        f"{wins['cost'].min():.2f} to {wins['cost'].max():.2f}), "
        f"{int(wins['in_step'].sum())} of them in the "
        f"default's step from `relative_weight` 16 (cost {low:.3f} for seed "
        f"{first['seed'].iloc[0]}) to 32 ({high:.3f}).",
        "- **Elsewhere the fairest**: " + ("; ".join(others) if others else "none") + ".",
        f"- **Across the frontier panel** ({points['dataset'].nunique()} sets from Adult, "
        "Kinematics, diabetes and blobs; "
        f"the same caps and measures), the default is the fairest of every method in {best} of "
        f"the {cells} cells.", "",
        "Every fit, method and set: [docs/frontier.md](docs/frontier.md).", "", END]
    return "\n".join(wrap(line) for line in text)


def wrap(line):
    """A prose line or bullet at 100 columns, as the README's other prose; tables as they are."""
    if line.startswith(("|", "<!--")) or not line:
        return line
    indent = "  " if line.startswith("- ") else ""
    return textwrap.fill(line, 100, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def replace(readme, block):
    start, end = readme.index(START), readme.index(END) + len(END)
    return readme[:start] + block + readme[end:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare; write nothing")
    args = parser.parse_args()
    readme = README.read_text(encoding="utf-8")
    new = replace(readme, render(read_points(), panel_costs()))
    if args.check:
        if new != readme:
            print("README.md differs from what docs/frontier/points.csv and "
                  "docs/fairness-weight-panel.md give: run benchmarks/readme_numbers.py",
                  file=sys.stderr)
            sys.exit(1)
        return
    README.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
