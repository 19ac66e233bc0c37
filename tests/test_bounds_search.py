"""The bounded assignment's local search against plain references.

* a cluster's excess (bands, balance targets, caps on the total-variation
  distance and on numeric means, the bands' weight) and the excess of the
  means over the clusters equal plain NumPy sums (the balance's: the plain
  shortfall of ``tests/_bounds_reference.py``);
* on unit problems, each cluster's excess per attribute with one row of a
  type less or more, and a swap's gain, counted attribute by attribute,
  equal a plain recount from the changed counts; the swaps the polish leaves
  out by their values are those a plain loop finds, and each leaves excess;
* what the polish's pairs of moves leave out rests on: a cluster's excess is
  never negative, and a move leaves the excess of the clusters it does not
  touch as it was, to the bit;
* the first repair step is the single move with the least cost per unit of
  excess removed, over every row and cluster (brute force);
* the repair's scans of swaps and pairs of moves stop at the cost where no
  step can score below the best: with whole weights and no numeric
  attribute, the search's steps, labels and excess are those of the same
  search compiled without the stops, to the bit (``_gain_cap`` bounds every
  swap's gain; ``_scores_no_less`` is a plain comparison of scores);
* repair lowers the excess step by step (or, cancelling a cycle of one type,
  the cost at the same excess), polish lowers the cost and never breaks a
  band;
* a search that says the bands hold leaves labels a plain check accepts, and
  no guarded attribute's mean or worst cluster above its cap;
* own_guard measures each cluster's distance as a plain computation does.
"""

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numba import types
from numpy.testing import assert_allclose, assert_array_equal

from fairkm.bounds import _search_kernels as search_kernels
from fairkm.bounds._model import make_problem, sq_distances
from fairkm.bounds._search import Guard, SearchSpace, local_search, own_guard
from fairkm.bounds._search_kernels import (
    _BITS,
    _TABLED,
    TOL,
    _bump_versions,
    _cheap_prefix,
    _cheapest_first,
    _column_sums,
    _gain_cap,
    _reorder,
    _scores_no_less,
    _shift,
    _stale_row,
    _stale_slot,
    _swap_floor,
    _swap_gain,
    _swap_partners,
    _swap_terms,
    _unit_refresh,
    _untabled_gain,
    _value_bits,
    cluster_excess,
    overall_excess,
    search,
)
from fairkm.metrics._bound_spec import resolve_bounds

from ._bounds_reference import plain_shortfall
from .conftest import examples

# ----------------------------------------------------------------------------- references


def plain_distances(labels, weights, codes, z, prop, offsets, k):
    """Per cluster, each attribute's distance: total variation, then |mean z| (k, A + B)."""
    out = np.zeros((k, offsets.shape[0] - 1 + z.shape[1]))
    for c in range(k):
        mine = labels == c
        s = weights[mine].sum()
        for a in range(offsets.shape[0] - 1):
            shares = np.array([weights[mine & (codes[:, a] == v)].sum()
                               for v in range(offsets[a], offsets[a + 1])]) / s
            out[c, a] = 0.5 * np.abs(shares - prop[offsets[a]:offsets[a + 1]]).sum()
        for b in range(z.shape[1]):
            out[c, offsets.shape[0] - 1 + b] = abs(np.dot(weights[mine], z[mine, b])) / s
    return out


def plain_excess(labels, weights, codes, z, lower, upper, prop, offsets, tv_cap, balance, z_cap,
                 hard, mean_cap):
    """Per cluster: band and balance excess (times ``hard``), TV-cap and numeric-cap excess;
    then the excess of the sums over the clusters of the distances above ``mean_cap``, in
    rows."""
    k = lower.shape[0]
    out = np.zeros(k)
    for a in range(offsets.shape[0] - 1):
        # Values the dataset holds (prop > 0); widened by TOL as the bands are.
        held = np.isin(codes[:, a], np.flatnonzero(prop > 0))
        for c in range(k):
            if balance[c, a] > 0:
                out[c] += hard * plain_shortfall(labels[held], codes[held, a], k,
                                                 balance[c, a] - TOL, weights[held])[c]
    for c in range(k):
        mine = labels == c
        s = weights[mine].sum()
        for a in range(offsets.shape[0] - 1):
            tv = 0.0
            for v in range(offsets[a], offsets[a + 1]):
                x = weights[mine & (codes[:, a] == v)].sum()
                out[c] += hard * (max(x - (upper[c, v] + TOL) * s, 0.0)
                                  + max((lower[c, v] - TOL) * s - x, 0.0))
                tv += abs(x - prop[v] * s)
            if np.isfinite(tv_cap[c, a]):
                out[c] += max(tv - 2 * (tv_cap[c, a] + TOL) * s, 0.0)
        for b in range(z.shape[1]):
            out[c] += max(abs(np.dot(weights[mine], z[mine, b])) - (z_cap[c, b] + TOL) * s, 0.0)
    sums = plain_distances(labels, weights, codes, z, prop, offsets, k).sum(axis=0)
    finite = np.isfinite(mean_cap)
    overall = weights.sum() / k * np.maximum(sums[finite] - mean_cap[finite] - TOL, 0.0).sum()
    return out, overall


def plain_cluster_excess(s, x, lower, upper, prop, offsets, tv_cap, balance, hard):
    """One cluster of size ``s`` and value counts ``x`` (categorical attributes only): its
    excess per attribute and its total-variation distances, from the definitions."""
    n_attr = offsets.shape[0] - 1
    excess, measures = np.zeros(n_attr), np.zeros(n_attr)
    for a in range(n_attr):
        span = slice(offsets[a], offsets[a + 1])
        counts, p = x[span], prop[span]
        excess[a] = hard * (np.maximum(counts - (upper[span] + TOL) * s, 0.0)
                            + np.maximum((lower[span] - TOL) * s - counts, 0.0)).sum()
        held = counts[p > 0]
        if balance[a] > 0 and held.size:
            excess[a] += hard * max((balance[a] - TOL) * held.max() - held.min(), 0.0)
        tv = np.abs(counts - p * s).sum()
        if np.isfinite(tv_cap[a]):
            excess[a] += max(tv - 2 * (tv_cap[a] + TOL) * s, 0.0)
        measures[a] = 0.5 * tv / s if s > 0 else 0.0
    return excess, measures


