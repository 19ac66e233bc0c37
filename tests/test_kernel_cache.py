"""The kernels' on-disk cache goes stale with none of the files a kernel uses.

A throwaway two-file package (a caller in one file, its helper in another) is
imported in fresh processes, before and after the helper is edited; then the
source is read to check that every cached kernel of fairkm is compiled the same way.
"""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fairkm._kernel_cache import KERNEL_FILES, cached_njit, content_key

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "fairkm"

KEYED = {
    "jit": """\
        import os
        from fairkm._kernel_cache import content_keyed_njit
        njit = content_keyed_njit(os.path.dirname(__file__), ("helper.py", "caller.py"))
        """,
    "import": "from ._jit import njit",
    "decorator": "njit({options})",
}
PLAIN = {"jit": "", "import": "import numba", "decorator": "numba.njit(cache=True, {options})"}

HELPER = """\
    {import}

    @{helper}
    def offset(x):
        return x + {value}
    """
CALLER = """\
    {import}
    from .helper import offset

    @{caller}
    def call(x):
        return offset(x) * 2
    """
RUN = """\
import json
from tiny.caller import call
print(json.dumps({
    "value": call(1),
    "hits": sum(call.stats.cache_hits.values()),
    "misses": sum(call.stats.cache_misses.values()),
}))
"""


def write_helper(root, style, inline, value):
    helper = style["decorator"].format(options=f"inline={inline!r}")
    text = HELPER.format(**{"import": style["import"], "helper": helper, "value": value})
    (root / "tiny" / "helper.py").write_text(textwrap.dedent(text))


def make_package(root, style, inline):
    package = root / "tiny"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_jit.py").write_text(textwrap.dedent(style["jit"]))
    caller = style["decorator"].format(options="")
    text = CALLER.format(**{"import": style["import"], "caller": caller})
    (package / "caller.py").write_text(textwrap.dedent(text))
    write_helper(root, style, inline, value=1)


def run(root, **env):
    """Call ``tiny.caller.call(1)`` in a fresh process; its value and cache counts."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    # Python's own bytecode cache is keyed by mtime in seconds and size: it
    # must not be what serves the old helper.
    environ.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", **env)
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          env=environ, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# call(1) = (1 + value) * 2 with the helper's value: 4 for 1, 22 for 10.
@pytest.mark.parametrize("inline", ["always", "never"])
def test_editing_a_helper_recompiles_its_caller(tmp_path, inline):
    make_package(tmp_path, KEYED, inline)
    cache = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cold = run(tmp_path, **cache)
    assert (cold["value"], cold["hits"], cold["misses"]) == (4, 0, 1)
    warm = run(tmp_path, **cache)
    assert (warm["value"], warm["hits"], warm["misses"]) == (4, 1, 0)

    write_helper(tmp_path, KEYED, inline, value=10)
    edited = run(tmp_path, **cache)
    assert (edited["value"], edited["hits"], edited["misses"]) == (22, 0, 1)
    assert run(tmp_path, **cache)["hits"] == 1


@pytest.mark.parametrize("inline", ["always", "never"])
def test_plain_numba_cache_keeps_the_old_helper(tmp_path, inline):
    # The failure the keyed cache exists for; if numba ever recompiles here,
    # fairkm._kernel_cache may be retired.
    make_package(tmp_path, PLAIN, inline)
    cache = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    assert run(tmp_path, **cache)["value"] == 4
    write_helper(tmp_path, PLAIN, inline, value=10)
    assert run(tmp_path, **cache) == {"value": 4, "hits": 1, "misses": 0}


@pytest.mark.parametrize("where", ["in-tree", "user-wide"])
def test_the_keyed_cache_lives_where_numba_puts_it(tmp_path, where):
    make_package(tmp_path, KEYED, "always")
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    if where == "user-wide":
        # A __pycache__ that cannot be a folder, as in a read-only install
        # (chmod would not stop a root user).
        (tmp_path / "tiny" / "__pycache__").write_text("")
    assert run(tmp_path, **env)["value"] == 4
    write_helper(tmp_path, KEYED, "always", value=10)
    assert run(tmp_path, **env) == {"value": 22, "hits": 0, "misses": 1}

    in_tree = list((tmp_path / "tiny").glob("__pycache__/caller.call-*.nbi"))
    user_wide = list((home / ".cache" / "numba").glob("tiny_*/caller.call-*.nbi"))
    assert (len(in_tree), len(user_wide)) == ((1, 0) if where == "in-tree" else (0, 1))


def test_the_jit_switched_off_gives_the_python_function(tmp_path):
    code = "import inspect; from fairkm._kernels import sweep; print(inspect.isfunction(sweep))"
    environ = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]


def test_a_kernel_cannot_be_asked_not_to_cache():
    with pytest.raises(TypeError, match="cache=False"):
        cached_njit(cache=False)


def test_the_content_key_follows_every_byte_and_the_boundaries(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    before = content_key(tmp_path, ("a.py", "b.py"))
    assert content_key(tmp_path, ("a.py", "b.py")) == before
    (tmp_path / "b.py").write_text("y = 3\n")
    assert content_key(tmp_path, ("a.py", "b.py")) != before
    # The same bytes split differently across the files are another key.
    (tmp_path / "a.py").write_text("ab")
    (tmp_path / "b.py").write_text("c")
    split = content_key(tmp_path, ("a.py", "b.py"))
    (tmp_path / "a.py").write_text("a")
    (tmp_path / "b.py").write_text("bc")
    assert content_key(tmp_path, ("a.py", "b.py")) != split


# --- the source: every cached kernel of fairkm goes through cached_njit -----


def sources():
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text())
            for path in sorted(PACKAGE.rglob("*.py"))}


def is_numba_jit(call):
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in {"jit", "njit"} and isinstance(func.value, ast.Name) \
            and func.value.id == "numba"
    return isinstance(func, ast.Name) and func.id in {"jit", "njit"}


def kernels(tree):
    """The functions of a module decorated with ``@cached_njit(...)``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) \
                        and decorator.func.id == "cached_njit":
                    yield node


def test_no_kernel_is_cached_by_numba_alone():
    cached = [
        (name, node.lineno) for name, tree in sources().items() for node in ast.walk(tree)
        if isinstance(node, ast.Call) and is_numba_jit(node)
        and any(k.arg == "cache" for k in node.keywords)
    ]
    assert cached == [], "use fairkm._kernel_cache.cached_njit for a cached kernel"


def test_the_content_key_covers_every_kernel_file():
    with_kernels = {name for name, tree in sources().items() if any(kernels(tree))}
    assert with_kernels == set(KERNEL_FILES) - {"_kernel_cache.py"}
    assert all((PACKAGE / name).is_file() for name in KERNEL_FILES)


def test_kernels_use_no_name_from_outside_the_key():
    # numba compiles a called function or a global constant into the caller:
    # one from a module outside KERNEL_FILES could change unseen.
    outside = []
    for name, tree in sources().items():
        if name not in KERNEL_FILES:
            continue
        package = Path(name).parent
        foreign = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.joinpath(*[".."] * (node.level - 1), *(node.module or "").split("."))
                module = os.path.normpath(base).replace(os.sep, "/") + ".py"
                if module not in KERNEL_FILES:
                    foreign |= {alias.asname or alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fairkm"):
                foreign |= {alias.asname or alias.name for alias in node.names}
        for kernel in kernels(tree):
            used = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)}
            outside += [(name, kernel.name, used_name) for used_name in used & foreign]
    assert outside == []
