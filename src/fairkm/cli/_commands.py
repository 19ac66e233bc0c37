"""The commands: fit, evaluate, tradeoff, demo and reproduce.

Each takes the parsed arguments, checks its output files and names (before
any work), reads the data (:mod:`._tables`), calls the library (the audit is
:func:`fairkm.report.audit`), writes its files together (:mod:`._io`), then
prints (:mod:`._printing`), and returns the exit status. Printing comes last
so that a failing standard output never costs the files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.cluster import KMeans

from fairkm import __version__, experiments
from fairkm.cluster import FairKM
from fairkm.datasets import fetch_adult, fetch_kinematics, make_sensitive_blobs
from fairkm.exceptions import DataWarning
from fairkm.report import audit, format_number
from fairkm.tradeoff import fairness_tradeoff, plot_tradeoff
from fairkm.utils._options import (
    EQUAL_WEIGHTING,
    HTML_REPORT,
    PAPER_WEIGHTING,
    REPORT_SUFFIXES,
    SIZE_WEIGHTING,
)
from fairkm.utils._threads import decided_pool_threads

from ._errors import DataError, UsageError
from ._io import OutputFiles, check_writable
from ._printing import fact_lines, print_facts, print_tradeoff
from ._progress_bar import progress_bar
from ._tables import check_bound, check_names, check_roles, prepare_data, read_sensitive

__all__ = [
    "reproduction_files",
    "run_demo",
    "run_evaluate",
    "run_fit",
    "run_reproduce",
    "run_tradeoff",
]

# Starts of the S-blind K-Means every command compares with; the best is kept,
# so the price of fairness is not measured against an unlucky start.
N_INIT = 10


def _outputs(args, **paths):
    """Check the output files (``option=path``, None skipped) before any work."""
    data = getattr(args, "data", None)
    outputs = OutputFiles(inputs=[] if data is None else [data], overwrite=args.overwrite,
                          written=getattr(args, "written", None))
    for option, path in paths.items():
        outputs.add(path, f"--{option}")
    return outputs


def _write_report(args, outputs, report):
    """Write the report (if asked) into ``outputs``, stamped with the version and time.

    HTML for ``.html``/``.htm``, the printed text for ``.txt``/``.md`` (the
    parser refused any other extension).
    """
    if args.report:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        report = dataclasses.replace(
            report, facts=[*report.facts, ("made by", f"fairkm {__version__}, {stamp}")]
        )
        if REPORT_SUFFIXES[Path(args.report).suffix.lower()] == HTML_REPORT:
            outputs.write_text(args.report, report.to_html())
        else:
            # What the command prints: the facts, then the audit's text.
            outputs.write_text(args.report, f"{fact_lines(report.facts)}\n{report.to_text()}\n")


def _print_report(args, report):
    """Print the audit (its facts, then its text) and say where the report went."""
    if not args.quiet:
        print_facts(report.facts)
        print(report.to_text())
        if args.report:
            print(f"wrote the report to {args.report}")


def _sensitive_fact(readings):
    """Name each sensitive column with its kind or number of values, as the library reads it."""
    return ", ".join(
        f"{name} ({'numeric' if categories is None else f'{len(categories)} values'})"
        for name, (_, _, categories) in readings.items()
    )


def _data_facts(args, data):
    facts = [("data", f"{args.data}: {len(data.frame):,} rows")]
    if data.dropped is not None:
        facts.append(("dropped (--dropna)", data.dropped))
    if data.weights is not None:
        zero = int(np.count_nonzero(data.weights == 0))
        facts.append(("weights", (
            f"column {data.weight_column!r} (--weight-column), total "
            f"{format_number(float(data.weights.sum()))} over {len(data.weights):,} rows"
            + (f", {zero:,} of weight 0" if zero else "")
            + ": a row of weight w counts as w rows in the fit and in every measure")))
    return facts


def _asked(args):
    """Whether a guarantee was asked (--max-deviation or --min-balance)."""
    return args.max_deviation is not None or args.min_balance is not None


def _bound(args, fitted=None):
    """Return the guarantee asked (--max-deviation, --deviation-kind, --min-balance) as arguments.

    With a ``fitted`` FairKM, the bound it enforced (0 resolved to what whole
    rows allow), for the audit to check that bound.
    """
    asked = args.max_deviation
    if fitted is not None and asked is not None:
        asked = fitted.max_deviation_
    return {"max_deviation": asked, "deviation_kind": args.deviation_kind or "additive",
            "min_balance": args.min_balance}


@contextlib.contextmanager
def _copies_checked():
    """Silence FairKM's warning of a feature copying a sensitive attribute, for a table read.

    :func:`._tables.prepare_data` warned of each such column of the file by its
    name (``copy_notes``); FairKM sees the encoded matrix and would name its
    columns ``x0``, ``x1``..., none of them in the file.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="feature '", category=DataWarning)
        yield


