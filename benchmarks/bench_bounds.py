"""Guaranteed bounds (fairkm.bounds): both meanings of a bound, their price and their time.

``fca``: the newest peer's own setting (FCA, ICML 2025, its released code's
Adult): the 32,561 rows of ``adult.data``; age, fnlwgt, education-num,
capital-gain and hours-per-week standardised, then each row scaled to unit
length; sex; k = 10. ``KMeans(n_init=10)`` first, then FairKM (the default,
and the soft route ``max_cost=0.1``), then at each bound of ``--deltas``
(0 is "as fair as whole rows allow") both meanings of a bound:
``FairKM(max_deviation=d)`` (FairKM's clustering kept within the bound) and
``BoundedKMeans(max_deviation=d)`` (the cheapest clustering found under it).
Every cost is printed per row and as a ratio to ``KMeans(n_init=10)``'s, every
time as a ratio to its fit, all in this process. ``--fca-results`` adds the
rows of FCA's released code run apart (a CSV with the columns ``epsilon``,
``process_wall_s``, ``last_cost_per_row`` and ``last_balance``), their costs
as ratios to this process's K-Means.

``heldout``: data the defaults were not tuned on: the 16,281 rows of
``adult.test``; age, education-num and hours-per-week standardised; sex, race,
marital-status and relationship; k = 3, 5, 8. For each bound of ``--deltas``:
whether ``FairKM(max_deviation=d)`` met it (a plain count), how many rows it
moved from ``FairKM()``'s clustering (same seed), and how much further from
the dataset's mix each attribute's mean and worst cluster ended than
``FairKM()``'s (total variation, plain NumPy; negative is fairer), its K-Means
cost against ``FairKM()``'s, and the same for ``BoundedKMeans``.

``authors``: Bera et al.'s own Adult setting (NeurIPS 2019, their released
code's config): the 32,561 rows of ``adult.data``; age, fnlwgt,
education-num, capital-gain and hours-per-week, standardised; race and sex;
multiplicative bands ``[(1 - delta) p, p / (1 - delta)]``; centres from
``KMeans(n_init=10)``. For k = 5, 10, 15 and delta = 0.2, 0.1: one bounded
assignment (``fair_assignment``) against a lower bound computed apart from
fairkm (:func:`independent_lp`: the plain programme, one variable per (row,
cluster), every band written on the rows, scipy's HiGHS), and whether the
bands are met exactly (measured on the labels in plain NumPy). Then two small
cases: 200-row subsamples, each checked against scipy's ``milp`` on the same
programme written apart (:func:`independent_optimum`: fairkm must reach its
optimum, or agree that no assignment exists), and ``max_deviation=0`` on 600
rows (the floor whole rows meet: the time of ``fair_assignment`` and of
``BoundedKMeans``).

``scale``: one bounded assignment (additive 0.05 on three attributes of 2, 5
and 3 values) of ``make_sensitive_blobs`` rows (10 features) to
``KMeans(n_init=1)``'s centres, n = 1e3 .. 1e6. Each case runs in a child
process (stopped after ``--cap`` seconds) that first fits that
``KMeans(n_init=1)``: the ratio printed is the bounded assignment's time over
that fit's, in the same process.

``adult``: the paper's pipeline (``fetch_adult(preprocess="paper")``, 15,682
rows, 44 features, all five sensitive attributes), k = 5 and 15, seeds 0..2:
K-Means (best of 10), FairKM (default weight), and at each additive bound of
``--deltas`` both meanings of a bound. Means over the seeds.

``optimum``: how far whole rows end from the integer optimum. Samples of
``--sizes`` rows of ``adult.data`` in two settings (FCA's: 5 columns
standardised then unit length, sex; held-out-style: age, education-num and
hours-per-week standardised, sex, race, marital-status and relationship),
k of ``--ks`` (10), each bound of ``--deltas``, centres from
``KMeans(n_init=1)``: ``fair_assignment``'s cost against the relaxation
(:func:`independent_lp`) and against scipy's ``milp`` on the whole programme
(:func:`independent_mip`, stopped after ``--cap`` seconds: its best solution
and its proven lower bound, so the distance from the optimum is bracketed
when it is not proven).

Run: ``python benchmarks/bench_bounds.py fca|heldout|authors|scale|adult|optimum
[--data-home ../shared/data]`` (the numbers of ``docs/bounds.md``).
"""

