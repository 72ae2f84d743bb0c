"""Shared front of the bipartite solvers: the data door, input checks, warm starts, results."""

from __future__ import annotations

import contextlib
import functools
import math
import time

import numpy as np
import scipy.sparse as sp

from infpush_cvx._validation import check_time_limit
from infpush_cvx.data.containers import BipartiteData, borrowed
from infpush_cvx.formulations.objectives import bipartite_objective
from infpush_cvx.solvers.engines import duality
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.implicit_dual import ImplicitDual
from infpush_cvx.solvers.result import SolverResult, status_for_gap, warn_if_not_converged

#: Largest m * n for which an implicit dual point is materialised as an m x n warm start.
_DENSE_DUAL_LIMIT = 50_000_000


def data_first(solver):
    """The one door from raw arrays to a solver written as ``solver(data, lam, ...)``.

    ``solver(Xp, Xn, lam, ...)``, with the positives and negatives as arrays or scipy.sparse
    matrices (sample weights as ``wp=``/``wn=``), is the call ``solver(BipartiteData(Xp, Xn), lam,
    ...)``; ``solver(data, None, lam, ...)``, the container followed by an empty ``Xn``, is
    ``solver(data, lam, ...)``. A container followed by another data argument, or arrays without
    the negatives, is the TypeError of :func:`as_bipartite`.

    The solver's ``time_limit`` (seconds, None or ``inf``: none) reaches it as a
    :class:`~.deadline.Deadline` started here, first thing, so that the limit covers the
    conversion of the data too. Dense float64 arrays are held as read-only views, not copied
    (:func:`~infpush_cvx.data.containers.borrowed`): the container lives for this call only,
    and the copy of 50k + 50k x 300 took 0.2-1.6 s (issue 29: a 1 s limit overrun by 0.9 s).
    """
    @functools.wraps(solver)
    def front(*args, **kwargs):
        limit = kwargs.get("time_limit")
        if not isinstance(limit, Deadline):
            kwargs["time_limit"] = Deadline(check_time_limit(limit))
        if "Xp" in kwargs or "Xn" in kwargs:
            args = (kwargs.pop("Xp", None), kwargs.pop("Xn", None)) + args
        if not args:
            return solver(**kwargs)  # (the solver's own TypeError for the missing data)
        first, rest = args[0], args[1:]
        second = rest[0] if rest else None
        # the second argument is the negatives when it is data; a None after a container is
        # the empty Xn of solver(data, None, lam); anything else (lam) belongs to the solver
        is_data = second is not None and (sp.issparse(second) or np.ndim(second) > 0
                                          or isinstance(second, BipartiteData))
        if is_data or (rest and second is None and isinstance(first, BipartiteData)):
            rest = rest[1:]
        if is_data:
            first, second = borrowed(first), borrowed(second)
        return solver(as_bipartite(first, second if is_data else None), *rest, **kwargs)
    return front


def as_bipartite(Xp, Xn, wp=None, wn=None) -> BipartiteData:
    """The data of ``(Xp, Xn)``: a BipartiteData as ``Xp`` with ``Xn`` None (given weights
    replace its own), or the arrays of the positives and negatives; a TypeError otherwise."""
    if isinstance(Xp, BipartiteData):
        if Xn is not None:
            raise TypeError(f"Xn must be omitted when the first argument is a BipartiteData (it "
                            f"holds the negatives), got Xn of type {type(Xn).__name__}")
        return Xp if wp is None and wn is None else BipartiteData(Xp.Xp, Xp.Xn, wp, wn)
    if isinstance(Xn, BipartiteData):
        raise TypeError("Xn must be an array of the negatives, got a BipartiteData; pass the "
                        "BipartiteData alone as the first argument (with Xn omitted)")
    if Xn is None:
        raise TypeError("Xn (the negatives) is required when the first argument is an array of "
                        "the positives (or pass a BipartiteData)")
    return BipartiteData(Xp, Xn, wp, wn)


