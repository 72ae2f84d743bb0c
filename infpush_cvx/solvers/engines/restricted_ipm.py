"""Structured interior-point solver for the working-set model (:mod:`._working_set`).

The restricted problem (C-scaling; one group per working negative j for the Infinite Push, no
groups for RankSVM) is, with pair vectors ``z_b = x_i - x_j`` of the band pairs b = (i, j)::

    min   kappa/2 ||w||^2 + q_w.w + pen1 ||w||_1 + coef xi + c_e sum_b e_b
    s.t.  a_j - g_j.w + sum_{b in B_j} e_b <= xi      (group j; Infinite Push only)
          e_b >= pi_b (1 - z_b.w),  e_b >= 0           (band pair b, weight pi_b)

(``pen1 = 1`` with an epigraph ``-p <= w <= p`` for the l1 penalty; ``pi_b`` is the pair's weight,
the product of its rows' sample weights, 1 without weights: it enters as the scaled pair vector
``pi_b z_b``, so below ``z_b`` stands for that.) A general conic solver
factors its KKT matrix, whose elimination couples every band positive with all d weights (about
20 ms per iteration with qdldl at m = n = 1000, d = 100). Here the Newton system
``(P + G^T D G) dx = r`` of Mehrotra's predictor-corrector method (Nocedal & Wright, Numerical
Optimization, 2nd ed., section 16.6) is reduced exactly to a dense (d + 1) x (d + 1) system in
``y = (w, xi)``: the pair variables e are eliminated group by group (diagonal plus rank one,
Sherman-Morrison), the epigraph p coordinate-wise. With ``D1, D2, D3`` the scalings of the group,
pair and nonnegativity rows, ``delta_b = D2_b + D3_b`` and ``z^ = (z, 0)``, ``g^ = (g, 1)``::

    S = kappa I + sum_b (D2 D3 / delta)_b z^_b z^_b^T
          + sum_j gamma_j (g^_j + y_j)(g^_j + y_j)^T,
    gamma_j = 1 / (1/D1_j + sigma_j),  sigma_j = sum_{b in B_j} 1/delta_b,
    y_j = sum_{b in B_j} (D2_b / delta_b) z^_b

(plus ``4 / (1/D4 + 1/D5)`` on the diagonal for the l1 epigraph rows ``w - p <= 0``,
``-w - p <= 0``). The pair sum is ``X^T Lap X`` for the weighted Laplacian of the bipartite band
graph over the rows of the band positives and negatives, so an iteration costs
``O((nI + nJ) d^2 + nb d)`` and never forms a pair vector. For sparse data the pair vectors
are cheap instead (a8a: 28 nonzeros of 123): then they are passed as a sparse matrix ``Z``
(rows ``pi_b z_b``) and the pair sum is ``Z^T diag(omega) Z``, ``O(nb r^2)`` for r nonzeros a
row; or, with the rows XI and XJ, the Laplacian's sum is taken by their nonzeros
(``O((nI + nJ) r^2 + nb r + nI r d)``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dpotrf as _potrf, dpotrs as _potrs

from infpush_cvx.solvers.engines.common import dense
from infpush_cvx.solvers.engines.ipm_kernels import (
    _centrality_rhs, _complementarity_after, _corrector_rhs, _explicit_pair_products,
    _finish_system, _grid_back_substitute, _grid_einv_sums, _grid_pair_rows, _grid_scaling,
    _grid_sums, _group_rows, _largest_magnitude, _max_step, _pair_part, _scaled_rhs,
    _scattered_back_substitute, _scattered_differences, _scattered_einv_sums,
    _scattered_pair_products, _scattered_pair_rows, _scattered_scaling, _scattered_sums,
    _slack_steps, _sparse_cross_term, _sparse_group_rows, _sparse_weighted_gram,
    _step_in_place)


class RestrictedProblem:
    """The restricted problem in compact form.

    ``XI`` (nI x d) and ``XJ`` (nJ x d, dense or sparse) are the rows of the band positives and
    of the negatives; band pair b is ``(bi[b], bj[b])``. For the Infinite Push the groups are
    the rows of XJ (``groups=True``: pair b belongs to group ``bj[b]``) with linear pieces
    ``a - g w``.

    Alternatively ``Z`` (sparse, nb x d) gives the weighted pair vectors ``pi_b z_b`` explicitly;
    then ``XI``, ``XJ`` and ``bi`` are not used, ``bj`` is each pair's group and the number of
    groups is ``len(a)``.
    """

    #: Gondzio's centrality correctors per interior-point iteration (:func:`solve_restricted`):
    #: none here, where a solve costs as much as a factorisation (O(nb) passes against a
    #: d x d matrix of small d or sparse sums: a binary 600 x 20,000 x 300 set's l1 solve took
    #: 3.5 s without, 6.6 s with four).
    correctors = 0
    #: Whether an interior-point iteration is costly next to the rest of a working-set round
    #: (a dense Newton matrix of many coordinates), so that the working set solves the step
    #: more loosely (:func:`.restricted_step.restricted_step`'s ``costly_tol``): not here.
    costly = False

    def __init__(self, XI, XJ, bi, bj, *, coef, groups, a=None, g=None, c_e=0.0, q_w=None,
                 kappa=1.0, l1=False, pair_weight=None, Z=None):
        self.Z = None if Z is None else sp.csr_matrix(Z, dtype=float)
        self.bi, self.bj = np.asarray(bi, np.intp), np.asarray(bj, np.intp)
        rows = XI, XJ  # (sparse rows are summed by their nonzeros: _sparse_rows)
        if self.Z is None:
            self.XI, self.XJ = (np.ascontiguousarray(dense(X), float) for X in rows)
            self.nI, self.nJ, self.d = self.XI.shape[0], self.XJ.shape[0], self.XI.shape[1]
            self.nb = self.bi.size
        else:
            self.nb, self.d = self.Z.shape
            self.nI = self.nJ = 0
        self.pi = np.ones(self.nb) if pair_weight is None else np.asarray(pair_weight, float)
        self.groups, self.coef, self.c_e, self.kappa, self.l1 = groups, coef, c_e, kappa, l1
        # a group per row of XJ, or (explicit pair vectors) per entry of a
        self.k = (self.nJ if self.Z is None else len(a)) if groups else 0
        self.a = np.zeros(self.k) if a is None else np.asarray(a, float)
        self.g = np.zeros((self.k, self.d)) if g is None else np.asarray(g, float)
        self.q_w = np.zeros(self.d) if q_w is None else np.asarray(q_w, float)
        self.ny = self.d + (1 if groups else 0)
        self._ZT = None if self.Z is None else self.Z.T.tocsr()
        # every pair of the first g rows of XJ with every row of XI, group by group (the exact
        # model of a small problem): pair sums are then row and column sums of a g x nI array,
        # not scattered sums (np.bincount), 3x faster on the a8a subsets
        g = self.nb // max(self.nI, 1)
        self._grid = g if (self.Z is None and self.nI > 0 and self.nb == self.nI * g
                           and g <= self.nJ
                           and np.array_equal(self.bi, np.tile(np.arange(self.nI), g))
                           and np.array_equal(self.bj, np.repeat(np.arange(g), self.nI))) else 0
        # any other pairs of rows of XI and XJ: the grid's one-pass kernels, indexed
        self._scattered = self.Z is None and not self._grid
        if self._scattered:
            # the rows of XJ with band pairs: the pair sums of the reduced system touch only
            # these (the working set's band holds the pairs of the negatives near the max:
            # Spambase l1, 54 of 709 at the optimum), the groups' rank-one terms every row
            self._touched = np.unique(self.bj)
            self._bj_touched = np.searchsorted(self._touched, self.bj)
            self._XJ_touched = self.XJ[self._touched]
        # sparse rows (binary data): the pair sums of the reduced system by the rows' nonzeros
        self._csr = _sparse_rows(*rows, self.bj) if self.Z is None and self.nb else None

    def per_pair(self, x):
        """``x[bj]``: a value per row of XJ (or group) repeated for each of its pairs."""
        return np.repeat(x[:self._grid], self.nI) if self._grid else x[self.bj]

    # ---- the linear maps of the constraint rows ----------------------------------------------
    def zw(self, w):
        """``pi_b z_b . w`` for every band pair."""
        if self.Z is not None:
            return self.Z @ w
        if self._grid:
            diff = (self.XI @ w)[None, :] - (self.XJ[:self._grid] @ w)[:, None]
            return self.pi * diff.ravel()
        out = np.empty(self.nb)
        _scattered_differences(self.bi, self.bj, *self._row_scores(w), self.pi, out)
        return out

    def zT(self, v):
        """``sum_b v_b pi_b z_b``."""
        if self.Z is not None:
            return self._ZT @ v
        if self._grid:
            cols, rows = np.empty(self.nI), np.empty(self._grid)
            _grid_sums(v, self.pi, cols, rows)
            return self._grid_vector_sum(cols, rows)
        cols, rows = np.empty(self.nI), np.empty(self.nJ)
        _scattered_sums(self.bi, self.bj, v, self.pi, cols, rows)
        return self._row_sum(cols, rows)

    def _row_scores(self, w):
        """``(XI w, XJ w)``: the products of the rows of XI and of XJ with w."""
        return self.XI @ w, self.XJ @ w

    def _row_sum(self, cols, rows):
        """``XI^T cols - XJ^T rows``: a combination of the rows of XI less one of XJ."""
        return self.XI.T @ cols - self.XJ.T @ rows

    def _grid_vector_sum(self, cols, rows):
        """``sum_b u_b z_b`` on the grid from the column sums (per row of XI) and the row sums
        (per row of XJ) of u."""
        return self.XI.T @ cols - self.XJ[:self._grid].T @ rows

    def group_sum(self, v):
        """``sum_{b in B_j} v_b`` for every group j."""
        if self._grid:
            out = np.zeros(self.k)
            out[:self._grid] = v.reshape(self._grid, self.nI).sum(axis=1)  # (row j: negative j)
            return out
        return np.bincount(self.bj, v, self.k)

    def G(self, w, xi, e, p):
        """Rows ``G x`` (the constraints read ``G x <= h``)."""
        k, nb, d, g = self.k, self.nb, self.d, self._grid
        out = np.empty(self.n_rows)
        pairs, nonneg = out[k:k + nb], out[k + nb:k + 2 * nb]
        if g:
            sums = np.zeros(max(k, g))
            _grid_pair_rows(self.XI @ w, self.XJ[:g] @ w, self.pi, e, pairs, nonneg, sums[:g])
            sums = sums[:k]
        elif self._scattered:
            sums = np.empty(self.nJ)
            _scattered_pair_rows(self.bi, self.bj, *self._row_scores(w), self.pi, e, pairs,
                                 nonneg, sums)
        else:
            pairs[:] = -self.zw(w) - e
            nonneg[:] = -e
            sums = self.group_sum(e) if self.groups else None
        if self.groups:
            out[:k] = -(self.g @ w) - xi + sums
        if self.l1:
            out[k + 2 * nb:k + 2 * nb + d] = w - p
            out[k + 2 * nb + d:] = -w - p
        return out

    def h(self):
        """The right-hand side of ``G x <= h``: ``-a`` (groups), ``-pi`` (pairs), then zeros."""
        return np.concatenate([-self.a, -self.pi, np.zeros(self.n_rows - self.k - self.nb)])

    def split(self, z):
        """Split a row vector into (group, pair, nonneg, w - p, -w - p) parts (the last two
        empty without the l1 epigraph)."""
        k, nb, d = self.k, self.nb, self.d
        return (z[:k], z[k:k + nb], z[k + nb:k + 2 * nb], z[k + 2 * nb:k + 2 * nb + d],
                z[k + 2 * nb + d:])

    def multipliers(self, z):
        """The multipliers of the group rows (None without groups) and of the pair rows."""
        return (z[:self.k] if self.groups else None), z[self.k:self.k + self.nb]

    def GT(self, z, zT_pairs=None):
        """``G^T z`` as (w, xi, e, p) parts (p empty without the l1 epigraph); ``zT_pairs``:
        ``zT`` of the pair rows' part of z when the caller has it already."""
        z1, z2, z3, z4, z5 = self.split(z)
        gw = -(self.zT(z2) if zT_pairs is None else zT_pairs)
        gxi = 0.0
        ge = _pair_part(z1, self.bj, z2, z3) if self.groups else -z2 - z3
        if self.groups:
            gw -= self.g.T @ z1
            gxi = -z1.sum()
        if self.l1:
            gw += z4 - z5
        return gw, gxi, ge, -z4 - z5

    @property
    def n_rows(self):
        return self.k + 2 * self.nb + (2 * self.d if self.l1 else 0)

    def apply_H(self, D, w, xi, e, p):
        """``(P + G^T diag(D) G) x`` for x = (w, xi, e, p) (P is kappa on w, 0 elsewhere)."""
        hw, hxi, he, hp = self.GT(D * self.G(w, xi, e, p))
        return hw + self.kappa * w, hxi, he, hp

    # ---- the Newton system -------------------------------------------------------------------
    def factor(self, s, z):
        """Assemble and factor the reduced system for the scaling ``D = z / s``."""
        d, k, nb = self.d, self.k, self.nb
        S = np.zeros((self.ny, self.ny))
        pairs = slice(k, k + 2 * nb)
        system = self._grid_pair_system if self._grid else self._scattered_pair_system
        fac, S[:d, :d], sigma, Yw = system(s[pairs], z[pairs])
        if self.groups:
            V, gamma = np.empty((k, d + 1)), np.empty(k)
            _group_rows(s[:k], z[:k], sigma, self.g, Yw, V, gamma)
            S += _gram(V)
            fac.update(D1=z[:k] / s[:k], gamma=gamma)
        diag_w = np.full(d, float(self.kappa))
        if self.l1:
            w4, w5 = np.split(s[k + 2 * nb:] / z[k + 2 * nb:], 2)
            diag_w += 4.0 / (w4 + w5)
            fac.update(D4=1.0 / w4, D5=1.0 / w5)
        _finish_system(S, diag_w)  # (symmetric, regularised at round-off)
        # (LAPACK's potrf and potrs directly: scipy's cho_factor and cho_solve check and convert
        # their arguments, 10-30 us of each of the 100 to 500 calls of a solve)
        chol, info = _potrf(S, lower=True, clean=False)
        fac.update(chol=chol if info == 0 else None, S=S)
        return fac

    def _scattered_pair_system(self, s23, z23):
        """The pair part of the reduced system: ``1/delta``, ``D2``, ``sum_b omega_b z_b z_b^T``,
        and per group ``sigma_j`` and ``sum_{b in B_j} c_b z_b`` (None without groups)."""
        if self._csr is not None:
            return self._sparse_pair_system(s23, z23)
        nb, nI, nJ = self.nb, self.nI, self.nJ
        if self._scattered:
            # 1/delta, D2, omega pi^2, c pi and their sums per row in one pass
            inv_delta, D2, omega, c = (np.empty(nb) for _ in range(4))
            cols_om, rows_om, sigma, rows_c = np.empty(nI), np.empty(nJ), np.empty(nJ), np.empty(nJ)
            _scattered_scaling(self.bi, self.bj, s23[:nb], z23[:nb], s23[nb:], z23[nb:],
                               self.pi, inv_delta, D2, omega, c, cols_om, rows_om, sigma, rows_c)
            touched, XJt = self._touched, self._XJ_touched
            om_XI = np.zeros((touched.size, self.d))
            c_XI = np.zeros((touched.size if self.groups else 0, self.d))
            _scattered_pair_products(self.bi, self._bj_touched, omega,
                                     c if self.groups else c[:0], self.XI, om_XI, c_XI)
            # sum_b omega_b z_b z_b^T = X^T Lap X, Lap the band graph's weighted Laplacian
            # (its cross term XJ^T W^T XI: nJ d^2, fewer rows than XI^T W XJ's nI d^2), over
            # the rows of XJ with pairs
            S = _laplacian_sum(self.XI, cols_om, XJt, rows_om[touched], XJt.T @ om_XI)
            fac = {"inv_delta": inv_delta, "D2": D2}
            if not self.groups:
                return fac, S, None, None
            Yw = np.zeros((nJ, self.d))
            Yw[touched] = c_XI - rows_c[touched, None] * XJt
            return fac, S, sigma, Yw
        w2, w3 = s23[:nb] / z23[:nb], s23[nb:] / z23[nb:]
        inv_delta = 1.0 / (1.0 / w2 + 1.0 / w3)  # 1/(D2 + D3)
        omega = 1.0 / (w2 + w3)  # D2 D3 / delta
        c = w3 / (w2 + w3) if self.groups else np.zeros(0)  # D2 / delta
        fac = {"inv_delta": inv_delta, "D2": 1.0 / w2}
        # the explicit pair vectors Z: sum_b omega_b z_b z_b^T = Z^T diag(omega) Z, and per
        # group the rows sum_{b in B_j} c_b z_b
        S, Yw = np.zeros((self.d, self.d)), np.zeros((self.k, self.d))
        _explicit_pair_products(self.Z.indptr, self.Z.indices, self.Z.data, omega, c, self.bj,
                                S, Yw)
        if not self.groups:
            return fac, S, None, None
        return fac, S, self.group_sum(inv_delta), Yw

    def _sparse_pair_system(self, s23, z23):
        """:meth:`_scattered_pair_system` (any pairs, the grid's too) from the nonzeros of the
        rows: ``X^T Lap X`` as the weighted Gram matrices of XI and XJ less the cross term, and
        the groups' rows ``sum_{b in B_j} c_b z_b``, each ``O(r^2)`` or ``O(r d)`` a row of r
        nonzeros instead of ``O(d^2)`` (the a8a subsets, r = 14 of d = 123: 4x faster)."""
        nb, nI, nJ, d = self.nb, self.nI, self.nJ, self.d
        inv_delta, D2, omega, c = (np.empty(nb) for _ in range(4))
        cols_om, rows_om, sigma, rows_c = np.empty(nI), np.empty(nJ), np.empty(nJ), np.empty(nJ)
        _scattered_scaling(self.bi, self.bj, s23[:nb], z23[:nb], s23[nb:], z23[nb:], self.pi,
                           inv_delta, D2, omega, c, cols_om, rows_om, sigma, rows_c)
        (Ip, Ii, Iv), (Jp, Ji, Jv), by_J = self._csr
        S = np.zeros((d, d))
        _sparse_weighted_gram(Ip, Ii, Iv, cols_om, S)
        _sparse_weighted_gram(Jp, Ji, Jv, rows_om, S)
        if by_J:  # (the cross term summed over the side with fewer nonzeros)
            _sparse_cross_term(self.bi, self.bj, omega, Ip, Ii, Iv, Jp, Ji, Jv,
                               np.empty((nJ, d)), S)
        else:
            _sparse_cross_term(self.bj, self.bi, omega, Jp, Ji, Jv, Ip, Ii, Iv,
                               np.empty((nI, d)), S)
        fac = {"inv_delta": inv_delta, "D2": D2}
        if not self.groups:
            return fac, S, None, None
        Yw = np.zeros((nJ, d))
        _sparse_group_rows(self.bi, self.bj, c, rows_c, Ip, Ii, Iv, Jp, Ji, Jv, Yw)
        return fac, S, sigma, Yw

    def _grid_pair_system(self, s23, z23):
        """:meth:`_scattered_pair_system` on the grid, in one pass over the pairs and BLAS."""
        if self._csr is not None:
            return self._sparse_pair_system(s23, z23)
        g, nI, nb, d = self._grid, self.nI, self.nb, self.d
        XJg = self.XJ[:g]
        inv_delta, D2 = np.empty(nb), np.empty(nb)
        Om, Cm = np.empty((g, nI)), np.empty((g, nI))
        cols_om, rows_om, rows_c = np.empty(nI), np.empty(g), np.empty(g)
        sigma = np.zeros(max(self.k, g))
        _grid_scaling(s23[:nb], z23[:nb], s23[nb:], z23[nb:], self.pi, inv_delta, D2, Om, Cm,
                      cols_om, rows_om, sigma[:g], rows_c)
        S = _laplacian_sum(self.XI, cols_om, XJg, rows_om, (XJg.T @ Om) @ self.XI)
        fac = {"inv_delta": inv_delta, "D2": D2}
        if not self.groups:
            return fac, S, None, None
        Yw = np.zeros((self.k, d))
        Yw[:g] = Cm @ self.XI - rows_c[:, None] * XJg
        return fac, S, sigma[:self.k], Yw

    def _Einv(self, fac, r_e):
        """``E^{-1} r_e``: per pair ``r_e / delta``, less per group its Sherman-Morrison term
        ``gamma_j / delta_b sum_{b' in B_j} r_e / delta``."""
        t = r_e * fac["inv_delta"]
        if self.groups:
            t -= fac["inv_delta"] * self.per_pair(fac["gamma"] * self.group_sum(t))
        return t

    def _gamma(self, fac):
        """The groups' Sherman-Morrison weights per row of XJ (zeros without groups)."""
        return fac["gamma"] if self.groups else np.zeros(self.nJ)

    def _grid_gamma(self, fac):
        return fac["gamma"][:self._grid] if self.groups else np.zeros(self._grid)

    def solve(self, fac, rw, rxi, re, rp):
        """Solve ``(P + G^T D G) dx = r`` for dx = (w, xi, e, p) (p empty without l1)."""
        d, D2 = self.d, fac["D2"]
        if self.l1:
            D4, D5 = fac["D4"], fac["D5"]
            rw = rw - (D5 - D4) * rp / (D4 + D5)
        # y-equation: S dy = r_y - H_ye E^{-1} r_e
        ry = np.empty(self.ny)
        if self._grid:
            g, XJg = self._grid, self.XJ[:self._grid]
            cols, rows, t_groups = np.empty(self.nI), np.empty(g), np.zeros(max(self.k, g))
            _grid_einv_sums(re, fac["inv_delta"], self._grid_gamma(fac), D2, self.pi, cols, rows,
                            t_groups[:g])
            ry[:d] = rw - self._grid_vector_sum(cols, rows)
            t_groups = t_groups[:self.k]
        elif self._scattered:
            cols, rows, t_groups = np.empty(self.nI), np.empty(self.nJ), np.empty(self.nJ)
            _scattered_einv_sums(self.bi, self.bj, re, fac["inv_delta"], self._gamma(fac), D2,
                                 self.pi, cols, rows, t_groups)
            ry[:d] = rw - self._row_sum(cols, rows)
        else:
            t = self._Einv(fac, re)
            ry[:d] = rw - self.zT(t * D2)
            if self.groups:
                t_groups = self.group_sum(t)
        if self.groups:
            D1 = fac["D1"]
            tg = D1 * t_groups
            ry[:d] += self.g.T @ tg
            ry[d] = rxi + tg.sum()
        if fac["chol"] is not None:
            dy = _potrs(fac["chol"], ry, lower=True)[0]
        else:
            dy = np.linalg.lstsq(fac["S"], ry, rcond=None)[0]
        dw = dy[:d]
        dxi = dy[d] if self.groups else 0.0
        # e = E^{-1} (r_e - H_ey dy),  (H_ey dy)_b = D2_b z_b.dw - D1_j (g_j.dw + dxi)
        h_groups = D1 * (self.g @ dw + dxi) if self.groups else None
        if self._grid:
            de = np.empty(self.nb)
            _grid_back_substitute(re, self.XI @ dw, XJg @ dw,
                                  h_groups[:g] if self.groups else np.zeros(g),
                                  fac["inv_delta"], self._grid_gamma(fac), D2, self.pi, de)
        elif self._scattered:
            de = np.empty(self.nb)
            _scattered_back_substitute(self.bi, self.bj, re, *self._row_scores(dw),
                                       h_groups if self.groups else np.zeros(self.nJ),
                                       fac["inv_delta"], self._gamma(fac), D2, self.pi, de)
        else:
            hy = D2 * self.zw(dw)
            if self.groups:
                hy -= self.per_pair(h_groups)
            de = self._Einv(fac, re - hy)
        dp = (rp - (D5 - D4) * dw) / (D4 + D5) if self.l1 else np.zeros(0)
        return dw, dxi, de, dp


