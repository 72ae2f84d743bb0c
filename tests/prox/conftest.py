"""Shared helpers for the prox tests: a tight CVXPY reference for the l1,inf projection."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

CLARABEL_TIGHT = dict(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                      tol_ktratio=1e-10, max_iter=500)


def cvxpy_project_l1inf(V, radius, axis=0, nonneg=False):
    """``argmin ||P - V||^2`` over the (nonnegative) l1,inf ball, solved by Clarabel."""
    P = cp.Variable(V.shape)
    cons = [cp.sum(cp.max(cp.abs(P), axis=axis)) <= radius]
    if nonneg:
        cons.append(P >= 0)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(P - V)), cons)
    prob.solve(**CLARABEL_TIGHT)
    assert prob.status == cp.OPTIMAL, prob.status
    return P.value


@pytest.fixture
def cvx_l1inf():
    return cvxpy_project_l1inf
