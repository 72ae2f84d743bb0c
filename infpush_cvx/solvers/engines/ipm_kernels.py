"""The compiled kernels of the structured interior-point method (:mod:`.restricted_ipm`).

Each is one pass over the constraint rows or the pairs, fusing the arithmetic that NumPy would
spread over four to ten passes and temporaries: the restricted problems of the a8a subsets have
450,000 rows and 219,000 pairs, and these passes are most of an iteration's time.
"""

from __future__ import annotations

import numba as nb
import numpy as np


# ---- fused elementwise kernels over the constraint rows (a restricted problem of the a8a
# subsets has 450,000 rows: one pass each instead of four to six NumPy temporaries) ----------

@nb.njit(cache=True, nogil=True)
def _scaled_rhs(z, s, rp, rc):
    """``(z / s) rp - rc / s``, the row part of the Newton right-hand side."""
    out = np.empty_like(z)
    for i in range(z.size):
        out[i] = (z[i] * rp[i] - rc[i]) / s[i]
    return out


@nb.njit(cache=True, nogil=True)
def _slack_steps(z, s, Gdx, rp, rc):
    """The multiplier and slack steps of a Newton direction: ``dz = (z / s)(G dx + r_p) -
    rc / s`` and ``ds = -(rc + s dz) / z``."""
    dz = np.empty_like(z)
    ds = np.empty_like(z)
    for i in range(z.size):
        dz[i] = (z[i] * (Gdx[i] + rp[i]) - rc[i]) / s[i]
        ds[i] = -(rc[i] + s[i] * dz[i]) / z[i]
    return ds, dz


@nb.njit(cache=True, nogil=True)
def _max_step(s, ds, z, dz):
    """The largest ``a <= 1`` with ``s + a ds >= 0`` and ``z + a dz >= 0`` (the ratio test;
    s, z > 0)."""
    a = 1.0
    for i in range(s.size):
        if ds[i] < 0.0 and -s[i] > a * ds[i]:
            a = -s[i] / ds[i]
        if dz[i] < 0.0 and -z[i] > a * dz[i]:
            a = -z[i] / dz[i]
    return a


@nb.njit(cache=True, nogil=True)
def _step_in_place(s, ds, z, dz, a):
    """``s += a ds`` and ``z += a dz``."""
    for i in range(s.size):
        s[i] += a * ds[i]
        z[i] += a * dz[i]


@nb.njit(cache=True, nogil=True)
def _complementarity_after(s, ds, z, dz, a):
    """``(s + a ds) . (z + a dz)``."""
    total = 0.0
    for i in range(s.size):
        total += (s[i] + a * ds[i]) * (z[i] + a * dz[i])
    return total


@nb.njit(cache=True, nogil=True)
def _corrector_rhs(s, z, ds, dz, sigma_mu):
    """``s z + ds dz - sigma mu``, Mehrotra's corrector."""
    out = np.empty_like(s)
    for i in range(s.size):
        out[i] = s[i] * z[i] + ds[i] * dz[i] - sigma_mu
    return out


@nb.njit(cache=True, nogil=True)
def _centrality_rhs(rc, s, ds, z, dz, a, target):
    """``rc - t`` for Gondzio's centrality corrector (Gondzio, Comput. Optim. Appl. 6, 1996):
    ``t`` moves each product ``v = (s + a ds)(z + a dz)`` of the trial step ``a`` into
    ``[0.1 target, 10 target]``, by at most ``-10 target`` for a large product."""
    lo, hi = 0.1 * target, 10.0 * target
    out = np.empty_like(rc)
    for i in range(rc.size):
        v = (s[i] + a * ds[i]) * (z[i] + a * dz[i])
        t = lo - v if v < lo else (max(hi - v, -hi) if v > hi else 0.0)
        out[i] = rc[i] - t
    return out


@nb.njit(cache=True, nogil=True)
def _largest_magnitude(v):
    """``max_i |v_i|`` (0 for an empty v; NaN if v holds one), without the temporary of
    ``np.abs(v).max()``."""
    out = 0.0
    for i in range(v.size):
        a = abs(v[i])
        if a > out:
            out = a
        elif a != a:
            return a
    return out


