"""The package's house rules, read from the source (docs/development.md, "The house").

- The folders are the layers: import-linter's contracts in ``pyproject.toml``
  (every folder imports only from those below it, imports inside functions
  included; nothing under ``fairkm.cluster`` and ``fairkm.bounds`` loads numba).
- No module imports a private module (``_name``) of another package, but for
  ``fairkm.utils`` (the input layer every package reads through) and the
  friends listed here with their reason; no module imports an
  underscore-prefixed name from another module.
- The options' names ("equal", "size", "paper", ...) are spelled in one place,
  ``fairkm.utils._options``.
- No file holds more than 450 lines of code (docstrings, comments and blank
  lines not counted), but for one compile unit.
"""

import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
MODULES = sorted((SRC / "fairkm").rglob("*.py"))
MAX_CODE_LINES = 450

# Files allowed more code than MAX_CODE_LINES, with the reason.
LONGER = {
    "fairkm.cluster._kernels": "one compile unit: numba caches a kernel by its own file, so the "
                               "engine's kernels and every helper they call share one file",
    "fairkm.bounds._search_kernels": "one compile unit (as fairkm.cluster._kernels): the local "
                                     "search and the excess it counts, by cluster and by "
                                     "attribute",
}

# (importing package, package whose private modules it may import): why. Every package reads
# its inputs through fairkm.utils, whose modules are the library's own (not public API).
FRIENDS = {
    ("fairkm", "fairkm.utils"): "the input layer: every package reads its inputs there",
    ("fairkm.dask", "fairkm.cluster"): "fairkm.dask.FairKM is FairKM on partitions: it runs the "
                                       "cluster package's engine, encoding and weighting on them",
}


def module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_module(name):
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports_of(name, package, source):
    """Yield ``(target module, imported name or None)`` for every import of fairkm."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fairkm"):
                    yield alias.name, None
            continue
        if not isinstance(node, ast.ImportFrom):
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
            yield (full, None) if is_module(full) else (target, alias.name)


def imports(path):
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    yield from imports_of(name, package, path.read_text())


# ------------------------------------------------------------------------ the layers


def lint(src):
    """Run import-linter's contracts (``pyproject.toml``) over the package in ``src``."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, "
            "no_cache=True, no_logo=True))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={"PYTHONPATH": str(src)})
    return done.returncode, done.stdout + done.stderr


def test_the_import_contracts_are_kept():
    code, output = lint(SRC)
    assert code == 0, output
    assert "2 kept, 0 broken" in output, output


def test_the_contracts_catch_an_upward_import_and_numba(tmp_path):
    # The same contracts over a copy of the tree with one import inside a function that
    # reaches up from utils to the engine (and so to numba).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["contracts"][0]["exhaustive"], "every folder must sit in a layer"
    copy = tmp_path / "src"
    subprocess.run(["cp", "-r", str(SRC), str(copy)], check=True)
    progress = copy / "fairkm" / "utils" / "_progress.py"
    progress.write_text(progress.read_text() + "\n\ndef f():\n    import fairkm.cluster._engine\n")
    code, output = lint(copy)
    assert code == 1, output
    assert "fairkm.utils is not allowed to import fairkm.cluster" in output
    assert "fairkm.utils is not allowed to import numba" in output


@pytest.mark.parametrize("module", ["fairkm.metrics", "fairkm.datasets", "fairkm.utils._inputs",
                                    "fairkm.exceptions"])