def _fit_fairkm(X, sensitive, args, numeric, sample_weight=None):
    """Fit FairKM (with a progress bar); return it and its time."""
    # Only a bound asked reaches FairKM, so that without one it is the same call as ever.
    bound = _bound(args) if _asked(args) else {}
    weights = {} if sample_weight is None else {"sample_weight": sample_weight}
    start = time.perf_counter()
    with progress_bar(args.quiet, desc="FairKM"):
        fair = FairKM(
            args.n_clusters, fairness_weight=args.fairness_weight,
            relative_weight=args.relative_weight, max_cost=args.max_cost,
            max_unfairness=args.max_unfairness, attribute_weights=args.attribute_weights,
            cluster_weighting=args.cluster_weighting,
            algorithm=args.algorithm, batch_size=args.batch_size,
            coarse_walk=not args.walk_every_row, numeric_sensitive=numeric,
            random_state=args.random_state, verbose=0, **bound,
        ).fit(X, sensitive_features=sensitive, **weights)
    return fair, time.perf_counter() - start


def _audited(args, *positional, **options):
    """Run :func:`fairkm.report.audit` under a bar that names its steps as they begin."""
    with progress_bar(args.quiet, desc="audit", unit=" steps"):
        return audit(*positional, **options)


def _bound_fact(fair):
    """Say what guarantee FairKM was asked for, what it took, and how far it was met."""
    enforced, target = fair.max_deviation_, fair.min_balance
    asked = []
    if enforced is not None:
        within = (", ".join(f"of {name} within {value:.3g}" for name, value in enforced.items())
                  if isinstance(enforced, dict) else f"within {enforced:.3g}")
        asked.append(f"every cluster's share of each value {within} of the dataset's "
                     f"({fair.deviation_kind})")
    if target is not None:
        at_least = (", ".join(f"of {name} at least {value:.3g}" for name, value in target.items())
                    if isinstance(target, dict) else f"at least {target:.3g}")
        asked.append(f"every cluster's balance {at_least}")
    took = ("FairKM's clustering met it unchanged" if fair.n_moved_by_bound_ == 0
            else f"{fair.n_moved_by_bound_:,} rows moved from FairKM's clustering to meet it")
    left = ("every bound met" if fair.bounds_check_.satisfied
            else f"largest violation left {fair.violation_:.3g}")
    repair = fair.bound_repair_
    if repair.loss:
        # Never "every bound met" alone where the bound cost some attribute its fairness.
        left += (f", but not without a loss: {', '.join(repair.attributes_worse)} ended "
                 f"further from the dataset's mix than FairKM left them "
                 f"({'; '.join(map(str, repair.loss))})")
    note = f" {fair.bounds_check_.note}" if fair.bounds_check_.note else ""
    return ("guarantee", f"{'; '.join(asked)}: {took}; {left}.{note}")


# How each cluster's deviations counted in the fairness term, in words.
_CLUSTER_WEIGHTING_WORDS = {EQUAL_WEIGHTING: "alike", SIZE_WEIGHTING: "by its share of the rows",
                            PAPER_WEIGHTING: "by the square of its share of the rows"}


