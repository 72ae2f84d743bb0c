"""The working set's lower model of the bipartite objective at a centre (:mod:`.working_set`).

Negatives outside the working set are dropped (Infinite Push), a band of pairs keeps its hinge
exactly, and every other pair of a kept negative is replaced by its linear piece
``1 - s_i + t_j`` (below the margin at the centre) or by 0: each replacement is at most the true
hinge, so the model is a lower bound, exact near the centre. Its aggregated parts are prefix sums
of sorted scores (:mod:`.pair_sums`); :meth:`LowerModel.restricted` states the proximal step on
it (:class:`~.restricted_ipm.RestrictedProblem`) and :meth:`LowerModel.dual` extends a step's
multipliers to a dual point of the full problem (:class:`~.implicit_dual.ImplicitDual`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from infpush_cvx.solvers.engines.implicit_dual import ImplicitDual, best_multiple, pair_vector_sum
from infpush_cvx.solvers.engines.common import dense
from infpush_cvx.solvers.engines.pair_sums import SortedScores, prefix_row_sums, weight_above
from infpush_cvx.solvers.engines.restricted_ipm import SPARSE_SHARE, RestrictedProblem


class LowerModel:
    """The lower model at a centre: working negatives, band pairs, and the aggregated rest."""

    def __init__(self, prob, s_c, t_c, cols, bi, bj):
        self.prob, self.s_c, self.t_c = prob, s_c, t_c
        self.cols, self.bi, self.bj = cols, bi, bj
        p, q = prob.p, prob.q
        v = 1.0 + t_c
        ss = SortedScores(s_c, p)
        self.ip = ip = prob.loss == "infinite_push"
        self.pi = p[bi] if ip else p[bi] * q[bj]
        # the band pairs' weights where the aggregates would count them (below the margin)
        self._wb = wb = np.where(s_c[bi] < v[bj], self.pi, 0.0)
        self._g = None
        if ip:
            self.group = np.searchsorted(cols, bj)  # band pair -> its working negative
            self._ss, self._k = ss, ss.below(v[cols])
            A = ss.cum_p[self._k] - np.bincount(self.group, wb, cols.size)
            # one more group with no pairs, a = 0 and g = 0: the loss is >= 0, which bounds the
            # model below (without it a plain l1 step can be unbounded)
            self.a = np.append(A, 0.0)
        else:
            P_j = ss.cum_p[ss.below(v)]
            Q_i = weight_above(t_c, q, s_c)
            self.a = np.array([float(q @ P_j) - float(wb.sum())])
            self._g = (np.asarray(prob.Xp.T @ (p * Q_i)).ravel()
                       - np.asarray(prob.Xn.T @ (q * P_j)).ravel()
                       - pair_vector_sum(prob.Xp, prob.Xn, bi, bj, wb))[None, :]

    @property
    def g(self) -> np.ndarray:
        """The groups' slopes (k x d, dense; the Infinite Push's formed on first use): ``g_j =
        G_j - A_j x_j`` with ``G_j`` the weighted sum of the positives below the margin of
        negative j (a prefix of the sorted scores, less its band pairs) and ``A_j`` their
        weight, and a zero row for the "loss >= 0" group."""
        if self._g is None:
            prob, cols, A = self.prob, self.cols, self.a[:-1]
            G = prefix_row_sums(self._ss, prob.Xp, self._k)
            G = G - _group_row_sums(prob.Xp, self.bi, self.group, self._wb, cols.size)
            self._g = np.vstack([G - A[:, None] * dense(prob.Xn[cols]),
                                 np.zeros(prob.d)])
        return self._g

    def g_transpose(self, mu) -> np.ndarray:
        """``g^T mu`` (Infinite Push), from g once it is formed, else without forming it:
        ``sum_j mu_j G_j`` weights each positive by the multipliers of the negatives whose
        prefix holds it, so it is ``Xp^T c`` with ``c_i = p_i sum_{j: k_j > rank(i)} mu_j``,
        less the band pairs' rows, and ``sum_j mu_j A_j x_j = Xn[cols]^T (A mu)``: O(nnz(X))
        instead of the k x d matrix (the dual point of ``w = 0`` has every negative a group:
        50,000 x 2,000 dense, 7 s)."""
        if self._g is not None:
            return self._g.T @ mu
        prob, ss, cols = self.prob, self._ss, self.cols
        mu_c = np.asarray(mu, float)[:cols.size]  # (the last group's g is 0)
        beyond = float(mu_c.sum()) - np.cumsum(np.bincount(self._k, mu_c, ss.m + 1))[:ss.m]
        c = np.empty(ss.m)
        c[ss.order] = ss.p_sorted * beyond  # sum of mu_j over the prefixes holding rank l
        c -= np.bincount(self.bi, self._wb * mu_c[self.group], ss.m)
        by_negative = np.zeros(prob.n)  # (a product with every row: Xn[cols] is a copy)
        by_negative[cols] = self.a[:-1] * mu_c
        return np.asarray(prob.Xp.T @ c).ravel() - np.asarray(prob.Xn.T @ by_negative).ravel()

    def restricted(self, kappa: float, centre) -> RestrictedProblem:
        prob = self.prob
        l1, ip = prob.penalty == "l1", self.ip
        shared = dict(coef=prob.coef, groups=ip, q_w=-kappa * centre, l1=l1,
                      kappa=(0.0 if l1 else 1.0) + kappa, pair_weight=self.pi)
        if ip:  # one group per working negative
            shared.update(a=self.a, g=self.g)
        else:  # RankSVM's one slope joins the linear term
            shared.update(c_e=prob.coef, q_w=shared["q_w"] - prob.coef * self.g[0])
        if _explicit_pairs(prob, self.bi, self.bj):
            Z = sp.csr_matrix(prob.Xp[self.bi] - prob.Xn[self.bj]).multiply(self.pi[:, None])
            return RestrictedProblem(None, None, self.bi, self.group if ip else self.bj, Z=Z,
                                     **shared)
        # (sparse rows stay sparse: the restricted problem sums them by their nonzeros)
        I, bi_loc = np.unique(self.bi, return_inverse=True)
        XI = prob.Xp[I]
        if ip:
            XJ = prob.Xn[self.cols]
            XJ = (sp.vstack([XJ, sp.csr_matrix((1, prob.d))], format="csr") if sp.issparse(XJ)
                  else np.vstack([XJ, np.zeros(prob.d)]))
            return RestrictedProblem(XI, XJ, bi_loc, self.group, **shared)
        J, bj_loc = np.unique(self.bj, return_inverse=True)
        return RestrictedProblem(XI, prob.Xn[J], bi_loc, bj_loc, **shared)

    def loss_value(self, w) -> float:
        """The model's loss at ``w`` (paper scaling): <= the true loss everywhere."""
        prob = self.prob
        sb, tb = prob.scores(w)
        hinge = self.pi * np.maximum(0.0, 1.0 - sb[self.bi] + tb[self.bj])
        if self.ip:
            groups = self.a - self.g @ w + np.bincount(self.group, hinge, self.a.size)
            return float(groups.max()) / prob.M
        return float(self.a[0] - self.g[0] @ w + hinge.sum()) / (prob.M * prob.N)

    def dual(self, mu, nu) -> ImplicitDual:
        """The feasible dual point of the multipliers (repaired for round-off), its aggregates."""
        prob = self.prob
        nu = np.maximum(np.asarray(nu, float), 0.0)
        if self.ip:
            mu = np.maximum(np.asarray(mu, float), 0.0)
            nu = np.minimum(nu, mu[self.group])
            factor = min(1.0, prob.coef / max(float(mu.sum()), np.finfo(float).tiny))
            w_alpha = self.g_transpose(mu)
            total = float(mu @ self.a)
        else:
            mu = np.zeros(0)
            nu = np.minimum(nu, prob.coef)
            factor = 1.0
            w_alpha = prob.coef * self.g[0]
            total = prob.coef * float(self.a[0])
        w_alpha = w_alpha + pair_vector_sum(prob.Xp, prob.Xn, self.bi, self.bj, nu * self.pi)
        total += float(nu @ self.pi)
        if prob.penalty == "l1":  # ||w(alpha)||_inf <= 1
            factor /= max(1.0, factor * float(np.abs(w_alpha).max(initial=0.0)))
        else:
            factor *= best_multiple(factor * w_alpha, factor * total)
        return ImplicitDual(loss=prob.loss, cols=self.cols, mu=mu[:self.cols.size],
                            coef=prob.coef, bi=self.bi, bj=self.bj, pi=self.pi, nu=nu,
                            s_ref=self.s_c, t_ref=self.t_c, p=prob.p, q=prob.q,
                            w_alpha=factor * w_alpha, total=factor * total, factor=factor,
                            alpha_scale=prob.alpha_scale)


