"""Any installed CVXPY solver can be compared: the problem classes each takes come from CVXPY's
own description of its interfaces (with HiGHS's QP path as the one explicit exception), every
solver's time limit is set under its own option name or enforced from outside, and HiGHS keeps
its banner to itself."""

import json
import subprocess
import sys

import cvxpy as cp
import pytest
from cvxpy.constraints import SOC, ExpCone, NonNeg, Zero

from infpush_cvx import catalog, cli
from infpush_cvx.benchmarking import make_tasks
from infpush_cvx.benchmarking.tasks import Task, primal_residual, solve_task
from infpush_cvx.catalog import cvxpy_solvers
from infpush_cvx.solvers.engines import cvxpy_backend

QP = "ip_l2_planted_s_paper_compact"
LP = "rank2plan_pairs_dense_compact"
INSTALLED = set(cp.installed_solvers())


def needs(*solvers):
    missing = [s for s in solvers if s not in INSTALLED]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {missing}")


# -- the capability table ---------------------------------------------------------------------

@pytest.mark.parametrize("solver, classes", [
    ("CLARABEL", ("LP", "QP", "SOCP", "EXP")), ("ECOS", ("LP", "QP", "SOCP", "EXP")),
    ("SCS", ("LP", "QP", "SOCP", "EXP")), ("OSQP", ("LP", "QP")), ("SCIPY", ("LP",)),
    ("HIGHS", ("LP", "QP")), ("MOSEK", ("LP", "QP", "SOCP")), ("GLPK", ("LP",)),
    ("PIQP", ("LP", "QP")), ("IPOPT", ()),  # an NLP solver: none of the classes
])
def test_capabilities_come_from_cvxpy_interfaces(solver, classes):
    assert cvxpy_backend.capabilities(solver) == classes


def test_a_conic_interface_is_read_from_its_supported_constraints(monkeypatch):
    from cvxpy.reductions.solvers import defines

    class Fake:
        SUPPORTED_CONSTRAINTS = [Zero, NonNeg]

        @staticmethod
        def supports_quad_obj():
            return False

    class FakeQuad(Fake):
        @staticmethod
        def supports_quad_obj():
            return True

    class FakeCones(Fake):
        SUPPORTED_CONSTRAINTS = [Zero, NonNeg, SOC, ExpCone]

    monkeypatch.setitem(defines.SOLVER_MAP_CONIC, "FAKE_LP", Fake())
    monkeypatch.setitem(defines.SOLVER_MAP_CONIC, "FAKE_QUAD", FakeQuad())
    monkeypatch.setitem(defines.SOLVER_MAP_CONIC, "FAKE_SOC", FakeCones())
    assert cvxpy_backend.capabilities("FAKE_LP") == ("LP",)
    assert cvxpy_backend.capabilities("FAKE_QUAD") == ("LP", "QP")
    assert cvxpy_backend.capabilities("FAKE_SOC") == ("LP", "QP", "SOCP", "EXP")


def test_highs_qp_is_the_explicit_exception():
    assert "QP" in cvxpy_backend.capabilities("HIGHS")
    assert "QP" in cvxpy_backend.EXCLUDED["HIGHS"]
    assert cvxpy_backend.run_classes("HIGHS") == ("LP",)


@needs("HIGHS")
def test_refusing_highs_on_a_qp_gives_the_reason():
    with pytest.raises(ValueError, match="HIGHS.*QP.*hangs"):
        cvxpy_solvers.check_handles("HIGHS", "QP", QP)


def test_available_lists_every_installed_solver_that_takes_a_class():
    available = cvxpy_solvers.available()
    assert available[:len(cvxpy_solvers.comparison_set())] == cvxpy_solvers.comparison_set()
    assert set(available) == {s for s in INSTALLED if cvxpy_backend.run_classes(s)}
    assert cvxpy_solvers.resolve(["all"]) == available
    assert cvxpy_solvers.resolve(None) == cvxpy_solvers.comparison_set()
    assert cvxpy_solvers.resolve(["clarabel", "CLARABEL"]) == ["CLARABEL"]


@pytest.mark.parametrize("name, message", [
    ("NOPE", "unknown solver 'NOPE'"),
    ("IPOPT", "takes none of the problem classes"),
])
def test_unknown_or_unusable_solvers_are_named(name, message):
    with pytest.raises(ValueError, match=message):
        cvxpy_solvers.spec(name)


def test_a_known_solver_that_is_not_installed_is_named():
    missing = next(s for s in ("MOSEK", "GUROBI", "CPLEX", "XPRESS") if s not in INSTALLED)
    with pytest.raises(ValueError, match=f"solver '{missing}' is not installed; installed: "):
        cvxpy_solvers.spec(missing)


# -- time limits --------------------------------------------------------------------------------

