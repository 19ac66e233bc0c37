"""One call that reruns the paper's evaluation and writes its tables and figures."""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import joblib
import numba
import numpy as np
import pandas as pd
import scipy
import sklearn
from joblib import Parallel, delayed
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from fairkm.tradeoff import plot_tradeoff
from fairkm.utils._param_validation import at_least, check_param

from ._protocol import (
    DATASETS,
    FAIRKM_ALL,
    FAIRKM_S,
    ZGYA_S,
    load_dataset,
    pairwise_distances_unique,
    protocol_parameters,
    run_seed,
    sweep_seed,
)
from ._tables import (
    fairness_table,
    lambda_table,
    markdown_summary,
    markdown_table,
    per_attribute_table,
    quality_table,
    summary_table,
)

__all__ = ["reproduce", "write_results"]

_TABLE_NUMBERS = {"adult": (4, 5), "kinematics": (6, 7)}
_FIGURE_NUMBERS = {"adult": (1, 2), "kinematics": (3, 4)}
_DPI = 110
_SWEEP = "lambda"
_PARTS = "parts"


def _check_args(n_seeds, datasets, n_jobs):
    check_param("n_seeds", n_seeds, [at_least(2)])
    if isinstance(datasets, str):
        datasets = (datasets,)
    datasets = tuple(datasets)
    unknown = [d for d in datasets if d not in DATASETS]
    if not datasets or unknown:
        raise ValueError(
            f"datasets must name one or more of {list(DATASETS)}, got {list(datasets)}."
        )
    if n_jobs is not None and (
            not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}.")
    return tuple(dict.fromkeys(datasets))


def _processes(n_jobs):
    """Worker processes for ``n_jobs``: None means every core, -1 too, -2 all but one."""
    cores = joblib.cpu_count()
    if n_jobs is None:
        return cores
    return int(n_jobs) if n_jobs > 0 else max(cores + 1 + int(n_jobs), 1)


def _family(dataset):
    return "kinematics" if dataset.startswith("kinematics") else dataset


def _load_all(datasets, params, data_home, random_state):
    """Load every dataset asked for before the first fit: what is missing stops the run early.

    Kinematics needs gensim for its Doc2Vec vectors unless they are cached in
    the data home; the error then names the extra to install.
    """
    loaded = {}
    for dataset in datasets:
        try:
            loaded[dataset] = load_dataset(dataset, params, data_home=data_home,
                                           random_state=random_state)
        except ImportError as exc:
            others = [d for d in datasets if _family(d) != _family(dataset)]
            instead = (f" Or leave it out: datasets={tuple(others)!r} (fairkm reproduce "
                       f"--datasets {','.join(others)})." if others else "")
            raise ImportError(
                f"the reproduction of {dataset!r} cannot start: {str(exc).rstrip('.')}.{instead}"
            ) from exc
    return loaded


def _fingerprint(X, sensitive):
    """SHA-256 of a dataset as the fits see it: the features' bytes and the attributes' CSV."""
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes())
    digest.update(sensitive.to_csv(index=False).encode("utf-8"))
    return digest.hexdigest()


def _tasks(dataset, params, seeds):
    """List the tasks of one dataset: one per (k, seed), and one per seed of the lambda sweep."""
    tasks = [(dataset, k, seed) for k in params[_family(dataset)]["n_clusters"] for seed in seeds]
    if dataset in params["lambda_sweep"]["datasets"]:
        tasks += [(dataset, _SWEEP, seed) for seed in seeds]
    return tasks


def _run_task(task, X, sensitive, pairwise, params):
    """Fit and measure one task; returns it with its tables, by the CSV file they go to."""
    dataset, k, seed = task
    if k == _SWEEP:
        return task, {"lambda": sweep_seed(dataset, X, sensitive, seed, params)}
    quality, fairness = run_seed(dataset, X, sensitive, pairwise, k, seed, params)
    return task, {"quality": pd.DataFrame(quality), "fairness": fairness}