def _laplacian_sum(XI, cols, XJ, rows, cross):
    """``sum_b omega_b z_b z_b^T = X^T Lap X`` for the band graph's weighted Laplacian:
    ``XI^T diag(cols) XI + XJ^T diag(rows) XJ - C - C^T``, with ``cols`` and ``rows`` the sums of
    the (nonnegative) weights ``omega_b`` per row of XI and of XJ and ``C`` their cross term
    ``XI^T W XJ`` (or its transpose: the sum is the same)."""
    return (_gram(np.sqrt(cols)[:, None] * XI) + _gram(np.sqrt(rows)[:, None] * XJ)
            - cross - cross.T)


#: Rows with at most this share of nonzeros are summed by their nonzeros
#: (:meth:`RestrictedProblem._sparse_pair_system`; against BLAS on the dense rows, measured on
#: random 0/1 rows of 57 to 300 features: 2-10x faster at 0.05, 1.3-3x at 0.1, even at 0.2).
SPARSE_SHARE = 0.15


def _sparse_rows(XI, XJ, bj):
    """The CSR arrays of the rows XI and XJ (dense or sparse) and whether the cross term is
    summed over XJ's side, or None when the rows are too dense for it (more than
    ``SPARSE_SHARE`` nonzeros)."""
    nnz_I, nnz_J = (np.diff(sp.csr_matrix(X).indptr) if sp.issparse(X) else
                    np.count_nonzero(X, axis=1) for X in (XI, XJ))
    size = (XI.shape[0] + XJ.shape[0]) * XI.shape[1]
    if nnz_I.sum() + nnz_J.sum() > SPARSE_SHARE * size:
        return None
    I, J = (sp.csr_matrix(X, dtype=float) for X in (XI, XJ))
    with_pairs = np.zeros(XJ.shape[0], dtype=bool)
    with_pairs[bj] = True
    by_J = nnz_J[with_pairs].sum() <= nnz_I.sum()
    return (I.indptr, I.indices, I.data), (J.indptr, J.indices, J.data), by_J


