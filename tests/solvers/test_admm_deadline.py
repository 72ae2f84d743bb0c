"""ADMM within its time limit, with the iterates of the plain loop (issue 29: "the ADMM numba
loop cannot check its deadline").

The l1 w-step's compiled coordinate descent now runs in chunks of sweeps, the m x n passes in
blocks of rows, and the a-step (one l1,inf projection) is begun only when its last duration
fits: an iteration that no longer fits is given up with the iterates unchanged. Without a limit
the iterates are bit for bit those of the loop before (``plain_admm`` below, that loop without
its deadline). The arithmetic of the deadline is tested on an injected clock; one wall-clock
test asserts only a bound a loaded machine cannot break.
"""

import time
import warnings

import numpy as np
import pytest

from infpush_cvx.data.generators import binary_bipartite, planted_bipartite
from infpush_cvx.formulations.objectives import bipartite_objective
from infpush_cvx.prox import prox_infinite_push_loss
from infpush_cvx.solvers.engines import duality
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.infinite_push import admm as admm_module
from infpush_cvx.solvers.infinite_push import infinite_push
from infpush_cvx.solvers.result import ConvergenceWarning


class Clock:
    """A clock that moves ``tick`` seconds at every reading."""

    def __init__(self, tick=0.0):
        self.now, self.tick = 0.0, tick

    def __call__(self):
        self.now += self.tick
        return self.now


def plain_admm(data, lam, penalty, iterations, check_every=10):
    """The ADMM loop as it was before its deadline was looked at inside iterations (one call of
    the coordinate descent, fresh arrays every iteration): its best point, dual and history."""
    Xp, Xn, m, n, d = data.Xp, data.Xn, data.m, data.n, data.d
    rho, G = 1.0, duality.pair_gram(Xp, Xn)
    w, a, U = np.zeros(d), np.ones((m, n)), np.zeros((m, n))
    objective, gaps = [], []
    best_p, best_w, best_d, best_alpha, chol = np.inf, w.copy(), -np.inf, None, None
    for it in range(1, iterations + 1):
        R = 1.0 - a - U
        rhs = rho * duality.w_of_alpha(Xp, Xn, R)
        if penalty == "l2":
            if chol is None:
                chol = np.linalg.cholesky(lam * np.eye(d) + rho * G)
            w = np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))
        else:
            g = admm_module._gram_product(rho * G, w)
            w = w.copy()
            admm_module._lasso_sweeps(rho * G, rhs, lam, w, g, 1000, max(1e-12, 1e-2 / it ** 2))
        s, t = np.asarray(Xp @ w).ravel(), np.asarray(Xn @ w).ravel()
        Zw = s[:, None] - t[None, :]
        a_old = a
        a = prox_infinite_push_loss(1.0 - Zw - U, 1.0 / rho)
        resid = a + Zw - 1.0
        U += resid
        if it % check_every == 0 or it == iterations:
            alpha = duality.make_feasible(data, -rho * U / lam, lam, loss="infinite_push",
                                          penalty=penalty)
            p = bipartite_objective(data, w, lam, loss="infinite_push", penalty=penalty)
            dval = duality.dual_value(data, alpha, lam, penalty=penalty)
            if p < best_p:
                best_p, best_w = p, w.copy()
            if best_alpha is None or dval > best_d:
                best_d, best_alpha = dval, alpha
            objective.append(p)
            gaps.append(duality.relative_gap(best_p, best_d))
        if it % 100 == 0:
            r_norm = np.linalg.norm(resid)
            s_norm = rho * np.linalg.norm(duality.w_of_alpha(Xp, Xn, a - a_old))
            if r_norm > 10 * s_norm:
                rho, U, chol = 2 * rho, U / 2, None
            elif s_norm > 10 * r_norm:
                rho, U, chol = rho / 2, U * 2, None
    return best_w, best_alpha, objective, gaps, rho


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("make", [
    lambda: planted_bipartite(30, 40, 8, seed=1),
    lambda: binary_bipartite(30, 60, 20, seed=2, row_nnz=5.0, informative=4, exclusive=2)])
def test_without_a_limit_the_iterates_are_those_of_the_plain_loop_bit_for_bit(penalty, make):
    data, lam, iterations = make(), 1e-3, 230  # two changes of rho (iterations 100 and 200)
    out = admm_module.admm(data, lam, penalty=penalty, tol=0.0, max_iter=iterations,
                           deadline=Deadline(None))
    w, alpha, objective, gaps, rho = plain_admm(data, lam, penalty, iterations)
    assert np.array_equal(out["w"], w) and np.array_equal(out["dual"], alpha)
    assert out["history"]["objective"] == objective and out["history"]["gap"] == gaps
    assert out["rho"] == rho and out["gap"] == gaps[-1]


