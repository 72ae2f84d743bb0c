"""The structured interior-point method of the working-set steps, against CVXPY + Clarabel on the
restricted problem written out from its definition (pair vectors formed explicitly)."""

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem, solve_restricted


def random_problem(seed, *, groups, l1, prox, nI=25, nJ=7, d=6, nb=60):
    rng = np.random.default_rng(seed)
    XI, XJ = rng.standard_normal((nI, d)), rng.standard_normal((nJ, d))
    flat = rng.choice(nI * nJ, size=nb, replace=False)
    bi, bj = np.unravel_index(flat, (nI, nJ))
    center = 0.3 * rng.standard_normal(d)
    kw = dict(q_w=-prox * center + 0.1 * rng.standard_normal(d),
              kappa=(0.0 if l1 else 1.0) + prox, l1=l1)
    if groups:
        prob = RestrictedProblem(XI, XJ, bi, bj, coef=0.7, groups=True,
                                 a=rng.integers(0, 5, nJ).astype(float),
                                 g=rng.standard_normal((nJ, d)), **kw)
    else:
        prob = RestrictedProblem(XI, XJ, bi, bj, coef=0.05, groups=False, c_e=0.05, **kw)
    return prob, center


def cvxpy_solve(prob):
    w = cp.Variable(prob.d)
    Z = prob.XI[prob.bi] - prob.XJ[prob.bj]
    e = cp.Variable(prob.nb)
    obj = prob.kappa / 2 * cp.sum_squares(w) + prob.q_w @ w + prob.c_e * cp.sum(e)
    if prob.l1:
        obj += cp.norm1(w)
    cons = [e >= 1 - Z @ w, e >= 0]
    if prob.groups:
        xi = cp.Variable()
        obj += prob.coef * xi
        onehot = np.zeros((prob.k, prob.nb))
        onehot[prob.bj, np.arange(prob.nb)] = 1.0
        cons.append(prob.a - prob.g @ w + onehot @ e <= xi)
    value = cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-10,
                                                        tol_gap_rel=1e-10, tol_feas=1e-10)
    return value, w.value


def objective(prob, w):
    """The restricted objective at w with the pair and group variables at their optimum."""
    hinge = np.maximum(0.0, 1.0 - prob.zw(w))
    val = prob.kappa / 2 * w @ w + prob.q_w @ w + prob.c_e * hinge.sum()
    if prob.l1:
        val += np.abs(w).sum()
    if prob.groups:
        val += prob.coef * np.max(prob.a - prob.g @ w + np.bincount(prob.bj, hinge, prob.k))
    return val


CASES = [(groups, l1, prox) for groups in (True, False) for l1 in (False, True)
         for prox in (0.0, 2.0)]