def _gram(A):
    """``A^T A``: NumPy hands a product of an array with its own transpose to BLAS's symmetric
    rank-k update, half the work of ``(A * w)^T A``, the general product it replaces."""
    return A.T @ A


#: The weight of the uniform start in a start from guessed multipliers (the rest: the guess).
_UNIFORM_SHARE = 0.1


def _start_multipliers(prob: RestrictedProblem, z_groups, z_pairs):
    """Start multipliers ``(z1, z2)`` of the group rows and the pair rows ``e_b >= pi_b (1 -
    z_b.w)`` from a guess: the guess's groups scaled to sum ``coef`` and each pair's share
    ``z2 / z1`` of its group's multiplier, both blended with the uniform start (``coef / k``,
    half), a tenth of it. Feasible for the xi and e rows of the dual (``sum z1 = coef``,
    ``0 < z2 < z1`` of the group) like the uniform start, and near the last step's optimum,
    which the next step's differs from by the negatives and pairs added: 10-20% fewer
    interior-point iterations on Spambase, the a8a subsets and the binary sets. A guess
    without a positive group multiplier gives the uniform start."""
    mu = np.maximum(np.asarray(z_groups, float), 0.0)
    nu = np.maximum(np.asarray(z_pairs, float), 0.0)
    if mu.shape != (prob.k,) or nu.shape != (prob.nb,):
        raise ValueError(f"multipliers: {prob.k} group and {prob.nb} pair multipliers "
                         f"expected, got {mu.shape} and {nu.shape}")
    u = _UNIFORM_SHARE
    total = float(mu.sum())
    if not total > 0:
        mu, nu, u = np.ones(prob.k), np.full(prob.nb, 0.5), 1.0
        total = float(prob.k)
    z1 = (1.0 - u) * (prob.coef / total) * mu + u * prob.coef / prob.k
    of_group = prob.per_pair(mu)
    share = np.clip(np.divide(nu, of_group, out=np.full(prob.nb, 0.5), where=of_group > 0),
                    0.0, 1.0)
    return z1, prob.per_pair(z1) * ((1.0 - u) * share + 0.5 * u)