def plain_cost(dist, weights, labels):
    return float(np.dot(weights, dist[np.arange(labels.shape[0]), labels]))


def plain_tv(labels, column, k, weights=None):
    """Per cluster, the total-variation distance of its mix of ``column`` from the dataset's."""
    w = np.ones(labels.shape[0]) if weights is None else weights
    values = np.unique(column)
    p = np.array([w[column == v].sum() for v in values]) / w.sum()
    out = np.zeros(k)
    for c in range(k):
        mine = labels == c
        share = np.array([w[mine & (column == v)].sum() for v in values]) / w[mine].sum()
        out[c] = 0.5 * np.abs(share - p).sum()
    return out


# ----------------------------------------------------------------------------- problems


@st.composite
def spaces(draw, unit=None):
    """A search space drawn at random: rows, codes, bands, caps, labels, costs."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(6, 60))
    k = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
    if draw(st.booleans()):
        # an attribute of more values than the swaps' table keeps (counted apart)
        sizes.append(_TABLED + 1)
    n_num = 0 if unit else draw(st.integers(0, 2))
    unit = draw(st.booleans()) if unit is None else unit
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    codes = np.stack([offsets[a] + rng.integers(0, s, m) for a, s in enumerate(sizes)], 1)
    weights = np.ones(m) if unit else rng.integers(1, 4, m).astype(float)
    z = rng.normal(size=(m, 0 if unit else n_num))
    prop = np.zeros(offsets[-1])
    for a in range(len(sizes)):
        span = slice(offsets[a], offsets[a + 1])
        prop[span] = np.bincount(codes[:, a] - offsets[a], weights=weights,
                                 minlength=sizes[a]) / weights.sum()
    delta = draw(st.sampled_from([0.05, 0.15, 0.3, 1.0]))
    lower = np.tile(prop - delta, (k, 1))
    upper = np.tile(prop + delta, (k, 1))
    tv_cap = np.where(rng.random((k, len(sizes))) < 0.3, rng.uniform(0.05, 0.5, (k, len(sizes))),
                      np.inf)
    # Balance targets on some attributes (at times above what the data allow: the search then
    # only lowers the shortfall).
    balance = np.tile(np.where(rng.random(len(sizes)) < 0.4, rng.uniform(0.05, 0.9, len(sizes)),
                               0.0), (k, 1))
    z_cap = np.where(rng.random((k, z.shape[1])) < 0.5, rng.uniform(0.1, 1.0, (k, z.shape[1])),
                     np.inf)
    n_measures = len(sizes) + z.shape[1]
    mean_cap = np.where(rng.random(n_measures) < 0.4, k * rng.uniform(0.02, 0.4, n_measures),
                        np.inf)
    labels = np.r_[np.arange(k), rng.integers(0, k, m - k)].astype(np.int64)
    dist = rng.uniform(0, 10, (m, k))
    types = np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return dict(dist=dist, weights=weights, types=types, n_types=int(types.max()) + 1,
                codes=codes, z=z, lower=lower, upper=upper, prop=prop, offsets=offsets,
                tv_cap=tv_cap, balance=balance, z_cap=z_cap, mean_cap=mean_cap,
                w_min=float(weights.min()),
                unit=bool(unit and z.shape[1] == 0), labels=labels)


def run(space, labels, *, polish, steps, hard=1.0, unit=None):
    out = labels.copy()
    s = space
    left, taken = search(s["dist"], s["weights"], s["types"], s["n_types"], s["codes"], s["z"],
                         s["lower"], s["upper"], s["prop"], s["offsets"], s["tv_cap"],
                         s["balance"], s["z_cap"], s["mean_cap"], s["w_min"],
                         s["unit"] if unit is None else unit, out, polish, steps, hard)
    return out, left, taken


def excess_of(space, labels, hard=1.0):
    """The total excess: every cluster's, and the means' over the clusters."""
    s = space
    own, overall = plain_excess(labels, s["weights"], s["codes"], s["z"], s["lower"],
                                s["upper"], s["prop"], s["offsets"], s["tv_cap"], s["balance"],
                                s["z_cap"], hard, s["mean_cap"])
    return own.sum() + overall


# ----------------------------------------------------------------------------- tests


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(), hard=st.sampled_from([1.0, 7.5]))
def test_cluster_excess_equals_a_plain_sum(space, hard):
    s, labels = space, space["labels"]
    k, n_values = s["lower"].shape
    size = np.bincount(labels, weights=s["weights"], minlength=k)
    cnt = np.zeros((k, n_values))
    for a in range(s["codes"].shape[1]):
        np.add.at(cnt, (labels, s["codes"][:, a]), s["weights"])
    zsum = np.zeros((k, s["z"].shape[1]))
    np.add.at(zsum, labels, s["weights"][:, None] * s["z"])
    measures = np.zeros((k, s["mean_cap"].shape[0]))
    got = [cluster_excess(c, size, cnt, zsum, s["lower"], s["upper"], s["prop"], s["offsets"],
                          s["tv_cap"], s["balance"], s["z_cap"], hard, measures[c])
           for c in range(k)]
    own, overall = plain_excess(labels, s["weights"], s["codes"], s["z"], s["lower"],
                                s["upper"], s["prop"], s["offsets"], s["tv_cap"], s["balance"],
                                s["z_cap"], hard, s["mean_cap"])
    assert_allclose(got, own, rtol=1e-9, atol=1e-9)
    assert_allclose(measures, plain_distances(labels, s["weights"], s["codes"], s["z"],
                                              s["prop"], s["offsets"], k), atol=1e-12)
    assert_allclose(overall_excess(measures.sum(axis=0), s["mean_cap"], s["weights"].sum() / k),
                    overall, rtol=1e-9, atol=1e-9)


class UnitState:
    """A unit space's counts, its ``_unit_refresh`` outputs, and plain recounts to check them."""

    def __init__(self, space, hard):
        s, labels = space, space["labels"]
        self.space, self.hard = space, hard
        self.k, self.n_values = k, n_values = s["lower"].shape
        codes, types, n_types = s["codes"], s["types"], s["n_types"]
        self.n_attr = n_attr = codes.shape[1]
        self.size = np.bincount(labels, minlength=k).astype(float)
        self.cnt = np.zeros((k, n_values))
        for a in range(n_attr):
            np.add.at(self.cnt, (labels, codes[:, a]), 1.0)
        self.tcodes = np.array([codes[types == t][0] for t in range(n_types)])
        self.bands = (s["lower"], s["upper"], s["prop"], s["tv_cap"], s["balance"],
                      s["mean_cap"])
        self.parts = (np.empty((k, n_attr, 3)), np.empty((k, n_attr, 3)),
                      np.empty((k, n_attr, 3), np.int64), np.empty((k, n_attr, 3), np.int64),
                      np.empty((k, n_attr)))
        self.rm, self.add = np.empty((n_types, k)), np.empty((n_types, k))
        self.rm_meas = np.empty((n_types, k, n_attr))
        self.add_meas = np.empty((n_types, k, n_attr))
        _unit_refresh(self.tcodes, self.size, self.cnt, s["offsets"], self.bands, hard,
                      np.ones(k, dtype=np.bool_), self.parts, self.rm, self.add, self.rm_meas,
                      self.add_meas)
        self.mean_scale = labels.shape[0] / k

    def plain(self, c, size, counts):
        """Cluster ``c``'s excess per attribute and distances at ``size`` and ``counts``."""
        s = self.space
        return plain_cluster_excess(size, counts, s["lower"][c], s["upper"][c], s["prop"],
                                    s["offsets"], s["tv_cap"][c], s["balance"][c], self.hard)

    def overall_of(self, measures):
        """The excess of the sums over the clusters of ``measures`` above the caps, in rows."""
        mean_cap = self.space["mean_cap"]
        sums = measures.sum(axis=0)
        finite = np.isfinite(mean_cap)
        return self.mean_scale * np.maximum(sums[finite] - mean_cap[finite] - TOL, 0.0).sum()

    def one_of(self, t):
        """The counts of one row of type ``t``."""
        row = np.zeros(self.n_values)
        row[self.tcodes[t]] = 1.0
        return row

    def excess_after_swap(self, a, b, t1, t2, meas):
        """The excess left, counted plainly, once a row of t1 went a -> b and one of t2 b -> a.

        At ``a`` and ``b``, and over the clusters (``meas``: every cluster's distances now).
        """
        moved = self.cnt.copy()
        moved[a] += self.one_of(t2) - self.one_of(t1)
        moved[b] += self.one_of(t1) - self.one_of(t2)
        after = meas.copy()
        left_a, after[a] = self.plain(a, self.size[a], moved[a])
        left_b, after[b] = self.plain(b, self.size[b], moved[b])
        return left_a.sum() + left_b.sum() + self.overall_of(after)

    def tabled_cells(self):
        """Each attribute's first cell in a swap table (-1: not tabled) and the table's length.

        Laid out as the search lays them: attributes of at most _TABLED values, in order.
        """
        sizes = np.diff(self.space["offsets"])
        n_cells = np.where(sizes <= _TABLED, sizes ** 2, 0)
        cells = np.where(sizes <= _TABLED, np.cumsum(n_cells) - n_cells, -1)
        return cells.astype(np.int64), int(n_cells.sum())


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(unit=True), hard=st.sampled_from([1.0, 7.5]))
def test_unit_moves_and_swaps_are_counted_attribute_by_attribute(space, hard):
    unit = UnitState(space, hard)
    k, n_attr, n_types = unit.k, unit.n_attr, space["n_types"]
    offsets, tcodes, size, cnt = space["offsets"], unit.tcodes, unit.size, unit.cnt
    bands, parts, plain, one_of = unit.bands, unit.parts, unit.plain, unit.one_of
    rm, add, rm_meas, add_meas = unit.rm, unit.add, unit.rm_meas, unit.add_meas
    here = parts[4]
    now = [plain(c, size[c], cnt[c]) for c in range(k)]
    assert_allclose(here, [e for e, _ in now], rtol=1e-9, atol=1e-9)
    for t in range(n_types):
        for c in range(k):
            e, m = plain(c, size[c] - 1, cnt[c] - one_of(t))
            assert rm[t, c] == pytest.approx(e.sum(), rel=1e-9, abs=1e-9)
            assert_allclose(rm_meas[t, c], m, atol=1e-12)
            e, m = plain(c, size[c] + 1, cnt[c] + one_of(t))
            assert add[t, c] == pytest.approx(e.sum(), rel=1e-9, abs=1e-9)
            assert_allclose(add_meas[t, c], m, atol=1e-12)
    # Swaps: the excess before and after, each cluster's and the means' over the clusters.
    E = np.array([e.sum() for e, _ in now])
    meas = np.array([m for _, m in now])
    mean_scale, overall_of = unit.mean_scale, unit.overall_of
    overall = overall_of(meas)
    s = space
    ours_meas = np.zeros((k, n_attr))
    ours = np.array([cluster_excess(c, size, cnt, np.zeros((k, 0)), s["lower"], s["upper"],
                                    s["prop"], offsets, s["tv_cap"], s["balance"],
                                    np.zeros((k, 0)), hard, ours_meas[c]) for c in range(k)])
    ours_overall = overall_excess(ours_meas.sum(axis=0), s["mean_cap"], unit.mean_scale)
    sizes = np.diff(offsets)
    tabled = np.r_[0, np.cumsum(sizes ** 2)[:-1]]
    untabled = np.full(n_attr, -1)
    table = np.empty(int((sizes ** 2).sum()))
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            full_table(a, b, offsets, tabled, table, size, cnt, meas, meas.sum(axis=0), bands,
                       hard, mean_scale, parts)
            # (the first eight types against the last eight: a bounded count of pairs)
            for t1 in range(min(n_types, 8)):
                for t2 in range(n_types - min(n_types, 8), n_types):
                    if t1 == t2:
                        continue
                    left = unit.excess_after_swap(a, b, t1, t2, meas)
                    # Every attribute from the table, or every one counted apart.
                    gains = [_swap_gain(tcodes, t1, tcodes, t2, offsets, tabled, table),
                             _untabled_gain(tcodes, t1, tcodes, t2, a, b, untabled, size, cnt,
                                            meas, meas.sum(axis=0), bands, hard, mean_scale,
                                            parts, np.empty(1))]
                    assert gains[0] == pytest.approx(gains[1], rel=1e-12, abs=1e-12)
                    assert gains[0] == pytest.approx(E[a] + E[b] + overall - left, rel=1e-9,
                                                     abs=1e-9)
                    # What a repair's swap scan assumes: no gain above the cap of the
                    # excess the search counts (its own sums, not the plain ones above).
                    assert max(gains) <= _gain_cap(ours[a] + ours[b] + ours_overall,
                                                   size[a] + size[b])


