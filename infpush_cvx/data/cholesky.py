"""Pivoted Cholesky factorisation of a Gram matrix, in panels that check a deadline.

``K = L L^T`` up to the Schur complement of the pivots chosen greedily by the largest remaining
diagonal entry (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002,
section 10.3; LAPACK's ``dpstrf``), stopped once that entry is at most ``tol * max|diag K|``:
the factor of :func:`infpush_cvx.data.kernels.factorise`. Every pass over the N x N matrix
(its symmetric copy, the panels, the Schur complement) checks the solve's deadline between
blocks (:class:`TimeLimitReached`), and a matrix that is not positive semidefinite is refused
naming ``kernel`` (:func:`not_psd_error`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

#: Relative eigenvalue cut-off of the factors: smaller eigenvalues are round-off (see above).
RANK_TOL = 1e-12
#: A Gram matrix with an eigenvalue below ``-PSD_TOL * max(e)`` is refused as not PSD.
PSD_TOL = 1e-8


class TimeLimitReached(RuntimeError):
    """The solve's deadline passed while a Gram matrix or its factor was being computed (the
    caller returns status "time_limit"; never seen by a user)."""


def check_deadline(deadline) -> None:
    """Raise :class:`TimeLimitReached` once ``deadline`` (anything with an ``expired()`` method,
    the solvers' :class:`~infpush_cvx.solvers.engines.deadline.Deadline`; None: no limit) has
    passed."""
    if deadline is not None and deadline.expired():
        raise TimeLimitReached(deadline.message())


def row_blocks(n: int, step: int, deadline):
    """The blocks ``(r0, r1)`` of ``step`` rows out of ``n``, with ``deadline`` checked before
    each (:func:`check_deadline`): the loop of every pass over an N x N matrix."""
    for r0 in range(0, n, step):
        check_deadline(deadline)
        yield r0, min(r0 + step, n)


def not_psd_error(value: float, top: float) -> ValueError:
    """The refusal of a Gram matrix with an eigenvalue ``value`` below ``-PSD_TOL * top``."""
    return ValueError(f"kernel: the Gram matrix is not positive semidefinite (eigenvalue "
                      f"{value:.3g} against largest {top:.3g}); the RKHS problem would not be "
                      f"convex. Use a positive semidefinite kernel")


def refuse_below(value: float, scale: float, top: float | None = None) -> None:
    """Raise :func:`not_psd_error` (reporting ``top``, default ``scale``) when the eigenvalue
    or diagonal entry ``value`` is below ``-PSD_TOL * scale`` (and below -1e-300, so that a
    zero matrix's round-off is not refused)."""
    if value < -PSD_TOL * scale and value < -1e-300:
        raise not_psd_error(float(value), scale if top is None else top)


def diagonal_scale(K) -> float:
    """``max|diag K|``, after refusing (:func:`refuse_below`) a diagonal entry below
    ``-PSD_TOL`` times it: the first test of a Gram matrix, before any factorisation."""
    diag = np.diag(K)
    scale = float(np.abs(diag).max(initial=0.0))
    refuse_below(diag.min(initial=0.0), scale, float(diag.max(initial=0.0)))
    return scale


def pivoted_cholesky(K, tol: float = RANK_TOL, *, deadline=None):
    """``(L, C, pivots, residual)`` of the pivoted Cholesky factorisation of the symmetric part
    of ``K`` (module docstring): ``L`` (N x r) with ``K = L L^T`` up to the Schur complement S
    of the r pivots, ``C = L[pivots]`` lower triangular, and ``residual`` the spectral norm of S
    (``K - L L^T``). Stops when S's largest diagonal entry is at most ``tol * max|diag K|``.
    ValueError naming ``kernel`` when ``K`` is not positive semidefinite (a diagonal entry or
    an eigenvalue of S below ``-PSD_TOL * max|diag K|``). Without a ``deadline``, or when the
    time left covers LAPACK's worst case (:func:`_lapack_in_time`), LAPACK's ``dpstrf``;
    otherwise the same algorithm in panels (:func:`_pivoted_panels`, the same pivots, 1.3 to 2
    times slower) between which ``deadline`` is checked (:class:`TimeLimitReached`), as it is
    between the blocks of rows of every other pass over an N x N matrix."""
    A = symmetric_copy(K, deadline)
    N = A.shape[0]
    scale = diagonal_scale(A)
    if _lapack_in_time(N, deadline):
        # (info < 0 would be an argument error: A is a fresh square float64 array, tol a float)
        A, piv, r, _ = scipy.linalg.lapack.dpstrf(A, tol=tol * scale, lower=1, overwrite_a=1)
        piv = piv - 1
    else:
        piv, r = _pivoted_panels(A, tol * scale, deadline)
    # the factor's rows in pivot order are A[:, :r]'s lower triangle (the rest is stale)
    L = np.empty((N, r))
    for r0, r1 in row_blocks(N, _UPDATE_ROWS, deadline):
        for k in range(r0, min(r1, r)):  # (in place: np.tril's copies take 3 times longer)
            A[k, k + 1:r] = 0.0
        L[piv[r0:r1]] = A[r0:r1, :r]
    del A
    C = L[piv[:r]]
    S, residual = _schur_complement(K, L, piv[r:], deadline)  # (0 x 0 and 0 at full rank)
    if residual > PSD_TOL * scale:  # (cheap when S is small: the low-rank kernels)
        check_deadline(deadline)
        e = np.linalg.eigvalsh(S)
        refuse_below(e[0], scale)
        residual = float(np.abs(e).max())
    return L, C, piv[:r], residual


#: A floor on LAPACK ``dpstrf``'s speed (flop/s) on one thread of a loaded machine: measured
#: 17-18 GFlop/s on Spambase's Gram matrix (N = 4,601, rank 4,134: 1.7-1.9 s, against 3.2-3.3 s
#: in panels) on a 2-core machine at load 3; the floor leaves a margin of 9.
_SLOWEST_LAPACK_FLOPS = 2e9


def _lapack_in_time(N: int, deadline) -> bool:
    """Whether LAPACK's ``dpstrf`` (which cannot look at a deadline) may factor an N x N
    matrix: no deadline, or one whose ``allows`` (the solvers'
    :class:`~infpush_cvx.solvers.engines.deadline.Deadline`) covers the full-rank factor's
    ``N^3 / 3`` flops at :data:`_SLOWEST_LAPACK_FLOPS`. A deadline-like object without
    ``allows`` (only ``expired``) gets the panels."""
    if deadline is None:
        return True
    allows = getattr(deadline, "allows", None)
    return allows is not None and bool(allows(N ** 3 / 3.0 / _SLOWEST_LAPACK_FLOPS))


def _schur_complement(K, L, rest, deadline):
    """``(S, bound)``: the Schur complement ``S = (K + K^T)[rest, rest] / 2 - L[rest] L[rest]^T``
    of the pivots and its largest absolute row sum (a bound on its spectral norm), by blocks of
    rows with ``deadline`` checked between them (a linear kernel on 10,000 rows leaves a
    9,980 x 9,980 S: seconds)."""
    n = rest.size
    S = np.empty((n, n))
    Lr = L[rest]
    bound = 0.0
    for r0 in range(0, n, _UPDATE_ROWS):
        check_deadline(deadline)  # (in this frame, where the tests of this stage look)
        rows = rest[r0:r0 + _UPDATE_ROWS]
        block = S[r0:r0 + rows.size]
        block[...] = K[np.ix_(rows, rest)]
        block += K[np.ix_(rest, rows)].T
        block *= 0.5
        block -= Lr[r0:r0 + rows.size] @ Lr.T
        bound = max(bound, float(np.abs(block).sum(axis=1).max()))
    return S, bound


def symmetric_copy(K, deadline=None) -> np.ndarray:
    """The symmetric part ``(K + K^T) / 2`` of the square, finite ``K`` (ValueError naming
    ``K`` otherwise) as a new array, made by blocks of rows and tiles (:func:`symmetrise`),
    with ``deadline`` checked between them."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    A = np.empty_like(K)
    for r0, r1 in row_blocks(K.shape[0], TILE, deadline):
        A[r0:r1] = K[r0:r1]
        if not np.all(np.isfinite(A[r0:r1])):
            raise ValueError("K contains NaN or infinite entries")
    return symmetrise(A, deadline)


def symmetrise(K: np.ndarray, deadline=None) -> np.ndarray:
    """``K`` replaced in place by its symmetric part ``(K + K^T) / 2`` and returned, by square
    tiles (a transposed strip reads slowly, and ``K + K.T`` allocates another N x N array),
    with ``deadline`` checked between rows of tiles (:class:`TimeLimitReached`)."""
    t = TILE
    for r0 in range(0, K.shape[0], t):
        check_deadline(deadline)
        for c0 in range(0, r0 + 1, t):
            tile = K[r0:r0 + t, c0:c0 + t]
            mirror = K[c0:c0 + t, r0:r0 + t]
            tile += mirror.T
            tile *= 0.5
            mirror[...] = tile.T
    return K


#: Side of the square tiles in which a matrix is copied with its transpose (a transposed strip
#: reads slowly): :func:`symmetrise`, and the kernel span step's copy of a lower triangle.
TILE = 256


#: Columns of a panel of :func:`_pivoted_panels` (LAPACK's ``dpstrf`` uses 64 as well).
_PANEL = 64
#: Rows of the trailing matrix updated at a time after a panel.
_UPDATE_ROWS = 512


def _pivoted_panels(A, stop: float, deadline):
    """Pivoted Cholesky of the symmetric ``A`` in place, in its lower triangle: ``(pivots, r)``
    with ``A[:, :r]``'s lower part the factor's rows in pivot order (``pivots``, all N rows).

    The blocked algorithm of LAPACK's ``dpstrf`` (Hammarling, Higham & Lucas, LAPACK Working
    Note 161, 2007): each step takes as pivot the largest diagonal entry of the Schur complement
    (kept in ``work``), swaps it to the front (the symmetric swap of ``dpstf2`` on the lower
    triangle) and forms its column from the panel's earlier columns; after a panel of
    :data:`_PANEL` columns the trailing lower triangle is updated by blocks of rows
    (``A22 -= L21 L21^T``, matrix products). It stops at the first step whose largest entry is
    at most ``stop``. ``deadline`` is checked between panels and between row blocks: the
    factorisation costs ``O(N^2 r)``, minutes at N = 10,000 for a full-rank kernel.
    """
    N = A.shape[0]
    piv = np.arange(N)
    work = np.diag(A).copy()
    j = 0
    while j < N:
        check_deadline(deadline)
        j0, j1 = j, min(j + _PANEL, N)
        while j < j1:
            p = j + int(np.argmax(work[j:]))
            if not work[p] > stop:
                return piv, j
            if p != j:
                _swap_lower(A, j, p)
                work[[j, p]] = work[[p, j]]
                piv[[j, p]] = piv[[p, j]]
            ajj = np.sqrt(work[j])
            A[j, j] = ajj
            col = A[j + 1:, j]
            col -= A[j + 1:, j0:j] @ A[j, j0:j]  # (zeros at a panel's first column)
            col /= ajj
            work[j + 1:] -= col * col
            j += 1
        if j1 < N:
            panel = np.ascontiguousarray(A[j1:, j0:j1])
            for r0, r1 in row_blocks(N - j1, _UPDATE_ROWS, deadline):
                A[j1 + r0:j1 + r1, j1:j1 + r1] -= panel[r0:r1] @ panel[:r1].T
            work[j1:] = np.diag(A)[j1:]
    return piv, N


def _swap_lower(A, j: int, p: int) -> None:
    """Swap rows and columns ``j < p`` of the symmetric matrix held in ``A``'s lower triangle
    (with the factor's rows ``A[:, :j]``), as LAPACK's ``dpstf2``."""
    A[[j, p], :j] = A[[p, j], :j]
    A[j, j], A[p, p] = A[p, p], A[j, j]
    A[j + 1:p, j], A[p, j + 1:p] = A[p, j + 1:p].copy(), A[j + 1:p, j].copy()
    A[p + 1:, j], A[p + 1:, p] = A[p + 1:, p].copy(), A[p + 1:, j].copy()
