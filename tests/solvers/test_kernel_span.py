"""A restricted step solved on the span of its data (infpush_cvx.solvers.engines.kernel_span).

Independent check: the structured interior point (solve_restricted) on the original problem in
all d coordinates; the reduced problem must give the same weights and the same multipliers.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.solvers.engines import kernel_span
from infpush_cvx.solvers.engines.kernel_span import TriangularSpanProblem, span_step
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem, solve_restricted


def _problem(d=80, rank=None, groups=True, l1=False, seed=0, Z=False):
    """A restricted problem of a planted-like instance embedded in R^d: 9 band positives, 5
    working negatives (the last one the zero row of the loss >= 0 group), 20 band pairs; with
    ``rank``, every data row lies in one random subspace of that dimension."""
    rng = np.random.default_rng(seed)
    nI, nJ, nb = 9, 5, 20
    basis = np.linalg.qr(rng.normal(size=(d, rank or d)))[0]
    rows = lambda k, shift: (rng.normal(size=(k, basis.shape[1])) + shift) @ basis.T  # noqa: E731
    XI, XJ = rows(nI, 0.5), rows(nJ, -0.5)
    XJ[-1] = 0.0
    pairs = rng.choice(nI * (nJ - 1), size=nb, replace=False)
    bi, bj = pairs % nI, pairs // nI
    order = np.lexsort((bi, bj))
    bi, bj = bi[order], bj[order]
    g = rows(nJ, 0.0)
    g[-1] = 0.0
    centre = 0.1 * rows(1, 0.0)[0]
    kw = dict(coef=2.0, groups=groups, c_e=0.0 if groups else 0.3, q_w=-0.5 * centre,
              kappa=1.5, l1=l1, pair_weight=rng.uniform(0.5, 2.0, nb))
    if groups:
        kw.update(a=rng.uniform(0.0, 3.0, nJ), g=g)
    if Z:
        kw["Z"] = sp.csr_matrix((XI[bi] - XJ[bj]) * kw["pair_weight"][:, None])
    return RestrictedProblem(XI, XJ, bi, bj, **kw), centre


@pytest.mark.parametrize("groups", [True, False])
@pytest.mark.parametrize("rank", [None, 6])
def test_reduced_step_is_the_same_problem(groups, rank):
    rp, centre = _problem(rank=rank, groups=groups)
    span = span_step(rp)
    assert span is not None
    # the span: 9 rows of XI and the 4 rows of XJ the pairs use (never the zero row), kept
    # whole, then the 4 nonzero g rows and q_w, only for their parts outside those rows' span
    # (none when every row lies in one 6-dimensional space)
    assert span.problem.d == 9 + 4 + ((4 if groups else 0) + 1 if rank is None else 0)
    w, mu, nu, info = solve_restricted(rp, center=centre)
    u, mu_r, nu_r, info_r = solve_restricted(span.problem, center=span.to_span(centre))
    assert info["status"] == info_r["status"] == "optimal"
    w_r = span.from_span(u)
    assert w_r.shape == w.shape
    np.testing.assert_allclose(w_r, w, atol=1e-6 * np.abs(w).max())
    np.testing.assert_allclose(nu_r, nu, atol=1e-6 * max(np.abs(nu).max(), 1.0))
    if groups:
        np.testing.assert_allclose(mu_r, mu, atol=1e-6 * rp.coef)
    # the same objective: every pair score and group piece of the reduced weights
    np.testing.assert_allclose(span.problem.zw(u), rp.zw(w_r), atol=1e-10)
    if groups:
        np.testing.assert_allclose(span.problem.g @ u, rp.g @ w_r, atol=1e-10)
    assert span.problem.q_w @ u == pytest.approx(rp.q_w @ w_r, abs=1e-12)


def test_span_maps_are_an_orthonormal_basis():
    rp, _ = _problem(rank=6)
    span = span_step(rp)
    rng = np.random.default_rng(3)
    u = rng.normal(size=span.problem.d)
    w = span.from_span(u)
    assert np.linalg.norm(w) == pytest.approx(np.linalg.norm(u), rel=1e-12)
    np.testing.assert_allclose(span.to_span(w), u, atol=1e-12)
    # a data row's coordinates are its inner products with the basis
    np.testing.assert_allclose(span.to_span(rp.XI[2]), span.problem.XI[2], atol=1e-12)


def test_problems_that_are_not_reduced():
    assert span_step(_problem(l1=True)[0]) is None  # ||Q u||_1 != ||u||_1
    assert span_step(_problem(Z=True)[0]) is None  # explicit sparse pair vectors
    assert span_step(_problem(d=20)[0]) is None  # 19 rows: more than 3/4 of R^20
    # 13 pair rows (9 of XI, the 4 rows of XJ the pairs use) in R^20: their span is 13
    # dimensions, and the g rows and q_w add none when every row lies in a 6-dimensional space
    assert span_step(_problem(d=20, rank=6)[0]).problem.d == 13
    assert span_step(_problem(d=30, rank=6)[0]).problem.d == 13


def test_group_rows_in_the_span_do_not_prevent_the_reduction():
    """Many working negatives, few of them in band pairs, and group rows that are sums of the
    pair rows (the kernel route's steps at a small lambda: 1,201 g rows on Spambase added 47
    dimensions to 2,046 pair rows in R^4146): the span is the pair rows' and the step is the
    same problem in those coordinates."""
    rng = np.random.default_rng(5)
    d, nI, nJ = 40, 9, 30
    XI, XJ = rng.normal(size=(nI, d)) + 0.5, rng.normal(size=(nJ, d)) - 0.5
    bi, bj = np.tile(np.arange(nI), 2), np.repeat([3, 7], nI)  # pairs of two negatives
    g = rng.uniform(0.0, 1.0, (nJ, nI)) @ XI  # sums of positives: in the pair rows' span
    centre = XI.T @ rng.normal(size=nI) * 0.1
    rp = RestrictedProblem(XI, XJ, bi, bj, coef=2.0, groups=True, a=rng.uniform(0, 3, nJ),
                           g=g, q_w=-0.5 * centre, kappa=1.5)
    assert nI + nJ + 1 > 0.75 * d  # (rows that, counted, refused the step)
    span = span_step(rp)
    assert span is not None and span.problem.d == nI + 2  # (centre is in the span too)
    w, mu, nu, info = solve_restricted(rp, center=centre)
    u, mu_r, nu_r, info_r = solve_restricted(span.problem, center=span.to_span(centre))
    assert info["status"] == info_r["status"] == "optimal"
    np.testing.assert_allclose(span.from_span(u), w, atol=1e-6 * np.abs(w).max())
    np.testing.assert_allclose(mu_r, mu, atol=1e-6 * rp.coef)
    np.testing.assert_allclose(nu_r, nu, atol=1e-6 * max(np.abs(nu).max(), 1.0))


def test_maps_leave_their_arguments_alone():
    rp, centre = _problem(rank=6)
    span = span_step(rp)
    kept = centre.copy()
    u = span.to_span(centre)
    u_kept = u.copy()
    span.from_span(u)
    np.testing.assert_array_equal(centre, kept)
    np.testing.assert_array_equal(u, u_kept)


def test_a_kernel_working_set_step_in_its_span():
    """A restricted problem as the working set builds it on kernel factor rows (Gram matrix of
    rank 100 = d; 10 working negatives, the band of pairs near the margin): the same solution
    in far fewer coordinates."""
    from infpush_cvx.data import BipartiteData
    from infpush_cvx.data.generators import planted_bipartite
    from infpush_cvx.data.kernels import factorise
    from infpush_cvx.solvers.engines.lower_model import LowerModel as _Model
    from infpush_cvx.solvers.engines.working_set import _initial_w, _Problem

    data = planted_bipartite(40, 60, 5, margin=0.3, seed=2)
    L = factorise(np.vstack([data.Xp, data.Xn]), "rbf", 0.5).L
    prob = _Problem(BipartiteData(L[:40], L[40:]), 0.01, "infinite_push", "l2")
    w_c = 3.0 * _initial_w(prob)
    s_c, t_c = prob.scores(w_c)
    cols = np.sort(np.argsort(-t_c)[:10])
    near = np.abs(s_c[:, None] - 1.0 - t_c[None, cols]) < 0.5
    bi, jj = np.nonzero(near)
    order = np.lexsort((bi, jj))
    rp = _Model(prob, s_c, t_c, cols, bi[order], cols[jj[order]]).restricted(0.5, w_c)
    span = span_step(rp)
    assert rp.d == 100 and span is not None and span.problem.d < 0.6 * rp.d
    w, mu, nu, info = solve_restricted(rp, center=w_c)
    u, mu_r, nu_r, info_r = solve_restricted(span.problem, center=span.to_span(w_c))
    assert info["status"] == info_r["status"] == "optimal"
    np.testing.assert_allclose(span.from_span(u), w, atol=1e-6 * np.abs(w).max())
    np.testing.assert_allclose(mu_r, mu, atol=1e-6 * rp.coef)
    np.testing.assert_allclose(nu_r, nu, atol=1e-6 * rp.coef)


@pytest.mark.parametrize("groups", [True, False])
@pytest.mark.parametrize("rank", [None, 6])
@pytest.mark.parametrize("dense_band", [True, False])
def test_triangular_pair_system_is_the_dense_one(groups, rank, dense_band, monkeypatch):
    """The reduced problem's Newton matrix, its pair sum formed as ``T^T (Lap T)`` with the
    triangular pair rows T (the pair sums by one pass over the pairs, or by products with the
    dense pair weights), against the dense form of :class:`RestrictedProblem` on the same
    reduced data, at a random interior scaling."""
    monkeypatch.setattr(kernel_span, "DENSE_BAND", 0.0 if dense_band else np.inf)
    rp, _ = _problem(rank=rank, groups=groups)
    reduced = span_step(rp).problem
    assert isinstance(reduced, TriangularSpanProblem) and reduced._scattered
    assert reduced._dense == dense_band
    T = np.vstack([reduced.XI, reduced.XJ[reduced.used]])
    assert reduced.d1 == T.shape[0] == 13
    np.testing.assert_array_equal(T[:, :reduced.d1], np.tril(T[:, :reduced.d1]))
    np.testing.assert_array_equal(T[:, reduced.d1:], 0.0)
    rng = np.random.default_rng(7)
    s, z = rng.uniform(0.1, 2.0, (2, reduced.n_rows))
    pairs = slice(reduced.k, reduced.k + 2 * reduced.nb)
    fast = reduced._scattered_pair_system(s[pairs], z[pairs])
    dense = RestrictedProblem._scattered_pair_system(reduced, s[pairs], z[pairs])
    for key in ("inv_delta", "D2"):
        np.testing.assert_allclose(fast[0][key], dense[0][key], rtol=1e-14)
    scale = np.abs(dense[1]).max()
    assert scale > 0
    np.testing.assert_allclose(fast[1], dense[1], rtol=0, atol=1e-13 * scale)
    for got, want in zip(fast[2:], dense[2:]):
        if groups:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())
        else:
            assert got is None and want is None
    # the factored Newton matrix: the same as a plain problem's on the same reduced data
    plain = RestrictedProblem(reduced.XI, reduced.XJ, reduced.bi, reduced.bj, coef=reduced.coef,
                              groups=groups, a=reduced.a if groups else None,
                              g=reduced.g if groups else None, c_e=reduced.c_e,
                              q_w=reduced.q_w, kappa=reduced.kappa, pair_weight=reduced.pi)
    got, want = np.tril(reduced.factor(s, z)["chol"][0]), np.tril(plain.factor(s, z)["chol"][0])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_triangular_span_problem_on_a_grid_of_pairs_takes_the_grid_system():
    """Every pair of the band positives with the first negatives (the exact model of a small
    problem) is the interior point's grid, whose own pass the reduced problem keeps."""
    rng = np.random.default_rng(11)
    d, nI, nJ, g = 60, 6, 4, 3
    XI, XJ = rng.normal(size=(nI, d)) + 0.5, rng.normal(size=(nJ, d)) - 0.5
    bi, bj = np.tile(np.arange(nI), g), np.repeat(np.arange(g), nI)
    rp = RestrictedProblem(XI, XJ, bi, bj, coef=2.0, groups=True, a=rng.uniform(0, 3, nJ),
                           g=rng.normal(size=(nJ, d)), q_w=rng.normal(size=d), kappa=1.5)
    span = span_step(rp)
    assert span is not None and span.problem._grid == g
    w, mu, nu, info = solve_restricted(rp, center=np.zeros(d))
    u, mu_r, nu_r, info_r = solve_restricted(span.problem, center=np.zeros(span.problem.d))
    assert info["status"] == info_r["status"] == "optimal"
    np.testing.assert_allclose(span.from_span(u), w, atol=1e-6 * np.abs(w).max())
    np.testing.assert_allclose(mu_r, mu, atol=1e-6 * rp.coef)


