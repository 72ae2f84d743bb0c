"""Random bad input through the public entry points outside the solvers (metrics, data
containers, reductions, projections, rankers).

For every input exactly one of three outcomes is allowed:

1. a clear error: ``ValueError`` or ``TypeError`` whose message names the argument;
2. an honest status (rankers: a ``ConvergenceWarning`` or a zero-model warning with the fit);
3. an answer that agrees with an independent computation (a brute-force metric, the defining
   properties of a projection).

Anything else (another exception type, a silent NaN, an answer that disagrees) fails. The
solvers' own suite is ``test_solver_fuzz.py``.
"""

import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings, strategies as st  # noqa: E402

from infpush_cvx.evaluation import metrics  # noqa: E402
from infpush_cvx.data import BipartiteData  # noqa: E402
from infpush_cvx.prox import project_l1ball, project_l1inf  # noqa: E402
from infpush_cvx.data.reductions import collapse_duplicates  # noqa: E402
from infpush_cvx.solvers.result import CERTIFIED

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,  # the same examples every run
                    suppress_health_check=[HealthCheck.too_slow])

#: values that break naive code: NaN, infinities, overflow, underflow, signed zero
NASTY = [np.nan, np.inf, -np.inf, 1e308, -1e308, 1e-308, 5e-324, -0.0, 0.0, 1.0, -1.0]


def values():
    return st.one_of(st.sampled_from(NASTY),
                     st.floats(allow_nan=True, allow_infinity=True, width=64))


@st.composite
def arrays(draw, ndim, max_side=5):
    """A random array: float, int, bool, complex, string or object entries, any shape of
    ``ndim`` dimensions (zero-size included), sometimes a list or a scalar instead."""
    shape = tuple(draw(st.integers(0, max_side)) for _ in range(ndim))
    kind = draw(st.sampled_from(["float", "float", "float", "int", "bool", "complex", "str",
                                 "list", "scalar"]))
    size = int(np.prod(shape)) if shape else 1
    if kind == "scalar":
        return draw(values())
    flat = [draw(values()) for _ in range(size)]
    a = np.array(flat, dtype=float).reshape(shape)
    if kind == "int":
        return np.clip(np.nan_to_num(a), -1e18, 1e18).astype(np.int64)
    if kind == "bool":
        return a > 0
    if kind == "complex":
        return a + 1j
    if kind == "str":
        return a.astype(str)
    if kind == "list":
        return a.tolist()
    return a


def assert_names(exc: Exception, *names: str):
    """The error is a ValueError or TypeError whose message names one of ``names``."""
    event("refused")
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert any(name in message for name in names), f"no argument named in: {message!r}"


def brute_auc(y, s):
    """AUC by counting pairs (ties count one half), exactly in Python integers/floats."""
    pos = [b for a, b in zip(y, s) if a]
    neg = [b for a, b in zip(y, s) if not a]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


# -- metrics ----------------------------------------------------------------------------------

@SETTINGS
@given(y=arrays(1), s=arrays(1))
def test_auc_and_ap_refuse_or_agree_with_brute_force(y, s):
    for metric in (metrics.auc, metrics.average_precision, metrics.r_inf):
        try:
            value = metric(y, s)
        except Exception as exc:  # noqa: BLE001 - the check below says which are allowed
            assert_names(exc, "y_true", "y_score")
            continue
        assert np.isfinite(value) and 0.0 <= value <= 1.0, (metric.__name__, value)
        if metric is metrics.auc:
            yt = np.asarray(y)
            labels = yt == np.max(yt)  # the greater label is the positive class
            assert value == pytest.approx(brute_auc(labels.tolist(), list(np.asarray(s))))


@SETTINGS
@given(y=st.lists(st.integers(0, 1), min_size=2, max_size=30),
       s=st.lists(st.integers(-2**62, 2**62), min_size=30, max_size=30))
def test_auc_of_large_integer_scores_is_exact(y, s):
    """Integer scores beyond 2**53 are ranked exactly (a float64 cast would merge them)."""
    s = np.array(s[:len(y)], dtype=np.int64)
    if len(set(y)) < 2:
        with pytest.raises(ValueError, match="y_true"):
            metrics.auc(y, s)
        return
    assert metrics.auc(y, s) == pytest.approx(brute_auc([bool(v) for v in y], s.tolist()))


@SETTINGS
@given(y=arrays(1), s=arrays(1), k=st.one_of(st.integers(-3, 8), st.floats(), st.text()))
def test_precision_at_k_refuses_or_is_a_fraction(y, s, k):
    try:
        value = metrics.precision_at_k(y, s, k)
    except Exception as exc:  # noqa: BLE001
        assert_names(exc, "y_true", "y_score", "k")
        return
    assert 0.0 <= value <= 1.0