class _Parts:
    """The finished tasks of a reproduction, one folder each under ``<output_dir>/parts``.

    A task's tables are written as CSV into a temporary folder that is then
    renamed into place, so a task is either finished and complete or absent,
    whenever the run stops. ``settings.json`` holds what the results depend
    on besides the task (protocol, random_state, data, library versions); a
    run with other settings cannot continue from the parts.
    """

    def __init__(self, folder, settings, resume):
        self.folder = Path(folder)
        recorded = self.folder / "settings.json"
        settings = json.loads(json.dumps(settings))
        if self.folder.is_dir() and not resume:
            shutil.rmtree(self.folder)
        if recorded.is_file():
            earlier = json.loads(recorded.read_text(encoding="utf-8"))
            if earlier != settings:
                changed = sorted(key for key in settings.keys() | earlier.keys()
                                 if settings.get(key) != earlier.get(key))
                raise ValueError(
                    f"{str(self.folder)!r} holds the finished fits of a reproduction with other "
                    f"settings ({', '.join(changed)} differ), which this run cannot continue; "
                    "pass resume=False (fairkm reproduce --no-resume) to discard them, or "
                    "choose another output directory."
                )
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(recorded, json.dumps(settings, indent=2) + "\n")
        for stale in self.folder.glob(".tmp-*"):  # a write cut short by a kill
            shutil.rmtree(stale, ignore_errors=True)

    def path(self, task):
        dataset, k, seed = task
        return self.folder / f"{dataset}-{'lambda' if k == _SWEEP else f'k{k}'}-seed{seed}"

    def done(self, task):
        return self.path(task).is_dir()

    def write(self, task, tables):
        final = self.path(task)
        staging = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=self.folder))
        try:
            for name, table in tables.items():
                table.to_csv(staging / f"{name}.csv", index=False)
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def read(self, task, name):
        return pd.read_csv(self.path(task) / f"{name}.csv")


def _write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _run_dataset(dataset, data, params, seeds, parts, *, processes, progress):
    """Run the unfinished tasks of one dataset, writing each to ``parts`` as it finishes."""
    X, sensitive = data
    todo = [task for task in _tasks(dataset, params, seeds) if not parts.done(task)]
    if not todo:
        return
    # The largest k first, so that no long task is left for the end while the
    # other processes wait; the tables are gathered in the protocol's order.
    todo.sort(key=lambda task: -1 if task[1] == _SWEEP else -task[1])
    pairwise = pairwise_distances_unique(X)
    results = Parallel(n_jobs=min(processes, len(todo)), return_as="generator_unordered")(
        delayed(_run_task)(task, X, sensitive, pairwise, params) for task in todo
    )
    total = len(_tasks(dataset, params, seeds))
    with tqdm(total=total, initial=total - len(todo), desc=dataset,
              disable=not progress) as bar:
        for task, tables in results:
            parts.write(task, tables)
            bar.update()


def _gather(dataset, params, seeds, parts):
    """Per-fit rows of one dataset, read back from its parts in the protocol's order."""
    quality, fairness, sweeps = [], [], []
    for task in _tasks(dataset, params, seeds):
        if task[1] == _SWEEP:
            sweeps.append(parts.read(task, "lambda"))
        else:
            quality.append(parts.read(task, "quality"))
            fairness.append(parts.read(task, "fairness"))
    return quality, fairness, sweeps


def _plot_per_attribute(table, dataset, k, measure, number):
    import matplotlib.pyplot as plt

    part = table[(table["dataset"] == dataset) & (table["k"] == k)
                 & (table["measure"] == measure)]
    methods = [ZGYA_S, FAIRKM_ALL, FAIRKM_S]
    attributes = list(dict.fromkeys(part["attribute"]))
    conventions = list(dict.fromkeys(part["convention"]))
    fig, axes = plt.subplots(1, len(conventions), figsize=(5.2 * len(conventions), 3.8))
    positions = np.arange(len(attributes))
    width = 0.8 / len(methods)
    for ax, convention in zip(np.atleast_1d(axes), conventions, strict=True):
        chosen = part[part["convention"] == convention].set_index(["attribute", "method"])
        for i, method in enumerate(methods):
            rows = chosen.loc[[(a, method) for a in attributes]]
            ax.bar(positions + (i - 1) * width, rows["mean"], width, yerr=rows["std"],
                   capsize=2, label=method)
        ax.set_xticks(positions, attributes, rotation=20, ha="right")
        ax.set_ylabel(f"{measure} (lower is fairer)")
        ax.set_title(f"{measure}, {convention} convention")
    np.atleast_1d(axes)[0].legend()
    runs = int(part["n_runs"].max())
    fig.suptitle(f"Figure {number}: {dataset}, {measure} per attribute, k={k} "
                 f"(mean ± std over {runs} seeds)")
    fig.tight_layout()
    return fig