def test_a_step_without_band_pairs_in_its_span():
    """No band pairs yet (the first rounds: only the working negatives' linear pieces): the
    reduced problem has no pair rows (d1 = 0) and solves the same step."""
    rng = np.random.default_rng(4)
    d, nJ = 50, 8
    XJ = rng.normal(size=(nJ, d))
    g = rng.normal(size=(nJ, 3)) @ rng.normal(size=(3, d))  # (3 dimensions)
    rp = RestrictedProblem(np.zeros((0, d)), XJ, np.zeros(0, np.intp), np.zeros(0, np.intp),
                           coef=2.0, groups=True, a=rng.uniform(0, 3, nJ), g=g,
                           q_w=0.1 * rng.normal(size=d), kappa=1.5)
    span = span_step(rp)
    assert span is not None and span.problem.d1 == 0 and span.problem.d == 4
    w, mu, _, info = solve_restricted(rp, center=np.zeros(d))
    u, mu_r, _, info_r = solve_restricted(span.problem, center=np.zeros(span.problem.d))
    assert info["status"] == info_r["status"] == "optimal"
    np.testing.assert_allclose(span.from_span(u), w, atol=1e-6 * np.abs(w).max())
    np.testing.assert_allclose(mu_r, mu, atol=1e-6 * rp.coef)


