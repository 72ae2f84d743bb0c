"""The working set's internal rescaling to unit largest row norm (``working_set._Problem``):
rows already of unit norm to round-off (an RBF kernel's factor: k(x, x) = 1) are taken as they
are, without the copy of the rescaled product, and give the answer of the rescaled rows."""

import numpy as np
import pytest

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines import working_set
from infpush_cvx.solvers.infinite_push import infinite_push


def _unit_rows(seed=0, m=30, n=40, d=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m + n, d)) + np.r_[np.full(m, 1.0), np.zeros(n)][:, None]
    X /= np.linalg.norm(X, axis=1).max()  # largest row norm 1, to round-off
    return np.ascontiguousarray(X[:m]), np.ascontiguousarray(X[m:])


def test_rows_of_unit_norm_are_not_rescaled():
    Xp, Xn = _unit_rows()
    data = BipartiteData(Xp, Xn)
    prob = working_set._Problem(data, 0.01, "infinite_push", "l2")
    assert prob.scale == 1.0 and prob.lam == 0.01
    assert prob.Xp is data.Xp and prob.Xn is data.Xn
    # twice the rows: rescaled by 1/2 into new arrays
    doubled = BipartiteData(2 * Xp, 2 * Xn)
    twice = working_set._Problem(doubled, 0.01, "infinite_push", "l2")
    assert twice.scale == pytest.approx(0.5, rel=1e-12) and twice.Xp is not doubled.Xp
    np.testing.assert_allclose(twice.Xp, Xp, rtol=1e-15)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_unit_rows_give_the_answer_of_rows_scaled_by_three(penalty):
    """w . x is unchanged when x -> 3x and w -> w / 3 (lambda -> 9 lambda for l2, 3 lambda for
    l1, paper scaling): the unit rows, taken as they are, and the rows times 3, rescaled
    internally, give the same scores and objective."""
    Xp, Xn = _unit_rows(seed=1)
    lam = 0.01
    factor = 9.0 if penalty == "l2" else 3.0
    unit = infinite_push(Xp, Xn, lam, penalty=penalty, tol=1e-9)
    scaled = infinite_push(3 * Xp, 3 * Xn, factor * lam, penalty=penalty, tol=1e-9)
    assert unit.status == scaled.status == "optimal"
    assert unit.objective == pytest.approx(scaled.objective, rel=1e-7)
    np.testing.assert_allclose(Xp @ unit.w, 3 * Xp @ scaled.w, atol=1e-4)