def _plot_lambda(table, dataset, runs):
    part = table[table["dataset"] == dataset]
    specs = [
        (5, "co_sh", ("CO",), ("SH",), "CO (squared; lower is better)", "SH (higher is better)"),
        (6, "devc_devo", ("DevC",), ("DevO",), "DevC (lower is closer)", "DevO (lower is closer)"),
        # Averages left, maxima right: on binary attributes AW = AE / sqrt(2), so
        # AE and AW on separate axes would draw one line over the other.
        (7, "fairness", ("AE", "AW"), ("ME", "MW"), "AE, AW principled (lower is fairer)",
         "ME, MW principled (lower is fairer)"),
    ]
    figures = []
    for number, slug, left, right, left_label, right_label in specs:
        fig = plot_tradeoff(part, quality=left, fairness=right)
        axes, twin = fig.axes
        axes.set_xlabel("fairness weight lambda")
        axes.set_ylabel(left_label)
        twin.set_ylabel(right_label)
        axes.set_title(f"Figure {number}: {dataset}, FairKM k=5, mean over {runs} seeds")
        fig.tight_layout()
        figures.append((f"figure{number}_{dataset}_{slug}.png", fig))
    return figures


def _save_figure(fig, path):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def _write_table(table, out, stem, markdown=None):
    table.to_csv(out / f"{stem}.csv", index=False)
    if markdown is not None:
        (out / f"{stem}.md").write_text(markdown, encoding="utf-8")


