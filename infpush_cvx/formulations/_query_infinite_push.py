"""The Infinite Push over queries: its groups (relevant and other documents of each query, the
query weights) and its primal in CVXPY.

For each query q of a :class:`~infpush_cvx.data.queries.QueryData`, ``R_q`` are its documents of
label at least ``threshold`` (relevant) and ``N_q`` the others; with the documents' weights p
(ones without ``sample_weight``) and ``M_q = sum_{i in R_q} p_i``, paper scaling is::

    P(w) = lam pen(w) + sum_q omega_q max_{j in N_q} (1/M_q) sum_{i in R_q} p_i h_ij(w),
    h_ij(w) = max(0, 1 - (x_i - x_j) . w),   pen(w) = ||w||^2 / 2 (l2) or ||w||_1 (l1),

the Infinite Push (Agarwal, SDM 2011; l1: Rakotomamonjy, ICML 2012) of every query, pushing
its relevant documents above its top other document, averaged over queries: ``omega_q`` is the
query weight (``query_weight``, else 1) divided by the sum over the queries that have both
relevant and other documents; the others contribute nothing. ``threshold="each"``: each query's
loss is the mean of its losses at every label level above the lowest (each level above the
next), over the levels where it has documents on both sides. Seed scaling sums where paper
scaling averages, as the bipartite seed scaling does (docs/mathematics.md, section 12)::

    P_seed(w) = lam_s pen_s(w) + M sum_q omega_q loss_q(w),   M = sum_q M_q,

the same minimiser at ``lam = lam_s / (M c)`` (c = 1/2 for l2, 1 for l1) and ``P_seed = M P``;
with one query it is the bipartite Infinite Push in either scaling.

The CVXPY problem is the epigraph form over every pair of a query (a test oracle and the
benchmark's reference: it has sum_q |R_q| |N_q| hinge variables)::

    minimise lam pen(w) + sum_q omega_q t_q
    s.t. xi_ij >= 1 - (s_i - s_j), xi_ij >= 0, (1/M_q) sum_{i in R_q} p_i xi_ij <= t_q
         (j in N_q), s = X w.

Its constraints, in order: ``s == X w``, the hinge rows (whose multipliers are the pair dual
``alpha``, in the order of :meth:`PushGroups.pairs`), ``xi >= 0``, the epigraph rows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import caller_stacklevel, check_choice, check_scalar
from ..data.queries import QueryData, QueryWarning
from . import scaling as _scaling


@dataclass(frozen=True, eq=False)
class PushGroups:
    """The documents that enter the loss, group by group: a group is a query with both relevant
    and other documents (with ``threshold="each"``, a query at one of its thresholds), its
    query's index ``kept[k]``, its relevant rows ``rel_rows[ptr_r[k]:ptr_r[k+1]]`` with weights
    ``p`` and its other rows ``neg_rows[ptr_n[k]:ptr_n[k+1]]``, ``M`` (M_q), ``omega`` (omega_q,
    summing to 1) and ``nu`` (sum M_q). Below, "query" means group."""

    kept: np.ndarray
    rel_rows: np.ndarray
    ptr_r: np.ndarray
    neg_rows: np.ndarray
    ptr_n: np.ndarray
    p: np.ndarray
    M: np.ndarray
    omega: np.ndarray

    @property
    def n_queries(self) -> int:
        return self.kept.size

    @property
    def nu(self) -> float:
        return float(self.M.sum())

    @property
    def rel_query(self) -> np.ndarray:
        """The kept query (0 to n_queries - 1) of every relevant document."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.ptr_r))

    @property
    def neg_query(self) -> np.ndarray:
        """The kept query of every other document."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.ptr_n))

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair ``(i, j)`` of a kept query as positions into ``rel_rows`` and
        ``neg_rows``, query by query and i-major (the CVXPY problem's hinge rows; an array of
        all pairs, so for oracles and small problems only)."""
        I, J = [], []
        for k in range(self.n_queries):
            rel = np.arange(self.ptr_r[k], self.ptr_r[k + 1])
            neg = np.arange(self.ptr_n[k], self.ptr_n[k + 1])
            I.append(np.repeat(rel, neg.size))
            J.append(np.tile(neg, rel.size))
        return np.concatenate(I), np.concatenate(J)


def check_threshold(threshold):
    """The relevance threshold: a finite real number, or ``"each"`` (a ValueError/TypeError
    naming it)."""
    if isinstance(threshold, str):
        if threshold != "each":
            raise ValueError(f"threshold must be a number or 'each', got {threshold!r}")
        return threshold
    return check_scalar(threshold, "threshold")