@nb.njit(cache=True, nogil=True)
def _finish_system(S, diag_w):
    """The reduced system in place: ``diag_w`` added to the diagonal of its w block, made exactly
    symmetric (the mean of S and S^T) and regularised at round-off by ``1e-13 max(1, max_i
    |S_ii|)`` on its diagonal, in one pass (NumPy took five over the matrix)."""
    n = S.shape[0]
    for i in range(diag_w.size):
        S[i, i] += diag_w[i]
    big = 1.0
    for i in range(n):
        for j in range(i):
            v = 0.5 * (S[i, j] + S[j, i])
            S[i, j] = v
            S[j, i] = v
        if abs(S[i, i]) > big:
            big = abs(S[i, i])
    reg = 1e-13 * big
    for i in range(n):
        S[i, i] += reg


@nb.njit(cache=True, nogil=True)
def _group_rows(s1, z1, sigma, g, Yw, V, gamma):
    """The groups' Sherman-Morrison weights ``gamma_j = 1 / (s1_j / z1_j + sigma_j)`` and the
    rows ``V_j = sqrt(gamma_j) (g_j + Yw_j, 1)`` whose Gram matrix is the groups' term of the
    reduced system, in one pass (NumPy took a sum, a stack and a product of k x d arrays)."""
    k, d = g.shape
    for j in range(k):
        gm = 1.0 / (s1[j] / z1[j] + sigma[j])
        gamma[j] = gm
        r = np.sqrt(gm)
        for f in range(d):
            V[j, f] = (g[j, f] + Yw[j, f]) * r
        V[j, d] = r


@nb.njit(cache=True, nogil=True)
def _pair_part(z_group, group, z2, z3):
    """The e block of ``G^T z`` with groups: ``ge_b = z_group[group_b] - z2_b - z3_b`` (any
    order of the pairs, the grid's too: one pass instead of a gather and two NumPy passes)."""
    ge = np.empty_like(z2)
    for b in range(z2.size):
        ge[b] = z_group[group[b]] - z2[b] - z3[b]
    return ge


@nb.njit(cache=True, nogil=True)
def _scattered_pair_products(bi, bj, om, c, XI, om_XI, c_XI):
    """The pair sums of the reduced system over scattered pairs b = (bi[b], bj[b]), in one pass:
    ``om_XI[j] += om_b XI[i]`` (``W^T XI`` for the nI x nJ matrix W of the weights ``om``) and,
    unless ``c`` is empty, ``c_XI[j] += c_b XI[i]`` (``C^T XI`` for the matrix C of ``c``).
    That is 2 nb d multiply-adds, where forming W and C densely for BLAS costs their
    allocation and 2 nI nJ d (Spambase l1 at lambda 1e-4: 80,000 pairs of 1,813 x 708 rows,
    d = 57). Both products read the same row XI[i] and write the rows of negative j, which
    the band's order (by negative) keeps in cache: ``W XJ`` instead wrote a scattered row of
    XI's length per pair."""
    d = XI.shape[1]
    with_c = c.size > 0
    for b in range(bi.size):
        i, j = bi[b], bj[b]
        o = om[b]
        if with_c:
            cb = c[b]
            for f in range(d):
                x = XI[i, f]
                om_XI[j, f] += o * x
                c_XI[j, f] += cb * x
        else:
            for f in range(d):
                om_XI[j, f] += o * XI[i, f]

# ---- the grid of pairs (the exact model of a small problem: every pair of the first g rows of
# XJ with every row of XI, pair b = j nI + i): each map below is one pass over the pairs, row by
# row of the grid, instead of four to ten NumPy passes and temporaries (a8a subsets: 219,000
# pairs, about 40 ms an iteration before). The loops look alike on purpose: each fuses its own
# arithmetic into the one pass ----------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _grid_pair_rows(sI, sJ, pi, e, out2, out3, rows_e):
    """The pair and nonnegativity rows of ``G x``: ``-pi_b (s_i - t_j) - e_b`` and ``-e_b``, and the
    row sums of e (the group sums)."""
    nI, g = sI.size, rows_e.size
    for j in range(g):
        acc = 0.0
        for i in range(nI):
            b = j * nI + i
            out2[b] = -pi[b] * (sI[i] - sJ[j]) - e[b]
            out3[b] = -e[b]
            acc += e[b]
        rows_e[j] = acc