#: An error this many times the best one, once that is below the stall level, ends the solve:
#: the round-off floor was passed (a growth of 10 below ``tol_almost`` only, as before, let an
#: a8a sample's l2 steps run 3-5 iterations past it, 92 interior-point iterations against 82).
_FLOOR_GROWTH = 4.0


#: Iterative refinement of the Newton directions once the error is below this.
_REFINE_BELOW = 1e-5


def _at_the_floor(err, best, slow, stall_below, tol_almost) -> bool:
    """Whether an interior-point solve has reached the round-off floor of its Newton solves,
    where its best iterate (error ``best``) will not be improved upon: the error ``err`` has
    grown to ``_FLOOR_GROWTH`` times the best one, below ``min(stall_below, 100 tol_almost)``
    (past the floor the dual residual grows as mu -> 0: the a8a subsets, from 2e-7 to 6e-4 in
    five iterations, or from 1e-5 to 5e-5 in one); or ``slow``, the iterations since the last
    20% decrease, has reached 5 with the best below ``stall_below`` (slow progress above it is
    left to run: on Spambase l1 at lambda 1e-4 stopping after 10 slow iterations sent three
    60,000-pair steps to Clarabel, 14 s each)."""
    return best <= stall_below and (
        slow >= 5 or (best <= 100 * tol_almost and err > _FLOOR_GROWTH * best))


