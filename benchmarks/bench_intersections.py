"""Forming intersections: the factorised tuples against the row-by-row join they replace.

Issue 22 item 2 / issue 23 item 2. Two attributes (sex: 2 values, race: 5) of
``--rows`` rows (default 1,000,000), one intersection ("sex & race"). It times
``with_intersections`` (the combined column) and ``check_sensitive_features``
on its output (the encoding every estimator then runs), best of three, and the
former rule (each row's values joined by ``" & "`` with pandas' ``agg``) on a
tenth of the rows, extrapolated linearly. The target is under 2 s for 1M rows.

Run: ``python benchmarks/bench_intersections.py [--rows N]``.
"""

import argparse
import time

import numpy as np
import pandas as pd

from fairkm.utils._sensitive import check_sensitive_features, with_intersections


def best_of(func, repeat=3):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def joined_row_by_row(frame, group):
    """The former rule: the members' printed values joined row by row."""
    return frame[list(group)].astype(str).agg(" & ".join, axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    n = parser.parse_args().rows
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "sex": rng.choice(["Female", "Male"], n),
        "race": rng.choice(["White", "Black", "Asian", "Amer-Indian", "Other"], n),
    })
    pair = [("sex", "race")]
    combine = best_of(lambda: with_intersections(frame, pair))
    combined = with_intersections(frame, pair)
    encode = best_of(lambda: check_sensitive_features(combined))
    tenth = frame.iloc[: n // 10]
    former = best_of(lambda: joined_row_by_row(tenth, pair[0]), repeat=1) * 10
    # The same groups either way (no value of these columns holds " & ").
    head = frame.iloc[:1000]
    assert (combined["sex & race"].iloc[:1000] == joined_row_by_row(head, pair[0])).all()
    print(f"{n:,} rows, one pair: combine {combine:.3f} s, encode {encode:.3f} s, "
          f"total {combine + encode:.3f} s (target < 2 s)")
    print(f"former row-by-row join: {former:.1f} s (a tenth of the rows, x10); "
          f"{former / combine:.0f}x the factorised combination")


if __name__ == "__main__":
    main()
