"""Record, or compare against a record, every output a refactor must leave bit-identical.

A refactor that "changes no result" is checked by running this script on the
commit before it (``--record DIR``) and on the commit after it (``--compare
DIR``). It uses only the public API and the command line, so the same script
runs on both trees. What it records, each compared exactly (labels, objectives
and every float to the last bit; tables cell by cell; files byte by byte):

* ``benchmarks/bench_fit.py``'s data (1,000,000 x 10, 5 attributes): the
  default FairKM fit, and the exact and mini-batch engines named explicitly;
* Adult (the paper's pipeline and the standard one, k=5 and 15): FairKM on all
  five attributes at the defaults and at the paper's weight 1e6 (with it,
  ``predict`` with and without sensitive features, ``score``,
  ``fairness_report``, ``clustering_report``), S-blind K-Means, ZGYA on sex;
* blobs with a numeric attribute: ``fairkm.dask.FairKM`` on 3 partitions and
  its ``predict``, and the weight trade-off table;
* the bounds: :func:`fairkm.bounds.fair_assignment` on blobs (additive with a
  numeric bound, multiplicative, a least balance, an attribute of more values
  than the search tables, more rows than ``max_lp_variables``, and 300,000
  rows, where the Lagrangian searches on a sample first),
  ``FairKM(max_deviation=...)`` and :class:`fairkm.BoundedKMeans` on Adult;
* the CLI: ``fairkm fit`` (output CSV and HTML report, with the run's time
  and date masked) and ``fairkm reproduce --quick`` (every table).

Run: ``python benchmarks/golden_outputs.py --record DIR`` on the old tree,
then ``python benchmarks/golden_outputs.py --compare DIR`` on the new one.
``--data-home`` points at the datasets (default ``../shared/data``).
"""

import argparse
import json
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from fairkm import ZGYA, BlindKMeans, BoundedKMeans, FairKM
from fairkm.bounds import fair_assignment
from fairkm.cli import main as cli_main
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.experiments import fairness_tradeoff
from fairkm.metrics import clustering_report, fairness_report

ROOT = Path(__file__).resolve().parent.parent
N_VALUES = (2, 5, 6, 7, 41)


def fitted(model):
    """The numbers a fitted FairKM-like model exposes."""
    out = {}
    for name in ("labels_", "cluster_centers_", "inertia_", "fairness_", "objective_",
                 "objective_history_", "n_iter_", "fairness_weight_", "attribute_weights_",
                 "cost_history_", "lower_bound_", "lp_cost_", "violation_"):
        if hasattr(model, name):
            value = getattr(model, name)
            out[name] = np.asarray(value.compute() if hasattr(value, "compute") else value)
    return out


def bench_fit_data():
    X, sensitive, _ = make_sensitive_blobs(
        1_000_000, n_features=10, centers=10, n_values=N_VALUES, random_state=0
    )
    sensitive = sensitive.apply(lambda col: col.str[1:].astype(np.int64))
    return np.ascontiguousarray(X), sensitive


def record_big(results):
    X, S = bench_fit_data()
    default = FairKM(10, random_state=0).fit(X, sensitive_features=S)
    results["big/default"] = fitted(default)
    exact = FairKM(10, algorithm="exact", random_state=0).fit(X, sensitive_features=S)
    results["big/exact"] = fitted(exact)
    mini = FairKM(10, algorithm="minibatch", random_state=0).fit(X, sensitive_features=S)
    results["big/minibatch"] = fitted(mini)


def record_adult(results, data_home):
    for preprocess in ("paper", "standard"):
        bunch = fetch_adult(data_home=data_home, preprocess=preprocess)
        X, S = np.ascontiguousarray(bunch.features, dtype=np.float64), bunch.sensitive
        for k in (5, 15):
            key = f"adult-{preprocess}-k{k}"
            default = FairKM(k, random_state=0).fit(X, sensitive_features=S)
            results[f"{key}/default"] = fitted(default)
            model = FairKM(k, fairness_weight=1e6, random_state=0).fit(X, sensitive_features=S)
            results[f"{key}/fairkm"] = fitted(model)
            results[f"{key}/predict"] = {
                "blind": model.predict(X[:3000]),
                "fair": model.predict(X[:3000], sensitive_features=S.iloc[:3000]),
            }
            results[f"{key}/score"] = {
                "blind": np.array(model.score(X[:3000])),
                "fair": np.array(model.score(X[:3000], sensitive_features=S.iloc[:3000])),
            }
            results[f"{key}/fairness_report"] = fairness_report(
                model.labels_, sensitive_features=S
            )
            blind = BlindKMeans(k, random_state=0).fit(X, sensitive_features=S)
            results[f"{key}/blind"] = {"labels_": blind.labels_}
            results[f"{key}/clustering_report"] = clustering_report(
                X, model.labels_, reference_labels=blind.labels_, sample_size=2000,
                random_state=0,
            ).to_frame()
        zgya = ZGYA(5, random_state=0).fit(X, sensitive_features=S["sex"])
        results[f"adult-{preprocess}/zgya"] = {
            "labels_": zgya.labels_, "objective_": np.array(zgya.objective_),
            "n_iter_": np.array(zgya.n_iter_),
        }