@nb.njit(cache=True, nogil=True)
def _grid_sums(v, pi, cols, rows):
    """Column and row sums of ``pi v`` over the grid.

    Its loop over the grid is the one of :func:`_grid_einv_sums` on purpose: that kernel fuses
    its Sherman-Morrison solve into the same pass instead of writing ``D2 t`` to a temporary
    and calling this one (one pass over the pairs per kernel, see the section comment)."""
    g, nI = rows.size, cols.size
    cols[:] = 0.0
    for j in range(g):
        acc = 0.0
        for i in range(nI):
            b = j * nI + i
            u = pi[b] * v[b]
            cols[i] += u
            acc += u
        rows[j] = acc


@nb.njit(cache=True, nogil=True)
def _grid_scaling(s2, z2, s3, z3, pi, inv_delta, D2, Om, Cm, cols_om, rows_om, sigma, rows_c):
    """The pair quantities of the reduced system: ``1/delta = 1/(D2 + D3)``, ``D2 = z2 / s2``,
    the g x nI matrices of ``omega pi^2`` and ``c pi`` (``omega = D2 D3 / delta``,
    ``c = D2 / delta``), and their row and column sums (``sigma``: those of 1/delta)."""
    g, nI = Om.shape
    cols_om[:] = 0.0
    for j in range(g):
        s_om = s_inv = s_c = 0.0
        for i in range(nI):
            b = j * nI + i
            w2, w3 = s2[b] / z2[b], s3[b] / z3[b]
            tot = w2 + w3
            inv_delta[b] = w2 * w3 / tot
            D2[b] = z2[b] / s2[b]
            om = pi[b] * pi[b] / tot
            c = pi[b] * w3 / tot
            Om[j, i] = om
            Cm[j, i] = c
            cols_om[i] += om
            s_om += om
            s_inv += inv_delta[b]
            s_c += c
        rows_om[j], sigma[j], rows_c[j] = s_om, s_inv, s_c


@nb.njit(cache=True, nogil=True)
def _grid_einv_sums(re, inv_delta, gamma, D2, pi, cols, rows, t_rows):
    """``t = E^{-1} r_e`` group by group (``t_b = (r_b - gamma_j sum_i r_b / delta_b) / delta_b``,
    Sherman-Morrison), reduced to its group sums and to the column and row sums of
    ``pi D2 t``: :func:`_grid_sums` fused into the solve's second pass (deliberately the same
    loop, without a temporary of the pairs' length)."""
    g, nI = rows.size, cols.size
    cols[:] = 0.0
    for j in range(g):
        raw = 0.0
        for i in range(nI):
            b = j * nI + i
            raw += re[b] * inv_delta[b]
        corr = gamma[j] * raw
        acc = tot = 0.0
        for i in range(nI):
            b = j * nI + i
            t = inv_delta[b] * (re[b] - corr)
            tot += t
            u = pi[b] * D2[b] * t
            cols[i] += u
            acc += u
        rows[j], t_rows[j] = acc, tot


@nb.njit(cache=True, nogil=True)
def _grid_back_substitute(re, sI, sJ, h_group, inv_delta, gamma, D2, pi, de):
    """``de = E^{-1} (r_e - H_ey dy)`` with ``(H_ey dy)_b = D2_b pi_b (s_i - t_j) - h_group_j``."""
    g, nI = h_group.size, sI.size
    for j in range(g):
        raw = 0.0
        for i in range(nI):
            b = j * nI + i
            r = re[b] - D2[b] * pi[b] * (sI[i] - sJ[j]) + h_group[j]
            de[b] = r
            raw += r * inv_delta[b]
        corr = gamma[j] * raw
        for i in range(nI):
            b = j * nI + i
            de[b] = inv_delta[b] * (de[b] - corr)


# ---- scattered pairs (the working set's band: pair b = (bi[b], bj[b]), any order): the grid's
# one-pass kernels above with the pairs' rows read from bi and bj. NumPy took three to six passes
# and temporaries of the pairs' length for each (gathers, bincounts, products): on Spambase l1
# at lambda 1e-4, 80,000 band pairs, most of an iteration ------------------------------------

