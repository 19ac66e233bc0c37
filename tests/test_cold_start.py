"""A first fit compiles each kernel it runs once, and a later process loads it from the cache.

numba compiles a kernel once per type of its arguments, and a constant passed
from one kernel to another is typed as a literal of its own (a cold first
fit's every extra signature costs about a second): a call with a literal 0
beside one with a start known at run time compiled ``patch_distances`` twice, and
five kernels of the bounded local search were compiled twice each so. A fresh
process fits the way a user does (default FairKM with and without sample
weights, predict, score, a bounded fit with and without them) and lists every
kernel's signatures and how many it compiled rather than loaded from numba's
cache.
"""

import json
import os
import subprocess
import sys

import pytest

CHILD = """
import json, sys, warnings
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher
from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs

warnings.simplefilter("ignore")
X, sensitive, _ = make_sensitive_blobs(300, n_values=(2, 3), numeric=1, random_state=0)
weights = np.arange(300) % 3 + 1.0
model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive)
model.predict(X)
model.predict(X, sensitive_features=sensitive)
model.score(X, sensitive_features=sensitive)
FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive, sample_weight=weights)
# A bound's assignment and local search, with and without sample weights.
bounded = FairKM(n_clusters=3, max_deviation=0.1, random_state=0)
bounded.fit(X, sensitive_features=sensitive)
bounded.fit(X, sensitive_features=sensitive, sample_weight=weights)
out = {}
for name, module in list(sys.modules.items()):
    if name.startswith("fairkm") and name.endswith("_kernels"):
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                # The sweep is one kernel per literal ``weighted`` flag, by design.
                signatures = {tuple(str(t) for t in sig if not isinstance(t, types.BooleanLiteral))
                              for sig in value.signatures}
                out[f"{name}.{value.py_func.__name__}"] = {
                    "signatures": sorted(signatures),
                    "misses": sum(value.stats.cache_misses.values()),
                }
print(json.dumps(out))
"""


def run_child(cache_dir):
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    environ["NUMBA_CACHE_DIR"] = str(cache_dir)
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=environ, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_fit_compiles_each_kernel_once_and_a_later_process_loads_them_from_the_cache(
        tmp_path):
    # An empty cache of its own: every kernel the fits run is compiled here, callees included.
    cold = run_child(tmp_path)
    for name in ("_sweep", "patch_distances", "nearest_center"):
        assert cold[f"fairkm.cluster._kernels.{name}"]["signatures"], name
    several = {name: k["signatures"] for name, k in cold.items() if len(k["signatures"]) > 1}
    # The sweep by design: one signature without sample weights (None), one with them.
    sweeps = several.pop("fairkm.cluster._kernels._sweep")
    assert sorted(signature[-1] for signature in sweeps) == ["array(float64, 1d, C)", "none"]
    assert all(signature[:-1] == sweeps[0][:-1] for signature in sweeps)
    assert several == {}
    # A later process loads what it calls from that cache (callees come with their callers).
    cached = run_child(tmp_path)
    assert cached["fairkm.cluster._kernels._sweep"]["signatures"]
    compiled = {name: k["misses"] for name, k in cached.items() if k["misses"]}
    assert compiled == {}