def test_lower_to_symmetric_across_tiles():
    """The mirror copy of a lower triangle, over several tiles and a ragged last one, into the
    top left of a larger matrix (the rest untouched)."""
    from infpush_cvx.data.cholesky import TILE
    from infpush_cvx.solvers.engines.kernel_span import _lower_to_symmetric

    rng = np.random.default_rng(3)
    n = 2 * TILE + 37
    lower = rng.normal(size=(n, n))
    out = np.full((n + 5, n + 5), 7.0)
    _lower_to_symmetric(np.asfortranarray(lower), out)
    want = np.tril(lower) + np.tril(lower, -1).T
    np.testing.assert_array_equal(out[:n, :n], want)
    np.testing.assert_array_equal(out[n:], 7.0)
    np.testing.assert_array_equal(out[:, n:], 7.0)


def test_pair_sum_is_the_laplacian_form_at_several_tiles():
    """``_pair_sum`` equals ``T^T Lap T`` formed densely, for a triangular T of more than one
    tile of rows, nI of them positives with nonnegative weights W."""
    from infpush_cvx.solvers.engines.kernel_span import _pair_sum

    rng = np.random.default_rng(4)
    nI, nu = 300, 140
    d1 = nI + nu
    T = np.tril(rng.normal(size=(d1, d1)))
    W = rng.uniform(size=(nI, nu)) * (rng.uniform(size=(nI, nu)) < 0.3)
    r = np.concatenate([W.sum(axis=1), W.sum(axis=0)])
    lap = np.diag(r)
    lap[:nI, nI:] = -W
    lap[nI:, :nI] = -W.T
    S = np.zeros((d1 + 3, d1 + 3))
    XI1 = np.ascontiguousarray(T[:nI, :nI])
    _pair_sum(S, np.asfortranarray(T), r, XI1, W @ T[nI:])
    want = T.T @ lap @ T
    np.testing.assert_allclose(S[:d1, :d1], want, rtol=0, atol=1e-12 * np.abs(want).max())
    np.testing.assert_array_equal(S[d1:], 0.0)
    np.testing.assert_array_equal(S[:, d1:], 0.0)