def full_table(a, b, offsets, cells, table, size, cnt, meas, msum, bands, hard, mean_scale,
               parts):
    """Every row of the swap table of a and b (the search fills only those it reads)."""
    for q in range(cells.shape[0]):
        if cells[q] >= 0:
            n = offsets[q + 1] - offsets[q]
            for u in range(offsets[q], offsets[q + 1]):
                _swap_terms(q, u, offsets[q], offsets[q + 1], a, b, table,
                            cells[q] + (u - offsets[q]) * n, size, cnt, meas, msum, bands, hard,
                            mean_scale, parts)


def plain_partners(tcodes, t1, codes2, offsets, cells, table, floor_term):
    """Positions of codes2 whose every tabled term with t1's values is at least floor_term."""
    out = []
    for p2 in range(codes2.shape[0]):
        kept = True
        for q in range(codes2.shape[1]):
            if cells[q] < 0:
                continue
            n = offsets[q + 1] - offsets[q]
            i, j = tcodes[t1, q] - offsets[q], codes2[p2, q] - offsets[q]
            kept &= table[cells[q] + i * n + j] >= floor_term
        out.append(kept)
    return np.flatnonzero(out)


class Partners:
    """One scan's _swap_partners: the second rows' bits, and the cache its first rows share."""

    def __init__(self, codes2, offsets, cells, table, floor_term):
        n2 = codes2.shape[0]
        words = max(1, (n2 + _BITS - 1) // _BITS)
        self.vbits = np.zeros((offsets[-1], words), dtype=np.int64)
        _value_bits(codes2, n2, cells, self.vbits)
        self.held = np.zeros_like(self.vbits)
        self.held_words = np.zeros(offsets[-1], dtype=np.int64)
        self.n2, self.offsets, self.cells = n2, offsets, cells
        self.table, self.floor_term = table, floor_term

    def of(self, tcodes, t1, n_first=None):
        """Partners of t1 among the first ``n_first`` second rows (None: all)."""
        acc = np.empty(self.vbits.shape[1], dtype=np.int64)
        partners = np.empty(self.n2, dtype=np.int64)
        count = _swap_partners(tcodes, t1, self.n2 if n_first is None else n_first,
                               self.offsets, self.cells, self.table, self.floor_term,
                               self.vbits, self.held, self.held_words, acc, partners)
        return partners[:count]


def partners_of(tcodes, t1, codes2, offsets, cells, table, floor_term):
    return Partners(codes2, offsets, cells, table, floor_term).of(tcodes, t1)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(unit=True), hard=st.sampled_from([1.0, 7.5]), data=st.data())
