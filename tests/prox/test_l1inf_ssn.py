"""The ssn method, the semismooth Newton iteration of :mod:`infpush_cvx.prox._l1inf_ssn`:
exact against the sort method and against the optimality conditions, every result checked to
come from the kernel (``L1InfInfo.fallback`` is False); then its fallback to the sort method,
forced."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infpush_cvx.prox import _l1inf_ssn as S
from infpush_cvx.prox import l1inf_norm, project_l1inf

FACTORS = (1e-4, 1e-3, 1e-2, 0.1, 0.3, 0.5, 0.9, 0.999)
FEW_FACTORS = (1e-3, 0.1, 0.5)


def _kernel(V, radius, axis, nonneg):
    """The kernel called as project_l1inf calls it: (status, caps, info)."""
    transposed = not V.flags.c_contiguous
    X = V.T if transposed else V
    groups_are_rows = (axis == 0) == transposed
    mu = np.empty(X.shape[0] if groups_are_rows else X.shape[1])
    info = np.zeros(3)
    return S.project(X, groups_are_rows, nonneg, radius, mu, info), mu, info


def _radius(V, factor, axis, nonneg):
    base = np.maximum(V, 0) if nonneg else V
    return factor * l1inf_norm(base.astype(np.float64), axis)


def _agree(V, radius, axis, nonneg, tol=1e-12, fallback=False):
    """The default method against the sort method; the caps came from the kernel unless
    ``fallback``."""
    P1, info = project_l1inf(V, radius, axis=axis, nonneg=nonneg, return_info=True)
    assert info.fallback == fallback and info.method == ("sort" if fallback else "ssn")
    P2 = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method="sort")
    assert P1.dtype == V.dtype and P1.shape == V.shape
    scale = max(float(np.abs(V).max()), 1e-300)
    np.testing.assert_allclose(P1, P2, rtol=0, atol=tol * scale)
    return P1


def _matrix(kind, shape, rng):
    if kind == "gauss":
        return rng.standard_normal(shape)
    if kind == "ties":
        return rng.integers(-3, 4, shape).astype(np.float64)
    if kind == "sparse":
        return rng.standard_normal(shape) * (rng.random(shape) < 0.05)
    if kind == "sorted":
        return np.sort(rng.standard_normal(shape), axis=0)
    if kind == "one_big_group":
        V = rng.standard_normal(shape)
        V[:, -1] *= 1e4
        V[-1, :] *= 1e4
        return V
    if kind == "scaled_groups":
        return rng.standard_normal(shape) * np.logspace(-6, 6, shape[1])
    if kind == "cauchy":
        return rng.standard_cauchy(shape)
    if kind == "geometric":      # every group holds 2**-k, k = 0..m-1, in random order
        k = rng.permuted(np.tile(np.arange(shape[0]), (shape[1], 1)), axis=1).T
        return np.ldexp(1.0, -k) * rng.choice([-1.0, 1.0], shape)
    raise ValueError(kind)


KINDS = ("gauss", "ties", "sparse", "sorted", "one_big_group", "scaled_groups", "cauchy",
         "geometric")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(100, 100), (37, 5), (5, 37), (1, 9), (9, 1)])
def test_kernel_matches_sort(kind, shape):
    rng = np.random.default_rng(41)
    V = _matrix(kind, shape, rng)
    for order in ("C", "F"):
        W = np.array(V, order=order)
        for axis in (0, 1):
            for nonneg in (False, True):
                for factor in FACTORS:
                    r = _radius(W, factor, axis, nonneg)
                    if r > 0:
                        _agree(W, r, axis, nonneg)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("groups_are_rows", [False, True])
def test_kernel_optimality_conditions(kind, groups_are_rows):
    # The caps certify themselves: T_g(mu_g) = theta for every group with a positive cap,
    # S_g <= theta for the others, caps at most the group max, summing to the radius. Caps,
    # theta and passes as the public return_info reports them.
    rng = np.random.default_rng(42)
    V = _matrix(kind, (60, 80), rng)
    for nonneg in (False, True):
        A = np.maximum(V, 0) if nonneg else np.abs(V)
        G = A.T if groups_are_rows else A            # groups as columns
        axis = 1 if groups_are_rows else 0
        for factor in FACTORS:
            r = factor * G.max(axis=0).sum()
            P, info = project_l1inf(V, r, axis=axis, nonneg=nonneg, return_info=True)
            assert info.method == "ssn" and not info.fallback
            assert 1 <= info.passes <= 12             # counting passes (MAX_PASSES is 60)
            theta, mu = info.theta, info.caps
            T = np.maximum(G - mu, 0).sum(axis=0)
            tol = 1e-12 * max(G.sum(axis=0).max(), 1.0)
            pos = mu > 0
            np.testing.assert_allclose(T[pos], theta, rtol=0, atol=tol)
            assert np.all(G.sum(axis=0)[~pos] <= theta + tol)
            assert np.all(mu <= G.max(axis=0))
            assert abs(mu.sum() - r) <= 1e-13 * r
            # ... and the projection written next to them is sign(v) min(|v|, mu_g).
            cap = mu[:, None] if groups_are_rows else mu[None, :]
            np.testing.assert_array_equal(P, np.clip(V, 0 if nonneg else -cap, cap))


@pytest.mark.parametrize("shape", [(1000, 300), (300, 1000)])
def test_kernel_large_matches_sort(shape):
    rng = np.random.default_rng(43)
    V = rng.standard_normal(shape)
    for axis in (0, 1):
        for factor in (1e-3, 0.1, 0.5):
            _agree(V, _radius(V, factor, axis, False), axis, False)


def test_kernel_float32():
    rng = np.random.default_rng(44)
    V = rng.standard_normal((50, 70)).astype(np.float32)
    for axis in (0, 1):
        for nonneg in (False, True):
            for factor in (1e-3, 0.1, 0.5, 0.99):
                r = _radius(V, factor, axis, nonneg)
                P = _agree(V, r, axis, nonneg, tol=2 * np.finfo(np.float32).eps)
                # caps rounded toward zero in float32: the result stays inside the ball
                assert l1inf_norm(P.astype(np.float64), axis) <= r


@pytest.mark.parametrize("magnitude", [1e-300, 1e-280, 1e280, 1e300])
def test_kernel_rescales_extreme_magnitudes(magnitude):
    rng = np.random.default_rng(45)
    V = rng.standard_normal((30, 20))
    k = int(np.round(np.log2(magnitude)))
    Vk = np.ldexp(V, k)
    for nonneg in (False, True):
        r = _radius(V, 0.1, 0, nonneg)
        status, _, info = _kernel(Vk, np.ldexp(r, k), 0, nonneg)
        assert status == S.RESCALE
        assert info[2] == np.frexp(np.abs(Vk).max() if not nonneg else Vk.max())[1]
        P, info = project_l1inf(Vk, np.ldexp(r, k), nonneg=nonneg, return_info=True)
        assert info.method == "ssn" and info.passes >= 1
        ref, ref_info = project_l1inf(V, r, nonneg=nonneg, method="sort", return_info=True)
        np.testing.assert_allclose(np.ldexp(P, -k), ref, rtol=0, atol=1e-13)
        # caps and theta are reported in V's units
        np.testing.assert_allclose(np.ldexp(info.caps, -k), ref_info.caps, rtol=1e-12)
        assert np.isclose(math.ldexp(info.theta, -k), ref_info.theta, rtol=1e-10)


def test_kernel_mixed_magnitudes():
    V = np.array([[1e300, -1e-300, 0.0], [3e299, 1e300, -1e300], [5e-310, 1.0, 2e299]])
    for axis in (0, 1):
        r = 0.5 * l1inf_norm(V, axis)
        P = project_l1inf(V, r, axis=axis)
        np.testing.assert_allclose(P, project_l1inf(V, r, axis=axis, method="sort"),
                                   rtol=1e-13, atol=0)


@pytest.mark.parametrize("groups_are_rows", [False, True])
@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_kernel_flags_nan_inf(groups_are_rows, nonneg, bad):
    # With nonneg a -inf or NaN entry vanishes in max(v, 0); it must still be reported.
    V = np.ones((4, 5))
    V[2, 3] = bad
    status, _, _ = _kernel(V, 1.0, 1 if groups_are_rows else 0, nonneg)
    assert status == S.NOT_FINITE
    with pytest.raises(ValueError, match="V"):
        project_l1inf(V, 1.0, axis=1 if groups_are_rows else 0, nonneg=nonneg)


def test_kernel_edge_cases():
    V = np.array([[1.0, -2.0], [3.0, 0.5]])
    assert _kernel(V, 5.0, 0, False)[0] == S.INSIDE         # norm 3 + 2 = 5
    P = project_l1inf(V, 5.0)
    np.testing.assert_array_equal(P, V)
    assert P is not V
    np.testing.assert_array_equal(project_l1inf(V, 5.0, nonneg=True), np.maximum(V, 0))
    np.testing.assert_array_equal(project_l1inf(V, 0.0), np.zeros_like(V))
    # Zero groups, an all-equal group, one entry per group (the l1 ball), one group.
    Z = np.array([[0.0, 2.0, 0.0], [0.0, 2.0, 1.0], [0.0, 2.0, 0.0]])
    # theta = 3 (2 - mu1) = 1 - mu2 with mu1 + mu2 = 2.5: theta = 0.375
    np.testing.assert_allclose(project_l1inf(Z, 2.5),
                               [[0, 1.875, 0], [0, 1.875, 0.625], [0, 1.875, 0]], atol=1e-15)
    v = np.array([[3.0, -1.0, 2.0]])
    np.testing.assert_allclose(project_l1inf(v, 1.5, axis=1), [[1.5, -1.0, 1.5]])
    np.testing.assert_allclose(project_l1inf(v, 3.0, axis=0), [[2.0, -0.0, 1.0]], atol=1e-15)
    assert not np.any(project_l1inf(-np.ones((3, 3)), 1.0, nonneg=True))
    # A non-contiguous view is projected like its copy.
    W = np.random.default_rng(46).standard_normal((20, 30))[::2, ::3]
    np.testing.assert_array_equal(project_l1inf(W, 1.0), project_l1inf(W.copy(), 1.0))


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
tied = st.sampled_from([-2.0, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0])


@settings(max_examples=300, deadline=None)
@given(V=st.integers(1, 9).flatmap(lambda m: st.integers(1, 9).flatmap(
           lambda n: arrays(np.float64, (m, n), elements=st.one_of(finite, tied)))),
       axis=st.integers(0, 1), nonneg=st.booleans(), order=st.sampled_from(["C", "F"]),
       factor=st.sampled_from([1e-3, 0.1, 0.5, 0.9, 0.999]) | st.floats(1e-6, 1.0))
def test_kernel_hypothesis_matches_sort(V, axis, nonneg, order, factor):
    V = np.array(V, order=order)
    r = _radius(V, factor, axis, nonneg)
    if r > 0:
        P = _agree(V, r, axis, nonneg)
        assert l1inf_norm(P, axis) <= r * (1 + 1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_large_adversarial(kind):
    # Ties at the caps, mostly zeros, sorted groups, one group far larger than the rest, groups
    # on scales 1e-6..1e6, heavy tails, geometric groups: exact at a larger size too, groups as
    # columns (nonneg) and as rows.
    rng = np.random.default_rng(23)
    V = _matrix(kind, (256, 200), rng)
    for factor in FEW_FACTORS:
        for nonneg in (False, True):
            W = V if nonneg else np.ascontiguousarray(V.T)
            axis = 0 if nonneg else 1
            _agree(W, _radius(W, factor, axis, nonneg), axis, nonneg)


def _give_up(monkeypatch, after_rescale=False):
    """Make the kernel report NO_CONVERGENCE (at once, or on the rescaled copy after a real
    RESCALE)."""
    project = S.project

    def gives_up(*args):
        status = project(*args) if after_rescale else S.NO_CONVERGENCE
        return status if status == S.RESCALE else S.NO_CONVERGENCE

    monkeypatch.setattr(S, "project", gives_up)


@pytest.mark.parametrize("shape, axis", [((40, 30), 0), ((300, 200), 0), ((200, 300), 1)])
@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_fallback_is_the_sort_method(monkeypatch, shape, axis, nonneg, order):
    # NO_CONVERGENCE hands the problem to the sort method with a RuntimeWarning: the result is
    # the sort method's, bit for bit, and the info says so.
    _give_up(monkeypatch)
    rng = np.random.default_rng(47)
    for kind in ("gauss", "ties", "sparse", "scaled_groups"):
        V = np.array(_matrix(kind, shape, rng), order=order)
        for factor in FEW_FACTORS:
            r = _radius(V, factor, axis, nonneg)
            with pytest.warns(RuntimeWarning, match="sort method"):
                P, info = project_l1inf(V, r, axis=axis, nonneg=nonneg, return_info=True)
            ref, ref_info = project_l1inf(V, r, axis=axis, nonneg=nonneg, method="sort",
                                          return_info=True)
            np.testing.assert_array_equal(P, ref)
            assert P.dtype == V.dtype
            assert info.fallback and info.method == "sort"
            np.testing.assert_array_equal(info.caps, ref_info.caps)
            assert info.theta == ref_info.theta


def test_fallback_after_rescaling(monkeypatch):
    # The kernel rescales 2**1000 * V, then gives up on the copy: the sort method answers.
    _give_up(monkeypatch, after_rescale=True)
    V = np.ldexp(np.random.default_rng(48).standard_normal((30, 20)), 1000)
    r = _radius(V, 0.1, 0, False)
    with pytest.warns(RuntimeWarning, match="did not converge"):
        P = project_l1inf(V, r)
    np.testing.assert_array_equal(P, project_l1inf(V, r, method="sort"))


def test_fallback_matches_cvxpy(monkeypatch, cvx_l1inf):
    _give_up(monkeypatch)
    V = np.random.default_rng(49).standard_normal((6, 8))
    for nonneg in (False, True):
        r = _radius(V, 0.3, 0, nonneg)
        with pytest.warns(RuntimeWarning):
            P = project_l1inf(V, r, nonneg=nonneg)
        np.testing.assert_allclose(P, cvx_l1inf(V, r, nonneg=nonneg), atol=1e-7)


def test_fallback_in_the_proxes(monkeypatch):
    from infpush_cvx.prox import prox_infinite_push_loss, prox_linf1
    _give_up(monkeypatch)
    V = np.random.default_rng(50).standard_normal((9, 7))
    for prox in (prox_linf1, prox_infinite_push_loss):
        with pytest.warns(RuntimeWarning):
            P = prox(V, 0.3)
        np.testing.assert_array_equal(P, prox(V, 0.3, method="sort"))


def test_no_warning_when_the_kernel_converges():
    V = np.random.default_rng(51).standard_normal((50, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        project_l1inf(V, 0.1 * l1inf_norm(V))
