"""SVMMAP: the structural SVM over rankings that optimises average precision
([Yue2007]), trained by the 1-slack cutting-plane method ([Joachims2009]) and certified by a
duality gap.

Joint feature map and loss of a ranking ``y`` (a total order of the m positives and n
negatives; ``y_ij = +1`` when positive i is ranked above negative j, ``-1`` otherwise)::

    Psi(y) = (1/(m n)) sum_{i pos} sum_{j neg} y_ij (x_i - x_j),     Delta(y) = 1 - AP(y)

with ``AP(y) = (1/m) sum_k k / r_k`` over the positives in rank order (``r_k`` the rank of the
k-th positive), the average precision of :func:`infpush_cvx.evaluation.metrics.average_precision` on
untied scores. ``y*`` ranks every positive first (``Delta(y*) = 0``).

Scaling. [Yue2007] minimise ``(1/2)||w||^2 + C xi``; divided by C this is the project's paper
scaling (docs/mathematics.md, section 3.1) with ``lam = 1/C``, as the rankers and the
experiments map C to lambda (:mod:`infpush_cvx.evaluation.experiments.agarwal`)::

    P(w) = (lam/2) ||w||^2 + H(w),     H(w) = max_y [Delta(y) - w.(Psi(y*) - Psi(y))] >= 0

(the maximum includes ``y = y*``, which gives 0, so the slack's ``xi >= 0`` is built in).
With scores ``s = Xp w``, ``t = Xn w``: ``w.(Psi(y*) - Psi(y)) = (2/(m n)) sum over the
swapped pairs (negative j above positive i) of (s_i - t_j)``.

Most violated constraint (:func:`most_violated_ranking`), [Yue2007], Algorithm 2: sort the
positives and the negatives by decreasing score (an optimal ranking keeps both orders); with
``a_j`` the number of positives above the j-th negative, ``H`` separates into
``sum_j F_j(a_j)`` where ``F_j(a) = delta_j(a) + (2/(m n)) (S_a - a t_j)`` (``S_a`` the sum of the
a highest positive scores) and ``delta_j(a) = (1/m) sum_{k > a} k / ((k+j-1)(k+j))``, the part of
``1 - AP`` owed to the j-th negative, in closed form
``m delta_j(a) = (H_{m+j} - H_{a+j}) - (j-1)(m-a) / ((m+j)(a+j))`` (``H_q`` harmonic numbers).
``F_j(a+1) - F_j(a)`` grows with j, so the largest maximiser of each ``F_j`` is nondecreasing
in j ([Yue2007] prove the same monotonicity): the independent maxima form a valid ranking and
are found by divide and conquer over j (the middle negative scans its window of positions, the
halves search left and right of its choice), ``O(m log n + n)`` evaluations after the two sorts,
``O((m + n) log(m + n))`` in all, instead of the paper's ``O(m n)`` scan.

Ties. The oracle maximises over *total orders*: tied scores are broken in whatever way is
worst for ``w`` (every interleaving is a candidate), so ``H`` does not depend on a tie rule.
:func:`infpush_cvx.evaluation.metrics.average_precision` of tied *scores* enters a tied group
together (scikit-learn's rule); the loss of a ranking is computed on untied rank positions, where
the two agree.

Cutting planes. Each oracle call at ``w_t`` gives a cut ``xi >= Delta_k - g_k.w`` with
``g_k = Psi(y*) - Psi(y_k)``; the working set is kept (it does not depend on lam, so a warm start
from another lam reuses it). The cutting-plane QP ``min (lam/2)||w||^2 + xi`` over the cuts
(and ``xi >= 0``) is solved by Clarabel in (w, xi), then polished exactly on its active cuts;
its multipliers ``alpha`` (``alpha >= 0``, ``sum alpha <= 1``) give
``w(alpha) = (1/lam) sum_k alpha_k g_k`` and the dual value
``D(alpha) = sum_k alpha_k Delta_k - (lam/2)||w(alpha)||^2``, a lower bound of the optimum of
the full problem (the dual of the full problem restricted to the working set). The upper bound is
``P(w(alpha))`` computed with the exact oracle; the solve stops when the relative gap
``(P - D) / P`` (:func:`~.result.relative_gap`) is at most ``tol``. The returned ``w`` is the
iterate of lowest ``P`` and ``gap`` compares it with the highest ``D``.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike

from infpush_cvx._logging import log_iteration, log_progress, logs_progress
from infpush_cvx._validation import check_vector
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines import duality
from infpush_cvx.solvers.engines.common import (blas_threads_for, centred, data_first, numerical_error_message, prepare)
from infpush_cvx.solvers.engines.deadline import as_deadline
from infpush_cvx.solvers.result import (SolverResult, relative_gap, status_for_gap, warn_if_not_converged)

METHODS = ("cutting_plane",)
_DEFAULT_MAX_ITER = 1000


class ViolatedRanking(NamedTuple):
    """The most violated ranking for scores ``s`` (positives) and ``t`` (negatives).

    ``neg_above[i]``: negatives ranked above positive i; ``pos_below[j]``: positives ranked below
    negative j (both count the swapped pairs: their sums are equal). ``order``: the items from
    the top down, positives numbered ``0..m-1`` and negatives ``m..m+n-1``. ``loss`` is
    ``Delta(y) = 1 - AP(y)`` and ``violation`` is ``H = Delta(y) - w.(Psi(y*) - Psi(y))``.
    """

    neg_above: np.ndarray
    pos_below: np.ndarray
    order: np.ndarray
    loss: float
    violation: float


@numba.njit(cache=True)
def _monotone_argmax(s_desc, t_desc, harmonic):
    """``a_j`` (positives above the j-th negative, j in decreasing score order) maximising
    ``sum_j F_j(a_j)`` (module docstring), the largest maximiser of each ``F_j``, by divide and
    conquer over j with an explicit stack."""
    m = s_desc.shape[0]
    n = t_desc.shape[0]
    prefix = np.zeros(m + 1)
    for i in range(m):
        prefix[i + 1] = prefix[i] + s_desc[i]
    scale = 2.0 / (m * n)
    a = np.zeros(n, dtype=np.int64)
    # (first j, last j, lowest a, highest a) of each pending block, 0-based j
    stack = np.empty((2 * n + 2, 4), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n - 1, 0, m
    top = 1
    while top > 0:
        top -= 1
        jlo, jhi, alo, ahi = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if jlo > jhi:
            continue
        jm = (jlo + jhi) // 2
        j = jm + 1  # 1-based rank of the negative among the negatives
        tj = t_desc[jm]
        best = -np.inf
        arg = alo
        for q in range(alo, ahi + 1):
            val = ((harmonic[m + j] - harmonic[q + j]) - (j - 1.0) * (m - q) / ((m + j) * (q + j))) / m \
                + scale * (prefix[q] - q * tj)
            if val >= best:  # ">=": the largest maximiser keeps the choices monotone
                best = val
                arg = q
        a[jm] = arg
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = jlo, jm - 1, alo, arg
        top += 1
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = jm + 1, jhi, arg, ahi
        top += 1
    return a


def _harmonic(q: int) -> np.ndarray:
    """``H_0 .. H_q`` (``H_0 = 0``)."""
    return np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, q + 1))))


def ranking_loss(neg_above) -> float:
    """``Delta = 1 - AP`` of a ranking given by the negatives above each positive:
    ``AP = (1/m) sum_k k / (k + c_(k))`` over the positives sorted by ``c`` (rank order)."""
    c = np.sort(np.asarray(neg_above, dtype=np.float64))
    k = np.arange(1, c.size + 1, dtype=np.float64)
    return float(1.0 - np.mean(k / (k + c)))


def most_violated_ranking(s: ArrayLike, t: ArrayLike) -> ViolatedRanking:
    """The ranking maximising ``Delta(y) - w.(Psi(y*) - Psi(y))`` for positive scores ``s`` and
    negative scores ``t`` ([Yue2007], Algorithm 2; the module docstring gives the separable form
    and the divide-and-conquer search). ``O((m + n) log(m + n))``. Ties between scores are broken
    in the way that is worst for the scorer (any interleaving is a candidate)."""
    s = check_vector(s, "s")
    t = check_vector(t, "t")
    if s.size == 0 or t.size == 0:
        raise ValueError(f"s and t must be non-empty, got lengths {s.size} and {t.size}")
    m, n = s.size, t.size
    p_order = np.argsort(-s, kind="stable")
    n_order = np.argsort(-t, kind="stable")
    s_desc, t_desc = s[p_order], t[n_order]
    a = _monotone_argmax(s_desc, t_desc, _harmonic(m + n))
    # c_k (negatives above the k-th positive) = #{j : a_j < k}
    c_sorted = np.searchsorted(a, np.arange(1, m + 1), side="left")
    neg_above = np.empty(m, dtype=np.int64)
    neg_above[p_order] = c_sorted
    pos_below = np.empty(n, dtype=np.int64)
    pos_below[n_order] = m - a
    # the order: negative j goes after the a_j-th positive (and after the negatives before it)
    key = np.concatenate((np.arange(m) * 2.0 + 1.0, a * 2.0))  # positive k at 2k+1, neg at 2a_j
    merged = np.argsort(key, kind="stable")
    items = np.concatenate((p_order, m + n_order))
    order = items[merged]
    loss = ranking_loss(c_sorted)
    swapped = (2.0 / (m * n)) * (float(s @ neg_above) - float(t @ pos_below))
    return ViolatedRanking(neg_above, pos_below, order, loss, loss - swapped)


def svmmap_objective(Xp_or_data, Xn=None, w=None, lam: float = 1.0) -> float:
    """``P(w) = (lam/2)||w||^2 + H(w)`` with the exact oracle (module docstring)."""
    data, lam, _ = prepare(Xp_or_data, Xn, lam, loss="ranksvm", penalty="l2", scaling="paper",
                           tol=1.0, max_iter=None)
    data = centred(data)  # the same scores' differences, without a common offset's round-off
    w = check_vector(w, "w", length=data.d)
    viol = most_violated_ranking(data.Xp @ w, data.Xn @ w).violation
    return 0.5 * lam * float(w @ w) + max(viol, 0.0)


def _cut(data, ranking: ViolatedRanking) -> np.ndarray:
    """``g = Psi(y*) - Psi(y) = (2/(m n)) (Xp^T c - Xn^T (m - a))``."""
    m, n = data.m, data.n
    g = data.Xp.T @ ranking.neg_above.astype(np.float64) \
        - data.Xn.T @ ranking.pos_below.astype(np.float64)
    return (2.0 / (m * n)) * np.asarray(g).ravel()


class _CuttingPlaneQP:
    """``min (lam/2)||w||^2 + xi`` s.t. ``xi >= Delta_k - g_k.w`` (the cuts) and ``xi >= 0``."""

    def __init__(self, d: int):
        self.G = np.zeros((0, d))
        self.delta = np.zeros(0)

    def add(self, g: np.ndarray, delta: float) -> None:
        self.G = np.vstack((self.G, g))
        self.delta = np.append(self.delta, delta)

    def dual_value(self, alpha: np.ndarray, lam: float):
        """``(w(alpha), D(alpha))`` for alpha >= 0, sum alpha <= 1."""
        v = self.G.T @ alpha
        return v / lam, float(alpha @ self.delta) - 0.5 * float(v @ v) / lam

    def solve(self, lam: float, time_limit):
        """Multipliers alpha of the cuts (feasible: >= 0, sum <= 1), maximising D."""
        alpha = self._clarabel(lam, time_limit)
        if alpha is None:
            alpha = np.zeros(self.delta.size)
        alpha = _feasible(alpha)
        polished = self._polish(alpha, lam)
        if polished is not None and \
                self.dual_value(polished, lam)[1] >= self.dual_value(alpha, lam)[1]:
            alpha = polished
        return alpha

    def _clarabel(self, lam: float, time_limit):
        import clarabel
        import scipy.sparse as sp

        K, d = self.G.shape
        P = sp.diags(np.r_[np.full(d, lam), 0.0], format="csc")
        q = np.r_[np.zeros(d), 1.0]
        A = sp.csc_matrix(np.block([[-self.G, -np.ones((K, 1))], [np.zeros((1, d)), -1.0]]))
        b = np.r_[-self.delta, 0.0]
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
        if time_limit is not None:
            settings.time_limit = max(float(time_limit), 1e-3)
        sol = clarabel.DefaultSolver(P, q, A, b, [clarabel.NonnegativeConeT(K + 1)],
                                     settings).solve()
        if str(sol.status) not in ("Solved", "AlmostSolved"):
            return None
        return np.asarray(sol.z)[:K].copy()

    def _polish(self, alpha: np.ndarray, lam: float):
        """The exact solution on the active cuts of an interior-point answer (its KKT system:
        ``G_S G_S^T alpha_S / lam + xi = Delta_S``, ``sum alpha_S = 1``, or ``xi = 0``), or None
        when it is not feasible."""
        if alpha.size == 0 or alpha.max() <= 0:
            return None
        S = np.flatnonzero(alpha > 1e-9 * alpha.max())
        GS = self.G[S]
        M = GS @ GS.T / lam
        xi_free = alpha.sum() > 1 - 1e-9
        if xi_free:
            k = S.size
            KKT = np.block([[M, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
            rhs = np.r_[self.delta[S], 1.0]
            sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0][:k]
        else:
            sol = np.linalg.lstsq(M, self.delta[S], rcond=None)[0]
        if not np.all(np.isfinite(sol)) or sol.min() < 0 or sol.sum() > 1 + 1e-12:
            return None
        out = np.zeros_like(alpha)
        out[S] = sol
        return _feasible(out)


def _feasible(alpha: np.ndarray) -> np.ndarray:
    alpha = np.maximum(alpha, 0.0)
    total = alpha.sum()
    return alpha / total if total > 1 else alpha


@logs_progress
@data_first
def svmmap(data: BipartiteData, lam: float, tol: float = 1e-6,
           max_iter: int | None = None, warm_start: SolverResult | ArrayLike | None = None, *,
           method: str = "cutting_plane", time_limit: float | None = None,
           verbose: bool = False) -> SolverResult:
    """Train SVMMAP ([Yue2007]) in paper scaling, ``lam = 1/C``: minimise
    ``(lam/2)||w||^2 + max_y [Delta(y) - w.(Psi(y*) - Psi(y))]`` by 1-slack cutting planes,
    certified by the duality gap of the cutting-plane QP (module docstring).

    ``data`` is a :class:`~infpush_cvx.data.BipartiteData`, or the positives (m x d) and the
    negatives as two arguments (``svmmap(Xp, Xn, lam)``). Sample weights are refused.
    ``warm_start``: a previous ``svmmap`` result (its cuts are reused: they do not depend on lam)
    or a weight vector (the first cut is taken there). ``max_iter`` counts oracle rounds
    (default 1000); ``time_limit`` in seconds. Returns a :class:`~.result.SolverResult` whose
    ``dual`` is alpha over the cuts and whose ``info`` holds ``cuts`` (``g_k``) and ``deltas``.
    """
    deadline = as_deadline(time_limit)  # (data_first started it at the call)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {list(METHODS)}")
    # paper scaling: lam is used as given (the loss name only matters for the seed scaling)
    data, lam, max_iter = prepare(data, None, lam, loss="ranksvm", penalty="l2", scaling="paper",
                                  tol=tol, max_iter=max_iter)
    data = centred(data)  # the same problem, without digits lost to a common offset
    if data.weighted:
        raise ValueError("svmmap does not take sample weights (wp, wn): average precision "
                         "with weighted items is not defined here")
    max_iter = _DEFAULT_MAX_ITER if max_iter is None else max_iter
    log_progress(f"svmmap cutting_plane: {data.m} positives, {data.n} negatives, {data.d} "
                 f"features, lambda {lam:.4g}, tol {tol:g}, max_iter {max_iter}")
    qp = _CuttingPlaneQP(data.d)
    w = np.zeros(data.d)
    alpha = np.zeros(0)
    if isinstance(warm_start, SolverResult) and "cuts" in warm_start.info:
        cuts, deltas = warm_start.info["cuts"], warm_start.info["deltas"]
        if cuts.shape[1] != data.d:
            raise ValueError(f"warm_start: its cuts have {cuts.shape[1]} features, the data "
                             f"{data.d}")
        qp.G, qp.delta = np.array(cuts, dtype=np.float64), np.array(deltas, dtype=np.float64)
    elif warm_start is not None:
        w0 = warm_start.w if isinstance(warm_start, SolverResult) else warm_start
        w = check_vector(w0, "warm_start", length=data.d).copy()
    with blas_threads_for(data.d):
        if qp.delta.size:
            alpha = qp.solve(lam, deadline.for_solver())
            w, _ = qp.dual_value(alpha, lam)
        best_P, best_D, best_w = np.inf, 0.0, w
        history = {"objective": [], "dual": [], "gap": [], "cuts": [], "time": []}
        status, message, it = "max_iter", "", 0
        for it in range(1, max_iter + 1):
            ranking = most_violated_ranking(data.Xp @ w, data.Xn @ w)
            P = 0.5 * lam * float(w @ w) + max(ranking.violation, 0.0)
            D = qp.dual_value(alpha, lam)[1] if alpha.size else 0.0
            if P < best_P:
                best_P, best_w = P, w
            best_D = max(best_D, D)
            gap = relative_gap(best_P, best_D)
            history["objective"].append(P)
            history["dual"].append(D)
            history["gap"].append(gap)
            history["cuts"].append(int(qp.delta.size))
            history["time"].append(deadline.elapsed())
            log_iteration("svmmap", it, P, gap, deadline.elapsed(), cuts=int(qp.delta.size),
                          violation=ranking.violation)
            if gap <= tol:
                status = "optimal"
                break
            if deadline.expired():
                status, message = "time_limit", deadline.message()
                break
            if it == max_iter:
                message = f"{max_iter} cutting-plane rounds"
                break
            qp.add(_cut(data, ranking), ranking.loss)
            alpha = qp.solve(lam, deadline.for_solver())
            w, _ = qp.dual_value(alpha, lam)
    gap = relative_gap(best_P, best_D)
    roundoff = duality.gap_roundoff(data, best_w, lam, best_P)
    status = status_for_gap(status, gap, tol, roundoff)
    if status == "numerical_error":
        message = numerical_error_message(gap, roundoff)
    result = SolverResult(w=np.asarray(best_w, dtype=np.float64).copy(), objective=best_P,
                          gap=gap, status=status, iterations=it, time=deadline.elapsed(),
                          method=method, history=history, dual=alpha,
                          info={"lam_paper": lam, "scaling": "paper", "cuts": qp.G.copy(),
                                "deltas": qp.delta.copy(), "lower_bound": best_D,
                                "gap_roundoff": roundoff},
                          message=message)
    warn_if_not_converged(result)
    return result
