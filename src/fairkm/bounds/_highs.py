"""Linear programmes solved by HiGHS: from a basis the caller knows, or from the last one.

From one start, a bounded K-Means fit solves the relaxation on every row at
each bounded assignment (:func:`fairkm.bounds._model.solve_lp`): the same
rows, pairs and bounds each time, only the costs moved with the centres.
``scipy.optimize.linprog`` starts every programme from nothing; on Adult
(15,682 rows, k=5: 81,695 columns, 19,342 rows) each took 17,000-17,400
simplex iterations, 0.6 s: HiGHS's own start brings the rows' shares into the
basis about one pivot a row. :class:`Programmes` keeps one HiGHS (the copy scipy
bundles, through scipy's binding of it) holding the last programme solved and
its optimal basis. A programme that differs from it only in its costs starts
from that basis, which stays primal feasible (mostly 40-2,500 iterations
there, 0.03-0.24 s). Any other programme starts from the basis its caller
gives (``basic``, made only then): the relaxation's is every row in its
cheapest cluster, the optimum without the bounds, from which the dual simplex
only repairs what the bounds forbid (on Adult 510-540 iterations, 0.13-0.15
s, the same optima).
A programme without one, or whose start does not end optimal, is solved from
nothing with the options ``linprog(method="highs")`` passes, which gives
linprog's solution to the last bit.

A programme started from a basis reaches the same optimal value, but where the
optimum is not unique it may end at another optimal vertex: other shares for
rows whose clusters cost the same, other duals. Its programmes are solved in
one order, so the results are reproducible; they depend on the programmes
solved before in the same :class:`Programmes`, which is why one lives for one
start's assignments (:func:`fairkm.bounds.solve`). Shared by a fit's starts,
it started each start from another start's basis, far from its own (other
centres): one such start took 17,639 iterations and 1.5 s, and over nine
Adult fits (k=5, three bounds, three seeds) the programmes took 23.2 s
against 19.1 s with one per start.

``scipy.optimize._highspy`` is scipy's private module (scipy 1.15 and later):
without it every programme goes to ``linprog``, from nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

try:  # scipy's binding of its bundled HiGHS, the one linprog(method="highs") runs
    from scipy.optimize._highspy import _core
except ImportError:  # pragma: no cover - scipy before 1.15
    _core = None

__all__ = ["LPSolution", "Programmes", "can_warm_start"]


@dataclass(frozen=True)
class LPSolution:
    """A programme's ending, in ``linprog``'s terms.

    ``status``: linprog's code (0 optimal, 1 a limit reached, 2 infeasible,
    3 unbounded, 4 anything else); ``x``, ``fun`` and ``ineq_duals`` (linprog's
    ``ineqlin.marginals``) are None and NaN unless optimal; ``iterations``
    the simplex iterations this solve took; ``warm`` whether it started from
    the previous programme's basis, ``given`` whether from the caller's.
    """

    status: int
    message: str
    x: np.ndarray | None = None
    fun: float = np.nan
    ineq_duals: np.ndarray | None = None
    iterations: int = 0
    warm: bool = False
    given: bool = False


def can_warm_start():
    """Whether this scipy lets a programme start from the last one's basis."""
    return _core is not None


def _status_codes():
    status = _core.HighsModelStatus
    return {status.kOptimal: 0, status.kTimeLimit: 1, status.kIterationLimit: 1,
            status.kInfeasible: 2, status.kModelError: 2, status.kUnbounded: 3}


def _finite(values):
    """``values`` with infinities as HiGHS's infinity (what linprog passes)."""
    out = np.array(values, dtype=np.float64)
    infinite = np.isinf(out)
    out[infinite] = np.sign(out[infinite]) * _core.kHighsInf
    return out