# -- data containers and reductions -----------------------------------------------------------

@SETTINGS
@given(Xp=arrays(2), Xn=arrays(2), wp=st.one_of(st.none(), arrays(1)),
       wn=st.one_of(st.none(), arrays(1)))
def test_bipartite_data_refuses_or_holds_finite_copies(Xp, Xn, wp, wn):
    try:
        data = BipartiteData(Xp, Xn, wp, wn)
    except Exception as exc:  # noqa: BLE001
        assert_names(exc, "Xp", "Xn", "wp", "wn")
        return
    for X in (data.Xp, data.Xn):
        assert X.dtype == np.float64 and np.all(np.isfinite(np.asarray(X)))
    assert data.Xp.shape[1] == data.Xn.shape[1] > 0
    assert np.all(data.pos_weights >= 0) and np.all(data.neg_weights >= 0)
    # collapsing identical rows keeps every row's weight
    reduced, _ = collapse_duplicates(data)
    assert reduced.wp_sum == pytest.approx(data.wp_sum)
    assert reduced.m <= data.m and reduced.n <= data.n


@SETTINGS
@given(X=arrays(2), y=arrays(1))
def test_from_labels_refuses_or_splits_by_the_greater_label(X, y):
    try:
        data = BipartiteData.from_labels(X, y)
    except Exception as exc:  # noqa: BLE001
        assert_names(exc, "X", "y")
        return
    assert data.m + data.n == len(np.asarray(y))


# -- projections --------------------------------------------------------------------------------

@SETTINGS
@given(v=arrays(1), radius=values())
def test_project_l1ball_refuses_or_is_the_projection(v, radius):
    try:
        P = project_l1ball(v, radius)
    except Exception as exc:  # noqa: BLE001
        assert_names(exc, "v", "radius")
        return
    v = np.asarray(v, dtype=float)
    assert np.all(np.isfinite(P))
    # defining properties of the l1-ball projection: feasible, same signs, shrunk entries,
    # v itself when v is inside, and a common threshold (soft thresholding) otherwise
    scale = max(float(np.abs(v).max(initial=0.0)), 1e-300)  # sums in units of scale: no overflow
    assert np.abs(P / scale).sum() <= (radius / scale) * (1 + 1e-9) + 1e-300
    assert np.all(np.sign(P) * np.sign(v) >= 0) and np.all(np.abs(P) <= np.abs(v) * (1 + 1e-12))
    if np.abs(v / scale).sum() <= radius / scale:
        np.testing.assert_allclose(P, v, rtol=1e-12, atol=1e-300)
    elif np.any(P != 0):
        tau = np.abs(v) - np.abs(P)
        active = P != 0
        assert np.ptp(tau[active]) <= 1e-9 * scale


@SETTINGS
@given(V=arrays(2), radius=values(), axis=st.sampled_from([0, 1, 2, "x"]))
def test_project_l1inf_refuses_or_is_feasible(V, radius, axis):
    try:
        P = project_l1inf(V, radius, axis=axis)
    except Exception as exc:  # noqa: BLE001
        assert_names(exc, "V", "radius", "axis")
        return
    V = np.asarray(V, dtype=float)
    assert P.shape == V.shape and np.all(np.isfinite(P))
    scale = max(float(np.abs(V).max(initial=0.0)), 1e-300)
    assert (np.abs(P / scale).max(axis=axis, initial=0.0).sum()
            <= (radius / scale) * (1 + 1e-9) + 1e-300)
    assert np.all(np.sign(P) * np.sign(V) >= 0) and np.all(np.abs(P) <= np.abs(V) * (1 + 1e-12))


# -- rankers --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(X=arrays(2, max_side=6), y=arrays(1, max_side=6),
       C=st.one_of(values(), st.text(max_size=2)))
def test_rankers_refuse_or_fit_honestly(X, y, C):
    from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker

    for cls in (InfinitePushRanker, RankSVMRanker):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                est = cls(C=C).fit(X, y)
            except Exception as exc:  # noqa: BLE001
                assert_names(exc, "X", "y", "C", "sample_weight")
                continue
        scores = est.decision_function(X)
        assert np.all(np.isfinite(scores))
        certified = getattr(est, "status_", "optimal") in CERTIFIED
        warned = any(issubclass(w.category, UserWarning) for w in caught)
        assert certified or warned, (est.status_, [str(w.message) for w in caught])