def lasso_problem(d=25, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(2 * d, d))
    return A.T @ A, rng.normal(size=d) * 10, 0.1


def test_the_coordinate_descent_in_chunks_gives_the_bits_of_one_call(monkeypatch):
    G, b, t = lasso_problem()
    whole = np.zeros(G.shape[0])
    made, _ = admm_module._lasso_sweeps(G, b, t, whole, admm_module._gram_product(G, whole),
                                        200, -1.0)
    monkeypatch.setattr(admm_module, "_CD_CHUNK_SECONDS", 0.0)  # one sweep a chunk
    chunked, finished = admm_module._lasso_cd(G, b, t, np.zeros(G.shape[0]), 200, -1.0)
    assert made == 200 and finished and np.array_equal(chunked, whole)


def test_the_coordinate_descent_stops_between_chunks_when_only_the_reserve_is_left(
        monkeypatch):
    G, b, t = lasso_problem()
    sweeps = []
    real = admm_module._lasso_sweeps

    def counted(*args):
        made, converged = real(*args)
        sweeps.append(made)
        clock.now += 0.001 * made  # a sweep "takes" 1 ms
        return made, converged

    monkeypatch.setattr(admm_module, "_lasso_sweeps", counted)
    clock = Clock()
    deadline = Deadline(1.0, start=0.0, clock=clock)
    w, finished = admm_module._lasso_cd(G, b, t, np.zeros(G.shape[0]), 10 ** 6, -1.0,
                                        deadline=deadline, reserve=0.6)
    # chunks of 50 sweeps (0.05 s) after the first, until one would leave less than 0.6 s
    assert not finished and sweeps[:3] == [1, 50, 50]
    assert 0.35 <= clock.now <= 0.4
    again = np.zeros(G.shape[0])
    real(G, b, t, again, admm_module._gram_product(G, again), sum(sweeps), -1.0)
    assert np.array_equal(w, again)


def test_rows_are_filled_in_blocks_until_only_the_reserve_is_left(monkeypatch):
    monkeypatch.setattr(admm_module, "_BLOCK_ENTRIES", 10)  # blocks of 2 rows of 5
    clock = Clock(tick=0.1)
    budget = admm_module._Budget(Deadline(1.0, start=0.0, clock=clock), certificate=0.55)
    out = np.zeros((20, 5))

    def fill(rows):
        out[rows] = 1.0

    with pytest.raises(admm_module._Abandoned):
        admm_module._fill_rows(out, fill, budget, checked=False)
    assert 0 < out.sum() < out.size  # given up part way, at 0.1 s a look at the clock
    assert clock.now == pytest.approx(0.5)


def test_the_budget_keeps_a_certificate_only_when_no_check_has_run():
    clock = Clock()
    budget = admm_module._Budget(Deadline(1.0, start=0.0, clock=clock), certificate=0.4)
    assert budget.reserve(False) == 0.4 and budget.reserve(True) == 0.0
    budget.require(0.5, checked=False)
    with pytest.raises(admm_module._Abandoned):
        budget.require(0.6, checked=False)
    budget.require(0.9, checked=True)


def test_a_limit_spent_before_the_first_iteration_returns_the_zero_dual_certified():
    data = planted_bipartite(30, 40, 8, seed=1)
    clock = Clock(tick=1.0)  # every look at the clock: one second
    out = admm_module.admm(data, 1e-3, penalty="l2", tol=1e-6, max_iter=100,
                           deadline=Deadline(3.0, start=0.0, clock=clock))
    assert out["status"] == "time_limit" and out["iterations"] == 0
    assert not np.any(out["dual"]) and out["gap"] == pytest.approx(1.0)  # P(0) = 1, D(0) = 0


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_admm_holds_a_limit_shorter_than_its_first_iteration(penalty):
    """12 million pairs: before, time_limit=2 ended at 2.6 s; measured by hand in the report."""
    data = planted_bipartite(2000, 3000, 40, seed=5)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = infinite_push(data, 1e-4, penalty=penalty, method="admm", tol=1e-12,
                            time_limit=0.5)
    overrun = time.perf_counter() - start - 0.5
    assert res.status == "time_limit" and overrun < 3.0
    assert np.all(np.isfinite(res.w)) and res.gap is not None and res.gap >= 0.0
