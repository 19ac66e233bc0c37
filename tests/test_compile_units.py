"""numba's on-disk cache never runs an edited helper stale: a kernel and its helpers share a file.

numba's ``cache=True`` stamps a compiled kernel with its own source file only,
and compiles the functions it calls (or inlines) into it. A throwaway package
shows both halves in fresh processes: a helper edited in the caller's file is
recompiled, one in another file is not. The source is then read to check that
every kernel of fairkm is cached and calls nothing compiled in another file.
"""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "fairkm"

HELPER = """\
    @numba.njit(cache=True, inline={inline!r})
    def offset(x):
        return x + {value}
    """
CALLER = """\
    @numba.njit(cache=True)
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


def write_package(root, *, same_file, inline, value):
    package = root / "tiny"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    helper = textwrap.dedent(HELPER.format(inline=inline, value=value))
    caller = textwrap.dedent(CALLER)
    if same_file:
        (package / "caller.py").write_text(f"import numba\n\n\n{helper}\n\n{caller}")
    else:
        (package / "helper.py").write_text(f"import numba\n\n\n{helper}")
        imports = "import numba\n\nfrom .helper import offset\n"
        (package / "caller.py").write_text(f"{imports}\n\n{caller}")


def run(root):
    """Call ``tiny.caller.call(1)`` in a fresh process; its value and cache counts."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    # Python's own bytecode cache is keyed by mtime in seconds and size: it
    # must not be what serves the old helper.
    environ.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1",
                   NUMBA_CACHE_DIR=str(root / "cache"))
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          env=environ, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# call(1) = (1 + value) * 2 with the helper's value: 4 for 1, 22 for 10.
@pytest.mark.parametrize("inline", ["always", "never"])
def test_a_helper_edited_in_the_kernels_file_is_recompiled(tmp_path, inline):
    write_package(tmp_path, same_file=True, inline=inline, value=1)
    assert run(tmp_path) == {"value": 4, "hits": 0, "misses": 1}
    assert run(tmp_path) == {"value": 4, "hits": 1, "misses": 0}
    write_package(tmp_path, same_file=True, inline=inline, value=10)
    assert run(tmp_path) == {"value": 22, "hits": 0, "misses": 1}


@pytest.mark.parametrize("inline", ["always", "never"])
def test_a_helper_edited_in_another_file_runs_stale(tmp_path, inline):
    # Why a compile unit is one file; if numba ever recompiles here, the rule may go.
    write_package(tmp_path, same_file=False, inline=inline, value=1)
    assert run(tmp_path)["value"] == 4
    write_package(tmp_path, same_file=False, inline=inline, value=10)
    assert run(tmp_path) == {"value": 4, "hits": 1, "misses": 0}


def test_the_jit_switched_off_gives_the_python_function():
    code = ("import inspect; from fairkm.cluster._kernels import minibatch_epoch; "
            "print(inspect.isfunction(minibatch_epoch))")
    environ = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]


# --- the source: every kernel is cached and calls only kernels of its own file --------


def jit_call(decorator):
    """The ``numba.njit(...)``/``numba.jit(...)`` call of a decorator, or None."""
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
            and decorator.func.attr in {"jit", "njit"} and isinstance(decorator.func.value,
                                                                   ast.Name) \
            and decorator.func.value.id == "numba":
        return decorator
    return None


def kernel_files():
    """``{relative path: (tree, {kernel name: its decorator call})}`` of every file with kernels."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        found = {node.name: call for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                 for call in map(jit_call, node.decorator_list) if call is not None}
        if found:
            out[path.relative_to(PACKAGE).as_posix()] = (tree, found)
    return out


def test_the_kernel_files_are_the_compile_units():
    assert set(kernel_files()) == {
        "cluster/_kernels.py", "cluster/_zgya_kernels.py", "bounds/_kernels.py",
        "bounds/_search_kernels.py", "bounds/_dual.py",
    }


def test_every_kernel_is_cached_on_disk():
    uncached = [(name, kernel) for name, (_, found) in kernel_files().items()
                for kernel, call in found.items()
                if not any(k.arg == "cache" and getattr(k.value, "value", None) is True
                           for k in call.keywords)]
    assert uncached == []


def test_kernels_use_nothing_of_fairkm_from_another_file():
    # numba compiles a called function or a global constant into the caller: one from
    # another file of fairkm would not be stamped with the kernel's file.
    outside = []
    for name, (tree, found) in kernel_files().items():
        foreign = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                     .startswith("fairkm")):
                foreign |= {alias.asname or alias.name for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in found:
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                outside += [(name, node.name, used_name) for used_name in used & foreign]
    assert outside == []


def test_the_check_sees_a_foreign_helper(tmp_path):
    source = ("import numba\nfrom .other import helper\n\n"
              "@numba.njit(cache=True)\ndef kernel(x):\n    return helper(x)\n")
    tree = ast.parse(source)
    kernel = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    assert jit_call(kernel.decorator_list[0]) is not None
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert imported & {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)} == {"helper"}
