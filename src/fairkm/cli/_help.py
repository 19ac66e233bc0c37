"""The help texts of the ``fairkm`` command: its description and each subcommand's."""

__all__ = ["COMMANDS", "MAIN_DESCRIPTION", "MAIN_EPILOG"]


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
  fairkm fit people.csv --sensitive sex,race --exclude id --n-clusters 5 \\
      --output clusters.csv --report audit.html
  fairkm evaluate segments.parquet --labels segment --sensitive sex,race \\
      --features age,income --report audit.html
  fairkm tradeoff people.csv --sensitive sex,race --exclude id --max-cost 5% \\
      --plot tradeoff.png
  fairkm <command> --help                      # the options of one command
"""

DATA_HELP = """\
data files:
  DATA is CSV (.csv, or compressed .csv.gz/.csv.bz2/.csv.xz) or Parquet
  (.parquet, .pq; needs pyarrow: pip install "fairkm[parquet]"), by extension.
  Sensitive columns are categorical unless named in --numeric-sensitive: a
  column of numbers with more than 10 values left categorical (an age: each
  age its own group) is warned about, and so is a numeric one with two values
  (a coded category). Features: numeric columns are standardised (--scale
  standard, the default: zero mean, unit variance, so that units do not
  matter) or used as they are (--scale none); other columns (text, booleans)
  are one-hot encoded, one 0/1 column per value, with scikit-learn's
  ColumnTransformer, StandardScaler and OneHotEncoder; the summary lists the
  feature columns used. A feature named like an identifier (id, customer_id,
  key...) or unique per row, one named like a prediction target (target,
  label, class, species...) and one holding years are warned about: leave it
  out with --exclude; so is a feature that copies a sensitive column (or one
  of its values), and one named like a row weight or count (weight, wt,
  perwt, pwgtp, fnlwgt, n, count, freq...): fit and evaluate take it with
  --weight-column, a row of weight w then counting as w rows in the fit and
  in every measure. A non-numeric feature with more than --max-categories
  values, or whose values are mostly numbers but not all, is an error that
  names the column (and the odd value), and so is a number too large for
  float64 arithmetic (1e200). Missing values in the
  columns used are one error naming every such column, unless --dropna drops
  those rows (and says how many). In CSV files NA, None, NULL, nan and empty
  fields are missing, unless --keep-na-strings keeps them as text (an empty
  field among numbers stays missing); --sep sets another separator (a file
  that reads as one column named with ';' or tabs gets that hint). Two
  columns of one name are an error, and so is a column of lists used;
  Parquet decimals are numbers.
"""

FIT_EPILOG = DATA_HELP + """
output:
  Prints the cluster sizes, the quality measures (CO, SH, and DevC, DevO
  against K-Means) and the fairness measures per attribute (AE, AW, ME, MW,
  balance, KL, MPV), for FairKM and for S-blind K-Means on the same features
  (the best of 10 k-means++ starts); then the price of fairness against it,
  every attribute and measure on which FairKM is less fair, and each
  attribute's least fair cluster (its size, its mix against the data's).
  --output writes every input row (with --dropna, every row kept) plus the
  cluster column (CSV or Parquet, by extension). Output files are checked
  before the fit (never the input, a symbolic link, a device or a pipe; an
  existing file only with --overwrite, which keeps its permissions), written
  to temporary files and put in place together at the end, and only then is
  the summary printed: a closed pipe (| head) or a full disk on standard
  output never costs them. A name another program took while the fit ran is
  not replaced: the run fails (status 1) and keeps its files under the names
  it prints. With --overwrite the old files are all moved aside before the
  new ones come, so a killed run never leaves a new file beside a stale one.

examples:
  fairkm fit people.csv --sensitive sex,race --exclude id --n-clusters 5 \\
      --output clusters.csv --dropna
  fairkm fit people.parquet --sensitive sex,race,age --numeric-sensitive age \\
      --exclude id,name --max-cost 5% --attribute-weights race=2 \\
      --output clusters.parquet --report audit.html
  fairkm fit people.csv --sensitive sex,race --exclude id --fairness-weight 1e6
                                               # the paper's lambda
  fairkm fit people.csv --sensitive sex,race --exclude id --max-deviation 0.05 \\
      --report audit.html                      # every cluster within 5 points
  fairkm fit survey.csv --sensitive sex,race --exclude id --weight-column perwt
                                               # each row stands for perwt people

