"""The commands: fit, evaluate, tradeoff, demo and reproduce.

Each takes the parsed arguments, reads the data (:mod:`._tables`), calls the
library (the audit is :func:`fairkm.report.audit`), prints (:mod:`._printing`)
and writes its files (:mod:`._io`), and returns the exit status.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import BlindKMeans, FairKM, __version__, experiments
from ..datasets import fetch_adult, fetch_kinematics, make_sensitive_blobs
from ..report import audit
from ..tradeoff import fairness_tradeoff, plot_tradeoff
from ._errors import DataError, UsageError
from ._io import check_output_path, write_atomic, write_table
from ._printing import print_facts, print_tradeoff
from ._progress_bar import progress_bar
from ._tables import check_roles, prepare_data

__all__ = ["run_demo", "run_evaluate", "run_fit", "run_reproduce", "run_tradeoff"]

# Starts of the S-blind K-Means every command compares with; the best is kept,
# so the price of fairness is not measured against an unlucky start.
N_INIT = 10


def _finish(args, report):
    """Print the audit (its facts, then its text) and write the HTML report if asked."""
    if not args.quiet:
        print_facts(report.facts)
        print(report.to_text())
    if args.report:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        report = dataclasses.replace(
            report, facts=[*report.facts, ("made by", f"fairkm {__version__}, {stamp}")]
        )
        page = report.to_html()
        write_atomic(args.report, lambda path: path.write_text(page, encoding="utf-8"))
        if not args.quiet:
            print(f"wrote the report to {args.report}")


def _sensitive_fact(sensitive, numeric):
    return ", ".join(
        f"{name} ({'numeric' if name in numeric else f'{sensitive[name].nunique()} values'})"
        for name in sensitive.columns
    )


def _data_facts(args, data):
    facts = [("data", f"{args.data}: {len(data.frame):,} rows")]
    if data.dropped is not None:
        facts.append(("dropped (--dropna)", data.dropped))
    return facts


def _fit_fairkm(X, sensitive, args, numeric):
    """Fit FairKM (with a progress bar); return it and its time."""
    start = time.perf_counter()
    with progress_bar(args.quiet, desc="FairKM"):
        fair = FairKM(
            args.n_clusters, fairness_weight=args.fairness_weight,
            relative_weight=args.relative_weight, max_cost=args.max_cost,
            max_unfairness=args.max_unfairness, attribute_weights=args.attribute_weights,
            algorithm=args.algorithm, batch_size=args.batch_size, numeric_sensitive=numeric,
            random_state=args.random_state, verbose=0,
        ).fit(X, sensitive_features=sensitive)
    return fair, time.perf_counter() - start


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
        facts.append(("budget", f"{asked}: chose relative weight {fair.relative_weight_:.3g}"))
    if np.isnan(fair.relative_weight_):
        how = " (the paper's (n/k)^2)" if fair.fairness_weight == "paper" else ""
        facts.append(("fairness weight", f"lambda = {fair.fairness_weight_:.4g}{how}, absolute"))
        return facts
    if fair.max_cost is None and fair.max_unfairness is None:
        facts.append((
            "fairness weight",
            f"relative {fair.relative_weight_:.3g}: at the margin, 1% less unfairness is worth "
            f"{fair.relative_weight_:.3g}% more K-Means cost (lambda = "
            f"{fair.fairness_weight_:.4g})",
        ))
    facts.append((
        "price and gain",
        f"K-Means cost {fair.cost_increase_:+.1%} against the S-blind clustering the fit "
        f"started from; unfairness {fair.unfairness_ratio_:.0%} of its (the fairness term, "
        "each attribute against its S-blind value, averaged)",
    ))
    return facts


def _check_outputs(args, first, second):
    """Check the output files of options ``first`` and ``second``, and that they differ."""
    outputs = [path for path in (getattr(args, first), getattr(args, second)) if path is not None]
    for path in outputs:
        check_output_path(path, inputs=[args.data], overwrite=args.overwrite)
    if len({Path(p).resolve() for p in outputs}) < len(outputs):
        raise UsageError(f"--{first} and --{second} name the same file")


def run_fit(args):
    """``fairkm fit``: cluster a table with FairKM, audit it against S-blind K-Means."""
    check_roles(args)
    _check_outputs(args, "output", "report")
    data = prepare_data(args)
    if args.output is not None and args.cluster_column in data.frame.columns:
        raise DataError(
            f"{str(args.data)!r} already has a column {args.cluster_column!r}; name the new "
            "column with --cluster-column."
        )
    numeric = list(args.numeric_sensitive or [])
    fair, seconds = _fit_fairkm(data.X, data.sensitive, args, numeric)
    facts = [
        *_data_facts(args, data),
        ("features", data.encoding),
        ("sensitive attributes", _sensitive_fact(data.sensitive, numeric)),
        *_fit_facts(fair, seconds),
    ]
    report = audit(
        fair, data.X, sensitive_features=data.sensitive, numeric_sensitive=numeric,
        n_init=N_INIT, profile=data.frame[data.names], notes=data.notes, check_data=False,
        title=f"Fairness audit of FairKM on {Path(args.data).name}", facts=facts,
        random_state=args.random_state,
    )
    _finish_fit(args, report, data, fair)
    return 0


def _finish_fit(args, report, data, fair):
    """Print and write the report, then the clustered rows."""
    _finish(args, report)
    if args.output is not None:
        result = data.frame.assign(**{args.cluster_column: fair.labels_})
        write_table(result, args.output)
        if not args.quiet:
            print(f"wrote {len(result):,} rows with column {args.cluster_column!r} to "
                  f"{args.output}")


def run_evaluate(args):
    """``fairkm evaluate``: audit the clustering in a column of the table."""
    check_roles(args, labels=args.labels)
    if args.report is not None:
        check_output_path(args.report, inputs=[args.data], overwrite=args.overwrite)
    data = prepare_data(args, labels=args.labels, need_features=False)
    labels = data.frame[args.labels].to_numpy()
    numeric = list(args.numeric_sensitive or [])
    facts = [
        *_data_facts(args, data),
        ("clustering", f"column {args.labels!r}: {len(np.unique(labels))} clusters"),
        ("sensitive attributes", _sensitive_fact(data.sensitive, numeric)),
    ]
    if data.X is not None:
        facts.append(("features", data.encoding))
    report = audit(
        labels, data.X, sensitive_features=data.sensitive, numeric_sensitive=numeric,
        name=f"column {args.labels!r}", n_init=N_INIT,
        profile=None if data.X is None else data.frame[data.names], notes=data.notes,
        check_data=False, title=f"Fairness audit of {args.labels!r} in {Path(args.data).name}",
        facts=facts, random_state=args.random_state,
    )
    _finish(args, report)
    return 0


def run_tradeoff(args):
    """``fairkm tradeoff``: FairKM at several fairness weights, one table row each."""
    check_roles(args)
    _check_outputs(args, "output", "plot")
    data = prepare_data(args)
    frame, sensitive, X = data.frame, data.sensitive, data.X
    numeric = list(args.numeric_sensitive or [])
    blind = BlindKMeans(args.n_clusters, n_init=N_INIT, random_state=args.random_state).fit(X)
    relative = args.fairness_weights is None
    weights = args.relative_weights if relative else args.fairness_weights
    n_fits = len(weights) + (args.max_cost is not None)
    if args.max_cost is not None and not relative:
        raise UsageError("--max-cost goes with --relative-weights, not --fairness-weights")
    if not args.quiet:
        print_facts([
            *_data_facts(args, data),
            ("features", data.encoding),
            ("sensitive attributes", _sensitive_fact(sensitive, numeric)),
        ])
    with progress_bar(args.quiet, desc="trade-off", total=n_fits, unit=" fits"):
        estimator = FairKM(
            args.n_clusters, attribute_weights=args.attribute_weights,
            algorithm=args.algorithm, batch_size=args.batch_size,
            numeric_sensitive=numeric, random_state=args.random_state, verbose=0,
        )
        table = fairness_tradeoff(
            estimator, X, sensitive, None if relative else weights,
            relative_weights=weights if relative else None, max_cost=args.max_cost,
            reference_labels=blind.labels_,
            sample_size=5000 if len(frame) > 5000 else None, random_state=args.random_state,
        )
    if not args.quiet:
        print_tradeoff(table)
    if args.output is not None:
        write_table(table, args.output)
        if not args.quiet:
            print(f"wrote the table to {args.output}")
    if args.plot is not None:
        fig = Figure(figsize=(7.0, 4.4))
        plot_tradeoff(table, axes=fig.subplots())
        fmt = Path(args.plot).suffix.lower().lstrip(".")
        write_atomic(args.plot, lambda path: fig.savefig(path, format=fmt, dpi=120))
        if not args.quiet:
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
    if args.report is not None:
        check_output_path(args.report, overwrite=args.overwrite)
    title, X, sensitive, numeric, profile = _demo_data(args)
    fair, seconds = _fit_fairkm(X, sensitive, args, numeric)
    facts = [
        ("data", f"{title}: {X.shape[0]:,} rows, {X.shape[1]} features"),
        ("sensitive attributes", _sensitive_fact(sensitive, numeric)),
        *_fit_facts(fair, seconds),
    ]
    report = audit(
        fair, X, sensitive_features=sensitive, numeric_sensitive=numeric, n_init=N_INIT,
        profile=profile, check_data=False, title=f"fairkm demo: {title}", facts=facts,
        random_state=args.random_state,
    )
    if not args.quiet:
        print(f"fairkm {__version__} demo: FairKM against S-blind K-Means")
    _finish(args, report)
    return 0


def run_reproduce(args):
    """``fairkm reproduce``: the paper's evaluation (:func:`fairkm.experiments.reproduce`)."""
    tables = experiments.reproduce(
        Path(args.output_dir), n_seeds=args.seeds, quick=args.quick, data_home=args.data_home,
        n_jobs=args.n_jobs, progress=not args.quiet, datasets=tuple(args.datasets),
    )
    if not args.quiet:
        print(f"wrote {len(tables)} table(s) to {args.output_dir}: {', '.join(tables)}")
    return 0
