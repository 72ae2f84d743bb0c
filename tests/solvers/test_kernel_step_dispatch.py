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

    def ipm(rp_, centre, accept_inexact=False, deadline=None):
        tried.append(rp_.d)
        return np.zeros(rp_.d), np.zeros(1), np.zeros(rp_.nb)

    monkeypatch.setattr(_step, "_solve_ipm", ipm)
    w, mu, nu, name = _step.restricted_step(rp, np.zeros(d))
    assert tried == [d] and name == "ipm"
