"""The interior-point method of a restricted step runs on one BLAS thread up to
``_SERIAL_IPM_D`` variables, whatever the caller allows (its many mid-sized products were slower
on two threads: infpush_cvx.solvers.engines.restricted_step), and on the caller's threads above."""

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits

from infpush_cvx.solvers.engines import restricted_step as _step
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem


def _problem(d):
    Z = sp.random(4, d, density=0.01, random_state=0, format="csr")
    pairs = np.zeros(4, np.intp)
    return RestrictedProblem(None, None, pairs, pairs, coef=1.0, groups=True, a=np.ones(1),
                             g=np.zeros((1, d)), Z=Z)


def _blas_threads():
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.mark.parametrize("d, serial", [(50, True), (_step._SERIAL_IPM_D, True),
                                       (_step._SERIAL_IPM_D + 1, False)])
def test_the_interior_point_step_is_serial_up_to_its_size(monkeypatch, d, serial):
    seen = []

    def recording(rp_, **kwargs):
        seen.append(_blas_threads())
        return (np.zeros(rp_.d), np.zeros(rp_.k), np.zeros(rp_.nb),
                {"status": "optimal", "iterations": 1, "error": 0.0})
    monkeypatch.setattr(_step, "solve_restricted", recording)
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl controls")
    rp = _problem(d)
    with threadpool_limits(limits=2, user_api="blas"):
        allowed = _blas_threads()
        _step._solve_ipm(rp, np.zeros(d))
        assert _blas_threads() == allowed  # (the caller's setting is restored)
    assert seen == [{1} if serial else allowed]