def _fit_facts(fair, seconds):
    """Say what FairKM was asked for and what it did, in plain words."""
    facts = [("FairKM", f"k={fair.n_clusters}, {fair.n_iter_} sweeps in {seconds:.1f} s, "
                        f"objective {fair.objective_:.6g}")]
    if fair.max_cost is not None or fair.max_unfairness is not None:
        asked = (
            f"K-Means cost at most {fair.max_cost:.1%} above the S-blind clustering's"
            if fair.max_cost is not None
            else f"unfairness at most {fair.max_unfairness:.0%} of the S-blind clustering's"
        )
        # The weight in full: a rounded one may refuse the phase the budget kept.
        refit = (f"--relative-weight {fair.relative_weight_!r} gives the same clustering"
                 if fair.refit_params_ else "the same budget gives it again")
        facts.append(("budget", f"{asked}: ended at relative weight "
                                f"{fair.relative_weight_:.3g} ({refit})"))
    if fair.max_deviation is not None or fair.min_balance is not None:
        facts.append(_bound_fact(fair))
    if np.isnan(fair.relative_weight_):
        how = " (the paper's (n/k)^2)" if fair.fairness_weight == "paper" else ""
        facts.append(("fairness weight", f"lambda = {fair.fairness_weight_:.4g}{how}, absolute"))
        return facts
    if fair.max_cost is None and fair.max_unfairness is None:
        facts.append((
            "fairness weight",
            f"relative {fair.relative_weight_:.3g}: 1% less unfairness is worth "
            f"{fair.relative_weight_:.3g}% more K-Means cost at the S-blind clustering, less as "
            f"the cost mounts (lambda = "
            f"{fair.fairness_weight_:.4g}, each cluster counted "
            f"{_CLUSTER_WEIGHTING_WORDS[fair.cluster_weighting_]})",
        ))
    facts.append((
        "price and gain",
        f"K-Means cost {fair.cost_increase_:+.1%} against the S-blind clustering the fit "
        f"started from; unfairness {fair.unfairness_ratio_:.0%} of its (each cluster's "
        "distance from the dataset's mix, averaged over the clusters and summed over the "
        "attributes)",
    ))
    return facts


def run_fit(args):
    """``fairkm fit``: cluster a table with FairKM, audit it against S-blind K-Means."""
    check_roles(args)
    check_names(args)
    with _outputs(args, output=args.output, report=args.report) as outputs:
        data = prepare_data(args)
        if args.output is not None and args.cluster_column in data.frame.columns:
            raise DataError(
                f"{str(args.data)!r} already has a column {args.cluster_column!r}; name the new "
                "column with --cluster-column."
            )
        numeric = list(args.numeric_sensitive or [])
        with _copies_checked():
            fair, seconds = _fit_fairkm(data.X, data.sensitive, args, numeric,
                                        sample_weight=data.weights)
        facts = [
            *_data_facts(args, data),
            ("features", data.encoding),
            ("sensitive attributes", _sensitive_fact(data.readings)),
            *_fit_facts(fair, seconds),
        ]
        report = _audited(
            args, fair, data.X, sensitive_features=data.sensitive, numeric_sensitive=numeric,
            n_init=N_INIT, profile=data.profile, notes=data.notes, check_data=False,
            title=f"Fairness audit of FairKM on {Path(args.data).name}", facts=facts,
            random_state=args.random_state, sample_weight=data.weights, **_bound(args, fair),
        )
        if args.output is not None:
            result = data.frame.assign(**{args.cluster_column: fair.labels_})
            outputs.write_table(args.output, result, sep=args.sep)
        _write_report(args, outputs, report)
        outputs.commit()
    _print_report(args, report)
    if args.output is not None and not args.quiet:
        print(f"wrote {len(result):,} rows with column {args.cluster_column!r} to {args.output}")
    return 0


def run_evaluate(args):
    """``fairkm evaluate``: audit the clustering in a column of the table."""
    check_roles(args, labels=args.labels)
    check_names(args)
    with _outputs(args, report=args.report) as outputs:
        data = prepare_data(args, labels=args.labels, need_features=False)
        labels = data.frame[args.labels].to_numpy()
        numeric = list(args.numeric_sensitive or [])
        facts = [
            *_data_facts(args, data),
            ("clustering", f"column {args.labels!r}: {len(np.unique(labels))} clusters"),
            ("sensitive attributes", _sensitive_fact(data.readings)),
        ]
        if data.X is not None:
            facts.append(("features", data.encoding))
        report = _audited(
            args, labels, data.X, sensitive_features=data.sensitive, numeric_sensitive=numeric,
            name=f"column {args.labels!r}", n_init=N_INIT, profile=data.profile,
            notes=data.notes, check_data=False,
            title=f"Fairness audit of {args.labels!r} in {Path(args.data).name}", facts=facts,
            random_state=args.random_state, sample_weight=data.weights, **_bound(args),
        )
        _write_report(args, outputs, report)
        outputs.commit()
    _print_report(args, report)
    return 0


