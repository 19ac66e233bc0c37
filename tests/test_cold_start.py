"""A first fit compiles each kernel once, and a later process loads it from numba's cache.

numba compiles a kernel once per type of its arguments, and a read-only array
is another type than a writable one: the kernels take every array they only
read as a read-only view (:func:`fairkm.cluster._terms.read_only`), so that the
user's writable, read-only, Fortran-ordered or float32 ``X`` all reach them as
one type. Fresh processes fit with each of these and report every kernel's
signatures, and how many it compiled rather than loaded from the cache.
"""

import json
import os
import subprocess
import sys

import numpy as np

from fairkm.cluster._terms import read_only

# Fits with one kind of input each, then every dispatcher of fairkm's kernel
# modules: its signatures (literal booleans dropped: the sweep is compiled once
# for unit and once for sample weights, by design) and its cache misses.
CHILD = """
import json, sys, warnings
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher
from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs

warnings.simplefilter("ignore")
X, sensitive, _ = make_sensitive_blobs(300, n_values=(2, 3), numeric=1, random_state=0)
frozen = X.copy()
frozen.flags.writeable = False
weights = np.arange(300) % 3 + 1.0
weights.flags.writeable = False
inputs = [X, frozen, np.asfortranarray(X), X.astype(np.float32)]
for rows in inputs:
    model = FairKM(n_clusters=3, n_init=1, random_state=0).fit(rows, sensitive_features=sensitive)
    model.predict(rows)
    model.predict(rows, sensitive_features=sensitive)
    model.score(rows, sensitive_features=sensitive)
FairKM(n_clusters=3, n_init=1, random_state=0).fit(frozen, sensitive_features=sensitive,
                                                   sample_weight=weights)
FairKM(n_clusters=3, n_init=1, random_state=0).fit(X, sensitive_features=sensitive,
                                                   sample_weight=weights.copy())
out = {}
for name, module in list(sys.modules.items()):
    if name.startswith("fairkm") and name.endswith("_kernels"):
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                signatures = {tuple(str(t) for t in sig if not isinstance(t, types.BooleanLiteral))
                              for sig in value.signatures}
                out[f"{name}.{value.py_func.__name__}"] = {
                    "signatures": sorted(signatures),
                    "misses": sum(value.stats.cache_misses.values()),
                }
print(json.dumps(out))
"""


def run_child():
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=environ, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_read_only_is_a_view_that_copies_nothing():
    a = np.arange(6.0).reshape(2, 3)
    view = read_only(a)
    assert not view.flags.writeable and a.flags.writeable
    assert np.shares_memory(view, a) and view.shape == a.shape
    assert read_only(view) is view


def test_every_kind_of_input_reaches_each_kernel_as_one_signature_and_loads_from_the_cache():
    run_child()  # compiles what the cache lacks
    kernels = run_child()
    assert "fairkm.cluster._kernels._unit_sweep" in kernels
    assert "fairkm.cluster._kernels.nearest_center" in kernels
    several = {name: k["signatures"] for name, k in kernels.items() if len(k["signatures"]) > 1}
    assert several == {}
    # every kernel called from Python was loaded from the first process's cache
    assert kernels["fairkm.cluster._kernels._unit_sweep"]["signatures"]
    compiled = {name: k["misses"] for name, k in kernels.items() if k["misses"]}
    assert compiled == {}
