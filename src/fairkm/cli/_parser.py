"""The ``fairkm`` argument parser: option types, subcommands and their help texts."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import numpy as np

from fairkm import __version__
from fairkm.utils._options import CLUSTER_WEIGHTINGS, DEVIATION_KINDS, REPORT_SUFFIXES

from ._errors import UsageError
from ._help import (
    COMMANDS,
    MAIN_DESCRIPTION,
    MAIN_EPILOG,
)
from ._io import table_format

__all__ = ["build_parser", "check_option_combinations"]


# --------------------------------------------------------------------------- option types


def _column_list(text):
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or any(not name for name in names):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a column is named twice in {text!r}")
    return names


def _number(text, what):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not (np.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected {what} >= 0, got {text!r}")
    return value


def _fairness_weight(text):
    if text in ("auto", "paper"):
        return text
    return _number(text, "'auto', 'paper' or a number")


def _fairness_weights(text):
    return [
        "paper" if item.strip() == "paper" else _number(item.strip(), "'paper' or a number")
        for item in text.split(",")
    ]


def _relative_weight(text):
    return _number(text, "a number")


def _relative_weights(text):
    return [_number(item.strip(), "numbers") for item in text.split(",")]


def _fraction(text):
    """Read a share such as 5% or 0.05 (above 0)."""
    value = _number(text[:-1], "a percentage") / 100 if text.endswith("%") else _number(
        text, "a fraction such as 0.05 or 5%"
    )
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a share above 0, got {text!r}")
    return value


def _refuse_above_one(text, value, of=""):
    """Refuse a share above 1 as Python does: it is a percentage without its sign."""
    if value > 1:
        reads = "is above 100%" if text.endswith("%") else f"reads as {value:.0%}"
        example = (f"{value / 100:g} or {text}% for {text}%" if not text.endswith("%")
                   else "0.05 or 5% for 5%")
        raise argparse.ArgumentTypeError(
            f"got {text!r}, which {reads}{of}: a share is at most 1 (write {example})"
        )
    return value


def _cost_budget(text):
    """Read --max-cost: a share of the S-blind clustering's K-Means cost, in (0, 1].

    As ``FairKM(max_cost=...)``: a budget above 1 is almost always a
    percentage typed without its sign (``--max-cost 5`` for 5%), which would
    allow six times the cost; both refuse it.
    """
    return _refuse_above_one(text, _fraction(text), " of the S-blind clustering's K-Means cost")


def _unfairness_share(text):
    """Read --max-unfairness: a share of the S-blind clustering's unfairness, in (0, 1)."""
    value = _fraction(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(
            f"expected a share below 100% of the S-blind clustering's unfairness (50% halves "
            f"it), got {text!r}"
        )
    return value


def _share(text, what):
    """Read a share such as 0.05 or 5% (at least 0)."""
    if text.endswith("%"):
        return _number(text[:-1], what) / 100
    return _number(text, what)


def _per_column(text, read, what, unit):
    """Read one value for every column, or NAME=VALUE pairs (``unit`` names the value)."""
    if "=" not in text:
        return read(text, f"{what}, or NAME={unit} pairs")
    values = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if not name or name in values:
            raise argparse.ArgumentTypeError(
                f"expected NAME={unit} pairs, each column once, separated by commas, got {item!r}"
            )
        values[name] = read(value.strip(), f"{what} for {name!r}")
    return values


def _deviation(text, what):
    """Read one --max-deviation share in [0, 1], refused above 1 as ``max_deviation`` is."""
    return _refuse_above_one(text, _share(text, what))


def _max_deviation(text):
    """Read --max-deviation: one share for every column, or NAME=SHARE pairs."""
    return _per_column(text, _deviation, "a share such as 0.05 or 5%", "SHARE")


def _balance(text, what):
    """Read a balance in [0, 1] (a ratio of counts: no percent sign)."""
    value = _number(text, what)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected {what} at most 1, got {text!r}")
    return value


def _min_balance(text):
    """Read --min-balance: one balance for every column, or NAME=BALANCE pairs."""
    return _per_column(text, _balance, "a balance such as 0.45 (smallest group over largest)",
                       "BALANCE")


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


def _whole_number(text, accept, expected):
    """Read a whole number that ``accept(value)`` takes; else say what was ``expected``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not accept(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def _positive_int(text):
    return _whole_number(text, lambda value: value >= 1, "a number >= 1")


# The seeds NumPy's RandomState takes, as scikit-learn's check_random_state does.
_MAX_SEED = 2**32 - 1


def _seed(text):
    return _whole_number(text, lambda value: 0 <= value <= _MAX_SEED,
                         f"a seed from 0 to {_MAX_SEED}")


def _n_jobs(text):
    return _whole_number(text, lambda value: value != 0, "a number of processes >= 1, or -1 "
                         "for all cores (-2 for all but one)")


def _cluster_count(text):
    value = _positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected at least 2 clusters, got {text!r}")
    return value


def _separator(text):
    if text in ("tab", "\\t"):
        return "\t"
    if len(text) != 1 or text in ('"', "\n", "\r"):
        raise argparse.ArgumentTypeError(
            f"expected one character (or 'tab') as the separator, got {text!r}"
        )
    return text


def _table_path(path):
    if table_format(path) is None:
        raise argparse.ArgumentTypeError(
            f"the extension must be .csv (or .csv.gz, .csv.bz2, .csv.xz) or .parquet/.pq: "
            f"{path!r}"
        )
    return path


def _report_path(text):
    if Path(text).suffix.lower() not in REPORT_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"the extension must be {', '.join(REPORT_SUFFIXES)} (an HTML page, or the text "
            f"summary): {text!r}"
        )
    return text


def _plot_path(text):
    if Path(text).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise argparse.ArgumentTypeError(f"the extension must be .png, .svg or .pdf: {text!r}")
    return text


_FIT_BOUND = (
    "FairKM's clustering is kept when it meets the bound; otherwise the fewest, cheapest rows "
    "are moved to meet it, and no column's mean or worst cluster ends further from the "
    "dataset's mix than FairKM left it, by the distances the report measures; where no "
    "clustering found does both, the one of least loss is kept and the summary names what got "
    "worse. 0 asks for the exact mix as far as whole rows allow. "
    "A bound no assignment can meet is an error that names the tightest one found. The "
    "summary and the report say whether FairKM (and S-blind K-Means) meets it."
)

_REPRODUCIBLE = ("adult", "kinematics", "kinematics-l2")


def _dataset_list(text):
    names = _column_list(text)
    unknown = [name for name in names if name not in _REPRODUCIBLE]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown dataset {unknown[0]!r}; use {','.join(_REPRODUCIBLE)}"
        )
    return names


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
    parser.add_argument("--weight-column", metavar="NAME",
                        help="a column of row weights (survey weights, counts: numbers >= "
                        "0): a row of weight w counts as w rows in the fit and in every "
                        "measure; the column is not a feature")
    parser.add_argument("--scale", choices=("standard", "none"), default="standard",
                        help="numeric features: 'standard' (default) scales each to zero mean "
                        "and unit variance, 'none' uses them as they are")
    parser.add_argument("--max-categories", type=_positive_int, default=100, metavar="N",
                        help="most distinct values allowed in a categorical column (default "
                        "100)")
    parser.add_argument("--sep", type=_separator, metavar="CHAR",
                        help="field separator of CSV files, read and written (default ','; "
                        "'tab' or '\\t' for tabs)")
    parser.add_argument("--keep-na-strings", action="store_true",
                        help="CSV: read NA, None, NULL, nan and empty fields of text columns as "
                        "values (categories), not as missing; an empty field in a column of "
                        "numbers is still missing")
    parser.add_argument("--dropna", action="store_true",
                        help="drop the rows with a missing value in a column used (sensitive, "
                        "feature or labels) and say how many went; without it, missing values "
                        "are an error naming every column that has some")


def _add_max_cost(parser, help):
    parser.add_argument("--max-cost", type=_cost_budget, metavar="SHARE", help=help)


def _add_clustering_options(parser, *, weight=True):
    parser.add_argument("--n-clusters", type=_cluster_count, default=5, metavar="K",
                        help="number of clusters (default 5)")
    if weight:
        parser.add_argument("--fairness-weight", type=_fairness_weight, default="auto",
                            metavar="auto|paper|FLOAT",
                            help="weight of the fairness term: 'auto' (the default) measures "
                            "it against the S-blind clustering, scaled by --relative-weight; "
                            "'paper' is the FairKM paper's (n/k)^2; a number is the paper's "
                            "absolute lambda (0: plain K-Means)")
        parser.add_argument("--relative-weight", type=_relative_weight, default=1.0,
                            metavar="W",
                            help="with 'auto': 1%% less unfairness is worth W%% more K-Means "
                            "cost at the S-blind clustering, less as the cost mounts "
                            "(default 1)")
        budget = parser.add_mutually_exclusive_group()
        _add_max_cost(budget, "a budget instead of --relative-weight: the fairest clustering "
                      "whose K-Means cost is at most SHARE above the S-blind clustering's (e.g. "
                      "5%% or 0.05; at most 100%%: a number above 1 is refused as a percentage "
                      "missing its sign)")
        budget.add_argument("--max-unfairness", type=_unfairness_share, metavar="SHARE",
                            help="a fairness target instead: the cheapest clustering whose "
                            "unfairness is at most SHARE of the S-blind clustering's (e.g. 50%%)")
    parser.add_argument("--attribute-weights", type=_attribute_weights, metavar="NAME=W,...",
                        help="relative weight of some sensitive attributes (others get 1), e.g. "
                        "race=2,sex=0.5")
    parser.add_argument("--cluster-weighting",
                        choices=("auto", *CLUSTER_WEIGHTINGS),
                        default="auto",
                        help="how much each cluster's deviations count: 'equal' (every cluster "
                        "alike), 'size' (by its share of the rows), 'paper' (by the square of "
                        "it, the FairKM paper's), or 'auto' (the default: 'equal' with "
                        "--fairness-weight auto, 'paper' with an absolute weight)")
    parser.add_argument("--algorithm", choices=("auto", "exact", "minibatch"), default="auto",
                        help="engine: 'exact' sweeps (the paper's), 'minibatch' (parallel "
                        "batches, then exact sweeps; faster on large data), or 'auto' (the "
                        "default: exact up to 1,000,000 rows with the scale-free weight, 100,000 "
                        "at an absolute one, minibatch above)")
    parser.add_argument("--batch-size", type=_positive_int, default=16384, metavar="N",
                        help="largest batch of the minibatch engine (default 16384)")
    parser.add_argument("--walk-every-row", action="store_true",
                        help="on 400,000 rows or more, at a relative weight up to 1, walk the "
                        "ladder of weights on every row rather than on a 100,000-row sample "
                        "first (slower; the clustering of fairkm before the coarse walk)")
    parser.add_argument("--random-state", type=_seed, default=0, metavar="N",
                        help="seed; the same seed gives the same clusters (default 0)")


def _add_bound_options(parser, *, what):
    parser.add_argument("--max-deviation", type=_max_deviation, metavar="SHARE|NAME=SHARE,...",
                        help="a guarantee: every cluster's share of every value of every "
                        "categorical sensitive column within SHARE of the dataset's (0.05 or "
                        f"5%%: five percentage points); NAME=SHARE,... bounds those columns only. "
                        f"{what}")
    parser.add_argument("--min-balance", type=_min_balance, metavar="BALANCE|NAME=BALANCE,...",
                        help="a guarantee as the peers state it: every cluster's balance (its "
                        "smallest group's count over its largest) of every categorical "
                        "sensitive column at least BALANCE, in [0, 1]; NAME=BALANCE,... for "
                        f"those columns only; may go with --max-deviation. {what}")
    parser.add_argument("--deviation-kind", choices=DEVIATION_KINDS,
                        metavar="additive|multiplicative",
                        help="how --max-deviation reads: 'additive' (the default) asks "
                        "|share - p| <= SHARE of each value of dataset share p, "
                        "'multiplicative' (Bera et al. 2019) (1 - SHARE) p <= share <= "
                        "p / (1 - SHARE), with SHARE below 1")


def _add_output_options(parser, *, report=True):
    if report:
        parser.add_argument("--report", metavar="REPORT.html", type=_report_path,
                            help="write the audit report: a self-contained HTML page (tables "
                            "and charts, viewable offline) for .html or .htm, the printed text "
                            "summary for .txt or .md")
    parser.add_argument("--overwrite", action="store_true", help="replace existing output files")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors and warnings (no summary, no progress "
                        "bar)")


def _subparser(commands, name):
    help, description, epilog = COMMANDS[name]
    parser = commands.add_parser(
        name, help=help, description=textwrap.fill(description, 79), epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # The command runs fairkm.cli._commands.run_<name> (run_fit...).
    parser.set_defaults(parser=parser, func=f"run_{name}")
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

    fit = _subparser(commands, "fit")
    _add_data_options(fit, features_default="all columns but the sensitive ones")
    _add_clustering_options(fit)
    _add_bound_options(fit, what=_FIT_BOUND)
    fit.add_argument("--output", type=_table_path, metavar="OUT",
                     help="write the input rows plus the cluster column (.csv or .parquet)")
    fit.add_argument("--cluster-column", default="cluster", metavar="NAME",
                     help="name of the cluster column in --output (default 'cluster')")
    _add_output_options(fit)

    evaluate = _subparser(commands, "evaluate")
    _add_data_options(evaluate, features_default="none; fairness measures only")
    evaluate.add_argument("--labels", required=True, metavar="COL",
                          help="the column holding each row's cluster (any values)")
    evaluate.add_argument("--random-state", type=_seed, default=0, metavar="N",
                          help="seed of the K-Means comparison and silhouette sample (default 0)")
    _add_bound_options(evaluate, what="The summary and the report say whether the "
                       "clustering (and S-blind K-Means) meets it, and where it comes closest "
                       "or misses most.")
    _add_output_options(evaluate)

    tradeoff = _subparser(commands, "tradeoff")
    _add_data_options(tradeoff, features_default="all columns but the sensitive ones")
    weights = tradeoff.add_mutually_exclusive_group()
    weights.add_argument("--relative-weights", type=_relative_weights, metavar="W1,W2,...",
                         default=[0.0, 0.25, 0.5, 1.0, 2.0, 4.0],
                         help="comma-separated relative weights (see fit's --relative-weight; "
                         "default 0,0.25,0.5,1,2,4), each fitted from the same S-blind "
                         "clustering")
    weights.add_argument("--fairness-weights", type=_fairness_weights, metavar="L1,L2,...",
                         help="the paper's absolute lambdas instead, fitted in this order, each "
                         "from the previous one's centres")
    _add_max_cost(tradeoff, "also fit the budget's choice (see fit's --max-cost, at most 100%%) "
                  "and mark it in the table and the plot")
    _add_clustering_options(tradeoff, weight=False)
    tradeoff.add_argument("--output", type=_table_path,
                          metavar="TABLE", help="write the table (.csv or .parquet)")
    tradeoff.add_argument("--plot", type=_plot_path, metavar="PLOT.png",
                          help="write the trade-off plot (.png, .svg or .pdf)")
    _add_output_options(tradeoff, report=False)

    demo = _subparser(commands, "demo")
    demo.add_argument("--dataset", choices=("synthetic", "adult", "kinematics"),
                      default="synthetic", help="built-in data (default synthetic)")
    demo.add_argument("--data-home", metavar="DIR",
                      help="where the real datasets are (or are downloaded to)")
    demo.add_argument("--n-samples", type=_positive_int, metavar="N",
                      help="synthetic points (default 5000)")
    _add_clustering_options(demo)
    _add_bound_options(demo, what=_FIT_BOUND)
    _add_output_options(demo)

    reproduce = _subparser(commands, "reproduce")
    reproduce.add_argument("--output-dir", default="fairkm-reproduction", metavar="DIR",
                           help="where the tables go (default ./fairkm-reproduction)")
    reproduce.add_argument("--seeds", type=_positive_int, default=100, metavar="N",
                           help="seeds per method and setting (default 100, the paper's)")
    reproduce.add_argument("--quick", action="store_true",
                           help="a fast, smaller run (to check the set-up)")
    reproduce.add_argument("--data-home", metavar="DIR",
                           help="where the datasets are (or are downloaded to)")
    reproduce.add_argument("--n-jobs", type=_n_jobs, metavar="N",
                           help="processes for the seeds (default: one per core; 1 runs in "
                           "this process; -2: all cores but one); the results do not depend "
                           "on it")
    reproduce.add_argument("--datasets", type=_dataset_list, default=["adult", "kinematics"],
                           metavar="NAMES", help="comma-separated, from adult,kinematics,"
                           "kinematics-l2 (Kinematics with unit-norm rows; default adult,"
                           "kinematics)")
    reproduce.add_argument("--overwrite", action="store_true",
                           help="replace the files of an earlier run in --output-dir (without "
                           "it, any is an error, before the run)")
    reproduce.add_argument("--no-resume", action="store_true",
                           help="discard the tasks an interrupted run left in --output-dir/parts "
                           "and start over (by default the run continues from them)")
    reproduce.add_argument("--quiet", action="store_true", help="no progress bars or summary")
    return parser


def check_option_combinations(args):
    """Usage errors of options that are each valid but do not go together, before any work.

    Raises
    ------
    UsageError
        When a budget (--max-cost, --max-unfairness) or --relative-weight is
        given with an absolute --fairness-weight, or --relative-weight with a
        budget (which chooses the relative weight itself).
    """
    if not hasattr(args, "fairness_weight"):
        return
    weight, relative = args.fairness_weight, args.relative_weight
    budgets = [option for option, value in (("--max-cost", args.max_cost),
                                            ("--max-unfairness", args.max_unfairness))
               if value is not None]
    relative_given = ["--relative-weight"] if relative != 1.0 else []
    if weight != "auto" and budgets + relative_given:
        shown = weight if isinstance(weight, str) else f"{weight:g}"
        raise UsageError(
            f"{(budgets + relative_given)[0]} goes with --fairness-weight auto (a weight "
            f"relative to the S-blind clustering); with --fairness-weight {shown} it would be "
            "ignored"
        )
    if budgets and relative_given:
        raise UsageError(f"{budgets[0]} chooses the relative weight itself; leave out "
                         "--relative-weight")