def reproduce(
    output_dir,
    *,
    n_seeds=100,
    quick=False,
    data_home=None,
    n_jobs=None,
    progress=True,
    datasets=("adult", "kinematics"),
    random_state=0,
    resume=True,
):
    """Rerun the paper's evaluation (Tables 4-7, Figures 1-7) and write the results.

    The protocol of the paper's section 5.5.1: for each seed, S-blind
    K-Means ("K-Means(N)"), FairKM on all sensitive attributes at once
    (lambda 1e6 on Adult, 1e3 on Kinematics, at most 30 iterations), and ZGYA
    (lambda 15) and FairKM on each attribute alone; Adult with k = 5 and 15,
    Kinematics with k = 5; then FairKM on Kinematics for lambda from 1e3 to
    1e4 (Figures 5-7). Means and standard deviations over seeds are written
    beside the numbers published in the paper.

    Parameters
    ----------
    output_dir : str or path-like
        Directory for the results (created if needed; files are overwritten).
    n_seeds : int, default=100
        Seeds per method and setting (the paper's 100), at least 2.
    quick : bool, default=False
        A small run for tests, finishing in seconds: at most 2 seeds, a
        600-row Adult subsample, 5 iterations for FairKM and ZGYA (50 bound
        updates), lambda grid (1e3, 5e3, 1e4). Not comparable with the paper.
    data_home : str or path-like, default=None
        Passed to :func:`~fairkm.datasets.fetch_adult` and
        :func:`~fairkm.datasets.fetch_kinematics`; Kinematics caches its
        Doc2Vec vectors there, so it should be writable.
    n_jobs : int, default=None
        Processes for the seeds (joblib's loky processes): ``None`` or ``-1``
        means one per core, ``-2`` all cores but one, ``1`` runs everything
        in this process. The seeds are drawn before anything runs and each
        fit runs single-threaded (BLAS and numba, so processes do not compete
        for cores with threads), so the results do not depend on ``n_jobs``.
    progress : bool, default=True
        Say how many processes run (and how many tasks an earlier run
        finished) on standard error, and show a tqdm progress bar per dataset.
    datasets : sequence of {"adult", "kinematics", "kinematics-l2"}, \
            default=("adult", "kinematics")
        Which datasets to run. ``"kinematics-l2"`` is Kinematics with each
        Doc2Vec vector scaled to unit L2 norm (as the paper's Adult rows
        are); its results are labelled as such and compared with the same
        published numbers.
    random_state : int, default=0
        Seeds the per-run seeds (and the quick Adult subsample).
    resume : bool, default=True
        Continue from the tasks an interrupted run left in
        ``output_dir/parts`` (see Notes). False discards them first.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``"table4"``/``"table5"`` (Adult quality/fairness) and
        ``"table6"``/``"table7"`` (Kinematics) for the datasets run, in the
        long format of the CSV files: dataset, k, (attribute), measure,
        convention, method, mean, std, n_runs, paper, paper_ref;
        ``"figures1-4"`` (fairness per attribute of ZGYA(S), FairKM(All),
        FairKM(S)); ``"lambda_sensitivity"`` (Figures 5-7, when Kinematics
        runs); ``"runs_summary"`` (iterations, convergence, non-empty
        clusters, fit times); and the per-fit rows ``"runs_quality"``,
        ``"runs_fairness"`` and ``"lambda_runs"``.

    Raises
    ------
    ImportError
        Before the first fit, when a dataset asked for needs what is not
        installed: Kinematics' Doc2Vec vectors need gensim (``pip install
        "fairkm[text]"``) unless they are cached in the data home.
    ValueError
        Before the first fit, when ``output_dir/parts`` holds tasks finished
        with other settings and ``resume`` is True.

    Notes
    -----
    Every dataset asked for is loaded before the first fit, so a missing
    dependency, file or download stops the run before any work.

    The work is cut into tasks, one per (dataset, k, seed) and one per seed
    of the lambda sweep. Each finished task is kept in
    ``output_dir/parts/<dataset>-k<k>-seed<seed>/`` (its per-fit rows as CSV,
    written into place whole), beside ``settings.json``: the protocol's
    parameters, ``random_state``, a checksum of each dataset and the library
    versions. A run in the same ``output_dir`` with the same settings skips
    the finished tasks (it may ask for more seeds, or other datasets), and
    the tables are always built from the parts, so an interrupted and resumed
    run writes the same tables as an uninterrupted one (but for the times).
    The parts are removed once the tables are written.

    Files written to ``output_dir``: every returned table as CSV, the paper's
    tables and the run summary also as Markdown (``tables.md`` gathers them),
    ``figure<N>_<dataset>_<measure>.png`` for Figures 1-7, and ``run.json``
    with the seeds, every parameter, the data shapes, the library versions,
    the number of processes, the wall time of this run per dataset and how
    many of its tasks an earlier run had finished.

    Measures appear in two conventions where they differ. The "paper"
    convention is how the published tables were computed: CO sums unsquared
    distances, AW/MW pass the probability vectors to
    :func:`scipy.stats.wasserstein_distance` as samples
    (:func:`fairkm.metrics.published_wasserstein`). The "library" convention
    is fairkm's: CO is the (squared) K-Means objective, AW/MW are optimal
    transport under the 0/1 ground metric. DevC and DevO are fairkm's
    definitions (:func:`fairkm.metrics.centroid_deviation`,
    :func:`fairkm.metrics.object_pair_deviation`), measured against the
    K-Means(N) clustering of the same seed; the paper's could not be
    reconstructed. SH is scikit-learn's silhouette over all points, computed
    exactly from the distances between distinct rows.

    Examples
    --------
    >>> from fairkm.experiments import reproduce
    >>> tables = reproduce("results", quick=True)  # doctest: +SKIP
    >>> tables["table5"].query("attribute == 'mean' and measure == 'AE'")  # doctest: +SKIP
    """
    import fairkm

    datasets = _check_args(n_seeds, datasets, n_jobs)
    processes = _processes(n_jobs)
    params = protocol_parameters(quick)
    if quick:
        n_seeds = min(n_seeds, params["max_seeds"])
    seeds = [int(s) for s in check_random_state(random_state).randint(
        np.iinfo(np.int32).max, size=n_seeds)]
    import matplotlib.pyplot  # noqa: F401  (the figures' dependency, checked before any fit)

    loaded = _load_all(datasets, params, data_home, random_state)
    versions = {
        "fairkm_version": fairkm.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "pandas": pd.__version__,
        "numba": numba.__version__,
    }
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Whatever changes a fit's result, except its task (dataset, k, seed); so a run with more
    # seeds, or other datasets, continues from the parts of the same settings.
    settings = {
        **versions,
        "parameters": params,
        "random_state": random_state,
        "data_sha256": {dataset: _fingerprint(*loaded[dataset]) for dataset in datasets},
    }
    parts = _Parts(out / _PARTS, settings, resume)
    n_tasks = {dataset: len(_tasks(dataset, params, seeds)) for dataset in datasets}
    finished = {dataset: sum(parts.done(task) for task in _tasks(dataset, params, seeds))
                for dataset in datasets}
    if progress:
        kept = sum(finished.values())
        resumed = (f"; {kept} of {sum(n_tasks.values())} (dataset, k, seed) tasks done "
                   f"earlier, in {parts.folder}, continuing" if kept else "")
        print(f"reproduce: {', '.join(datasets)}, {n_seeds} seeds, {processes} "
              f"process{'es' if processes > 1 else ''}{resumed}", file=sys.stderr, flush=True)

    quality, fairness, sweeps, data, elapsed = [], [], [], {}, {}
    for dataset in datasets:
        start = time.perf_counter()
        _run_dataset(dataset, loaded[dataset], params, seeds, parts, processes=processes,
                     progress=progress)
        elapsed[dataset] = time.perf_counter() - start
        q, f, s = _gather(dataset, params, seeds, parts)
        quality += q
        fairness += f
        sweeps += s
        X, sensitive = loaded[dataset]
        data[dataset] = {
            "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
            "n_unique_rows": int(np.unique(X, axis=0).shape[0]),
            "attributes": list(sensitive.columns),
        }
    runs_fairness = pd.concat(fairness, ignore_index=True)
    first = ["dataset", "k", "seed", "method", "sensitive"]
    runs = {
        "runs_quality": pd.concat(quality, ignore_index=True),
        "runs_fairness": runs_fairness[first + [c for c in runs_fairness if c not in first]],
    }
    if sweeps:
        lambda_runs = pd.concat(sweeps, ignore_index=True)
        runs["lambda_runs"] = lambda_runs[
            ["dataset", "seed"] + [c for c in lambda_runs if c not in ("dataset", "seed")]
        ]
    record = {
        **versions,
        "random_state": random_state,
        "n_seeds": n_seeds,
        "seeds": seeds,
        "n_jobs": n_jobs,
        "n_processes": processes,
        "datasets": list(datasets),
        "data": data,
        "parameters": params,
        "elapsed_seconds": elapsed,
        "tasks_finished_earlier": finished,
    }
    tables = write_results(out, runs, record)
    shutil.rmtree(parts.folder)
    return tables