def blobs_with_numeric():
    X, S, _ = make_sensitive_blobs(3000, n_values=(2, 5), numeric=1, random_state=3)
    return np.ascontiguousarray(X), S


def record_dask(results):
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from fairkm.dask import FairKM as DaskFairKM

    X, S = blobs_with_numeric()
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1) as cluster, \
            Client(cluster) as client:
        dX = da.from_array(X, chunks=(1000, X.shape[1]))
        dS = dd.from_pandas(S, npartitions=3)
        model = DaskFairKM(4, fairness_weight=1e5, random_state=0).fit(
            dX, sensitive_features=dS, client=client
        )
        results["dask/fit"] = fitted(model)
        results["dask/predict"] = {
            "blind": model.predict(dX).compute(),
            "fair": model.predict(dX, sensitive_features=dS).compute(),
        }


def record_tradeoff(results):
    X, S = blobs_with_numeric()
    results["tradeoff"] = fairness_tradeoff(
        FairKM(4, random_state=0), X, S, [0, 1e3, 1e5, 1e7], random_state=0
    )


def assigned(result):
    """The numbers a :class:`fairkm.bounds.BoundedAssignment` carries."""
    out = {name: np.asarray(getattr(result, name))
           for name in ("labels", "centers", "inertia", "assignment_cost", "lower_bound",
                        "lp_cost", "nearest_cost", "n_iter", "cost_history", "exact",
                        "certified", "n_rounded")}
    out["violation"] = np.asarray(result.violation)
    return out