def test_kept_swap_tables_are_the_tables_of_the_clusters_now(space, hard, data):
    # Without caps on a mean over the clusters, the polish keeps each pair's swap table across
    # steps, stale once one of its two clusters changed size or counts, and fills a row when it
    # is first read after that: every row it reads must be the one filled afresh now, and a
    # pair whose clusters stayed must not be stale. Rows move between rounds, at times none,
    # at times many; each round reads some rows of each table.
    space = dict(space, mean_cap=np.full_like(space["mean_cap"], np.inf))
    k, n_values = space["lower"].shape
    offsets = space["offsets"]
    cells, n_cells = UnitState(space, hard).tabled_cells()
    tabled = [q for q in range(cells.shape[0]) if cells[q] >= 0]
    tables = np.empty((k * k, n_cells))
    stamp = np.zeros(k * k, dtype=np.int64)
    row_stamp = np.full((k * k, n_values), -1, dtype=np.int64)
    built = np.full((k * k, 2), -1, dtype=np.int64)
    version = np.zeros(k, dtype=np.int64)
    seen_size, seen_cnt = np.full(k, -1.0), np.zeros((k, n_values))
    labels = space["labels"].copy()
    for _ in range(3):
        state = UnitState(dict(space, labels=labels), hard)
        was, before = version.copy(), built.copy()
        _bump_versions(state.size, state.cnt, seen_size, seen_cnt, version)
        meas, msum = np.zeros((k, offsets.shape[0] - 1)), np.zeros(offsets.shape[0] - 1)
        for a in range(k):
            for b in range(a + 1, k):
                slot, stale = _stale_slot(a, b, version, built)
                if stale:  # as the search does
                    stamp[slot] += 1
                fresh = np.empty(n_cells)
                full_table(a, b, offsets, cells, fresh, state.size, state.cnt, meas, msum,
                           state.bands, hard, state.mean_scale, state.parts)
                for q in data.draw(st.lists(st.sampled_from(tabled), max_size=4)) if tabled else []:
                    u = data.draw(st.integers(offsets[q], offsets[q + 1] - 1))
                    n = offsets[q + 1] - offsets[q]
                    first = cells[q] + (u - offsets[q]) * n
                    if _stale_row(slot, u, stamp, row_stamp):
                        _swap_terms(q, u, offsets[q], offsets[q + 1], a, b, tables[slot], first,
                                    state.size, state.cnt, meas, msum, state.bands, hard,
                                    state.mean_scale, state.parts)
                    row = slice(first, first + n)
                    assert tables[slot, row].tobytes() == fresh[row].tobytes()
                    assert not _stale_row(slot, u, stamp, row_stamp)  # filled once
                stayed = version[a] == was[a] and version[b] == was[b] and before[slot, 0] >= 0
                assert slot == a * k + b and stale != stayed
                assert np.array_equal(built[slot], before[slot]) == stayed
        moved = data.draw(st.lists(st.integers(0, labels.shape[0] - 1), max_size=6))
        labels[moved] = data.draw(st.integers(0, k - 1))


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n2=st.integers(1, 300),
       sizes=st.lists(st.integers(1, 6), min_size=1, max_size=4), untabled=st.booleans())
