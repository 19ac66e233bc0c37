"""ZGYA as the FairKM paper ran it: the June 2019 code of Ziko et al., and its tables.

The FairKM paper's ZGYA columns come from the first public version of
Variational Fair Clustering (June 2019), kept as ``baseline_imtiaz.py`` in the
FairKM authors' repository (savithasam88/FairKM) and driven by their
``baseline()``. :func:`zgya_2019` is that algorithm, written from reading it;
:func:`zgya_2019_comparison` runs it and :class:`fairkm.ZGYA` (the released
algorithm) on the paper's data and sets both beside its numbers. This is not a
method to use: its distance term makes the fairness term dominate (see
:func:`zgya_2019`).
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import Bunch, check_random_state

from fairkm.cluster import ZGYA
from fairkm.metrics import clustering_objective, fairness_report

from ._protocol import (
    load_dataset,
    pairwise_distances_unique,
    protocol_parameters,
    silhouette_from_distances,
    single_threaded,
)
from ._published import published_table

__all__ = ["VARIANTS", "comparison_table", "zgya_2019", "zgya_2019_comparison"]

# The 2019 code's constants (bound_update, restore_nonempty_cluster, fair_clustering).
_S_FLOOR = 1e-12  # S is floored at this before each bound update
_GRADIENT_FLOOR = 1e-10  # group masses in the gradient
_LOG_FLOOR = 1e-20  # inside the logarithms of the energies
_BOUND_TOL = 5e-4  # relative change of the bound energy that ends a bound optimisation
_TOL = 1e-4  # relative change of the energy that ends the run
_TRIVIAL_AFTER = 3  # reseeds before the "trivial solution" exit


def _sqdist(X, centers):
    dist = (X * X).sum(axis=1)[:, None] - 2.0 * X @ centers.T + (centers * centers).sum(axis=1)
    return np.maximum(dist, 0.0)


def _nearest(X, centers):
    # A NaN centre (the mean of an empty cluster) makes np.argmin pick it for
    # every point, as in the 2019 code; so one label is left and the run reseeds.
    with np.errstate(invalid="ignore"):
        return np.argmin(_sqdist(X, centers), axis=1)


def _bound_update(a_p, V, codes, targets, weight, max_iter):
    """Run the 2019 bound optimisation from softmax(-a_p); return (S, updates)."""
    n = a_p.shape[0]
    S = np.exp(-a_p)
    S /= S.sum(axis=1, keepdims=True)
    # Lipschitz constant estimated from the first S (the released code fixes L = 2).
    lipschitz = max(float(np.max(targets / (V @ S).min(axis=1) ** 2)) * n, 1.0)
    previous = None
    for step in range(max_iter):
        S = np.maximum(S, _S_FLOOR)  # floored, not renormalised
        group_mass = V @ S
        b = targets.sum() / S.sum(axis=0) - (
            targets[:, None] / np.maximum(group_mass, _GRADIENT_FLOOR))[codes]
        b_term = weight * b
        terms = -(a_p + b_term) / lipschitz
        step_factor = np.exp(terms - terms.max(axis=1, keepdims=True))
        step_factor /= step_factor.sum(axis=1, keepdims=True)
        new = S * step_factor
        new /= new.sum(axis=1, keepdims=True)
        # Its bound energy: the log terms are not weighted by S, and b_term
        # already holds lambda, so the fairness part is weighted by lambda twice.
        energy = float(np.sum(lipschitz * np.log(np.maximum(new, _LOG_FLOOR))
                              - lipschitz * np.log(np.maximum(S, _LOG_FLOOR))
                              + a_p * new + weight * b_term * new))
        S = new
        if step > 1 and abs(energy - previous) <= _BOUND_TOL * abs(previous):
            return S, step + 1
        previous = energy
    return S, max_iter


def _energy(X, centers, S, V, targets, weight):
    """Compute the 2019 energy, sum S d^2 + lambda sum_jk u_j (log 1^T S_k - log V_j^T S_k)."""
    with np.errstate(invalid="ignore"):
        clustering = float(np.sum(S * _sqdist(X, centers)))
    fair = (targets[:, None] * (np.log(np.maximum(S.sum(axis=0), _LOG_FLOOR))[None, :]
                                - np.log(np.maximum(V @ S, _LOG_FLOOR)))).sum()
    return clustering + weight * float(fair)


def zgya_2019(X, sensitive, n_clusters, *, fairness_weight=15.0, random_state=None,
              max_iter=100, bound_max_iter=600):
    """Run ZGYA as the FairKM paper did: the June 2019 code of Ziko et al.

    Written from reading ``baseline_imtiaz.py`` (savithasam88/FairKM), as the
    FairKM authors' ``baseline()`` calls it (K-Means variant, k-means++
    start). It differs from the released algorithm (:class:`fairkm.ZGYA`) in:

    * **the distance term**: the bound update uses ``a_p = S * sqdist``, the
      squared distances multiplied by the soft assignments of the previous
      outer iteration, instead of ``sqdist``; so the K-Means force of a
      cluster on a point vanishes where the point's assignment already did,
      and the fairness term dominates;
    * ``S`` carries over between outer iterations through ``a_p`` (each bound
      optimisation itself restarts from ``softmax(-a_p)``);
    * the Lipschitz constant is estimated at each bound optimisation as
      ``max(n * max_j u_j / (min_k V_j^T S_k)^2, 1)``;
    * ``S`` is floored at 1e-12 before each bound update (not renormalised),
      group masses at 1e-10 in the gradient, and the bound optimisation stops
      when its energy changes by at most 5e-4 (relative; the energy weighs the
      log terms by ``L`` without ``S`` and the fairness term by
      ``lambda^2``), after at most 600 updates;
    * **reseeds and exit**: when a cluster has no nearest point or no label,
      centres and labels become those of ``KMeans(n_clusters, n_init=10)``
      (unseeded there, seeded from ``random_state`` here) and ``S`` the
      softmax of their negative squared distances, but the bound optimisation
      of that iteration still runs on the ``a_p`` computed before; the fourth
      time, the run returns the previous iteration's centres, labels and
      ``S`` (the "trivial solution" exit). Centres are means of hard labels
      (an empty cluster's mean is NaN, which empties the nearest-centre check
      and forces a reseed).

    The run stops from its third outer iteration when its energy (``sum S
    d^2 + lambda sum_jk u_j (log 1^T S_k - log V_j^T S_k)``) changes by at
    most 1e-4 (relative), or after ``max_iter`` iterations.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Non-sensitive features (the paper scales each row to unit L2 norm).
    sensitive : array-like of shape (n_samples,)
        One categorical sensitive attribute.
    n_clusters : int
        Number of clusters.
    fairness_weight : float, default=15.0
        ``lambda`` (the paper's value).
    random_state : int, RandomState instance or None, default=None
        Seeds k-means++ (the 2019 driver passes its seed there) and the
        K-Means runs of the reseeds.
    max_iter : int, default=100
        Maximum number of outer iterations.
    bound_max_iter : int, default=600
        Maximum number of bound updates per bound optimisation.

    Returns
    -------
    sklearn.utils.Bunch
        ``labels``, ``centers`` (the returned centres, possibly NaN rows or
        centres not matching the labels after a trivial exit), ``soft_labels``,
        ``energies`` (per outer iteration), ``n_bound_iter``, ``n_iter``,
        ``n_reseeds`` and ``trivial`` (whether the run left through the
        trivial-solution exit).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    values, codes = np.unique(np.asarray(sensitive), return_inverse=True)
    V = (codes[None, :] == np.arange(len(values))[:, None]).astype(np.float64)
    targets = V.sum(axis=1) / X.shape[0]
    rng = check_random_state(random_state)
    k = n_clusters
    # The 2019 driver passes its seed to k-means++; the reseeds draw theirs after it.
    centers = kmeans_plusplus(X, k, random_state=rng)[0]
    reseed_seeds = rng.randint(np.iinfo(np.int32).max, size=_TRIVIAL_AFTER)
    labels = _nearest(X, centers)
    S = None
    energies, bound_iters = [], []
    n_reseeds, trivial, old_energy = 0, False, 1e100

    def restore(old):
        nonlocal n_reseeds
        if n_reseeds >= _TRIVIAL_AFTER:
            return (*old, True)
        kmeans = KMeans(k, n_init=10, random_state=int(reseed_seeds[n_reseeds])).fit(X)
        n_reseeds += 1
        soft = np.exp(-_sqdist(X, kmeans.cluster_centers_))
        soft /= soft.sum(axis=1, keepdims=True)
        return kmeans.cluster_centers_, kmeans.labels_, soft, False

    for it in range(max_iter):
        old = (centers.copy(), labels.copy(), None if S is None else S.copy())
        if it == 0:
            sqdist = _sqdist(X, centers)
            S = np.exp(-sqdist)
            S /= S.sum(axis=1, keepdims=True)
        else:
            with np.errstate(invalid="ignore"):
                centers = np.array([X[labels == c].mean(axis=0) if np.any(labels == c)
                                    else np.full(X.shape[1], np.nan) for c in range(k)])
                sqdist = _sqdist(X, centers)
        a_p = S * sqdist
        if np.unique(_nearest(X, centers)).shape[0] != k:
            centers, labels, S, trivial = restore(old)
            if trivial:
                break
        S, updates = _bound_update(a_p, V, codes, targets, fairness_weight, bound_max_iter)
        labels = np.argmax(S, axis=1)
        energy = _energy(X, centers, S, V, targets, fairness_weight)
        energies.append(energy)
        bound_iters.append(updates)
        if np.unique(labels).shape[0] != k:
            centers, labels, S, trivial = restore(old)
            if trivial:
                break
        if it > 1 and abs(energy - old_energy) <= _TOL * abs(old_energy):
            break
        old_energy = energy
    return Bunch(labels=labels, centers=centers, soft_labels=S, energies=np.array(energies),
                 n_bound_iter=np.array(bound_iters), n_iter=len(energies), n_reseeds=n_reseeds,
                 trivial=trivial)


# --------------------------------------------------------------------------- the Adult table

VARIANTS = ("ZGYA 2019 (paper's code)", "ZGYA (released code)")
_QUALITY_ROWS = ("CO", "SH")
_FAIRNESS_ROWS = ("AE", "AW", "ME", "MW")


def _one_run(X, column, k, seed, pairwise, variant, params):
    """Fit one variant on one attribute from k-means++(seed); its measures."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if variant == VARIANTS[0]:
            fit = zgya_2019(X, column, k, random_state=seed, **params["zgya_2019"])
            labels, centers = fit.labels, fit.centers
            extra = {"n_iter": fit.n_iter, "n_reseeds": fit.n_reseeds, "trivial": fit.trivial}
        else:
            init = kmeans_plusplus(X, k, random_state=seed)[0]
            model = ZGYA(k, init=init, random_state=seed, **params["ZGYA"]).fit(
                X, sensitive_features=column)
            labels, centers = model.labels_, model.cluster_centers_
            extra = {"n_iter": model.n_iter_, "n_reseeds": model.n_reseeds_, "trivial": np.nan}
    seconds = time.perf_counter() - start
    report = fairness_report(labels, sensitive_features=column, wasserstein="published")
    row = report.loc[column.name]
    return {
        # The paper's CO: unsquared distances to the centres the code returned
        # (the FairKM authors' computeObjective), and to the labels' own means.
        "CO": float(np.linalg.norm(X - centers[labels], axis=1).sum()),
        "CO_labels": clustering_objective(X, labels, squared=False),
        "SH": silhouette_from_distances(*pairwise, labels),
        **{m: float(row[m]) for m in _FAIRNESS_ROWS},
        "n_nonempty": int(np.unique(labels).shape[0]),
        **extra,
        "fit_seconds": seconds,
    }


def zgya_2019_comparison(output_dir=None, *, dataset="adult", n_seeds=10, n_clusters=None,
                         data_home=None, attributes=None, progress=False):
    """ZGYA as the paper ran it and as released, beside the paper's ZGYA columns.

    On one of the protocol's datasets, for each k, sensitive attribute and
    seed ``0, 100, 200, ...`` (the seeds of the FairKM authors' driver), both
    variants start from
    ``kmeans_plusplus(X, k, random_state=seed)`` with lambda 15:
    :func:`zgya_2019` (the June 2019 code the paper ran) and
    :class:`fairkm.ZGYA` (the released code's algorithm, with its defaults).
    Quality is averaged over the attributes' runs ("Avg. ZGYA"), fairness
    over the attributes of the run fitted on each ("ZGYA(S)", mean row).

    Parameters
    ----------
    output_dir : str or path-like, default=None
        Where to write ``zgya_2019_runs.csv``, ``zgya_2019_table.csv`` and
        ``zgya_2019.json`` (seeds, parameters, version); nothing is written
        when None.
    dataset : {"adult", "kinematics", "kinematics-l2"}, default="adult"
        Prepared as :func:`fairkm.experiments.reproduce` prepares it.
    n_seeds : int, default=10
        Number of seeds per k and attribute: ``0, 100, 200, ...``.
    n_clusters : sequence of int, default=None
        The paper's: (5, 15) on Adult, (5,) on Kinematics.
    data_home : str or path-like, default=None
        Passed to the dataset's ``fetch_*`` loader (Kinematics caches its
        vectors there).
    attributes : sequence of str, default=None
        Sensitive attributes to run (all five by default).
    progress : bool, default=False
        Print one line per run.

    Returns
    -------
    pandas.DataFrame
        One row per k and measure (CO as the paper computed it, CO of the
        labels' own means, SH, and the mean AE, AW, ME, MW with the published
        Wasserstein convention): ``paper`` (the published ZGYA value), then
        the mean and standard deviation over seeds of each variant, and the
        share of 2019 runs that left through the trivial-solution exit.
    """
    import fairkm

    protocol = protocol_parameters()
    family = "kinematics" if dataset.startswith("kinematics") else dataset
    if n_clusters is None:
        n_clusters = protocol[family]["n_clusters"]
    X, sensitive = load_dataset(dataset, protocol, data_home=data_home)
    attributes = list(sensitive.columns if attributes is None else attributes)
    seeds = [100 * i for i in range(n_seeds)]
    params = {"fairness_weight": 15.0, "zgya_2019": {"fairness_weight": 15.0},
              "ZGYA": {"fairness_weight": 15.0}}
    pairwise = pairwise_distances_unique(X)
    rows = []
    with single_threaded():
        for k in n_clusters:
            for name in attributes:
                for seed in seeds:
                    for variant in VARIANTS:
                        row = _one_run(X, sensitive[name], k, seed, pairwise, variant, params)
                        rows.append({"k": k, "attribute": name, "seed": seed,
                                     "variant": variant, **row})
                        if progress:
                            print(f"k={k} {name} seed={seed} {variant}: CO {row['CO']:.1f} "
                                  f"AE {row['AE']:.4f} {row['fit_seconds']:.1f} s", flush=True)
    runs = pd.DataFrame(rows)
    table = comparison_table(runs, family)
    if output_dir is not None:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        runs.to_csv(out / "zgya_2019_runs.csv", index=False)
        table.to_csv(out / "zgya_2019_table.csv", index=False)
        record = {"fairkm_version": fairkm.__version__, "dataset": dataset, "seeds": seeds,
                  "n_clusters": list(n_clusters), "attributes": attributes,
                  "parameters": params}
        (out / "zgya_2019.json").write_text(json.dumps(record, indent=2) + "\n")
    return table


def comparison_table(runs, dataset="adult"):
    """Summarise :func:`zgya_2019_comparison`'s per-run rows beside the paper's numbers.

    Parameters
    ----------
    runs : pandas.DataFrame
        Per-run rows (``k``, ``attribute``, ``seed``, ``variant`` and the
        measures).
    dataset : {"adult", "kinematics"}, default="adult"
        Whose published numbers.

    Returns
    -------
    pandas.DataFrame
        As :func:`zgya_2019_comparison`.
    """
    quality = published_table("quality", dataset).query("method == 'Avg. ZGYA'")
    fairness = published_table("fairness", dataset).query(
        "method == 'ZGYA(S)' and attribute == 'mean'")
    paper = {(r.k, r.measure): r.paper for r in quality.itertuples()}
    paper.update({(r.k, r.measure): r.paper for r in fairness.itertuples()})
    rows = []
    for k, part in runs.groupby("k", sort=True):
        for measure in ("CO", "CO_labels", *_QUALITY_ROWS[1:], *_FAIRNESS_ROWS):
            row = {"k": k, "measure": measure, "paper": paper.get((k, measure), np.nan)}
            for variant in VARIANTS:
                # Mean over attributes per seed, then mean and std over seeds.
                per_seed = part[part["variant"] == variant].groupby("seed")[measure].mean()
                row[f"{variant} mean"] = per_seed.mean()
                row[f"{variant} std"] = per_seed.std()
            row["2019 trivial exits"] = part.loc[part["variant"] == VARIANTS[0], "trivial"].mean()
            rows.append(row)
    return pd.DataFrame(rows)