@nb.njit(cache=True, nogil=True)
def _scattered_differences(bi, bj, sI, sJ, pi, out):
    """``out_b = pi_b (sI[bi_b] - sJ[bj_b])``: ``pi_b z_b . w`` from the rows' scores."""
    for b in range(bi.size):
        out[b] = pi[b] * (sI[bi[b]] - sJ[bj[b]])


@nb.njit(cache=True, nogil=True)
def _scattered_sums(bi, bj, v, pi, cols, rows):
    """The sums of ``pi v`` per row of XI (``cols``) and per row of XJ (``rows``)."""
    cols[:] = 0.0
    rows[:] = 0.0
    for b in range(bi.size):
        u = pi[b] * v[b]
        cols[bi[b]] += u
        rows[bj[b]] += u


@nb.njit(cache=True, nogil=True)
def _scattered_pair_rows(bi, bj, sI, sJ, pi, e, out2, out3, rows_e):
    """:func:`_grid_pair_rows` over scattered pairs: ``-pi_b (s_i - t_j) - e_b``, ``-e_b`` and
    the sums of e per row of XJ (the group sums)."""
    rows_e[:] = 0.0
    for b in range(bi.size):
        out2[b] = -pi[b] * (sI[bi[b]] - sJ[bj[b]]) - e[b]
        out3[b] = -e[b]
        rows_e[bj[b]] += e[b]


@nb.njit(cache=True, nogil=True)
def _scattered_scaling(bi, bj, s2, z2, s3, z3, pi, inv_delta, D2, om, c, cols_om, rows_om,
                       sigma, rows_c):
    """:func:`_grid_scaling` over scattered pairs: ``1/delta``, ``D2``, the weights
    ``omega pi^2`` and ``c pi`` per pair and their sums per row of XI and of XJ (``sigma``:
    those of 1/delta per row of XJ)."""
    cols_om[:] = 0.0
    rows_om[:] = 0.0
    sigma[:] = 0.0
    rows_c[:] = 0.0
    for b in range(bi.size):
        i, j = bi[b], bj[b]
        w2, w3 = s2[b] / z2[b], s3[b] / z3[b]
        tot = w2 + w3
        inv_delta[b] = w2 * w3 / tot
        D2[b] = z2[b] / s2[b]
        o = pi[b] * pi[b] / tot
        cb = pi[b] * w3 / tot
        om[b] = o
        c[b] = cb
        cols_om[i] += o
        rows_om[j] += o
        sigma[j] += inv_delta[b]
        rows_c[j] += cb


@nb.njit(cache=True, nogil=True)
def _scattered_einv_sums(bi, bj, re, inv_delta, gamma, D2, pi, cols, rows, t_rows):
    """:func:`_grid_einv_sums` over scattered pairs: ``t = E^{-1} r_e`` (per group j,
    ``t_b = (r_b - gamma_j sum_{b' in B_j} r_b' / delta_b') / delta_b``), reduced to its sums per
    group (``t_rows``) and to the sums of ``pi D2 t`` per row of XI and of XJ."""
    raw = np.zeros(gamma.size)
    for b in range(bi.size):
        raw[bj[b]] += re[b] * inv_delta[b]
    cols[:] = 0.0
    rows[:] = 0.0
    t_rows[:] = 0.0
    for b in range(bi.size):
        j = bj[b]
        t = inv_delta[b] * (re[b] - gamma[j] * raw[j])
        t_rows[j] += t
        u = pi[b] * D2[b] * t
        cols[bi[b]] += u
        rows[j] += u


@nb.njit(cache=True, nogil=True)
def _scattered_back_substitute(bi, bj, re, sI, sJ, h_group, inv_delta, gamma, D2, pi, de):
    """:func:`_grid_back_substitute` over scattered pairs: ``de = E^{-1} (r_e - H_ey dy)``."""
    raw = np.zeros(gamma.size)
    for b in range(bi.size):
        j = bj[b]
        r = re[b] - D2[b] * pi[b] * (sI[bi[b]] - sJ[j]) + h_group[j]
        de[b] = r
        raw[j] += r * inv_delta[b]
    for b in range(bi.size):
        de[b] = inv_delta[b] * (de[b] - gamma[bj[b]] * raw[bj[b]])


