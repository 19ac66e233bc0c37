"""Evidence for docs/bounds.md's guarantee: held-out sets, every seed's cost, numeric bounds.

Three sections (``--sections``), each a CSV under ``docs/bounds/`` with a ``version`` column:
``--version before`` is issue 40's starting point, and a later run (``--version after``)
adds its own rows beside them, replacing only rows of its own version and sections. The
page's part between the ``bench_guarantee`` markers of ``docs/bounds.md`` (and the
per-attribute tables of ``docs/bounds/attributes.md``, which it includes) is written from the
CSVs; ``--page-only`` rewrites it without fitting. Every measure is recounted here in plain
NumPy from the labels, never read from the library's metrics.

``heldout``: sets a user might bring, each with its own sensitive attributes: scikit-learn's
diabetes (sex; numeric age), a 4,000-row sample of Adult's test file (sex, race,
marital-status; numeric age), Kinematics (the problem's type) and, where statsmodels can be
loaded (here, ``--survey-python`` or ``--survey-csv``), the 1996 American National Election
Study (education; numeric age). For k = 3 and 5: ``KMeans(n_init=10)``, ``FairKM()`` and
``FairKM(max_deviation=d)`` for every bound; per attribute the mean over the clusters (each
counting once) and the worst cluster of its distance from the dataset's mix (categorical:
total variation "TV" and Euclidean "Euclid" of the shares; numeric: 1-Wasserstein "W1" and
"mean-z", the gap of the mean, of the values standardised over the dataset), the cost, rows
moved, whether the bound holds, the warnings and ``bound_repair_`` where the model has one.

``seeds``: ``BoundedKMeans(max_deviation=d, random_state=s)`` with its defaults for seeds 0,
1, 2025 on FCA's Adult setting (k=10) and the Adult sample (k=5): cost and time over
``KMeans(n_init=10)``'s, beside ``FairKM(max_deviation=d)``'s cost.

``numeric``: ``BoundedKMeans(max_deviation=0.05, numeric_bound=0.1, random_state=0)`` fitted
five times on the Adult sample and on diabetes, numeric age, k=5, each beside the same fit
without ``numeric_bound``: the labelings, the costs, the times.

Run: ``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_guarantee.py --version
after --survey-python <a Python with statsmodels>`` (about 8 minutes on two busy cores), then
``pytest tests/test_bounds_page.py``. fairkm does not depend on statsmodels: give it a venv of
its own (``python -m venv ENV && ENV/bin/pip install
statsmodels``), or export the survey once (``python -c "import statsmodels.api as sm;
sm.datasets.anes96.load_pandas().data.to_csv('anes96.csv', index=False)"``, outside the
repository) and pass ``--survey-csv``. Without either, the set is left out, with a message.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
from _command import recorded_command
from bench_bounds import fca_adult
from guarantee_page import write_page
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

import fairkm
from fairkm import FairKM
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import fetch_adult, fetch_kinematics
from fairkm.exceptions import InfeasibleBoundError

BOUNDS = (0.2, 0.1, 0.05, 0.02, 0.01, 0.0)
KS = (3, 5)
SEEDS = (0, 1, 2025)
RUNS = 5
ROOT = Path(__file__).resolve().parents[1]
SURVEY = ("import sys\nimport statsmodels.api as sm\n"
          "sm.datasets.anes96.load_pandas().data.to_csv(sys.argv[1], index=False)\n")

# ----------------------------------------------------------------------------- the data


def standardised(frame):
    return np.ascontiguousarray(StandardScaler().fit_transform(frame.to_numpy(np.float64)))


def diabetes():
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int).astype(str),
                              "age": frame["age"].astype(float)})
    return standardised(frame.drop(columns=["sex", "age", "target"])), sensitive, ["age"]


def adult_sample(data_home, n=4000, seed=0):
    """A sample of Adult's test file, four features standardised; three attributes and age."""
    data = fetch_adult(data_home=data_home, subset="test", preprocess=None,
                       download_if_missing=False).data
    rows = np.sort(np.random.default_rng(seed).choice(len(data), n, replace=False))
    data = data.iloc[rows].reset_index(drop=True)
    sensitive = data[["sex", "race", "marital-status"]].astype(str).assign(
        age=data["age"].astype(float))
    X = standardised(data[["education-num", "hours-per-week", "capital-gain", "capital-loss"]])
    return X, sensitive, ["age"]


