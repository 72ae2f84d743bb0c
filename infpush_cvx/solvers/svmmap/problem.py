"""The SVMMAP problem ([Yue2007]): the structural SVM over rankings that optimises average
precision, its objective and its most violated constraint.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike

from infpush_cvx._validation import check_vector
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.engines.common import as_bipartite


@dataclass(frozen=True)
class SVMMAPProblem(Problem):
    """SVMMAP on ``data`` (no sample weights: average precision with weighted items is not
    defined here), ``lam = 1/C`` in paper scaling (the only scaling of this problem).

    Derived on construction: ``lam_paper`` (= ``lam``) and ``solved``, ``data`` with far-off
    columns shifted towards 0 (:func:`~infpush_cvx.solvers.engines.common.centred`: the same
    score differences, without the digits a common offset takes).
    """

    data: BipartiteData
    lam: float
    scaling: str = "paper"

    model = "svmmap"
    problem_class = "QP"

    def __post_init__(self):
        self._paper_only()
        if self.data.weighted:
            raise ValueError("svmmap does not take sample weights (wp, wn): average precision "
                             "with weighted items is not defined here")

    def objective(self, w) -> float:
        """``P(w) = (lam/2)||w||^2 + H(w)`` with the exact oracle (module docstring), on the
        centred data (the same score differences, without a common offset's round-off)."""
        w = check_vector(w, "w", length=self.data.d)
        viol = most_violated_ranking(self.solved.Xp @ w, self.solved.Xn @ w).violation
        return 0.5 * self.lam_paper * float(w @ w) + max(viol, 0.0)

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations._svmmap import svmmap_problem
        return svmmap_problem(self.solved, self.lam_paper)


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
    m, n = s_desc.shape[0], t_desc.shape[0]
    prefix = np.concatenate((np.zeros(1), np.cumsum(s_desc)))  # prefix[q]: the q highest
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
        best, arg = -np.inf, alo
        for q in range(alo, ahi + 1):
            val = ((harmonic[m + j] - harmonic[q + j])
                   - (j - 1.0) * (m - q) / ((m + j) * (q + j))) / m + scale * (prefix[q] - q * tj)
            if val >= best:  # ">=": the largest maximiser keeps the choices monotone
                best = val
                arg = q
        a[jm] = arg
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = jlo, jm - 1, alo, arg
        top += 1
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = jm + 1, jhi, arg, ahi
        top += 1
    return a


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
    s, t = check_vector(s, "s"), check_vector(t, "t")
    if s.size == 0 or t.size == 0:
        raise ValueError(f"s and t must be non-empty, got lengths {s.size} and {t.size}")
    m, n = s.size, t.size
    p_order, n_order = np.argsort(-s, kind="stable"), np.argsort(-t, kind="stable")
    s_desc, t_desc = s[p_order], t[n_order]
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, m + n + 1))))  # H_0..H_m+n
    a = _monotone_argmax(s_desc, t_desc, harmonic)
    # c_k (negatives above the k-th positive) = #{j : a_j < k}
    c_sorted = np.searchsorted(a, np.arange(1, m + 1), side="left")
    neg_above = np.empty(m, dtype=np.int64)
    neg_above[p_order] = c_sorted
    pos_below = np.empty(n, dtype=np.int64)
    pos_below[n_order] = m - a
    # the order: negative j goes after the a_j-th positive (and after the negatives before it)
    key = np.concatenate((np.arange(m) * 2.0 + 1.0, a * 2.0))  # positive k at 2k+1, neg at 2a_j
    order = np.concatenate((p_order, m + n_order))[np.argsort(key, kind="stable")]
    loss = ranking_loss(c_sorted)
    swapped = (2.0 / (m * n)) * (float(s @ neg_above) - float(t @ pos_below))
    return ViolatedRanking(neg_above, pos_below, order, loss, loss - swapped)


def svmmap_objective(Xp_or_data, Xn=None, w=None, lam: float = 1.0) -> float:
    """``P(w) = (lam/2)||w||^2 + H(w)`` with the exact oracle (:meth:`SVMMAPProblem.objective`)
    on a BipartiteData or the positives and negatives."""
    return SVMMAPProblem(as_bipartite(Xp_or_data, Xn), lam).objective(w)


def cut(data, ranking: ViolatedRanking) -> np.ndarray:
    """``g = Psi(y*) - Psi(y) = (2/(m n)) (Xp^T c - Xn^T (m - a))``."""
    g = data.Xp.T @ ranking.neg_above.astype(np.float64) \
        - data.Xn.T @ ranking.pos_below.astype(np.float64)
    return (2.0 / (data.m * data.n)) * np.asarray(g).ravel()
