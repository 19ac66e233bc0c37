"""The package's house rules, read from the source (README, "Map of the package").

- Every module sits in one layer of :data:`LAYERS`, and no module imports a
  module of a higher layer; an import inside a function may reach up only as
  one of the :data:`LAYER_SEAMS`, listed with its reason.
- The layers below the kernels load no numba: ``import fairkm.metrics`` stays light.
- No module imports a private module (``_name``) of another subpackage: the
  modules at the top (``fairkm._params``, ``fairkm._columns``...) are shared,
  ``fairkm.bounds._spec`` is for ``fairkm.bounds`` alone.
- No module imports an underscore-prefixed name from another module, but for the
  seams listed here with their reason.
- The cluster weighting's options ("equal", "size", "paper") are spelled in
  one place, ``fairkm._weights``.
- No file is over 650 lines.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MODULES = sorted((SRC / "fairkm").rglob("*.py"))
MAX_LINES = 650

# The layers, bottom to top: (name, why it sits there, its modules). A subpackage's
# name covers every module in it; ``fairkm`` alone is the package's ``__init__``.
LAYERS = (
    ("inputs",
     "what every layer reads: parameters, arrays and sensitive columns checked, rows "
     "paired, data warned about, progress reported (numpy, pandas, scikit-learn only)",
     ("fairkm._params", "fairkm._validation", "fairkm._hygiene", "fairkm._columns",
      "fairkm._edge", "fairkm._progress")),
    ("encoding",
     "what a fit learns from the columns, and the terms it gives the kernels, in NumPy",
     ("fairkm._terms", "fairkm._encoding")),
    ("measures",
     "functions of any labelling, and the data sets: they need no engine, so they load no "
     "numba",
     ("fairkm.metrics", "fairkm.datasets")),
    ("kernels",
     "compiled code: the numba kernels, their on-disk cache, the threads they run on",
     ("fairkm._kernel_cache", "fairkm._kernels", "fairkm._cores")),
    ("engine",
     "the runs that lower the objective, and how much fairness counts in them",
     ("fairkm._engine", "fairkm._weights")),
    ("estimators",
     "scikit-learn estimators over the engine or their own kernels: FairKM in memory and "
     "on Dask, its prediction, the guaranteed bounds, the baselines",
     ("fairkm._family", "fairkm._prediction", "fairkm._base", "fairkm._fairkm",
      "fairkm.bounds", "fairkm.baselines", "fairkm.dask")),
    ("uses",
     "what fits or judges the estimators: the weight trade-off, the audit",
     ("fairkm.tradeoff", "fairkm.report")),
    ("entry points",
     "the package's lazy re-exports and their clients: the command line, the paper's "
     "experiments",
     ("fairkm", "fairkm.__main__", "fairkm.cli", "fairkm.experiments")),
)
NUMBA_FREE = ("inputs", "encoding", "measures")

# (importing module, imported module): why it imports upwards, inside a function.
LAYER_SEAMS = {
    ("fairkm.metrics._reports", "fairkm.bounds"):
        "fairness_report's guarantee columns are check_bounds', and fairkm.bounds loads its "
        "numba kernels: imported when a bound is asked for",
    ("fairkm.bounds._estimator", "fairkm"):
        "BoundedKMeans starts from FairKM's centres, and FairKM imports fairkm.bounds for "
        "max_deviation",
}

# (importing module, imported module, name): why it is allowed.
SEAMS = {
    # The audit measures every clustering on one reading of the sensitive features;
    # fairness_report reads them itself, so the audit takes the table on features read.
    ("fairkm.report._measure", "fairkm.metrics", "_fairness_of_read"): "the audit's seam",
}


def module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_package(path):
    return path.name == "__init__.py"


def is_module(name):
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _import_nodes(tree):
    """Yield ``(import node, inside a function)`` for every import of ``tree``."""
    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function
            nested = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from walk(child, in_function or nested)
    yield from walk(tree, False)


def imports_of(name, package, source):
    """Yield ``(target module, imported name or None, inside a function)`` for fairkm."""
    for node, in_function in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fairkm"):
                    yield alias.name, None, in_function
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("fairkm"):
            continue
        for alias in node.names:
            full = f"{target}.{alias.name}"
            if is_module(full):
                yield full, None, in_function
            else:
                yield target, alias.name, in_function


def imports(path):
    """Yield ``(target module, imported name or None, inside a function)`` of a file."""
    name = module_name(path)
    package = name if is_package(path) else name.rpartition(".")[0]
    yield from imports_of(name, package, path.read_text())


def layer_of(module):
    """Index in :data:`LAYERS` of the layer holding ``module``, or None if unassigned."""
    for index, (_, _, members) in enumerate(LAYERS):
        for member in members:
            if module == member or (member != "fairkm" and module.startswith(member + ".")):
                return index
    return None


def upward_imports(importer, found):
    """The imports among ``found`` that reach a higher layer and are not seams."""
    bad = []
    for target, _, in_function in found:
        if layer_of(target) > layer_of(importer) and not (
                in_function and (importer, target) in LAYER_SEAMS):
            where = "inside a function" if in_function else "at module level"
            bad.append(f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {target} "
                       f"({LAYERS[layer_of(target)][0]}) {where}")
    return bad


def test_every_module_sits_in_one_layer():
    unassigned = [module_name(p) for p in MODULES if layer_of(module_name(p)) is None]
    assert not unassigned, f"give these modules a layer in LAYERS: {unassigned}"
    members = [m for _, _, group in LAYERS for m in group]
    assert len(members) == len(set(members))
    # Every listed name is a module or package of the tree (none left behind by a move).
    assert [m for m in members if not is_module(m)] == []


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_module_imports_a_higher_layer(path):
    assert upward_imports(module_name(path), imports(path)) == []


def test_every_layer_seam_is_an_import_that_needs_it():
    # A seam whose import went away, moved to module level or stopped reaching up is stale.
    seen = {(module_name(p), target) for p in MODULES for target, _, inside in imports(p)
            if inside}
    for importer, target in LAYER_SEAMS:
        assert (importer, target) in seen, f"stale seam: {importer} -> {target}"
        assert layer_of(target) > layer_of(importer), f"not upwards: {importer} -> {target}"


def test_the_layer_rule_catches_an_upward_import():
    source = "import numpy\nfrom .._engine import Stats\n\ndef f():\n    from ..bounds import x\n"
    found = list(imports_of("fairkm.metrics._quality", "fairkm.metrics", source))
    assert found == [("fairkm._engine", "Stats", False), ("fairkm.bounds", "x", True)]
    assert len(upward_imports("fairkm.metrics._quality", found)) == 2
    # An import inside a function passes only as a listed seam, and only inside a function.
    assert upward_imports("fairkm.metrics._reports", found[1:]) == []
    assert len(upward_imports("fairkm.metrics._reports", [("fairkm.bounds", None, False)])) == 1
    # Downward and same-layer imports pass; ``fairkm`` alone does not cover its subpackages.
    assert upward_imports("fairkm._fairkm", [("fairkm.bounds", None, False),
                                             ("fairkm._columns", None, False)]) == []
    assert layer_of("fairkm._kernels._moves") == layer_of("fairkm._kernels")
    assert layer_of("fairkm._nothing") is None
    assert layer_of("fairkm") != layer_of("fairkm.metrics")


@pytest.mark.parametrize("path", [p for p in MODULES
                                  if LAYERS[layer_of(module_name(p))][0] in NUMBA_FREE],
                         ids=module_name)
def test_the_layers_below_the_kernels_import_no_numba(path):
    # With the layer rule, what these modules import is numba-free too.
    tree = ast.parse(path.read_text())
    loaded = [alias.name for node, _ in _import_nodes(tree) if isinstance(node, ast.Import)
              for alias in node.names]
    loaded += [node.module for node, _ in _import_nodes(tree)
               if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    assert [m for m in loaded if m.split(".")[0] in ("numba", "llvmlite")] == []


@pytest.mark.parametrize("module", ["fairkm.metrics", "fairkm.datasets", "fairkm._encoding"])
def test_importing_a_numba_free_layer_loads_no_numba(module):
    probe = f"import sys, {module}; assert 'numba' not in sys.modules, sorted(sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


# --------------------------------------------------------------- private modules and names


def private_module_of_another_package(importer, target):
    """The private part of ``target`` reached from outside its package, or None."""
    parts = target.split(".")
    for i in range(2, len(parts)):  # parts[1] is a top-level module: shared
        owner = ".".join(parts[:i])
        if parts[i].startswith("_") and not (importer == owner
                                             or importer.startswith(owner + ".")):
            return ".".join(parts[:i + 1])
    return None


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_private_module_or_name_of_another_package_is_imported(path):
    importer = module_name(path)
    for target, name, _ in imports(path):
        reached = private_module_of_another_package(importer, target)
        assert reached is None, f"{importer} imports {reached}"
        private = name is not None and name.startswith("_") and not name.startswith("__")
        if private and target != importer:
            assert (importer, target, name) in SEAMS, f"{importer} imports {target}.{name}"


def test_the_rules_catch_what_they_forbid():
    # The checks above can fail: a reach into another package's private module, and not
    # the same reach from inside the package or of a shared top-level module.
    assert private_module_of_another_package("fairkm.report._audit",
                                             "fairkm.bounds._spec") == "fairkm.bounds._spec"
    assert private_module_of_another_package("fairkm._engine",
                                             "fairkm._kernels._pricing") == (
        "fairkm._kernels._pricing")
    assert private_module_of_another_package("fairkm.bounds._assign",
                                             "fairkm.bounds._spec") is None
    assert private_module_of_another_package("fairkm.bounds._assign", "fairkm._params") is None
    assert {module_name(p) for p in MODULES} >= {"fairkm", "fairkm._kernels._moves"}
    assert ("fairkm._params", "Integer", False) in set(imports(SRC / "fairkm" / "_base.py"))
    # The one seam is seen, so its entry in SEAMS is what lets it pass.
    measure = SRC / "fairkm" / "report" / "_measure.py"
    assert ("fairkm.metrics", "_fairness_of_read", False) in set(imports(measure))


# ------------------------------------------------------------- the cluster weighting's options

CLUSTER_WEIGHTINGS = ("equal", "size", "paper")
# The statement that spells them, in fairkm._weights.
SPELLED_IN = "fairkm._weights"
# Modules that spell them apart, with the reason (each must still spell them, and the same
# options: test_cli_edges checks the parser's against fairkm._weights').
SPELLED_APART = {
    "fairkm.cli._parser": "fairkm --help loads no scikit-learn or numba, and _weights' imports do",
}


def _parents(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _about_weighting(node):
    return "weighting" in ast.unparse(node).lower()


def cluster_weighting_literals(source):
    """Line numbers of the statements whose code literals name a cluster weighting.

    "paper" and "size" have other meanings (``fairness_weight="paper"``, a table's
    "size" column), so a literal counts where it names a weighting: beside another of
    the options (a list of them), or in a comparison, an assignment, a keyword argument
    or a dict entry that speaks of a weighting. Docstrings and f-strings (messages)
    are words, not code.
    """
    tree = ast.parse(source)
    parents = _parents(tree)
    lines = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and node.value in CLUSTER_WEIGHTINGS):
            continue
        parent = parents[node]
        if isinstance(parent, (ast.Expr, ast.JoinedStr)):
            continue
        siblings = {c.value for c in ast.iter_child_nodes(parent)
                    if isinstance(c, ast.Constant) and c.value in CLUSTER_WEIGHTINGS}
        named = len(siblings) > 1
        child, up = node, parent
        while not isinstance(up, ast.stmt):
            if isinstance(up, ast.Dict) and child in up.values:
                key = up.keys[up.values.index(child)]
                named = named or (key is not None and _about_weighting(key))
            named = named or (isinstance(up, ast.Compare) and _about_weighting(up)
                              or isinstance(up, ast.keyword) and "weighting" in (up.arg or ""))
            child, up = up, parents[up]
        if isinstance(up, (ast.Assign, ast.AnnAssign)):
            targets = up.targets if isinstance(up, ast.Assign) else [up.target]
            named = named or any(_about_weighting(t) for t in targets)
        if named:
            lines.add(up.lineno)
    return lines


def test_the_cluster_weightings_are_spelled_once():
    spelled = {module_name(p): cluster_weighting_literals(p.read_text()) for p in MODULES}
    spelled = {module: lines for module, lines in spelled.items() if lines}
    assert len(spelled.pop(SPELLED_IN, ())) == 1, f"one statement of {SPELLED_IN} spells them"
    for module in SPELLED_APART:
        assert spelled.pop(module, None), f"{module} reads them now: drop its entry"
    assert spelled == {}, "import fairkm._weights' names instead of spelling the options"


@pytest.mark.parametrize(("source", "n_found"), [
    ('CHOICES = ("auto", "equal", "size", "paper")\n', 1),
    ('if self.cluster_weighting == "paper":\n    pass\n', 1),
    ('if settings.get("cluster_weighting_") in ("paper",):\n    pass\n', 1),
    ('DEFAULT_WEIGHTING = "equal"\n', 1),
    ('weighting = "paper" if absolute else other\n', 1),
    ('FairKM(cluster_weighting="size")\n', 1),
    ('WORDS = {"equal": "alike", "size": "by its share"}\n', 1),
    ('params = {"cluster_weighting": "equal"}\n', 1),
    # Not a weighting: another option named "paper", a "size" column, words.
    ('if self.fairness_weight == "paper":\n    pass\n', 0),
    ('Options("auto", "paper")\n', 0),
    ('row = {"cluster": 0, "size": 3, "share": 0.5}\n', 0),
    ('"""Weighs clusters: "equal", "size" or "paper"."""\n', 0),
    ('warn(f"cluster_weighting={weighting!r}: see {\'paper\'}")\n', 0),
])
def test_the_spelling_scan_finds_what_it_forbids(source, n_found):
    assert len(cluster_weighting_literals(source)) == n_found


def test_the_cluster_exponent_has_one_name():
    # e of each cluster's weight (|C|/n)^e is ``cluster_exponent`` from the estimators to
    # the kernels' arguments; the kernels derive their p = 2 - e themselves.
    retired = {"size_power"}
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            name = (node.id if isinstance(node, ast.Name) else node.attr
                    if isinstance(node, ast.Attribute) else node.arg
                    if isinstance(node, ast.arg) else getattr(node, "name", None))
            assert name not in retired, f"{module_name(path)}:{node.lineno} names e {name}"


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_file_is_over_650_lines(path):
    n_lines = len(path.read_text().splitlines())
    assert n_lines <= MAX_LINES, f"{module_name(path)} has {n_lines} lines"