def write_results(output_dir, runs, record):
    """Build the tables and figures from per-fit rows and write everything.

    Parameters
    ----------
    output_dir : path-like
        Existing directory to write into.
    runs : dict of str to pandas.DataFrame
        ``"runs_quality"``, ``"runs_fairness"`` and, when the lambda sweep
        ran, ``"lambda_runs"`` (as written to the CSV files of the same names).
    record : dict
        What :func:`reproduce` records in ``run.json``; ``datasets`` and
        ``n_seeds`` and ``parameters["quick"]`` are read from it.

    Returns
    -------
    dict of str to pandas.DataFrame
        As :func:`reproduce`.
    """
    out = Path(output_dir)
    datasets = record["datasets"]
    runs_quality, runs_fairness = runs["runs_quality"], runs["runs_fairness"]
    quick = ", quick mode" if record["parameters"]["quick"] else ""
    tables = {}
    markdown = [f"# FairKM paper reproduction ({record['n_seeds']} seeds{quick})\n"]
    quality_all, fairness_all = quality_table(runs_quality), fairness_table(runs_fairness)
    for family, (q_number, f_number) in _TABLE_NUMBERS.items():
        chosen = [d for d in datasets if _family(d) == family]
        if not chosen:
            continue
        q_table = quality_all[quality_all["dataset"].isin(chosen)].reset_index(drop=True)
        f_table = fairness_all[fairness_all["dataset"].isin(chosen)].reset_index(drop=True)
        q_md = markdown_table("quality", q_table, q_number)
        f_md = markdown_table("fairness", f_table, f_number)
        _write_table(q_table, out, f"table{q_number}_{family}_quality", q_md)
        _write_table(f_table, out, f"table{f_number}_{family}_fairness", f_md)
        tables[f"table{q_number}"], tables[f"table{f_number}"] = q_table, f_table
        markdown += [q_md, f_md]

    figures = per_attribute_table(runs_fairness)
    tables["figures1-4"] = figures
    _write_table(figures, out, "figures1-4_per_attribute")
    for dataset in datasets:
        for number, measure in zip(_FIGURE_NUMBERS[_family(dataset)], ("AW", "MW"), strict=True):
            fig = _plot_per_attribute(figures, dataset, 5, measure, number)
            _save_figure(fig, out / f"figure{number}_{dataset}_{measure.lower()}.png")

    if "lambda_runs" in runs:
        sensitivity = lambda_table(runs["lambda_runs"])
        tables["lambda_sensitivity"] = sensitivity
        _write_table(sensitivity, out, "lambda_sensitivity")
        for dataset in dict.fromkeys(sensitivity["dataset"]):
            for name, fig in _plot_lambda(sensitivity, dataset, record["n_seeds"]):
                _save_figure(fig, out / name)

    summary = summary_table(runs_quality)
    summary_md = markdown_summary(summary)
    tables["runs_summary"] = summary
    _write_table(summary, out, "runs_summary", summary_md)
    markdown.append("#### How the fits ended\n\n" + summary_md)
    (out / "tables.md").write_text("\n".join(markdown), encoding="utf-8")
    for name, table in runs.items():
        tables[name] = table
        _write_table(table, out, name)
    files = sorted(p.name for p in out.iterdir() if p.name not in ("run.json", _PARTS))
    record = {**record, "files": [*files, "run.json"]}
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return tables