import argparse
import multiprocessing
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from sklearn.cluster import KMeans
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.bounds import fair_assignment
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.exceptions import BoundNotMetWarning, InfeasibleBoundError
from fairkm.metrics import check_bounds, clustering_objective, fairness_report

# ----------------------------------------------------------------------------- references


def bands(S, delta, kind):
    """Per attribute: value codes of every row and each value's band (lower, upper)."""
    out = []
    for column in S.columns:
        _, codes = np.unique(S[column].to_numpy(), return_inverse=True)
        p = np.bincount(codes) / codes.shape[0]
        if kind == "multiplicative":
            out.append((codes, (1 - delta) * p, p / (1 - delta)))
        else:
            out.append((codes, p - delta, p + delta))
    return out


def largest_excess(labels, S, delta, kind):
    """Largest share of a value outside its band over every cluster (0: every band met)."""
    worst = 0.0
    for codes, lower, upper in bands(S, delta, kind):
        for c in np.unique(labels):
            share = np.bincount(codes[labels == c], minlength=lower.shape[0]) / np.sum(
                labels == c)
            worst = max(worst, float(np.max(share - upper)), float(np.max(lower - share)))
    return worst


def _programme(X, centers, S, delta, kind):
    """The bounded assignment written apart from fairkm: costs and rows over x[i, c].

    For every cluster and value, ``sum_i [v_i = v] x_ic - upper_v sum_i x_ic <= 0``
    and ``lower_v sum_i x_ic - sum_i [v_i = v] x_ic <= 0``; every cluster holds
    at least one row; every row sums to 1.
    """
    n, k = X.shape[0], centers.shape[0]
    d = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    rows, cols, vals, r = [], [], [], 0
    for codes, lower, upper in bands(S, delta, kind):
        for v in range(lower.shape[0]):
            has = (codes == v).astype(np.float64)
            for c in range(k):
                index = np.arange(n) * k + c
                if upper[v] < 1:
                    rows.append(np.full(n, r))
                    cols.append(index)
                    vals.append(has - upper[v])
                    r += 1
                if lower[v] > 0:
                    rows.append(np.full(n, r))
                    cols.append(index)
                    vals.append(lower[v] - has)
                    r += 1
    for c in range(k):
        rows.append(np.full(n, r))
        cols.append(np.arange(n) * k + c)
        vals.append(-np.ones(n))
        r += 1
    A_ub = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(r, n * k))
    b_ub = np.r_[np.zeros(r - k), -np.ones(k)]
    A_eq = sparse.csr_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), np.arange(n * k))),
                             shape=(n, n * k))
    return d.reshape(-1), A_ub, b_ub, A_eq


def independent_lp(X, centers, S, delta, kind):
    """The relaxation's optimum (x in [0, 1]): a lower bound on any assignment meeting the bands."""
    cost, A_ub, b_ub, A_eq = _programme(X, centers, S, delta, kind)
    scale = float(cost.mean())
    res = linprog(cost / scale, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(A_eq.shape[0]),
                  bounds=(0, 1), method="highs")
    if res.status != 0:
        raise RuntimeError(res.message)
    return float(res.fun) * scale