@example(seed=1, n2=126, sizes=[3, 2], untabled=False)  # whole words: the last one full
@example(seed=2, n2=1, sizes=[1], untabled=False)  # one value: every position kept
def test_swap_partners_by_value_are_a_plain_loops(seed, n2, sizes, untabled):
    # Over several words of bits (63 positions a word), with every value or few.
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cells = np.full(len(sizes), -1, dtype=np.int64)
    n_cells = 0
    for q, n in enumerate(sizes):
        if not (untabled and q == 0):
            cells[q], n_cells = n_cells, n_cells + n * n
    table = np.where(rng.random(n_cells) < 0.7, 0.0, -rng.uniform(0, 2, n_cells))
    codes2 = np.stack([offsets[q] + rng.integers(0, n, n2) for q, n in enumerate(sizes)], 1)
    tcodes = np.stack([offsets[q] + rng.integers(0, n, 12) for q, n in enumerate(sizes)], 1)
    floor_term = float(rng.choice([-1.0, -1e-9, 0.0]))
    # One scan's first rows share the cache (values repeat: at most 6 an attribute); each
    # screens a prefix of the second rows (_cheap_prefix), cut anywhere, even inside a word or
    # before the first row, longer or shorter than the one before.
    scan = Partners(codes2, offsets, cells, table, floor_term)
    for t1 in range(tcodes.shape[0]):
        want = plain_partners(tcodes, t1, codes2, offsets, cells, table, floor_term)
        np.testing.assert_array_equal(partners_of(tcodes, t1, codes2, offsets, cells, table,
                                                  floor_term), want)
        n_first = int(rng.integers(0, n2 + 1))
        np.testing.assert_array_equal(scan.of(tcodes, t1, n_first), want[want < n_first])


@settings(max_examples=examples(100))
@given(data=st.data(), n=st.integers(0, 60))
def test_an_order_brought_up_to_date_is_the_order_sorted_afresh(data, n):
    # The polish keeps each pair's order of the types by cost across steps and merges in the
    # types whose costs changed (handed over ascending): it must be the stable sort of the new
    # costs, ties to the lowest type, types with no finite cost left out (entering or leaving
    # included).
    level = st.sampled_from([np.inf, -2.0, -1.0, 0.0, 0.5, 3.0])
    old = np.array(data.draw(st.lists(level, min_size=n, max_size=n)), dtype=np.float64)
    changed = np.array(sorted(data.draw(st.lists(st.integers(0, max(n - 1, 0)), unique=True,
                                                 max_size=n))) if n else [], dtype=np.int64)
    new = old.copy()
    new[changed] = data.draw(st.lists(level, min_size=len(changed), max_size=len(changed)))
    order = np.zeros(n, dtype=np.int64)
    start = _cheapest_first(old)
    order[:start.shape[0]] = start
    stale = np.zeros(n, dtype=np.bool_)
    stale[changed] = True
    length = _reorder(new, order, start.shape[0], changed, stale, changed.shape[0],
                      np.empty(n, dtype=np.int64))
    plain = sorted((c, t) for t, c in enumerate(new) if c < np.inf)
    np.testing.assert_array_equal(order[:length], [t for _, t in plain])


@settings(max_examples=examples(100))
@given(rows=st.integers(0, 12), cols=st.integers(0, 5), data=st.data())
def test_column_sums_add_each_column_top_down(rows, cols, data):
    # The search's per-attribute totals over the clusters: each column summed from 0.0 down the
    # rows, one addition at a time (numba's a.sum(axis=0), which it replaced, does the same).
    # Magnitudes far apart make any other order or grouping round differently.
    value = st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-17, 3e16, -3e16, 0.1, 2.5e-3, 7.0])
    a = np.array(data.draw(st.lists(value, min_size=rows * cols, max_size=rows * cols)),
                 dtype=np.float64).reshape(rows, cols)
    out = np.full(cols, np.nan)
    _column_sums(a, out)
    plain = []
    for j in range(cols):
        total = 0.0
        for i in range(rows):
            total += float(a[i, j])
        plain.append(total)
    assert out.tobytes() == np.array(plain, dtype=np.float64).tobytes()


@settings(max_examples=examples(100))
@given(costs=st.lists(st.sampled_from([-3.0, -1.5, -1.0, -0.25, 0.0, 0.5, 1e-17, 2.0]),
                      max_size=40),
       c1s=st.lists(st.sampled_from([-2.0, -1.0, -1e-17, 0.0, 1.0]), min_size=1, max_size=4),
       bounds=st.lists(st.sampled_from([-4.0, -2.0, -1e-12, 0.0, 1.0, np.inf]), min_size=1,
                       max_size=4))
