"""The bounded assignment as linear and integer programmes over (row, cluster) pairs, for HiGHS.

Variables, for the free rows and the (row, cluster) pairs allowed to them:

* ``x[i, c]`` in [0, 1]: the share of row ``i`` assigned to cluster ``c``;
* ``z[t, c] = sum_{free i of type t} w_i x[i, c]``: the weight of type ``t``
  in cluster ``c``, a type being one combination of the bounded categorical
  attributes' values. The bounds see a row only through its type, so the
  fairness rows have one entry per type, not per row;
* ``s[c] = sum_t z[t, c]``: the free weight in cluster ``c``.

Rows: every free row is assigned once; ``z`` and ``s`` are defined as above;
for every cluster and value ``count_c(v) <= upper_v size_c`` and
``count_c(v) >= lower_v size_c`` (sides that cannot bind are left out); for
bounded numeric attributes ``|sum w z x| <= bound size_c``; for an attribute
with a balance target ``b``, for every cluster and ordered pair ``v != u`` of
values present in the dataset, ``b count_c(u) - count_c(v) <= 0`` (the
smallest count at least ``b`` times the largest); and every cluster keeps at
least the smallest row weight. ``count`` and ``size`` include the
weight of the rows held elsewhere. The objective is ``sum w_i d[i, c] x[i, c]``
with ``d`` the squared distance to the centre.

The duals of the inequality rows price a unit of weight of each type in each
cluster (:class:`Prices`). With them every row, free or held, has a priced
cost per cluster, and for any non-negative duals

    ``sum_i w_i min_c (d[i, c] + price[i, c]) + w_min * sum_c nonempty_dual[c]``

is a lower bound on the cost of every assignment meeting the bounds (weak
duality of the Lagrangian that moves the bound rows into the objective). At
the relaxation's optimum it equals the optimum: that is the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linear_sum_assignment, milp

from ._highs import Programmes
from ._quiet import quiet_stdout

__all__ = [
    "INFEASIBLE",
    "MILP_NODE_LIMIT",
    "Held",
    "LPOutcome",
    "Prices",
    "Problem",
    "balance_pairs",
    "excess",
    "held_offsets",
    "live_rows",
    "make_problem",
    "solve_lp",
    "solve_milp",
    "sq_distances",
    "types_of",
]

# Branch-and-bound nodes HiGHS may explore in one integer programme; the best
# solution found is used. A node limit ends the search at the same point on any
# machine, so the labels are reproducible; no clock decides a result (the
# programmes' sizes are capped by their callers instead).
MILP_NODE_LIMIT = 300
# scipy's status (linprog and milp alike) for a programme with no feasible point.
INFEASIBLE = 2
_CHUNK = 65536
_CAT, _NUM, _NONEMPTY, _BAL = 0, 1, 2, 3


@dataclass(frozen=True)
class Problem:
    """The data and bounds of one problem, as arrays.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    weights : ndarray of shape (n_samples,)
        Row weights (ones for unit weights).
    unit : bool
        Whether every weight is 1.
    cat : list of (codes, lower, upper)
        The bounded categorical attributes: value codes per row and share
        band, per value (n_values,) or per cluster and value (n_clusters,
        n_values).
    num : list of (z, bound)
        The bounded numeric attributes: standardised values and bound (a
        float, or one per cluster).
    types : ndarray of shape (n_samples,), int64
        Type of each row (its combination of bounded categorical values).
    type_table : ndarray of shape (n_types, len(cat)), int64
        The values of each type.
    n_clusters : int
    w_min : float
        The smallest positive weight: every cluster keeps at least that much.
    cost_scale : float
        What the weights were divided by (see :func:`make_problem`): costs
        measured with ``weights`` times ``cost_scale`` are the user's.
    balance : tuple of (float, ndarray)
        Per attribute of ``cat``, its balance target (0: none) and which of
        its values the dataset holds (bool, (n_values,)); empty: no target.
    """

    X: np.ndarray
    weights: np.ndarray
    unit: bool
    cat: list
    num: list
    types: np.ndarray
    type_table: np.ndarray
    n_clusters: int
    w_min: float
    cost_scale: float = 1.0
    balance: tuple = ()

    @property
    def n_types(self):
        """Number of types."""
        return self.type_table.shape[0]

    @property
    def by_type(self):
        """Whether type counts decide the bounds: unit weights and no numeric bound.

        Then rows of one type are interchangeable for the bounds, and given
        integral counts per (type, cluster) the rows' assignment is a
        transportation problem whose vertices are integral.
        """
        return self.unit and not self.num


def balance_pairs(problem):
    """Per attribute with a balance target: ``(a, b, v, u)``, the ordered pairs of present values.

    ``v`` and ``u`` are int64 arrays of the same length: each row of the
    balance asks ``b count(u) - count(v) <= 0``.
    """
    out = []
    for a, (b, present) in enumerate(problem.balance):
        values = np.flatnonzero(present)
        # One value present in the dataset: every cluster's balance is 1, nothing to ask.
        if b > 0.0 and values.shape[0] > 1:
            v, u = np.repeat(values, values.shape[0]), np.tile(values, values.shape[0])
            keep = v != u
            out.append((a, float(b), v[keep], u[keep]))
    return out


def types_of(cat, n):
    """Each row's type (combination of the bounded values) and the values of each type."""
    if not cat:
        return np.zeros(n, dtype=np.int64), np.zeros((1, 0), dtype=np.int64)
    sizes = [lower.shape[-1] for _, lower, _ in cat]
    if float(np.prod(sizes, dtype=np.float64)) >= 2.0 ** 62:
        codes = np.stack([c[0] for c in cat], axis=1)
        table, types = np.unique(codes, axis=0, return_inverse=True)
        return types.reshape(-1).astype(np.int64), table.astype(np.int64)
    # One mixed-radix code per row: a 1-D unique is much faster than a unique of rows.
    code = np.zeros(n, dtype=np.int64)
    for (values, _, _), size in zip(cat, sizes, strict=True):
        code = code * size + values
    uniques, types = np.unique(code, return_inverse=True)
    table = np.empty((uniques.shape[0], len(cat)), dtype=np.int64)
    for j in range(len(cat) - 1, -1, -1):
        table[:, j] = uniques % sizes[j]
        uniques = uniques // sizes[j]
    return types.reshape(-1).astype(np.int64), table