def test_a_span_problem_is_not_reduced_again_and_takes_correctors_when_large(monkeypatch):
    """span_step of a problem already on its span is None (no QR to find what is known); the
    centrality correctors are taken, and the step is costly, from ``COSTLY_FROM`` coordinates
    on."""
    rp, _ = _problem(rank=6)
    span = span_step(rp)
    assert span_step(span.problem) is None
    assert span.problem.correctors == 0 and not span.problem.costly  # 13 coordinates
    monkeypatch.setattr(kernel_span, "COSTLY_FROM", span.problem.d)
    assert span.problem.correctors == 4 and span.problem.costly
    assert RestrictedProblem.correctors == 0 and not RestrictedProblem.costly


def test_the_span_step_is_not_begun_when_its_qrs_cannot_end_in_time():
    """Under a deadline the first QR is begun only when its flops fit at SPAN_FLOP_RATE, and
    the rest only when they fit at the rate the first QR ran at (a clock of 0.02 s a reading:
    the first QR takes 0.02 s, the rest is predicted at 0.022 s); a step refused so ends the
    working set's solve at its time limit (restricted_step's StepNotStarted)."""
    from itertools import count

    from infpush_cvx.data.cholesky import TimeLimitReached
    from infpush_cvx.solvers.engines.deadline import Deadline
    from infpush_cvx.solvers.engines.restricted_step import StepNotStarted, restricted_step

    rp, centre = _problem(rank=6)
    with pytest.raises(TimeLimitReached, match="QR of the pair rows"):
        span_step(rp, deadline=Deadline(1e-7, start=0.0, clock=lambda: 0.0))
    with pytest.raises(StepNotStarted, match="QR of the pair rows"):
        restricted_step(rp, centre, deadline=Deadline(1e-7, start=0.0, clock=lambda: 0.0))

    def ticking(limit):
        ticks = count(1)
        return Deadline(limit, start=0.0, clock=lambda: 0.02 * next(ticks))
    with pytest.raises(TimeLimitReached, match="group rows"):
        span_step(rp, deadline=ticking(0.09))  # 0.01 s left after the first QR
    timed = span_step(rp, deadline=ticking(0.2))
    np.testing.assert_array_equal(timed.problem.XI, span_step(rp).problem.XI)