def test_the_cheap_prefix_is_where_a_plain_scan_stops(costs, c1s, bounds):
    # The swap scan walks the second rows in ascending cost and stops at the first with
    # c1 + cost >= bound (ties and sums equal to the bound included). Its first rows come in
    # ascending cost and its bound only falls: each prefix is walked down from the last.
    cost2 = np.array(sorted(costs) + [99.0])  # a row past n2 must not be read
    n_cheap = n2 = len(costs)
    for c1, bound in zip(sorted(c1s), sorted(bounds, reverse=True), strict=False):
        stop = 0
        while stop < n2 and c1 + cost2[stop] < bound:
            stop += 1
        n_cheap = _cheap_prefix(cost2, n_cheap, c1, bound)
        assert n_cheap == stop


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(unit=True), hard=st.sampled_from([1.0, 7.5]))
def test_a_swap_left_out_by_value_leaves_excess(space, hard):
    # The polish weighs only the swaps _swap_partners keeps; every other one must fail its
    # check (excess left above ex_tol), counted plainly from the changed counts.
    unit = UnitState(space, hard)
    k, n_types, offsets = unit.k, space["n_types"], space["offsets"]
    tcodes, size, cnt, plain = unit.tcodes, unit.size, unit.cnt, unit.plain
    now = [plain(c, size[c], cnt[c]) for c in range(k)]
    E = np.array([e.sum() for e, _ in now])
    meas = np.array([m for _, m in now])
    overall = unit.overall_of(meas)
    cells, n_cells = unit.tabled_cells()
    table = np.empty(n_cells)
    ex_tol = 1e-9
    for a in range(k):
        for b in range(a + 1, k):
            full_table(a, b, offsets, cells, table, size, cnt, meas, meas.sum(axis=0),
                       unit.bands, hard, unit.mean_scale, unit.parts)
            floor_term = _swap_floor(ex_tol, E[a], E[b], overall, size[a], size[b])
            for t1 in range(n_types):
                kept = set(partners_of(tcodes, t1, tcodes, offsets, cells, table, floor_term))
                for t2 in set(range(n_types)) - kept:
                    assert unit.excess_after_swap(a, b, t1, t2, meas) > ex_tol


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(), hard=st.sampled_from([1.0, 7.5]), data=st.data())
def test_a_move_leaves_the_excess_of_other_clusters_as_it_was(space, hard, data):
    s, labels = space, space["labels"]
    k, n_values = s["lower"].shape
    weights, codes, z = s["weights"], s["codes"], s["z"]
    size = np.bincount(labels, weights=weights, minlength=k)
    cnt = np.zeros((k, n_values))
    for a in range(codes.shape[1]):
        np.add.at(cnt, (labels, codes[:, a]), weights)
    zsum = np.zeros((k, z.shape[1]))
    np.add.at(zsum, labels, weights[:, None] * z)

    def excess(c):
        return cluster_excess(c, size, cnt, zsum, s["lower"], s["upper"], s["prop"],
                              s["offsets"], s["tv_cap"], s["balance"], s["z_cap"], hard,
                              np.zeros(s["mean_cap"].shape[0]))

    before = [excess(c) for c in range(k)]
    i = data.draw(st.integers(0, labels.shape[0] - 1))
    a, b = labels[i], data.draw(st.integers(0, k - 1))
    _shift(i, a, b, weights, codes, z, size, cnt, zsum)
    after = [excess(c) for c in range(k)]
    assert min(before + after) >= 0.0
    for c in set(range(k)) - {a, b}:
        assert after[c] == before[c]


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(unit=True))
def test_first_repair_step_is_the_best_single_move(space):
    labels = space["labels"]
    before = excess_of(space, labels).sum()
    if before <= 1e-9:
        return
    dist = space["dist"]
    k = dist.shape[1]
    # Brute force: every row to every other cluster, keeping every cluster non-empty.
    best = np.inf
    for i in range(labels.shape[0]):
        a = labels[i]
        if np.sum(labels == a) <= 1:
            continue
        for b in range(k):
            if b == a:
                continue
            moved = labels.copy()
            moved[i] = b
            gain = before - excess_of(space, moved).sum()
            if gain > 1e-9:
                best = min(best, (dist[i, b] - dist[i, a]) / gain)
    # Direct moves only (no chains through a third cluster), one step.
    after, _, _ = run(space, labels, polish=False, steps=1, unit=False)
    changed = np.flatnonzero(after != labels)
    if not np.isfinite(best):
        # No single move helps: the step is a swap, or nothing.
        assert changed.shape[0] in (0, 2)
        return
    assert changed.shape[0] == 1
    i = changed[0]
    gain = before - excess_of(space, after).sum()
    assert gain > 1e-9
    assert (dist[i, after[i]] - dist[i, labels[i]]) / gain == pytest.approx(best, rel=1e-9,
                                                                             abs=1e-12)


@pytest.fixture(scope="module")
def search_without_stops():
    """The search compiled again with its scans never stopped by the cost (the reference).

    Compiled, not run as Python: the same arithmetic as the search's own, so
    every step and sum compares to the bit (NumPy's sums in Python differ in
    the last bits). Compiled at once, for the tests' arrays, and the stop put
    back before any test runs: nothing else is compiled without it.
    """
    f1, f2, i1, i2 = types.float64[::1], types.float64[:, ::1], types.int64[::1], \
        types.int64[:, ::1]
    signature = (f2, f1, i1, types.int64, i2, f2, f2, f2, f1, i1, f2, f2, f2, f1, types.float64,
                 types.boolean, i1, types.boolean, types.int64, types.float64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_kernels, "_scores_no_less",
                      numba.njit(lambda dcost, gain_cap, best: False))
        reference = numba.njit(signature)(search_kernels.search.py_func)
    return reference


@pytest.fixture(scope="module")
def search_without_kept_pairs():
    """The search compiled again counting afresh what it keeps on unit problems (the reference).

    As :func:`search_without_stops`: compiled for the tests' arrays, every pair
    of moves weighed afresh and every cluster counted again at every step.
    """
    f1, f2, i1, i2 = types.float64[::1], types.float64[:, ::1], types.int64[::1], \
        types.int64[:, ::1]
    signature = (f2, f1, i1, types.int64, i2, f2, f2, f2, f1, i1, f2, f2, f2, f1, types.float64,
                 types.boolean, i1, types.boolean, types.int64, types.float64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_kernels, "_PAIR_CACHE", False)
        patch.setattr(search_kernels, "_COUNT_CHANGED", False)
        reference = numba.njit(signature)(search_kernels.search.py_func)
    return reference


