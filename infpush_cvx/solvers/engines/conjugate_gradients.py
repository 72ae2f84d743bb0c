"""Preconditioned conjugate gradients for the Newton systems of the smooth ranking losses.

The truncated Newton methods (the squared-hinge RankSVM, RankSVM over queries) find each
direction ``d`` with ``H d = -g`` by conjugate gradients on Hessian-vector products, stopped at
a residual ``||H d + g|| <= target`` (a forcing sequence: Dembo, Eisenstat & Steihaug 1982) and
preconditioned by the Cholesky factor of an earlier point's Hessian where one was formed (the
Hessians of nearby points differ only in the pairs that changed side, so a few iterations
suffice; Nocedal & Wright, "Numerical Optimization", 2006, algorithm 5.3).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from infpush_cvx.solvers.engines.deadline import Deadline


def cholesky(H: np.ndarray):
    """The Cholesky factor of ``H`` (scipy's ``cho_factor``), or None when round-off leaves it
    not numerically positive definite."""
    try:
        return scipy.linalg.cho_factor(H, check_finite=False)
    except (scipy.linalg.LinAlgError, ValueError):
        return None


def conjugate_gradients(hessian_product, grad: np.ndarray, target: float, max_cg: int,
                        deadline: Deadline, factor=None):
    """``(d, iterations)`` with ``H d = -grad`` to a residual at most ``target`` (or after
    ``max_cg`` iterations), from ``d = 0``, ``hessian_product(u) = H u``, preconditioned by
    ``factor`` (a :func:`cholesky` factor; None: none). ``(None, iterations)`` when the
    deadline passes first. A direction of curvature at most 0 (H positive semidefinite in
    round-off only) ends the iterations with the point so far (the first direction if none)."""
    def precondition(r):
        return r if factor is None else scipy.linalg.cho_solve(factor, r, check_finite=False)

    d = np.zeros_like(grad)
    r = -grad
    z = precondition(r)
    direction = z.copy()
    rz = float(r @ z)
    for k in range(max_cg):
        if np.linalg.norm(r) <= target:
            return d, k
        if deadline.expired():
            return None, k
        Hp = hessian_product(direction)
        curvature = float(direction @ Hp)
        if curvature <= 0:
            return (d if k else direction), k
        step = rz / curvature
        d += step * direction
        r -= step * Hp
        z = precondition(r)
        rz, previous = float(r @ z), rz
        direction = z + (rz / previous) * direction
    return d, max_cg