fairness weight:
  By default (--fairness-weight auto) FairKM first finds the S-blind K-Means
  clustering, then trades K-Means cost for fairness from there: at first 1%
  less unfairness (each cluster's distance from the dataset's mix, every
  cluster counted alike) is worth --relative-weight % more cost, and less as
  the cost mounts (W/(1+c) % once c more is spent). Whatever the units of the
  data or its size, the same setting means the same trade. A budget
  states the price instead: --max-cost 5% (or 0.05; at most 100%, so that 5
  typed for 5% is refused, not read as 500%) gives the fairest clustering at
  most 5% costlier than the S-blind one; --max-unfairness 50% the cheapest that
  halves the unfairness.
"""

EVALUATE_EPILOG = DATA_HELP + """
Audits a clustering made by any tool: the fairness measures per attribute and
each attribute's least fair cluster; with --features, the quality measures
and the same for S-blind K-Means with as many clusters (best of 10 starts),
with every attribute and measure on which the clustering is less fair. A
--labels column with more distinct values than --max-categories or than half
the rows (an identifier) is an error, before any work.

examples:
  fairkm evaluate clusters.csv --labels cluster --sensitive sex,race
  fairkm evaluate segments.parquet --labels segment --sensitive sex,race,age \\
      --numeric-sensitive age --features income,tenure,region --report audit.html
  fairkm evaluate clusters.csv --labels cluster --sensitive sex,race --max-deviation 5%
"""

TRADEOFF_EPILOG = DATA_HELP + """
Fits FairKM at each relative weight (every fit measured against the same
S-blind clustering; 1 is fit's default) or at each absolute weight, and prints
one row per weight: the weight, the K-Means cost and the unfairness relative
to the S-blind clustering, the objective and its two terms, quality (CO, SH,
DevC, DevO against S-blind K-Means), mean fairness (AE, AW, CW, ME, MW,
balance, KL, MPV) and each attribute's CW and MW (each cluster's distance
from the dataset's mix: the average over the clusters and the worst one).
--max-cost adds the budget's choice.

examples:
  fairkm tradeoff people.csv --sensitive sex,race --exclude id
  fairkm tradeoff people.csv --sensitive sex,race --exclude id --relative-weights 0,0.5,1,2 \\
      --max-cost 5% --output tradeoff.csv --plot tradeoff.png
  fairkm tradeoff people.csv --sensitive sex,race --exclude id \\
      --fairness-weights 0,1e3,1e5,1e7
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
real datasets and writes its tables to --output-dir, one process per core
(--n-jobs). Every dataset asked for, and what it needs (gensim for
Kinematics), is checked before the first fit. Files of an earlier run there
are an error, before the run, unless --overwrite. Each finished (dataset, k,
seed) task is kept in --output-dir/parts until the tables are written: the
same command after an interruption or a failure continues from them.

examples:
  fairkm reproduce --quick --output-dir results
  fairkm reproduce --seeds 100 --data-home ./data
"""


#: Each subcommand's line in ``fairkm --help``, its description and its epilog.
COMMANDS = {
    "fit": ("cluster a table fairly and compare with K-Means",
            "Cluster the rows of DATA with FairKM so that every cluster mirrors the dataset's "
            "mix of the sensitive columns; compare with S-blind K-Means.", FIT_EPILOG),
    "evaluate": ("audit an existing clustering for fairness",
                 "Measure how fair the clustering in column --labels of DATA is, attribute by "
                 "attribute, and (with --features) its quality against S-blind K-Means.",
                 EVALUATE_EPILOG),
    "tradeoff": ("quality and fairness as the fairness weight grows",
                 "Fit FairKM on DATA at several fairness weights and tabulate quality against "
                 "fairness.", TRADEOFF_EPILOG),
    "demo": ("compare K-Means and FairKM on built-in data",
             "Show what FairKM does, on built-in data, in seconds.", DEMO_EPILOG),
    "reproduce": ("reproduce the FairKM paper's evaluation",
                  "Reproduce the FairKM paper's tables on Adult and Kinematics.",
                  REPRODUCE_EPILOG),
}
