"""The P-Norm Push on the solver contract: its MODEL, its problem and its method classes."""

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.pnorm_push import MODEL, Boosting, Newton, PNormPushProblem, pnorm_push
from infpush_cvx.solvers.result import ConvergenceWarning


def _solve(method, problem, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # boosting: 100 rounds, not certified
        return method(tol=1e-8, **options).solve(problem)


@pytest.mark.parametrize("p", [1, 16])
def test_every_method_solves_the_catalog_problem_and_is_certified(p):
    data = planted_bipartite(12, 15, 3, seed=0)
    assert MODEL.formulations == ("pnorm_push",) and MODEL.certified is Newton
    problem = PNormPushProblem.from_catalog("pnorm_push", {"p": p, "form": "compact"}, 0.1, data)
    reference = pnorm_push(data, 0.1, p=p)
    for method in MODEL.methods:
        res = _solve(method, problem)
        # every method's gap is the certificate at its w, recomputed here from w alone
        assert res.gap == pytest.approx(problem.certificate(res.w)["gap"], rel=1e-6, abs=1e-14)
        assert res.objective == pytest.approx(problem.objective(res.w), rel=1e-12)
        if method is not Boosting:  # Rudin's rounds are unregularised: no certified optimum
            assert res.status == "optimal" and res.gap <= 1e-8, method.name
            assert res.objective == pytest.approx(reference.objective, rel=1e-7)


@pytest.mark.parametrize("method", MODEL.methods, ids=lambda m: m.name)
def test_history_frame_works_for_every_method(method):
    data = planted_bipartite(8, 9, 3, seed=1)
    res = _solve(method, PNormPushProblem(data, 0.1, p=4))
    frame = res.history_frame()
    assert {"iteration", "objective", "gap", "time"} <= set(frame.columns)
    assert len(frame) == len(res.history["objective"])


def test_an_option_a_method_has_not_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="eta0"):
        Newton(eta0=1.0)
    with pytest.raises(TypeError, match="solver"):
        pnorm_push(planted_bipartite(5, 6, 3, seed=0), 0.1, method="boosting", solver="SCS")
    with pytest.raises(TypeError, match="solver"):
        MODEL.method("cvxpy")(solver=3)


def test_a_problem_is_validated_once_naming_the_argument():
    data = planted_bipartite(5, 6, 3, seed=0)
    with pytest.raises(ValueError, match="p must be at least 1"):
        PNormPushProblem(data, 0.1, p=0.5)
    with pytest.raises(ValueError, match="lam"):
        PNormPushProblem(data, -1.0)
    with pytest.raises(ValueError, match="scaling"):
        PNormPushProblem(data, 0.1, scaling="seed")
    assert "kernel" in Newton.accepts(kernel=True)
    assert MODEL.method_names(weighted=True) == ("newton", "boosting", "cvxpy")


def test_a_deadline_passed_down_stops_the_solve():
    """One Deadline flows from solve() down: an injected clock past its limit stops Newton at
    once (no time measured here)."""
    data = planted_bipartite(8, 9, 3, seed=2)
    expired = Deadline(1.0, start=0.0, clock=lambda: 5.0)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        res = Newton().solve(PNormPushProblem(data, 0.1), deadline=expired)
    assert res.status == "time_limit" and res.iterations == 0 and res.time == 5.0


def test_importing_the_solver_does_not_import_cvxpy():
    code = ("import sys, infpush_cvx.solvers.pnorm_push, infpush_cvx.solvers.svmmap, "
            "infpush_cvx.solvers.toppush; assert 'cvxpy' not in sys.modules")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)

