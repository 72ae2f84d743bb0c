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
about 1e-11 of ``max(diag K)``) is reported as "stalled", and a gap below minus its round-off
bound (weak duality broken: a Gram matrix that is not positive semidefinite) as
"numerical_error", never "optimal". One deadline covers the Gram matrix, its factor (both
computed in blocks that check it) and the solves. The result's ``w`` (and ``beta``) are
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

from infpush_cvx.data.containers import BipartiteData, borrowed
from infpush_cvx.data.kernels import (PSD_TOL, TimeLimitReached, factorise, kernel_matrix,
                                      not_psd_error, psd_by_construction, refuse_indefinite,
                                      resolve_gamma, symmetrise, training_rows)
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import (CERTIFIED, SolverResult, relative_gap, roundoff_bound,
                                        warn_if_not_converged)


def row_weights(data: BipartiteData) -> np.ndarray | None:
    """The weights of the rows of :func:`training_rows` (None when unweighted): a weight is a
    repeated row, for ``gamma="scale"`` too."""
    return np.r_[data.pos_weights, data.neg_weights] if data.weighted else None


def kernel_solve(method, problem, warm_start, deadline: Deadline,
                 factor_method: str = "cholesky") -> SolverResult:
    """Solve the kernel ``problem`` (a :class:`~infpush_cvx.solvers.infinite_push.problem.
    BipartiteProblem` with a kernel) by ``method`` (its ``nystroem``, ``nystroem_seed`` choose
    the factor) on the rows of a factor of its Gram matrix: ``method._solve_linear`` on the linear
    problem of those rows, with the same ``deadline``. ``factor_method``: the exact route's
    factor (:data:`infpush_cvx.data.kernels.FACTOR_METHODS`). The exact routes report the
    objective and gap of the exact problem, recomputed with the Gram matrix
    (:func:`exact_certificate`; ``info["factor_gap"]`` is the linear solver's own). The deadline
    covers the Gram matrix, its factor and the solves; a limit reached while the Gram matrix or
    its factor is computed (both check it block by block) ends the solve with status
    "time_limit" at ``beta = 0`` (:func:`_stopped_before_solving`)."""
    data = problem.data
    try:
        if method.nystroem == "adaptive":
            if warm_start is not None:
                raise TypeError("warm_start is not used with nystroem='adaptive' (its span is "
                                "rebuilt from the data)")
            return adaptive_solve(method, problem, deadline)
        factor = factorise(training_rows(data), problem.kernel, problem.gamma, problem.degree,
                           problem.coef0, nystroem=method.nystroem, seed=method.nystroem_seed,
                           method=factor_method,
                           deadline=None if deadline.limit is None else deadline,
                           sample_weight=row_weights(data))
    except TimeLimitReached:
        return _stopped_before_solving(problem, method, deadline)
    factor_time = deadline.elapsed()
    # a lower estimate of the seconds the linear solver needs before it can stop on the factor
    # rows L (N x r): its set-up and first iteration form r x r or N x r x r products (the
    # working set's degeneracy LP on L, FISTA's Lipschitz constant from the r x r pair Gram
    # matrix, a smoothing-Newton Hessian) and none of them sees the deadline; each costs about
    # N r^2 against the factor's N^2 r / 3, so factor_time * r / N (measured at N = r = 2,000
    # under load: factor 1.0 s, then 0.9 s to 3.3 s before the solvers stopped)
    needed = factor_time * factor.rank / max(data.m + data.n, 1)
    if (left := deadline.remaining()) < needed:
        return _stopped_before_solving(
            problem, method, deadline,
            message=f"the {max(left, 0.0):.2g} s left of the time limit of {deadline.limit:g} s "
                    f"cannot cover the linear solve's start on the rank-{factor.rank} factor "
                    f"(about {needed:.2g} s); beta = 0 is returned")
    L, m = factor.L, data.m
    if L.shape[1] == 0:  # K = 0: every f is 0; one zero column keeps the linear solver's shapes
        L = np.zeros((L.shape[0], 1))
    if isinstance(warm_start, SolverResult) and "v" in warm_start.info:
        # a kernel result starts from its weights on L (same data and kernel: the same L)
        warm_start = dataclasses.replace(warm_start, w=warm_start.info["v"])
    # (the factor's rows as they are: the linear problem lives only during this call, and
    # their private copies took 0.3 s of Spambase's 4,601 x 4,146)
    res = method._solve_linear(problem.on_rows(borrowed(L[:m]), borrowed(L[m:])), warm_start,
                               deadline)
    v = res.w if factor.rank else np.zeros(0)
    info = dict(res.info, v=v, rank=factor.rank, kernel=factor.kernel, gamma=factor.gamma,
                degree=factor.degree, coef0=factor.coef0, landmarks=factor.landmarks,
                factor_time=factor_time, factor=factor.method,
                factor_residual=factor.residual if factor.gram is not None else None)
    res = dataclasses.replace(res, w=factor.coefficients(v), info=info)  # (w: beta)
    if factor.gram is not None and res.dual is not None:
        res = _certified_on_gram(res, factor.gram, problem, method.tol)
    return dataclasses.replace(res, time=deadline.elapsed())


