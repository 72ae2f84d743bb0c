"""Soft thresholding, box, simplex and l1-ball projections: exact values and Moreau identities."""

from __future__ import annotations

import numpy as np
import pytest

from infpush_cvx.prox import project_box, project_l1ball, project_simplex, soft_threshold


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_soft_threshold_values_and_moreau(dtype):
    v = np.array([-3.0, -0.5, 0.0, 0.5, 2.0], dtype=dtype)
    out = soft_threshold(v, 1.0)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.array([-2.0, 0.0, 0.0, 0.0, 1.0], dtype=dtype))
    # Moreau: prox of tau||.||_1 plus projection onto the l_inf ball of radius tau is the identity.
    rng = np.random.default_rng(0)
    w = rng.standard_normal(50).astype(dtype)
    np.testing.assert_allclose(soft_threshold(w, 0.3) + project_box(w, -0.3, 0.3), w, rtol=0,
                               atol=4 * np.finfo(dtype).eps)


def test_box_rejects_crossed_bounds():
    with pytest.raises(ValueError, match="lower"):
        project_box(np.ones(2), 1.0, 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simplex_and_l1ball(dtype):
    v = np.array([0.9, 0.4, -1.0], dtype=dtype)
    x = project_simplex(v, 1.0)
    assert x.dtype == dtype
    np.testing.assert_allclose(x, [0.75, 0.25, 0.0], atol=1e-6)
    y = project_l1ball(np.array([3.0, -1.0, 0.5], dtype=dtype), 2.0)
    np.testing.assert_allclose(y, [2.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_array_equal(project_l1ball(v, 10.0), v)
