"""SVMMAP ([Yue2007]) in CVXPY over every ranking, for tiny instances (m, n <= 4).

In paper scaling with ``lam = 1/C`` (:mod:`infpush_cvx.solvers.svmmap` gives the model)::

    minimise  (lam/2) ||w||^2 + xi
    s.t.      xi >= Delta(y) - w.(Psi(y*) - Psi(y))    for every ranking y

where ``Psi(y) = (1/(m n)) sum_ij y_ij (x_i - x_j)`` and ``Delta(y) = 1 - AP(y)``. A ranking
enters only through its pair signs ``y_ij`` (``Delta`` is a function of them: the number of
negatives above each positive fixes the positives' ranks), so the constraints are those of the
distinct sign patterns of all ``(m + n)!`` total orders, enumerated here without the sorting
argument of the solver's oracle: an independent check of it. ``y*`` (every positive first) gives
``xi >= 0``.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import cvxpy as cp
import numpy as np

from ..data.containers import check_bipartite
from ._common import weights_and_lam
from ._ranking import average_precision

#: Largest m and n enumerated ((m + n)! orders: 40320 for m = n = 4).
MAX_SIDE = 4


@lru_cache(maxsize=None)
def ranking_patterns(m: int, n: int):
    """Every distinct pair-sign pattern of a total order of m positives and n negatives:
    ``(Y, delta)`` with ``Y[k, i, j] = +1`` when positive i is above negative j (else -1) and
    ``delta[k] = 1 - AP`` of that order
    (:func:`infpush_cvx.formulations._ranking.average_precision` on its untied rank scores)."""
    if not (1 <= m <= MAX_SIDE and 1 <= n <= MAX_SIDE):
        raise ValueError(f"the enumeration of rankings is limited to 1 <= m, n <= {MAX_SIDE}, "
                         f"got m={m}, n={n}")
    perms = np.array(list(itertools.permutations(range(m + n))), dtype=np.int64)
    position = np.argsort(perms, axis=1)  # position[k, item]
    above = position[:, :m, None] < position[:, None, m:]
    _, first = np.unique(above.reshape(len(perms), -1), axis=0, return_index=True)
    first = np.sort(first)
    positive, weights = np.arange(m + n) < m, np.ones(m + n)
    delta = np.array([1.0 - average_precision(positive, -position[k].astype(np.float64), weights)
                      for k in first])
    Y = np.where(above[first], 1.0, -1.0)
    Y.setflags(write=False)
    delta.setflags(write=False)
    return Y, delta


def svmmap_problem(data, lam) -> cp.Problem:
    """The SVMMAP primal over every ranking (m, n <= 4); variables ``w`` and ``xi``, parameter
    ``lam``."""
    data = check_bipartite(data)
    if data.weighted:
        raise ValueError("svmmap does not take sample weights")
    Xp, Xn = (X.toarray() if hasattr(X, "toarray") else X for X in (data.Xp, data.Xn))
    m, n = data.m, data.n
    Y, delta = ranking_patterns(m, n)
    # Psi(y*) - Psi(y) = (1/(mn)) sum_ij (1 - y_ij) (x_i - x_j)
    swapped = 1.0 - Y
    G = (np.einsum("kij,id->kd", swapped, Xp) - np.einsum("kij,jd->kd", swapped, Xn)) / (m * n)
    w, lam_p = weights_and_lam(data.d, lam)
    xi = cp.Variable(name="xi")
    objective = lam_p / 2 * cp.sum_squares(w) + xi
    return cp.Problem(cp.Minimize(objective), [xi >= delta - G @ w])