def stuck_unit_space(seed):
    """A unit problem far from its bands: rows labelled after their first attribute, tight bands.

    Repairing it, the search runs out of single moves and swaps and weighs pairs of
    moves (on such spaces a pair's excess changed by 0.5 changed the steps in 83 of 300
    seeds: the pairs decide).
    """
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(40, 300)), int(rng.integers(3, 7))
    sizes = [int(s) for s in rng.integers(2, 6, int(rng.integers(2, 5)))]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    codes = np.stack([offsets[a] + rng.integers(0, s, m) for a, s in enumerate(sizes)], 1)
    prop = np.concatenate([np.bincount(codes[:, a] - offsets[a], minlength=s) / m
                           for a, s in enumerate(sizes)])
    delta = float(rng.choice([0.01, 0.03, 0.08]))
    n_attr = len(sizes)
    labels = np.where(rng.random(m) < 0.7, codes[:, 0] % k, rng.integers(0, k, m))
    labels[:k] = np.arange(k)
    return dict(dist=rng.uniform(0, 10, (m, k)), weights=np.ones(m),
                types=np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1).astype(
                    np.int64),
                n_types=len(np.unique(codes, axis=0)), codes=codes, z=np.zeros((m, 0)),
                lower=np.tile(prop - delta, (k, 1)), upper=np.tile(prop + delta, (k, 1)),
                prop=prop, offsets=offsets, tv_cap=np.full((k, n_attr), np.inf),
                balance=np.zeros((k, n_attr)), z_cap=np.zeros((k, 0)),
                mean_cap=np.where(rng.random(n_attr) < 0.5,
                                  k * rng.uniform(0.02, 0.2, n_attr), np.inf),
                w_min=1.0, unit=True, labels=labels.astype(np.int64))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("polish", [False, True])
def test_pairs_weighed_from_kept_excess_are_weighed_as_afresh(search_without_kept_pairs, seed,
                                                               polish):
    # On unit problems a pair's clusters' excess is counted once per first move, type and
    # way and kept, and a step counts again only the clusters that changed: every step and the
    # excess left are those of counting everything afresh.
    space = stuck_unit_space(seed)
    ours = run(space, space["labels"], polish=polish, steps=500)
    reference = space["labels"].copy()
    s = space
    left, taken = search_without_kept_pairs(
        s["dist"], s["weights"], s["types"], s["n_types"], s["codes"], s["z"], s["lower"],
        s["upper"], s["prop"], s["offsets"], s["tv_cap"], s["balance"], s["z_cap"],
        s["mean_cap"], s["w_min"], s["unit"], reference, polish, 500, 1.0)
    assert_array_equal(ours[0], reference)
    assert (ours[1], ours[2]) == (left, taken)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow],
          deadline=None)
@given(space=spaces(), polish=st.booleans(), hard=st.sampled_from([1.0, 7.5]))
def test_the_repair_scans_stop_only_where_no_step_can_be_the_best(search_without_stops, space,
                                                                   polish, hard):
    # Every step weighed is moved into the state and the state's entries put back after, to
    # the bit, numeric attributes included: weighing fewer steps changes nothing.
    ours = run(space, space["labels"], polish=polish, steps=200, hard=hard)
    reference = space["labels"].copy()
    s = space
    left, taken = search_without_stops(
        s["dist"], s["weights"], s["types"], s["n_types"], s["codes"], s["z"], s["lower"],
        s["upper"], s["prop"], s["offsets"], s["tv_cap"], s["balance"], s["z_cap"],
        s["mean_cap"], s["w_min"], s["unit"], reference, polish, 200, hard)
    assert_array_equal(ours[0], reference)
    assert (ours[1], ours[2]) == (left, taken)


@settings(max_examples=examples(200))
@given(dcost=st.floats(-10, 10), gain_cap=st.floats(1e-6, 10),
       gain=st.floats(1e-9, 1.0), best=st.one_of(st.floats(-10, 10), st.just(np.inf)))
def test_a_scan_stops_only_where_no_step_scores_below_the_best(dcost, gain_cap, gain, best):
    # Every step at or past the stop, of any gain up to the cap, scores the best or worse.
    gain = gain * gain_cap
    if _scores_no_less(dcost, gain_cap, best):
        assert not dcost / gain < best
    # Where the stop does not fire, a gain of the cap's may score below the best.
    elif dcost >= 0:
        assert dcost / gain_cap <= best * (1.0 + 1e-12)


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces())
def test_repair_lowers_the_excess_and_polish_the_cost_step_by_step(space):
    labels = space["labels"]
    excess, cost = excess_of(space, labels).sum(), plain_cost(space["dist"], space["weights"],
                                                              labels)
    current = labels
    for _ in range(200):
        after, left, taken = run(space, current, polish=True, steps=1)
        if taken == 0 or np.array_equal(after, current):
            break
        e_after = excess_of(space, after).sum()
        c_after = plain_cost(space["dist"], space["weights"], after)
        tol = 1e-9 * max(1.0, excess)
        if excess > 1e-9 * space["w_min"]:
            # Repairing: less excess, or (a cycle of one type cancelled) the same excess
            # for less cost.
            assert e_after < excess - 1e-12 or e_after <= tol or (
                abs(e_after - excess) <= 1e-9 and c_after < cost)
        else:
            # Polishing: no band breaks, and the cost falls.
            assert e_after <= tol
            assert c_after < cost
        # Every cluster keeps at least the smallest weight.
        assert np.all(np.bincount(after, weights=space["weights"],
                                  minlength=space["lower"].shape[0]) >= space["w_min"])
        excess, cost, current = e_after, c_after, after


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(space=spaces(), polish=st.booleans())
def test_the_search_reports_what_a_plain_check_finds(space, polish):
    dist = space["dist"].copy()
    after, left, _ = run(space, space["labels"], polish=polish, steps=10_000)
    assert_allclose(left, excess_of(space, after).sum(), rtol=1e-9, atol=1e-9)
    # It only reads the distances: callers hand it the assignment's own (live_rows).
    assert_array_equal(space["dist"], dist)


