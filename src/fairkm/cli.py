"""Command line: ``fairkm`` (or ``python -m fairkm``).

The CLI parses arguments, reads and writes files, calls the library and
prints; it holds no clustering or measuring code of its own. Exit status: 0 on
success, 1 on a data or file problem (one line on stderr naming the file,
column or value at fault), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import textwrap
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from tqdm import tqdm

from . import __version__, experiments
from ._fairkm import FairKM
from ._io import DataError, check_output_path, read_table, table_format, write_atomic, write_table
from ._report import audit_clusterings, comparison_sentence, format_number, render_html
from .baselines import BlindKMeans
from .datasets import fetch_adult, fetch_kinematics, make_sensitive_blobs
from .experiments import fairness_tradeoff, plot_tradeoff

BLIND = "K-Means (S-blind)"
_MAX_LISTED_COLUMNS = 20
# A non-numeric feature column in which at least this share of the values are
# numbers is a numeric column with typos, not categories.
_MOSTLY_NUMERIC = 0.9
_SWEEP_LINE = re.compile(r"FairKM (?:sweep|epoch) (\d+): objective (\S+)")

MAIN_DESCRIPTION = """\
Fair clustering with many sensitive attributes at once (FairKM, EDBT 2020).

Cluster the rows of a CSV or Parquet file so that every cluster mirrors the
dataset's mix of the sensitive attributes (gender, race, age...), audit an
existing clustering for fairness, or explore the quality/fairness trade-off.
Every command compares with fairness-blind ("S-blind") K-Means.
"""

MAIN_EPILOG = """\
examples:
  fairkm demo                                  # synthetic data, a few seconds
  fairkm fit people.csv --sensitive sex,race --n-clusters 5 \\
      --output clusters.csv --report audit.html
  fairkm evaluate segments.parquet --labels segment --sensitive sex,race \\
      --features age,income --report audit.html
  fairkm tradeoff people.csv --sensitive sex,race --fairness-weights 0,1e3,1e5,1e7 \\
      --plot tradeoff.png
  fairkm <command> --help                      # the options of one command
"""

DATA_HELP = """\
data files:
  DATA is CSV (.csv, or compressed .csv.gz/.csv.bz2/.csv.xz) or Parquet
  (.parquet, .pq; needs pyarrow: pip install "fairkm[parquet]"), by extension.
  Sensitive columns are categorical unless named in --numeric-sensitive; they
  must have no missing values (encode "unknown" as its own value).
  Features: numeric columns are standardised (--scale standard, the default:
  zero mean, unit variance, so that units do not matter) or used as they are
  (--scale none); other columns (text, booleans) are one-hot encoded, one 0/1
  column per value, with scikit-learn's ColumnTransformer, StandardScaler and
  OneHotEncoder. Features must have no missing values. A non-numeric feature
  with more than --max-categories values, or whose values are mostly numbers
  but not all, is an error that names the column (and the odd value).
"""

FIT_EPILOG = DATA_HELP + """
output:
  Prints the cluster sizes, the quality measures (CO, SH, and DevC, DevO
  against K-Means) and the fairness measures per attribute (AE, AW, ME, MW,
  balance, KL, MPV), for FairKM and for S-blind K-Means on the same features.
  --output writes every input row plus the cluster column (CSV or Parquet, by
  extension); files are written to a temporary file and then renamed, never
  over the input, and an existing file is replaced only with --overwrite.

examples:
  fairkm fit people.csv --sensitive sex,race --n-clusters 5 --output clusters.csv
  fairkm fit people.parquet --sensitive sex,race,age --numeric-sensitive age \\
      --exclude id,name --fairness-weight 1e6 --attribute-weights race=2 \\
      --output clusters.parquet --report audit.html
"""

EVALUATE_EPILOG = DATA_HELP + """
Audits a clustering made by any tool: the fairness measures per attribute and,
with --features, the quality measures and the same for S-blind K-Means with
as many clusters.

examples:
  fairkm evaluate clusters.csv --labels cluster --sensitive sex,race
  fairkm evaluate segments.parquet --labels segment --sensitive sex,race,age \\
      --numeric-sensitive age --features income,tenure,region --report audit.html