def unit_weights(data: BipartiteData) -> BipartiteData:
    """``data`` with each set of sample weights divided by the power of two that brings its
    largest into [0.5, 1): the same paper-scaling problem, since the losses divide by M = sum wp
    and N = sum wn (and the dual's bounds scale with p / M and q / N), without the overflow of
    weights near 1e300 or the underflow of weights near 1e-300. ``data`` itself when unweighted.

    A ValueError names the weights when their ratios are outside float64's range.
    """
    if not data.weighted:
        return data

    def unit(name, v):
        if v is None:
            return None
        out = np.ldexp(v, -math.frexp(float(v.max()))[1])
        if not out.min() > 0:
            raise ValueError(f"{name}: its smallest weight is {float(v.min()):.3g} and its largest "
                             f"{float(v.max()):.3g}, ratios outside float64's range")
        return out
    return BipartiteData(data.Xp, data.Xn, unit("wp", data.wp), unit("wn", data.wn))


def centred(data: BipartiteData) -> BipartiteData:
    """The same problem with every column far from zero shifted towards it: ``x_k - c_k``.

    Every bipartite loss sees ``w`` only through score differences ``w.(x_i - x_j)``, and the
    dual only through ``w(alpha) = sum_ij alpha_ij (x_i - x_j)``: subtracting a common shift
    ``c`` from every row of Xp and Xn changes neither, so the problem, its solution ``w`` and its
    certificate are the same. In floating point they are not: a column of values near 1e6 with
    a spread of 1 puts scores of size ``1e6 |w_k|`` into every difference ``s_i - t_j``, and
    each hinge and the duality gap lose six digits (a gap of -9e-4 "certified" a point 1e-4
    from the optimum).

    A column whose values all lie farther from 0 than twice their range (``|c_k| > 2 (max_k -
    min_k)``, ``c_k = (max_k + min_k) / 2`` over the rows of Xp and Xn) is shifted by its
    midrange ``c_k``; then every value lies within a factor 2 of ``c_k``, so each ``x - c_k`` is
    exact (Sterbenz's lemma) and the shifted data hold exactly the same pair differences. Other
    columns (binary features, columns that span 0) keep their values, and ``data`` itself is
    returned when no column qualifies. A sparse column qualifies only when every entry is
    stored (a column holding a zero spans 0), so sparse data stay sparse.

    The first rows screen the columns: a column qualifies only if the rule holds on any subset
    of its values (``|c_k| > 2 r`` gives ``|c_S| > 1.5 r + r_S / 2 >= 2 r_S`` for a subset S of
    midrange ``c_S`` and range ``r_S``), so only the columns that pass on the first rows are
    read whole: for ordinary data, none.
    """
    shift = column_shift(data.Xp, data.Xn)
    if shift is None:
        return data
    return BipartiteData(shifted(data.Xp, shift), shifted(data.Xn, shift), data.wp, data.wn)


def column_shift(*blocks) -> np.ndarray | None:
    """The shift of :func:`centred` for the rows of ``blocks`` (matrices of one width): the
    midrange of each column far from zero over all their rows, 0 for the others; None when no
    column qualifies. Subtract it with :func:`shifted`."""
    head = [dense(X[:_SCREEN_ROWS]) for X in blocks]
    candidates = np.flatnonzero(_far_from_zero(np.vstack(head)))
    if candidates.size == 0:
        return None
    columns = [X[:, candidates] for X in blocks]
    lo = np.min([dense(X.min(axis=0)).ravel() for X in columns], axis=0)
    hi = np.max([dense(X.max(axis=0)).ravel() for X in columns], axis=0)
    far = _far_from_zero(np.vstack([lo, hi]))
    if not far.any():
        return None
    shift = np.zeros(blocks[0].shape[1])
    shift[candidates[far]] = 0.5 * lo[far] + 0.5 * hi[far]  # (lo + hi overflows near max)
    return shift