# ---- explicit pair vectors (sparse data: the rows ``pi_b z_b`` of a CSR matrix Z) ------------

@nb.njit(cache=True, nogil=True)
def _explicit_pair_products(indptr, indices, data, om, c, group, S, Yw):
    """``S += Z^T diag(om) Z`` (dense d x d) and, unless ``c`` is empty, ``Yw[group_b] += c_b
    Z_b`` (k x d), from the CSR arrays of Z: ``nb r^2`` multiply-adds for r nonzeros a row,
    without SciPy's sparse product, which sized, built and converted a sparse d x d result per
    factorisation (the 1,500 x 48,000 x 300 binary set: 16 ms of its 46 ms)."""
    with_c = c.size > 0
    for b in range(indptr.size - 1):
        lo, hi = indptr[b], indptr[b + 1]
        o = om[b]
        for p in range(lo, hi):
            u = o * data[p]
            row = indices[p]
            for q in range(lo, hi):
                S[row, indices[q]] += u * data[q]
        if with_c:
            j, cb = group[b], c[b]
            for p in range(lo, hi):
                Yw[j, indices[p]] += cb * data[p]


# ---- sparse rows (binary or sparse data: an a8a row has 14 of its 123 features): the pair sums
# of the reduced system from the CSR arrays of XI and XJ, by their nonzeros, instead of dense
# products over every feature ----------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _sparse_weighted_gram(indptr, indices, data, weights, S):
    """``S += X^T diag(weights) X`` from the CSR arrays of X (r^2 multiply-adds a row of r
    nonzeros; rows of weight 0 skipped)."""
    for r in range(indptr.size - 1):
        wgt = weights[r]
        if wgt == 0.0:
            continue
        lo, hi = indptr[r], indptr[r + 1]
        for p in range(lo, hi):
            u = wgt * data[p]
            f = indices[p]
            for q in range(lo, hi):
                S[f, indices[q]] += u * data[q]


@nb.njit(cache=True, nogil=True)
def _sparse_cross_term(ia, ib, om, Ap, Ai, Av, Bp, Bi, Bv, M, S):
    """``S -= T + T^T`` for ``T = sum_b om_b x^B_{ib[b]} (x^A_{ia[b]})^T``, the cross term of the
    band graph's Laplacian, as ``B^T M`` with the dense rows ``M[r] = sum_{b: ib[b] = r} om_b
    x^A_{ia[b]}`` (one row per row of B): ``nb rA + nnz(B) d`` multiply-adds for rA nonzeros a
    row of A, the side B being the one with fewer nonzeros."""
    d = S.shape[0]
    M[:] = 0.0
    hit = np.zeros(M.shape[0], dtype=np.bool_)  # (rows of B without pairs add nothing)
    for b in range(ia.size):
        a, r, o = ia[b], ib[b], om[b]
        hit[r] = True
        for p in range(Ap[a], Ap[a + 1]):
            M[r, Ai[p]] += o * Av[p]
    T = np.zeros((d, d))
    for r in range(Bp.size - 1):
        if not hit[r]:
            continue
        for p in range(Bp[r], Bp[r + 1]):
            f, v = Bi[p], Bv[p]
            for g in range(d):  # (a row of T: contiguous)
                T[f, g] += v * M[r, g]
    for f in range(d):
        for g in range(d):
            S[f, g] -= T[f, g] + T[g, f]


@nb.njit(cache=True, nogil=True)
def _sparse_group_rows(bi, bj, c, rows_c, Ip, Ii, Iv, Jp, Ji, Jv, Yw):
    """``Yw[j] = sum_{b in B_j} c_b (x_i - x_j) = sum_b c_b x_i - rows_c[j] x_j`` per row j of XJ
    (its group), from the CSR arrays of XI and XJ (Yw zero on entry)."""
    for b in range(bi.size):
        i, j, cb = bi[b], bj[b], c[b]
        for p in range(Ip[i], Ip[i + 1]):
            Yw[j, Ii[p]] += cb * Iv[p]
    for j in range(Jp.size - 1):
        rc = rows_c[j]
        if rc == 0.0:
            continue
        for p in range(Jp[j], Jp[j + 1]):
            Yw[j, Ji[p]] -= rc * Jv[p]