"""

TRADEOFF_EPILOG = DATA_HELP + """
Fits FairKM at each fairness weight in turn (each fit starting from the
previous one's centres) and prints one row per weight: the objective and its
two terms, quality (CO, SH, DevC, DevO against S-blind K-Means) and mean
fairness (AE, AW, ME, MW, balance, KL).

examples:
  fairkm tradeoff people.csv --sensitive sex,race --fairness-weights 0,1e3,1e5,1e7
  fairkm tradeoff people.csv --sensitive sex,race --fairness-weights 0,1e4,1e6,auto \\
      --output tradeoff.csv --plot tradeoff.png
"""

DEMO_EPILOG = """\
Clusters built-in data with S-blind K-Means and with FairKM and prints the
same summary as "fairkm fit". synthetic: blobs whose groups of three sensitive
attributes (sex, region: categorical; age: numeric) follow the blobs, so
fairness-blind clusters are unfair. adult: the UCI Adult undersample of the
FairKM paper (5 sensitive attributes). kinematics: the paper's 161 word
problems, as Doc2Vec vectors (needs gensim: pip install "fairkm[text]").
The real datasets are downloaded on first use into --data-home (default: the
FAIRKM_DATA environment variable, else the per-user cache).

examples:
  fairkm demo
  fairkm demo --n-samples 20000 --n-clusters 6 --random-state 1 --report demo.html
  fairkm demo --dataset adult --data-home ./data
"""

REPRODUCE_EPILOG = """\
Runs the FairKM paper's evaluation (fairkm.experiments.reproduce) on the
real datasets and writes its tables to --output-dir.

examples:
  fairkm reproduce --quick --output-dir results
  fairkm reproduce --seeds 100 --n-jobs 4 --data-home ./data
"""


class _UsageError(Exception):
    """Options that do not fit together (exit status 2)."""


# --------------------------------------------------------------------------- option types


def _column_list(text):
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or any(not name for name in names):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a column is named twice in {text!r}")
    return names


def _fairness_weight(text):
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number, got {text!r}") from None
    if not (np.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number >= 0, got {text!r}")
    return value


def _fairness_weights(text):
    return [_fairness_weight(item.strip()) for item in text.split(",")]


def _attribute_weights(text):
    weights = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            weight = float(value)
        except ValueError:
            weight = np.nan
        if not (sep and name and np.isfinite(weight) and weight >= 0):
            raise argparse.ArgumentTypeError(
                f"expected name=weight pairs (weights >= 0) separated by commas, got {item!r}"
            )
        weights[name] = weight
    return weights


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {text!r}")
    return value


def _cluster_count(text):
    value = _positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected at least 2 clusters, got {text!r}")
    return value


# --------------------------------------------------------------------------- reading the data


def _table_path(path):
    if table_format(path) is None:
        raise argparse.ArgumentTypeError(
            f"the extension must be .csv (or .csv.gz, .csv.bz2, .csv.xz) or .parquet/.pq: "
            f"{path!r}"
        )
    return path


def _check_columns(frame, names, option, path):
    missing = [name for name in names if name not in frame.columns]
    if missing:
        columns = [str(c) for c in frame.columns]
        listed = ", ".join(columns[:_MAX_LISTED_COLUMNS])
        if len(columns) > _MAX_LISTED_COLUMNS:
            listed += f", ... ({len(columns)} in all)"
        raise DataError(
            f"column {missing[0]!r} (from {option}) is not in {str(path)!r}; its columns are: "
            f"{listed}."
        )


def _first_row(mask):
    """1-based data row (header excluded) of the first True entry."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 1


def _check_complete(column, kind):
    missing = column.isna()
    if missing.any():
        how = "as a value of their own such as 'unknown'" if kind == "sensitive" else "in"
        raise DataError(
            f"{kind} column {column.name!r} has {int(missing.sum()):,} missing value(s), the "
            f"first on data row {_first_row(missing)}; fill them {how} or drop those rows."
        )


def _sensitive_frame(frame, args):
    """Check and return the sensitive columns (numeric ones as float64)."""
    numeric = list(args.numeric_sensitive or [])
    columns = {}
    for name in args.sensitive:
        column = frame[name]
        _check_complete(column, "sensitive")
        if name in numeric:
            values = pd.to_numeric(column, errors="coerce")
            bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=np.float64, na_value=np.nan))
            if bad.any():
                row = _first_row(bad)
                raise DataError(
                    f"numeric sensitive column {name!r} holds {column.iloc[row - 1]!r} on data "
                    f"row {row}, which is not a finite number."
                )
            columns[name] = values.astype(np.float64)
        else:
            n_values = column.nunique()
            if n_values > args.max_categories:
                raise DataError(
                    f"sensitive column {name!r} has {n_values:,} distinct values (more than "
                    f"--max-categories={args.max_categories}); if it is a number such as an "
                    "age, name it in --numeric-sensitive."
                )
            columns[name] = column
    return pd.DataFrame(columns, index=frame.index)