#: The rows of Xp and of Xn that screen the columns for :func:`centred`.
_SCREEN_ROWS = 16


def _far_from_zero(rows: np.ndarray) -> np.ndarray:
    """Per column: ``|midrange| > 2 range`` over the given rows."""
    lo, hi = rows.min(axis=0), rows.max(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.abs(0.5 * lo + 0.5 * hi) > 2.0 * (hi - lo)


def dense(X) -> np.ndarray:
    """``X`` as a dense float array (a copy when sparse)."""
    return X.toarray() if sp.issparse(X) else np.asarray(X, float)


def shifted(X, shift: np.ndarray):
    """``X - shift`` row by row; for sparse X only the stored entries of the shifted columns
    change (every entry of such a column is stored: :func:`centred`)."""
    if not sp.issparse(X):
        return np.asarray(X, float) - shift
    Xc = sp.csc_matrix(X, dtype=float, copy=True)
    Xc.data -= shift[np.repeat(np.arange(Xc.shape[1]), np.diff(Xc.indptr))]
    Xc.eliminate_zeros()
    return Xc.asformat(X.format)


def check_representable(data: BipartiteData, lam_paper: float, penalty: str) -> None:
    """Refuse data and lambda whose problem is outside float64's range, naming them.

    Every method forms squared norms or a Gram matrix of the rows, so rows of norm R with R^2
    past the float range are refused. With rows of norm up to R, the problem on ``X / R`` has
    ``lam / R^2`` (l2) or ``lam / R`` (l1) and dual bound ``C = 1 / lam`` (:mod:`._working_set`
    solves it there): when that lambda is so small that C overflows, no solver can represent
    the problem either.
    """
    R = duality.largest_row_norm(data)
    if R == 0:
        return
    big = np.finfo(float).max
    if R > np.sqrt(big):
        raise ValueError(f"Xp, Xn: rows of norm up to {R:.3g}, whose squares overflow float64; "
                         f"divide the data by a common factor c (the solution for X / c and "
                         f"lam / c^2 (l2) or lam / c (l1) is c w)")
    power = 2 if penalty == "l2" else 1
    with np.errstate(under="ignore", divide="ignore"):  # 0 or inf: tested below
        lam_unit = lam_paper / np.float64(R) ** power
    if not lam_unit > 1.0 / big:
        raise ValueError(f"lam={lam_paper:.3g} (paper scaling) is too small for data whose rows "
                         f"have norm up to {R:.3g} (Xp, Xn): on the data scaled to unit norm it "
                         f"is {lam_unit:.3g}, whose inverse overflows float64; rescale the data "
                         f"(the solution for X / c and lam / c^{power} is c w)")


def _finite_array(value, name: str) -> np.ndarray:
    """A float64 array from ``value`` or a TypeError/ValueError naming ``name``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a SolverResult or a numeric array, got "
                        f"{type(value).__name__}: {exc}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def warm_alpha(data: BipartiteData, warm_start):
    """The m x n dual array of a warm start (a SolverResult or an array), or None."""
    alpha = warm_start.dual if isinstance(warm_start, SolverResult) else warm_start
    if alpha is None:
        return None
    if isinstance(alpha, ImplicitDual):
        if data.m * data.n > _DENSE_DUAL_LIMIT:
            raise ValueError(f"warm_start: the dual of a working-set result would need an "
                             f"{data.m} x {data.n} array for this method; start from its w "
                             f"with method='working_set' instead")
        alpha = alpha.to_dense()
    alpha = _finite_array(alpha, "warm_start")
    if alpha.shape != (data.m, data.n):
        raise ValueError(f"warm_start dual must have shape ({data.m}, {data.n}), got {alpha.shape}")
    return alpha.copy()


def warm_weights(data: BipartiteData, warm_start):
    """The weight vector of a warm start, or None: a SolverResult's ``w``, a length-d vector, or
    an m x n dual array (its ``w(alpha)``)."""
    if warm_start is None:
        return None
    w0 = _finite_array(warm_start.w if isinstance(warm_start, SolverResult) else warm_start,
                       "warm_start")
    if w0.ndim == 2:  # a dual array (a result's w is a vector)
        w0 = duality.w_of_alpha(data.Xp, data.Xn, warm_alpha(data, w0))
    if w0.shape != (data.d,):
        raise ValueError(f"warm_start must give a weight vector of length {data.d}, got shape "
                         f"{w0.shape}")
    return w0


def blas_threads_for(d: int, largest: int = 512):
    """One BLAS thread for the certified methods' small dense algebra (d x d systems with d up
    to ``largest``, a few hundred by default): more threads do not speed these up, and
    OpenBLAS's spinning threads made a solve 30x slower when another process held one of the
    two cores (measured: 16 s instead of 0.5 s at m = n = 1000, d = 100)."""
    if d > largest:
        return contextlib.nullcontext()
    return _blas_controller().limit(limits=1, user_api="blas")


@functools.cache
def _blas_controller():
    """threadpoolctl's controller of the BLAS libraries loaded (NumPy's and SciPy's, loaded with
    them). Listing them takes 0.5 ms, a third of a P-Norm Push solve at 300 + 300 x 20, so it
    is done once per process; it holds no setting, only which libraries there are (a BLAS loaded
    later by another package is not limited)."""
    from threadpoolctl import ThreadpoolController
    return ThreadpoolController()


def method_options(options: dict) -> dict:
    """The options a convenience function passes to its method class: those given, a None one
    meaning the method's default (as the function's own keyword defaults did)."""
    return {name: value for name, value in options.items() if value is not None}


def finish(data, lam_paper, lam_user, *, w, alpha, status, iterations, t0, method, history,
           loss, penalty, scaling, tol, info=None, gap=None, message="") -> SolverResult:
    """Assemble a SolverResult: objective recomputed from w, gap certified from (w, alpha).

    Methods that certify their own gap from an implicit dual point pass ``gap`` and ``alpha``
    (an :class:`~.implicit_dual.ImplicitDual`, kept as the result's ``dual``) themselves.
    The gap's round-off bound (:func:`~.duality.gap_roundoff`, in ``info["gap_roundoff"]``)
    judges it: a gap below minus that bound is status "numerical_error", never "optimal".
    Warns with a ConvergenceWarning when the certificate does not hold.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    if gap is None and alpha is not None:
        alpha = duality.make_feasible(data, alpha, lam_paper, loss=loss, penalty=penalty)
        _, _, gap = duality.duality_gap(data, w, alpha, lam_paper, loss=loss, penalty=penalty)
    objective = bipartite_objective(data, w, lam_user, loss=loss, penalty=penalty,
                                    scaling=scaling)
    roundoff = None
    if gap is not None:
        primal = objective if scaling == "paper" else bipartite_objective(
            data, w, lam_paper, loss=loss, penalty=penalty)
        roundoff = duality.gap_roundoff(data, w, lam_paper, primal, penalty=penalty,
                                        amplification=getattr(alpha, "roundoff_amplification",
                                                              1.0))
    status = status_for_gap(status, gap, tol, roundoff)
    if status == "numerical_error":
        message = numerical_error_message(gap, roundoff)
    info = dict(info or {}, lam_paper=lam_paper, scaling=scaling, penalty=penalty, loss=loss,
                gap_roundoff=roundoff)
    result = SolverResult(w=w, objective=objective, gap=gap, status=status,
                          iterations=iterations, time=time.perf_counter() - t0, method=method,
                          history=history, dual=alpha, info=info, message=message)
    warn_if_not_converged(result)
    return result


def numerical_error_message(gap: float, roundoff: float) -> str:
    """Why a result has status "numerical_error"."""
    return (f"the certified relative gap {gap:.3g} is below minus its round-off bound "
            f"{roundoff:.3g}: the primal and dual values cannot be trusted in float64")
