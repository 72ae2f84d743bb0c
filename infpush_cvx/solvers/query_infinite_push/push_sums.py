"""Every other document's push loss in every query, from the sorted scores (no pair array).

For other document j of query q the loss of the Infinite Push is the weighted mean hinge of the
query's relevant documents against it (docs/mathematics.md, section 12.3)::

    v_j = (1/M_q) sum_{i in R_q} p_i max(0, 1 - s_i + t_j)
        = (1/M_q) ((1 + t_j) P0(k_j) - P1(k_j)),

the relevant documents active against j (``s_i < 1 + t_j``) being the first ``k_j`` of the query's
sorted scores, ``P0``, ``P1`` the prefix sums of p and p s: a sort of each query's relevant scores
and a binary search per other document, O(n log n) in all. The scores are taken relative to the
query's mean relevant score, so a large common offset of a query's scores costs no digits.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def negative_losses(s, p, ptr_r, t, ptr_n, M):
    """``v_j`` (module docstring) for every other document, in the order of ``t``: query k's
    relevant scores and weights are ``s[ptr_r[k]:ptr_r[k+1]]``, ``p[...]``, its other
    documents' scores ``t[ptr_n[k]:ptr_n[k+1]]`` and its relevant weight ``M[k]``."""
    out = np.empty(t.size)
    for k in range(ptr_r.size - 1):
        a, b = ptr_r[k], ptr_r[k + 1]
        order = np.argsort(s[a:b])
        centre = 0.0
        for i in range(a, b):
            centre += s[i]
        centre /= b - a
        ss = s[a:b][order] - centre
        pp = p[a:b][order]
        P0 = np.zeros(b - a + 1)
        P1 = np.zeros(b - a + 1)
        for i in range(b - a):
            P0[i + 1] = P0[i] + pp[i]
            P1[i + 1] = P1[i] + pp[i] * ss[i]
        for j in range(ptr_n[k], ptr_n[k + 1]):
            v = 1.0 + t[j] - centre
            m = np.searchsorted(ss, v)  # ss[:m] < v: the active relevant documents
            out[j] = max(v * P0[m] - P1[m], 0.0) / M[k]
    return out


def query_losses(v: np.ndarray, ptr_n: np.ndarray) -> np.ndarray:
    """Each query's loss ``max_{j in N_q} v_j`` (every kept query has an other document)."""
    return np.maximum.reduceat(v, ptr_n[:-1])