def _is_numeric(column):
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _check_feature(column, max_categories):
    _check_complete(column, "feature")
    name = column.name
    if _is_numeric(column):
        finite = np.isfinite(column.to_numpy(dtype=np.float64))
        if not finite.all():
            row = _first_row(~finite)
            raise DataError(
                f"feature column {name!r} holds {column.iloc[row - 1]!r} on data row {row}; "
                "features must be finite numbers."
            )
        return
    as_numbers = pd.to_numeric(column.astype(str), errors="coerce")
    if _MOSTLY_NUMERIC <= as_numbers.notna().mean() < 1:
        row = _first_row(as_numbers.isna())
        raise DataError(
            f"feature column {name!r} is numbers except {column.iloc[row - 1]!r} on data row "
            f"{row}; fix that value, or leave the column out with --exclude."
        )
    n_values = column.nunique()
    if n_values > max_categories:
        raise DataError(
            f"feature column {name!r} is not numeric and has {n_values:,} distinct values "
            f"(more than --max-categories={max_categories}), too many to one-hot encode; leave "
            "it out with --exclude (identifiers, free text) or raise --max-categories."
        )


def _encode_features(frame, names, scale, max_categories):
    """Encode the feature columns with scikit-learn's transformers.

    Returns the float64 matrix and a one-line description of the encoding.
    """
    for name in names:
        _check_feature(frame[name], max_categories)
    numeric = [name for name in names if _is_numeric(frame[name])]
    categorical = [name for name in names if name not in numeric]
    transformer = ColumnTransformer(
        [
            ("one-hot", OneHotEncoder(sparse_output=False, dtype=np.float64), categorical),
            ("numeric", StandardScaler() if scale == "standard" else "passthrough", numeric),
        ],
        sparse_threshold=0.0,
    )
    # Text, booleans and categoricals are one-hot encoded by their printed value,
    # so a column mixing types (possible in Parquet) encodes like its CSV export.
    data = frame[names].astype({name: str for name in categorical})
    X = np.asarray(transformer.fit_transform(data), dtype=np.float64)
    how = "standardised" if scale == "standard" else "as they are"
    description = (
        f"{len(names)} column(s) -> {X.shape[1]} after encoding ({len(categorical)} one-hot "
        f"encoded, {len(numeric)} numeric {how})"
    )
    return X, description


def _feature_names(frame, args, taken):
    if args.features is not None:
        return args.features
    excluded = set(args.exclude or []) | set(taken)
    return [name for name in frame.columns if name not in excluded]


def _check_roles(args, *, labels=None):
    """Usage errors: a column may play only one role."""
    sensitive = set(args.sensitive)
    for name in args.numeric_sensitive or []:
        if name not in sensitive:
            raise _UsageError(f"--numeric-sensitive names {name!r}, which is not in --sensitive")
    for name in args.features or []:
        if name in sensitive:
            raise _UsageError(f"column {name!r} is both in --features and in --sensitive")
        if name == labels:
            raise _UsageError(f"column {name!r} is both in --features and --labels")
    if labels is not None and labels in sensitive:
        raise _UsageError(f"column {labels!r} is both in --labels and in --sensitive")
    weights = getattr(args, "attribute_weights", None) or {}
    for name in weights:
        if name not in sensitive:
            raise _UsageError(f"--attribute-weights names {name!r}, which is not in --sensitive")