def gram_matrix(problem, deadline=None) -> tuple[np.ndarray, object]:
    """``(K, gamma)``: the Gram matrix ``K(Z, Z)`` of the kernel ``problem``'s training rows and
    its ``gamma`` resolved on the weighted rows; ``deadline`` checked between blocks."""
    Z = training_rows(problem.data)
    gamma = problem.gamma if callable(problem.kernel) or problem.kernel == "linear" else \
        resolve_gamma(problem.gamma, Z, sample_weight=row_weights(problem.data))
    return symmetrise(kernel_matrix(Z, None, problem.kernel, gamma, problem.degree,
                                    problem.coef0, deadline=deadline), deadline), gamma


def kernel_objective(problem, beta) -> float:
    """The objective of the coefficients ``beta`` on the kernel ``problem``, in its scaling:
    ``lam/2 beta^T K beta + loss(K beta)`` in paper scaling, with the full Gram matrix."""
    primal, _ = _primal(gram_matrix(problem)[0], np.asarray(beta, float), problem)
    return _multiplier(problem, problem.scaling) * primal


def _primal(K, beta, problem) -> tuple[float, float]:
    """``(lam/2 beta^T K beta + loss(K beta), loss(K beta))``: the paper-scaling objective of
    the coefficients ``beta`` with the Gram matrix ``K``, and its loss."""
    f = K @ beta
    loss = _loss_of_scores(f, problem)
    return 0.5 * problem.lam_paper * float(beta @ f) + loss, loss


def _multiplier(problem, scaling: str) -> float:
    """The factor from the paper-scaling objective to ``scaling``'s."""
    from infpush_cvx.formulations import scaling as _scaling
    return _scaling.objective_multiplier(scaling, loss=problem.loss, m=problem.data.wp_sum,
                                         n=problem.data.wn_sum)


def exact_certificate(K, beta, dual, problem, scaling: str | None = None):
    """``(objective, dual value, relative gap)`` of the coefficients ``beta`` and a pair dual
    point on the kernel ``problem`` with its Gram matrix ``K``, the values in ``scaling``
    (None: the problem's).

    Paper scaling: the primal ``lam/2 beta^T K beta + loss(K beta)`` (the weighted hinge sums of
    :func:`infpush_cvx.formulations.objectives.negative_hinge_sums`), and the dual value
    ``lam (sum alpha - 1/2 b^T K b)`` with ``b = [alpha 1_n; -alpha^T 1_m]`` ([Agarwal2011],
    eq. 3.9 with ``w(alpha) = L^T b``, so ``||w(alpha)||^2 = b^T K b`` whatever the factor).
    Neither uses a factor: the gap is the exact problem's.
    """
    return _exact_parts(K, beta, dual, problem, scaling)[:3]


def _exact_parts(K, beta, dual, problem, scaling: str | None = None):
    """:func:`exact_certificate`'s three values and a bound on the round-off of the relative gap
    (:func:`_gap_roundoff`)."""
    data, lam_p = problem.data, problem.lam_paper
    mult = _multiplier(problem, problem.scaling if scaling is None else scaling)
    primal, value = _primal(K, beta, problem)
    b = _dual_function(dual, data.m, data.n)
    total = -float(b[data.m:].sum())  # sum(alpha)
    lower = lam_p * (total - 0.5 * float(b @ (K @ b)))
    roundoff = _gap_roundoff(K, beta, b, lam_p, primal, value, total)
    return mult * primal, mult * lower, relative_gap(primal, lower), roundoff