def run_tradeoff(args):
    """``fairkm tradeoff``: FairKM at several fairness weights, one table row each."""
    check_roles(args)
    check_names(args)
    relative = args.fairness_weights is None
    if args.max_cost is not None and not relative:
        raise UsageError("--max-cost goes with --relative-weights, not --fairness-weights")
    with _outputs(args, output=args.output, plot=args.plot) as outputs:
        data = prepare_data(args)
        frame, sensitive, X = data.frame, data.sensitive, data.X
        numeric = list(args.numeric_sensitive or [])
        # The S-blind reference of DevC and DevO, weighted as the fits are.
        # On one thread up to 50,000 rows, else a fit's count: never the load's.
        with decided_pool_threads(n_rows=X.shape[0]):
            blind = KMeans(args.n_clusters, n_init=N_INIT,
                           random_state=args.random_state).fit(X, sample_weight=data.weights)
        weights = args.relative_weights if relative else args.fairness_weights
        n_fits = len(weights) + (args.max_cost is not None)
        with progress_bar(args.quiet, desc="trade-off", total=n_fits, unit=" fits"), \
                _copies_checked():
            estimator = FairKM(
                args.n_clusters, attribute_weights=args.attribute_weights,
                cluster_weighting=args.cluster_weighting,
                algorithm=args.algorithm, batch_size=args.batch_size,
                coarse_walk=not args.walk_every_row,
                numeric_sensitive=numeric, random_state=args.random_state, verbose=0,
            )
            table = fairness_tradeoff(
                estimator, X, sensitive, None if relative else weights,
                relative_weights=weights if relative else None, max_cost=args.max_cost,
                reference_labels=blind.labels_,
                sample_size=5000 if len(frame) > 5000 else None,
                random_state=args.random_state, sample_weight=data.weights,
            )
        if args.output is not None:
            outputs.write_table(args.output, table, sep=args.sep)
        if args.plot is not None:
            fig = Figure(figsize=(7.0, 4.4))
            plot_tradeoff(table, axes=fig.subplots())
            fmt = Path(args.plot).suffix.lower().lstrip(".")
            outputs.write(args.plot, lambda path: fig.savefig(path, format=fmt, dpi=120))
        outputs.commit()
    if not args.quiet:
        print_facts([
            *_data_facts(args, data),
            ("features", data.encoding),
            ("sensitive attributes", _sensitive_fact(data.readings)),
        ])
        print_tradeoff(table)
        if args.output is not None:
            print(f"wrote the table to {args.output}")
        if args.plot is not None:
            print(f"wrote the plot to {args.plot}")
    return 0


def _demo_data(args):
    """Return (title, X, sensitive, numeric names, profile) for the chosen dataset."""
    if args.dataset == "synthetic":
        n_samples = args.n_samples or 5000
        X, sensitive, _ = make_sensitive_blobs(
            n_samples, n_features=4, centers=args.n_clusters, n_values=(2, 5), numeric=1,
            cluster_std=2.5, random_state=args.random_state,
        )
        sensitive.columns = ["sex", "region", "age"]
        profile = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        return "synthetic blobs", X, sensitive, ["age"], profile
    if args.n_samples is not None:
        raise UsageError("--n-samples applies to --dataset synthetic only")
    if args.dataset == "adult":
        bunch = fetch_adult(data_home=args.data_home)
        profile = bunch.data.drop(columns=bunch.sensitive_names)
        title = "UCI Adult, the FairKM paper's income-balanced undersample"
    else:
        bunch = fetch_kinematics(data_home=args.data_home)
        profile = None
        title = "kinematics word problems (Doc2Vec vectors)"
    X = bunch.features.to_numpy(dtype=np.float64)
    return title, X, bunch.sensitive, [], profile