class Programmes:
    """HiGHS kept between the programmes of one start's assignments (see the module's docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> programmes = Programmes()
    >>> A_eq = sparse.csr_matrix(np.ones((1, 2)))
    >>> A_ub = sparse.csr_matrix(np.array([[1.0, 0.0]]))
    >>> bounds = dict(A_ub=A_ub, b_ub=np.array([0.5]), A_eq=A_eq, b_eq=np.array([1.0]),
    ...               lower=np.zeros(2), upper=np.ones(2))
    >>> programmes.solve(np.array([1.0, 2.0]), **bounds).x.tolist()
    [0.5, 0.5]
    >>> later = programmes.solve(np.array([3.0, 2.0]), **bounds)
    >>> later.x.tolist(), later.warm
    ([0.0, 1.0], True)
    """

    def __init__(self):
        self._highs = None
        self._constraints = None  # what the held programme's constraints and bounds were

    def solve(self, c, *, A_ub, b_ub, A_eq, b_eq, lower, upper, basic=None):
        """Minimise ``c @ x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``lower <= x <= upper``.

        ``A_ub`` and ``A_eq`` are scipy sparse matrices; returns an
        :class:`LPSolution`. ``basic`` (a function of no argument, or None)
        returns, when the last programme's basis cannot serve, a basis to
        start from: a boolean mask of the columns basic, with every inequality
        row's slack, every other column and equality row at its lower bound.
        The caller makes it a basis (as many basic as rows, its matrix
        invertible) and, for speed, dual feasible; it is not made for a
        programme that starts from the last one's.
        """
        c = np.asarray(c, dtype=np.float64)
        if _core is None:
            return self._linprog(c, A_ub, b_ub, A_eq, b_eq, lower, upper)
        A = sparse.csc_array(sparse.vstack((A_ub, A_eq)))
        n_ub = A_ub.shape[0]
        lhs = _finite(np.concatenate([np.full(n_ub, -np.inf), b_eq]))
        rhs = _finite(np.concatenate([b_ub, b_eq]))
        constraints = (A.indptr, A.indices, A.data, lhs, rhs, _finite(lower), _finite(upper))
        if self._highs is not None and self._same(constraints):
            self._highs.changeColsCost(c.shape[0], np.arange(c.shape[0], dtype=np.int32), c)
            solution = self._run(n_ub, warm=True)
            if solution.status == 0:
                return solution
        self._highs, self._constraints = self._loaded(c, A, constraints), constraints
        if basic is not None:
            solution = self._from_basis(basic(), n_ub, A.shape[0] - n_ub)
            if solution.status == 0:
                return solution
            self._highs = self._loaded(c, A, constraints)  # from nothing, as linprog
        return self._run(n_ub, warm=False)

    def _from_basis(self, basic, n_ub, n_eq):
        status = _core.HighsBasisStatus
        basis = _core.HighsBasis()
        basis.col_status = np.where(basic, status.kBasic, status.kLower).tolist()
        basis.row_status = [status.kBasic] * n_ub + [status.kLower] * n_eq
        basis.valid = True
        if self._highs.setBasis(basis) != _core.HighsStatus.kOk:
            return LPSolution(4, "the basis given was refused")
        return self._run(n_ub, given=True)

    def _same(self, constraints):
        return all(a.shape == b.shape and np.array_equal(a, b)
                   for a, b in zip(constraints, self._constraints, strict=True))

    @staticmethod
    def _loaded(c, A, constraints):
        """Return a HiGHS holding the programme, with the options linprog(method="highs") sets."""
        _, _, _, lhs, rhs, lower, upper = constraints
        lp = _core.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = A.shape[1], A.shape[0]
        lp.a_matrix_.format_ = _core.MatrixFormat.kColwise
        lp.col_cost_ = c
        lp.col_lower_, lp.col_upper_ = lower, upper
        lp.row_lower_, lp.row_upper_ = lhs, rhs
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = (
            A.indptr, A.indices, A.data)
        highs = _core._Highs()
        options = _core.HighsOptions()
        options.presolve = "on"
        options.output_flag = False
        options.log_to_console = False
        options.highs_debug_level = _core.HighsDebugLevel.kHighsDebugLevelNone
        options.simplex_strategy = _core.simplex_constants.SimplexStrategy.kSimplexStrategyDual
        highs.passOptions(options)
        highs.passModel(lp)
        return highs

    def _run(self, n_ub, *, warm=False, given=False):
        highs = self._highs
        run = highs.run()
        model_status = highs.getModelStatus()
        message = highs.modelStatusToString(model_status)
        info = highs.getInfo()
        iterations = int(info.simplex_iteration_count)
        if run == _core.HighsStatus.kError or model_status != _core.HighsModelStatus.kOptimal:
            return LPSolution(_status_codes().get(model_status, 4), message,
                              iterations=iterations, warm=warm, given=given)
        solution = highs.getSolution()
        return LPSolution(0, message, np.array(solution.col_value),
                          float(info.objective_function_value),
                          np.array(solution.row_dual)[:n_ub], iterations, warm, given)

    @staticmethod
    def _linprog(c, A_ub, b_ub, A_eq, b_eq, lower, upper):
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                      bounds=np.stack([lower, upper], 1), method="highs")
        if res.status != 0:
            return LPSolution(int(res.status), str(res.message))
        return LPSolution(0, str(res.message), res.x, float(res.fun), res.ineqlin.marginals,
                          int(res.nit))