def _loss_of_scores(f, problem) -> float:
    """The paper-scaling loss of the scores ``f = (s; t)`` on the training rows."""
    from infpush_cvx.formulations.objectives import mean_loss, negative_hinge_sums

    data = problem.data
    H = negative_hinge_sums(f[:data.m], f[data.m:], np.asarray(data.pos_weights, float))
    return mean_loss(H, problem.loss, data.wp_sum, np.asarray(data.neg_weights, float),
                     data.wn_sum)


def _gap_roundoff(K, beta, b, lam_p, primal, value, total) -> float:
    """A bound on the floating-point error of the relative gap of :func:`exact_certificate`.

    A product ``K x`` has entries within ``gamma_N max|K| ||x||_1`` of the exact ones and a dot
    product ``x.y`` within ``gamma_N |x|.|y|`` (``gamma_N = N u / (1 - N u)``, u the unit
    round-off; Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002, section
    3.1), so ``beta^T K beta`` and ``b^T K b`` are within ``2 gamma_N max|K| ||.||_1^2``, the
    scores (and the loss, which moves by at most twice the largest score error) within
    ``gamma_N max|K| ||beta||_1``, and the sums within ``gamma_N`` of their size. The bound
    takes four times ``N u`` for ``gamma_N`` and the other terms; relative to ``|P|`` like the
    gap (absolute when ``P = 0``). A gap below minus this bound is no rounding: the
    certificate failed (a Gram matrix that is not positive semidefinite).
    """
    big = max(float(K.max(initial=0.0)), -float(K.min(initial=0.0)))  # (no |K| copy: 0.4 s)
    nb, nt = float(np.abs(beta).sum()), float(np.abs(b).sum())
    magnitude = (lam_p * big * (nb * nb + nt * nt) + 2.0 * big * nb + abs(value)
                 + lam_p * abs(total))
    return roundoff_bound(4 * max(K.shape[0], 1), magnitude, abs(primal))


def _certified_on_gram(res: SolverResult, K, problem, tol: float) -> SolverResult:
    """``res`` (beta in ``w``) with its objective and gap recomputed on the exact ``problem``
    with its Gram matrix ``K`` (:func:`exact_certificate`); a certificate that holds on the
    factor but not on K (a factor residual too large for ``tol``) becomes status "stalled",
    and one whose gap is negative beyond its round-off (:func:`_negative_gap_judged`)
    "numerical_error", each with a message and a warning."""
    objective, _, gap, roundoff = _exact_parts(K, res.w, res.dual, problem)
    info = dict(res.info, factor_gap=res.gap)
    out = dataclasses.replace(res, objective=objective, gap=gap, info=info)
    if res.converged and not gap <= tol:  # (above tol: no negative gap to judge)
        return _warned(out, status="stalled",
                       message=f"certified to {res.gap:.2e} on the factor rows but only to "
                               f"{gap:.2e} on the exact problem (factor residual "
                               f"{info['factor_residual']:.2e}); a smaller factor tolerance is "
                               f"needed")
    return _negative_gap_judged(out, tol, roundoff) or out


def _warned(res: SolverResult, **changes) -> SolverResult:
    """``res`` with ``changes``; a :class:`~.result.ConvergenceWarning` unless it converged."""
    out = dataclasses.replace(res, **changes)
    warn_if_not_converged(out)
    return out


def _negative_gap_judged(res: SolverResult, tol: float, roundoff: float) -> SolverResult | None:
    """``res`` demoted when its gap on the exact problem is negative beyond what it can prove;
    None when the gap stands. Both kernel routes judge their gap here.

    Below ``-roundoff`` it is "numerical_error": a dual value above the objective beyond
    round-off breaks weak duality, which holds for every positive semidefinite Gram matrix, so
    the numbers cannot be trusted. A claimed optimum whose gap is below ``-tol`` (within its
    round-off bound) is "stalled": the exact gap is not negative, so the computed one is off by
    more than ``tol`` and proves nothing at ``tol`` (:func:`~.result.proves`; a polynomial
    kernel on columns offset by 1e4, entries of 1e16, gave a gap of -2e4). Each with a message
    and a :class:`~.result.ConvergenceWarning`.
    """
    if res.gap < -roundoff:
        return _warned(res, status="numerical_error",
                       message=f"the certified gap on the exact problem is {res.gap:.3g}, below "
                               f"minus its round-off bound {roundoff:.2e}: the certificate "
                               f"failed (is the Gram matrix positive semidefinite? check kernel)")
    if res.converged and res.gap < -tol:
        return _warned(res, status="stalled",
                       message=f"the certified gap on the exact problem is {res.gap:.3g}: its "
                               f"rounding error exceeds tol = {tol:g}, so it does not prove tol "
                               f"(the Gram matrix's entries are too large against the "
                               f"objective: centre or rescale the data)")
    return None