def run_demo(args):
    """``fairkm demo``: FairKM against S-blind K-Means on built-in data."""
    with _outputs(args, report=args.report) as outputs:
        title, X, sensitive, numeric, profile = _demo_data(args)
        check_bound(args, list(sensitive.columns), numeric)
        readings = read_sensitive(sensitive, list(sensitive.columns), numeric)
        fair, seconds = _fit_fairkm(X, sensitive, args, numeric)
        facts = [
            ("data", f"{title}: {X.shape[0]:,} rows, {X.shape[1]} features"),
            ("sensitive attributes", _sensitive_fact(readings)),
            *_fit_facts(fair, seconds),
        ]
        report = _audited(
            args, fair, X, sensitive_features=sensitive, numeric_sensitive=numeric, n_init=N_INIT,
            profile=profile, check_data=False, title=f"fairkm demo: {title}", facts=facts,
            random_state=args.random_state, **_bound(args, fair),
        )
        _write_report(args, outputs, report)
        outputs.commit()
    if not args.quiet:
        print(f"fairkm {__version__} demo: FairKM against S-blind K-Means")
    _print_report(args, report)
    return 0


# How fairkm.experiments.reproduce names its files (its docstring's Notes):
# the paper's tables per dataset family, Figures 1-4 per dataset, and the lambda
# sweep's table and Figures 5-7 for the Kinematics datasets.
_TABLES = {"adult": (4, 5), "kinematics": (6, 7)}
_FIGURES = {"adult": (1, 2), "kinematics": (3, 4)}
_SWEPT = ("kinematics", "kinematics-l2")


def reproduction_files(datasets):
    """Name the files ``fairkm reproduce`` writes for ``datasets``.

    Parameters
    ----------
    datasets : sequence of str
        From ``"adult"``, ``"kinematics"``, ``"kinematics-l2"``.

    Returns
    -------
    list of str
        The file names in the output directory.
    """
    families = {"kinematics" if d.startswith("kinematics") else d for d in datasets}
    names = []
    for family, (quality, fairness) in _TABLES.items():
        if family in families:
            for stem in (f"table{quality}_{family}_quality", f"table{fairness}_{family}_fairness"):
                names += [f"{stem}.csv", f"{stem}.md"]
    names.append("figures1-4_per_attribute.csv")
    for dataset in datasets:
        family = "kinematics" if dataset.startswith("kinematics") else dataset
        first, second = _FIGURES[family]
        names += [f"figure{first}_{dataset}_aw.png", f"figure{second}_{dataset}_mw.png"]
    swept = [d for d in datasets if d in _SWEPT]
    if swept:
        names += ["lambda_sensitivity.csv", "lambda_runs.csv"]
        for dataset in swept:
            names += [f"figure5_{dataset}_co_sh.png", f"figure6_{dataset}_devc_devo.png",
                      f"figure7_{dataset}_fairness.png"]
    names += ["runs_summary.csv", "runs_summary.md", "tables.md", "runs_quality.csv",
              "runs_fairness.csv", "run.json"]
    return names


def _check_output_dir(out, datasets, overwrite):
    """Before any work: refuse existing outputs, and check that the folder can be written.

    Returns the folders that do not exist yet (the run creates them).
    """
    if out.exists() and not out.is_dir():
        raise DataError(f"--output-dir {str(out)!r} is not a directory.")
    if out.is_dir() and not overwrite:
        existing = [name for name in reproduction_files(datasets) if (out / name).exists()]
        if existing:
            raise DataError(
                f"{str(out)!r} already holds {', '.join(existing)}; pass --overwrite to replace "
                "them, or choose another --output-dir."
            )
    missing = []
    folder = out
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    if not folder.is_dir():
        raise DataError(f"cannot create {str(out)!r}: {str(folder)!r} is not a directory.")
    check_writable(folder)
    return missing


def run_reproduce(args):
    """``fairkm reproduce``: the paper's evaluation (:func:`fairkm.experiments.reproduce`)."""
    out = Path(args.output_dir)
    created = _check_output_dir(out, args.datasets, args.overwrite)
    try:
        tables = experiments.reproduce(
            out, n_seeds=args.seeds, quick=args.quick, data_home=args.data_home,
            n_jobs=args.n_jobs, progress=not args.quiet, datasets=tuple(args.datasets),
            resume=not args.no_resume,
        )
    except BaseException:
        # The finished tasks stay in out/parts for the next run; empty folders go.
        for folder in created:  # the deepest first; only the empty ones
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    if not args.quiet:
        print(f"wrote {len(tables)} table(s) to {args.output_dir}: {', '.join(tables)}")
    return 0
