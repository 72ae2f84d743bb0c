"""A certificate that ``w* = 0`` for the l1 Infinite Push over queries, by one LP.

At ``w = 0`` every hinge is 1, every other document's loss is 1 and P(0) = 1. The pair dual
``alpha_ij = c_j p_i / M_q`` (``i in R_q``, ``j in N_q``, ``c_j >= 0``) is feasible when
``sum_{j in N_q} c_j = omega_q`` in every query (each query's budget, docs/mathematics.md
section 12), and then ``sum alpha = 1`` and ``w(alpha) = b - X_N^T c`` with
``b = sum_q (omega_q / M_q) sum_{i in R_q} p_i x_i``. For the l1 penalty its dual value is 1,
equal to P(0), whenever ``||X_N^T c - b||_inf <= lam``: the subgradient condition of ``w = 0``
(the bipartite model's degeneracy test, section 1.7, with lam's slack and one simplex a query).
Such a ``c`` exists exactly when ``w* = 0``, and finding it is a feasibility LP over the other
documents (HiGHS; its infeasibility is found by presolve within milliseconds when ``w* != 0``).
The LP only proposes the dual point: :meth:`.problem.QueryInfinitePushProblem.certificate`
computes the gap.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse as sp


def zero_weights(problem, time_limit: float | None = None) -> np.ndarray | None:
    """``c``, one weight per other document (in the groups' order), whose pair dual
    ``alpha_ij = c_j p_i / M_q`` has the value 1 = P(0) in the l1 problem (module docstring), or
    None when the LP finds none (``w* != 0``, or the LP failed or ran out of ``time_limit``
    seconds)."""
    g, d = problem.groups, problem.data.d
    coef = np.zeros(problem.data.n)
    np.add.at(coef, g.rel_rows, (g.omega / g.M)[g.rel_query] * g.p)
    b = problem.document_vector(coef)
    XN = problem.data.X[g.neg_rows]
    XN = sp.csr_matrix(XN.T) if sp.issparse(XN) else sp.csr_matrix(np.asarray(XN).T)
    n_other = g.neg_rows.size
    # variables (c, r): X_N^T c - r = b, one simplex of mass omega_q a query, |r| <= lam
    budget = sp.csr_matrix((np.ones(n_other), (g.neg_query, np.arange(n_other))),
                           shape=(g.n_queries, n_other))
    A = sp.vstack([sp.hstack([XN, -sp.identity(d)]),
                   sp.hstack([budget, sp.csr_matrix((g.n_queries, d))])], format="csr")
    lam = problem.lam_paper
    bounds = np.r_[np.zeros(n_other), np.full(d, -lam)], np.r_[np.full(n_other, np.inf),
                                                              np.full(d, lam)]
    options = {} if time_limit is None else {"time_limit": max(time_limit, 1e-3)}
    found = scipy.optimize.linprog(np.zeros(n_other + d), A_eq=A, b_eq=np.r_[b, g.omega],
                                   bounds=np.column_stack(bounds), method="highs",
                                   options=options)
    if found.status != 0:
        return None
    return np.maximum(found.x[:n_other], 0.0)