def _stopped_before_solving(problem, method, deadline: Deadline,
                            message: str | None = None) -> SolverResult:
    """The answer of a kernel solve whose deadline passed while its Gram matrix or factor was
    computed (or would pass before its first step, as ``message`` says): ``beta = 0`` (``f =
    0``, objective ``P(0)``, 1 in paper scaling), status "time_limit" with a warning, and the
    gap of the dual point ``alpha = 0`` (feasible, value 0): relative gap 1."""
    N = problem.data.m + problem.data.n
    primal = _loss_of_scores(np.zeros(N), problem)
    elapsed = deadline.elapsed()
    return _warned(SolverResult(
        w=np.zeros(N), objective=_multiplier(problem, problem.scaling) * primal,
        gap=relative_gap(primal, 0.0), status="time_limit", iterations=0, time=elapsed,
        method=method.name, message=message or f"{deadline.message()} while the Gram matrix "
                                               f"and its factor were computed; beta = 0 is "
                                               f"returned",
        info={"factor_time": elapsed, "rank": 0}))


def _dual_function(dual, m: int, n: int) -> np.ndarray:
    """The coefficients ``b = [alpha 1_n; -alpha^T 1_m]`` of a dual point's function ``K b``
    (an implicit dual point column by column)."""
    if not hasattr(dual, "column"):
        alpha = np.asarray(dual)
        return np.concatenate([alpha.sum(axis=1), -alpha.sum(axis=0)])
    b = np.zeros(m + n)
    for j in range(n):
        col = dual.column(j)
        b[:m] += col
        b[m + j] = -col.sum()
    return b


#: Atoms added per round by the adaptive route: rows in the dual's support, at most this many.
_ATOMS_PER_ROUND = 100