def independent_optimum(X, centers, S, delta, kind, time_limit=120.0):
    """The cheapest integral assignment meeting the bands (x in {0, 1}), by scipy's milp.

    Returns the cost, None when the programme proves no assignment exists, or
    NaN when it stops at ``time_limit`` undecided. Only for small problems.
    """
    cost, A_ub, b_ub, A_eq = _programme(X, centers, S, delta, kind)
    scale = float(cost.mean())
    one = np.ones(A_eq.shape[0])
    res = milp(cost / scale, integrality=np.ones(cost.shape[0]), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(A_ub, -np.inf, b_ub),
                            LinearConstraint(A_eq, one, one)],
               options={"time_limit": time_limit})
    if res.status == 2:
        return None
    if res.status != 0:
        return np.nan
    return float(res.fun) * scale


def independent_mip(X, centers, S, delta, kind, time_limit):
    """scipy's ``milp`` on the programme of :func:`_programme`: (best cost, proven lower bound).

    NaN for the cost when no solution was found within ``time_limit``.
    """
    cost, A_ub, b_ub, A_eq = _programme(X, centers, S, delta, kind)
    scale = float(cost.mean())
    one = np.ones(A_eq.shape[0])
    res = milp(cost / scale, integrality=np.ones(cost.shape[0]), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(A_ub, -np.inf, b_ub),
                            LinearConstraint(A_eq, one, one)],
               options={"time_limit": time_limit})
    best = np.nan if res.x is None else float(res.fun) * scale
    return best, float(getattr(res, "mip_dual_bound", np.nan)) * scale


def optimum(data_home, sizes, ks, deltas, cap):
    bunch = fetch_adult(data_home=data_home, subset="train", preprocess=None,
                        download_if_missing=False)
    print("| setting | rows | k | bound | fairkm over LP | fairkm time (s) | milp best over LP "
          "| milp proven bound over LP | fairkm over milp best | milp time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        df = bunch.data.sample(n, random_state=0)
        wide = StandardScaler().fit_transform(df[["age", "fnlwgt", "education-num",
                                                  "capital-gain", "hours-per-week"]])
        settings = {
            "FCA": (wide / np.linalg.norm(wide, axis=1, keepdims=True), ["sex"]),
            "held-out": (StandardScaler().fit_transform(
                df[["age", "education-num", "hours-per-week"]]),
                ["sex", "race", "marital-status", "relationship"]),
        }
        for name, (X, columns) in settings.items():
            S = df[columns].astype(str).reset_index(drop=True)
            for k in ks:
                centers = KMeans(k, n_init=1, random_state=0).fit(X).cluster_centers_
                for delta in deltas:
                    result, seconds = _timed(lambda d=delta, X=X, S=S, c=centers:
                                             fair_assignment(X, c, S, max_deviation=d))
                    lp = independent_lp(X, centers, S, delta, "additive")
                    start = time.perf_counter()
                    best, proven = independent_mip(X, centers, S, delta, "additive", cap)
                    mip_seconds = time.perf_counter() - start
                    own = result.assignment_cost
                    print(f"| {name} | {n:,} | {k} | {delta:g} | {own / lp - 1:.2%} | "
                          f"{seconds:.1f} | {best / lp - 1:.2%} | {proven / lp - 1:.2%} | "
                          f"{own / best - 1:+.2%} | {mip_seconds:.0f} |", flush=True)


# ----------------------------------------------------------------------------- FCA's setting


def fca_adult(data_home):
    """FCA's Adult: 5 numeric columns standardised, each row scaled to unit length; sex."""
    bunch = fetch_adult(data_home=data_home, subset="train", preprocess=None,
                        download_if_missing=False)
    X = bunch.data[["age", "fnlwgt", "education-num", "capital-gain",
                    "hours-per-week"]].to_numpy(np.float64)
    X = StandardScaler().fit_transform(X)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return np.ascontiguousarray(X), bunch.data["sex"].astype(str).to_numpy()


def balance(labels, group):
    """Chierichetti et al.'s balance of a binary attribute: the least ratio in any cluster."""
    values = np.unique(group)
    out = 1.0
    for c in np.unique(labels):
        a, b = (np.sum(group[labels == c] == v) for v in values)
        out = min(out, min(a / b, b / a) if a and b else 0.0)
    return out


def cost_per_row(X, labels):
    """K-Means cost of ``labels`` (squared distances to their clusters' means) per row."""
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
               for c in np.unique(labels)) / X.shape[0]