def _prepare(args, *, labels=None, need_features=True):
    """Read the data; return (frame, sensitive, X, feature names, description).

    Without ``need_features`` and ``--features``, X, the names and the
    description are None.
    """
    frame = read_table(args.data)
    roles = [*args.sensitive, *([labels] if labels else [])]
    _check_columns(frame, args.sensitive, "--sensitive", args.data)
    if labels:
        _check_columns(frame, [labels], "--labels", args.data)
    if args.features is not None:
        _check_columns(frame, args.features, "--features", args.data)
    if getattr(args, "exclude", None):
        _check_columns(frame, args.exclude, "--exclude", args.data)
    sensitive = _sensitive_frame(frame, args)
    if not need_features and args.features is None:
        return frame, sensitive, None, None, None
    names = _feature_names(frame, args, roles)
    if not names:
        raise DataError(
            f"{str(args.data)!r} has no feature columns left once the sensitive columns are "
            "set aside."
        )
    X, description = _encode_features(frame, names, args.scale, args.max_categories)
    return frame, sensitive, X, names, description


# --------------------------------------------------------------------------- progress


class _SweepProgress(io.TextIOBase):
    """Turn FairKM's verbose per-sweep lines into progress-bar updates.

    FairKM prints one line per sweep when ``verbose`` is positive; reading
    those lines gives a live bar without touching the estimator. Other lines
    pass through to the real standard output.
    """

    def __init__(self, bar, passthrough, per_run):
        self._bar = bar
        self._passthrough = passthrough
        self._per_run = per_run
        self._pending = ""
        self._runs = 0

    def writable(self):
        return True

    def write(self, text):
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._line(line)
        return len(text)

    def finish(self):
        """Pass on any last text that did not end with a newline."""
        if self._pending:
            self._passthrough.write(self._pending)
            self._pending = ""

    def _line(self, line):
        match = _SWEEP_LINE.match(line)
        if match is None:
            self._passthrough.write(line + "\n")
            return
        sweep = int(match[1])
        if self._per_run:
            # Each fit starts again from sweep 1: the previous fit is then done.
            if sweep == 1:
                if self._runs:
                    self._bar.update(1)
                self._runs += 1
            self._bar.set_postfix_str(f"sweep {sweep}, objective {match[2]}", refresh=False)
        else:
            self._bar.update(1)
            self._bar.set_postfix_str(f"objective {match[2]}", refresh=False)


@contextlib.contextmanager
def _progress(quiet, *, desc, total=None, unit=" sweeps"):
    """Yield the ``verbose`` value for FairKM, showing a bar while the block runs.

    The bar appears only when the work lasts more than a second, and never
    with ``--quiet``.
    """
    if quiet:
        yield 0
        return
    # disable=None: no bar when standard error is not a terminal (logs, CI).
    with tqdm(desc=desc, total=total, unit=unit, delay=1.0, leave=False, file=sys.stderr,
              disable=None) as bar:
        if bar.disable:
            yield 0
            return
        sink = _SweepProgress(bar, sys.stdout, per_run=total is not None)
        with contextlib.redirect_stdout(sink):
            yield 1
        sink.finish()
        if total is not None:
            bar.update(total - bar.n)


# --------------------------------------------------------------------------- printing


def _print_audit(audit):
    width = max(len(name) for name in audit.labels)
    print("Cluster sizes")
    for name, table in audit.clusters.items():
        sizes = "  ".join(f"{cluster}: {size:,}" for cluster, size in table["size"].items())
        print(textwrap.fill(sizes, 100, initial_indent=f"  {name:<{width}}  ",
                            subsequent_indent=" " * (width + 4)))
    with pd.option_context("display.float_format", format_number, "display.width", 120,
                           "display.max_columns", None, "display.max_rows", None):
        if audit.quality is not None:
            print("\nQuality (CO: K-Means objective, lower is tighter; SH: silhouette, higher "
                  "is better separated;\n  DevC, DevO: distance to the K-Means clustering)")
            print(audit.quality.to_string(na_rep="-"))
        print("\nFairness per attribute (AE, AW: mean and ME, MW: max distance between a "
              "cluster's mix and\n  the dataset's, lower is fairer; balance: higher is fairer; "
              "KL, MPV: lower is fairer)")
        print(audit.fairness.to_string(na_rep="-"))
    sentence = comparison_sentence(audit)
    if sentence:
        print("\n" + textwrap.fill(sentence, 100))


def _write_report(args, audit, *, title, facts):
    """Write the HTML report when --report asks for one."""
    if args.report:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        facts = [*facts, ("made by", f"fairkm {__version__}, {stamp}")]
        page = render_html(audit, title=title, facts=facts)
        write_atomic(args.report, lambda path: path.write_text(page, encoding="utf-8"))
        if not args.quiet:
            print(f"wrote the report to {args.report}")


