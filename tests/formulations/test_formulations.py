"""The CVXPY problem factory: forms, scalings and duals agree as docs/mathematics.md says
(sections 1.3, 1.5, 1.6, 3.2 and 9)."""

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx.formulations import scaling
from infpush_cvx.formulations import (infinite_push_dual_problem, infinite_push_problem,
                                      primal_value_from_dual, rank2plan_lp_problem,
                                      ranksvm_dual_problem, ranksvm_problem)
from infpush_cvx.data.generators import (degenerate_bipartite, infinite_push_0, planted_bipartite,
                                    rank2plan_pairs)
from infpush_cvx.formulations.objectives import bipartite_objective, rank2plan_objective

OPTS = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
DATA = {"dense": planted_bipartite(12, 15, 4, seed=1),
        "sparse": planted_bipartite(12, 15, 10, seed=2, density=0.3)}


def solve(problem):
    problem.solve(**OPTS)
    assert problem.status == cp.OPTIMAL
    return problem.value


def test_infinite_push_0_is_100():
    data, lam = infinite_push_0()
    problem = infinite_push_problem(data, lam, scaling="seed", form="direct")
    assert solve(problem) == pytest.approx(100.0, rel=1e-8)
    np.testing.assert_allclose(problem.var_dict["w"].value, 0.0, atol=1e-6)


@pytest.mark.parametrize("kind", DATA)
@pytest.mark.parametrize("loss, penalty", [("infinite_push", "l2"), ("infinite_push", "l1"),
                                           ("ranksvm", "l2")])
def test_forms_and_scalings_agree(kind, loss, penalty):
    data, lam_paper = DATA[kind], 0.1
    if loss == "infinite_push":
        build = lambda **kw: infinite_push_problem(data, penalty=penalty, **kw)  # noqa: E731
    else:
        build = lambda **kw: ranksvm_problem(data, **kw)  # noqa: E731
    lam_seed = scaling.from_paper_lambda(lam_paper, "seed", loss=loss, penalty=penalty,
                                         m=data.m, n=data.n)
    values = {}
    for sc, lam in (("paper", lam_paper), ("seed", lam_seed)):
        for form in ("compact", "direct"):
            problem = build(lam=lam, scaling=sc, form=form)
            values[sc, form] = solve(problem)
            # The NumPy objective at the solution reproduces CVXPY's value.
            w = problem.var_dict["w"].value
            assert bipartite_objective(data, w, lam, loss=loss, penalty=penalty, scaling=sc) \
                == pytest.approx(values[sc, form], rel=1e-7)
    N = scaling.loss_normaliser(loss, data.m, data.n)
    assert values["paper", "direct"] == pytest.approx(values["paper", "compact"], rel=1e-7)
    assert values["seed", "direct"] == pytest.approx(values["seed", "compact"], rel=1e-7)
    assert values["seed", "compact"] == pytest.approx(N * values["paper", "compact"], rel=1e-7)


@pytest.mark.parametrize("kind", DATA)
@pytest.mark.parametrize("loss", ["infinite_push", "ranksvm"])
def test_primal_and_dual_values_agree(kind, loss):
    data, lam = DATA[kind], 0.2
    ip = loss == "infinite_push"
    primal = (infinite_push_problem if ip else ranksvm_problem)(data, lam)
    dual = (infinite_push_dual_problem if ip else ranksvm_dual_problem)(data, lam)
    p, q = solve(primal), solve(dual)
    assert q < 0
    assert primal_value_from_dual(q, lam, loss=loss, scaling="paper", m=data.m, n=data.n) \
        == pytest.approx(p, rel=1e-6)
    # w* = w(alpha*) = Xp^T alpha 1 - Xn^T alpha^T 1
    alpha = dual.var_dict["alpha"].value
    w_dual = data.Xp.T @ alpha.sum(axis=1) - data.Xn.T @ alpha.sum(axis=0)
    np.testing.assert_allclose(w_dual, primal.var_dict["w"].value, atol=1e-5)
    # Seed scaling: same relation with the seed-scaling lambda, value N times larger.
    lam_s = scaling.from_paper_lambda(lam, "seed", loss=loss, penalty="l2", m=data.m, n=data.n)
    dual_s = infinite_push_dual_problem(data, lam_s, scaling="seed") if loss == "infinite_push" \
        else ranksvm_dual_problem(data, lam_s, scaling="seed")
    assert primal_value_from_dual(solve(dual_s), lam_s, loss=loss, scaling="seed", m=data.m,
                                  n=data.n) == pytest.approx(
        scaling.loss_normaliser(loss, data.m, data.n) * p, rel=1e-6)


