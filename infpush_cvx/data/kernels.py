"""Kernels for the Infinite Push and RankSVM: Gram matrices, their factors, and the RKHS problem.

The kernel Infinite Push and RankSVM learn ``f = sum_k beta_k K(z_k, .)`` over the training
points ``Z = [Xp; Xn]`` (positives first). In paper scaling (docs/mathematics.md, sections 1
and 3; [Agarwal2011] writes the Infinite Push and its dual with a kernel)::

    minimise over beta   (lam/2) beta^T K beta + loss(K beta),    K = K(Z, Z)

where ``loss`` is the Infinite Push's ``max_j (1/m) sum_i max(0, 1 - (s_i - t_j))`` or
RankSVM's pair mean on the scores ``(s; t) = K beta``.

Kernels (scikit-learn's ``SVC`` semantics, so a model tuned there means the same here):

- ``"linear"``: ``<a, b>``;
- ``"rbf"``: ``exp(-gamma ||a - b||^2)``;
- ``"poly"``: ``(gamma <a, b> + coef0) ** degree``;
- a callable ``kernel(A, B)`` returning the ``len(A) x len(B)`` Gram matrix.

``gamma`` is a nonnegative number, ``"scale"`` (``1 / (d * Z.var())``, 1 when the training data
are constant) or ``"auto"`` (``1 / d``), resolved on the training points.

Exact route (:func:`factorise`). With ``K = L L^T`` (``L`` is N x r) the RKHS problem is the
linear one on the feature rows ``L`` over ``v = L^T beta``, because ``beta^T K beta =
||L^T beta||^2`` and ``K beta = L (L^T beta)``: the linear solvers run unchanged on
``Xp' = L[:m]``, ``Xn' = L[m:]``, their certified duality gap is the gap of the RKHS problem
(same optimal value, and the pair dual depends on the data through ``K`` only), and the
coefficients solve ``L^T beta = v``. Two factors (``method`` of :func:`factorise`):

- ``"cholesky"`` (the default): the pivoted Cholesky factorisation (``dpstrf``'s blocked algorithm
  in panels that can stop at a deadline, :func:`pivoted_cholesky`; Higham,
  *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002, section 10.3), stopped when
  every remaining diagonal entry of the Schur complement is at most ``tol * max(diag K)``.
  With the r pivots P first, ``K[P, P] = C C^T`` (C lower triangular) and ``L[P] = C``:
  ``beta`` is ``C^{-T} v`` on the pivots and 0 elsewhere, so the scores ``K beta = L v`` and
  the norm ``beta^T K beta = ||v||^2`` hold exactly (``K - L L^T`` vanishes on the pivots' rows
  and columns), and the factor problem is the RKHS problem with ``f`` in the span of the
  pivots' kernel functions. ``K - L L^T`` is the Schur complement S of the pivots; its
  spectral norm is measured (``KernelFactor.residual``: from the eigenvalues of S, or a
  row-sum bound when S is small entrywise); it bounds how far the exact problem's optimum
  can lie below the factor problem's. O(N^2 r) time (about 1.5 s for Spambase's N = 4,601,
  rank 4,146, residual 3e-11, against 12-20 s for the eigendecomposition).
- ``"eigh"``: the eigendecomposition ``K = U diag(e) U^T``: ``L = U_r diag(sqrt(e_r))`` over the
  eigenvalues above ``tol * max(e)``, so ``beta = U_r diag(1 / sqrt(e_r)) v`` (minimum norm).

Either way the kernel solvers certify their answer on the exact problem with the full Gram
matrix (:mod:`infpush_cvx.solvers.engines.kernel`), so the factor's residual can only make the
certified gap larger, never wrong.

The rank cut-off (``"eigh"``). Components of beta in the null space of ``K`` change neither
``beta^T K beta`` nor ``K beta``, so the RKHS problem restricted to the range of ``K`` is exact,
and ``v`` ranges over all of ``R^r``. Eigenvalues below ``tol * max(e)`` are round-off of a
positive semidefinite matrix (their size is that of the eigensolver's backward error, about
``1e-16 N max(e)``); dropping them changes ``K`` by at most ``tol * max(e)`` in the spectral
norm. A Gram matrix with an
eigenvalue below ``-PSD_TOL * max(e)`` is not positive semidefinite (a callable that is not a
kernel, ``poly`` with a negative ``coef0``): the RKHS problem is then not convex, and it is
refused with a ValueError naming ``kernel`` (for ``"cholesky"``: a diagonal entry below
``-PSD_TOL * max|diag K|``, or a Schur complement of the pivots with an eigenvalue below that).

Low-rank route (Nystroem, [Williams2001] in docs/references.md). ``c`` landmarks drawn uniformly
without replacement from an explicit seed; with ``K_cc = U diag(e) U^T`` on them, the rows
``L = K(Z, landmarks) U_r diag(1 / sqrt(e_r))``. This is exactly the RKHS problem with ``f``
restricted to the span of the landmarks' kernel functions (``beta`` zero off the landmarks): the
certified gap certifies that restricted problem, whose optimum is an upper bound on the full one.
Memory ``O(N c)`` instead of ``O(N^2)``.

Adaptive route (``nystroem="adaptive"`` of the solvers, :func:`infpush_cvx.solvers.engines.kernel.
adaptive_solve`): the span grows round by round from the dual point's own function and the rows
of its support, and every round the restricted answer is certified on the exact problem with the
full Gram matrix (the restricted pair dual is feasible for it; its value uses ``K``), until that
gap is at most ``tol``. Exact like the first route, with restricted problems of the span's size
instead of the numerical rank of ``K``; O(N^2) memory. It forms no factor, so a Gram matrix that
is not positive semidefinite is refused there by cheaper tests (:func:`refuse_indefinite`: a
negative diagonal entry, or a negative Ritz value of a block Krylov probe for the kernels that
are not PSD by construction), and a certificate that comes out negative beyond its round-off is
reported as a failed one.

Time limits. The Gram matrix is computed, and factorised, in blocks of rows between which a
solve's deadline is checked (:class:`TimeLimitReached`): the pivoted Cholesky factorisation of
a full-rank 10,000 x 10,000 matrix takes about 20 s, its Gram matrix 6 s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._validation import check_choice, check_int, check_matrix, check_scalar, check_vector
from .cholesky import (PSD_TOL, RANK_TOL, TimeLimitReached, check_deadline, diagonal_scale,
                       not_psd_error, pivoted_cholesky, refuse_below, row_blocks, symmetric_copy,
                       symmetrise)

__all__ = ["FACTOR_METHODS", "KERNELS", "KERNEL_OPTIONS", "KernelFactor", "PSD_TOL",
           "TimeLimitReached", "factorise", "gram_factor", "kernel_matrix", "kernel_options",
           "not_psd_error", "pivoted_cholesky", "psd_by_construction", "refuse_indefinite",
           "resolve_gamma", "symmetrise"]

#: The named kernels (a callable is accepted too).
KERNELS = ("linear", "rbf", "poly")
#: The options of the formulations and solvers that define the kernel (catalog options).
KERNEL_OPTIONS = ("kernel", "gamma", "degree", "coef0")


def check_kernel(kernel, gamma="scale", degree=3, coef0=0.0):
    """The validated ``(kernel, gamma, degree, coef0)``; errors name the argument.

    ``kernel``: one of :data:`KERNELS` or a callable (TypeError otherwise, ValueError for an
    unknown name). ``gamma``: ``"scale"``, ``"auto"`` or a finite number ``>= 0``. ``degree``:
    an integer ``>= 0``. ``coef0``: a finite number.
    """
    if not callable(kernel):
        if not isinstance(kernel, str):
            raise TypeError(f"kernel must be one of {list(KERNELS)} or a callable, got "
                            f"{type(kernel).__name__} {kernel!r}")
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}; expected one of {list(KERNELS)} or a "
                             f"callable kernel(A, B)")
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"unknown gamma {gamma!r}; expected 'scale', 'auto' or a number >= 0")
    else:
        gamma = check_scalar(gamma, "gamma", nonnegative=True)
    degree = check_int(degree, "degree", minimum=0)
    coef0 = check_scalar(coef0, "coef0")
    return kernel, gamma, degree, coef0


def kernel_options(options: dict) -> dict:
    """The kernel options among a catalog problem's ``options`` (empty for a linear problem)."""
    return {k: options[k] for k in KERNEL_OPTIONS if k in options}