def test_a_search_from_labels_that_hold_moves_nothing_without_polish():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    S = pd.DataFrame({"g": rng.integers(0, 3, 300), "h": rng.integers(0, 2, 300)})
    bounds = resolve_bounds(S, 300, max_deviation=0.5)
    problem = make_problem(X, bounds, 3)
    live = np.arange(300)
    labels = np.arange(300) % 3
    space = SearchSpace.build(bounds, problem, live, own_guard(bounds, labels, 3))
    out, met = local_search(space, sq_distances(X, X[:3]), labels, polish=False)
    assert met
    np.testing.assert_array_equal(out, labels)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_guarded_repair_meets_the_bound_and_keeps_every_cluster_within_its_cap(weighted):
    rng = np.random.default_rng(3)
    n, k = 900, 3
    X = rng.normal(size=(n, 2)) + 3 * rng.integers(0, k, size=(n, 1))
    # g follows the blobs, h does not; z is numeric.
    S = pd.DataFrame({"g": (X[:, 0] > 4).astype(int) + rng.integers(0, 2, n),
                      "h": rng.integers(0, 3, n), "z": rng.normal(size=n)})
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    bounds = resolve_bounds(S, n, max_deviation={"g": 0.1}, sample_weight=w)
    problem = make_problem(X, bounds, k)
    live = np.arange(n)
    start = np.argmin(sq_distances(X, X[:k] + [[0, 0], [0, 3], [0, 6]]), axis=1)
    guard = own_guard(bounds, start, k)
    space = SearchSpace.build(bounds, problem, live, guard)
    out, met = local_search(space, sq_distances(X, np.array([X[start == c].mean(0)
                                                                for c in range(k)])),
                            start, polish=False)
    assert met
    weights = np.ones(n) if w is None else w
    # For every attribute, neither the mean over the clusters nor the worst cluster got
    # further from the dataset's mix.
    for name in ("g", "h"):
        column = S[name].to_numpy()
        before, after = plain_tv(start, column, k, weights), plain_tv(out, column, k, weights)
        assert after.mean() <= before.mean() + 1e-9 and after.max() <= before.max() + 1e-9
    column = S["g"].to_numpy()
    p = np.array([weights[column == v].sum() for v in np.unique(column)]) / weights.sum()
    for c in range(k):
        mine = out == c
        share = np.array([weights[mine & (column == v)].sum()
                          for v in np.unique(column)]) / weights[mine].sum()
        assert np.all(np.abs(share - p) <= 0.1 + 1e-9)
    z = (S["z"] - np.average(S["z"], weights=weights)).to_numpy()
    z = z / np.sqrt(np.average(z**2, weights=weights))
    before = np.array([abs(np.average(z[start == c], weights=weights[start == c]))
                       for c in range(k)])
    after = np.array([abs(np.average(z[out == c], weights=weights[out == c])) for c in range(k)])
    assert after.mean() <= before.mean() + 1e-9 and after.max() <= before.max() + 1e-9


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4), weighted=st.booleans())
def test_own_guard_measures_each_cluster_plainly(seed, k, weighted):
    rng = np.random.default_rng(seed)
    n = 80
    S = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.normal(size=n)})
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    bounds = resolve_bounds(S, n, max_deviation=None, sample_weight=w)
    labels = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    guard = own_guard(bounds, labels, k)
    weights = np.ones(n) if w is None else w
    tv = plain_tv(labels, S["a"].to_numpy(), k, weights)
    # The bounds read weights to 32 significant bits (a share within 3e-10 of itself).
    tol = 1e-12 if w is None else 1e-9
    assert guard.worst["a"] == pytest.approx(tv.max(), abs=tol)
    assert guard.mean["a"] == pytest.approx(tv.mean(), abs=tol)
    b = S["b"].to_numpy()
    z = (b - np.average(b, weights=weights)) / np.sqrt(
        np.average((b - np.average(b, weights=weights)) ** 2, weights=weights))
    means = np.array([abs(np.average(z[labels == c], weights=weights[labels == c]))
                      for c in range(k)])
    assert guard.worst["b"] == pytest.approx(means.max(), abs=1e-9)
    assert guard.mean["b"] == pytest.approx(means.mean(), abs=1e-9)


def test_guard_caps_reach_the_search_space():
    S = pd.DataFrame({"a": [0, 1, 0, 1, 0, 1], "b": [0, 0, 1, 1, 2, 2]})
    bounds = resolve_bounds(S, 6, max_deviation={"a": 0.2})
    problem = make_problem(np.zeros((6, 1)), bounds, 2)
    space = SearchSpace.build(bounds, problem, np.arange(6),
                              Guard(worst={"b": 0.3}, mean={"b": 0.1}))
    # a is bounded (bands), b only guarded (bands that never bind, caps on its distance).
    assert space.codes.shape[1] == 2
    assert_allclose(space.tv_cap[:, 1], [0.3, 0.3])
    assert np.all(np.isinf(space.tv_cap[:, 0]))
    # The cap on the mean over the 2 clusters is one on their sum.
    assert np.isinf(space.mean_cap[0]) and space.mean_cap[1] == pytest.approx(0.2)
    assert np.all(space.lower[:, 2:] < 0) and np.all(space.upper[:, 2:] > 1)
    assert_allclose(space.upper[0, :2], [0.7, 0.7])


def test_a_start_with_an_empty_cluster_gets_the_row_cheapest_to_move_there():
    # A relaxation keeps clusters non-empty with fractions of rows; its largest shares may not.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    S = pd.DataFrame({"g": np.arange(40) % 2})
    bounds = resolve_bounds(S, 40, max_deviation=0.5)
    problem = make_problem(X, bounds, 3)
    space = SearchSpace.build(bounds, problem, np.arange(40))
    dist = sq_distances(X, np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]))
    start = np.where(np.arange(40) < 20, 0, 1)
    out, met = local_search(space, dist, start, polish=False)
    assert met and np.bincount(out, minlength=3).min() >= 1
    # The one row moved is the cheapest to move to cluster 2.
    moved = np.flatnonzero(out != start)
    assert moved.shape[0] == 1
    assert moved[0] == np.argmin(dist[:, 2] - dist[np.arange(40), start])