def kinematics(data_home):
    with tempfile.TemporaryDirectory() as home:  # the Doc2Vec vectors are cached beside the data
        shutil.copytree(Path(data_home) / "kinematics", Path(home) / "kinematics")
        bunch = fetch_kinematics(data_home=home, download_if_missing=False, sensitive="type")
    sensitive = pd.DataFrame({"type": np.asarray(bunch.sensitive).ravel().astype(str)})
    return np.ascontiguousarray(bunch.features, dtype=np.float64), sensitive, []


def anes96(args):
    """statsmodels' ANES 1996 survey, from a CSV, this Python or another one; None without."""
    if args.survey_csv:
        frame = pd.read_csv(args.survey_csv)
    else:
        try:
            import statsmodels.api as sm
            frame = sm.datasets.anes96.load_pandas().data
        except ImportError:
            if not args.survey_python:
                print("ANES 1996 left out: no statsmodels (--survey-python, --survey-csv)",
                      file=sys.stderr)
                return None
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "anes96.csv"
                subprocess.run([args.survey_python, "-c", SURVEY, str(path)], check=True)
                frame = pd.read_csv(path)
    sensitive = pd.DataFrame({"education": frame["educ"].astype(int).astype(str),
                              "age": frame["age"].astype(float)})
    features = ["TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "logpopul"]
    return standardised(frame[features]), sensitive, ["age"]


def heldout_sets(args):
    """Yield (name, X, sensitive, numeric attributes)."""
    yield "diabetes", *diabetes()
    yield "Adult test sample", *adult_sample(args.data_home)
    if not args.quick:
        yield "Kinematics", *kinematics(args.data_home)
    survey = None if args.quick else anes96(args)
    if survey is not None:
        yield "ANES 1996", *survey


# ----------------------------------------------------------------------------- recounts


def cost(X, labels):
    """The K-Means cost of ``labels``: squared distances to their clusters' means."""
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
               for c in np.unique(labels))


def standard(values):
    values = np.asarray(values, dtype=np.float64)
    return (values - values.mean()) / values.std()


def wasserstein(z, members):
    """1-D W1 between the values of ``members`` and all values: the area between the CDFs."""
    grid = np.unique(z)
    every = np.searchsorted(np.sort(z), grid, side="right") / z.size
    mine = np.searchsorted(np.sort(z[members]), grid, side="right") / members.sum()
    return float(np.sum(np.abs(mine - every)[:-1] * np.diff(grid)))


def distances(labels, sensitive, numeric):
    """Per (attribute, measure): each cluster's distance from the dataset's mix."""
    clusters, out = np.unique(labels), {}
    for name in sensitive.columns:
        column = sensitive[name].to_numpy()
        if name in numeric:
            z = standard(column)
            out[name, "W1"] = np.array([wasserstein(z, labels == c) for c in clusters])
            out[name, "mean-z"] = np.array([abs(z[labels == c].mean()) for c in clusters])
            continue
        values = np.unique(column)
        mix = np.array([np.mean(column == v) for v in values])
        shares = np.array([[np.mean(column[labels == c] == v) for v in values]
                           for c in clusters])
        out[name, "TV"] = 0.5 * np.abs(shares - mix).sum(axis=1)
        out[name, "Euclid"] = np.sqrt(((shares - mix) ** 2).sum(axis=1))
        out[name, "share"] = np.abs(shares - mix).max(axis=1)  # the bound's own measure
    return out


def labeling(labels):
    return hashlib.sha1(np.ascontiguousarray(labels, dtype=np.int64).tobytes()).hexdigest()[:12]


# ----------------------------------------------------------------------------- fitting


