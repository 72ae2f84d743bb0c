"""Pieces shared by the bipartite formulations: scores, pair margins, penalties, lambda."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from . import scaling as _scaling
from .._validation import check_choice, check_scalar
from ..data.containers import BipartiteData

FORMS = ("compact", "direct")


def weights_and_lam(d: int, lam) -> tuple[cp.Variable, cp.Parameter]:
    """What every primal factory starts with: the weight variable ``w`` (length d) and lambda
    as the nonnegative parameter ``lam``, so that changing it re-solves without recompiling."""
    lam = check_scalar(lam, "lam", nonnegative=True)
    return cp.Variable(d, name="w"), cp.Parameter(nonneg=True, name="lam", value=lam)


def scores(data: BipartiteData, w: cp.Variable, form: str):
    """Score expressions ``s = Xp w``, ``t = Xn w`` and the constraints that define them.

    ``direct``: s and t are the affine expressions themselves, so every pair row below holds d
    coefficients of w (about m*n*(d+1) nonzeros, the original script's way). ``compact``: s and t
    are variables tied to w by m + n equality rows, so a pair row holds two coefficients (about
    (m+n)*d + 3*m*n nonzeros).
    """
    check_choice(form, "form", FORMS)
    if form == "direct":
        return data.Xp @ w, data.Xn @ w, []
    s = cp.Variable(data.m, name="s")
    t = cp.Variable(data.n, name="t")
    return s, t, [s == data.Xp @ w, t == data.Xn @ w]


def pair_hinges(s, t, m: int, n: int):
    """The m x n expression ``max(0, 1 - (s_i - t_j))``."""
    S = cp.reshape(s, (m, 1), order="F") @ np.ones((1, n))
    T = np.ones((m, 1)) @ cp.reshape(t, (1, n), order="F")
    return cp.pos(1 - (S - T))


def penalty_expression(w: cp.Variable, penalty: str, scaling: str, K=None):
    """pen(w): ||w||^2/2 (paper l2), ||w||^2 (seed l2) or ||w||_1 (see
    infpush_cvx.formulations.scaling); with a PSD matrix ``K`` (l2 only) the RKHS norm
    ``w^T K w`` stands for ||w||^2."""
    coef = _scaling.penalty_coefficient(penalty, scaling)
    if penalty == "l1":
        return cp.norm1(w)
    return coef * (cp.sum_squares(w) if K is None else cp.quad_form(w, cp.psd_wrap(K)))
