"""Intersectional groups in fairkm.metrics: combined attributes such as "sex & race"."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm import metrics

from .conftest import examples

FAIRNESS = {m.name: m.function for m in metrics.MEASURES.values() if m.kind == "fairness"}


def _combined(frame, names):
    """The reference combined column: the members' values joined by " & ", row by row."""
    return [" & ".join(str(frame[name].iloc[i]) for name in names) for i in range(len(frame))]


@st.composite
def groups(draw):
    n = draw(st.integers(2, 30))
    column = lambda values: st.lists(st.sampled_from(values), min_size=n, max_size=n)  # noqa: E731
    frame = pd.DataFrame({
        "sex": draw(column(["F", "M"])),
        "race": draw(column(["A", "B", "C"])),
        "band": draw(column([1, 2])),
        "age": np.array(draw(st.lists(st.integers(18, 30), min_size=n, max_size=n)), float),
    })
    assume(frame["age"].std() > 0)
    labels = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    weights = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5]), min_size=n,
                                     max_size=n)))
    assume(weights.sum() > 0 and frame["age"][weights > 0].std() > 0)
    return frame, labels, weights


INTERSECTIONS = [("sex", "race"), ("race", "sex", "band")]


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(problem=groups(), weighted=st.booleans())
def test_intersection_rows_are_the_combined_attributes(problem, weighted):
    frame, labels, weights = problem
    sample_weight = weights if weighted else None
    report = metrics.fairness_report(labels, sensitive_features=frame,
                                     intersections=INTERSECTIONS, sample_weight=sample_weight)
    names = ["sex & race", "race & sex & band"]
    assert list(report.index) == [*frame.columns, *names, "mean"]
    by_hand = frame.assign(**{name: _combined(frame, group)
                              for name, group in zip(names, INTERSECTIONS, strict=True)})
    want = metrics.fairness_report(labels, sensitive_features=by_hand,
                                   sample_weight=sample_weight)
    pd.testing.assert_frame_equal(report, want, check_exact=True)
    # The mean row averages every row above it, the intersections included.
    assert_allclose(report.loc["mean"].to_numpy(float),
                    report.drop(index="mean").mean(axis=0).to_numpy(float), rtol=1e-12)
    for name, func in FAIRNESS.items():
        raw = func(labels, sensitive_features=frame, intersections=INTERSECTIONS,
                   sample_weight=sample_weight, multioutput="raw_values")
        assert_allclose(raw, report.drop(index="mean")[name].to_numpy(float), rtol=1e-12,
                        err_msg=name)


def test_no_intersections_changes_nothing():
    frame = pd.DataFrame({"sex": list("FMFMFM"), "race": list("AABBCA")})
    labels = [0, 0, 0, 1, 1, 1]
    base = metrics.fairness_report(labels, sensitive_features=frame)
    for empty in (None, []):
        pd.testing.assert_frame_equal(
            metrics.fairness_report(labels, sensitive_features=frame, intersections=empty),
            base, check_exact=True,
        )


def _rare_combination_data():
    """200 people; the combination F & B is rare (2 rows), every other one common.

    Counts: M & A 50, M & B 50, F & A 98, F & B 2, so the dataset's mix of the
    combined attribute is r = (M&A .25, M&B .25, F&A .49, F&B .01) in sorted order
    (F & A, F & B, M & A, M & B) = (.49, .01, .25, .25).
    """
    sex = ["M"] * 100 + ["F"] * 100
    race = ["A"] * 50 + ["B"] * 50 + ["A"] * 98 + ["B"] * 2
    frame = pd.DataFrame({"sex": sex, "race": race})
    # split: each cluster gets half of every combination (one rare row each), so both
    # clusters have the dataset's mix. together: both rare rows in cluster 0, and one
    # F & A row moves to cluster 1 to keep 100 rows per cluster.
    split = np.zeros(200, dtype=int)
    split[25:50] = split[75:100] = split[149:198] = 1
    split[199] = 1
    together = split.copy()
    together[199] = 0
    together[100] = 1  # an F & A row of cluster 0
    return frame, split, together


