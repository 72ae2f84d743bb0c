"""Random bad input for every solver entry point (hypothesis).

One argument of a small valid problem is corrupted (NaN, inf, complex, huge, tiny, negative,
wrong type, wrong shape, zero-size), or the whole problem is rescaled by a huge or tiny factor.
Each call must end in one of three ways:

1. a ValueError or TypeError whose message names the corrupted argument;
2. an honest result that is not certified: a status other than "optimal", agreeing with its gap,
   announced by a ConvergenceWarning;
3. a certified result that agrees with CVXPY: its objective is not below the optimum and its
   certified lower bound ``objective * (1 - gap)`` is not above it.

The optimum of a rescaled problem comes from the equivalent well-scaled one (the Infinite Push
and RankSVM at ``lam / c^2`` (l2) or ``lam / c`` (l1) for data ``c X``; Rank2Plan at ``lam / c``
for ``c X``, times c for weights ``c s``, and times c for gaps ``c g``), solved by Clarabel.
"""

from __future__ import annotations

import functools
import re
import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infpush_cvx import formulations
from infpush_cvx.data import BipartiteData, PairData
from infpush_cvx.solvers import ConvergenceWarning, infinite_push, rank2plan_lp, ranksvm
from infpush_cvx.solvers.result import STATUSES

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
LAM = 0.1
TOL = 1e-6
#: Every call has a time limit (unless time_limit is the corrupted argument): a badly scaled
#: problem may legitimately end with status "time_limit", and the file stays fast.
TIME_LIMIT = 0.5

_rng = np.random.default_rng(11)
XP = _rng.standard_normal((5, 3)) + 0.7
XN = _rng.standard_normal((4, 3))
X = _rng.standard_normal((8, 3))
I = np.array([0, 1, 2, 3, 4, 5, 6, 0, 2, 4])
J = np.array([1, 2, 3, 4, 5, 6, 7, 7, 5, 1])

#: Corruptions of an array argument (value -> corrupted value).
ARRAY_CORRUPTIONS = {
    "nan": lambda a: _with_entry(a, np.nan),
    "inf": lambda a: _with_entry(a, np.inf),
    "-inf": lambda a: _with_entry(a, -np.inf),
    "complex": lambda a: np.asarray(a) + 1j,
    "negative": lambda a: -np.abs(np.asarray(a, dtype=float)) - 1.0,
    "huge": lambda a: np.asarray(a, dtype=float) * 1e300,
    "tiny": lambda a: np.asarray(a, dtype=float) * 1e-300,
    "drop_last": lambda a: np.asarray(a)[..., :-1],
    "extra_axis": lambda a: np.asarray(a)[None],
    "flat": lambda a: np.asarray(a).ravel()[:1].reshape(()),
    "zero_size": lambda a: np.asarray(a)[:0],
    "string": lambda a: "abc",
    "strings": lambda a: np.full(np.shape(a), "x"),
    "dict": lambda a: {"a": 1},
}
#: Corruptions of a scalar argument.
SCALAR_CORRUPTIONS = {
    "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "negative": -1.0, "zero": 0.0,
    "string": "a", "complex": 1j, "bool": True, "huge": 1e300, "tiny": 1e-300,
    "numpy_int": np.int64(3), "fraction": 2.5, "array": np.ones(2),
}
#: Whole-problem rescalings.
SCALES = (1e-300, 1e-150, 1e-20, 1e20, 1e150, 1e300)