def training_rows(data) -> np.ndarray:
    """``Z = [Xp; Xn]`` of a :class:`~infpush_cvx.data.BipartiteData` as a dense array: the rows
    the coefficients beta of a kernel problem refer to."""
    return np.vstack([X.toarray() if sp.issparse(X) else X for X in (data.Xp, data.Xn)])


def resolve_gamma(gamma, X, sample_weight=None) -> float:
    """``gamma`` as a number for the training points ``X`` (scikit-learn's ``SVC`` rule):
    ``"scale"`` is ``1 / (d * X.var())`` (1 when ``X.var()`` is 0), ``"auto"`` is ``1 / d``.

    ``sample_weight`` (one nonnegative weight per row of ``X``, not all zero): ``X.var()`` is
    then the weighted variance of the entries, ``sum_i w_i sum_k (X_ik - mu)^2 / (d sum_i w_i)``
    about the weighted mean ``mu = sum_i w_i sum_k X_ik / (d sum_i w_i)``, so that integer
    weights give the gamma of the data with every row repeated that many times (scikit-learn's
    ``SVC`` also computes it from the unweighted X; here a weight is a repeated row).
    """
    X = _dense(X, "X")
    d = X.shape[1]
    if gamma == "scale":
        if sample_weight is None:
            var = float(X.var())
        else:
            w = check_vector(sample_weight, "sample_weight", length=X.shape[0],
                             nonnegative=True)
            if not w.sum() > 0:
                raise ValueError("sample_weight: every weight is zero")
            mu = float(np.average(X.mean(axis=1), weights=w))
            var = float(np.average(((X - mu) ** 2).mean(axis=1), weights=w))
        return 1.0 / (d * var) if var != 0 else 1.0
    if gamma == "auto":
        return 1.0 / d
    return check_scalar(gamma, "gamma", nonnegative=True)