def _sensitive_fact(sensitive, numeric):
    return ", ".join(
        f"{name} ({'numeric' if name in numeric else f'{sensitive[name].nunique()} values'})"
        for name in sensitive.columns
    )


# --------------------------------------------------------------------------- commands


def _fit_both(X, sensitive, args, numeric):
    """Fit FairKM (with a progress bar) and S-blind K-Means; return both and FairKM's time."""
    start = time.perf_counter()
    with _progress(args.quiet, desc="FairKM") as verbose:
        fair = FairKM(
            args.n_clusters, fairness_weight=args.fairness_weight,
            attribute_weights=args.attribute_weights, algorithm=args.algorithm,
            batch_size=args.batch_size, numeric_sensitive=numeric,
            random_state=args.random_state, verbose=verbose,
        ).fit(X, sensitive_features=sensitive)
    seconds = time.perf_counter() - start
    blind = BlindKMeans(args.n_clusters, random_state=args.random_state).fit(X)
    return fair, blind, seconds


def _fit_facts(fair, seconds, weight_arg):
    how = " (auto: (n/k)^2)" if weight_arg == "auto" else ""
    return [
        ("FairKM", f"k={fair.n_clusters}, fairness_weight={fair.fairness_weight_:.4g}{how}, "
         f"{fair.n_iter_} sweeps in {seconds:.1f} s, objective {fair.objective_:.6g}"),
    ]


def _check_outputs(args, first, second):
    """Check the output files of options ``first`` and ``second``, and that they differ."""
    outputs = [path for path in (getattr(args, first), getattr(args, second)) if path is not None]
    for path in outputs:
        check_output_path(path, inputs=[args.data], overwrite=args.overwrite)
    if len({Path(p).resolve() for p in outputs}) < len(outputs):
        raise _UsageError(f"--{first} and --{second} name the same file")


def _run_fit(args):
    _check_roles(args)
    _check_outputs(args, "output", "report")
    frame, sensitive, X, names, encoding = _prepare(args)
    if args.output is not None and args.cluster_column in frame.columns:
        raise DataError(
            f"{str(args.data)!r} already has a column {args.cluster_column!r}; name the new "
            "column with --cluster-column."
        )
    numeric = list(args.numeric_sensitive or [])
    fair, blind, seconds = _fit_both(X, sensitive, args, numeric)
    facts = [
        ("data", f"{args.data}: {len(frame):,} rows"),
        ("features", encoding),
        ("sensitive attributes", _sensitive_fact(sensitive, numeric)),
        *_fit_facts(fair, seconds, args.fairness_weight),
    ]
    if not args.quiet:
        for label, value in facts:
            print(f"{label}: {value}")
        print()
    audit = audit_clusterings(
        {"FairKM": fair.labels_, BLIND: blind.labels_}, sensitive=sensitive,
        numeric_sensitive=numeric, X=X, profile=frame[names],
        random_state=args.random_state,
    )
    if not args.quiet:
        _print_audit(audit)
    if args.output is not None:
        result = frame.assign(**{args.cluster_column: fair.labels_})
        write_table(result, args.output)
        if not args.quiet:
            print(f"wrote {len(result):,} rows with column {args.cluster_column!r} to "
                  f"{args.output}")
    title = f"Fairness audit of FairKM on {Path(args.data).name}"
    _write_report(args, audit, title=title, facts=facts)
    return 0


def _run_evaluate(args):
    _check_roles(args, labels=args.labels)
    if args.report is not None:
        check_output_path(args.report, inputs=[args.data], overwrite=args.overwrite)
    frame, sensitive, X, names, encoding = _prepare(
        args, labels=args.labels, need_features=False
    )
    _check_complete(frame[args.labels], "labels")
    labels = frame[args.labels].to_numpy()
    clusterings = {args.labels: labels}
    numeric = list(args.numeric_sensitive or [])
    n_clusters = len(np.unique(labels))
    facts = [
        ("data", f"{args.data}: {len(frame):,} rows"),
        ("clustering", f"column {args.labels!r}: {n_clusters} clusters"),
        ("sensitive attributes", _sensitive_fact(sensitive, numeric)),
    ]
    if X is not None:
        facts.append(("features", encoding))
        if 2 <= n_clusters <= len(frame):
            blind = BlindKMeans(n_clusters, random_state=args.random_state).fit(X)
            clusterings[BLIND] = blind.labels_
            facts.append((BLIND, f"k={n_clusters}, for comparison"))
    if not args.quiet:
        for label, value in facts:
            print(f"{label}: {value}")
        print()
    audit = audit_clusterings(
        clusterings, sensitive=sensitive, numeric_sensitive=numeric, X=X,
        profile=None if X is None else frame[names], random_state=args.random_state,
    )
    if not args.quiet:
        _print_audit(audit)
    title = f"Fairness audit of {args.labels!r} in {Path(args.data).name}"
    _write_report(args, audit, title=title, facts=facts)
    return 0


