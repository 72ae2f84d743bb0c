"""Which solver a restricted step of the kernel route goes to (infpush_cvx.solvers.engines.
restricted_step): a step whose span has more than the former 2,000 coordinates is still the
structured interior point's (Spambase at lambda 1e-3: 2,012 to 2,249 coordinates; Clarabel did
not solve them and the solve stopped at gap 7.8e-3)."""

import numpy as np
import scipy.sparse as sp

from infpush_cvx.solvers.engines import restricted_step as _step
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem


def test_a_step_of_2100_coordinates_goes_to_the_interior_point(monkeypatch):
    d = 2100
    rng = np.random.default_rng(0)
    Z = sp.random(30, d, density=0.01, random_state=1, format="csr")  # (no span step)
    pairs = np.zeros(30, np.intp)  # (one group; with Z, bi is not read)
    rp = RestrictedProblem(None, None, pairs, pairs, coef=1.0, groups=True,
                           a=rng.uniform(size=1), g=np.zeros((1, d)), Z=Z)
    tried = []

    def ipm(rp_, centre, accept_inexact=False, deadline=None, rough=False):
        tried.append(rp_.d)
        return np.zeros(rp_.d), np.zeros(1), np.zeros(rp_.nb)

    monkeypatch.setattr(_step, "_solve_ipm", ipm)
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d))
    assert tried == [d] and name == "ipm"


def _stalled_ipm(rp_, *, center=None, multipliers=None, deadline=None, stall_below=None,
                certificate=None):
    """A fake interior point that stalls at relative error 2.6e-5 (an a8a subset's last l2
    step) with a step of all ones."""
    return (np.ones(rp_.d), np.ones(rp_.k), np.ones(rp_.nb),
            {"status": "stalled", "iterations": 11, "error": 2.6e-5})


def test_a_stalled_step_that_passes_the_callers_test_is_taken(monkeypatch):
    """A stalled interior-point step is the answer when ``verify`` accepts it (the working
    set's certificate), and goes on to Clarabel when it does not."""
    rng = np.random.default_rng(0)
    d = 5
    Z = sp.random(8, d, density=0.5, random_state=2, format="csr")
    pairs = np.zeros(8, np.intp)
    rp = RestrictedProblem(None, None, pairs, pairs, coef=1.0, groups=True,
                           a=rng.uniform(size=1), g=np.zeros((1, d)), Z=Z)
    monkeypatch.setattr(_step, "solve_restricted", _stalled_ipm)
    seen = []

    def accept(w, mu, nu):
        seen.append(w)
        return True
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d), verify=accept)
    assert name == "ipm" and np.all(w == 1.0) and len(seen) == 1
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d), verify=lambda *step: False)
    assert name == "clarabel" and not np.all(w == 1.0)
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d))  # no test: not taken either
    assert name == "clarabel"


def test_the_test_of_a_divided_step_sees_the_undivided_multipliers(monkeypatch):
    """A step with C = 1/lambda far above 1 is solved divided by coef: ``verify`` is handed
    the multipliers of the problem as given (coef times the divided one's)."""
    d, coef = 4, 1e9
    Z = sp.random(6, d, density=0.5, random_state=3, format="csr")
    pairs = np.zeros(6, np.intp)
    rp = RestrictedProblem(None, None, pairs, pairs, coef=coef, groups=True, a=np.ones(1),
                           g=np.zeros((1, d)), Z=Z)
    monkeypatch.setattr(_step, "solve_restricted", _stalled_ipm)
    seen = []

    def accept(w, mu, nu):
        seen.append((mu, nu))
        return True
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d), verify=accept)
    assert name == "ipm" and np.all(mu == coef) and np.all(nu == coef)
    assert np.all(seen[0][0] == coef) and np.all(seen[0][1] == coef)
