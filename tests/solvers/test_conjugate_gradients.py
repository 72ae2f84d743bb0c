"""The shared preconditioned conjugate gradients of the Newton methods."""

import numpy as np

from infpush_cvx.solvers.engines.conjugate_gradients import cholesky, conjugate_gradients
from infpush_cvx.solvers.engines.deadline import Deadline


def _spd(d, seed):
    A = np.random.default_rng(seed).normal(size=(d, d))
    return A @ A.T + 0.1 * np.eye(d)


def test_solves_the_system_plain_and_preconditioned():
    H, g = _spd(30, 0), np.random.default_rng(1).normal(size=30)
    exact = -np.linalg.solve(H, g)
    plain, k_plain = conjugate_gradients(lambda u: H @ u, g, 1e-12, 500, Deadline(None))
    nearby = cholesky(H + 0.01 * _spd(30, 2))
    pre, k_pre = conjugate_gradients(lambda u: H @ u, g, 1e-12, 500, Deadline(None), nearby)
    np.testing.assert_allclose(plain, exact, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(pre, exact, rtol=1e-7, atol=1e-9)
    assert k_pre < k_plain


def test_stops_at_the_deadline_and_on_non_positive_curvature():
    H, g = _spd(10, 3), np.ones(10)
    clock = iter([0.0, 5.0, 5.0])
    expired = Deadline(1.0, clock=lambda: next(clock))
    assert conjugate_gradients(lambda u: H @ u, g, 0.0, 50, expired) == (None, 0)
    d, k = conjugate_gradients(lambda u: -u, g, 0.0, 50, Deadline(None))
    assert k == 0 and np.array_equal(d, -g)  # the first direction, the steepest descent
    assert cholesky(-np.eye(3)) is None
