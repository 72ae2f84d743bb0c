"""The newton method's candidate windows (large matrices): exact against the sort method on
inputs that stress the sample, the probes and the fallback when a cap leaves its window."""

from __future__ import annotations

import numpy as np
import pytest

from infpush_cvx.prox import _l1inf_newton as K
from infpush_cvx.prox import l1inf_norm, project_l1inf

FACTORS = (1e-3, 1e-2, 0.1, 0.5, 0.99)
FEW_FACTORS = (1e-3, 0.1, 0.5)


def _agree(V, factor, axis, nonneg, atol=1e-12):
    base = np.maximum(V, 0) if nonneg else V
    r = factor * l1inf_norm(base.astype(np.float64), axis)
    P1 = project_l1inf(V, r, axis=axis, nonneg=nonneg)
    P2 = project_l1inf(V, r, axis=axis, nonneg=nonneg, method="sort")
    scale = float(np.abs(V).max())
    assert P1.dtype == V.dtype and P1.shape == V.shape
    np.testing.assert_allclose(P1, P2, rtol=0, atol=atol * scale)
    return P1


def _large_enough(shape, axis):
    m = shape[axis]
    n = shape[1 - axis]
    return m >= 2 * K.SAMPLE_ENTRIES and m * n >= K.SAMPLE_MIN_SIZE


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("nonneg", [False, True])
def test_window_path_matches_sort(order, axis, nonneg):
    rng = np.random.default_rng(21)
    shape = (300, 200) if axis == 0 else (200, 300)
    assert _large_enough(shape, axis)
    V = np.array(rng.standard_normal(shape), order=order)
    for factor in FACTORS:
        _agree(V, factor, axis, nonneg)


def test_window_path_float32():
    rng = np.random.default_rng(22)
    V = rng.standard_normal((300, 300)).astype(np.float32)
    for factor in FEW_FACTORS:
        for axis in (0, 1):
            P = _agree(V, factor, axis, False, atol=2 * np.finfo(np.float32).eps)
            r = factor * l1inf_norm(V.astype(np.float64), axis)
            assert l1inf_norm(P.astype(np.float64), axis) <= r * (1 + 1e-6)


@pytest.mark.parametrize("kind", ["ties", "sparse", "sorted", "one_big_group", "scaled_groups",
                                  "exponential"])
def test_window_path_adversarial(kind):
    # Inputs where the sample misleads the probes: ties at the caps, mostly zeros, rows sorted
    # (the sample sees a biased part), one group far larger than the rest, groups on scales
    # 1e-6..1e6, heavy tails. The result must stay exact whatever the windows were.
    rng = np.random.default_rng(23)
    shape = (256, 200)
    if kind == "ties":
        V = rng.integers(-3, 4, shape).astype(np.float64)
    elif kind == "sparse":
        V = rng.standard_normal(shape) * (rng.random(shape) < 0.02)
    elif kind == "sorted":
        V = np.sort(rng.standard_normal(shape), axis=0)
    elif kind == "one_big_group":
        V = rng.standard_normal(shape)
        V[:, 7] *= 1e4
    elif kind == "scaled_groups":
        V = rng.standard_normal(shape) * np.logspace(-6, 6, shape[1])
    else:
        V = rng.exponential(size=shape) * rng.choice([-1.0, 1.0], shape)
    assert _large_enough(shape, 0)
    for factor in FEW_FACTORS:
        for nonneg in (False, True):
            _agree(V if nonneg else np.ascontiguousarray(V.T), factor, 0 if nonneg else 1,
                   nonneg)