def make_problem(X, bounds, n_clusters):
    """Arrays of one problem from ``X`` and a :class:`~fairkm.metrics._bound_spec.BoundSet`.

    The bound set's weights are already near 1 (a typical row weighs 1, see
    :func:`fairkm.metrics._bound_spec.solver_weights`): weights of 1e300 or 1e-300
    would overflow or underflow in the programmes' costs (HiGHS refuses
    them). Costs are reported in the user's unit (``cost_scale``).
    """
    n = X.shape[0]
    weights = np.ones(n) if bounds.weights is None else bounds.weights
    scale = bounds.unit
    cat = [(a.values, a.lower, a.upper) for a in bounds.categorical()]
    num = [(a.values, a.delta) for a in bounds.numeric()]
    balance = tuple((a.balance if a.balanced else 0.0, a.present)
                    for a in bounds.categorical())
    types, type_table = types_of(cat, n)
    w_min = float(weights[weights > 0].min())
    return Problem(X, weights, bool(np.all(weights == 1.0)), cat, num, types, type_table,
                   n_clusters, w_min, scale, balance)


def sq_distances(X, centers):
    """Squared Euclidean distances of the rows of ``X`` to ``centers``, in row chunks."""
    out = np.empty((X.shape[0], centers.shape[0]))
    cc = np.einsum("ij,ij->i", centers, centers)
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start:start + _CHUNK]
        d = np.einsum("ij,ij->i", block, block)[:, None] - 2.0 * block @ centers.T + cc
        out[start:start + _CHUNK] = np.maximum(d, 0.0)
    return out


def live_rows(dist, live):
    """Return the rows ``live`` of ``dist``: ``dist`` itself, not a copy, when they are all.

    ``live`` holds rows in order (those of positive weight), so as many as
    ``dist`` has are every row. At 1,000,000 rows and k=20 a copy is 160 MB.
    """
    return dist if live.shape[0] == dist.shape[0] else dist[live]


@dataclass(frozen=True)
class Held:
    """The weight that rows held fixed put in each cluster: size, value counts, numeric sums."""

    size: np.ndarray
    counts: list
    sums: list


