"""l1,inf projection: agreement with CVXPY, exact special cases, input validation."""

from __future__ import annotations

import numpy as np
import pytest

from infpush_cvx.prox import METHODS, l1inf_norm, project_l1inf


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("factor", [0.01, 0.3, 0.9])
def test_matches_cvxpy_random(method, axis, nonneg, factor, cvx_l1inf):
    rng = np.random.default_rng(7)
    V = rng.standard_normal((6, 8))
    radius = factor * l1inf_norm(np.maximum(V, 0) if nonneg else V, axis)
    P = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method=method)
    ref = cvx_l1inf(V, radius, axis=axis, nonneg=nonneg)
    # Clarabel is accurate to ~1e-9 here; the exact answer is checked by properties elsewhere.
    np.testing.assert_allclose(P, ref, atol=1e-7)


@pytest.mark.parametrize("method", METHODS)
def test_radius_zero_and_inside(method):
    V = np.array([[1.0, -2.0], [3.0, 0.5]])
    np.testing.assert_array_equal(project_l1inf(V, 0.0, method=method), np.zeros_like(V))
    P = project_l1inf(V, 5.0, method=method)   # norm is 3 + 2 = 5: already inside
    np.testing.assert_array_equal(P, V)
    assert P is not V


@pytest.mark.parametrize("method", METHODS)
def test_hand_example(method):
    # Two groups (columns) [3, 1] and [2, 0]; radius 3. Shared theta: column 1 capped at
    # mu1 = 3 - theta (one entry above), column 2 at mu2 = 2 - theta; mu1 + mu2 = 3 -> theta = 1.
    V = np.array([[3.0, 2.0], [1.0, 0.0]])
    P = project_l1inf(V, 3.0, method=method)
    np.testing.assert_allclose(P, [[2.0, 1.0], [1.0, 0.0]], rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad, exc, word", [
    (np.array([[1.0, np.nan]]), ValueError, "V"),
    (np.array([[1.0, np.inf]]), ValueError, "V"),
    (np.ones(3), ValueError, "V"),
    ([["a"]], TypeError, "V"),
])
def test_bad_matrix(bad, exc, word):
    with pytest.raises(exc, match=word):
        project_l1inf(bad, 1.0)


@pytest.mark.parametrize("radius, exc", [(-1.0, ValueError), (np.inf, ValueError),
                                         (np.nan, ValueError), ("1", TypeError)])
def test_bad_radius(radius, exc):
    with pytest.raises(exc, match="radius"):
        project_l1inf(np.ones((2, 2)), radius)


def test_bad_method_axis_nonneg():
    with pytest.raises(ValueError, match="method"):
        project_l1inf(np.ones((2, 2)), 1.0, method="heap")
    with pytest.raises(ValueError, match="axis"):
        project_l1inf(np.ones((2, 2)), 1.0, axis=2)
    with pytest.raises(TypeError, match="nonneg"):
        project_l1inf(np.ones((2, 2)), 1.0, nonneg="yes")


def test_an_unknown_method_is_refused_by_every_prox():
    from infpush_cvx.prox import prox_infinite_push_loss, prox_linf1
    for prox in (prox_linf1, prox_infinite_push_loss):
        with pytest.raises(ValueError, match="method 'newton'"):
            prox(np.ones((2, 2)), 0.5, method="newton")


def test_every_prox_defaults_to_the_fast_kernel():
    import inspect

    from infpush_cvx.prox import prox_infinite_push_loss, prox_linf1
    for fn in (project_l1inf, prox_linf1, prox_infinite_push_loss):
        assert inspect.signature(fn).parameters["method"].default == "ssn"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("nonneg", [False, True])
def test_return_info_certifies_the_projection(method, axis, nonneg):
    # P = sign(V) min(|V|, caps); T_g(caps_g) = theta on the groups with a positive cap.
    V = np.random.default_rng(9).standard_normal((12, 10))
    A = (np.maximum(V, 0) if nonneg else np.abs(V))
    G = A if axis == 0 else A.T
    r = 0.3 * G.max(axis=0).sum()
    P, info = project_l1inf(V, r, axis=axis, nonneg=nonneg, method=method, return_info=True)
    np.testing.assert_array_equal(P, project_l1inf(V, r, axis=axis, nonneg=nonneg,
                                                   method=method))
    assert info.method == method and not info.fallback
    assert (info.passes >= 1) if method == "ssn" else (info.passes == 0)
    cap = info.caps[None, :] if axis == 0 else info.caps[:, None]
    np.testing.assert_array_equal(P, np.clip(V, 0 if nonneg else -cap, cap))
    pos = info.caps > 0
    T = np.maximum(G - info.caps, 0).sum(axis=0)
    np.testing.assert_allclose(T[pos], info.theta, rtol=1e-12)
    assert np.all(G.sum(axis=0)[~pos] <= info.theta * (1 + 1e-12))
    assert np.isclose(info.caps.sum(), r, rtol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_return_info_special_cases(method):
    V = np.array([[1.0, -2.0], [3.0, 0.5]])
    _, info = project_l1inf(V, 5.0, method=method, return_info=True)     # inside the ball
    np.testing.assert_array_equal(info.caps, [3.0, 2.0])
    assert info.theta == 0.0 and info.passes == 0 and info.method == method
    _, info = project_l1inf(V, 0.0, method=method, return_info=True)     # radius 0
    np.testing.assert_array_equal(info.caps, [0.0, 0.0])
    assert info.theta == 4.0                                             # the largest group sum
    P, info = project_l1inf(np.zeros((0, 3)), 1.0, method=method, return_info=True)
    assert P.shape == (0, 3) and info.caps.shape == (3,) and info.theta == 0.0
