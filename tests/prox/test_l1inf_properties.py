"""Properties of the l1,inf projection, checked with hypothesis on small matrices.

Feasibility, activity of the constraint, idempotence, the variational inequality
``<V - P, Q - P> <= 0`` for feasible Q, sign pattern, agreement of the two methods, for both
dtypes, both axes and both memory orders.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infpush_cvx.prox import l1inf_norm, project_l1inf

# Relative tolerances: float64 results are exact up to rounding; float32 results are rounded
# once (caps rounded toward zero) from float64 caps.
RTOL = {np.float64: 1e-12, np.float32: 1e-6}

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
# Entries from a small set produce ties, zeros and all-equal groups.
tied = st.sampled_from([-2.0, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0])


@st.composite
def cases(draw):
    m = draw(st.integers(1, 7))
    n = draw(st.integers(1, 7))
    elements = draw(st.sampled_from([finite, tied]))
    V = draw(arrays(np.float64, (m, n), elements=elements))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    order = draw(st.sampled_from(["C", "F"]))
    V = np.array(V, dtype=dtype, order=order)
    axis = draw(st.integers(0, 1))
    nonneg = draw(st.booleans())
    factor = draw(st.sampled_from([0.0, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0, 2.0])
                  | st.floats(0.0, 1.2))
    return V, axis, nonneg, factor


def _norm(P, axis):
    return l1inf_norm(P.astype(np.float64), axis)


def _radius(V, axis, nonneg, factor):
    base = np.maximum(V, 0) if nonneg else V
    return factor * l1inf_norm(base.astype(np.float64), axis), base


@pytest.mark.parametrize("method", ["ssn", "sort"])
@settings(max_examples=150, deadline=None)
@given(case=cases())
def test_feasible_active_idempotent_signs(method, case):
    V, axis, nonneg, factor = case
    radius, base = _radius(V, axis, nonneg, factor)
    P = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method=method)
    rtol = RTOL[V.dtype.type]
    assert P.dtype == V.dtype and P.shape == V.shape
    scale = max(float(np.abs(V).max()), 1.0)
    norm = _norm(P, axis)
    assert norm <= radius * (1 + rtol) + 1e-300
    if l1inf_norm(base.astype(np.float64), axis) > radius:       # outside: on the sphere
        assert norm >= radius * (1 - rtol) - rtol * scale * 1e-3
    else:                                                          # inside: unchanged
        np.testing.assert_array_equal(P, base)
    # Sign pattern and magnitudes: P = sign(V) min(|V|, cap), never larger than V.
    assert np.all(P * np.asarray(base) >= 0)
    assert np.all(np.abs(P) <= np.abs(base))
    if nonneg:
        assert np.all(P >= 0)
    # Idempotence.
    P2 = project_l1inf(P, radius, axis=axis, nonneg=nonneg, method=method)
    np.testing.assert_allclose(P2, P, rtol=0, atol=rtol * scale)


@settings(max_examples=150, deadline=None)
@given(case=cases(), seed=st.integers(0, 2**32 - 1))
def test_variational_inequality(case, seed):
    V, axis, nonneg, factor = case
    radius, _ = _radius(V, axis, nonneg, factor)
    P = project_l1inf(V, radius, axis=axis, nonneg=nonneg).astype(np.float64)
    V64 = V.astype(np.float64)
    rng = np.random.default_rng(seed)
    scale = max(float(np.abs(V64).max()), 1.0)
    for _ in range(5):
        Q = rng.standard_normal(V.shape) * scale
        if nonneg:
            Q = np.abs(Q)
        q_norm = l1inf_norm(Q, axis)
        if q_norm > 0:
            Q *= radius / q_norm * rng.random()      # a feasible point
        inner = float(np.sum((V64 - P) * (Q - P)))
        assert inner <= RTOL[V.dtype.type] * 10 * scale * max(scale, radius) * V.size


@settings(max_examples=200, deadline=None)
@given(case=cases())
def test_methods_agree(case):
    V, axis, nonneg, factor = case
    radius, _ = _radius(V, axis, nonneg, factor)
    P1 = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method="ssn")
    P2 = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method="sort")
    scale = max(float(np.abs(V).max()), 1e-300)
    tol = 1e-12 if V.dtype == np.float64 else 2 * np.finfo(np.float32).eps
    np.testing.assert_allclose(P1, P2, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("method", ["ssn", "sort"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("axis", [0, 1])
def test_axis_and_order_equal_transpose(method, order, axis):
    rng = np.random.default_rng(3)
    V = np.array(rng.standard_normal((40, 25)), order=order)
    r = 0.2 * l1inf_norm(V, axis)
    P = project_l1inf(V, r, axis=axis, method=method)
    PT = project_l1inf(np.ascontiguousarray(V.T), r, axis=1 - axis, method=method)
    np.testing.assert_allclose(P, PT.T, rtol=0, atol=1e-14)
    assert P.flags.f_contiguous == (order == "F") or P.flags.c_contiguous


@pytest.mark.parametrize("method", ["ssn", "sort"])
@pytest.mark.parametrize("magnitude", [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_extreme_magnitudes_scale_exactly(method, magnitude):
    # Projection commutes with scaling by a power of two: P(2^k V, 2^k r) = 2^k P(V, r).
    rng = np.random.default_rng(5)
    V = rng.standard_normal((30, 20))
    k = int(np.round(np.log2(magnitude)))
    r = 0.1 * l1inf_norm(V)
    ref = project_l1inf(V, r, method="sort")
    P = project_l1inf(np.ldexp(V, k), np.ldexp(r, k), method=method)
    np.testing.assert_allclose(np.ldexp(P, -k), ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("method", ["ssn", "sort"])
def test_mixed_extreme_magnitudes(method):
    V = np.array([[1e300, -1e-300, 0.0], [3e299, 1e300, -1e300], [5e-310, 1.0, 2e299]])
    r = 0.5 * l1inf_norm(V)
    P = project_l1inf(V, r, method=method)
    assert np.all(np.isfinite(P))
    assert abs(l1inf_norm(P) - r) <= 1e-12 * r
    np.testing.assert_allclose(P, project_l1inf(V, r, method="sort"), rtol=1e-13, atol=0)


@pytest.mark.parametrize("method", ["ssn", "sort"])
def test_degenerate_shapes_and_groups(method):
    # Single row / single column: one group (a vector's l_inf ball) or m groups of size one
    # (the l1 ball).
    v = np.array([[3.0, -1.0, 2.0]])
    np.testing.assert_allclose(project_l1inf(v, 1.5, axis=1, method=method), [[1.5, -1.0, 1.5]])
    np.testing.assert_allclose(project_l1inf(v, 3.0, axis=0, method=method), [[2.0, -0.0, 1.0]],
                               atol=1e-15)
    # A zero group and an all-equal group.
    V = np.array([[0.0, 2.0], [0.0, 2.0], [0.0, 2.0]])
    np.testing.assert_allclose(project_l1inf(V, 1.0, method=method), [[0, 1.0]] * 3)
    # Every entry negative with nonneg: the projection is zero.
    assert not np.any(project_l1inf(-np.ones((3, 3)), 1.0, nonneg=True, method=method))


def test_larger_random_methods_agree():
    rng = np.random.default_rng(11)
    for shape, axis in [((300, 200), 0), ((200, 300), 1), ((50, 2000), 0)]:
        V = np.asfortranarray(rng.standard_normal(shape)) if axis else rng.standard_normal(shape)
        for factor in (1e-3, 1e-2, 0.1, 0.5):
            for nonneg in (False, True):
                r = factor * l1inf_norm(V, axis)
                P1 = project_l1inf(V, r, axis=axis, nonneg=nonneg)
                P2 = project_l1inf(V, r, axis=axis, nonneg=nonneg, method="sort")
                np.testing.assert_allclose(P1, P2, rtol=0, atol=1e-12)