def held_offsets(problem, rows, labels):
    """Offsets of the rows ``rows`` held in clusters ``labels`` (both may be empty)."""
    k = problem.n_clusters
    w = problem.weights[rows]
    size = np.bincount(labels, weights=w, minlength=k)
    counts = []
    for codes, lower, _ in problem.cat:
        n_values = lower.shape[-1]
        counts.append(np.bincount(labels * n_values + codes[rows], weights=w,
                                  minlength=k * n_values).reshape(k, n_values))
    sums = [np.bincount(labels, weights=w * z[rows], minlength=k) for z, _ in problem.num]
    return Held(size, counts, sums)


def excess(problem, rows, labels, held=None):
    """Per cluster, the weight by which ``rows`` in ``labels`` (plus ``held``) exceed the bounds."""
    off = held_offsets(problem, rows, labels)
    size = off.size if held is None else off.size + held.size
    out = np.zeros(problem.n_clusters)
    for j, ((_, lower, upper), a) in enumerate(zip(problem.cat, off.counts, strict=True)):
        count = a if held is None else a + held.counts[j]
        lower, upper = (np.broadcast_to(b, count.shape) for b in (lower, upper))
        over = np.maximum(count - upper * size[:, None], 0.0)
        under = np.maximum(lower * size[:, None] - count, 0.0)
        out += np.where(upper < 1.0, over, 0.0).sum(1)
        out += np.where(lower > 0.0, under, 0.0).sum(1)
    for j, ((_, bound), a) in enumerate(zip(problem.num, off.sums, strict=True)):
        total = a if held is None else a + held.sums[j]
        out += np.maximum(np.abs(total) - bound * size, 0.0)
    for a, b, v, _ in balance_pairs(problem):
        count = off.counts[a] if held is None else off.counts[a] + held.counts[a]
        present = count[:, np.unique(v)]
        out += np.maximum(b * present.max(axis=1) - present.min(axis=1), 0.0)
    return out


@dataclass(frozen=True)
class Prices:
    """What the bound rows charge a unit of weight, per (type, cluster), from their duals.

    Attributes
    ----------
    base : ndarray of shape (n_types, n_clusters)
        The price of a unit of weight of each type in each cluster.
    slope : ndarray of shape (n_numeric, n_clusters)
        Per bounded numeric attribute, the price of a unit of ``w z`` in each cluster.
    bonus : float
        ``w_min`` times the duals of the non-empty rows: the constant of the
        Lagrangian bound.
    multipliers : ndarray or None
        The multipliers behind the prices, in the layout of
        :class:`fairkm.bounds._dual.Multipliers` (None when not kept).
    """

    base: np.ndarray
    slope: np.ndarray
    bonus: float
    multipliers: np.ndarray | None = None

    def of(self, problem, rows):
        """Per unit of weight, the price of each row of ``rows`` in each cluster."""
        out = self.base[problem.types[rows]]
        for (z, _), slope in zip(problem.num, self.slope, strict=True):
            out = out + z[rows][:, None] * slope[None, :]
        return out


@dataclass
class _Programme:
    c: np.ndarray
    A_eq: sparse.csr_matrix
    b_eq: np.ndarray
    A_ub: sparse.csr_matrix
    b_ub: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    n_pairs: int
    combos: np.ndarray
    n_slack: int
    # what each inequality row bounds: kind, cluster, attribute, value, sign, bound
    meta: np.ndarray