def test_rare_combination_drives_balance_and_kl_not_ae():
    frame, split, together = _rare_combination_data()
    name = "sex & race"
    fair = metrics.fairness_report(split, sensitive_features=frame,
                                   intersections=[("sex", "race")])
    # Every cluster has the dataset's mix: no deviation; balance is the dataset's own
    # smallest over largest count, 1 / 49, set by the rare combination.
    assert_allclose(fair.loc[name, ["AE", "AW", "ME", "MW", "KL", "MPV"]].to_numpy(float), 0,
                    atol=1e-15)
    assert fair.loc[name, "balance"] == pytest.approx(1 / 49, rel=1e-12)

    moved = metrics.fairness_report(together, sensitive_features=frame,
                                    intersections=[("sex", "race")])
    # Cluster 0: (F&A .48, F&B .02, .25, .25); cluster 1: (.50, 0, .25, .25). Each differs
    # from r by .01 in two values: AE = ME = .01 sqrt(2), AW = MW = .01 (total variation).
    row = moved.loc[name]
    assert row["AE"] == pytest.approx(0.01 * math.sqrt(2), rel=1e-9)
    assert row["AW"] == pytest.approx(0.01, rel=1e-9)
    # balance: cluster 1 has no F & B row.
    assert row["balance"] == 0.0
    # KL: cluster 1 misses F & B, floored at 1e-20: .01 ln(.01 / 1e-20) = .01 (ln .01 + 46.05),
    # about 0.41, against .49 ln(.49/.48) + .01 ln(.01/.02) + .49 ln(.49/.50) for the rest.
    missing = 0.01 * math.log(0.01 / 1e-20)
    rest = 0.49 * math.log(0.49 / 0.48) + 0.01 * math.log(0.5) + 0.49 * math.log(0.49 / 0.5)
    assert row["KL"] == pytest.approx(missing + rest, rel=1e-9)
    # MPV: the rare band is [.008, .0125]; cluster 1's 0 misses it by .008 = (1 - delta) p,
    # cluster 0's .02 exceeds it by .0075. Violated, but only by about p.
    assert row["MPV"] == pytest.approx(0.008, rel=1e-9)
    # The race attribute deviates as much by AE (B: 27 and 25 of 100 against .26 overall),
    # but keeps both values in both clusters: its KL is hundreds of times smaller and its
    # balance far from 0.
    assert moved.loc["race", "AE"] == pytest.approx(row["AE"], rel=1e-9)
    assert moved.loc["race", "balance"] == pytest.approx(25 / 75, rel=1e-12)
    assert row["KL"] > 500 * moved.loc["race", "KL"]


def test_small_cluster_concentrating_a_rare_combination_drives_mpv():
    frame, split, _ = _rare_combination_data()
    labels = split.copy()
    labels[[198, 199]] = 2  # a third cluster holding just the two F & B rows
    row = metrics.fairness_report(labels, sensitive_features=frame,
                                  intersections=[("sex", "race")]).loc["sex & race"]
    # That cluster is all F & B: 1 - .01 / 0.8 above the band.
    assert row["MPV"] == pytest.approx(1 - 0.0125, rel=1e-12)
    assert row["balance"] == 0.0
    # AE weighs the small cluster by its share (2 of 200); the other two clusters have each
    # lost their rare row: (F&A 49, F&B 0, M&A 25, M&B 25) of 99.
    r = np.array([0.49, 0.01, 0.25, 0.25])
    clusters = [np.array([49, 0, 25, 25]) / 99, np.array([49, 0, 25, 25]) / 99,
                np.array([0, 1.0, 0, 0])]
    sizes = np.array([99, 99, 2])
    ae = sum(s * np.linalg.norm(p - r) for s, p in zip(sizes, clusters, strict=True)) / 200
    assert row["AE"] == pytest.approx(ae, rel=1e-12)