def _with_entry(a, value):
    a = np.array(a, dtype=float)
    if a.size:
        a.flat[a.size // 2] = value
    return a


def _names(arg: str, message: str) -> bool:
    """Whether ``message`` names ``arg`` as a word (``i`` must not match inside "is")."""
    return re.search(rf"(?<![A-Za-z_]){re.escape(arg)}(?![A-Za-z_])", message) is not None


# ------------------------------------------------------------------ references (CVXPY, Clarabel)

@functools.lru_cache(maxsize=None)
def bipartite_optimum(loss: str, penalty: str, lam: float) -> float:
    data = BipartiteData(XP, XN)
    if loss == "infinite_push":
        prob = formulations.infinite_push_problem(data, lam, penalty=penalty)
    else:
        prob = formulations.ranksvm_problem(data, lam)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


@functools.lru_cache(maxsize=None)
def rank2plan_optimum(lam: float) -> float:
    prob = formulations.rank2plan_lp_problem(PairData(X, I, J), lam)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


# ------------------------------------------------------------------ the three outcomes

def check_outcome(call, named, tol, optimum):
    """Run ``call``; assert outcome 1, 2 or 3. ``named``: argument names a refusal may give;
    ``optimum()``: the optimal value, or None when it cannot be computed reliably."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = call()
    except (ValueError, TypeError) as exc:
        assert any(_names(arg, str(exc)) for arg in named), \
            f"{type(exc).__name__} that names none of {named}: {exc}"
        return "refused"
    assert res.status in STATUSES
    if res.gap is not None and tol is not None:
        assert (res.gap <= tol) == res.converged, f"status {res.status!r}, gap {res.gap!r}"
    if not res.converged:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught), res
        return "honest"
    assert np.all(np.isfinite(res.w)) and np.isfinite(res.objective), res
    value = optimum()
    if value is not None:
        slack = 1e-6 * abs(value) + 1e-9
        assert res.objective >= value - slack - 1e-5 * abs(value) * (res.gap is None), \
            f"objective {res.objective!r} below the optimum {value!r}"
        gap = 1e-5 if res.gap is None else max(res.gap, 0.0)
        assert res.objective - gap * abs(res.objective) <= value + slack, \
            f"objective {res.objective!r} (gap {res.gap!r}) above the optimum {value!r}"
    return "certified"


# ------------------------------------------------------------------ Infinite Push and RankSVM

BIPARTITE = [("infinite_push", "l2", m) for m in ("working_set", "fista", "paper", "admm")] \
    + [("infinite_push", "l1", m) for m in ("working_set", "admm")] \
    + [("ranksvm", "l2", m) for m in ("smoothing_newton", "working_set", "fista", "paper")]
BIPARTITE_ARRAYS = ("Xp", "Xn", "wp", "wn", "warm_start")
BIPARTITE_SCALARS = ("lam", "tol", "max_iter", "time_limit")


def _bipartite_call(loss, penalty, method, kwargs):
    kwargs = dict(kwargs)
    Xp, Xn, lam = kwargs.pop("Xp"), kwargs.pop("Xn"), kwargs.pop("lam")
    if loss == "infinite_push":
        return lambda: infinite_push(Xp, Xn, lam, penalty=penalty, method=method, **kwargs)
    return lambda: ranksvm(Xp, Xn, lam, method=method, **kwargs)


def _bipartite_base(method):
    kwargs = {"Xp": XP, "Xn": XN, "lam": LAM, "time_limit": TIME_LIMIT}
    if method == "paper":
        kwargs["max_iter"] = 200
    return kwargs


@FUZZ
@given(problem=st.sampled_from(BIPARTITE), arg=st.sampled_from(BIPARTITE_ARRAYS),
       corruption=st.sampled_from(sorted(ARRAY_CORRUPTIONS)))
def test_bipartite_solvers_under_a_corrupted_array(problem, arg, corruption):
    loss, penalty, method = problem
    kwargs = _bipartite_base(method)
    clean = {"Xp": XP, "Xn": XN, "wp": np.ones(5), "wn": np.ones(4),
             "warm_start": np.zeros(3) if method in ("working_set", "smoothing_newton")
             else np.zeros((5, 4))}[arg]
    kwargs[arg] = ARRAY_CORRUPTIONS[corruption](clean)
    # weights scaled alike are the same problem (paper scaling); a warm start changes nothing
    same_problem = arg in ("wp", "wn", "warm_start") and corruption in ("huge", "tiny")
    optimum = (lambda: bipartite_optimum(loss, penalty, LAM)) if same_problem else (lambda: None)
    check_outcome(_bipartite_call(loss, penalty, method, kwargs), (arg,), TOL, optimum)


@FUZZ
@given(problem=st.sampled_from(BIPARTITE), arg=st.sampled_from(BIPARTITE_SCALARS),
       corruption=st.sampled_from(sorted(SCALAR_CORRUPTIONS)))
def test_bipartite_solvers_under_a_corrupted_scalar(problem, arg, corruption):
    loss, penalty, method = problem
    kwargs = _bipartite_base(method)
    kwargs[arg] = SCALAR_CORRUPTIONS[corruption]
    lam = kwargs["lam"]
    tol = kwargs.get("tol", TOL)

    def optimum():
        if arg == "lam" and not 1e-7 <= lam <= 1e7:
            return 1.0 if lam > 1e7 else None  # w* = 0 up to 1/lam; too small: no reference
        return bipartite_optimum(loss, penalty, float(lam))

    valid_tol = isinstance(tol, float) and np.isfinite(tol) and tol > 0
    check_outcome(_bipartite_call(loss, penalty, method, kwargs), (arg,),
                  tol if valid_tol else None, optimum)


@FUZZ
@given(problem=st.sampled_from(BIPARTITE), scale=st.sampled_from(SCALES))
def test_bipartite_solvers_under_rescaled_data(problem, scale):
    """``c X`` at ``lam`` is the problem on X at ``lam / c^power``, with the same optimum."""
    loss, penalty, method = problem
    kwargs = _bipartite_base(method)
    kwargs["Xp"], kwargs["Xn"] = XP * scale, XN * scale
    with np.errstate(over="ignore", divide="ignore"):
        lam_ref = LAM / np.float64(scale) ** (2 if penalty == "l2" else 1)

    def optimum():
        if lam_ref > 1e7:
            return 1.0
        return bipartite_optimum(loss, penalty, lam_ref) if lam_ref >= 1e-7 else None

    check_outcome(_bipartite_call(loss, penalty, method, kwargs), ("Xp", "Xn", "lam"), TOL,
                  optimum)


# ------------------------------------------------------------------ Rank2Plan

R2P_METHODS = ("ccg", "smoothed", "cvxpy")
R2P_ARRAYS = ("X", "i", "j", "margin", "weight", "warm_start", "tau")
R2P_SCALARS = ("lam", "tol", "max_iter", "time_limit")


def _r2p_kwargs(method):
    kwargs = {"X": X, "i": I, "j": J, "lam": LAM, "method": method, "time_limit": TIME_LIMIT}
    if method == "cvxpy":
        kwargs["solver"] = "CLARABEL"
    return kwargs


def _r2p_call(kwargs):
    kwargs = dict(kwargs)
    return lambda: rank2plan_lp(kwargs.pop("X"), kwargs.pop("i"), kwargs.pop("j"),
                                kwargs.pop("lam"), **kwargs)


@FUZZ
@given(method=st.sampled_from(R2P_METHODS), arg=st.sampled_from(R2P_ARRAYS),
       corruption=st.sampled_from(sorted(ARRAY_CORRUPTIONS)))
def test_rank2plan_under_a_corrupted_array(method, arg, corruption):
    kwargs = _r2p_kwargs(method)
    clean = {"X": X, "i": I, "j": J, "margin": np.ones(I.size), "weight": np.ones(I.size),
             "warm_start": np.zeros(3), "tau": np.array([0.5, 0.1])}[arg]
    kwargs[arg] = ARRAY_CORRUPTIONS[corruption](clean)
    if arg in ("warm_start", "tau") and corruption in ("huge", "tiny"):
        optimum = lambda: rank2plan_optimum(LAM)  # noqa: E731 (a start changes no optimum)
    else:
        optimum = lambda: None  # noqa: E731
    check_outcome(_r2p_call(kwargs), (arg,), TOL, optimum)


@FUZZ
@given(method=st.sampled_from(R2P_METHODS), arg=st.sampled_from(R2P_SCALARS),
       corruption=st.sampled_from(sorted(SCALAR_CORRUPTIONS)))
def test_rank2plan_under_a_corrupted_scalar(method, arg, corruption):
    kwargs = _r2p_kwargs(method)
    kwargs[arg] = SCALAR_CORRUPTIONS[corruption]
    lam, tol = kwargs["lam"], kwargs.get("tol", TOL)

    def optimum():
        valid = isinstance(lam, (float, int, np.integer)) and not isinstance(lam, bool)
        if not valid or not 1e-8 <= float(lam) <= 1e8:
            return None
        return rank2plan_optimum(float(lam))

    valid_tol = isinstance(tol, float) and np.isfinite(tol) and tol > 0
    check_outcome(_r2p_call(kwargs), (arg,), tol if valid_tol else None, optimum)


@FUZZ
@given(method=st.sampled_from(R2P_METHODS), what=st.sampled_from(("X", "weight", "margin")),
       scale=st.sampled_from(SCALES))
def test_rank2plan_under_rescaled_data(method, what, scale):
    """``c X`` at ``lam``: the optimum at ``lam / c``; weights ``c s``: c times the optimum at
    ``lam / c``; margins ``c g``: c times the optimum at ``lam``."""
    kwargs = _r2p_kwargs(method)
    if what == "X":
        kwargs["X"] = X * scale
        lam_ref, factor = LAM / scale, 1.0
    elif what == "weight":
        kwargs["weight"] = np.full(I.size, scale)
        lam_ref, factor = LAM / scale, scale
    else:
        kwargs["margin"] = np.full(I.size, scale)
        lam_ref, factor = LAM, scale

    def optimum():
        return None if not 1e-8 <= lam_ref <= 1e8 else factor * rank2plan_optimum(lam_ref)

    check_outcome(_r2p_call(kwargs), (what, "lam"), TOL if method != "cvxpy" else None, optimum)


def test_the_three_outcomes_are_all_reached():
    """A sanity check of the harness itself: each outcome occurs on a plain example."""
    assert check_outcome(lambda: infinite_push(XP, XN, np.nan), ("lam",), TOL,
                         lambda: None) == "refused"
    assert check_outcome(lambda: infinite_push(XP, XN, LAM, method="fista", max_iter=2),
                         ("max_iter",), TOL, lambda: None) == "honest"
    assert check_outcome(lambda: infinite_push(XP, XN, LAM), (), TOL,
                         lambda: bipartite_optimum("infinite_push", "l2", LAM)) == "certified"
    with pytest.raises(AssertionError):
        check_outcome(lambda: infinite_push(XP, XN, LAM), (), TOL, lambda: 0.5)