def test_importing_a_numba_free_layer_loads_no_numba(module):
    probe = f"import sys, {module}; assert 'numba' not in sys.modules, sorted(sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_importing_fairkm_loads_nothing_heavy():
    probe = ("import sys, fairkm; heavy = {'numba', 'sklearn', 'pandas'} & set(sys.modules); "
             "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


# --------------------------------------------------------------- private modules and names


def private_module_of_another_package(importer, target):
    """The private part of ``target`` reached from outside its package, or None."""
    parts = target.split(".")
    for i in range(1, len(parts)):
        owner = ".".join(parts[:i])
        if parts[i].startswith("_") and not parts[i].startswith("__") and not (
                importer == owner or importer.startswith(owner + ".")
                or any(importer.startswith(friend) and owner == package
                       for friend, package in FRIENDS)):
            return ".".join(parts[:i + 1])
    return None


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_private_module_or_name_of_another_package_is_imported(path):
    importer = module_name(path)
    for target, name in imports(path):
        reached = private_module_of_another_package(importer, target)
        assert reached is None, f"{importer} imports {reached}"
        private = name is not None and name.startswith("_") and not name.startswith("__")
        assert not private or target == importer, f"{importer} imports {target}.{name}"


def test_the_private_rule_catches_what_it_forbids():
    assert private_module_of_another_package(
        "fairkm.report._audit", "fairkm.metrics._bound_spec") == "fairkm.metrics._bound_spec"
    assert private_module_of_another_package(
        "fairkm.bounds._assign", "fairkm.cluster._engine") == "fairkm.cluster._engine"
    assert private_module_of_another_package("fairkm.metrics._bound_check",
                                             "fairkm.metrics._bound_spec") is None
    assert private_module_of_another_package("fairkm.dask._session",
                                             "fairkm.cluster._engine") is None
    assert private_module_of_another_package("fairkm.cli._main", "fairkm.utils._inputs") is None
    assert private_module_of_another_package("fairkm.report._audit",
                                             "fairkm.cluster._engine") == "fairkm.cluster._engine"


# ------------------------------------------------------------------------- the options

OPTIONS = {"equal", "size", "paper", "additive", "multiplicative"}
SPELLED_IN = "fairkm.utils._options"


def _parents(tree):
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def option_literals(source):
    """Line numbers of statements whose code spells two or more option names together.

    A tuple, list, set or dict of options, a comparison with one, a keyword
    ``cluster_weighting=``/``deviation_kind=``: code that lists or branches on
    them. Docstrings and f-strings are words, not code.
    """
    tree = ast.parse(source)
    parents = _parents(tree)
    lines = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and node.value in OPTIONS):
            continue
        parent = parents[node]
        if isinstance(parent, (ast.Expr, ast.JoinedStr)):
            continue
        siblings = {c.value for c in ast.iter_child_nodes(parent)
                    if isinstance(c, ast.Constant) and c.value in OPTIONS}
        named = len(siblings) > 1 or (
            isinstance(parent, ast.keyword) and parent.arg in ("cluster_weighting",
                                                                "deviation_kind"))
        if isinstance(parent, ast.Compare):
            text = ast.unparse(parent)
            named = named or "weighting" in text or "kind" in text
        if named:
            up = parent
            while not isinstance(up, ast.stmt):
                up = parents[up]
            lines.add(up.lineno)
    return lines


def test_the_options_are_spelled_once():
    spelled = {module_name(p): option_literals(p.read_text()) for p in MODULES}
    spelled = {module: lines for module, lines in spelled.items() if lines}
    assert spelled.pop(SPELLED_IN, None), f"{SPELLED_IN} spells the options"
    assert spelled == {}, f"import {SPELLED_IN}'s names instead of spelling the options"


@pytest.mark.parametrize(("source", "n_found"), [
    ('CHOICES = ("auto", "equal", "size", "paper")\n', 1),
    ('if self.cluster_weighting == "paper":\n    pass\n', 1),
    ('FairKM(cluster_weighting="size")\n', 1),
    ('if deviation_kind == "additive":\n    pass\n', 1),
    ('WORDS = {"equal": "alike", "size": "by its share"}\n', 1),
    # Not an option: another parameter's "paper", a "size" column, words.
    ('if self.fairness_weight == "paper":\n    pass\n', 0),
    ('row = {"cluster": 0, "size": 3, "share": 0.5}\n', 0),
    ('"""Weighs clusters: "equal", "size" or "paper"."""\n', 0),
])
def test_the_spelling_scan_finds_what_it_forbids(source, n_found):
    assert len(option_literals(source)) == n_found


def test_the_cluster_exponent_has_one_name():
    # e of each cluster's weight (|C|/n)^e is ``cluster_exponent`` from the estimators to
    # the kernels' arguments; the kernels derive their p = 2 - e themselves.
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            name = (node.id if isinstance(node, ast.Name) else node.attr
                    if isinstance(node, ast.Attribute) else node.arg
                    if isinstance(node, ast.arg) else getattr(node, "name", None))
            assert name != "size_power", f"{module_name(path)}:{node.lineno} names e {name}"


# ---------------------------------------------------------------------------- the size


def code_lines(source):
    """Number of lines holding code: not blank, not a comment, not a docstring."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(n for n in range(token.start[0], token.end[0] + 1)
                         if n not in docstrings)
    return len(lines)


def test_code_lines_count_code_only():
    source = ('"""Doc.\n\nMore."""\n\n# a comment\nx = (1,\n     2)\n\n\n'
              'def f():\n    """Doc."""\n    return x\n')
    assert code_lines(source) == 4


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_file_holds_more_than_450_lines_of_code(path):
    n_lines = code_lines(path.read_text())
    if module_name(path) in LONGER:
        return
    assert n_lines <= MAX_CODE_LINES, f"{module_name(path)} has {n_lines} lines of code"


def test_every_longer_file_is_one():
    assert all(is_module(name) for name in LONGER)
