"""Cold start: a first FairKM fit against a warm one, each run in a fresh process.

Every measurement runs in a new Python process, with numba's cache directory
pointed (``NUMBA_CACHE_DIR``) at a temporary directory of its own: numba then
writes and reads every kernel's cache there instead of beside the installed
(or editable) sources, so a run sees exactly the cache it was given.

For each repeat:

(a) **cold**: an empty cache directory; the process imports fairkm, fits a
    default :class:`fairkm.FairKM` on small built-in data (2,000
    :func:`fairkm.datasets.make_sensitive_blobs` rows, as in the README's
    quickstart) and fits it again (the warm fit);
(b) **cached**: a new process given the directory (a) filled, fitting the same.

It prints ``import fairkm``'s time, the first and the warm fit's, the
differences cold - warm and cached - warm (and as multiples of the warm fit),
the process's CPU time cold - warm (compilation is single-threaded: on a shared
machine this is the steadier figure),
the medians over the repeats, and for the cold run each kernel numba compiled
(its signatures, and the seconds spent compiling it, callees included) and
how many loads from the cache the cached run made. A kernel compiled in the
cached run, or for two signatures, is named: both are compilation a first fit
should not need.

``--max-deviation 0.05`` fits with that bound instead (a first bounded fit also
compiles the bounded assignment and its local search).

Run: ``python benchmarks/bench_cold.py [--repeats 3] [--n-samples 2000] [--max-deviation D]
[--verbose]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

# The child: times import and two fits, then lists every numba dispatcher of
# fairkm's modules with its signatures, cache hits and misses, and the seconds
# its outermost compilations took (numba's "numba:compile" event fires on a
# cache miss only; nested events are callees compiled while typing a caller).
CHILD = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import fairkm
    t_import = time.perf_counter() - start
    from numba.core import event
    from numba.core.registry import CPUDispatcher

    compile_seconds, stack = {}, []

    class Timer(event.Listener):
        def on_start(self, ev):
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            start, nested = stack.pop()
            spent = time.perf_counter() - start
            if stack:
                stack[-1][1] += spent
            d = ev.data["dispatcher"]
            key = f"{d.py_func.__module__}.{d.py_func.__name__}"
            compile_seconds.setdefault(key, [0.0, 0.0])
            compile_seconds[key][0] += spent - nested
            compile_seconds[key][1] += spent if not stack else 0.0

    event.register("numba:compile", Timer())
    from fairkm import FairKM
    from fairkm.datasets import make_sensitive_blobs

    X, sensitive, _ = make_sensitive_blobs(int(sys.argv[1]), n_values=(2, 5), numeric=1,
                                           random_state=0)
    bound = None if sys.argv[2] == "none" else float(sys.argv[2])
    times, cpu = [], []
    for _ in range(2):
        start, start_cpu = time.perf_counter(), time.process_time()
        FairKM(n_clusters=4, max_deviation=bound, random_state=0).fit(
            X, sensitive_features=sensitive)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    kernels = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("fairkm"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                key = f"{name}.{value.py_func.__name__}"
                kernels[key] = {
                    "signatures": [str(s) for s in value.signatures],
                    "hits": sum(value.stats.cache_hits.values()),
                    "misses": sum(value.stats.cache_misses.values()),
                    "self_s": compile_seconds.get(key, [0.0, 0.0])[0],
                    "outermost_s": compile_seconds.get(key, [0.0, 0.0])[1],
                }
    print(json.dumps({"import": t_import, "first": times[0], "warm": times[1],
                      "first_cpu": cpu[0], "warm_cpu": cpu[1], "kernels": kernels}))
""")


def run_child(cache_dir, n_samples, bound):
    """Run the child in a fresh process with ``cache_dir`` as numba's cache; return its record."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(n_samples), str(bound).lower()],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def describe(label, record):
    warm = record["warm"]
    print(f"  {label:7s} import {record['import']:6.2f} s   first fit {record['first']:7.2f} s   "
          f"warm fit {warm:6.3f} s   first - warm {record['first'] - warm:7.2f} s "
          f"({(record['first'] - warm) / warm:7.1f}x the warm fit); CPU first - warm "
          f"{record['first_cpu'] - record['warm_cpu']:6.2f} s")


def compiled_kernels(record):
    """The kernels compiled in a run, costliest first: (name, seconds, signatures)."""
    rows = [(name, k["self_s"], k["outermost_s"], k["signatures"])
            for name, k in record["kernels"].items() if k["misses"]]
    return sorted(rows, key=lambda r: -r[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-samples", type=int, default=2000)
    parser.add_argument("--max-deviation", type=float, default=None,
                        help="fit with this bound (FairKM's max_deviation): the bounded "
                             "assignment's kernels compile too")
    parser.add_argument("--verbose", action="store_true", help="list every compiled kernel")
    args = parser.parse_args()

    cold_over, cached_over, imports, ratios, cpu_over = [], [], [], [], []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="fairkm-numba-cache-") as cache_dir:
            cold = run_child(cache_dir, args.n_samples, args.max_deviation)
            cached = run_child(cache_dir, args.n_samples, args.max_deviation)
        print(f"repeat {repeat + 1}:")
        describe("cold", cold)
        describe("cached", cached)
        cold_over.append(cold["first"] - cold["warm"])
        cached_over.append(cached["first"] - cached["warm"])
        ratios.append((cold["first"] - cold["warm"]) / cold["warm"])
        imports.append(cold["import"])
        cpu_over.append(cold["first_cpu"] - cold["warm_cpu"])
        compiled = compiled_kernels(cold)
        several = [name for name, _, _, sigs in compiled if len(sigs) > 1]
        recompiled = [name for name, *_ in compiled_kernels(cached)]
        print(f"  cold run compiled {len(compiled)} kernels "
              f"({sum(len(s) for *_, s in compiled)} signatures); cached run loaded "
              f"{sum(k['hits'] for k in cached['kernels'].values())} from the cache and compiled "
              f"{len(recompiled)}{': ' + ', '.join(recompiled) if recompiled else ''}")
        if several:
            print(f"  compiled for several signatures: {', '.join(several)}")
        if args.verbose or repeat == 0:
            print("    own s  called s  kernel (own: its compilation less its callees'; "
                  "called: when compiled for a call from Python, callees included)")
            for name, own, outer, sigs in compiled[:None if args.verbose else 8]:
                print(f"    {own:5.2f}  {outer:8.2f}  {name}  {' | '.join(sigs)[:120]}")
    print(f"\nmedians over {args.repeats}: import fairkm {statistics.median(imports):.2f} s; "
          f"cold - warm {statistics.median(cold_over):.2f} s "
          f"({statistics.median(ratios):.0f}x the warm fit); "
          f"cached - warm {statistics.median(cached_over):.2f} s; CPU time cold - warm "
          f"{statistics.median(cpu_over):.2f} s")


if __name__ == "__main__":
    main()