#: The accuracy to which :func:`solve_restricted` goes on past a loose ``tol`` when the
#: caller's certificate of its iterate is within :data:`_NEAR_CERTIFIED` times its target.
_TIGHT = 1e-8
_NEAR_CERTIFIED = 100.0


def solve_restricted(prob: RestrictedProblem, *, center=None, multipliers=None, tol=1e-8,
                     tol_almost=1e-6, max_iter=100, refine=2, more_refine=6, trace=False,
                     deadline=None, stall_below=None, certificate=None):
    """Mehrotra predictor-corrector on the restricted problem, from an infeasible start.

    Stops with ``status="optimal"`` when the relative primal residual, dual residual and
    complementarity gap are all <= ``tol``. When progress stalls at the round-off floor (once the
    error is below ``stall_below``, default ``100 tol_almost``, no 20% decrease in 5 iterations;
    or, once it was below ``tol_almost``, an error 10 times the best one) or ``max_iter`` is
    reached, the best iterate is returned with status ``"almost_optimal"`` if its error is
    <= ``tol_almost``, else ``"stalled"`` / ``"max_iter"``.
    ``refine`` steps of iterative refinement on the unreduced Newton system are taken near the
    end, and up to ``more_refine`` more while each still shrinks the residual by a tenth (on
    Spambase l1 at lambda 3e-4 the last steps of 45,000 and 65,000 pairs stalled at errors
    2e-6 and 5e-7 with two and were solved to 9e-9 and 4e-9 with more, the same iterations;
    a fixed 8 cost 10-25% on Ionosphere, planted and the a8a subsets, these nothing).
    ``multipliers``: ``(z_groups, z_pairs)``, a guess of the group and pair multipliers (the
    working set's last step's, carried over by negative and pair), from which the start's are
    taken (:func:`_start_multipliers`; groups only).
    Each iteration takes Mehrotra's corrector, then up to ``prob.correctors`` centrality
    correctors (Gondzio, Comput. Optim. Appl. 6, 1996: each moves the products ``s z`` of a
    trial step twice as long into ``[0.1, 10] sigma mu``, one more solve with the same factor,
    kept while it lengthens the step by 1%).
    ``certificate``: ``(gap_of, target)``, the caller's test of an iterate when ``tol`` is
    looser than :data:`_TIGHT` (a step of a cutting-plane method solved loosely while its
    model is far from the optimum): ``gap_of(w, z_groups, z_pairs)`` is the relative duality
    gap the iterate certifies for the caller's whole problem. Once the error is at most
    ``tol``, an iterate that certifies ``target`` ends the solve, and one within
    :data:`_NEAR_CERTIFIED` times it makes the solve go on to :data:`_TIGHT`, testing each
    iterate: the model may hold the optimum, and the loose step would cost the caller a round
    for its last decades.
    ``trace`` prints the residuals per iteration. Once ``deadline`` (a
    :class:`~._deadline.Deadline`, or None) has expired, or has less time left than the last
    iteration took, it stops with status ``"time_limit"``.

    Returns ``(w, z_groups, z_pairs, info)``: the weights, the multipliers of the group rows and of
    the pair rows (``z_groups`` is None without groups), and a dict with ``status``,
    ``iterations`` and ``error`` (the largest of the three relative measures).
    """
    d, nb, nr, h = prob.d, prob.nb, prob.n_rows, prob.h()
    stall_below = 100 * tol_almost if stall_below is None else stall_below
    if nr == 0:  # RankSVM without band pairs and l2: min kappa/2 ||w||^2 + q_w.w
        return -prob.q_w / prob.kappa, None, np.zeros(0), {"status": "optimal", "iterations": 0,
                                                           "error": 0.0}
    # Start: w at the centre with e, xi, p primal feasible; multipliers feasible for the xi, e
    # and p rows of the dual (sum z1 = coef, z2 + z3 = z1 of the group, z4 + z5 = 1); then
    # slacks and multipliers shifted to balance the products s_i z_i (Mehrotra's heuristic,
    # Nocedal & Wright, section 14.2).
    w = np.zeros(d) if center is None else np.asarray(center, float).copy()
    e = np.maximum(0.0, prob.pi - prob.zw(w))
    xi = float(np.max(prob.a - prob.g @ w + prob.group_sum(e))) if prob.groups and prob.k else 0.0
    p = np.abs(w) if prob.l1 else np.zeros(0)  # (the epigraph, empty without l1)
    s = np.maximum(h - prob.G(w, xi, e, p), 0.0)
    z1 = np.full(prob.k, prob.coef / max(prob.k, 1))
    z2 = 0.5 * (prob.per_pair(z1) if prob.groups else np.full(nb, prob.c_e))
    z3 = z2
    if multipliers is not None and prob.groups and prob.k:
        z1, z2 = _start_multipliers(prob, *multipliers)
        z3 = prob.per_pair(z1) - z2
    z = np.concatenate([z1, z2, z3] + ([np.full(2 * d, 0.5)] if prob.l1 else []))
    sz = float(s @ z)
    if sz <= 0:  # the start is on the boundary of every row
        s += 1.0
        sz = float(s @ z)
    s += 0.5 * sz / z.sum()
    z += 0.5 * sz / s.sum()

    tiny = np.finfo(float).tiny
    h_size = float(np.abs(h).max(initial=0.0))

    def amax(v):
        if isinstance(v, np.ndarray) and v.ndim == 1:
            return _largest_magnitude(v)
        return float(np.abs(v).max(initial=0.0))

    terms_start = []

    def residuals(w, xi, e, p, s, z):
        """Dual residual (largest over the blocks w, xi, e, p, each relative to the size of its
        terms), primal residual relative to 1 + |h| and the gap relative to the objective's terms:
        scale-free, as the objective's scale moves with C = 1/lambda over many decades."""
        z1, z2, _, z4, z5 = prob.split(z)
        zT_pairs = prob.zT(z2)
        gw, gxi, ge, gp = prob.GT(z, zT_pairs)
        # the terms of the w block (they cancel at an LP's optimum, so not gw itself; g is
        # 0 x d without groups)
        scale_w = max(amax(prob.kappa * w), amax(prob.q_w), amax(zT_pairs),
                      amax(prob.g.T @ z1), amax(z4), amax(z5), tiny)
        rdw = prob.kappa * w + prob.q_w + gw
        rdxi = (prob.coef + gxi) if prob.groups else 0.0
        rde = prob.c_e + ge
        rdp = 1.0 + gp
        res_d = amax(rdw) / scale_w
        if prob.groups:
            res_d = max(res_d, abs(rdxi) / prob.coef)
        res_d = max(res_d, amax(rde) / max(prob.c_e, amax(z1), amax(z2), tiny), amax(rdp))
        rp_ = prob.G(w, xi, e, p) + s - h
        res_p = amax(rp_) / (1.0 + h_size)
        terms = (0.5 * prob.kappa * (w @ w) + abs(prob.q_w @ w) + prob.c_e * np.abs(e).sum()
                 + (prob.coef * abs(xi) if prob.groups else 0.0) + p.sum())
        if not terms_start:
            terms_start.append(terms)
        # (floored at 1e-3 of their size at the start, for an optimum with objective 0)
        res_g = float(s @ z) / max(terms, 1e-3 * terms_start[0], tiny)
        if trace:
            print(f"    dual {res_d:.1e} primal {res_p:.1e} gap {res_g:.1e}", end="")
        return (rdw, rdxi, rde, rdp), rp_, max(res_d, res_p, res_g)

    status = "max_iter"
    # (the caller's certificate is worth its cost only on a step solved loosely)
    testing = certificate if certificate is not None and tol > _TIGHT else None
    asked = tol  # (met, whatever happens after going on towards _TIGHT)
    info_certified = False
    best = None  # the iterate with the smallest error measure, returned if progress stalls
    it = last_progress = 0
    last_began = None if deadline is None else deadline.elapsed()
    for it in range(1, max_iter + 1):
        (rdw, rdxi, rde, rdp), rp_, err = residuals(w, xi, e, p, s, z)
        mu = float(s @ z) / nr
        if trace:
            print(f"{it:3d} error={err:.2e} mu={mu:.2e}", flush=True)
        if best is None or err < 0.8 * best[0]:
            last_progress = it
        if best is None or err < best[0]:
            best = (err, w.copy(), z.copy())
        if testing is not None and err <= asked:
            gap = testing[0](w, *prob.multipliers(z))
            if gap <= testing[1]:
                status, info_certified = "optimal", True
                break
            if gap <= _NEAR_CERTIFIED * testing[1]:
                tol = _TIGHT  # (going on, each iterate tested)
            else:
                testing = None
        if err <= tol:
            status = "optimal"
            break
        if deadline is not None:
            # (stopped before an iteration as long as the last would end past the limit)
            now = deadline.elapsed()
            if not deadline.allows(now - last_began):
                status = "time_limit"
                break
            last_began = now
        if _at_the_floor(err, best[0], it - last_progress, stall_below, tol_almost):
            status = "stalled"
            break
        fac = prob.factor(s, z)

        def direction(rc, refined=True):
            # dx from (P + G^T D G) dx = -r_d - G^T (D r_p - rc / s), with iterative refinement
            # on the unreduced operator (the reduced solve loses accuracy as D spreads out)
            gw, gxi, ge, gp = prob.GT(_scaled_rhs(z, s, rp_, rc))
            rhs = [-rdw - gw, -rdxi - gxi, -rde - ge, -rdp - gp]
            dx = prob.solve(fac, *rhs)
            # refinement is needed near the end only (refining whenever progress stalled saved a
            # Clarabel fallback on one a8a subset but cost 30% on Spambase l1 at lambda 1e-4)
            last = np.inf
            for step in range(refine + more_refine if refined and best[0] < _REFINE_BELOW
                              else 0):
                res = [r - hx for r, hx in zip(rhs, prob.apply_H(z / s, *dx))]
                size = max(map(amax, res))
                if size <= 1e-14 * max(1.0, *map(amax, rhs)) or (
                        step >= refine and size > 0.9 * last):
                    break  # at round-off, or (past refine steps) no longer converging
                last = size
                dx = [a + b for a, b in zip(dx, prob.solve(fac, *res))]
            return (*dx, *_slack_steps(z, s, prob.G(*dx), rp_, rc))

        # (the affine direction only sets sigma and the corrector's second-order term: the
        # corrector's solve, refined, takes the step; refining both cost 10% more, no iteration
        # fewer, on the a8a subsets)
        aff = direction(s * z, refined=False)
        a_aff = _max_step(s, aff[4], z, aff[5])
        mu_aff = _complementarity_after(s, aff[4], z, aff[5], a_aff) / nr
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        # Mehrotra's corrector, then up to ``prob.correctors`` of Gondzio's centrality
        # correctors (each a solve with the same factor; kept while it lengthens the step by
        # 1%), unrefined: the one taken is solved again refined when refinement applies
        rc = _corrector_rhs(s, z, aff[4], aff[5], sigma * mu)
        correctors = prob.correctors
        step = direction(rc, refined=not correctors)
        a_step = _max_step(s, step[4], z, step[5])
        for _ in range(correctors):
            if a_step >= 1.0:
                break
            rc_c = _centrality_rhs(rc, s, step[4], z, step[5], min(1.0, 2.0 * a_step),
                                   sigma * mu)
            trial = direction(rc_c, refined=False)
            a_trial = _max_step(s, trial[4], z, trial[5])
            if a_trial < 1.01 * a_step:
                break
            rc, step, a_step = rc_c, trial, a_trial
        if correctors and best[0] < _REFINE_BELOW:
            step = direction(rc)
            a_step = _max_step(s, step[4], z, step[5])
        dw, dxi, de, dp, ds, dz = step
        alpha = 0.99 * a_step
        w = w + alpha * dw
        xi = xi + alpha * dxi
        e += alpha * de
        p = p + alpha * dp
        _step_in_place(s, ds, z, dz, alpha)  # (best keeps copies of w and z)
        if not (np.all(np.isfinite(w)) and np.isfinite(mu)):
            status = "failed"
            break
    if status != "optimal":
        w, z = best[1], best[2]
        status = ("optimal" if best[0] <= asked else
                  "almost_optimal" if best[0] <= tol_almost else status)
    return (w, *prob.multipliers(z), {"status": status, "iterations": it, "error": best[0],
                                      "certified": info_certified})
