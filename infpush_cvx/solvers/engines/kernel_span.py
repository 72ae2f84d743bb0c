"""A restricted step of the working set solved in the span of its own data (representer theorem).

The restricted problem of :mod:`._working_set` (:class:`._restricted_ipm.RestrictedProblem`, l2
penalty; C-scaling, ``kappa`` the curvature including the proximal weight)::

    min_w  kappa/2 ||w||^2 + q_w.w + coef xi + c_e sum_b e_b
    s.t.   a_j - g_j.w + sum_{b in B_j} e_b <= xi,   e_b >= pi_b (1 - z_b.w),   e_b >= 0

sees ``w`` only through its inner products with the data rows ``V = [XI; XJ; g; q_w]``
(``z_b = x_i - x_j`` with ``x_i`` a row of XI, ``x_j`` of XJ). Write ``w = Q u + w_perp`` with
``Q`` (d x D) an orthonormal basis of a space holding the rows of V: the constraints do not see
``w_perp`` and the objective is ``kappa/2 (||u||^2 + ||w_perp||^2) + (Q^T q_w).u + ...``, so
``w_perp = 0`` at the minimiser, which is ``Q u*`` with ``u*`` the minimiser of the same problem
on the coordinates ``V Q`` (D columns), with the same multipliers (the representer theorem:
Kimeldorf & Wahba, J. Math. Anal. Appl. 33, 1971; Schoelkopf, Herbrich & Smola, COLT 2001).
The basis comes from two Householder QR factorisations (:func:`span_step`): the pair rows (XI
and the rows of XJ that band pairs use) exactly, then the parts of g and ``q_w`` outside their
span, cut at a relative rank tolerance (``RANK_TOL``). So ``D = nI + |J used| + r2``; the g rows
of the Infinite Push (sums of the positives below the margin) lie almost in the span of the
pair rows and of a few prefix sums, and add few dimensions (r2 between 3 and about 100 on
Spambase).

This matters for the kernel route, whose features are the rows of a factor of the Gram matrix:
on Spambase ``d`` is the factor's rank, 4,146 (pivoted Cholesky), while a restricted step's
data span 100 to 1,230 dimensions (the working negatives, the band's positives and a few
directions of the linear pieces), and an interior-point iteration costs ``O((nI + nJ + k) d^2
+ d^3)``. Measured at lambda 0.01: with 4,076 coordinates (the eigendecomposition's rank;
above the interior point's size limit, so Clarabel) no round finished in 284 s; a round of
about 20 interior-point iterations took 18 to 23 s on the whole span of 2,140 rows and 3 to 6 s
on the 1,230 dimensions it has. In those coordinates the pair rows are the rows of a triangular
matrix (:class:`TriangularSpanProblem`), which makes the pair part of each Newton matrix
triangular products. The l1 penalty is not rotation invariant (``||Q u||_1 !=
||u||_1``) and is never reduced; neither is a problem given by explicit sparse pair vectors
``Z`` (sparse linear data, whose ``d`` is the data's own).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from infpush_cvx.data.cholesky import TILE, TimeLimitReached
from infpush_cvx.solvers.engines.ipm_kernels import _scattered_pair_products, _scattered_scaling
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem

#: Reduce only when the span has at most this fraction of ``d`` dimensions: an interior-point
#: iteration costs about ``D^2 (nI + nJ + k) + D^3 / 3``, the QRs about ``4 d D^2``, so a
#: reduction to nearly d saves nothing.
SPAN_FRACTION = 0.75
#: Relative cut-off of the span's rank (of the rows scaled to unit norm).
RANK_TOL = 1e-12


def _reflect(qr, tau, x, trans: str) -> np.ndarray:
    """``Q x`` (``trans="N"``) or ``Q^T x`` (``"T"``) for the Householder reflectors ``(qr,
    tau)`` of a QR factorisation (LAPACK ``dormqr``); x is a vector or a matrix."""
    c = np.array(x.reshape(x.shape[0], -1), dtype=np.float64, order="F")  # (overwritten)
    if tau.size == 0 or c.size == 0:
        return c.reshape(x.shape)
    out, _, info = lapack.dormqr("L", trans, qr, tau, c, max(1, 64 * c.shape[1]),
                                 overwrite_c=1)
    if info != 0:  # (an argument error: a bug, not a numerical failure)
        raise RuntimeError(f"dormqr failed with info={info}")
    return out.reshape(x.shape)


@dataclass(frozen=True)
class SpanStep:
    """A restricted problem on the coordinates of its data span, and the maps between spaces.

    ``problem`` is the reduced :class:`RestrictedProblem` (``problem.d`` = D); ``to_span(w)`` the
    coordinates ``Q^T w`` of a weight vector (the projection on the span), ``from_span(u)`` the
    weights ``Q u``. The basis is ``Q = Q1 diag(I, Q2)``: ``Q1`` (reflectors ``qr1, tau1``) spans
    the ``d1`` pair rows, ``Q2`` (``q2``: its orthonormal columns, in the ``d - d1`` remaining
    coordinates) the rest of the span.
    """

    problem: RestrictedProblem
    qr1: np.ndarray
    tau1: np.ndarray
    q2: np.ndarray
    d: int

    @property
    def d1(self) -> int:
        return self.tau1.size

    def to_span(self, w) -> np.ndarray:
        y = _reflect(self.qr1, self.tau1, np.asarray(w, dtype=np.float64), "T")
        return np.concatenate([y[:self.d1], self.q2.T @ y[self.d1:]])

    def from_span(self, u) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        y = np.concatenate([u[:self.d1], self.q2 @ u[self.d1:]])
        return _reflect(self.qr1, self.tau1, y, "N")


#: Flops a second at which the span step's first QR is assumed to run before it is begun under a
#: deadline: about twice what one thread of the 2-core reference machine does (25-38 GFlop/s
#: on Spambase's steps), so that only a start that cannot end in time is refused.
SPAN_FLOP_RATE = 6e10
#: Seconds from which the first QR's own rate predicts the rest of the span step's.
_TIMED = 0.01


def _time_for(deadline, flops: float, rate: float, stage: str) -> None:
    """Raise :class:`TimeLimitReached` when ``deadline`` (None: no limit) cannot cover
    ``flops`` at ``rate`` flops a second (the span step's QRs do not see the deadline: on
    Spambase's RBF kernel at lambda 1e-3 they take 0.7-1 s a round, begun just before a 20 s
    limit they ran 0.99 s past it)."""
    if deadline is not None and not deadline.allows(flops / rate):
        raise TimeLimitReached(f"the span step's {stage} was not begun: "
                               f"{deadline.message_before(flops / rate)}")


def span_step(rp: RestrictedProblem, fraction: float = SPAN_FRACTION,
              rank_tol: float = RANK_TOL, deadline=None) -> SpanStep | None:
    """The restricted problem ``rp`` on the span of its data rows (module docstring), or None
    when it is not reduced: an l1 penalty, explicit pair vectors ``Z``, more than
    ``fraction * d`` pair rows (decided before any factorisation) or a span of more than
    ``fraction * d`` dimensions. The group rows g are not counted before their span is known:
    sums of the pair rows, they add few dimensions (47 for 1,201 g rows on Spambase at lambda
    1e-3, whose 2,046 pair rows span half of the factor's 4,146 dimensions); counted as rows
    they refused that step, which then went to a conic solver on all 4,146 coordinates.

    Rows of XJ that no band pair uses enter only as group indices (their coordinates are 0).
    The pair rows (XI and the used rows of XJ, ``d1`` of them) get exact coordinates from a
    Householder QR (LAPACK ``dgeqrf``); the group pieces g and ``q_w``, mostly sums of those
    rows, add only their components outside that span, found by a QR with column pivoting
    (``dgeqp3``) of those components relative to each row's norm, cut at ``|R_kk| <=
    rank_tol``: each such row then moves by about ``rank_tol`` of its norm, far below the
    interior point's own accuracy (on Spambase, up to 900 g rows added 3 to about 100
    dimensions). The reduced problem is a :class:`TriangularSpanProblem`: its pair rows are
    the rows of ``R^T`` from the first QR.
    """
    if isinstance(rp, TriangularSpanProblem):  # (on its span already)
        return None
    d = rp.d
    # (decided from the row counts before sorting or copying anything: a step of linear data,
    # whose band rows outnumber its d features, pays nothing here)
    if rp.l1 or rp.Z is not None or rp.nI > fraction * d:
        return None
    used = np.unique(rp.bj) if rp.nb else np.zeros(0, np.intp)
    d1 = rp.nI + used.size
    if d1 > fraction * d:
        return None
    pair_rows = np.vstack([rp.XI, rp.XJ[used]])
    other = np.vstack([rp.g, rp.q_w[None, :]])
    # stage 1: the pair rows, exactly (under a deadline: begun when its flops fit at a fast
    # rate, and the rest when it fits at the rate stage 1 ran at)
    first = 2.0 * d * d1 * d1
    _time_for(deadline, first, SPAN_FLOP_RATE, "QR of the pair rows")
    begun = None if deadline is None else deadline.elapsed()
    (qr1, tau1), _ = scipy.linalg.qr(pair_rows.T, mode="raw", check_finite=False)
    qr1 = np.asfortranarray(qr1)
    if deadline is not None:
        k1 = other.shape[0]
        took = deadline.elapsed() - begun
        # (a stage 1 too short to time: the fast rate again)
        rate = first / took if took >= _TIMED else SPAN_FLOP_RATE
        _time_for(deadline, 4.0 * d * d1 * k1 + 2.0 * (d - d1) * k1 * k1, rate,
                  "rest (the group rows' span)")
    # stage 2: the other rows' components outside the pair rows' span, rank-revealing
    B = _reflect(qr1, tau1, np.asfortranarray(other.T), "T")  # (d x k+1) coordinates
    norms = np.sqrt(np.einsum("ij,ij->i", other, other))
    scale = np.where(norms > 0, norms, 1.0)
    q2, R2, perm = _rank_revealing_qr(np.asfortranarray(B[d1:] / scale))
    r2 = int(np.count_nonzero(np.abs(np.diag(R2)) > rank_tol))
    D = d1 + r2
    if D == 0 or D > fraction * d:  # (no data at all: nothing to gain)
        return None
    C = np.zeros((d1 + other.shape[0], D))
    C[:d1, :d1] = np.triu(qr1[:d1, :d1]).T  # (R, in the upper part of LAPACK's qr)
    C[d1:, :d1] = B[:d1].T
    C[d1 + perm, d1:] = np.triu(R2[:r2]).T * scale[perm, None]
    XI, XJu, g, q_w = np.split(C, np.cumsum([rp.nI, used.size, rp.g.shape[0]]))
    XJ = np.zeros((rp.nJ, D))
    XJ[used] = XJu
    reduced = TriangularSpanProblem(XI, XJ, rp.bi, rp.bj, used=used, coef=rp.coef,
                                    groups=rp.groups, a=rp.a if rp.groups else None,
                                    g=g if rp.groups else None, c_e=rp.c_e, q_w=q_w[0],
                                    kappa=rp.kappa, pair_weight=rp.pi)
    return SpanStep(reduced, qr1, tau1[:d1], np.ascontiguousarray(q2(r2)), d)


def _rank_revealing_qr(A):
    """``(q, R, perm)`` with ``A[:, perm] = Q R`` a QR factorisation with column pivoting
    (LAPACK ``dgeqp3``) and ``q(r)`` the first r columns of Q.

    A tall A (the g rows' components outside the pair rows' span: 2,100 x 1,202 on Spambase)
    is first reduced by a QR without pivoting, ``A = Qa Ra`` (``dgeqrf``, blocked), and the
    pivoted QR taken of the square ``Ra = Qb R`` (``A P = (Qa Qb) R``: the same R and pivots
    up to round-off, as ``Qa`` is orthogonal); ``dgeqp3`` updates its column norms one column
    at a time, so on the tall matrix it ran at matrix-vector speed (0.56 s, against 0.32 s in
    all for the two stages)."""
    rows, cols = A.shape
    if rows <= cols:
        Q, R, perm = scipy.linalg.qr(A, mode="economic", pivoting=True, overwrite_a=True,
                                     check_finite=False)
        return (lambda r: Q[:, :r]), R, perm
    (qa, taua), _ = scipy.linalg.qr(A, mode="raw", overwrite_a=True, check_finite=False)
    qa = np.asfortranarray(qa)
    Qb, R, perm = scipy.linalg.qr(np.triu(qa[:cols]), pivoting=True, check_finite=False)

    def q(r):
        top = np.zeros((rows, r))
        top[:cols] = Qb[:, :r]
        return _reflect(qa, taua, top, "N")
    return q, R, perm


#: The smallest span on which :class:`TriangularSpanProblem`'s interior-point iterations are
#: costly: it takes centrality correctors and is solved more loosely.
COSTLY_FROM = 500

#: Densest band (pairs over ``nI x |used|``) whose pair sums :class:`TriangularSpanProblem`
#: takes by one pass over the pairs; above it, by matrix products with the dense weights.
DENSE_BAND = 0.1


class TriangularSpanProblem(RestrictedProblem):
    """The restricted problem of :func:`span_step` on its span coordinates, whose pair rows
    ``T = [XI; XJ[used]]`` (``d1 = nI + |used|`` of them; the other rows of XJ are 0) are the
    rows of a lower triangular ``d1 x d1`` matrix (``R^T`` of the pair rows' QR), zero in the
    last ``D - d1`` coordinates.

    The pair part of the interior point's Newton matrix is ``X^T Lap X`` for the weighted
    Laplacian ``Lap`` of the band graph (:mod:`.restricted_ipm`), which its dense form
    computes as ``XI^T diag XI + XJ^T diag XJ - C - C^T`` with the cross term ``C = XJ^T W^T
    XI``: ``2 (nI + 2 nJ) D^2`` flops over every row of XJ. Here the same matrix is
    ``T^T Lap T = T^T diag(cols, rows) T - X - X^T`` (:func:`_pair_sum`) in the ``d1 x d1``
    block where T lives: the first term by LAPACK's triangular ``dlauum`` (``d1^3 / 3``
    flops), the cross term ``X = XI^T W XJ`` (W the ``nI x |used|`` pair weights) by a
    triangular product of ``XI1^T`` (the rows of XI, the first of T, are 0 beyond its first
    nI coordinates) and ``W XJ``. ``W XJ`` (and the groups' ``C^T XI``) take one pass over
    the pairs (``O(nb d1)``) for a sparse band, matrix products with W dense above
    :data:`DENSE_BAND`. Measured on Spambase steps (one thread), a factored Newton matrix:
    lambda 1e-2, D = 1,230, nI = 327, 900 used negatives, 23,380 pairs: 0.17 s densely,
    0.115 s as ``T^T (Lap T)`` by a triangular product (``d1^3`` flops); lambda 1e-3, D =
    2,000, 63,627 pairs: 0.61 s and 0.43 s; D = 2,249, nI = 1,262, 412,611 pairs (a third of
    nI x |used|): 1.11 s and 0.63 s (0.95 s by the pass over the pairs, which was faster up
    to a tenth of the cells). By ``dlauum`` the pair part took 12-15% less than by that
    product (lambda 1e-3, D = 1,582 to 1,857: 0.050 s against 0.056 s, 0.109 s against
    0.128 s).
    """

    @property
    def costly(self) -> bool:
        """Whether the interior-point iterations are costly (a span of at least
        :data:`COSTLY_FROM` coordinates: its Newton matrix is most of a working-set round)."""
        return self.d >= COSTLY_FROM

    @property
    def correctors(self) -> int:
        """Gondzio's centrality correctors per interior-point iteration: 4 on a costly span
        (of at least :data:`COSTLY_FROM` coordinates), where a solve (``O(nb + (nI + nJ + k)
        D)``) is far cheaper than the factorisation (``O((nI + nJ + k) D^2 + D^3 / 3)``;
        Spambase's RBF kernel at lambda 1e-3, D = 1,500 to 1,800: 0.02 s against 0.18 s; four
        cut its interior point's iterations by a third), else none (a binary 600 x 20,000 x
        300 set's steps on spans of up to 225 coordinates took another path, 17 rounds instead
        of 14)."""
        return 4 if self.costly else 0

    def __init__(self, XI, XJ, bi, bj, *, used, **kw):
        super().__init__(XI, XJ, bi, bj, **kw)
        self.used = np.asarray(used, np.intp)
        self.d1 = self.nI + self.used.size
        # the pair rows, contiguous: XI's are 0 beyond its first nI coordinates (T is lower
        # triangular), XJ's (of the used negatives) beyond d1; each pair's negative among them
        self._XI1 = np.ascontiguousarray(self.XI[:, :self.nI])
        self._XJ1 = np.ascontiguousarray(self.XJ[self.used, :self.d1])
        self._T = np.asfortranarray(np.vstack([self.XI[:, :self.d1], self._XJ1]))
        self._ju = np.searchsorted(self.used, self.bj)
        self._dense = self.nb > DENSE_BAND * self.nI * self.used.size

    def _row_scores(self, w):
        """``(XI w, XJ w)`` from the nonzero blocks: XI's first nI coordinates and the used
        rows of XJ in the first d1 (the dense products read every zero: on Spambase's RBF
        kernel at lambda 1e-3, 1,720 coordinates, 725 x 725 and 566 x 1,291 blocks instead of
        725 and 984 rows of 1,720)."""
        t = np.zeros(self.nJ)
        t[self.used] = self._XJ1 @ w[:self.d1]
        return self._XI1 @ w[:self.nI], t

    def _row_sum(self, cols, rows):
        """``XI^T cols - XJ^T rows`` from the nonzero blocks (:meth:`_row_scores`)."""
        out = np.zeros(self.d)
        out[:self.nI] = self._XI1.T @ cols
        out[:self.d1] -= self._XJ1.T @ rows[self.used]
        return out

    def _scattered_pair_system(self, s23, z23):
        """The parent's (``1/delta``, ``D2``, the pair sum, and per group ``sigma_j`` and
        ``sum_{b in B_j} c_b z_b``), its pair sum as ``T^T diag(r) T - X - X^T`` (class
        docstring)."""
        if not self._scattered:
            return super()._scattered_pair_system(s23, z23)
        nb, nI, nJ, d1, used = self.nb, self.nI, self.nJ, self.d1, self.used
        inv_delta, D2, omega, c = (np.empty(nb) for _ in range(4))
        cols_om, rows_om, sigma, rows_c = np.empty(nI), np.empty(nJ), np.empty(nJ), np.empty(nJ)
        _scattered_scaling(self.bi, self.bj, s23[:nb], z23[:nb], s23[nb:], z23[nb:], self.pi,
                           inv_delta, D2, omega, c, cols_om, rows_om, sigma, rows_c)
        W_XJ, CT_XI = self._pair_products(omega, c if self.groups else None)
        S = np.zeros((self.d, self.d))
        if nb:
            _pair_sum(S, self._T, np.concatenate([cols_om, rows_om[used]]), self._XI1, W_XJ)
        fac = {"inv_delta": inv_delta, "D2": D2}
        if not self.groups:
            return fac, S, None, None
        Yw = np.zeros((nJ, self.d))  # (0 for a negative in no pair)
        Yw[used, :d1] = -rows_c[used, None] * self._XJ1
        Yw[used, :nI] += CT_XI
        return fac, S, sigma, Yw

    def _pair_products(self, omega, c):
        """``(W XJ, C^T XI)`` on the pair rows' coordinates (d1 for XJ, the first nI for XI),
        for the ``nI x |used|`` matrices W and C of the pair weights ``omega`` and ``c``
        (C^T XI is None when c is)."""
        nI, nu, d1 = self.nI, self.used.size, self.d1
        if self._dense:
            cells = self.bi * nu + self._ju
            W = np.bincount(cells, omega, nI * nu).reshape(nI, nu)
            CT_XI = None if c is None else \
                np.bincount(cells, c, nI * nu).reshape(nI, nu).T @ self._XI1
            return W @ self._XJ1, CT_XI
        CT_XI = None
        if c is not None:
            CT_XI = np.zeros((nu, nI))
            _scattered_pair_products(self.bi, self._ju, c, c[:0], self._XI1, CT_XI, CT_XI[:0])
        W_XJ = np.zeros((nI, d1))
        _scattered_pair_products(self._ju, self.bi, omega, omega[:0], self._XJ1, W_XJ,
                                 W_XJ[:0])
        return W_XJ, CT_XI


def _pair_sum(S, T, r, XI1, W_XJ) -> None:
    """``S[:d1, :d1] = T^T diag(r) T - X - X^T``: the pair sum ``T^T Lap T`` of
    :class:`TriangularSpanProblem` for the band graph's Laplacian ``Lap = [diag(cols), -W;
    -W^T, diag(rows)]`` (``r = (cols, rows)``, the weights' sums per pair row, nonnegative),
    with the cross term ``X = XI^T W XJ``, nonzero in its first nI rows: ``XI1^T (W XJ1)``.

    ``T^T diag(r) T = M^T M`` for the lower triangular ``M = diag(sqrt r) T``: LAPACK's
    ``dlauum`` (``d1^3 / 3`` flops, a third of the triangular product ``T^T (Lap T)``); the
    cross term is a triangular product of ``nI^2 d1`` flops (``XI1``, the first nI rows of T,
    is lower triangular)."""
    nI, d1 = XI1.shape[0], T.shape[0]
    product, info = lapack.dlauum(np.asfortranarray(np.sqrt(r)[:, None] * T), lower=1,
                                  overwrite_c=1)
    if info != 0:  # (an argument error: a bug, not a numerical failure)
        raise RuntimeError(f"dlauum failed with info={info}")
    _lower_to_symmetric(product, S)
    # X^T's nonzero columns (W XJ1)^T XI1, by dtrmm on the Fortran views of the C-ordered
    # arrays: (W XJ1)^T is d1 x nI, XI1^T upper triangular
    cross_t = blas.dtrmm(1.0, XI1.T, W_XJ.T, side=1, lower=0, trans_a=1, overwrite_b=1)
    S[:d1, :nI] -= cross_t
    S[:nI, :d1] -= cross_t.T


def _lower_to_symmetric(lower, out) -> None:
    """``out[:n, :n]`` set to the symmetric matrix whose lower triangle is ``lower``'s (n x n;
    its upper triangle is not read), by square tiles (a transposed strip reads slowly)."""
    n, t = lower.shape[0], TILE
    for r0 in range(0, n, t):
        r1 = min(r0 + t, n)
        for c0 in range(0, r0 + 1, t):
            c1 = min(c0 + t, n)
            tile = lower[r0:r1, c0:c1]
            if c0 == r0:  # a diagonal tile: its own lower triangle, mirrored
                low = np.tril(tile)
                out[r0:r1, c0:c1] = low + np.tril(low, -1).T
            else:
                out[r0:r1, c0:c1] = tile
                out[c0:c1, r0:r1] = tile.T