def _run_tradeoff(args):
    _check_roles(args)
    _check_outputs(args, "output", "plot")
    frame, sensitive, X, _, encoding = _prepare(args)
    numeric = list(args.numeric_sensitive or [])
    blind = BlindKMeans(args.n_clusters, random_state=args.random_state).fit(X)
    weights = args.fairness_weights
    if not args.quiet:
        print(f"data: {args.data}: {len(frame):,} rows\nfeatures: {encoding}\n"
              f"sensitive attributes: {_sensitive_fact(sensitive, numeric)}\n")
    with _progress(args.quiet, desc="trade-off", total=len(weights), unit=" weights") as verbose:
        estimator = FairKM(
            args.n_clusters, attribute_weights=args.attribute_weights,
            algorithm=args.algorithm, batch_size=args.batch_size,
            numeric_sensitive=numeric, random_state=args.random_state, verbose=verbose,
        )
        table = fairness_tradeoff(
            estimator, X, sensitive, weights, reference_labels=blind.labels_,
            sample_size=5000 if len(frame) > 5000 else None, random_state=args.random_state,
        )
    if not args.quiet:
        with pd.option_context("display.float_format", format_number, "display.width", 150,
                               "display.max_columns", None):
            print(table.to_string(index=False))
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
        raise _UsageError("--n-samples applies to --dataset synthetic only")
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


def _run_demo(args):
    if args.report is not None:
        check_output_path(args.report, overwrite=args.overwrite)
    title, X, sensitive, numeric, profile = _demo_data(args)
    fair, blind, seconds = _fit_both(X, sensitive, args, numeric)
    facts = [
        ("data", f"{title}: {X.shape[0]:,} rows, {X.shape[1]} features"),
        ("sensitive attributes", _sensitive_fact(sensitive, numeric)),
        *_fit_facts(fair, seconds, args.fairness_weight),
    ]
    if not args.quiet:
        print(f"fairkm {__version__} demo: S-blind K-Means against FairKM")
        for label, value in facts:
            print(f"{label}: {value}")
        print()
    audit = audit_clusterings(
        {"FairKM": fair.labels_, BLIND: blind.labels_}, sensitive=sensitive,
        numeric_sensitive=numeric, X=X, profile=profile, random_state=args.random_state,
    )
    if not args.quiet:
        _print_audit(audit)
    _write_report(args, audit, title=f"fairkm demo: {title}", facts=facts)
    return 0


def _run_reproduce(args):
    tables = experiments.reproduce(
        Path(args.output_dir), n_seeds=args.seeds, quick=args.quick, data_home=args.data_home,
        n_jobs=args.n_jobs, progress=not args.quiet, datasets=tuple(args.datasets),
    )
    if not args.quiet:
        print(f"wrote {len(tables)} table(s) to {args.output_dir}: {', '.join(tables)}")
    return 0


# --------------------------------------------------------------------------- parser


def _add_data_options(parser, *, features_default):
    parser.add_argument("data", metavar="DATA", help="input table (.csv or .parquet)")
    parser.add_argument("--sensitive", required=True, type=_column_list, metavar="COLS",
                        help="comma-separated sensitive columns (categorical unless named in "
                        "--numeric-sensitive)")
    parser.add_argument("--numeric-sensitive", type=_column_list, metavar="COLS",
                        help="those of the sensitive columns that are numbers (such as an age); "
                        "a cluster is then fair when its mean matches the dataset's")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--features", type=_column_list, metavar="COLS",
                       help=f"comma-separated feature columns (default: {features_default})")
    if features_default.startswith("all"):
        group.add_argument("--exclude", type=_column_list, metavar="COLS",
                           help="columns that are neither features nor sensitive (identifiers, "
                           "free text, the target)")
    parser.add_argument("--scale", choices=("standard", "none"), default="standard",
                        help="numeric features: 'standard' (default) scales each to zero mean "
                        "and unit variance, 'none' uses them as they are")
    parser.add_argument("--max-categories", type=_positive_int, default=100, metavar="N",
                        help="most distinct values allowed in a categorical column (default "
                        "100)")


