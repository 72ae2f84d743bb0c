"""A rough restricted step (the working set's early rounds, certified gap above 1e-3): an
interior-point solve that crawls is stopped below a relative error of 1e-2 and its best iterate
taken (infpush_cvx.solvers.engines.restricted_step); every other step keeps the 1e-4 rule."""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.solvers.engines import restricted_step as _step
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem, solve_restricted


def _problem(d=5):
    rng = np.random.default_rng(0)
    Z = sp.random(8, d, density=0.5, random_state=2, format="csr")
    pairs = np.zeros(8, np.intp)
    return RestrictedProblem(None, None, pairs, pairs, coef=1.0, groups=True,
                             a=rng.uniform(size=1), g=np.zeros((1, d)), Z=Z)


def test_a_crawling_step_is_taken_only_when_rough(monkeypatch):
    seen = []

    def crawling(rp_, *, center=None, multipliers=None, deadline=None, stall_below=None,
                 certificate=None):
        seen.append(stall_below)
        return (np.ones(rp_.d), np.ones(rp_.k), np.ones(rp_.nb),
                {"status": "stalled", "iterations": 45, "error": 1.4e-3})
    monkeypatch.setattr(_step, "solve_restricted", crawling)
    rp = _problem()
    w, _, _, name = _step.restricted_step(rp, np.zeros(rp.d), accept_inexact=True, rough=0.05)
    assert name == "ipm" and np.all(w == 1.0) and seen == [1e-2]  # (at most 1e-2)
    seen.clear()  # a level below the step's error: not taken
    w, _, _, name = _step.restricted_step(rp, np.zeros(rp.d), accept_inexact=True, rough=1e-3)
    assert name == "clarabel" and seen == [1e-3]
    # not rough (or rough without accept_inexact): an error of 1.4e-3 is not taken
    for flags in ({"accept_inexact": True}, {"rough": 1e-2}):
        seen.clear()
        w, _, _, name = _step.restricted_step(rp, np.zeros(rp.d), **flags)
        assert name == "clarabel" and not np.all(w == 1.0) and seen == [None]


@pytest.mark.parametrize("stall_below", [None, 1e-2])
def test_stall_below_only_stops_a_crawl(stall_below):
    """A restricted problem the interior point solves in a few iterations is solved to ``tol``
    with either stall level: the rule stops only a crawl."""
    rng = np.random.default_rng(1)
    d, nI, nJ, nb = 6, 20, 5, 50
    XI, XJ = rng.standard_normal((nI, d)), rng.standard_normal((nJ, d))
    bj, bi = np.divmod(np.sort(rng.choice(nI * nJ, nb, replace=False)), nI)
    rp = RestrictedProblem(XI, XJ, bi, bj, coef=0.7, groups=True,
                           a=rng.integers(0, 5, nJ).astype(float),
                           g=rng.standard_normal((nJ, d)), kappa=1.0)
    w, _, _, info = solve_restricted(rp, stall_below=stall_below)
    assert info["status"] == "optimal" and info["error"] <= 1e-8