def _build(problem, rows, w_rows, pos, clu, cost, held, *, elastic=False):
    """Build the programme over the pairs ``(rows[pos], clu)`` with the rows of ``held`` fixed."""
    k = problem.n_clusters
    m_r, m = rows.shape[0], pos.shape[0]
    w = w_rows[rows][pos]
    combo = problem.types[rows][pos] * k + clu
    combos, link = np.unique(combo, return_inverse=True)
    nz = combos.shape[0]
    zt, zc = combos // k, combos % k
    iz, i_s = m, m + nz
    eq = [
        (pos, np.arange(m), np.ones(m)),
        (m_r + link, np.arange(m), -w),
        (m_r + np.arange(nz), iz + np.arange(nz), np.ones(nz)),
        (m_r + nz + zc, iz + np.arange(nz), -np.ones(nz)),
        (m_r + nz + np.arange(k), i_s + np.arange(k), np.ones(k)),
    ]
    ub, b_ub, meta, n_ub = [], [], [], 0
    for a, ((_, lower, upper), counts) in enumerate(zip(problem.cat, held.counts, strict=True)):
        n_values = lower.shape[-1]
        zv = problem.type_table[zt, a]
        lower, upper = (np.broadcast_to(b, (k, n_values)) for b in (lower, upper))
        for bound, sign, keep in ((upper, 1.0, upper < 1.0), (lower, -1.0, lower > 0.0)):
            row_id = np.full((k, n_values), -1, dtype=np.int64)
            row_id[keep] = n_ub + np.arange(int(keep.sum()))
            r = row_id[zc, zv]
            sel = np.flatnonzero(r >= 0)
            ub.append((r[sel], iz + sel, np.full(sel.shape[0], sign)))
            cc, vv = np.nonzero(keep)
            ub.append((row_id[cc, vv], i_s + cc, -sign * bound[cc, vv]))
            b_ub.append(sign * (bound[cc, vv] * held.size[cc] - counts[cc, vv]))
            meta.append(np.stack([np.full(cc.shape[0], _CAT), cc, np.full(cc.shape[0], a), vv,
                                  np.full(cc.shape[0], sign), bound[cc, vv]], 1))
            n_ub += cc.shape[0]
    for a, ((z, bound), sums) in enumerate(zip(problem.num, held.sums, strict=True)):
        bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), (k,))
        wz = w * z[rows][pos]
        for sign in (1.0, -1.0):
            ub.append((n_ub + clu, np.arange(m), sign * wz))
            ub.append((n_ub + np.arange(k), i_s + np.arange(k), -bound))
            b_ub.append(bound * held.size - sign * sums)
            meta.append(np.stack([np.full(k, _NUM), np.arange(k), np.full(k, a), np.zeros(k),
                                  np.full(k, sign), bound], 1))
            n_ub += k
    n_ub = _balance_rows(problem, zt, zc, iz, held, ub, b_ub, meta, n_ub)
    n_slack = n_ub if elastic else 0
    if n_slack:
        ub.append((np.arange(n_ub), m + nz + k + np.arange(n_ub), -np.ones(n_ub)))
    # Every cluster keeps at least the smallest weight: -s_c <= held_c - w_min.
    ub.append((n_ub + np.arange(k), i_s + np.arange(k), -np.ones(k)))
    b_ub.append(held.size - problem.w_min)
    meta.append(np.stack([np.full(k, _NONEMPTY), np.arange(k), np.zeros(k), np.zeros(k),
                          np.ones(k), np.zeros(k)], 1))
    n_ub += k
    n_var = m + nz + k + n_slack

    def matrix(parts, n_rows):
        r, c_, v = (np.concatenate(p) for p in zip(*parts, strict=True))
        return sparse.csr_matrix((v, (r, c_)), shape=(n_rows, n_var))

    c = np.concatenate([cost, np.zeros(nz + k + n_slack)])
    lb = np.zeros(n_var)
    ubound = np.full(n_var, np.inf)
    ubound[:m] = 1.0
    b_eq = np.concatenate([np.ones(m_r), np.zeros(nz + k)])
    return _Programme(c, matrix(eq, m_r + nz + k), b_eq, matrix(ub, n_ub),
                      np.concatenate(b_ub), lb, ubound, m, combos, n_slack,
                      np.concatenate(meta).reshape(-1, 6))


def balance_entries(problem, zt, zc, a, b, v, u, first):
    """Entries of one attribute's balance rows on (type, cluster) weights.

    The weight of type ``zt[j]`` in cluster ``zc[j]`` enters row
    ``(c, v, u)`` (numbered ``first + c * len(v) + pair``) with ``-1`` where
    its value is ``v`` and ``+b`` where it is ``u``.

    Returns
    -------
    rows, positions, coefficients : ndarray
        Row numbers, positions in ``zt``, and coefficients.
    """
    k = problem.n_clusters
    n_values = problem.cat[a][1].shape[-1]
    n_pairs = v.shape[0]
    row_id = np.full((k, n_values, n_values), -1, dtype=np.int64)
    row_id[:, v, u] = first + np.arange(k)[:, None] * n_pairs + np.arange(n_pairs)[None, :]
    zv = problem.type_table[zt, a]
    rows, positions, coefficients = [], [], []
    for other in range(n_values):
        for r, coefficient in ((row_id[zc, zv, other], -1.0), (row_id[zc, other, zv], b)):
            sel = np.flatnonzero(r >= 0)
            rows.append(r[sel])
            positions.append(sel)
            coefficients.append(np.full(sel.shape[0], coefficient))
    return np.concatenate(rows), np.concatenate(positions), np.concatenate(coefficients)