def _add_clustering_options(parser, *, weight=True):
    parser.add_argument("--n-clusters", type=_cluster_count, default=5, metavar="K",
                        help="number of clusters (default 5)")
    if weight:
        parser.add_argument("--fairness-weight", type=_fairness_weight, default="auto",
                            metavar="auto|FLOAT",
                            help="weight of the fairness term: 'auto' (the paper's (n/k)^2, the "
                            "default) or a number >= 0; 0 is plain K-Means")
    parser.add_argument("--attribute-weights", type=_attribute_weights, metavar="NAME=W,...",
                        help="relative weight of some sensitive attributes (others get 1), e.g. "
                        "race=2,sex=0.5")
    parser.add_argument("--algorithm", choices=("exact", "minibatch"), default="exact",
                        help="engine: 'exact' sweeps (the paper's, default) or 'minibatch' "
                        "(parallel batches, then exact sweeps; faster on many cores)")
    parser.add_argument("--batch-size", type=_positive_int, default=16384, metavar="N",
                        help="largest batch of the minibatch engine (default 16384)")
    parser.add_argument("--random-state", type=int, default=0, metavar="N",
                        help="seed; the same seed gives the same clusters (default 0)")


def _add_output_options(parser, *, report=True):
    if report:
        parser.add_argument("--report", metavar="REPORT.html",
                            help="write a self-contained HTML audit report (tables and charts, "
                            "viewable offline)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing output files")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors (no summary, no progress bar)")