def test_degenerate_value_is_one_for_every_lambda():
    data = degenerate_bipartite(10, 20, 4, seed=0)
    for lam in (0.01, 1.0):
        for penalty in ("l2", "l1"):
            assert solve(infinite_push_problem(data, lam, penalty=penalty)) == \
                pytest.approx(1.0, rel=1e-7)


def test_lambda_is_a_parameter_and_resolves_without_rebuilding():
    data = DATA["dense"]
    problem = infinite_push_problem(data, 0.1)
    assert problem.is_dcp(dpp=True)
    assert set(problem.var_dict) >= {"w"} and set(problem.param_dict) == {"lam"}
    solve(problem)
    problem.param_dict["lam"].value = 0.5
    assert solve(problem) == pytest.approx(solve(infinite_push_problem(data, 0.5)), rel=1e-7)
    dual = infinite_push_dual_problem(data, 0.1)
    assert dual.is_dcp(dpp=True) and set(dual.param_dict) == {"C"}


@pytest.mark.parametrize("sparse", [False, True])
def test_rank2plan_forms_agree_and_match_numpy_objective(sparse):
    data = rank2plan_pairs(3, 15, 10, 30, seed=5, density=0.4, sparse=sparse)
    values = []
    for form in ("compact", "direct"):
        problem = rank2plan_lp_problem(data, 0.05, form=form)
        values.append(solve(problem))
        assert rank2plan_objective(data, problem.var_dict["w"].value, 0.05) \
            == pytest.approx(values[-1], rel=1e-7)
    assert values[0] == pytest.approx(values[1], rel=1e-7)


def test_factory_rejects_bad_arguments():
    data = DATA["dense"]
    with pytest.raises(ValueError, match="unknown form 'dense'"):
        infinite_push_problem(data, 0.1, form="dense")
    with pytest.raises(ValueError, match="unknown scaling"):
        infinite_push_problem(data, 0.1, scaling="mine")
    with pytest.raises(ValueError, match="unknown penalty"):
        infinite_push_problem(data, 0.1, penalty="l3")
    with pytest.raises(ValueError, match="lam must be nonnegative"):
        ranksvm_problem(data, -1.0)
    with pytest.raises(ValueError, match="lam must be positive"):
        infinite_push_dual_problem(data, 0.0)
    with pytest.raises(ValueError, match="lam must be finite"):
        infinite_push_problem(data, np.nan)
    with pytest.raises(TypeError, match="data must be a BipartiteData"):
        infinite_push_problem(np.ones((3, 3)), 0.1)
    with pytest.raises(TypeError, match="data must be a PairData"):
        rank2plan_lp_problem(data, 0.1)


def test_only_the_problem_names_are_the_factory():
    from infpush_cvx import formulations
    for old in ("infinite_push", "ranksvm", "infinite_push_dual", "ranksvm_dual", "rank2plan_lp",
                "pnorm_push", "toppush", "svmmap"):
        assert not hasattr(formulations, old), old


def test_the_factory_does_not_import_cvxpy_for_the_solvers():
    import subprocess
    import sys
    code = ("import sys, infpush_cvx.solvers, infpush_cvx.formulations.objectives\n"
            "assert 'cvxpy' not in sys.modules\n"
            "from infpush_cvx.formulations import infinite_push_problem\n"
            "assert 'cvxpy' in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
