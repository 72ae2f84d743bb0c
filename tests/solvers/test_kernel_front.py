"""The kernel route's front (solvers._kernel.kernel_solve): the linear solver's loss by name, and
one deadline for the Gram matrix and the solves."""

import numpy as np
import pytest

from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.data.kernels import kernel_matrix
from infpush_cvx.solvers import infinite_push
from infpush_cvx.solvers.engines.kernel import kernel_solve
from infpush_cvx.solvers.result import ConvergenceWarning

DATA = planted_bipartite(12, 15, 3, seed=4)
ARGS = dict(kernel="rbf", gamma=0.5, degree=3, coef0=0.0, seed=0, wp=None, wn=None,
            warm_start=None, time_limit=None, penalty="l2", tol=1e-7)


def test_the_loss_is_named_by_the_caller():
    """No loss is inferred from the options (a penalty= used to mean the Infinite Push)."""
    with pytest.raises(TypeError, match="loss"):
        kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, 0.1, nystroem=None, **ARGS)
    named = kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, 0.1, nystroem=None,
                         loss="infinite_push", **ARGS)
    assert named.status == "optimal" and named.gap <= 1e-7


def test_the_named_loss_is_the_certified_one():
    """The exact certificate follows ``loss``, not the options: naming RankSVM's reports the
    RankSVM objective of the coefficients, ``(lam/2) beta^T K beta + mean_ij h_ij``. The
    Infinite Push's dual point is no RankSVM dual point: its dual value lies above that
    objective, and the certificate says it failed ("numerical_error", never "optimal")."""
    lam = 0.1
    with pytest.warns(ConvergenceWarning, match="numerical_error"):
        out = kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, lam, nystroem=None,
                           loss="ranksvm", **ARGS)
    assert out.status == "numerical_error" and out.gap < 0
    K = kernel_matrix(np.vstack([DATA.Xp, DATA.Xn]), None, "rbf", 0.5)
    f = K @ out.w
    hinge = np.maximum(0.0, 1.0 - (f[:DATA.m, None] - f[None, DATA.m:]))
    assert out.objective == pytest.approx(0.5 * lam * out.w @ f + hinge.mean(), rel=1e-9)
    assert out.objective < 0.5 * lam * out.w @ f + hinge.sum(axis=0).max() / DATA.m


def test_an_unknown_loss_is_refused():
    with pytest.raises(ValueError, match="loss"):
        kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, 0.1, nystroem=None,
                     loss="hinge", **ARGS)


@pytest.mark.parametrize("nystroem", [None, "adaptive"])
def test_one_deadline_covers_the_gram_matrix_and_the_solves(nystroem):
    """The time limit is checked before any work, and the linear solves get the time left after
    the Gram matrix: a limit the set-up uses up ends the solve with status "time_limit"."""
    args = dict(ARGS, time_limit=-1.0)
    with pytest.raises(ValueError, match="time_limit"):
        kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, 0.1, nystroem=nystroem,
                     loss="infinite_push", **args)
    args = dict(ARGS, time_limit=1e-9)
    with pytest.warns(ConvergenceWarning):
        out = kernel_solve(infinite_push.__wrapped__, DATA.Xp, DATA.Xn, 0.1, nystroem=nystroem,
                           loss="infinite_push", **args)
    assert out.status == "time_limit"
    assert out.time >= out.info["factor_time"] > 0


@pytest.mark.parametrize("nystroem", [None, "adaptive"])
@pytest.mark.parametrize("solver", ["infinite_push", "ranksvm"])
def test_integer_weights_are_repeated_rows_for_gamma_scale(solver, nystroem):
    """gamma="scale" is computed from the weighted rows (a weight is a repeated row), so the
    weighted kernel solve is the solve of the repeated rows; it used the unweighted rows."""
    from infpush_cvx.solvers import ranksvm
    solve = {"infinite_push": infinite_push, "ranksvm": ranksvm}[solver]
    data = planted_bipartite(m=8, n=10, d=3, seed=4)
    wp = np.array([1, 3, 1, 2, 1, 1, 4, 1])
    wn = np.array([2, 1, 1, 1, 3, 1, 1, 1, 1, 2])
    Xp, Xn = data.Xp * [1.0, 5.0, 0.2], data.Xn * [1.0, 5.0, 0.2]  # unequal scales: var matters
    weighted = solve(Xp, Xn, 0.1, wp=wp, wn=wn, kernel="rbf", tol=1e-7, nystroem=nystroem)
    repeated = solve(np.repeat(Xp, wp, axis=0), np.repeat(Xn, wn, axis=0), 0.1, kernel="rbf",
                     tol=1e-7, nystroem=nystroem)
    assert weighted.status == repeated.status == "optimal"
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-5)