def test_unobserved_combinations_are_no_groups():
    # Race C occurs only with M: F & C is no value, so it cannot make a cluster "miss" it.
    frame = pd.DataFrame({"sex": list("FFMMMM"), "race": list("AAACCA")})
    labels = [0, 1, 0, 1, 0, 1]
    row = metrics.fairness_report(labels, sensitive_features=frame,
                                  intersections=[("sex", "race")]).loc["sex & race"]
    # Values F & A, M & A, M & C, one row each per cluster: the dataset's mix everywhere.
    assert row["balance"] == 1.0
    assert row["KL"] == 0.0
    assert row["AE"] == 0.0


def test_zero_weight_rows_leave_their_combinations_out():
    frame = pd.DataFrame({"sex": list("FFMMF"), "race": list("ABABB")})
    labels = [0, 1, 0, 1, 1]
    # The only F & B rows weigh 0 and 0: as if they were dropped.
    weights = [1, 0, 1, 1, 0]
    got = metrics.fairness_report(labels, sensitive_features=frame, sample_weight=weights,
                                  intersections=[("sex", "race")])
    keep = np.array(weights) > 0
    want = metrics.fairness_report(np.array(labels)[keep], sensitive_features=frame[keep],
                                   intersections=[("sex", "race")])
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.parametrize(
    ("intersections", "match"),
    [
        ([("sex", "income")], "names \\['income'\\], which are not sensitive attributes"),
        ([("sex", "age")], "includes numeric attributes \\['age'\\]"),
        ([("sex",)], "two or more attributes"),
        ([("sex", "sex")], "names an attribute twice"),
    ],
)
def test_bad_intersections(intersections, match):
    frame = pd.DataFrame({"sex": list("FM"), "age": [20.0, 30.0]})
    for func in (metrics.fairness_report, metrics.average_euclidean, metrics.balance):
        with pytest.raises(ValueError, match=match):
            func([0, 1], sensitive_features=frame, intersections=intersections)


def test_intersections_of_arrays_use_positional_names():
    S = np.array([["F", "A"], ["M", "B"], ["F", "B"], ["M", "A"]])
    report = metrics.fairness_report([0, 0, 1, 1], sensitive_features=S,
                                     intersections=[("s0", "s1")])
    assert list(report.index) == ["s0", "s1", "s0 & s1", "mean"]
    # Four combinations, one row each: every cluster misses two of them.
    assert report.loc["s0 & s1", "balance"] == 0.0


# --------------------------------------------------------------------------- collisions
#
# A combination is the tuple of its members' values, not the text they join to:
# ("Sales & Marketing", "Ops") and ("Sales", "Marketing & Ops") are two groups.


def _colliding(n_per_group=20):
    """Two groups whose members' texts joined by " & " read alike, in equal numbers."""
    frame = pd.DataFrame({
        "dept": ["Sales & Marketing"] * n_per_group + ["Sales"] * n_per_group,
        "team": ["Ops"] * n_per_group + ["Marketing & Ops"] * n_per_group,
    })
    group = np.repeat([0, 1], n_per_group)  # the tuple each row holds
    return frame, group


def test_colliding_texts_stay_two_groups_in_fairness_report():
    frame, group = _colliding()
    report = metrics.fairness_report(group, sensitive_features=frame,
                                     intersections=[("dept", "team")])
    # Each cluster holds one of two equal groups: ||(1, 0) - (.5, .5)|| = sqrt(.5) in each.
    row = report.loc["dept & team"]
    assert row["AE"] == pytest.approx(math.sqrt(0.5), rel=1e-12)
    assert row["balance"] == 0.0


