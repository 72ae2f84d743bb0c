"""The result contract shared by every solver: statuses from one vocabulary, one history shape."""

import math
import warnings

import numpy as np
import pytest

from infpush_cvx.data import generators
from infpush_cvx.solvers import infinite_push, ranksvm
from infpush_cvx.solvers.result import HISTORY_KEYS, STATUSES, SolverResult


def _result(**kw):
    base = dict(w=np.zeros(2), objective=1.0, gap=0.0, status="optimal", iterations=0, time=0.0)
    return SolverResult(**{**base, **kw})


def test_status_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="status"):
        _result(status="converged")
    for status in STATUSES:
        assert _result(status=status).status == status


def test_missing_history_columns_are_filled_and_extras_kept():
    res = _result(history={"objective": [3.0, 2.0], "mu": [1.0, 0.5]})
    assert list(res.history)[:4] == list(HISTORY_KEYS)
    assert res.history["iteration"] == [1, 2]
    assert all(math.isnan(v) for v in res.history["gap"] + res.history["time"])
    assert res.history["mu"] == [1.0, 0.5] and res.history["objective"] == [3.0, 2.0]
    assert _result().history == {key: [] for key in HISTORY_KEYS}


@pytest.mark.parametrize("solve", [
    lambda d: infinite_push(d.Xp, d.Xn, 0.1),
    lambda d: infinite_push(d.Xp, d.Xn, 0.1, method="fista", max_iter=20),
    lambda d: infinite_push(d.Xp, d.Xn, 0.1, penalty="l1", method="admm", max_iter=20),
    lambda d: ranksvm(d.Xp, d.Xn, 0.1),
])
def test_every_method_reports_the_same_history_columns(solve):
    data = generators.planted_bipartite(15, 20, 4, margin=0.5, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a capped first-order method warns)
        res = solve(data)
    lengths = {len(res.history[key]) for key in HISTORY_KEYS}
    assert set(HISTORY_KEYS) <= set(res.history) and len(lengths) == 1 and lengths != {0}



@pytest.mark.parametrize("method", ["smoothing_newton", "working_set", "fista", "paper"])
def test_history_frame_of_every_ranksvm_method(method):
    """The default method's ``step_size`` had one entry fewer than the other columns, and
    ``history_frame()`` raised ValueError (All arrays must be of the same length)."""
    data = generators.planted_bipartite(15, 20, 4, margin=0.5, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a capped first-order method warns)
        res = ranksvm(data.Xp, data.Xn, 0.1, method=method, max_iter=50)
    frame = res.history_frame()
    assert len(frame) == len(res.history["iteration"]) > 0
    assert set(HISTORY_KEYS) <= set(frame.columns)