def adaptive_solve(method, problem, deadline: Deadline) -> SolverResult:
    """The exact RKHS problem certified with the full Gram matrix, solved on a growing span.

    ``f`` is restricted to the span of atoms ``g = sum_l B_lk K(z_l, .)`` (the columns of B):
    the mean positive's kernel function, the negatives nearest it, and then, every round, the
    current dual point's function ``K b(alpha)`` with the rows of its support whose coefficient
    the span lacks. The restricted problem is the linear one on ``L = K B (B^T K B)^{-1/2}`` (its
    objective is the exact RKHS objective of its ``f``), and its pair dual is feasible for the
    exact problem, whose dual value ``lam (sum alpha - 1/2 b^T K b)`` uses the full K: the
    relative gap of the two is a certificate for the exact problem, the stopping test
    (``method.tol``; each restricted problem is solved by ``method`` to a tenth of it). Once
    every row is an atom this is the exact route. ``info["rounds"]``, ``info["atoms"]``,
    ``info["restricted_gap"]``; O(N^2) memory (K), like the exact route.

    A Gram matrix that is not positive semidefinite is refused with the exact route's
    ValueError naming ``kernel`` when it shows: a negative diagonal entry, a negative
    eigenvalue of a block Krylov probe (kernels not PSD by construction:
    :func:`~infpush_cvx.data.kernels.refuse_indefinite`) or of a round's ``B^T K B``; a gap
    below minus its round-off bound is status "numerical_error", never "optimal". ``deadline``
    is checked between the blocks of K and of ``K B``: a limit reached in the first round
    raises :class:`~infpush_cvx.data.kernels.TimeLimitReached` (:func:`kernel_solve` answers
    ``beta = 0``), a later one ends the solve with the last round's answer, as does a time
    left shorter than the last round took (the next, with more atoms, takes longer).
    """
    data, tol = problem.data, method.tol
    kernel, degree, coef0 = problem.kernel, problem.degree, problem.coef0
    m, n = data.m, data.n
    N = m + n
    K, g = gram_matrix(problem, deadline)
    refuse_indefinite(K, probe=not psd_by_construction(kernel, degree, coef0),
                      deadline=deadline)
    factor_time = deadline.elapsed()
    inner = dataclasses.replace(method, tol=tol / 10, nystroem=None)
    mean_pos = np.concatenate([np.full(m, 1.0 / m), np.zeros(n)])
    # the first atoms: the mean positive's function and the negatives nearest it
    dense_atoms = [mean_pos]
    singles = list(m + np.argsort(-(K[m:] @ mean_pos), kind="stable")[:2 * _ATOMS_PER_ROUND // 4])
    rounds, last, gap, roundoff = 0, None, np.inf, 0.0
    round_time, out_of_time = 0.0, False
    while True:
        if last is not None and deadline.remaining() < round_time:
            out_of_time = True  # (a round has more atoms than the last: it takes longer)
            break
        round_start = deadline.elapsed()
        rounds += 1
        B = np.zeros((N, len(dense_atoms) + len(singles)))
        B[:, :len(dense_atoms)] = np.array(dense_atoms).T
        B[singles, len(dense_atoms) + np.arange(len(singles))] = 1.0
        try:
            KB = _blocked_product(K, B, deadline)
        except TimeLimitReached:
            if last is None:
                raise
            break
        e, U = np.linalg.eigh(0.5 * (B.T @ KB + KB.T @ B))
        top = max(float(e[-1]), 0.0) if e.size else 0.0
        if e.size and e[0] < -PSD_TOL * top and e[0] < -1e-300:
            raise not_psd_error(float(e[0]), top)  # (B^T K B is PSD when K is)
        keep = e > 1e-12 * top if top > 0 else e > np.inf
        T = U[:, keep] / np.sqrt(e[keep])
        L = KB @ T if T.shape[1] else np.zeros((N, 1))
        res = inner._solve_linear(problem.on_rows(L[:m], L[m:]), None, deadline)
        beta = B @ (T @ res.w) if T.shape[1] else np.zeros(N)
        last = (res, beta, L.shape[1])
        if res.dual is None:
            break
        _, _, gap, roundoff = _exact_parts(K, beta, res.dual, problem)
        if (gap <= tol or gap < -roundoff or len(singles) == N or res.status not in CERTIFIED
                or deadline.expired()):
            break
        round_time = deadline.elapsed() - round_start
        b = _dual_function(res.dual, m, n)
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
    res, beta, rank = last
    status = res.status
    if status in CERTIFIED and not gap <= tol:
        status = "time_limit" if out_of_time or deadline.expired() else "stalled"
    message = res.message if status == res.status else (
        f"the certified gap on the exact problem is {gap:.2e} after {rounds} rounds "
        f"({len(singles)} row atoms)")
    info = dict(res.info, v=res.w, rank=rank, kernel=kernel, gamma=g, degree=degree,
                coef0=coef0, landmarks=None, factor_time=factor_time, rounds=rounds,
                atoms=len(dense_atoms) + len(singles), restricted_gap=res.gap)
    result = dataclasses.replace(res, w=beta, gap=float(gap), status=status, message=message,
                                 info=info, time=deadline.elapsed())
    return _negative_gap_judged(result, tol, roundoff) or _warned(result)


#: Entries of K read at a time by :func:`_blocked_product` (32 MB of K).
_PRODUCT_ENTRIES = 1 << 22


def _blocked_product(K, B, deadline: Deadline) -> np.ndarray:
    """``K @ B`` by blocks of K's rows, with ``deadline`` checked between them
    (:class:`~infpush_cvx.data.kernels.TimeLimitReached` once it has passed): a round's
    product costs ``N^2`` times the atoms, seconds at N = 10,000."""
    out = np.empty((K.shape[0], B.shape[1]))
    step = max(1, _PRODUCT_ENTRIES // max(K.shape[1], 1))
    for r0 in range(0, K.shape[0], step):
        if deadline.expired():
            raise TimeLimitReached(deadline.message())
        out[r0:r0 + step] = K[r0:r0 + step] @ B
    return out