def record_bounds(results, data_home):
    X, S = blobs_with_numeric()
    start = FairKM(4, random_state=0).fit(X, sensitive_features=S).cluster_centers_
    cases = {
        "additive": dict(max_deviation=0.05, numeric_bound=0.1, max_iter=3),
        "multiplicative": dict(max_deviation=0.2, deviation_kind="multiplicative"),
        "balance": dict(max_deviation=None, min_balance=0.18),
        "priced": dict(max_deviation=0.03, max_lp_variables=2000),
    }
    for name, params in cases.items():
        results[f"bounds/{name}"] = assigned(fair_assignment(X, start, S, **params))
    # an attribute of more values than the search tables hold (_TABLED)
    X2, S2, _ = make_sensitive_blobs(6000, n_values=(3, 90), random_state=4)
    start2 = FairKM(5, random_state=0).fit(X2, sensitive_features=S2).cluster_centers_
    results["bounds/many-values"] = assigned(
        fair_assignment(X2, start2, S2, max_deviation=0.02, max_iter=2)
    )
    # past max_lp_variables and twice the Lagrangian's sample: priced, searched on a sample
    X3, S3, _ = make_sensitive_blobs(300_000, n_features=10, centers=8, n_values=(2, 5, 3),
                                     cluster_std=2.0, random_state=0)
    start3 = X3[:: 300_000 // 10][:10]
    results["bounds/large"] = assigned(fair_assignment(X3, start3, S3, max_deviation=0.05))
    results["bounds/fairkm"] = fitted(
        FairKM(4, max_deviation=0.05, random_state=0).fit(X, sensitive_features=S)
    )
    bunch = fetch_adult(data_home=data_home, preprocess="standard")
    Xa = np.ascontiguousarray(bunch.features, dtype=np.float64)
    model = BoundedKMeans(5, max_deviation=0.05, random_state=0, progress=False)
    results["bounds/adult"] = fitted(model.fit(Xa, sensitive_features=bunch.sensitive))


def _masked(text, tmp):
    # The run's temporary folder, wall time and date are all that may differ.
    text = text.replace(str(tmp), "<tmp>")
    text = re.sub(r"in \d+\.\d s", "in <time> s", text)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<date>", text)


def _without_times(path):
    table = pd.read_csv(path)
    return table.drop(columns=[c for c in table.columns if "seconds" in c]).to_csv(index=False)


def record_cli(results, data_home):
    X, S = blobs_with_numeric()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
        frame = pd.concat([frame, S], axis=1)
        frame.insert(0, "id", np.arange(len(frame)))
        frame.to_csv(tmp / "people.csv", index=False)
        sensitive = ",".join(S.columns)
        numeric = [c for c in S.columns if S[c].dtype.kind == "f"]
        argv = ["fit", str(tmp / "people.csv"), "--sensitive", sensitive, "--exclude", "id",
                "--n-clusters", "4", "--fairness-weight", "1e5",
                "--output", str(tmp / "out.csv"), "--report", str(tmp / "r.html"), "--quiet"]
        if numeric:
            argv += ["--numeric-sensitive", ",".join(numeric)]
        assert cli_main(argv) == 0
        results["cli/fit_csv"] = (tmp / "out.csv").read_text()
        results["cli/fit_report"] = _masked((tmp / "r.html").read_text(), tmp)
        home = tmp / "data"
        for name in ("adult", "kinematics"):
            shutil.copytree(Path(data_home) / name, home / name)
        out = tmp / "reproduce"
        assert cli_main(["reproduce", "--quick", "--output-dir", str(out), "--datasets",
                         "adult", "--data-home", str(home), "--quiet"]) == 0
        for path in sorted(out.glob("*.csv")):
            results[f"cli/reproduce/{path.name}"] = _without_times(path)


def _column(series):
    """A table column as an array NPZ holds without pickling (text columns as str)."""
    values = series.to_numpy()
    return values.astype(str) if values.dtype == object else values


def save(results, directory):
    directory.mkdir(parents=True, exist_ok=True)
    index = {}
    for key, value in results.items():
        stem = re.sub(r"[^A-Za-z0-9_.-]", "__", key)
        if isinstance(value, pd.DataFrame):
            np.savez(directory / f"{stem}.npz",
                     **{f"c{j}": _column(value.iloc[:, j]) for j in range(value.shape[1])})
            labels = {"index": [str(i) for i in value.index],
                      "columns": [str(c) for c in value.columns]}
            (directory / f"{stem}.json").write_text(json.dumps(labels))
            index[key] = ["frame", stem]
        elif isinstance(value, str):
            (directory / f"{stem}.txt").write_text(value)
            index[key] = ["text", stem]
        else:
            np.savez(directory / f"{stem}.npz", **value)
            index[key] = ["arrays", stem]
    (directory / "index.json").write_text(json.dumps(index, indent=1))


def _same(new, old):
    if new.dtype.kind == "f" or old.dtype.kind == "f":
        return new.shape == old.shape and np.array_equal(new, old, equal_nan=True)
    return np.array_equal(new, old)


def compare(results, directory):
    index = json.loads((directory / "index.json").read_text())
    failures = []
    for key, (kind, stem) in index.items():
        if key not in results:
            failures.append(f"{key}: not produced")
            continue
        new = results[key]
        if kind == "frame":
            labels = json.loads((directory / f"{stem}.json").read_text())
            if labels != {"index": [str(i) for i in new.index],
                          "columns": [str(c) for c in new.columns]}:
                failures.append(f"{key}: rows or columns differ")
                continue
            with np.load(directory / f"{stem}.npz", allow_pickle=False) as old:
                for j, column in enumerate(labels["columns"]):
                    if not _same(_column(new.iloc[:, j]), old[f"c{j}"]):
                        failures.append(f"{key}[{column}]: differs")
        elif kind == "text":
            if new != (directory / f"{stem}.txt").read_text():
                failures.append(f"{key}: text differs")
        else:
            with np.load(directory / f"{stem}.npz") as old:
                for name in old.files:
                    if name not in new:
                        failures.append(f"{key}.{name}: not produced")
                    elif not _same(np.asarray(new[name]), old[name]):
                        failures.append(f"{key}.{name}: differs")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path)
    mode.add_argument("--compare", type=Path)
    parser.add_argument("--data-home", default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    results = {}
    for step in (record_big, record_dask, record_tradeoff):
        print(f"running {step.__name__}", flush=True)
        step(results)
    for step in (record_bounds, record_adult, record_cli):
        print(f"running {step.__name__}", flush=True)
        step(results, args.data_home)
    if args.record:
        save(results, args.record)
        print(f"recorded {len(results)} outputs in {args.record}")
        return 0
    failures = compare(results, args.compare)
    for line in failures:
        print("DIFFERS:", line)
    print(f"{len(failures)} of the recorded outputs differ" if failures
          else "every recorded output is bit-identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