@pytest.mark.parametrize("groups,l1,prox", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_cvxpy_on_the_restricted_problem(groups, l1, prox, seed):
    prob, center = random_problem(seed, groups=groups, l1=l1, prox=prox)
    w, mu, nu, info = solve_restricted(prob, center=center)
    assert info["status"] == "optimal"
    ref, w_ref = cvxpy_solve(prob)
    assert objective(prob, w) == pytest.approx(ref, rel=1e-7, abs=1e-9)
    if not l1 or prox > 0:  # strongly convex: the minimiser is unique
        np.testing.assert_allclose(w, w_ref, atol=1e-4)
    # multipliers: feasible for the restricted dual (0 <= nu_b <= mu_group, sum mu = coef)
    assert nu.min() >= -1e-9
    if groups:
        assert mu.min() >= -1e-9 and mu.sum() == pytest.approx(prob.coef, rel=1e-7)
        assert np.all(nu <= mu[prob.bj] + 1e-7)
    else:
        assert np.all(nu <= prob.c_e + 1e-7)


def test_stationarity_of_the_l2_multipliers():
    """kappa w + q_w = sum_j mu_j g_j + sum_b nu_b z_b (the w part of the KKT conditions)."""
    prob, center = random_problem(3, groups=True, l1=False, prox=1.0)
    w, mu, nu, _ = solve_restricted(prob, center=center)
    lhs = prob.kappa * w + prob.q_w
    rhs = prob.g.T @ mu + (prob.XI[prob.bi] - prob.XJ[prob.bj]).T @ nu
    np.testing.assert_allclose(lhs, rhs, atol=1e-7)


def test_groups_without_band_pairs():
    """No band pair at all: a max of linear pieces plus the regulariser."""
    prob, center = random_problem(4, groups=True, l1=False, prox=0.0, nb=0)
    w, mu, nu, info = solve_restricted(prob, center=center)
    assert info["status"] == "optimal" and nu.size == 0
    assert objective(prob, w) == pytest.approx(cvxpy_solve(prob)[0], rel=1e-7)


@pytest.mark.parametrize("l1", [False, True])
def test_ranksvm_without_band_pairs(l1):
    prob, center = random_problem(6, groups=False, l1=l1, prox=1.0, nb=0)
    w, mu, nu, info = solve_restricted(prob, center=center)
    assert info["status"] == "optimal" and mu is None and nu.size == 0
    assert objective(prob, w) == pytest.approx(cvxpy_solve(prob)[0], rel=1e-7)


def test_stopping_early_is_reported():
    prob, center = random_problem(5, groups=True, l1=True, prox=0.0)
    *_, info = solve_restricted(prob, center=center, max_iter=3)
    assert info["status"] == "max_iter" and info["iterations"] == 3 and info["error"] > 1e-8


@pytest.mark.parametrize("groups", [True, False])
@pytest.mark.parametrize("l1", [False, True])
def test_grid_of_pairs_gives_the_same_operators_and_step_as_scattered_pairs(groups, l1):
    """Every pair of the first g negatives (the exact model of a small problem) is recognised as a
    grid and summed by rows and columns; the same pairs in another order go through the general
    scattered sums. Both must give the same maps and the same step."""
    rng = np.random.default_rng(11)
    nI, nJ, d, g = 9, 6, 4, 5
    XI, XJ = rng.standard_normal((nI, d)), rng.standard_normal((nJ, d))
    bi, bj = np.tile(np.arange(nI), g), np.repeat(np.arange(g), nI)
    pi = rng.uniform(0.5, 2.0, bi.size)
    kw = dict(coef=0.7, groups=groups, kappa=0.0 if l1 else 1.0, l1=l1, q_w=rng.normal(size=d))
    if groups:
        kw.update(a=rng.uniform(0, 1, nJ), g=rng.standard_normal((nJ, d)))
    else:
        kw.update(c_e=0.05)
    grid = RestrictedProblem(XI, XJ, bi, bj, pair_weight=pi, **kw)
    order = rng.permutation(bi.size)
    scattered = RestrictedProblem(XI, XJ, bi[order], bj[order], pair_weight=pi[order], **kw)
    assert grid._grid == g and scattered._grid == 0
    w, v = rng.normal(size=d), rng.normal(size=bi.size)
    np.testing.assert_allclose(grid.zw(w)[order], scattered.zw(w), rtol=1e-13)
    np.testing.assert_allclose(grid.zT(v), scattered.zT(v[order]), rtol=1e-12)
    np.testing.assert_allclose(grid.per_pair(np.arange(nJ + 0.0))[order],
                               scattered.per_pair(np.arange(nJ + 0.0)))
    if groups:
        np.testing.assert_allclose(grid.group_sum(v), scattered.group_sum(v[order]), rtol=1e-12)
    w1, _, z1, i1 = solve_restricted(grid)
    w2, _, z2, i2 = solve_restricted(scattered)
    assert i1["status"] == i2["status"] == "optimal"
    np.testing.assert_allclose(w1, w2, atol=1e-7)
    np.testing.assert_allclose(z1[order], z2, atol=1e-7)


def test_the_solve_deadline_stops_the_restricted_step():
    """The restricted step draws on the solve's Deadline: an expired one stops the
    interior-point method at its first check and leaves the other solvers untried; one with
    time left (or None) does not change the answer."""
    from infpush_cvx.solvers.engines.deadline import Deadline
    from infpush_cvx.solvers.engines.restricted_step import RestrictedStepFailed, restricted_step

    prob, center = random_problem(0, groups=True, l1=False, prox=0.0)
    *_, info = solve_restricted(prob, center=center, deadline=Deadline(1.0, start=-1e9))
    assert info["status"] == "time_limit" and info["iterations"] == 1
    with pytest.raises(RestrictedStepFailed, match="not tried, the time limit was reached"):
        restricted_step(prob, center, deadline=Deadline(1.0, start=-1e9))
    w, *_, used = restricted_step(prob, center, deadline=Deadline(60.0))
    w0, *_, used0 = restricted_step(prob, center, deadline=None)
    assert used == used0 == "ipm"
    np.testing.assert_array_equal(w, w0)


def test_the_scattered_pair_products_are_the_dense_matrix_products():
    """One pass over the pairs gives ``W^T XI`` and ``C^T XI`` for the nI x nJ matrices W and C
    of the pair weights, in any order of the pairs; an empty ``c`` leaves the second product
    alone (RankSVM: no groups)."""
    from infpush_cvx.solvers.engines.ipm_kernels import _scattered_pair_products

    rng = np.random.default_rng(0)
    nI, nJ, d = 9, 7, 5
    XI = rng.normal(size=(nI, d))
    pairs = rng.choice(nI * nJ, 30, replace=False)
    bj, bi = np.divmod(pairs, nI)
    om, c = rng.random(30), rng.random(30)
    W, C = np.zeros((nI, nJ)), np.zeros((nI, nJ))
    W[bi, bj], C[bi, bj] = om, c
    om_XI, c_XI = np.zeros((nJ, d)), np.zeros((nJ, d))
    _scattered_pair_products(bi, bj, om, c, XI, om_XI, c_XI)
    np.testing.assert_allclose(om_XI, W.T @ XI, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(c_XI, C.T @ XI, rtol=1e-13, atol=1e-13)
    om_XI[:] = 0.0
    _scattered_pair_products(bi, bj, om, np.zeros(0), XI, om_XI, np.zeros((0, d)))
    np.testing.assert_allclose(om_XI, W.T @ XI, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("groups", [True, False])
@pytest.mark.parametrize("l1", [False, True])
def test_scattered_pairs_give_the_newton_system_of_the_explicit_pair_vectors(groups, l1):
    """The scattered pairs' one-pass kernels (the rows' scores gathered, sums per row scattered)
    against the explicit pair vectors ``Z`` (rows ``pi_b z_b``, summed by sparse products): the
    same constraint maps, the same reduced Newton solve and the same step."""
    import scipy.sparse as sp

    prob, _ = random_problem(3, groups=groups, l1=l1, prox=0.5)
    rng = np.random.default_rng(4)
    pi = rng.uniform(0.5, 2.0, prob.nb)
    kw = dict(coef=prob.coef, groups=groups, a=prob.a, g=prob.g, c_e=prob.c_e, q_w=prob.q_w,
              kappa=prob.kappa, l1=l1)
    scattered = RestrictedProblem(prob.XI, prob.XJ, prob.bi, prob.bj, pair_weight=pi, **kw)
    Z = sp.csr_matrix(pi[:, None] * (prob.XI[prob.bi] - prob.XJ[prob.bj]))
    explicit = RestrictedProblem(None, None, np.zeros(0), prob.bj, pair_weight=pi, Z=Z, **kw)
    assert scattered._scattered and not explicit._scattered
    w, v, e = rng.normal(size=prob.d), rng.normal(size=prob.nb), rng.random(prob.nb)
    xi, p = 0.3, rng.random(prob.d if l1 else 0)
    np.testing.assert_allclose(scattered.zw(w), explicit.zw(w), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(scattered.zT(v), explicit.zT(v), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(scattered.G(w, xi, e, p), explicit.G(w, xi, e, p), rtol=1e-12,
                               atol=1e-13)
    s, z = rng.uniform(0.1, 2.0, (2, scattered.n_rows))
    rhs = (rng.normal(size=prob.d), 0.4 if groups else 0.0, rng.normal(size=prob.nb),
           rng.normal(size=p.size))
    for one, other in zip(scattered.solve(scattered.factor(s, z), *rhs),
                          explicit.solve(explicit.factor(s, z), *rhs)):
        np.testing.assert_allclose(one, other, rtol=1e-9, atol=1e-10)
    w1, _, z1, i1 = solve_restricted(scattered)
    w2, _, z2, i2 = solve_restricted(explicit)
    assert i1["status"] == i2["status"] == "optimal"
    np.testing.assert_allclose(w1, w2, atol=1e-7)
    np.testing.assert_allclose(z1, z2, atol=1e-7)



def test_the_explicit_pair_products_are_the_dense_matrix_products():
    """From the CSR arrays of the pair vectors Z (rows with repeated columns too): ``Z^T diag(om)
    Z`` and the per-group sums of ``c_b Z_b``; an empty ``c`` leaves the second alone."""
    import scipy.sparse as sp

    from infpush_cvx.solvers.engines.ipm_kernels import _explicit_pair_products

    rng = np.random.default_rng(1)
    nb, d, k = 40, 8, 5
    indptr = np.arange(0, 3 * nb + 1, 3)  # three entries a row, the last row's first repeated
    indices = rng.integers(0, d, 3 * nb)
    indices[-1] = indices[-3]
    Z = sp.csr_matrix((rng.normal(size=3 * nb), indices, indptr), shape=(nb, d))
    dense = np.zeros((nb, d))
    np.add.at(dense, (np.repeat(np.arange(nb), 3), Z.indices), Z.data)
    om, c, group = rng.random(nb), rng.random(nb), rng.integers(0, k, nb)
    S, Yw = np.zeros((d, d)), np.zeros((k, d))
    _explicit_pair_products(Z.indptr, Z.indices, Z.data, om, c, group, S, Yw)
    np.testing.assert_allclose(S, dense.T @ (om[:, None] * dense), rtol=1e-13, atol=1e-13)
    onehot = np.zeros((k, nb))
    onehot[group, np.arange(nb)] = c
    np.testing.assert_allclose(Yw, onehot @ dense, rtol=1e-13, atol=1e-13)
    S[:] = 0.0
    _explicit_pair_products(Z.indptr, Z.indices, Z.data, om, np.zeros(0), group, S, Yw[:0])
    np.testing.assert_allclose(S, dense.T @ (om[:, None] * dense), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("l1,prox", [(False, 1.0), (True, 0.0), (True, 2.0)])
def test_start_from_guessed_multipliers(l1, prox):
    """A start from guessed multipliers (the working set's last step's, carried over) reaches
    the same optimum as the uniform start: from the optimum's own multipliers in fewer
    iterations, and from a poor guess (one group, zero pair multipliers: a negative new to the
    model) still."""
    prob, center = random_problem(7, groups=True, l1=l1, prox=prox)
    w, mu, nu, info = solve_restricted(prob, center=center)
    ref = objective(prob, w)
    warm = solve_restricted(prob, center=center, multipliers=(mu, nu))
    assert warm[3]["status"] == "optimal" and warm[3]["iterations"] < info["iterations"]
    assert objective(prob, warm[0]) == pytest.approx(ref, rel=1e-7, abs=1e-9)
    poor = np.zeros(prob.k)
    poor[0] = 1.0
    for guess in [(poor, np.zeros(prob.nb)), (np.zeros(prob.k), np.zeros(prob.nb))]:
        w2, mu2, nu2, info2 = solve_restricted(prob, center=center, multipliers=guess)
        assert info2["status"] == "optimal"
        assert objective(prob, w2) == pytest.approx(ref, rel=1e-7, abs=1e-9)
        assert mu2.sum() == pytest.approx(prob.coef, rel=1e-7)
        assert np.all(nu2 <= mu2[prob.bj] + 1e-7)


def test_guessed_multipliers_of_the_wrong_size_are_refused():
    prob, center = random_problem(8, groups=True, l1=False, prox=1.0)
    with pytest.raises(ValueError, match="multipliers"):
        solve_restricted(prob, center=center, multipliers=(np.ones(prob.k + 1), np.ones(prob.nb)))


def _sparse_rows_problem(seed, *, groups, l1, grid, by_rows_of=None):
    """Rows with few nonzeros (a twentieth of the features) over scattered pairs or a grid."""
    rng = np.random.default_rng(seed)
    nI, nJ, d = 12, 9, 40
    XI = rng.normal(size=(nI, d)) * (rng.random((nI, d)) < 0.05)
    XJ = rng.normal(size=(nJ, d)) * (rng.random((nJ, d)) < 0.05)
    if grid:
        g = 6
        bi, bj = np.tile(np.arange(nI), g), np.repeat(np.arange(g), nI)
    else:
        flat = np.sort(rng.choice(nI * nJ, size=50, replace=False))
        bj, bi = np.divmod(flat, nI)
        if by_rows_of == "I":  # more nonzeros in XJ's rows with pairs: the cross term by XI's
            XJ[np.unique(bj), :3] = 1.0
    # (|q_w| < 1: the plain l1 step is bounded)
    kw = dict(coef=0.7, groups=groups, kappa=0.0 if l1 else 1.0, l1=l1,
              q_w=rng.uniform(-0.5, 0.5, d), pair_weight=rng.uniform(0.5, 2.0, bi.size))
    if groups:
        g = 0.1 * rng.standard_normal((nJ, d))
        g[-1] = 0.0  # the working set's "loss >= 0" group: an l1 step stays bounded
        kw.update(a=np.append(rng.uniform(0, 1, nJ - 1), 0.0), g=g)
    else:
        kw.update(c_e=0.05)
    return RestrictedProblem(XI, XJ, bi, bj, **kw)


@pytest.mark.parametrize("groups", [True, False])
@pytest.mark.parametrize("l1", [False, True])
@pytest.mark.parametrize("layout", ["grid", "scattered", "scattered by I"])
def test_sparse_rows_give_the_newton_system_and_step_of_the_dense_products(groups, l1, layout):
    """Rows with few nonzeros: the reduced system's pair sums taken by their nonzeros (the
    Laplacian's Gram matrices and cross term, the groups' rows) equal the dense products of the
    grid and scattered kernels, and so do the Newton solve and the step."""
    prob = _sparse_rows_problem(5, groups=groups, l1=l1, grid=layout == "grid",
                                by_rows_of="I" if layout.endswith("by I") else None)
    assert prob._csr is not None and bool(prob._grid) == (layout == "grid")
    assert prob._csr[2] == (layout != "scattered by I")  # the cross term's side
    rng = np.random.default_rng(6)
    s, z = rng.uniform(0.1, 2.0, (2, prob.n_rows))
    pairs = slice(prob.k, prob.k + 2 * prob.nb)
    csr, prob._csr = prob._csr, None  # the dense products
    dense_system = prob._grid_pair_system if prob._grid else prob._scattered_pair_system
    fac_d, S_d, sigma_d, Yw_d = dense_system(s[pairs], z[pairs])
    prob._csr = csr
    fac_s, S_s, sigma_s, Yw_s = dense_system(s[pairs], z[pairs])
    np.testing.assert_allclose(S_s, S_d, rtol=1e-12, atol=1e-12 * np.abs(S_d).max())
    for key in ("inv_delta", "D2"):
        np.testing.assert_allclose(fac_s[key], fac_d[key], rtol=1e-14)
    if groups:
        np.testing.assert_allclose(sigma_s, sigma_d, rtol=1e-13)
        np.testing.assert_allclose(Yw_s, Yw_d, rtol=1e-12, atol=1e-14)
    else:
        assert sigma_s is None and Yw_s is None
    w_s, _, nu_s, info_s = solve_restricted(prob)
    csr, prob._csr = prob._csr, None  # the dense products
    w_d, _, nu_d, info_d = solve_restricted(prob)
    prob._csr = csr
    assert info_s["status"] == info_d["status"] == "optimal"
    np.testing.assert_allclose(w_s, w_d, atol=1e-7)
    np.testing.assert_allclose(nu_s, nu_d, atol=1e-7)


def test_rows_given_sparse_make_the_same_problem_as_dense_rows():
    """The working set hands sparse data's rows over as CSR matrices: the same dense rows, the
    same arrays of nonzeros and the same step as from the dense rows."""
    import scipy.sparse as sp

    prob = _sparse_rows_problem(7, groups=True, l1=False, grid=False)
    kw = dict(coef=prob.coef, groups=True, a=prob.a, g=prob.g, q_w=prob.q_w, kappa=prob.kappa,
              pair_weight=prob.pi)
    given = RestrictedProblem(sp.csr_matrix(prob.XI), sp.csr_matrix(prob.XJ), prob.bi, prob.bj,
                              **kw)
    np.testing.assert_array_equal(given.XI, prob.XI)
    np.testing.assert_array_equal(given.XJ, prob.XJ)
    for ours, theirs in zip(given._csr[:2], prob._csr[:2]):
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
    assert given._csr[2] == prob._csr[2]
    np.testing.assert_array_equal(solve_restricted(given)[0], solve_restricted(prob)[0])


def test_dense_rows_keep_the_dense_products():
    prob, _ = random_problem(0, groups=True, l1=False, prox=1.0)
    assert prob._csr is None


def test_a_looser_accuracy_stops_sooner_near_the_tight_step():
    """``tol`` 1e-4 (a working-set round far from the end): the interior-point method stops at
    that relative error, in fewer iterations, near the tight step; the tight one is the
    default."""
    prob, center = random_problem(2, groups=True, l1=False, prox=1.0)
    w_tight, *_, tight = solve_restricted(prob, center=center)
    w_loose, *_, loose = solve_restricted(prob, center=center, tol=1e-4)
    assert loose["status"] == "optimal" and loose["error"] <= 1e-4
    assert loose["iterations"] < tight["iterations"] and tight["error"] <= 1e-8
    np.testing.assert_allclose(w_loose, w_tight, atol=1e-2)


def test_the_largest_magnitude_and_the_finished_system_are_their_numpy_forms():
    """The residuals' ``max |v|`` (0 when empty, NaN when v holds one, as the solve's failure
    test needs) and the reduced system's last pass (w-block diagonal, symmetric mean,
    regularisation at round-off)."""
    from infpush_cvx.solvers.engines.ipm_kernels import _finish_system, _largest_magnitude

    rng = np.random.default_rng(3)
    v = rng.normal(size=50)
    assert _largest_magnitude(v) == np.abs(v).max()
    assert _largest_magnitude(v[:0]) == 0.0
    v[7] = np.nan
    assert np.isnan(_largest_magnitude(v))
    S, diag_w = rng.normal(size=(6, 6)), rng.uniform(1.0, 2.0, 5)
    expected = S.copy()
    expected[np.arange(5), np.arange(5)] += diag_w
    expected = 0.5 * (expected + expected.T)
    expected[np.diag_indices(6)] += 1e-13 * max(1.0, np.abs(np.diag(expected)).max())
    _finish_system(S, diag_w)
    np.testing.assert_allclose(S, expected, rtol=1e-15, atol=1e-15)
    assert np.array_equal(S, S.T)


def test_the_round_off_floor_is_recognised_by_growth_or_by_slow_progress():
    """The solve stops at the floor of its Newton solves: once its best error is below the stall
    level (and at most 100 tol_almost), an error four times the best one; or five iterations
    without a 20% decrease below the stall level. Above the stall level neither stops it."""
    from infpush_cvx.solvers.engines.restricted_ipm import _at_the_floor

    floor = dict(stall_below=1e-4, tol_almost=1e-6)
    assert _at_the_floor(5e-5, 1e-5, 1, **floor)  # grew 5x: past the floor
    assert not _at_the_floor(3e-5, 1e-5, 1, **floor)  # 3x: not yet
    assert _at_the_floor(1.1e-5, 1e-5, 5, **floor)  # five slow iterations
    assert not _at_the_floor(1.1e-5, 1e-5, 4, **floor)
    assert not _at_the_floor(1e-2, 1e-3, 9, **floor)  # above the stall level: left to run
    # a rough stall level (early working-set rounds): slow progress stops it, growth only
    # below 100 tol_almost
    rough = dict(stall_below=1e-2, tol_almost=1e-6)
    assert _at_the_floor(1e-3, 1e-3, 5, **rough)
    assert not _at_the_floor(5e-3, 1e-3, 1, **rough)
    assert _at_the_floor(5e-5, 1e-5, 1, **rough)


@pytest.mark.parametrize("groups,l1,prox", CASES)
def test_centrality_correctors_reach_the_cvxpy_optimum_in_fewer_iterations(groups, l1, prox):
    """Gondzio's centrality correctors (``correctors``: more solves with each factorisation)
    change the path, not the optimum: the CVXPY value, in fewer iterations (on these problems
    of 400 pairs with seeds 0-2: 10-16 iterations against 13-19)."""
    prob, center = random_problem(0, groups=groups, l1=l1, prox=prox, nI=60, nJ=15, d=20,
                                  nb=400)
    assert prob.correctors == 0  # (the default: a solve costs about a factorisation here)
    *_, plain = solve_restricted(prob, center=center)
    prob.correctors = 4
    w, *_, info = solve_restricted(prob, center=center)
    assert info["status"] == plain["status"] == "optimal"
    assert info["iterations"] < plain["iterations"]
    value, _ = cvxpy_solve(prob)
    assert objective(prob, w) == pytest.approx(value, rel=1e-6, abs=1e-7)


def test_the_centrality_rhs_is_its_numpy_form():
    """Each product of the trial step moved into [0.1, 10] times the target, a large one by
    at most 10 times the target."""
    from infpush_cvx.solvers.engines.ipm_kernels import _centrality_rhs

    rng = np.random.default_rng(5)
    s, z = rng.uniform(0.1, 2.0, 200), rng.uniform(0.1, 2.0, 200)
    ds, dz, rc = rng.normal(size=200), rng.normal(size=200), rng.normal(size=200)
    a, target = 0.3, 0.2
    v = (s + a * ds) * (z + a * dz)
    t = np.maximum(np.clip(v, 0.1 * target, 10 * target) - v, -10 * target)
    assert (v < 0.1 * target).any() and (v > 20 * target).any()  # both clips are exercised
    np.testing.assert_allclose(_centrality_rhs(rc, s, ds, z, dz, a, target), rc - t,
                               rtol=1e-14, atol=1e-14)


def test_the_solve_stops_before_an_iteration_that_would_end_past_the_limit():
    """With a clock that moves 0.5 s at each reading (two per check: an iteration takes 1 s), a
    4.5 s limit stops the solve at its third check, 3.5 s in: 1 s left, no more than the last
    iteration took, so it stops before the limit has passed (an expired-only check would have
    run a fourth iteration to 4.5 s)."""
    from itertools import count

    from infpush_cvx.solvers.engines.deadline import Deadline

    prob, center = random_problem(0, groups=True, l1=False, prox=0.0)
    ticks = count(1)
    deadline = Deadline(4.5, start=0.0, clock=lambda: 0.5 * next(ticks))
    *_, info = solve_restricted(prob, center=center, deadline=deadline)
    assert info["status"] == "time_limit" and info["iterations"] == 3
    assert next(ticks) == 8  # (the next reading: 4.0 s, the limit not reached)


@pytest.mark.parametrize("reported, goes_on, certified", [(0.0, False, True),
                                                         (10.0, True, False),
                                                         (1e3, False, False)])
def test_a_loose_solve_tests_the_callers_certificate(reported, goes_on, certified):
    """``certificate=(gap_of, target)`` on a loose solve (``tol`` 1e-4): the first iterate
    within tol is tested; one that certifies ends the solve there, one within 100 times the
    target makes it go on to 1e-8 testing each iterate, and a farther one ends it as without
    a certificate."""
    prob, center = random_problem(2, groups=True, l1=False, prox=1.0)
    *_, loose = solve_restricted(prob, center=center, tol=1e-4)
    *_, tight = solve_restricted(prob, center=center)
    calls = []

    def gap_of(w, z_groups, z_pairs):
        assert w.shape == (prob.d,) and z_groups.shape == (prob.k,)
        assert z_pairs.shape == (prob.nb,)
        calls.append(w.copy())
        return reported * 1e-6

    *_, info = solve_restricted(prob, center=center, tol=1e-4, certificate=(gap_of, 1e-6))
    assert info["status"] == "optimal" and info["certified"] is certified
    if goes_on:
        assert info["iterations"] == tight["iterations"] and info["error"] <= 1e-8
        assert len(calls) == tight["iterations"] - loose["iterations"] + 1
    else:
        assert info["iterations"] == loose["iterations"] and len(calls) == 1
        assert 1e-8 < info["error"] <= 1e-4


def test_a_loose_solve_ends_where_a_true_certificate_holds():
    """With the restricted problem's own gap to its CVXPY optimum as the certificate (target
    1e-6; 1.9e-5 at the first iterate within 1e-4), a loose solve goes on past 1e-4 and ends
    before the tight solve, within the target of the optimum; a tight solve never tests it."""
    prob, center = random_problem(2, groups=True, l1=False, prox=1.0)
    best, _ = cvxpy_solve(prob)
    *_, tight = solve_restricted(prob, center=center)
    calls = []

    def gap_of(w, z_groups, z_pairs):
        calls.append(1)
        return (objective(prob, w) - best) / abs(best)

    w, *_, info = solve_restricted(prob, center=center, tol=1e-4, certificate=(gap_of, 1e-6))
    assert info["status"] == "optimal" and info["certified"]
    assert 1e-8 < info["error"] and info["iterations"] < tight["iterations"]
    assert (objective(prob, w) - best) / abs(best) <= 1e-6 and len(calls) >= 2
    tested = len(calls)
    *_, info = solve_restricted(prob, center=center, certificate=(gap_of, 1e-6))
    assert info == {**tight, "certified": False} and len(calls) == tested