def test_a_costly_span_step_takes_the_costly_accuracy_and_the_mapped_certificate(monkeypatch):
    """restricted_step hands the interior point ``costly_tol`` on a costly span problem and
    ``tol`` otherwise, and the caller's certificate sees the weights in the caller's d
    coordinates (mapped back from the span), with the multipliers of every group and pair."""
    from infpush_cvx.solvers.engines import restricted_step as _restricted_step

    rp, centre = _problem(rank=6)
    seen = []
    solve = _restricted_step.solve_restricted

    def recording(prob, **kw):
        seen.append((prob.costly, kw.get("tol")))
        return solve(prob, **kw)

    monkeypatch.setattr(_restricted_step, "solve_restricted", recording)
    shapes = []

    def gap_of(w, mu, nu):
        shapes.append((w.shape, mu.shape, nu.shape))
        return 0.0  # (certifies the first iterate it is shown)

    for costly_from in (10_000, 0):  # 13 coordinates: cheap, then costly
        monkeypatch.setattr(kernel_span, "COSTLY_FROM", costly_from)
        w, mu, nu, name = _restricted_step.restricted_step(
            rp, centre, tol=1e-6, costly_tol=1e-4, certificate=(gap_of, 1e-6))
        assert name == "ipm" and w.shape == (rp.d,)
    assert seen == [(False, 1e-6), (True, 1e-4)]
    assert shapes and set(shapes) == {((rp.d,), (rp.k,), (rp.nb,))}


def test_the_span_problems_row_products_are_the_dense_ones():
    """TriangularSpanProblem's products with its rows from their nonzero blocks (XI's first
    nI coordinates, the used rows of XJ in the first d1) equal the dense products: the rows of
    XJ that no pair uses are 0 on the span."""
    rp, _ = _problem(rank=None)
    span = span_step(rp)
    prob = span.problem
    assert isinstance(prob, TriangularSpanProblem) and prob.used.size < prob.nJ
    rng = np.random.default_rng(1)
    w, cols, rows = rng.normal(size=prob.d), rng.normal(size=prob.nI), rng.normal(size=prob.nJ)
    s, t = prob._row_scores(w)
    np.testing.assert_allclose(s, prob.XI @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(t, prob.XJ @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(prob._row_sum(cols, rows), prob.XI.T @ cols - prob.XJ.T @ rows,
                               rtol=1e-13, atol=1e-13)
    # and the step is the dense problem's
    u, *_ = solve_restricted(prob, center=np.zeros(prob.d))
    dense = RestrictedProblem(prob.XI, prob.XJ, prob.bi, prob.bj, coef=prob.coef, groups=True,
                              a=prob.a, g=prob.g, q_w=prob.q_w, kappa=prob.kappa,
                              pair_weight=prob.pi)
    u_dense, *_ = solve_restricted(dense, center=np.zeros(prob.d))
    np.testing.assert_allclose(u, u_dense, atol=1e-7 * np.abs(u_dense).max())