def attempt(make):
    """Fit; return the model (None if it raised), seconds, status and the warnings."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model, status = make(), "ok"
        except InfeasibleBoundError as exc:
            model, status = None, "infeasible: " + str(exc).splitlines()[0]
        except Exception as exc:  # noqa: BLE001  a later version's failure is a row, not a stop
            model, status = None, f"error: {type(exc).__name__}: {str(exc).splitlines()[0]}"
    seconds = time.perf_counter() - start
    kinds = sorted({w.category.__name__ for w in caught})
    texts = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return model, seconds, status, ", ".join(kinds), " || ".join(texts)


def enforced(model, categorical, asked):
    """Per categorical attribute, the bound the model says it enforced (``asked`` without)."""
    value = getattr(model, "max_deviation_", None)
    if isinstance(value, dict):
        return {a: float(value.get(a, asked)) for a in categorical}
    if value is None:
        table = model.bounds_check_.table
        return {a: float(table.loc[a, "bound"]) if a in table.index else asked
                for a in categorical}
    return dict.fromkeys(categorical, float(value))


def judged(model, found, categorical, asked):
    """The bound enforced, the largest gap of a share, and whether it holds.

    A bound asked above 0 is judged as asked; 0 by the tightest bound the model says whole
    rows allow (``max_deviation_``).
    """
    limit = enforced(model, categorical, asked)
    if asked > 0:
        limit = dict.fromkeys(categorical, asked)
    gaps = {a: found[a, "share"].max() for a in categorical}
    return dict(enforced=max(enforced(model, categorical, asked).values()),
                largest_share_gap=max(gaps.values()),
                met=all(gaps[a] <= limit[a] + 1e-9 for a in categorical))


def repair_of(model):
    """``bound_repair_`` in words where the model has it (NaN where it has none)."""
    repair = getattr(model, "bound_repair_", None)
    if repair is None:
        return np.nan, np.nan
    loss = "; ".join(map(str, getattr(repair, "loss", ()) or ()))
    return str(getattr(repair, "how", repair)).replace("\n", " "), loss


def heldout_fits(version, name, X, sensitive, numeric, k, bounds):
    """One set at one k: K-Means(10), FairKM() and FairKM(max_deviation=d); fits, distances."""
    categorical = [c for c in sensitive.columns if c not in numeric]
    km, km_seconds, *_ = attempt(lambda: KMeans(k, n_init=10, random_state=0).fit(X))
    settings = [("K-Means(10)", np.nan, lambda: km)] + [
        ("FairKM()" if d is None else "FairKM(max_deviation)", np.nan if d is None else d,
         lambda d=d: FairKM(k, max_deviation=d, numeric_sensitive=numeric,
                            random_state=0).fit(X, sensitive_features=sensitive))
        for d in (None, *bounds)]
    fits, attributes, own = [], [], None
    for method, bound, make in settings:
        model, seconds, status, kinds, texts = attempt(make)
        seconds = km_seconds if method == "K-Means(10)" else seconds
        row = dict(version=version, set=name, rows=len(X), k=k, method=method, bound=bound,
                   status=status, seconds=seconds, kmeans_seconds=km_seconds, warned=kinds,
                   warnings=texts)
        row["repair"], row["repair loss"] = repair_of(model)
        if model is not None:
            labels = model.labels_
            own = labels if method == "FairKM()" else own
            found = distances(labels, sensitive, numeric)
            row.update(cost=cost(X, labels), clusters=len(np.unique(labels)),
                       moved=np.nan if own is None else int(np.count_nonzero(labels != own)),
                       n_moved_by_bound_=getattr(model, "n_moved_by_bound_", np.nan))
            if not np.isnan(bound):
                row.update(judged(model, found, categorical, bound))
            attributes += [dict(version=version, set=name, k=k, method=method, bound=bound,
                                attribute=a, measure=m, mean=float(v.mean()),
                                worst=float(v.max()))
                           for (a, m), v in found.items() if m != "share"]
        fits.append(row)
        print(f"  {method:22} {bound:5} {status[:40]:40} moved {row.get('moved')} "
              f"{seconds:6.2f} s {kinds}", flush=True)
    return fits, attributes


def heldout(args, version):
    fits, attributes = [], []
    for name, X, sensitive, numeric in heldout_sets(args):
        for k in (3,) if args.quick else KS:
            print(f"{name}: {len(X):,} rows, k={k}", flush=True)
            more = heldout_fits(version, name, X, sensitive, numeric, k, args.bounds)
            fits, attributes = fits + more[0], attributes + more[1]
    return {"heldout_fits": pd.DataFrame(fits), "heldout_attributes": pd.DataFrame(attributes)}


def seeds(args, version):
    rows = []
    sets = [("Adult test sample", *adult_sample(args.data_home)[:2], 5)]
    if not args.quick:
        X, sex = fca_adult(args.data_home)
        sets.insert(0, ("Adult, FCA's setting", X, pd.DataFrame({"sex": sex}), 10))
    for name, X, sensitive, k in sets:
        sensitive = sensitive.drop(columns="age", errors="ignore")
        km, km_seconds, *_ = attempt(lambda X=X, k=k: KMeans(k, n_init=10, random_state=0).fit(X))
        reference = cost(X, km.labels_)
        print(f"{name}: {len(X):,} rows, k={k}; K-Means(10) {km_seconds:.2f} s", flush=True)
        for d in args.bounds:
            fits = [("FairKM(max_deviation)", 0, lambda d=d, k=k, X=X, s=sensitive: FairKM(
                k, max_deviation=d, random_state=0).fit(X, sensitive_features=s))]
            fits += [("BoundedKMeans", seed, lambda d=d, k=k, X=X, s=sensitive, seed=seed:
                      BoundedKMeans(k, max_deviation=d, random_state=seed, progress=False).fit(
                          X, sensitive_features=s)) for seed in args.seeds]
            for method, seed, make in fits:
                model, seconds, status, kinds, texts = attempt(make)
                row = dict(version=version, set=name, rows=len(X), k=k, bound=d, method=method,
                           seed=seed, status=status, seconds=seconds, kmeans_seconds=km_seconds,
                           warned=kinds, warnings=texts)
                if model is not None:
                    found = distances(model.labels_, sensitive, [])
                    row.update(cost_kmeans=cost(X, model.labels_) / reference,
                               **judged(model, found, list(sensitive.columns), d))
                rows.append(row)
                print(f"  {method:22} d={d:<5} seed {seed:<5} {status[:30]:30} "
                      f"{row.get('cost_kmeans', np.nan):.4f} {seconds:6.2f} s", flush=True)
    return {"seeds": pd.DataFrame(rows)}


def numeric(args, version):
    sets = [("Adult test sample", *adult_sample(args.data_home))]
    sets += [] if args.quick else [("diabetes", *diabetes())]
    return {"numeric": pd.DataFrame([row for name, X, sensitive, names in sets
                                     for row in numeric_runs(version, name, X, sensitive, names,
                                                             2 if args.quick else RUNS)])}


def numeric_runs(version, name, X, sensitive, names, runs, k=5):
    """Each run: the numeric bound, then the same fit without it (both under the same load)."""
    rows = []
    for run in range(runs):
        for bound in (0.1, np.nan):
            model, seconds, status, kinds, texts = attempt(
                lambda b=bound: BoundedKMeans(
                    k, max_deviation=0.05, numeric_bound=None if np.isnan(b) else b,
                    numeric_sensitive=names, random_state=0, progress=False).fit(
                    X, sensitive_features=sensitive))
            row = dict(version=version, set=name, rows=len(X), k=k, run=run,
                       numeric_bound=bound, status=status, seconds=seconds, warned=kinds,
                       warnings=texts)
            if model is not None:
                found = distances(model.labels_, sensitive, names)
                categorical = [a for a in sensitive if a not in names]
                row.update(labeling=labeling(model.labels_), cost=cost(X, model.labels_),
                           largest_share_gap=max(found[a, "share"].max() for a in categorical),
                           largest_mean_z=max(found[a, "mean-z"].max() for a in names))
                row["met"] = bool(row["largest_share_gap"] <= 0.05 + 1e-9 and (
                    np.isnan(bound) or row["largest_mean_z"] <= bound + 1e-9))
            rows.append(row)
            print(f"  {name} run {run} numeric_bound={bound}: {status[:30]} {seconds:.2f} s "
                  f"{row.get('labeling')} {row.get('cost', np.nan):.3f}", flush=True)
    return rows


# ----------------------------------------------------------------------------- the run


def warm_up():
    """Compile the kernels on a small problem, so that no timed fit includes it."""
    X, sensitive, names = diabetes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in (None, 0.05, 0.0):
            FairKM(3, max_deviation=d, numeric_sensitive=names, random_state=0).fit(
                X, sensitive_features=sensitive)
        for bound in (None, 0.2):
            BoundedKMeans(3, max_deviation=0.1, numeric_bound=bound, numeric_sensitive=names,
                          random_state=0, progress=False).fit(X, sensitive_features=sensitive)


def run_meta(version, walls):
    src = ROOT / "src"
    commit, edited = (subprocess.run(["git", *words], capture_output=True, text=True,
                                     check=False, cwd=ROOT).stdout.strip() for words in
                      (("rev-parse", "--short", "HEAD"), ("status", "--porcelain", str(src))))
    if edited and Path(fairkm.__file__).resolve().parents[1] == src:
        commit += " with uncommitted changes to src/"
    threads = ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in ("OMP_NUM_THREADS",
                                                                      "NUMBA_NUM_THREADS"))
    return dict(version=version, commit=commit, date=date.today().isoformat(),
                fairkm=fairkm.__version__, command=recorded_command("bench_guarantee.py"),
                machine=f"{platform.machine()}, {os.cpu_count()} "
                f"cores ({threads})", wall_s=walls)


def merge(folder, name, frame, version):
    """The CSV's rows of other versions, then this run's (a section re-run replaces its own)."""
    path = folder / f"{name}.csv"
    if path.exists():
        old = pd.read_csv(path, keep_default_na=False, na_values=[""])
        frame = pd.concat([old[old["version"] != version], frame], ignore_index=True)
    frame.to_csv(path, index=False)


RUNS_OF = {"heldout": heldout, "seeds": seeds, "numeric": numeric}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--sections", default=",".join(RUNS_OF),
                        help=f"comma-separated, of {', '.join(RUNS_OF)}")
    parser.add_argument("--version", help="the label of this run's rows (before, after, ...)")
    parser.add_argument("--output-dir", type=Path, help="default: docs/bounds (quick: "
                        "benchmarks/results/guarantee)")
    parser.add_argument("--page", type=Path, help="default: docs/bounds.md (quick: none)")
    parser.add_argument("--survey-python", help="a Python with statsmodels, for ANES 1996")
    parser.add_argument("--survey-csv", help="statsmodels' anes96 data, exported as CSV")
    parser.add_argument("--quick", action="store_true",
                        help="two sets, k=3, bounds 0.05 and 0, two seeds, two runs")
    parser.add_argument("--page-only", action="store_true", help="write the page; fit nothing")
    args = parser.parse_args()
    folder = args.output_dir or ROOT / ("benchmarks/results/guarantee" if args.quick
                                        else "docs/bounds")
    page = args.page or (None if args.quick else ROOT / "docs" / "bounds.md")
    folder.mkdir(parents=True, exist_ok=True)
    if not args.page_only:
        if not args.version:
            parser.error("--version is required to fit (it labels this run's rows)")
        sections = args.sections.split(",")
        if unknown := set(sections) - set(RUNS_OF):
            parser.error(f"--sections: unknown {sorted(unknown)}; choose from {tuple(RUNS_OF)}")
        args.bounds = (0.05, 0.0) if args.quick else BOUNDS
        args.seeds = SEEDS[:2] if args.quick else SEEDS
        warm_up()
        meta_path = folder / f"run_{args.version}.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        walls = meta.get("wall_s", {})
        for section in sections:
            start = time.perf_counter()
            for name, frame in RUNS_OF[section](args, args.version).items():
                merge(folder, name, frame, args.version)
            walls[section] = round(time.perf_counter() - start, 1)
        meta_path.write_text(json.dumps(run_meta(args.version, walls), indent=1) + "\n")
    if page is not None:
        write_page(folder, page)


if __name__ == "__main__":
    main()
