"""The squared hinge's generalised Hessian formed in one sweep over the sorted scores.

The pair part of the Hessian (:mod:`.newton`) is ``G = sum_{active} c_ij z_ij z_ij^T``,
``z_ij = x_i - x_j``, over the pairs with ``s_i < v_j`` (``v_j = 1 + t_j``; the comparison of
:mod:`.pair_sums`). Expanded by class (the Kronecker form of the pair matrix)::

    G = sum_i p_i row0_i x_i x_i^T + sum_j q_j col0_j x_j x_j^T - (C + C^T),
    C = sum_i p_i x_i acc_i^T,   acc_i = sum_{j active with i} q_j x_j

With one class (the "outer" rows) taken in the order of its keys, each ``acc`` is the previous
one plus the rows of the other class that the key has just passed, so the whole of ``G`` costs
``O(nnz(outer) d + sum_rows nnz(x)^2)`` and one sort, never a pass over the m n pairs: on a8a
(d = 123, 95 million pairs) about as much as ten Hessian-vector products. With ``G`` formed, a
Newton direction is one Cholesky solve of ``lam I + 2 G`` instead of a run of conjugate
gradients whose length grows as lambda falls (Lee & Lin, "Large-scale linear RankSVM", Neural
Computation 2014, section 3, form the same sums by order statistics for each product).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

#: Largest dimension for which the d x d Hessian is formed (``"auto"``): 3,000 is 72 MB.
MAX_FORMED_DIMENSION = 3000
#: ``"auto"`` forms the Hessian when that costs at most this many Hessian-vector products (a
#: Newton step's conjugate gradients take more than this on a8a below lambda = 1e-3).
FORMED_COST_IN_PRODUCTS = 20.0


@nb.njit(cache=True, nogil=True)
def _pair_gram(o_ptr, o_idx, o_val, o_w, o_key, i_ptr, i_idx, i_val, i_w, i_key, d):
    """``sum_{(o, i): i_key < o_key} w_o w_i (x_o - x_i)(x_o - x_i)^T`` (dense d x d) of two
    classes of CSR rows: the outer rows taken by ascending key, the inner rows added to a
    running sum as the outer key passes theirs."""
    gram = np.zeros((d, d))
    cross = np.zeros((d, d))
    acc = np.zeros(d)
    acc_w = 0.0
    o_order = np.argsort(o_key, kind="mergesort")
    i_order = np.argsort(i_key, kind="mergesort")
    # the outer weight from each position of the order on: an inner row added there is active
    # with every outer row from that position on
    rest = np.zeros(o_order.size + 1)
    for k in range(o_order.size - 1, -1, -1):
        rest[k] = rest[k + 1] + o_w[o_order[k]]
    nxt = 0
    for pos in range(o_order.size):
        o = o_order[pos]
        while nxt < i_order.size and i_key[i_order[nxt]] < o_key[o]:
            j = i_order[nxt]
            c = i_w[j] * rest[pos]
            for a in range(i_ptr[j], i_ptr[j + 1]):
                acc[i_idx[a]] += i_w[j] * i_val[a]
                ca = c * i_val[a]
                for b in range(i_ptr[j], i_ptr[j + 1]):
                    gram[i_idx[a], i_idx[b]] += ca * i_val[b]
            acc_w += i_w[j]
            nxt += 1
        if acc_w == 0.0:
            continue
        for a in range(o_ptr[o], o_ptr[o + 1]):
            ka = o_idx[a]
            va = o_w[o] * o_val[a]
            for b in range(o_ptr[o], o_ptr[o + 1]):
                gram[ka, o_idx[b]] += va * acc_w * o_val[b]
            for col in range(d):
                cross[ka, col] += va * acc[col]
    return gram - cross - cross.T


class PairHessian:
    """The rows of both classes as CSR arrays, ready for :meth:`gram` at any scores."""

    def __init__(self, Xp, Xn, p: np.ndarray, q: np.ndarray):
        # (any order of the entries in a row, duplicates included: the sweep only sums them)
        self.Xp, self.Xn = sp.csr_matrix(Xp, dtype=float), sp.csr_matrix(Xn, dtype=float)
        self.p, self.q = p, q
        self.d = self.Xp.shape[1]
        # the sweep's cost is nnz(outer) d: the class with fewer nonzeros is the outer one
        self.positives_outer = self.Xp.nnz <= self.Xn.nnz

    @staticmethod
    def cost(Xp, Xn) -> float:
        """The sweep's operation count relative to one Hessian-vector product (:mod:`.newton`:
        two products with the data, two with its transpose, sums over the m + n scores)."""
        d = Xp.shape[1]
        nnz = [X.nnz if sp.issparse(X) else np.count_nonzero(X) for X in (Xp, Xn)]
        per_row = [np.diff(sp.csr_matrix(X).indptr) for X in (Xp, Xn)]
        squares = float(sum((k.astype(float) ** 2).sum() for k in per_row))
        formed = min(nnz) * d + squares + d ** 3 / 6.0
        product = 4.0 * sum(nnz) + 8.0 * (Xp.shape[0] + Xn.shape[0])
        return formed / max(product, 1.0)

    def gram(self, s: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``G = sum_{s_i < v_j} p_i q_j (x_i - x_j)(x_i - x_j)^T`` at positive scores ``s``
        and thresholds ``v = 1 + t`` (module docstring)."""
        P, N = self.Xp, self.Xn
        if self.positives_outer:  # s_i < v_j  <=>  -v_j < -s_i
            return _pair_gram(P.indptr, P.indices, P.data, self.p, -s,
                              N.indptr, N.indices, N.data, self.q, -v, self.d)
        return _pair_gram(N.indptr, N.indices, N.data, self.q, v,
                          P.indptr, P.indices, P.data, self.p, s, self.d)
