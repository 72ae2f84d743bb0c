"""Kernel Infinite Push and RankSVM: kernel -> factor -> linear solve -> coefficients.

The RKHS problem (paper scaling, :mod:`infpush_cvx.data.kernels`)::

    minimise over beta   (lam/2) beta^T K beta + loss(K beta),   K = K(Z, Z),  Z = [Xp; Xn]

is the linear problem on the feature rows ``L`` of ``K = L L^T`` over ``v = L^T beta``. The exact
route factorises K by pivoted Cholesky (default) or eigendecomposition
(:func:`infpush_cvx.data.kernels.factorise`) and runs the linear solver on ``L``.
:func:`._kernel_span.span_step` states a working-set restricted step on the span of its own
rows (a few hundred to 1,200 coordinates on Spambase instead of the rank, 4,146), the form in
which the working set needs it to be fast on a factor's rows. The exact route then recomputes the
objective and the gap on the exact problem with the full Gram matrix
(:func:`exact_certificate`), so the certificate never rests on the factor: a solve certified
on the factor but not on K (a factor residual too large for ``tol``; the Cholesky route's is
about 1e-11 of ``max(diag K)``) is reported as "stalled". The result's ``w`` (and ``beta``) are
the coefficients beta over the training rows ``[Xp; Xn]``; ``info["v"]`` the linear weights on
``L``, ``info["rank"]`` its columns, ``info["kernel"]`` (the name or the callable),
``info["gamma"]`` (resolved), ``info["degree"]``, ``info["coef0"]``, ``info["landmarks"]``
(Nystroem rows, None for the exact route), ``info["factor"]`` (``"cholesky"``, ``"eigh"`` or
``"nystroem"``), ``info["factor_residual"]`` (``||K - L L^T||_2`` or a bound on it; None for
Nystroem), ``info["factor_gap"]`` (the linear solver's own gap, exact routes) and
``info["factor_time"]`` (Gram matrix and its factor, seconds; included in ``time``).
``nystroem="adaptive"`` (:func:`adaptive_solve`) solves on a growing span and certifies the
exact problem with the full Gram matrix.

The papers' gradient projection in kernel form ([Agarwal2011], eqs. 3.12 to 3.14, Figures 2
and 3) works on the dual over pairs, ``Q(alpha) = 1/2 sum alpha_ij alpha_kl phi_K - sum alpha``
with ``phi_K`` the kernel of pair differences, i.e. ``Q = 1/2 beta^T K beta - sum(alpha)`` with
``beta(alpha) = [alpha 1_n; -alpha^T 1_m]`` (eq. 3.14's ``f = sum_ij alpha_ij (K(x_i^+, .) -
K(x_j^-, .))``), and gradient ``dQ/dalpha_ij = f(x_i^+) - f(x_j^-) - 1``, ``f = K beta(alpha)``.
On the rows ``L`` the linear method computes
``w(alpha) = L^T beta(alpha)`` and the scores ``L w(alpha) = K beta(alpha)``: the same gradient,
the same ``Q(alpha) = 1/2 beta^T K beta - sum(alpha)``, the same Lipschitz constant (the largest
eigenvalue of the pair operator, which depends on ``K`` only), hence the same iterates; so
``method="paper"`` on ``L`` is the kernel algorithm (tests/solvers/test_kernels.py checks it
against a direct implementation with ``K``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_time_limit
from ..data.containers import BipartiteData
from ..data.kernels import factorise
from ._common import as_bipartite
from ._deadline import Deadline
from .result import SolverResult, relative_gap, warn_if_not_converged


def training_rows(data: BipartiteData) -> np.ndarray:
    """``Z = [Xp; Xn]`` as a dense array: the rows the coefficients beta refer to."""
    parts = [X.toarray() if sp.issparse(X) else np.asarray(X) for X in (data.Xp, data.Xn)]
    return np.vstack(parts)


def _warm_start(warm_start):
    """A kernel result warm-starts the linear solve from its weights on ``L`` (same data and
    kernel give the same ``L``); anything else is passed on as it is."""
    if isinstance(warm_start, SolverResult) and "v" in warm_start.info:
        return dataclasses.replace(warm_start, w=warm_start.info["v"])
    return warm_start


#: The losses of the linear solvers the kernel route runs.
LOSSES = ("infinite_push", "ranksvm")


def kernel_solve(linear, Xp, Xn, lam, *, kernel, gamma, degree, coef0, nystroem, seed,
                 wp, wn, warm_start, time_limit, factor_method="cholesky", loss,
                 **kwargs) -> SolverResult:
    """Solve the RKHS problem with the linear solver ``linear`` (``infinite_push`` or
    ``ranksvm``, whose loss is ``loss``: ``"infinite_push"`` or ``"ranksvm"``) on the factor
    rows; ``kwargs`` go to it unchanged. ``factor_method``: the exact route's factor
    (:data:`infpush_cvx.data.kernels.FACTOR_METHODS`). The exact routes report the objective and
    gap of the exact problem, recomputed with the Gram matrix (:func:`exact_certificate`;
    ``info["factor_gap"]`` is the linear solver's own). ``time_limit`` covers the Gram matrix,
    its factor and the solves: the linear solver gets the time left of one
    :class:`~._deadline.Deadline`."""
    deadline = Deadline(check_time_limit(time_limit))
    loss = check_choice(loss, "loss", LOSSES)
    data = as_bipartite(Xp, Xn, wp, wn)
    if isinstance(nystroem, str):
        if nystroem != "adaptive":
            raise ValueError(f"unknown nystroem {nystroem!r}; expected None, a number of "
                             f"landmarks or 'adaptive'")
        if warm_start is not None:
            raise TypeError("warm_start is not used with nystroem='adaptive' (its span is "
                            "rebuilt from the data)")
        return adaptive_solve(linear, data, lam, kernel=kernel, gamma=gamma, degree=degree,
                              coef0=coef0, deadline=deadline, loss=loss, **kwargs)
    factor = factorise(training_rows(data), kernel, gamma, degree, coef0, nystroem=nystroem,
                       seed=seed, method=factor_method)
    factor_time = deadline.elapsed()
    L, m = factor.L, data.m
    if L.shape[1] == 0:  # K = 0: every f is 0; one zero column keeps the linear solver's shapes
        L = np.zeros((L.shape[0], 1))
    res = linear(L[:m], L[m:], lam, wp=data.wp, wn=data.wn, warm_start=_warm_start(warm_start),
                 time_limit=deadline.for_solver(), **kwargs)
    v = res.w if factor.rank else np.zeros(0)
    beta = factor.coefficients(v)
    info = dict(res.info, v=v, rank=factor.rank, kernel=factor.kernel, gamma=factor.gamma,
                degree=factor.degree, coef0=factor.coef0, landmarks=factor.landmarks,
                factor_time=factor_time, factor=factor.method,
                factor_residual=factor.residual if factor.gram is not None else None)
    res = dataclasses.replace(res, w=beta, info=info)
    if factor.gram is not None and res.dual is not None:
        res = _certified_on_gram(res, factor.gram, data, lam, kwargs, loss=loss)
    return dataclasses.replace(res, time=deadline.elapsed())


def exact_certificate(K, beta, dual, data: BipartiteData, lam, *, loss: str, scaling: str):
    """``(objective, dual value, relative gap)`` of the coefficients ``beta`` and a pair dual
    point on the exact RKHS problem with the Gram matrix ``K``, the values in ``scaling``.

    Paper scaling: the primal ``lam/2 beta^T K beta + loss(K beta)`` (the weighted hinge sums of
    :func:`infpush_cvx.formulations.objectives.negative_hinge_sums`), and the dual value
    ``lam (sum alpha - 1/2 b^T K b)`` with ``b = [alpha 1_n; -alpha^T 1_m]`` ([Agarwal2011],
    eq. 3.9 with ``w(alpha) = L^T b``, so ``||w(alpha)||^2 = b^T K b`` whatever the factor).
    Neither uses a factor: the gap is the exact problem's.
    """
    from ..formulations import scaling as _scaling
    from ..formulations.objectives import mean_loss, negative_hinge_sums

    m, n = data.m, data.n
    M, Nw = data.wp_sum, data.wn_sum
    mult = _scaling.objective_multiplier(scaling, loss=loss, m=M, n=Nw)
    lam_p = _scaling.to_paper_lambda(lam, scaling, loss=loss, penalty="l2", m=M, n=Nw)
    f = K @ beta
    H = negative_hinge_sums(f[:m], f[m:], np.asarray(data.pos_weights, float))
    value = mean_loss(H, loss, M, np.asarray(data.neg_weights, float), Nw)
    primal = 0.5 * lam_p * float(beta @ f) + value
    rows, cols = _pair_sums(dual, m, n)
    b = np.concatenate([rows, -cols])
    lower = lam_p * (float(cols.sum()) - 0.5 * float(b @ (K @ b)))
    return mult * primal, mult * lower, relative_gap(primal, lower)


def _certified_on_gram(res: SolverResult, K, data, lam, kwargs, *, loss) -> SolverResult:
    """``res`` (beta in ``w``) with its objective and gap recomputed on the exact problem
    (:func:`exact_certificate`; ``loss`` as for :func:`kernel_solve`, ``kwargs`` the linear
    solver's options); a certificate that holds on the factor but not on K (a factor residual
    too large for ``tol``) becomes status "stalled", with a message and a warning."""
    objective, _, gap = exact_certificate(K, res.w, res.dual, data, lam, loss=loss,
                                          scaling=kwargs.get("scaling", "paper"))
    info = dict(res.info, factor_gap=res.gap)
    out = dataclasses.replace(res, objective=objective, gap=gap, info=info)
    tol = kwargs.get("tol", 1e-6)
    if res.converged and not gap <= tol:
        out = dataclasses.replace(
            out, status="stalled",
            message=f"certified to {res.gap:.2e} on the factor rows but only to {gap:.2e} on "
                    f"the exact problem (factor residual {info['factor_residual']:.2e}); "
                    f"a smaller factor tolerance is needed")
        warn_if_not_converged(out)
    return out


def _pair_sums(dual, m: int, n: int):
    """``(alpha 1_n, alpha^T 1_m)`` of a dual point (an implicit one column by column)."""
    if not hasattr(dual, "column"):
        alpha = np.asarray(dual)
        return alpha.sum(axis=1), alpha.sum(axis=0)
    rows, cols = np.zeros(m), np.zeros(n)
    for j in range(n):
        col = dual.column(j)
        rows += col
        cols[j] = col.sum()
    return rows, cols


#: Atoms added per round by the adaptive route: rows in the dual's support, at most this many.
_ATOMS_PER_ROUND = 100


def adaptive_solve(linear, data, lam, *, kernel, gamma, degree, coef0, deadline: Deadline, loss,
                   tol=1e-6, max_iter=None, **kwargs) -> SolverResult:
    """The exact RKHS problem certified with the full Gram matrix, solved on a growing span.

    ``f`` is restricted to the span of atoms ``g = sum_l B_lk K(z_l, .)`` (the columns of B):
    the mean positive's kernel function, the negatives nearest it, and then, every round, the
    current dual point's function ``K b(alpha)`` with the rows of its support whose coefficient
    the span lacks. The restricted problem is the linear one on ``L = K B (B^T K B)^{-1/2}`` (its
    objective is the exact RKHS objective of its ``f``), and its pair dual is feasible for the
    exact problem, whose dual value ``lam (sum alpha - 1/2 b^T K b)`` uses the full K: the
    relative gap of the two is a certificate for the exact problem, the stopping test
    (``tol``). Once every row is an atom this is the exact route. ``info["rounds"]``,
    ``info["atoms"]``, ``info["restricted_gap"]``; O(N^2) memory (K), like the exact route.
    """
    from ..data.kernels import check_kernel, kernel_matrix, resolve_gamma

    kernel, gamma, degree, coef0 = check_kernel(kernel, gamma, degree, coef0)
    Z = training_rows(data)
    m, n = data.m, data.n
    N = m + n
    g = gamma if callable(kernel) or kernel == "linear" else resolve_gamma(gamma, Z)
    K = kernel_matrix(Z, None, kernel, g, degree, coef0)
    K = 0.5 * (K + K.T)
    factor_time = deadline.elapsed()
    scaling = kwargs.get("scaling", "paper")
    mean_pos = np.concatenate([np.full(m, 1.0 / m), np.zeros(n)])
    near = m + np.argsort(-(K[m:] @ mean_pos), kind="stable")[:2 * _ATOMS_PER_ROUND // 4]
    dense_atoms = [mean_pos]
    singles = list(near)
    inner_tol = tol / 10
    rounds, res, gap, beta = 0, None, np.inf, None
    while True:
        rounds += 1
        B = np.zeros((N, len(dense_atoms) + len(singles)))
        B[:, :len(dense_atoms)] = np.array(dense_atoms).T
        B[singles, len(dense_atoms) + np.arange(len(singles))] = 1.0
        KB = K @ B
        e, U = np.linalg.eigh(0.5 * (B.T @ KB + KB.T @ B))
        keep = e > 1e-12 * max(float(e[-1]), 0.0) if e.size and e[-1] > 0 else e > np.inf
        T = U[:, keep] / np.sqrt(e[keep])
        L = KB @ T if T.shape[1] else np.zeros((N, 1))
        res = linear(L[:m], L[m:], lam, wp=data.wp, wn=data.wn, tol=inner_tol,
                     max_iter=max_iter, time_limit=deadline.for_solver(), **kwargs)
        beta = B @ (T @ res.w) if T.shape[1] else np.zeros(N)
        if res.dual is None:
            break
        _, _, gap = exact_certificate(K, beta, res.dual, data, lam, loss=loss, scaling=scaling)
        if gap <= tol or len(singles) == N or res.status not in ("optimal",
                                                                  "degenerate_optimal"):
            break
        if deadline.expired():
            break
        rows, cols = _pair_sums(res.dual, m, n)
        b = np.concatenate([rows, -cols])
        # new atoms: the dual's function, the negatives of its support, and the positives
        # whose coefficient departs most from the common one (the mean positive's atom)
        have = set(singles)
        dense_atoms.append(b / np.linalg.norm(b))
        scale = np.abs(b).max()
        neg = [m + j for j in np.flatnonzero(np.abs(b[m:]) > 1e-12 * scale) if m + j not in have]
        bp = b[:m]
        dev = np.abs(bp - np.median(bp))
        pos = [int(i) for i in np.argsort(-dev, kind="stable")
               if dev[i] > 1e-3 * np.abs(bp).max() and i not in have]
        singles += neg[:_ATOMS_PER_ROUND] + pos[:_ATOMS_PER_ROUND]
        if not neg and not pos and len(dense_atoms) > N:
            break
    status = res.status
    if status in ("optimal", "degenerate_optimal") and not gap <= tol:
        status = "time_limit" if deadline.expired() else "stalled"
    message = res.message if status == res.status else (
        f"the certified gap on the exact problem is {gap:.2e} after {rounds} rounds "
        f"({len(singles)} row atoms)")
    info = dict(res.info, v=res.w, rank=L.shape[1], kernel=kernel, gamma=g, degree=degree,
                coef0=coef0, landmarks=None, factor_time=factor_time, rounds=rounds,
                atoms=len(dense_atoms) + len(singles), restricted_gap=res.gap)
    result = dataclasses.replace(res, w=beta, gap=float(gap), status=status, message=message,
                                 info=info, time=deadline.elapsed())
    if not result.converged:
        warn_if_not_converged(result)
    return result