def _dense(X, name: str) -> np.ndarray:
    X = check_matrix(X, name)
    return X.toarray() if sp.issparse(X) else X


#: Entries of a Gram matrix computed at a time (16 MB): the deadline is checked between blocks,
#: and a block's temporaries stay in cache.
_BLOCK_ENTRIES = 1 << 21


def kernel_matrix(A, B=None, kernel="rbf", gamma="scale", degree=3, coef0=0.0, *,
                  deadline=None) -> np.ndarray:
    """The Gram matrix ``K[i, j] = kernel(A[i], B[j])`` (``B = A`` when omitted), float64.

    scikit-learn's ``SVC`` kernels and parameters (module docstring); a string ``gamma`` is
    resolved on ``A`` (the training points when ``A`` is them). A callable must return a finite
    ``len(A) x len(B)`` array (ValueError naming ``kernel`` otherwise). The rows are computed in
    blocks of about 2 million entries (a callable is called once a block, on rows of ``A``);
    between blocks ``deadline`` is checked (:class:`TimeLimitReached` once it has passed).
    """
    kernel, gamma, degree, coef0 = check_kernel(kernel, gamma, degree, coef0)
    A = _dense(A, "A")
    same = B is None
    B = A if same else _dense(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"B has {B.shape[1]} features, A has {A.shape[1]}")
    g = gamma if callable(kernel) or kernel == "linear" else resolve_gamma(gamma, A)
    sb = np.einsum("ij,ij->i", B, B) if kernel == "rbf" else None
    K = np.empty((A.shape[0], B.shape[0]))
    step = max(1, _BLOCK_ENTRIES // max(B.shape[0], 1))
    for r0, r1 in row_blocks(A.shape[0], step, deadline):
        K[r0:r1] = _kernel_block(A[r0:r1], B, kernel, g, degree, coef0, sb,
                                 diagonal=r0 if same else None)
    return K


def _kernel_block(A, B, kernel, g, degree, coef0, sb, diagonal):
    """``K(A, B)`` for rows ``A`` of the training points (``g`` resolved); ``sb`` the squared
    norms of B's rows (rbf), ``diagonal`` the column of A's first row when B holds A's rows
    (their distances are exactly 0 there), else None."""
    if callable(kernel):
        K = np.asarray(kernel(A, B), dtype=np.float64)
        if K.shape != (A.shape[0], B.shape[0]):
            raise ValueError(f"kernel: the callable returned shape {K.shape}, expected "
                             f"{(A.shape[0], B.shape[0])}")
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel: the callable returned NaN or infinite entries")
        return K
    G = A @ B.T
    if kernel == "linear":
        return G
    if kernel == "poly":
        return (g * G + coef0) ** degree
    # rbf: ||a - b||^2 = ||a||^2 + ||b||^2 - 2 <a, b>, clipped at 0 against cancellation
    sa = np.einsum("ij,ij->i", A, A)
    D = sa[:, None] + sb[None, :] - 2.0 * G
    np.maximum(D, 0.0, out=D)
    if diagonal is not None:
        rows = np.arange(A.shape[0])
        D[rows, diagonal + rows] = 0.0
    D *= -g
    return np.exp(D, out=D)


def _eigen(K, tol: float, deadline=None):
    """``(U_r, e_r, dropped)``: the eigenpairs of the symmetric part of ``K`` (square and
    finite, ValueError naming ``K`` otherwise) above ``tol * max(e)``, and the largest absolute
    eigenvalue dropped. ``deadline`` is checked while ``K`` is symmetrised, just before the
    eigendecomposition (:class:`TimeLimitReached`)."""
    e, U = np.linalg.eigh(symmetric_copy(K, deadline))
    top = float(e.max(initial=0.0))  # (0 when no eigenvalue is positive: none is kept)
    refuse_below(e.min(initial=0.0), top)
    keep = e > tol * top
    dropped = float(np.abs(e[~keep]).max(initial=0.0))
    return U[:, keep], e[keep], dropped


def psd_by_construction(kernel, degree: int, coef0: float) -> bool:
    """Whether the named kernel's Gram matrices are PSD for all data: ``linear``, ``rbf``
    (``gamma >= 0``) and ``poly`` with ``coef0 >= 0`` (a polynomial in ``<a, b>`` with
    nonnegative coefficients: sums and products of PSD kernels are PSD). A callable may be
    anything, and ``(gamma <a, b> + coef0) ** degree`` with ``coef0 < 0`` need not be PSD."""
    return not callable(kernel) and (kernel != "poly" or coef0 >= 0 or degree == 0)


#: Probe vectors and passes over K of :func:`refuse_indefinite` (a block Krylov space of
#: 8 x 4 = 32 directions: each pass reads K once).
_PROBE_BLOCK, _PROBE_PASSES = 8, 4


def refuse_indefinite(K, *, probe: bool, seed: int = 0, deadline=None) -> None:
    """The ValueError naming ``kernel`` of :func:`pivoted_cholesky` when the symmetric ``K`` is
    seen not to be positive semidefinite, in O(N^2) time instead of a factorisation.

    Always: a diagonal entry below ``-PSD_TOL * max|diag K|``. With ``probe``: the smallest
    Rayleigh-Ritz value ``min eig(Q^T K Q)`` of an orthonormal basis Q of the block Krylov
    space ``[X, K X, K^2 X, ...]`` (:data:`_PROBE_BLOCK` random columns X drawn from ``seed``,
    :data:`_PROBE_PASSES` passes), below ``-PSD_TOL * max(diag K)`` (Saad, *Numerical Methods
    for Large Eigenvalue Problems*, 2nd ed., 2011, ch. 4 and 6: the Krylov space's Ritz values
    find the extreme eigenvalues first). A Ritz value is never below the smallest eigenvalue
    (Courant-Fischer), so a refusal is always right; a matrix that passes is not proven PSD
    (an eigenvalue the space misses), which the solve's certificate still catches when it
    shows (a dual value above the objective). Small matrices (N <= 200) get all their
    eigenvalues. ``deadline`` is checked between passes (:class:`TimeLimitReached`).
    """
    N = K.shape[0]
    scale = diagonal_scale(K)
    if not probe or N == 0:
        return
    if N <= 200:
        e = np.linalg.eigvalsh(K)
    else:
        X = np.random.default_rng(seed).standard_normal((N, _PROBE_BLOCK))
        Q = KQ = np.zeros((N, 0))  # (never written in place: hstack makes new arrays)
        for _ in range(_PROBE_PASSES):
            check_deadline(deadline)
            X, _ = np.linalg.qr(X - Q @ (Q.T @ X))
            KX = K @ X
            Q, KQ, X = np.hstack([Q, X]), np.hstack([KQ, KX]), KX
        # Rayleigh-Ritz on span(Q) with a basis orthonormal to round-off (the blocks of a
        # low-rank K lose independence: their nearly dependent directions are dropped)
        g, U = np.linalg.eigh(Q.T @ Q)
        T = U[:, g > 1e-10 * g[-1]] / np.sqrt(g[g > 1e-10 * g[-1]])
        H = T.T @ (Q.T @ KQ) @ T
        e = np.linalg.eigvalsh(0.5 * (H + H.T))
    refuse_below(e[0], max(float(e[-1]), scale))


def gram_factor(K, tol: float = RANK_TOL) -> np.ndarray:
    """``L`` (N x r) with ``K = L L^T`` up to round-off, from the eigendecomposition of ``K``.

    The eigenvalues at most ``tol * max(e)`` are dropped (round-off; see the module docstring:
    the RKHS problem restricted to the range of ``K`` is exact), so ``r`` is the numerical rank.
    A zero matrix gives ``r = 0``. ValueError naming ``kernel`` for a matrix that is not PSD.
    """
    tol = check_scalar(tol, "tol", nonnegative=True)
    U, e, _ = _eigen(K, tol)
    return U * np.sqrt(e)


@dataclass(frozen=True)
class KernelFactor:
    """Feature rows ``L`` of the training points and the map back to kernel coefficients.

    ``f(x) = sum_k beta_k K(z_k, .)`` with ``beta = coefficients(v)`` gives the scores ``L v``
    on the training points and the penalty ``||v||^2`` (exactly, for every route).
    ``basis`` maps ``v`` to beta on the rows ``rows`` (all rows when None): a matrix
    (``beta = basis @ v``; eigendecomposition, Nystroem) or, for the pivoted Cholesky factor,
    the lower triangular ``C`` of the pivots (``beta = C^{-T} v``). ``landmarks``: the training
    rows the Nystroem route used (None for the exact routes). ``gram``: the Gram matrix the
    exact routes factorised (None for Nystroem, which never forms it), for certificates on the
    exact problem. ``residual``: the spectral norm of ``K - L L^T`` (exact routes; the largest
    dropped eigenvalue, or the Schur complement's norm or bound), ``method``: the route.
    """

    L: np.ndarray
    basis: np.ndarray            # beta[rows] = basis @ v, or C^{-T} v (triangular)
    landmarks: np.ndarray | None
    n_rows: int
    kernel: object
    gamma: float
    degree: int
    coef0: float
    rows: np.ndarray | None = None
    triangular: bool = False
    gram: np.ndarray | None = None
    residual: float = 0.0
    method: str = "eigh"

    @property
    def rank(self) -> int:
        return self.L.shape[1]

    def coefficients(self, v) -> np.ndarray:
        """The kernel coefficients beta (length N) of the linear weights ``v`` on ``L``: the
        minimum-norm solution of ``L^T beta = v`` (eigendecomposition), zero off the pivots
        (pivoted Cholesky) or off the landmarks (Nystroem)."""
        v = np.asarray(v, dtype=np.float64)
        if self.triangular:
            local = scipy.linalg.solve_triangular(self.basis, v, trans="T", lower=True,
                                                  check_finite=False) if v.size else v
        else:
            local = self.basis @ v
        if self.rows is None:
            return local
        beta = np.zeros(self.n_rows)
        beta[self.rows] = local
        return beta


#: The exact routes of :func:`factorise`.
FACTOR_METHODS = ("cholesky", "eigh")


def factorise(Z, kernel="rbf", gamma="scale", degree=3, coef0=0.0, *,
              nystroem: int | None = None, seed: int = 0,
              tol: float = RANK_TOL, method: str = "cholesky", deadline=None,
              sample_weight=None) -> KernelFactor:
    """The :class:`KernelFactor` of the training points ``Z`` (N x d).

    ``nystroem=None``: an exact route on the N x N Gram matrix (O(N^2) memory), by ``method``
    ``"cholesky"`` (pivoted Cholesky, O(N^2 r) time; the default) or ``"eigh"``
    (eigendecomposition, O(N^3)); see the module docstring. ``nystroem=c``: ``c`` landmarks (at
    most N) drawn by ``np.random.default_rng(seed)``; O(N c^2) time, O(N c) memory.
    ``deadline`` (a solve's :class:`~infpush_cvx.solvers.engines.deadline.Deadline`, or None) is
    checked between the blocks of the Gram matrix and of the factorisation, and before each
    stage: :class:`TimeLimitReached` once it has passed. ``sample_weight`` (one per row of
    ``Z``) weights the variance of ``gamma="scale"`` (:func:`resolve_gamma`), so that integer
    weights give the factor of the repeated rows' gamma.
    """
    kernel, gamma, degree, coef0 = check_kernel(kernel, gamma, degree, coef0)
    Z = _dense(Z, "Z")
    g = gamma if callable(kernel) or kernel == "linear" else \
        resolve_gamma(gamma, Z, sample_weight=sample_weight)
    spec = dict(kernel=kernel, gamma=g, degree=degree, coef0=coef0)
    N = Z.shape[0]
    if nystroem is None:
        check_choice(method, "method", FACTOR_METHODS)
        K = kernel_matrix(Z, None, **spec, deadline=deadline)
        if method == "cholesky":
            L, C, piv, residual = pivoted_cholesky(K, tol, deadline=deadline)
            return KernelFactor(L, C, None, N, **spec, rows=piv, triangular=True, gram=K,
                                residual=residual, method=method)
        U, e, dropped = _eigen(K, tol, deadline)
        return KernelFactor(U * np.sqrt(e), U / np.sqrt(e), None, N, **spec, gram=K,
                            residual=dropped, method=method)
    c = check_int(nystroem, "nystroem", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    idx = np.sort(np.random.default_rng(seed).choice(N, size=min(c, N), replace=False))
    landmarks = kernel_matrix(Z[idx], None, **spec, deadline=deadline)
    U, e, _ = _eigen(landmarks, tol, deadline)
    basis = U / np.sqrt(e)
    L = kernel_matrix(Z, Z[idx], **spec, deadline=deadline) @ basis
    return KernelFactor(L, basis, idx, N, **spec, rows=idx, method="nystroem")