def test_colliding_texts_stay_two_groups_in_fairkm():
    from fairkm import FairKM

    frame, group = _colliding()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(len(frame), 2)) + 4.0 * group[:, None]
    model = FairKM(2, intersections=[("dept", "team")], random_state=0).fit(
        X, sensitive_features=frame)
    assert list(model.sensitive_attributes_.names) == ["dept", "team", "dept & team"]
    assert len(model.sensitive_attributes_.categories[2]) == 2
    # The same fit as with the combined column made by hand from the tuples.
    by_hand = frame.assign(both=np.array(["first", "second"])[group])
    same = FairKM(2, random_state=0).fit(X, sensitive_features=by_hand)
    assert_allclose(model.objective_, same.objective_, rtol=1e-12)
    # New rows (reordered, a subset) form the combinations the fit formed.
    rows = rng.permutation(len(frame))[:25]
    np.testing.assert_array_equal(
        model.predict(X[rows], sensitive_features=frame.iloc[rows]),
        same.predict(X[rows], sensitive_features=by_hand.iloc[rows]),
    )


def test_colliding_texts_stay_two_groups_in_the_audit():
    from types import SimpleNamespace

    from fairkm.report import audit

    frame, group = _colliding()
    X = np.random.default_rng(0).normal(size=(len(frame), 2))
    # A model with a bound on the intersection: the audit checks the bound on its groups.
    model = SimpleNamespace(labels_=group, max_deviation=0.1, deviation_kind="additive",
                            intersections=[("dept", "team")])
    result = audit(model, X, sensitive_features=frame, reference=None, check_data=False)
    row = result.bounds["SimpleNamespace"].table.loc["dept & team"]
    # Each cluster holds all of one group and none of the other, of dataset share .5.
    assert row["deviation"] == pytest.approx(0.5, rel=1e-12)
    assert not row["satisfied"]


# The pieces that could make two tuples join alike.
_PIECES = st.sampled_from(["a", " & ", "&", " ", '"', "\\"])


@st.composite
def pairs_joining_alike(draw):
    """Pairs of texts: every split of one text at a " & " (all join alike), and others."""
    pieces = draw(st.lists(_PIECES, max_size=8))
    rows = [("".join(pieces[:i]), "".join(pieces[i + 1:]))
            for i, piece in enumerate(pieces) if piece == " & "]
    text = st.lists(_PIECES, max_size=4).map("".join)
    rows += draw(st.lists(st.tuples(text, text), max_size=6))
    assume(rows)
    return rows


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(rows=pairs_joining_alike())
def test_distinct_tuples_get_distinct_combined_values(rows):
    from fairkm.utils._sensitive import with_intersections

    frame = pd.DataFrame(rows, columns=["a", "b"])
    combined = with_intersections(frame, [("a", "b")])["a & b"]
    # One combined value per distinct tuple, and each tuple always gets the same one.
    assert combined.nunique() == len(set(rows))
    assert len({(t, v) for t, v in zip(rows, combined, strict=True)}) == len(set(rows))


def test_combined_values_read_as_the_members_joined():
    from fairkm.utils._sensitive import with_intersections

    frame = pd.DataFrame({"sex": ["F", "M"], "band": [1, 2], "dept": ["R&D", "Sales & Ops"]})
    got = with_intersections(frame, [("sex", "band"), ("sex", "dept")])
    assert list(got["sex & band"]) == ["F & 1", "M & 2"]
    # A member holding " & " shows quoted, so that it reads one way only.
    assert list(got["sex & dept"]) == ["F & R&D", 'M & "Sales & Ops"']


def test_intersections_of_no_rows():
    from fairkm.utils._sensitive import with_intersections

    frame = pd.DataFrame({"sex": pd.Series([], dtype=object), "race": pd.Series([], dtype=object)})
    got = with_intersections(frame, [("sex", "race")])
    assert list(got.columns) == ["sex", "race", "sex & race"] and len(got) == 0


def test_values_that_print_alike_are_refused():
    from fairkm.utils._sensitive import with_intersections

    frame = pd.DataFrame({"a": pd.Series([1, "1"], dtype=object), "b": ["x", "x"]})
    with pytest.raises(ValueError, match="'a' holds distinct values that print alike"):
        with_intersections(frame, [("a", "b")])