def largest_tv(labels, group):
    """The worst cluster's total-variation distance from the dataset's mix of ``group``."""
    values = np.unique(group)
    p = np.array([np.mean(group == v) for v in values])
    return max(0.5 * np.abs(np.array([np.mean(group[labels == c] == v) for v in values])
                            - p).sum() for c in np.unique(labels))


def _timed(make):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundNotMetWarning)
        model = make()
    return model, time.perf_counter() - start


def fca(data_home, k, deltas, fca_results):
    X, sex = fca_adult(data_home)
    kmeans, kmeans_seconds = _timed(lambda: KMeans(k, n_init=10, random_state=0).fit(X))
    base = cost_per_row(X, kmeans.labels_)
    print(f"FCA's Adult setting: {X.shape[0]:,} rows, 5 features standardised then scaled to "
          f"unit length, sex, k={k}; dataset balance {balance(np.zeros(len(X)), sex):.4f}. "
          f"KMeans(n_init=10): {base:.5f} per row in {kmeans_seconds:.1f} s.\n")
    print("| method | cost per row | cost / K-Means | balance | worst cluster's distance (TV) "
          "| bound met | rows moved from FairKM | time (s) | time / K-Means |")
    print("|---|---|---|---|---|---|---|---|---|")

    def row(name, labels, seconds, met="", moved=""):
        c = cost_per_row(X, labels)
        print(f"| {name} | {c:.5f} | {c / base:.4f} | {balance(labels, sex):.4f} | "
              f"{largest_tv(labels, sex):.4f} | {met} | {moved} | {seconds:.1f} | "
              f"{seconds / kmeans_seconds:.1f} |", flush=True)

    row("KMeans(n_init=10)", kmeans.labels_, kmeans_seconds)
    fair, seconds = _timed(lambda: FairKM(k, random_state=0).fit(X, sensitive_features=sex))
    row("FairKM()", fair.labels_, seconds)
    soft, seconds = _timed(lambda: FairKM(k, max_cost=0.1, random_state=0).fit(
        X, sensitive_features=sex))
    row("FairKM(max_cost=0.1)", soft.labels_, seconds)
    for delta in deltas:
        model, seconds = _timed(lambda d=delta: FairKM(k, max_deviation=d, random_state=0).fit(
            X, sensitive_features=sex))
        row(f"FairKM(max_deviation={delta:g})", model.labels_, seconds,
            f"{'yes' if model.bounds_check_.satisfied else 'no'} ({model.max_deviation_:.3g})",
            f"{model.n_moved_by_bound_:,}")
        model, seconds = _timed(lambda d=delta: BoundedKMeans(
            k, max_deviation=d, random_state=2025, progress=False).fit(X, sensitive_features=sex))
        row(f"BoundedKMeans(max_deviation={delta:g})", model.labels_, seconds,
            f"{'yes' if model.bounds_check_.satisfied else 'no'} "
            f"({model.bounds_check_.table['bound'].max():.3g})")
    if fca_results:
        print("\nFCA's released code on the same rows and features, run apart (its last "
              "iteration; costs as ratios to the K-Means above):\n")
        print("| epsilon | cost per row | cost / K-Means | balance | time (s) | "
              "time / K-Means |")
        print("|---|---|---|---|---|---|")
        for r in pd.read_csv(fca_results).sort_values("last_balance").itertuples():
            print(f"| {r.epsilon:g} | {r.last_cost_per_row:.5f} | "
                  f"{r.last_cost_per_row / base:.4f} | {r.last_balance:.4f} | "
                  f"{r.process_wall_s:.0f} | {r.process_wall_s / kmeans_seconds:.0f} |")


