"""RankSVM over queries in CVXPY, over the explicit pairs of each query.

The project's paper scaling (docs/mathematics.md, section 11)::

    paper:  minimise  (lam/2) ||w||^2 + sum_q sum_{(i,j) in q, y_i > y_j} c_ij l(1 - (x_i - x_j).w)
    seed:   minimise  lam ||w||^2 + T sum c_ij l(1 - (x_i - x_j).w)

``l`` the hinge or its square, ``c_ij = kappa_q sw_i sw_j`` (times ``y_i - y_j`` with
``pair_weight="label_difference"``), ``kappa_q = omega_q / W_q`` (``normalization="query"``;
``omega_q`` the query weights normalised over the queries with pairs, ``W_q`` the sum of the
query's ``sw_i sw_j (y_i - y_j)``) or ``qw_q / sum_q qw_q W_q`` (``"pairs"``), and ``T`` the total
weight (``sum qw_q`` over the queries with pairs, or ``sum_q qw_q W_q``). A QP whose constraints
are the pairs: for catalog-sized problems (the certified solver,
:mod:`infpush_cvx.solvers.query_ranksvm`, forms no pair). The weight variable is ``w`` and lambda
the parameter ``lam``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_scalar

LOSSES = ("hinge", "squared_hinge")
NORMALIZATIONS = ("query", "pairs")
PAIR_WEIGHTS = ("none", "label_difference")


def explicit_pairs(ptr, levels):
    """Every pair ``(i, j)`` of every query with ``levels[i] > levels[j]``, as two index arrays:
    the test oracle and the CVXPY formulation's (O(pairs) memory: small problems only)."""
    his, los = [], []
    for a, b in zip(ptr[:-1], ptr[1:]):
        idx = np.arange(a, b)
        lv = levels[a:b]
        hi, lo = np.nonzero(lv[:, None] > lv[None, :])
        his.append(idx[hi])
        los.append(idx[lo])
    if not his:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(his).astype(np.int64), np.concatenate(los).astype(np.int64)


def query_pair_weights(data, normalization: str = "query", pair_weight: str = "none"):
    """``(hi, lo, c, T)``: the explicit pairs (higher, lower document), their weights ``c``
    (summing to 1) and the total weight ``T`` (module docstring)."""
    check_choice(normalization, "normalization", NORMALIZATIONS)
    check_choice(pair_weight, "pair_weight", PAIR_WEIGHTS)
    hi, lo = explicit_pairs(data.ptr, data.levels)
    sw = np.ones(data.n) if data.sample_weight is None else data.sample_weight
    qw = np.ones(data.n_queries) if data.query_weight is None else data.query_weight
    raw = sw[hi] * sw[lo]
    if pair_weight == "label_difference":
        raw = raw * (np.asarray(data.y, float)[hi] - np.asarray(data.y, float)[lo])
    query = data.query_index[hi]
    W_q = np.bincount(query, raw, minlength=data.n_queries)
    if normalization == "query":
        T = float(qw[W_q > 0].sum())
        c = qw[query] / T * raw / W_q[query]
    else:
        T = float(qw @ W_q)
        c = qw[query] * raw / T
    return hi, lo, c, T


def query_ranksvm_problem(data, lam, *, loss: str = "hinge", normalization: str = "query",
                          pair_weight: str = "none", scaling: str = "paper",
                          form: str = "compact"):
    """RankSVM over the queries of ``data`` (a QueryData) with the hinge or squared hinge, in
    paper or seed scaling (module docstring); ``form``: "compact" or "direct", the same problem
    (its hinges over the explicit pairs; the catalog's name for a model's one form); a
    ``cvxpy.Problem``."""
    import cvxpy as cp  # (the solvers import this module's names without CVXPY)

    check_choice(loss, "loss", LOSSES)
    check_choice(scaling, "scaling", ("paper", "seed"))
    check_choice(form, "form", ("compact", "direct"))
    lam_value = check_scalar(lam, "lam", positive=True)
    hi, lo, c, T = query_pair_weights(data, normalization, pair_weight)
    X = data.X
    Z = (X[hi] - X[lo]) if sp.issparse(X) else np.asarray(X)[hi] - np.asarray(X)[lo]
    w = cp.Variable(data.d, name="w")
    lam_param = cp.Parameter(nonneg=True, name="lam", value=lam_value)
    hinge = cp.pos(1 - Z @ w)
    if loss == "hinge":
        value = c @ hinge
    else:
        value = cp.sum_squares(cp.multiply(np.sqrt(c), hinge))
    if scaling == "paper":
        objective = lam_param / 2 * cp.sum_squares(w) + value
    else:
        objective = lam_param * cp.sum_squares(w) + T * value
    return cp.Problem(cp.Minimize(objective))