def push_groups(data: QueryData, threshold) -> PushGroups:
    """The :class:`PushGroups` of ``data`` at ``threshold``: one group per query, or with
    ``threshold="each"`` one per query and label level above the lowest (relevant: the
    documents of at least that label), query q's groups sharing its weight equally (the mean
    over its thresholds). The queries left without a group are named in a
    :class:`~infpush_cvx.data.queries.QueryWarning` (they contribute nothing); a ValueError
    naming ``threshold`` when no query is left."""
    if not isinstance(data, QueryData):
        raise TypeError(f"data must be a QueryData, got {type(data).__name__}")
    threshold = check_threshold(threshold)
    levels = data.labels[1:] if threshold == "each" else np.array([threshold])
    query = data.query_index
    weights = np.ones(data.n) if data.sample_weight is None else np.asarray(data.sample_weight)
    parts = []  # each threshold's groups: (queries, relevant rows, their counts, others, counts)
    for level in levels:
        rel = np.asarray(data.y) >= level
        n_rel = np.bincount(query, weights=rel, minlength=data.n_queries).astype(np.int64)
        n_neg = data.sizes - n_rel
        keep = (n_rel > 0) & (n_neg > 0)
        in_kept = keep[query]
        parts.append((np.flatnonzero(keep), np.flatnonzero(rel & in_kept), n_rel[keep],
                      np.flatnonzero(~rel & in_kept), n_neg[keep]))
    kept = np.concatenate([part[0] for part in parts])
    counted = np.bincount(kept, minlength=data.n_queries)  # groups of each query
    if not counted.any():
        raise ValueError(f"threshold={threshold!r}: no query has both documents of label at "
                         f"least the threshold and documents below it")
    if not counted.all():
        left = data.queries[counted == 0]
        shown = ", ".join(str(v) for v in left[:5]) + (", ..." if left.size > 5 else "")
        at = "any label" if threshold == "each" else f"label at least {threshold:g}"
        warnings.warn(f"{left.size} of {data.n_queries} queries have no document of {at} "
                      f"or none below it and contribute nothing to the Infinite Push over "
                      f"queries: {shown}", QueryWarning, stacklevel=caller_stacklevel())
    rel_rows = np.concatenate([part[1] for part in parts])
    neg_rows = np.concatenate([part[3] for part in parts])
    ptr_r = np.r_[0, np.cumsum(np.concatenate([part[2] for part in parts]))].astype(np.int64)
    ptr_n = np.r_[0, np.cumsum(np.concatenate([part[4] for part in parts]))].astype(np.int64)
    p = np.ascontiguousarray(weights[rel_rows], dtype=np.float64)
    M = np.add.reduceat(p, ptr_r[:-1])
    rho = np.ones(data.n_queries) if data.query_weight is None else \
        np.asarray(data.query_weight, dtype=np.float64)
    omega = rho[kept] / counted[kept] / rho[counted > 0].sum()
    return PushGroups(kept, rel_rows, ptr_r, neg_rows, ptr_n, p, M, omega)


def query_infinite_push_problem(data: QueryData, lam, *, penalty: str = "l2",
                                threshold: float | str = 1.0, scaling: str = "paper"):
    """The Infinite Push over queries in CVXPY, epigraph form over every pair (module
    docstring); the weight variable is ``w`` and lambda the parameter ``lam``."""
    import cvxpy as cp  # here: the solvers import push_groups without CVXPY
    import scipy.sparse as sp

    from ._common import penalty_expression, weights_and_lam

    check_choice(scaling, "scaling", _scaling.SCALINGS)
    check_choice(penalty, "penalty", _scaling.PENALTIES)
    groups = push_groups(data, threshold)
    I, J = groups.pairs()
    w, lam_p = weights_and_lam(data.d, lam)
    # one score per document (with threshold="each" a document is in several groups)
    docs, score_of = np.unique(np.r_[groups.rel_rows, groups.neg_rows], return_inverse=True)
    s = cp.Variable(docs.size, name="s")
    xi = cp.Variable(I.size, name="xi")
    t = cp.Variable(groups.n_queries, name="t")
    rel, neg = score_of[I], score_of[groups.rel_rows.size + J]
    # row j of A averages the hinges of negative j over its query's relevant documents
    A = sp.csr_matrix((groups.p[I] / groups.M[groups.rel_query[I]], (J, np.arange(I.size))),
                      shape=(groups.neg_rows.size, I.size))
    B = sp.csr_matrix((np.ones(groups.neg_rows.size),
                       (np.arange(groups.neg_rows.size), groups.neg_query)),
                      shape=(groups.neg_rows.size, groups.n_queries))
    constraints = [s == data.X[docs] @ w, xi >= 1 - (s[rel] - s[neg]), xi >= 0, A @ xi <= B @ t]
    loss = groups.omega @ t
    if scaling == "seed":
        loss = groups.nu * loss
    return cp.Problem(cp.Minimize(lam_p * penalty_expression(w, penalty, scaling) + loss),
                      constraints)