def _subparser(commands, name, *, help, description, epilog):
    parser = commands.add_parser(
        name, help=help, description=textwrap.fill(description, 79), epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(parser=parser)
    return parser


def build_parser():
    """Return the argument parser of the ``fairkm`` command.

    Returns
    -------
    argparse.ArgumentParser
        The parser, with one subcommand each for ``fit``, ``evaluate``,
        ``tradeoff``, ``demo`` and ``reproduce``.
    """
    parser = argparse.ArgumentParser(
        prog="fairkm", description=MAIN_DESCRIPTION, epilog=MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fairkm {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = _subparser(
        commands, "fit", help="cluster a table fairly and compare with K-Means",
        description="Cluster the rows of DATA with FairKM so that every cluster mirrors the "
        "dataset's mix of the sensitive columns; compare with S-blind K-Means.",
        epilog=FIT_EPILOG,
    )
    _add_data_options(fit, features_default="all columns but the sensitive ones")
    _add_clustering_options(fit)
    fit.add_argument("--output", type=_table_path, metavar="OUT",
                     help="write the input rows plus the cluster column (.csv or .parquet)")
    fit.add_argument("--cluster-column", default="cluster", metavar="NAME",
                     help="name of the cluster column in --output (default 'cluster')")
    _add_output_options(fit)
    fit.set_defaults(func=_run_fit)

    evaluate = _subparser(
        commands, "evaluate", help="audit an existing clustering for fairness",
        description="Measure how fair the clustering in column --labels of DATA is, attribute "
        "by attribute, and (with --features) its quality against S-blind K-Means.",
        epilog=EVALUATE_EPILOG,
    )
    _add_data_options(evaluate, features_default="none; fairness measures only")
    evaluate.add_argument("--labels", required=True, metavar="COL",
                          help="the column holding each row's cluster (any values)")
    evaluate.add_argument("--random-state", type=int, default=0, metavar="N",
                          help="seed of the K-Means comparison and silhouette sample (default 0)")
    _add_output_options(evaluate)
    evaluate.set_defaults(func=_run_evaluate)

    tradeoff = _subparser(
        commands, "tradeoff", help="quality and fairness as the fairness weight grows",
        description="Fit FairKM on DATA at several fairness weights and tabulate quality "
        "against fairness.", epilog=TRADEOFF_EPILOG,
    )
    _add_data_options(tradeoff, features_default="all columns but the sensitive ones")
    tradeoff.add_argument("--fairness-weights", required=True, type=_fairness_weights,
                          metavar="W1,W2,...",
                          help="comma-separated weights ('auto' or numbers >= 0), fitted in "
                          "this order")
    _add_clustering_options(tradeoff, weight=False)
    tradeoff.add_argument("--output", type=_table_path,
                          metavar="TABLE", help="write the table (.csv or .parquet)")
    tradeoff.add_argument("--plot", type=_plot_path, metavar="PLOT.png",
                          help="write the trade-off plot (.png, .svg or .pdf)")
    _add_output_options(tradeoff, report=False)
    tradeoff.set_defaults(func=_run_tradeoff)

    demo = _subparser(
        commands, "demo", help="compare K-Means and FairKM on built-in data",
        description="Show what FairKM does, on built-in data, in seconds.", epilog=DEMO_EPILOG,
    )
    demo.add_argument("--dataset", choices=("synthetic", "adult", "kinematics"),
                      default="synthetic", help="built-in data (default synthetic)")
    demo.add_argument("--data-home", metavar="DIR",
                      help="where the real datasets are (or are downloaded to)")
    demo.add_argument("--n-samples", type=_positive_int, metavar="N",
                      help="synthetic points (default 5000)")
    _add_clustering_options(demo)
    _add_output_options(demo)
    demo.set_defaults(func=_run_demo)

    reproduce = _subparser(
        commands, "reproduce", help="reproduce the FairKM paper's evaluation",
        description="Reproduce the FairKM paper's tables on Adult and Kinematics.",
        epilog=REPRODUCE_EPILOG,
    )
    reproduce.add_argument("--output-dir", default="fairkm-reproduction", metavar="DIR",
                           help="where the tables go (default ./fairkm-reproduction)")
    reproduce.add_argument("--seeds", type=_positive_int, default=100, metavar="N",
                           help="seeds per method and setting (default 100, the paper's)")
    reproduce.add_argument("--quick", action="store_true",
                           help="a fast, smaller run (to check the set-up)")
    reproduce.add_argument("--data-home", metavar="DIR",
                           help="where the datasets are (or are downloaded to)")
    reproduce.add_argument("--n-jobs", type=int, metavar="N",
                           help="processes for the seeds (default 1; -1: all cores); the "
                           "results do not depend on it")
    reproduce.add_argument("--datasets", type=_dataset_list, default=["adult", "kinematics"],
                           metavar="NAMES", help="comma-separated, from adult,kinematics,"
                           "kinematics-l2 (Kinematics with unit-norm rows; default adult,"
                           "kinematics)")
    reproduce.add_argument("--quiet", action="store_true", help="no progress bars or summary")
    reproduce.set_defaults(func=_run_reproduce)
    return parser


def _plot_path(text):
    if Path(text).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise argparse.ArgumentTypeError(f"the extension must be .png, .svg or .pdf: {text!r}")
    return text


_REPRODUCIBLE = ("adult", "kinematics", "kinematics-l2")


def _dataset_list(text):
    names = _column_list(text)
    unknown = [name for name in names if name not in _REPRODUCIBLE]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown dataset {unknown[0]!r}; use {','.join(_REPRODUCIBLE)}"
        )
    return names


def main(argv=None):
    """Run the ``fairkm`` command.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (without the program name); None reads ``sys.argv``.

    Returns
    -------
    int
        The exit status: 0 on success, 1 on a data or file error (reported on
        one line of standard error, without a traceback), 2 on a usage error,
        130 when interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version and usage errors
        return exc.code
    with warnings.catch_warnings(record=True) as caught:
        # Warnings (such as FairKM reaching max_iter) become one-line notes.
        warnings.simplefilter("always")
        try:
            return _dispatch(args)
        finally:
            for warning in caught:
                message = " ".join(str(warning.message).split())
                print(f"fairkm: warning: {message}", file=sys.stderr)


def _dispatch(args):
    try:
        return args.func(args)
    except _UsageError as exc:
        args.parser.print_usage(sys.stderr)
        print(f"{args.parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except (DataError, ValueError, OSError, ImportError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"fairkm: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fairkm: interrupted", file=sys.stderr)
        return 130