def _balance_rows(problem, zt, zc, iz, held, ub, b_ub, meta, n_ub):
    """Append the balance rows ``b count_c(u) - count_c(v) <= 0``; return the row count."""
    k = problem.n_clusters
    for a, b, v, u in balance_pairs(problem):
        rows, positions, coefficients = balance_entries(problem, zt, zc, a, b, v, u, n_ub)
        ub.append((rows, iz + positions, coefficients))
        counts = held.counts[a]
        b_ub.append((counts[:, v] - b * counts[:, u]).reshape(-1))
        n_values = problem.cat[a][1].shape[-1]
        cc = np.repeat(np.arange(k), v.shape[0])
        meta.append(np.stack([np.full(cc.shape[0], _BAL), cc, np.full(cc.shape[0], a),
                              np.tile(v * n_values + u, k), np.ones(cc.shape[0]),
                              np.full(cc.shape[0], b)], 1))
        n_ub += cc.shape[0]
    return n_ub


def _prices(problem, programme, duals):
    """Prices of every (type, cluster) and numeric slopes from the inequality rows' duals."""
    k = problem.n_clusters
    lam = np.maximum(duals, 0.0)
    meta = programme.meta
    kind, cluster = meta[:, 0].astype(np.int64), meta[:, 1].astype(np.int64)
    attr, value = meta[:, 2].astype(np.int64), meta[:, 3].astype(np.int64)
    sign, bound = meta[:, 4], meta[:, 5]
    base = np.zeros((problem.n_types, k))
    const = np.zeros(k)
    for a, (_, lower, _) in enumerate(problem.cat):
        sel = (kind == _CAT) & (attr == a)
        per_value = np.zeros((k, lower.shape[-1]))
        np.add.at(per_value, (cluster[sel], value[sel]), lam[sel] * sign[sel])
        base += per_value[:, problem.type_table[:, a]].T
        np.add.at(const, cluster[sel], -lam[sel] * sign[sel] * bound[sel])
    slope = np.zeros((len(problem.num), k))
    for a in range(len(problem.num)):
        sel = (kind == _NUM) & (attr == a)
        np.add.at(slope[a], cluster[sel], lam[sel] * sign[sel])
        np.add.at(const, cluster[sel], -lam[sel] * bound[sel])
    for a, (_, lower, _) in enumerate(problem.cat):
        # b count(u) - count(v) <= 0: a unit of value v in the cluster earns the dual, of u
        # it pays b times it.
        sel = (kind == _BAL) & (attr == a)
        if sel.any():
            n_values = lower.shape[-1]
            per_value = np.zeros((k, n_values))
            np.add.at(per_value, (cluster[sel], value[sel] // n_values), -lam[sel])
            np.add.at(per_value, (cluster[sel], value[sel] % n_values), lam[sel] * bound[sel])
            base += per_value[:, problem.type_table[:, a]].T
    sel = kind == _NONEMPTY
    np.add.at(const, cluster[sel], -lam[sel])
    return Prices(base + const[None, :], slope, problem.w_min * float(lam[sel].sum()))


@dataclass(frozen=True)
class LPOutcome:
    """A solved relaxation: shares of the pairs, optimum (free rows only), prices, status.

    ``rows``: the inequality rows' description (``_Programme.meta``) and their
    duals, from which the prices were made (None when unsolved).
    """

    x: np.ndarray | None
    fun: float
    prices: Prices | None
    status: int
    message: str
    rows: tuple | None = None


def _costs(weights, rows, pos, dist_pairs):
    """Each pair's weighted cost, and their mean: the programmes see costs near 1."""
    cost = weights[rows][pos] * dist_pairs
    return cost, float(cost.mean()) if cost.size and cost.mean() > 0 else 1.0


def _cheapest_basis(prog, pos):
    """Return the columns basic when every row lies in its cheapest cluster (ties: the first pair).

    That is the optimum without the bounds: each row's cheapest share, and
    every aggregate (a type's weight in a cluster, a cluster's size) and every
    inequality row's slack basic, which also makes the matrix triangular with
    a unit diagonal, hence a basis. Its reduced costs are the pairs' costs
    less their row's least: dual feasible, so the dual simplex starts at the
    optimum of the programme without the bounds and only repairs what they
    forbid.
    """
    n_pairs = prog.n_pairs
    order = np.lexsort((np.arange(n_pairs), prog.c[:n_pairs], pos))
    first = np.ones(n_pairs, dtype=bool)
    first[1:] = pos[order[1:]] != pos[order[:-1]]
    basic = np.zeros(prog.c.shape[0], dtype=bool)
    basic[order[first]] = True
    basic[n_pairs:prog.c.shape[0] - prog.n_slack] = True
    return basic


def solve_lp(problem, rows, pos, clu, dist_pairs, held, w_rows=None, programmes=None):
    """Solve the relaxation over the pairs ``(rows[pos], clu)`` with the ``held`` rows fixed.

    Parameters
    ----------
    problem : Problem
    rows : ndarray of shape (m,), int64
        The free rows.
    pos, clu : ndarray of shape (n_pairs,), int64
        The allowed (position in ``rows``, cluster) pairs; every row has one.
    dist_pairs : ndarray of shape (n_pairs,)
        Squared distance of each pair.
    held : Held
        What the other rows put in each cluster.
    w_rows : ndarray of shape (n_samples,) or None
        Weights to use for every row (a sample's rows are reweighted); the
        problem's weights if None.
    programmes : Programmes or None
        The HiGHS of the call's earlier programmes (one :func:`fairkm.bounds.solve`'s),
        holding the last one: a programme that differs only in its costs
        starts from that one's basis (:mod:`fairkm.bounds._highs`), any other
        from every row in its cheapest cluster (:func:`_cheapest_basis`).
        None: a new HiGHS.

    Returns
    -------
    LPOutcome
    """
    w_rows = problem.weights if w_rows is None else w_rows
    cost, scale = _costs(w_rows, rows, pos, dist_pairs)
    prog = _build(problem, rows, w_rows, pos, clu, cost / scale, held)
    programmes = Programmes() if programmes is None else programmes
    res = programmes.solve(prog.c, A_ub=prog.A_ub, b_ub=prog.b_ub, A_eq=prog.A_eq,
                           b_eq=prog.b_eq, lower=prog.lb, upper=prog.ub,
                           basic=lambda: _cheapest_basis(prog, pos))
    if res.status != 0:
        return LPOutcome(None, np.nan, None, res.status, res.message)
    x = np.clip(res.x[:prog.n_pairs], 0.0, 1.0)
    duals = -res.ineq_duals * scale
    prices = _prices(problem, prog, duals)
    return LPOutcome(x, float(res.fun) * scale, prices, 0, str(res.message),
                     (prog.meta, duals))


def _options(gap=1e-4, presolve=True, node_limit=MILP_NODE_LIMIT):
    return {"mip_rel_gap": gap, "node_limit": node_limit, "presolve": presolve}


def message_of(res):
    """HiGHS's ending in words (scipy does not name its node-limit status)."""
    if res is None:
        return "no programme solved"
    if "Solution limit reached" in str(res.message):
        return "stopped at the node limit with the best solution found"
    return str(res.message)


def _milp(prog, c, integral, *, gap, node_limit, extra=(), presolve=True):
    constraints = [LinearConstraint(prog.A_eq, prog.b_eq, prog.b_eq),
                   LinearConstraint(prog.A_ub, -np.inf, prog.b_ub), *extra]
    with quiet_stdout():
        return milp(c, integrality=integral, bounds=Bounds(prog.lb, prog.ub),
                    constraints=constraints, options=_options(gap, presolve, node_limit))


def _integral_rows(problem, rows, pos, clu, cost, y):
    """Labels of ``rows`` from pair values ``y`` that are integral per type but maybe not per row.

    With integral type counts the rows' assignment is a transportation
    problem; should the solver return a fractional point, the fractional rows
    of each type are assigned to the clusters' remaining places (an integral
    number) by an exact assignment of the same or lower cost.
    """
    labels = np.full(rows.shape[0], -1, dtype=np.int64)
    whole = y > 1.0 - 1e-6
    labels[pos[whole]] = clu[whole]
    open_ = np.flatnonzero(labels < 0)
    if not open_.size:
        return labels
    types = problem.types[rows]
    k = problem.n_clusters
    big = 10.0 * (np.abs(cost).max() + 1.0)
    for t in np.unique(types[open_]):
        members = open_[types[open_] == t]
        sel = np.isin(pos, members)
        places = np.rint(np.bincount(clu[sel], weights=y[sel], minlength=k)).astype(np.int64)
        slots = np.repeat(np.arange(k), places)
        if slots.shape[0] != members.shape[0]:
            return np.full(rows.shape[0], -1, dtype=np.int64)
        matrix = np.full((members.shape[0], k), big)
        matrix[np.searchsorted(members, pos[sel]), clu[sel]] = cost[sel]
        r, s = linear_sum_assignment(matrix[:, slots])
        labels[members[r]] = slots[s]
    return labels


def solve_milp(problem, rows, pos, clu, dist_pairs, held, *, soft=True, gap=1e-4,
               node_limit=MILP_NODE_LIMIT):
    """Assign ``rows`` integrally, each to one of its allowed clusters, at the least cost.

    When type counts decide the bounds (:attr:`Problem.by_type`) only the
    (type, cluster) weights are integer variables, the rows' shares following
    as a transportation problem; otherwise every pair is a 0/1 variable.

    Parameters
    ----------
    problem, rows, pos, clu, dist_pairs, held
        As in :func:`solve_lp`.
    soft : bool, default=True
        If no assignment meeting the bounds is found, let them be exceeded,
        lexicographically: first the least total excess (in weight), then
        the least cost at that excess.
    gap : float, default=1e-4
        Relative optimality gap (on these rows' cost) at which HiGHS may stop.
    node_limit : int, default=MILP_NODE_LIMIT
        Branch-and-bound nodes per programme: the search ends there with the
        best solution found, at the same point on any machine.

    Returns
    -------
    labels : ndarray of shape (m,), int64, or None
        None when no programme gave a solution.
    status : str
        How HiGHS ended, in words.
    met : bool
        Whether the bounds are met (measured on the labels).
    proven : bool
        Whether the hard programme proved that no assignment of these rows
        to their allowed clusters meets the bounds.
    """
    cost, scale = _costs(problem.weights, rows, pos, dist_pairs)
    by_type = problem.by_type

    def integrality(prog):
        out = np.zeros(prog.c.shape[0])
        if by_type:
            out[prog.n_pairs:prog.n_pairs + prog.combos.shape[0]] = 1
        else:
            out[:prog.n_pairs] = 1
        return out

    def labels_of(res):
        if res is None or res.x is None:
            return np.full(rows.shape[0], -1, dtype=np.int64)
        y = res.x[:pos.shape[0]]
        if by_type:
            return _integral_rows(problem, rows, pos, clu, cost / scale, y)
        labels = np.full(rows.shape[0], -1, dtype=np.int64)
        chosen = y > 0.5
        labels[pos[chosen]] = clu[chosen]
        return labels

    def meets(labels):
        return labels.min() >= 0 and excess(problem, rows, labels, held).max() <= 1e-9

    def run(prog, c, **kwargs):
        res = _milp(prog, c, integrality(prog), gap=gap, node_limit=node_limit, **kwargs)
        failed = res.x is None and res.status not in (1, 2)  # neither a limit nor infeasible
        broken = res.x is not None and not prog.n_slack and not meets(labels_of(res))
        if failed or broken:
            # HiGHS's presolve can fail ("Solve error") or hand back a solution that
            # breaks a bound on bounds with no slack; without presolve it answers correctly.
            res = _milp(prog, c, integrality(prog), gap=gap, node_limit=node_limit,
                        presolve=False, **kwargs)
        return res

    prog = _build(problem, rows, problem.weights, pos, clu, cost / scale, held)
    res = run(prog, prog.c)
    proven = res.status == INFEASIBLE
    labels = labels_of(res)
    if not meets(labels) and soft:
        prog = _build(problem, rows, problem.weights, pos, clu, cost / scale, held,
                      elastic=True)
        n_var, n_slack = prog.c.shape[0], prog.n_slack
        if n_slack:
            excess_only = np.zeros(n_var)
            excess_only[-n_slack:] = 1.0
            least = run(prog, excess_only)
            if least.x is not None:
                total_excess = float(least.x[-n_slack:].sum())
                total = sparse.csr_matrix(
                    (np.ones(n_slack), (np.zeros(n_slack, np.int64),
                                        np.arange(n_var - n_slack, n_var))), shape=(1, n_var))
                cap = LinearConstraint(total, -np.inf, total_excess * (1.0 + 1e-9) + 1e-9)
                cheapest = run(prog, prog.c, extra=(cap,))
                res = cheapest if cheapest.x is not None else least
                labels = labels_of(res)
    if labels.min() < 0:
        return None, message_of(res), False, proven
    return labels, message_of(res), meets(labels), proven
