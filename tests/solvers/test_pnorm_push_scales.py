"""The P-Norm Push's Newton method on columns of very different sizes (issue 26, re-tested).

With two columns scaled by 1e-4 and 1e4 at lam = 1e-6 the softmax weights saturate, the
Hessian is about ``lam I`` and the Newton step overshoots by ten orders of magnitude: the line
search gave up at its smallest step (1e-10) and the solve ended "stalled" at a relative gap of
1e11, objective -3,352 against an optimum of -51,478. At lam = 1e-10 the Hessian, a Gram matrix
minus outer products of means, came out indefinite and the solve ended "failed" ("the Newton
system could not be solved"). References: CVXPY + Clarabel on the unscaled columns with the
penalty rescaled (the same problem).
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.pnorm_push import pnorm_push
from infpush_cvx.solvers.pnorm_push.methods import newton_direction as _newton_direction
from infpush_cvx.solvers.result import ConvergenceWarning

SCALES = np.array([1.0, 1.0, 1e-4, 1.0, 1e4, 1.0, 1.0, 1.0])


def planted():
    rng = np.random.default_rng(1)
    Xp = rng.standard_normal((40, 8)) + 3.0 * np.r_[1, 1, np.zeros(6)]
    Xn = rng.standard_normal((60, 8))
    return Xp, Xn


def reference(lam, p):
    """The optimum over u = SCALES * w, whose data are the unscaled columns."""
    Xp, Xn = planted()
    u = cp.Variable(8)
    loss = (cp.log_sum_exp(p * (Xn @ u) - np.log(60)) / p
            + cp.log_sum_exp(-(Xp @ u) - np.log(40)))
    problem = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(cp.multiply(1 / SCALES, u))
                                     + loss))
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    return problem.value


@pytest.mark.parametrize("p", [1.0, 4.0])
def test_newton_reaches_the_optimum_on_columns_of_sizes_1e_4_and_1e4(p):
    Xp, Xn = planted()
    res = pnorm_push(BipartiteData(Xp * SCALES, Xn * SCALES), 1e-6, p=p, max_iter=300)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(reference(1e-6, p), rel=1e-7)


@pytest.mark.parametrize("p", [1.0, 4.0])
def test_a_hessian_indefinite_by_round_off_does_not_fail_the_solve(p):
    Xp, Xn = planted()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = pnorm_push(BipartiteData(Xp * SCALES, Xn * SCALES), 1e-10, p=p)
    assert res.status != "failed"
    assert np.all(np.isfinite(res.w)) and res.gap is not None


def test_newton_direction_raises_round_off_eigenvalues_to_lam():
    lam = 1e-6
    H = np.array([[1.0, 1.0], [1.0, 1.0 - 1e-12]])  # eigenvalues 2 and -5e-13: not positive
    with pytest.raises(np.linalg.LinAlgError):
        scipy.linalg.cholesky(H)
    grad = np.array([1.0, -2.0])
    values, vectors = np.linalg.eigh(H)
    expected = -vectors @ ((vectors.T @ grad) / np.maximum(values, lam))
    assert np.allclose(_newton_direction(H, grad, lam), expected)
    assert np.allclose(_newton_direction(2.0 * np.eye(2), grad, lam), -grad / 2.0)
    assert _newton_direction(np.full((2, 2), np.nan), grad, lam) is None
