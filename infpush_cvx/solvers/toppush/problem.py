"""The TopPush problem (Li, Jin & Zhou, NIPS 2014): its primal, its dual and the certificate.

Primal, paper scaling (eq. 4 of the paper; [Li2014] in docs/references.md), ``s = Xp w``,
``t = Xn w``, ``c_i = 1/m`` (with sample weights p of the positives: ``c_i = p_i / sum p``)::

    P(w) = (lam/2) ||w||^2 + sum_i c_i loss(max_j t_j - s_i)
    loss(z) = (1 + z)_+^2  (truncated quadratic, the paper's)   or   (1 + z)_+  (hinge)

Dual, derived in this scaling (the paper's Theorem 1 has ``alpha`` m times larger and the
objective m times larger). ``loss`` is convex and nondecreasing, so
``loss(z) = sup_{a >= 0} a z - loss*(a)`` with ``loss*(a) = a^2/4 - a`` (truncated quadratic) and
``loss*(a) = -a`` on ``[0, 1]`` (hinge). Put ``alpha_i = c_i a_i``. Since ``alpha_i >= 0``,
``alpha_i max_j t_j`` is the largest ``beta_i . t`` over ``beta_i >= 0`` with
``sum(beta_i) = alpha_i``, and the ``beta_i`` add up to one ``beta >= 0`` with
``sum(beta) = sum(alpha)``. Then ``min_w (lam/2)||w||^2 + (Xn^T beta - Xp^T alpha) . w`` is
attained at the KKT point

    w(alpha, beta) = (Xp^T alpha - Xn^T beta) / lam

and the dual, maximised over ``Omega = {alpha >= 0, beta >= 0, sum alpha = sum beta}`` (plus
``alpha_i <= c_i`` for the hinge), is::

    D(alpha, beta) = sum_i alpha_i - sum_i alpha_i^2 / (4 c_i)  [truncated quadratic only]
                     - (1 / (2 lam)) ||Xp^T alpha - Xn^T beta||^2

Weak duality ``D(alpha, beta) <= P(w)`` holds for every feasible pair and every w, so
``P(w) - D(alpha, beta)`` bounds ``P(w) - P*``: the certificate, reported as
:func:`~infpush_cvx.solvers.result.relative_gap` (the tests check ``P* = D*`` against CVXPY).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from infpush_cvx._validation import check_choice
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations._toppush import LOSSES
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.result import relative_gap


@dataclass(frozen=True)
class TopPushProblem(Problem):
    """TopPush with ``loss`` ("truncated_quadratic", the paper's, or "hinge") on ``data``,
    ``lam`` in paper scaling (the only scaling of this problem); sample weights of the
    positives (those of the negatives do not enter: a maximum over them).

    Derived on construction: ``lam_paper`` (= ``lam``) and ``solved``, ``data`` with far-off
    columns shifted towards 0 (:func:`~infpush_cvx.solvers.engines.common.centred`: the loss sees
    w only through ``t_j - s_i``; without it an offset of 1e4 on a column stalled the
    certificate at 4e-6).
    """

    data: BipartiteData
    lam: float
    loss: str = "truncated_quadratic"
    scaling: str = "paper"

    model = "toppush"
    catalog_options = ("loss", "scaling")
    problem_class = "QP"

    def __post_init__(self):
        check_choice(self.loss, "loss", LOSSES)
        self._paper_only()

    def objective(self, w) -> float:
        return primal_objective(self.data, w, self.lam_paper, self.loss)

    def certificate(self, w, dual) -> tuple:
        """``(P(w), D(alpha, beta), relative gap)`` at ``dual = (alpha, beta)``, made feasible."""
        return duality_gap(self.data, w, *dual, self.lam_paper, self.loss)

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations._toppush import toppush_problem
        return toppush_problem(self.solved, self.lam_paper, loss=self.loss)


def loss_values(z: np.ndarray, loss: str) -> np.ndarray:
    """``(1 + z)_+^2`` (truncated quadratic) or ``(1 + z)_+`` (hinge), elementwise."""
    h = np.maximum(1.0 + z, 0.0)
    return h * h if loss == "truncated_quadratic" else h


def positive_weights(data: BipartiteData) -> np.ndarray:
    """``c_i``: ``1/m``, or ``p_i / sum p`` with sample weights (the negatives' do not enter),
    computed as ``q / sum q`` with ``q = p / max p`` so that ``sum p`` cannot overflow."""
    q = data.pos_weights / data.pos_weights.max()
    return q / q.sum()



def scores(data: BipartiteData, w: np.ndarray):
    return (np.asarray(data.Xp @ w, dtype=np.float64).ravel(),
            np.asarray(data.Xn @ w, dtype=np.float64).ravel())


def primal_objective(data: BipartiteData, w, lam: float, loss: str = "truncated_quadratic"):
    """``P(w) = (lam/2)||w||^2 + sum_i c_i loss(max_j t_j - s_i)`` (paper scaling)."""
    check_choice(loss, "loss", LOSSES)
    w = np.asarray(w, dtype=np.float64).ravel()
    s, t = scores(data, w)
    return primal_value(w, s, t, positive_weights(data), lam, loss)


def primal_value(w, s, t, c, lam, loss) -> float:
    return float(0.5 * lam * (w @ w) + c @ loss_values(t.max() - s, loss))


def w_of_dual(data: BipartiteData, alpha, beta, lam: float) -> np.ndarray:
    """The KKT point ``w = (Xp^T alpha - Xn^T beta) / lam``."""
    v = data.Xp.T @ alpha - data.Xn.T @ beta
    return np.asarray(v, dtype=np.float64).ravel() / lam


def dual_objective(data: BipartiteData, alpha, beta, lam: float,
                   loss: str = "truncated_quadratic") -> float:
    """``D(alpha, beta)`` of the module docstring (maximised; a lower bound on P* when feasible)."""
    check_choice(loss, "loss", LOSSES)
    w = w_of_dual(data, alpha, beta, lam)
    return dual_value(w, alpha, positive_weights(data), lam, loss)


def dual_value(w, alpha, c, lam, loss) -> float:
    value = alpha.sum() - 0.5 * lam * (w @ w)
    if loss == "truncated_quadratic":
        value -= (alpha * alpha / (4.0 * c)).sum()
    return float(value)


def feasible_dual(data: BipartiteData, alpha, beta, loss: str = "truncated_quadratic"):
    """``(alpha, beta)`` made exactly feasible: clipped at 0 (and at ``c`` for the hinge), then
    the larger of the two sums scaled down to the smaller (a shrink keeps every bound)."""
    alpha = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    beta = np.maximum(np.asarray(beta, dtype=np.float64), 0.0)
    if loss == "hinge":
        alpha = np.minimum(alpha, positive_weights(data))
    sa, sb = alpha.sum(), beta.sum()
    if sa > sb:
        alpha = alpha * (sb / sa)
    elif sb > sa:
        beta = beta * (sa / sb)
    return alpha, beta


def duality_gap(data: BipartiteData, w, alpha, beta, lam: float,
                loss: str = "truncated_quadratic"):
    """``(P(w), D(alpha, beta), relative gap)`` after making ``(alpha, beta)`` feasible."""
    check_choice(loss, "loss", LOSSES)
    w = np.asarray(w, dtype=np.float64).ravel()
    return certifier(data, lam, loss)(w, *scores(data, w), alpha, beta)[:3]


def certifier(data: BipartiteData, lam: float, loss: str):
    """``certify(w, s, t, alpha, beta) -> (P(w), D(alpha, beta), relative gap, feasible
    (alpha, beta))`` from the scores ``s = Xp w``, ``t = Xn w`` the caller has."""
    c = positive_weights(data)

    def certify(w, s, t, alpha, beta):
        alpha, beta = feasible_dual(data, alpha, beta, loss)
        primal = primal_value(w, s, t, c, lam, loss)
        dual = dual_value(w_of_dual(data, alpha, beta, lam), alpha, c, lam, loss)
        return primal, dual, relative_gap(primal, dual), (alpha, beta)
    return certify


def data_lipschitz(data: BipartiteData, deadline=None) -> float | None:
    """``sigma_max([Xp; Xn])^2 = lambda_max(Xp^T Xp + Xn^T Xn)`` (a d x d eigenvalue); None when
    ``deadline`` (a :class:`~infpush_cvx.solvers.engines.deadline.Deadline`) passes first.

    The Gram matrix is summed over blocks of about 2^27 multiply-adds, a block begun only when
    the time left exceeds what the previous one took (550,000 rows x 300 took 1.3 s in one)."""
    G, last = np.zeros((data.d, data.d)), 0.0
    rows = max(1024, 2 ** 27 // max(data.d, 1) ** 2)
    for X in (data.Xp, data.Xn):
        for start in range(0, X.shape[0], rows):
            if deadline is not None and not deadline.allows(last):
                return None
            begun = None if deadline is None else deadline.elapsed()
            block = X[start:start + rows]
            product = block.T @ block
            G += product.toarray() if sp.issparse(product) else product
            last = 0.0 if deadline is None else deadline.elapsed() - begun
    d = G.shape[0]
    top = scipy.linalg.eigvalsh(0.5 * (G + G.T), subset_by_index=[d - 1, d - 1])[0]
    return float(max(top, 0.0))