def test_window_path_extreme_magnitudes():
    # Beyond 2**900 the sample is skipped and the matrix rescaled by a power of two.
    rng = np.random.default_rng(24)
    V = rng.standard_normal((300, 300))
    r = 0.1 * l1inf_norm(V)
    ref = project_l1inf(V, r, method="sort")
    for k in (-1000, 1000):
        P = project_l1inf(np.ldexp(V, k), np.ldexp(r, k))
        np.testing.assert_allclose(np.ldexp(P, -k), ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("groups_are_rows", [False, True])
def test_windows_are_small_and_one_pass(groups_are_rows):
    # The point of the windows: on Gaussian data the search sees a small part of the matrix,
    # and no cap leaves its window (one gather pass). At 0.5 the first windows are wide and
    # get narrowed on the candidates; at 0.9 the sample lies in the ball (probes near maxima).
    rng = np.random.default_rng(25)
    V = rng.standard_normal((1000, 300))
    X = np.ascontiguousarray(V.T) if groups_are_rows else V
    for factor in (1e-3, 1e-2, 0.1, 0.5, 0.9):
        stats = {}
        r = factor * l1inf_norm(V)
        mu = K.caps_newton(X, groups_are_rows, False, r, stats)
        assert stats["passes"] == 1
        assert stats["candidates"] < 0.03 * V.size, (factor, stats)
        ref = project_l1inf(V, r, method="sort")
        np.testing.assert_allclose(np.clip(V, -mu, mu), ref, rtol=0, atol=1e-12)


def test_fallback_when_windows_are_wrong(monkeypatch):
    # Windows that miss the caps on purpose: the check must open them and still be exact.
    rng = np.random.default_rng(26)
    V = rng.standard_normal((400, 200))
    r = 0.1 * l1inf_norm(V)
    ref = project_l1inf(V, r, method="sort")
    n = V.shape[1]

    def wrong(X, groups_are_rows, nonneg, radius, n_, m_):
        t = np.full(n, 2.0)                  # above most caps
        u = np.full(n, 2.5)
        u[::2] = 0.01                        # below the caps of half the groups
        t[::2] = 0.0
        return t, u, 0.0, 0.0, np.zeros(n)

    monkeypatch.setattr(K, "_sample_windows", wrong)
    stats = {}
    mu = K.caps_newton(V, False, False, r, stats)
    assert stats["passes"] == 2
    P = np.clip(V, -mu, mu)
    np.testing.assert_allclose(P, ref, rtol=0, atol=1e-12)


def test_check_windows_opens_only_failed_groups():
    mu = np.array([0.5, 0.5, 0.0, 0.0, 0.3])
    t = np.array([0.4, 0.6, 0.0, 0.1, 0.0])
    u = np.array([0.6, 0.7, 1.0, 1.0, np.inf])
    S = np.array([5.0, 5.0, 1.0, 3.0, 2.0])
    assert K._check_windows(mu, t, u, S, 2.0) == 2
    # group 1: cap below its window; group 3: cap 0 but S > theta (the true cap is positive).
    np.testing.assert_array_equal(t, [0.4, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(u, [0.6, np.inf, 1.0, np.inf, np.inf])


def test_cap_bounds_bracket_the_cap():
    # Exact T at the probes brackets the cap of one group for any theta.
    rng = np.random.default_rng(27)
    a = np.abs(rng.standard_normal(200))
    probes = np.sort(rng.random(4) * 2.0)
    P = probes[None, :]
    T = np.array([[np.maximum(a - p, 0).sum() for p in probes]])
    k = np.array([[float((a > p).sum()) for p in probes]])
    M = np.array([a.max()])
    S = np.array([a.sum()])
    for theta in np.linspace(0.0, a.sum() * 1.1, 57):
        lb, ub = K._cap_bounds(theta, 0, M, S, a.size, P, T, k)
        # the exact cap by bisection on T
        lo, hi = 0.0, a.max()
        if a.sum() <= theta:
            lo = hi = 0.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.maximum(a - mid, 0).sum() >= theta:
                lo = mid
            else:
                hi = mid
        cap = lo
        assert lb - 1e-12 <= cap <= ub + 1e-12, (theta, lb, cap, ub)