# ----------------------------------------------------------------------------- held out


def heldout_adult(data_home):
    """adult.test: age, education-num, hours-per-week standardised; four attributes."""
    bunch = fetch_adult(data_home=data_home, subset="test", preprocess=None,
                        download_if_missing=False)
    X = StandardScaler().fit_transform(
        bunch.data[["age", "education-num", "hours-per-week"]].to_numpy(np.float64))
    S = bunch.data[["sex", "race", "marital-status", "relationship"]].astype(str)
    return np.ascontiguousarray(X), S.reset_index(drop=True)


def tv_per_cluster(labels, column):
    """Each cluster's total-variation distance from the dataset's mix of ``column``."""
    values = np.unique(column)
    p = np.array([np.mean(column == v) for v in values])
    return np.array([0.5 * np.abs(np.array([np.mean(column[labels == c] == v) for v in values])
                                  - p).sum() for c in np.unique(labels)])


def heldout(data_home, ks, deltas):
    X, S = heldout_adult(data_home)
    columns = {name: S[name].to_numpy() for name in S}
    print(f"adult.test: {X.shape[0]:,} rows, 3 features, attributes {', '.join(S)}. Worse: how "
          "much further from the dataset's mix the attribute's mean over the clusters / "
          "worst cluster ended than FairKM()'s (total variation; the largest over the four "
          "attributes; negative is fairer).\n")
    print("| k | bound | method | bound met | rows moved | mean worse | worst worse | "
          "cost / FairKM() | time / K-Means |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        kmeans, kmeans_seconds = _timed(lambda k=k: KMeans(k, n_init=10, random_state=0).fit(X))
        fair, _ = _timed(lambda k=k: FairKM(k, random_state=0).fit(X, sensitive_features=S))
        own = {a: tv_per_cluster(fair.labels_, c) for a, c in columns.items()}
        own_cost = cost_per_row(X, fair.labels_)
        for delta in deltas:
            for name, make in (
                    ("FairKM", lambda d=delta, k=k: FairKM(k, max_deviation=d, random_state=0)),
                    ("BoundedKMeans", lambda d=delta, k=k: BoundedKMeans(
                        k, max_deviation=d, random_state=0, progress=False))):
                model, seconds = _timed(lambda m=make: m().fit(X, sensitive_features=S))
                met = check_bounds(model.labels_, S, max_deviation=delta).satisfied
                worse = {a: tv_per_cluster(model.labels_, c) for a, c in columns.items()}
                mean = max(worse[a].mean() - own[a].mean() for a in columns)
                worst = max(worse[a].max() - own[a].max() for a in columns)
                moved = int(np.count_nonzero(model.labels_ != fair.labels_))
                print(f"| {k} | {delta:g} | {name} | {'yes' if met else 'NO'} | {moved:,} | "
                      f"{mean:+.4f} | {worst:+.4f} | "
                      f"{cost_per_row(X, model.labels_) / own_cost:.4f} | "
                      f"{seconds / kmeans_seconds:.1f} |", flush=True)


# ----------------------------------------------------------------------------- authors


def authors_adult(data_home, n=None, seed=0):
    """The authors' Adult setting: five numeric columns standardised; race and sex."""
    bunch = fetch_adult(data_home=data_home, subset="train", preprocess=None,
                        download_if_missing=False)
    X = bunch.features[["age", "fnlwgt", "education-num", "capital-gain",
                        "hours-per-week"]].to_numpy(np.float64)
    S = bunch.sensitive[["race", "sex"]].reset_index(drop=True)
    if n is not None:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, S = X[rows], S.iloc[rows].reset_index(drop=True)
    return np.ascontiguousarray(StandardScaler().fit_transform(X)), S


def authors(data_home, ks, deltas):
    X, S = authors_adult(data_home)
    print("Authors' Adult setting: 32,561 rows, multiplicative bands on race and sex, centres "
          "from KMeans(n_init=10, random_state=0).\n")
    print("| k | delta | cost | independent LP | cost / LP | fairkm's lower bound / LP "
          "| bands met | largest excess | smallest cluster | time (s) | LP time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        centers = KMeans(k, n_init=10, random_state=0).fit(X).cluster_centers_
        for delta in deltas:
            start = time.perf_counter()
            result = fair_assignment(X, centers, S, max_deviation=delta,
                                     deviation_kind="multiplicative")
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            lp = independent_lp(X, centers, S, delta, "multiplicative")
            lp_seconds = time.perf_counter() - start
            excess = largest_excess(result.labels, S, delta, "multiplicative")
            print(f"| {k} | {delta} | {result.assignment_cost:,.0f} | {lp:,.0f} | "
                  f"{result.assignment_cost / lp:.4f} | {result.lower_bound / lp:.6f} | "
                  f"{'yes' if excess <= 1e-9 else 'no'} | {max(excess, 0.0):.2g} | "
                  f"{np.bincount(result.labels).min()} | {seconds:.1f} | {lp_seconds:.1f} |",
                  flush=True)
    print("\n200-row subsamples (seeds 0-3), k = 2, 3, 5, delta = 0.2, 0.1: every setting "
          "is met exactly or proved impossible.\n")
    print("| seed | k | delta | outcome | scipy's milp, written apart | cost / milp optimum "
          "| cost / LP | time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in range(4):
        X_s, S_s = authors_adult(data_home, 200, seed)
        for k in (2, 3, 5):
            centers = KMeans(k, n_init=10, random_state=0).fit(X_s).cluster_centers_
            for delta in deltas:
                optimum = independent_optimum(X_s, centers, S_s, delta, "multiplicative")
                milp_says = ("infeasible" if optimum is None else
                             "undecided" if np.isnan(optimum) else f"{optimum:,.1f}")
                start = time.perf_counter()
                try:
                    result = fair_assignment(X_s, centers, S_s, max_deviation=delta,
                                             deviation_kind="multiplicative")
                except InfeasibleBoundError as err:
                    what = ("no assignment (a value has fewer rows than clusters)"
                            if err.tightest is None else
                            f"no assignment (tightest met: {err.tightest:.3g})")
                    print(f"| {seed} | {k} | {delta} | {what} | {milp_says} | | | "
                          f"{time.perf_counter() - start:.2f} |")
                    continue
                seconds = time.perf_counter() - start
                excess = largest_excess(result.labels, S_s, delta, "multiplicative")
                lp = independent_lp(X_s, centers, S_s, delta, "multiplicative")
                ratio = ("" if optimum is None or np.isnan(optimum)
                         else f"{result.assignment_cost / optimum:.4f}")
                print(f"| {seed} | {k} | {delta} | "
                      f"{'met exactly' if excess <= 1e-9 else f'excess {excess:.2g}'} | "
                      f"{milp_says} | {ratio} | {result.assignment_cost / lp:.3f} | "
                      f"{seconds:.2f} |")
    X_b, S_b, _ = make_sensitive_blobs(600, n_values=(2, 3), random_state=0)
    print("\nmax_deviation=0 (as fair as whole rows allow) on 600 make_sensitive_blobs rows "
          "(values 2 and 3):\n")
    for k in (2, 4, 8):
        start = time.perf_counter()
        result = fair_assignment(X_b, X_b[:k], S_b, max_deviation=0.0)
        print(f"- k={k}: floor {result.check.table['bound'].max():.3g}, "
              f"{'met' if result.satisfied else 'not met'} in "
              f"{time.perf_counter() - start:.2f} s")
        model, seconds = _timed(lambda k=k: BoundedKMeans(
            k, max_deviation=0.0, random_state=0, progress=False).fit(X_b, sensitive_features=S_b))
        print(f"  BoundedKMeans({k}, max_deviation=0): floor "
              f"{model.bounds_check_.table['bound'].max():.3g}, "
              f"{'met' if model.bounds_check_.satisfied else 'not met'} in {seconds:.2f} s")


# ----------------------------------------------------------------------------- scale


def _case(n, k):
    """One scale case (in a child process): K-Means' fit, then one bounded assignment."""
    X, S, _ = make_sensitive_blobs(n, n_features=10, centers=8, n_values=(2, 5, 3),
                                   cluster_std=2.0, random_state=0)
    start = time.perf_counter()
    centers = KMeans(k, n_init=1, random_state=0).fit(X).cluster_centers_
    kmeans_seconds = time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundNotMetWarning)
        result = fair_assignment(X, centers, S, max_deviation=0.05)
    return {"kmeans": kmeans_seconds, "seconds": time.perf_counter() - start,
            "gap": result.gap, "met": result.satisfied, "violation": result.violation,
            "exact": result.exact, "certified": result.certified}


def _capped(cap, *args):
    """Run ``_case`` in a child process; None if it runs past ``cap`` seconds."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(_case, args)
        try:
            return pending.get(timeout=cap)
        except multiprocessing.TimeoutError:
            pool.terminate()
            return None


def scale(sizes, ks, cap):
    print("| n | k | relaxation | K-Means fit (s) | bounded (s) | bounded / K-Means "
          "| cost above the lower bound | bound met |")
    print("|---|---|---|---|---|---|---|---|")
    for k in ks:
        for n in sizes:
            out = _capped(cap, n, k)
            if out is None:
                print(f"| {n:,} | {k} | | | > {cap} (stopped) | | | |", flush=True)
                continue
            how = ("every row at once" if out["exact"] else
                   "by prices, optimal on every row" if out["certified"] else "by prices")
            print(f"| {n:,} | {k} | {how} | {out['kmeans']:.2f} | {out['seconds']:.1f} | "
                  f"{out['seconds'] / out['kmeans']:.1f} | {100 * out['gap']:.4f}% | "
                  f"{'yes' if out['met'] else 'no'} |", flush=True)


# ----------------------------------------------------------------------------- adult

MEASURES = ["CO", "AE", "ME", "MW", "MPV"]


def _scores(X, S, labels):
    report = fairness_report(labels, sensitive_features=S)
    row = {"CO": clustering_objective(X, labels)}
    row.update({m: float(report.loc["mean", m]) for m in MEASURES[1:]})
    row.update({f"ME {a}": float(report.loc[a, "ME"]) for a in S.columns})
    return row


def adult(data_home, deltas, seeds):
    bunch = fetch_adult(data_home=data_home, preprocess="paper", download_if_missing=False)
    X = np.ascontiguousarray(bunch.features, dtype=np.float64)
    S = bunch.sensitive
    rows = []
    for k in (5, 15):
        for seed in seeds:
            start = time.perf_counter()
            kmeans = KMeans(k, n_init=10, random_state=seed).fit(X)
            rows.append({"k": k, "seed": seed, "method": "K-Means (best of 10)",
                         "seconds": time.perf_counter() - start,
                         **_scores(X, S, kmeans.labels_)})
            start = time.perf_counter()
            fair = FairKM(k, random_state=seed).fit(X, sensitive_features=S)
            fair_seconds = time.perf_counter() - start
            rows.append({"k": k, "seed": seed, "method": "FairKM (default weight)",
                         "seconds": fair_seconds, **_scores(X, S, fair.labels_)})
            for delta in deltas:
                for name, make in (
                        ("FairKM(max_deviation)", lambda d=delta, k=k, s=seed: FairKM(
                            k, max_deviation=d, random_state=s)),
                        ("BoundedKMeans", lambda d=delta, k=k, s=seed: BoundedKMeans(
                            k, max_deviation=d, random_state=s, progress=False))):
                    model, seconds = _timed(lambda m=make: m().fit(X, sensitive_features=S))
                    rows.append({"k": k, "seed": seed, "method": f"{name} {delta}",
                                 "seconds": seconds,
                                 "met": float(model.bounds_check_.satisfied),
                                 "violation": model.violation_,
                                 **_scores(X, S, model.labels_)})
            print(f"# k={k} seed={seed} done", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    mean = table.drop(columns="seed").groupby(["k", "method"], sort=False).mean()
    base = mean.xs("K-Means (best of 10)", level="method")["CO"]
    mean["CO / K-Means"] = mean["CO"] / base.reindex(mean.index.get_level_values("k")).values
    met = mean["met"].map(lambda v: "" if np.isnan(v) else f"{v * len(seeds):.0f}/{len(seeds)}")
    print(f"Means over seeds {', '.join(map(str, seeds))}; ME, MW, MPV, AE: mean over the "
          "attributes.\n")
    print("| k | method | CO (squared) | CO / K-Means | AE | ME | MW | MPV | bound met "
          "| time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (k, method), r in mean.iterrows():
        print(f"| {k} | {method} | {r['CO']:.0f} | {r['CO / K-Means']:.3f} | {r['AE']:.4f} | "
              f"{r['ME']:.4f} | {r['MW']:.4f} | {r['MPV']:.4f} | {met[(k, method)]} | "
              f"{r['seconds']:.1f} |")
    print("\nME per attribute (means over the seeds):\n")
    names = list(S.columns)
    print("| k | method | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for (k, method), r in mean.iterrows():
        print(f"| {k} | {method} | " + " | ".join(f"{r[f'ME {a}']:.4f}" for a in names) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["fca", "heldout", "authors", "scale", "adult",
                                         "optimum"])
    parser.add_argument("--cap", type=float, default=300.0,
                        help="seconds one scale case may run before it is stopped (default 300)")
    parser.add_argument("--sizes", default="1000,3000,10000")
    parser.add_argument("--ks", default=None,
                        help="cluster counts (default: 10 for fca, 3,5,8 for heldout, 5,10,15 "
                             "for authors, 5,10 for scale)")
    parser.add_argument("--deltas", default=None,
                        help="bounds (default: 0.1,0.05,0.02,0.01,0 for fca; 0.2,0.1,0.05,"
                             "0.02,0.01 for heldout; 0.2,0.1 for authors; 0.2,0.1,0.05 for "
                             "adult)")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--fca-results", default=None,
                        help="CSV of FCA's released code run apart (see the part fca)")
    parser.add_argument("--data-home", default="../shared/data")
    args = parser.parse_args(argv)

    def numbers(text, default, kind):
        return [kind(v) for v in (text or default).split(",")]

    if args.part == "fca":
        fca(args.data_home, numbers(args.ks, "10", int)[0],
            numbers(args.deltas, "0.1,0.05,0.02,0.01,0", float), args.fca_results)
    elif args.part == "heldout":
        heldout(args.data_home, numbers(args.ks, "3,5,8", int),
                numbers(args.deltas, "0.2,0.1,0.05,0.02,0.01", float))
    elif args.part == "authors":
        authors(args.data_home, numbers(args.ks, "5,10,15", int),
                numbers(args.deltas, "0.2,0.1", float))
    elif args.part == "optimum":
        optimum(args.data_home, numbers(args.sizes, "", int), numbers(args.ks, "10", int),
                numbers(args.deltas, "0.1,0.05", float), args.cap)
    elif args.part == "scale":
        scale(numbers(args.sizes, "", int), numbers(args.ks, "5,10", int), args.cap)
    else:
        adult(args.data_home, numbers(args.deltas, "0.2,0.1,0.05", float),
              numbers(args.seeds, "", int))
    return 0


if __name__ == "__main__":
    sys.exit(main())
