"""The kernel route's front (solvers.engines.kernel.kernel_solve): one deadline, handed down
from the call, for the Gram matrix and the solves."""

import pytest

from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers import InfinitePushProblem, RankSVMProblem, infinite_push
from infpush_cvx.solvers.infinite_push.methods import WorkingSet
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import ConvergenceWarning

DATA = planted_bipartite(12, 15, 3, seed=4)


@pytest.mark.parametrize("problem_class", [InfinitePushProblem, RankSVMProblem])
def test_the_loss_certified_is_the_problems(problem_class):
    """The exact certificate is the problem's (its loss), whatever method solves it."""
    problem = problem_class(DATA, 0.1, kernel="rbf", gamma=0.5)
    out = WorkingSet(tol=1e-7).solve(problem)
    assert out.status == "optimal" and out.gap <= 1e-7
    assert out.objective == pytest.approx(problem.objective(out.w), rel=1e-9)
    primal, lower, gap = problem.certificate(out.w, out.dual)
    assert gap == pytest.approx(out.gap, abs=1e-9) and lower <= primal


@pytest.mark.parametrize("nystroem", [None, "adaptive"])
def test_one_deadline_covers_the_gram_matrix_and_the_solves(nystroem):
    """The time limit is checked before any work, and the linear solves get the time left after
    the Gram matrix: a limit the set-up uses up ends the solve with status "time_limit"."""
    with pytest.raises(ValueError, match="time_limit"):
        infinite_push(DATA, 0.1, kernel="rbf", gamma=0.5, nystroem=nystroem, time_limit=-1.0)
    with pytest.warns(ConvergenceWarning):
        out = infinite_push(DATA, 0.1, kernel="rbf", gamma=0.5, nystroem=nystroem,
                            time_limit=1e-9)
    assert out.status == "time_limit"
    assert out.time >= out.info["factor_time"] > 0
    problem = InfinitePushProblem(DATA, 0.1, kernel="rbf", gamma=0.5)
    with pytest.warns(ConvergenceWarning):
        out = WorkingSet(nystroem=nystroem).solve(problem, deadline=Deadline(1e-9))
    assert out.status == "time_limit"