@pytest.mark.parametrize("solver, expected", [
    ("CLARABEL", {"time_limit": 5.0}), ("SCS", {"time_limit_secs": 5.0}),
    ("HIGHS", {"time_limit": 5.0}), ("OSQP", {"time_limit": 5.0}),
    ("GUROBI", {"TimeLimit": 5.0}),
    ("MOSEK", {"mosek_params": {"MSK_DPAR_OPTIMIZER_MAX_TIME": 5.0}}),
    ("SCIP", {"scip_params": {"limits/time": 5.0}}),
])
def test_time_limit_goes_under_the_solvers_own_option(solver, expected):
    spec = cvxpy_solvers._spec(solver)  # built without the solver being installed
    options = spec.solve_options(5)
    assert spec.has_time_limit
    assert {k: options[k] for k in expected} == expected
    assert options["verbose"] is False


@needs("SCIPY")
def test_nested_time_limit_keeps_the_other_options_and_fresh_copies():
    spec = cvxpy_solvers.spec("SCIPY")
    options = spec.solve_options(2)
    assert options["scipy_options"] == {"method": "highs", "time_limit": 2.0}
    options["scipy_options"].pop("method")  # as CVXPY's SCIPY interface does
    assert spec.solve_options(2)["scipy_options"]["method"] == "highs"
    assert "time_limit" not in spec.solve_options()["scipy_options"]


def test_solvers_without_a_time_limit_option_are_known():
    assert not cvxpy_solvers.spec("ECOS").has_time_limit
    assert cvxpy_solvers.spec("ECOS").solve_options(3) == cvxpy_solvers.spec("ECOS").solve_options()


@pytest.fixture
def worker_process(monkeypatch):
    """Record the tasks ``solve`` sends to a worker process (none is spawned)."""
    from infpush_cvx.benchmarking import executors, tasks
    sent = []

    class Recording:
        def __init__(self, n_workers=None, env=None, warmup=True):
            self.warmup_info, self.started = [], {}

        def run(self, to_run):
            sent.extend(to_run)
            return [(0, {**tasks.failed_row(to_run[0], "timeout", "killed"), "time": 0.0})]

    monkeypatch.setattr(executors, "ProcessExecutor", Recording)
    return sent


@needs("OSQP")
@pytest.mark.parametrize("own_limit", [True, False])
def test_solve_runs_every_solver_in_a_worker_killed_at_the_limit(own_limit, worker_process,
                                                                 monkeypatch, capsys):
    # a solver's own limit leaves CVXPY's compilation and the solver's set-up out: the worker
    # is killed at the limit whether the solver has one (OSQP) or not
    if not own_limit:
        monkeypatch.delitem(cvxpy_backend.TIME_LIMIT_OPTIONS, "OSQP")
    # stopped at the limit: reported in its row, not a failure of the run (issue 27)
    assert cli.main(["solve", QP, "--solver", "OSQP", "--time-limit", "5"]) == 0
    assert [(t.solver, t.timeout) for t in worker_process] == [("OSQP", 5.0)]
    assert "timeout" in capsys.readouterr().out


# -- any installed solver through every entry point -------------------------------------------

@needs("OSQP")
def test_solve_takes_any_installed_solver(capsys):
    assert cli.main(["solve", QP, "--solver", "osqp"]) == 0
    out = capsys.readouterr().out
    assert "OSQP" in out and "optimal" in out


@needs("OSQP", "SCIPY")
def test_make_tasks_with_all_solvers_follows_the_table():
    tasks = make_tasks([QP, LP], cvxpy=["all"], native=[])
    got = {(t.problem, t.solver) for t in tasks}
    assert (QP, "OSQP") in got and (LP, "OSQP") in got
    assert (LP, "SCIPY") in got and (QP, "SCIPY") not in got
    assert (LP, "HIGHS") in got and (QP, "HIGHS") not in got


@needs("SCIPY")
def test_check_compares_an_extra_solver(tmp_path, capsys):
    out = tmp_path / "c.csv"
    assert cli.main(["check", "--problems", LP, "--cvxpy", "SCIPY", "--native",
                     "--no-progress", "--out", str(out)]) == 0
    assert "SCIPY" in capsys.readouterr().out


# -- residuals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("solver, reports", [("CLARABEL", False), ("HIGHS", True),
                                             ("ECOS", True), ("SCS", True)])
def test_rows_carry_primal_residuals(solver, reports):
    row = solve_task(Task(LP, "cvxpy", solver))
    assert row["agrees"]
    assert 0 <= row["primal_residual"] < 1e-6
    assert (row["solver_primal_residual"] is not None) == reports
    assert json.loads(row["solver_options"])["verbose"] is False


def test_primal_residual_without_a_solution_is_none():
    problem = catalog.get(LP).build()
    assert primal_residual(problem) is None


# -- quiet by default --------------------------------------------------------------------------

@needs("HIGHS")
def test_no_highs_banner_from_a_solve():
    code = ("from infpush_cvx.benchmarking.tasks import Task, solve_task; "
            f"print(solve_task(Task({LP!r}, 'cvxpy', 'HIGHS'))['status'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "optimal"
    assert "HiGHS" not in out.stdout + out.stderr