_SPARSE_FLOP_COST = 10.0  # a sparse product's multiply-add against a dense (BLAS) one


def _explicit_pairs(prob, bi, bj) -> bool:
    """Whether sparse pair vectors (``nb r^2`` per factorisation, r nonzeros a pair) are cheaper
    than the Laplacian form (``(nI + nJ) d^2`` dense, nI and nJ the distinct rows).

    Measured on the a8a 150 x 1,500 subsets (r = 28, d = 123): the Laplacian form was 1.4-3x
    faster at every band size the working set reached, hence the weight on sparse work. Rows
    sparse enough for the Laplacian form's sums over their nonzeros (``nb r / 2 + (nI + nJ)
    r^2 / 4``) never take the pair vectors."""
    if not (sp.issparse(prob.Xp) and sp.issparse(prob.Xn)) or bi.size == 0:
        return False
    if prob.Xp.nnz + prob.Xn.nnz <= SPARSE_SHARE * (prob.m + prob.n) * prob.d:
        return False
    r = (prob.Xp.nnz / max(prob.m, 1) + prob.Xn.nnz / max(prob.n, 1))
    rows = np.unique(bi).size + np.unique(bj).size
    return _SPARSE_FLOP_COST * bi.size * r * r < rows * prob.d ** 2


def _group_row_sums(X, rows, groups, weights, k):
    """``sum over b in group r of weights_b x_{rows_b}`` for r < k (k x d).

    A sparse product, or for dense X whose band is dense (at most 4 cells of the k x |rows
    used| weights a pair) a dense one over the rows used: the kernel route's factor rows on
    Spambase (d = 4,146, 300,000 pairs of 984 groups and 800 positives) took 0.18 s a round by
    the sparse product's loop over the pairs, 0.11 s so."""
    if not sp.issparse(X):
        used, at = np.unique(rows, return_inverse=True)
        if k * used.size <= 4 * rows.size:
            W = np.bincount(groups * used.size + at.ravel(), weights, k * used.size)
            return W.reshape(k, used.size) @ X[used]
    return dense(sp.csr_matrix((weights, (groups, rows)), shape=(k, X.shape[0])) @ X)
