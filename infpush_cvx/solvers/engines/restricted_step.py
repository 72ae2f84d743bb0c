"""One restricted step of the working-set method: the proximal step on its lower model, solved
by the structured interior-point method (:mod:`.restricted_ipm`), then Clarabel, then (an LP)
HiGHS, within the solve's deadline; a step whose rows span few dimensions is solved on their span
(:mod:`.kernel_span`), and one whose objective is huge (C = 1/lambda far above 1) divided first.
Every solver's multipliers come back in the same form, so the working set certifies any of them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from infpush_cvx.data.cholesky import TimeLimitReached
from infpush_cvx.solvers.engines.common import blas_threads_for
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.kernel_span import span_step
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem, solve_restricted


class RestrictedStepFailed(RuntimeError):
    """Every solver of a restricted step failed (the message lists why)."""


class StepNotStarted(RestrictedStepFailed):
    """A step not begun because the time left cannot cover a stage that does not see the
    deadline (the span step's QRs): the solve ends at its time limit."""


class _InexactStep(RestrictedStepFailed):
    """An interior-point step that stalled near its round-off floor (relative error <=
    ``_INEXACT_IPM``), not accepted as such: ``step`` holds its ``(w, mu, nu)``."""

    def __init__(self, message, step):
        super().__init__(message)
        self.step = step


#: The interior-point method factors a dense (d + 1) x (d + 1) matrix (80 MB at 3,200); above
#: it only Clarabel is tried. At 2,000 the kernel route's steps on Spambase at lambda 1e-3 (the
#: span of 2,012 to 2,249 coordinates, above 3/4 of the factor's 4,146 never) went to Clarabel,
#: which did not solve them: the solve stopped at gap 7.8e-3; by the IPM each took 22-33 s.
_IPM_MAX_D = 3200


#: The interior-point method runs on one BLAS thread up to this many variables, whatever the
#: data's d: its Newton matrices are many mid-sized products and factorisations, which two
#: threads slowed on the 2-core reference machine (Spambase's RBF kernel, d = 4,146, steps in
#: spans of 400 to 1,800 coordinates: 0.30 s an iteration at 1,550 against 0.19 s on one
#: thread at 1,600; the solve at lambda 0.01 took 24.5-24.8 s against 17.1-17.8 s).
_SERIAL_IPM_D = 2048
_INEXACT_IPM = 1e-4  # early rounds accept a stalled interior-point step this accurate
#: A rough step (the working set's first rounds, far from the optimum) is taken from an
#: interior-point solve that crawls (no 20% decrease in 5 iterations) once its error is below
#: the caller's level, at most this: a binary 1,500 x 48,000 x 300 set's l1 step of 500,000
#: pairs crawled from 1.4e-3 to 3.7e-4 in 60 iterations (8 s), then failed at its 100th and
#: was solved again.
_ROUGH_IPM = 1e-2
_CLARABEL_MAX_BAND = 200_000  # Clarabel is not tried on more band pairs (minutes)


def _solve_ipm(rp: RestrictedProblem, centre, accept_inexact=False, deadline=None,
               multipliers=None, rough=0.0, tol=None, certificate=None):
    accuracy = {} if tol is None else {"tol": tol}  # (None: the method's own, 1e-8)
    rough = min(rough, _ROUGH_IPM)
    with blas_threads_for(rp.d, largest=_SERIAL_IPM_D):
        w, mu, nu, info = solve_restricted(rp, center=centre, multipliers=multipliers,
                                           deadline=deadline, stall_below=rough or None,
                                           certificate=certificate, **accuracy)
    inexact = info["status"] == "stalled" and info["error"] <= max(rough, _INEXACT_IPM)
    if info["status"] in ("optimal", "almost_optimal") or (accept_inexact and inexact):
        return w, mu, nu
    message = (f"interior-point method: {info['status']} after {info['iterations']} "
               f"iterations")
    if inexact:
        raise _InexactStep(f"{message} (error {info['error']:.1e})", (w, mu, nu))
    raise RestrictedStepFailed(message)


def _pair_matrix(rp: RestrictedProblem):
    """The weighted pair vectors ``pi_b z_b`` as a sparse nb x d matrix (by sparse row
    selection: the dense nb x d difference took 2.6 s for 240,000 pairs of 100 features, this
    0.3 s, and 1.2 s instead of 3.6 s without a zero entry)."""
    if rp.Z is not None:
        return rp.Z
    rows = sp.csr_matrix(rp.XI)[rp.bi] - sp.csr_matrix(rp.XJ)[rp.bj]
    return sp.csr_matrix(sp.diags(rp.pi) @ rows)


def _conic_data(rp: RestrictedProblem):
    """The restricted problem as ``min 1/2 x'Px + c'x`` s.t. ``A_ub x <= b_ub`` over
    ``x = (w, e, xi, p)`` (xi for the groups, p the l1 epigraph), with the rows of
    :meth:`RestrictedProblem.G`."""
    d, nb, k = rp.d, rp.nb, rp.k
    n_xi = 1 if rp.groups else 0
    n_p = d if rp.l1 else 0
    c = np.concatenate([rp.q_w, np.full(nb, rp.c_e), np.full(n_xi, rp.coef), np.ones(n_p)])
    P = sp.csc_matrix((np.full(d, rp.kappa), (np.arange(d), np.arange(d))), shape=(c.size,) * 2)
    rows = []
    if rp.groups:  # -g_j.w + sum_{b in B_j} e_b - xi <= -a_j
        rows.append(sp.hstack([sp.csr_matrix(-rp.g),
                               sp.csr_matrix((np.ones(nb), (rp.bj, np.arange(nb))), shape=(k, nb)),
                               sp.csr_matrix(-np.ones((k, 1))), sp.csr_matrix((k, n_p))]))
    # -pi_b z_b.w - e_b <= -pi_b ;  -e_b <= 0
    rest = sp.csr_matrix((nb, n_xi + n_p))
    rows.append(sp.hstack([-_pair_matrix(rp), -sp.identity(nb), rest]))
    rows.append(sp.hstack([sp.csr_matrix((nb, d)), -sp.identity(nb), rest]))
    if rp.l1:  # w - p <= 0, -w - p <= 0
        eye = sp.identity(d)
        rows += [sp.hstack([sign * eye, sp.csr_matrix((d, nb + n_xi)), -eye]) for sign in (1, -1)]
    # the rows of rp.G in its order, so b_ub is rp.h() and the multipliers split as rp's
    return P, c, sp.vstack(rows, format="csr"), rp.h()


def _built(rp: RestrictedProblem, deadline, setup: float, name: str):
    """:func:`_conic_data` of ``rp`` and the time limit to hand the external solver ``name``
    (None without a limit; its clock starts after its set-up of ``setup`` s a nonzero), each
    stage refused by :func:`_time_for_setup` when the time left cannot cover it."""
    _time_for_setup(deadline, _conic_nonzeros(rp), _BUILD + setup, name)
    P, c, A_ub, b_ub = _conic_data(rp)
    left = _time_for_setup(deadline, A_ub.nnz, setup, name)
    return P, c, A_ub, b_ub, None if left is None else max(left - A_ub.nnz * setup, 1e-6)


def _solve_clarabel(rp: RestrictedProblem, deadline):
    import clarabel

    P, c, A_ub, b_ub, limit = _built(rp, deadline, _CLARABEL_SETUP, "Clarabel")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = "qdldl"  # "auto" picks faer, 2-3x slower on these systems
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-9
    if limit is not None:
        settings.time_limit = limit
    sol = clarabel.DefaultSolver(sp.triu(P, format="csc"), c, A_ub.tocsc(), b_ub,
                                 [clarabel.NonnegativeConeT(A_ub.shape[0])], settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        raise RestrictedStepFailed(f"Clarabel: {sol.status}")
    return (np.asarray(sol.x)[:rp.d].copy(), *rp.multipliers(np.asarray(sol.z)))


def _solve_highs(rp: RestrictedProblem, deadline):
    """A plain l1 step (an LP) by HiGHS, its arrays handed to ``highspy`` directly.

    HiGHS's clock starts when it runs, so everything before must be bounded by the deadline:
    the constraint matrix is built only when its estimated time fits (:func:`_time_for_setup`),
    and HiGHS gets the time left once the model is passed. Through ``scipy.optimize.linprog``
    its input checks and conversion ran outside that clock (2 s over the limit); and HiGHS's
    presolve looks at the clock only between its passes (9 s over a 0.5 s limit at 6.5 million
    nonzeros on a loaded machine), so under a deadline the simplex runs without it.
    """
    import highspy

    from infpush_cvx.solvers.engines.cvxpy_backend import quiet_highs

    _time_for_setup(deadline, _conic_nonzeros(rp), _BUILD + _HIGHS_SETUP, "HiGHS")
    _, c, A_ub, b_ub = _conic_data(rp)
    quiet_highs()  # the first Highs() of a process prints its banner
    h = highspy.Highs()
    for key, value in (("output_flag", False), ("primal_feasibility_tolerance", 1e-10),
                       ("dual_feasibility_tolerance", 1e-10)):
        h.setOptionValue(key, value)
    n_col, n_row, free = c.size, A_ub.shape[0], highspy.kHighsInf
    no_entries = np.zeros(0, np.int32)
    h.addCols(n_col, c, np.full(n_col, -free), np.full(n_col, free), 0, no_entries, no_entries,
              np.zeros(0))
    h.addRows(n_row, np.full(n_row, -free), b_ub, A_ub.nnz, A_ub.indptr[:-1].astype(np.int32),
              A_ub.indices.astype(np.int32), A_ub.data.astype(np.float64))
    left = _time_for_setup(deadline, A_ub.nnz, _HIGHS_SETUP, "HiGHS")
    if left is not None:
        h.setOptionValue("presolve", "off")
        h.setOptionValue("time_limit", max(left - A_ub.nnz * _HIGHS_SETUP, 1e-6))
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RestrictedStepFailed(f"HiGHS: {h.modelStatusToString(status)}")
    sol = h.getSolution()
    # (HiGHS's row duals of "<=" rows are <= 0 in a minimisation)
    return (np.asarray(sol.col_value)[:rp.d].copy(),
            *rp.multipliers(-np.asarray(sol.row_dual)))


#: Seconds per constraint nonzero that an external solver's set-up takes before its own time
#: limit applies (HiGHS: passing the rows and the simplex's start before its first look at the
#: clock, 0.32 s and 0.66 s at 6.5 million nonzeros on a loaded machine; Clarabel factorises
#: its KKT matrix symbolically, 3.8e-7 to 1.1e-6, 10 s at 9.2 million nonzeros). The lower
#: figures, so that only a hopeless start is skipped.
_HIGHS_SETUP, _CLARABEL_SETUP = 1.5e-7, 4e-7
#: Seconds per nonzero to build the constraint matrix (:func:`_conic_data`; 3e-7 to 5e-7
#: measured on the same models, the sparse stacking of its blocks).
_BUILD = 2e-7


def _conic_nonzeros(rp: RestrictedProblem) -> int:
    """An upper bound on the nonzeros of :func:`_conic_data`'s constraint matrix, from the
    rows' own nonzeros, before building it: the pair rows (a pair's nonzeros are at most its
    two rows'), two per pair for e, the group rows and the l1 epigraph."""
    if rp.Z is not None:
        pairs = rp.Z.nnz
    else:
        per_i = np.count_nonzero(rp.XI, axis=1)
        per_j = np.count_nonzero(rp.XJ, axis=1)
        pairs = int(per_i[rp.bi].sum() + per_j[rp.bj].sum())
    groups = int(np.count_nonzero(rp.g)) + rp.nb + rp.k if rp.groups else 0
    return pairs + 2 * rp.nb + groups + (4 * rp.d if rp.l1 else 0)


def _time_for_setup(deadline: Deadline | None, nonzeros: int, per_nonzero: float,
                    name: str) -> float | None:
    """The time limit to hand an external solver once its data are built (the time left; None
    without a limit), or :class:`RestrictedStepFailed` when that time cannot cover the
    solver's set-up (estimated as ``nonzeros * per_nonzero``; none once it has passed): the
    solver does not see its limit before the set-up ends, which overran a 0.5 s limit by 3 s
    on an exact l1 model of 240,000 pairs."""
    left = None if deadline is None else deadline.for_solver()
    if left is None:
        return None
    setup = nonzeros * per_nonzero
    if deadline.expired() or setup > left:
        raise RestrictedStepFailed(f"{name} not started: {max(left, 0.0):.2g} s left, its "
                                   f"set-up takes about {setup:.2g} s ({nonzeros} nonzeros)")
    return left


def restricted_step(rp: RestrictedProblem, centre, *, deadline: Deadline | None = None,
                    accept_inexact=False, simplex_first=False, multipliers=None, verify=None,
                    rough=0.0, tol=None, costly_tol=None, certificate=None):
    """The structured interior-point method, then Clarabel, then (an LP) HiGHS, within the
    solve's ``deadline`` (a :class:`~._deadline.Deadline`; None: no limit).

    ``simplex_first``: an LP (l1 penalty, no proximal term) goes to HiGHS first, for a vertex
    solution without an interior point's round-off floor.

    ``accept_inexact``: take an interior-point step that stalled at the round-off floor of its
    Newton systems (relative error <= 1e-4) instead of falling back: in early rounds the step only
    needs to be good, and the certificate is computed from it honestly either way.
    A problem whose rows span far fewer than d dimensions (the kernel route: d is the rank of
    the Gram matrix's factor, 4,146 on Spambase, while a step's rows span 100 to 1,230) is
    solved on the coordinates of that span: the same problem in fewer variables
    (:mod:`._kernel_span`).
    ``multipliers``: a guess of the group and pair multipliers from which the interior-point
    method starts (:func:`~.restricted_ipm.solve_restricted`).
    ``rough`` (with ``accept_inexact``; 0: none): the step is wanted far from the optimum, so
    an interior-point solve that crawls is stopped once its relative error is below ``rough``
    (at most 1e-2), and its best iterate taken.
    ``tol``: the interior-point method's relative accuracy (None: its default, 1e-8);
    ``costly_tol`` (None: ``tol``) instead of it on a problem whose iterations are costly
    (:attr:`~.restricted_ipm.RestrictedProblem.costly`).
    ``verify``: a test ``verify(w, mu, nu) -> bool`` of a step (the caller's certificate, for
    instance); an interior-point step that stalled (relative error <= 1e-4) and passes it is
    taken without ``accept_inexact``, before any other solver is tried (an a8a subset's last
    l2 step stalled at 2.6e-5 and went to Clarabel, 0.11 s, where its certificate held).
    ``certificate``: ``(gap_of, target)``, the caller's certificate of a step (``gap_of(w, mu,
    nu)``, the relative gap it certifies), which a loosely solved interior point tests once it
    meets ``tol`` (:func:`~.restricted_ipm.solve_restricted`: it ends on a certified iterate,
    and goes on towards 1e-8 near one).
    Returns ``(w, mu, nu, name of the solver used)``; raises :class:`RestrictedStepFailed` when
    every solver fails, with each one's reason.
    """
    again = dict(deadline=deadline, accept_inexact=accept_inexact, simplex_first=simplex_first,
                 multipliers=multipliers, rough=rough, tol=tol, costly_tol=costly_tol)
    if rp.coef > _LARGEST_COEF and not rp.l1:
        # C = 1/lambda far above 1 (lambda 1e-12: InfinitePushRanker(C=1e12)): the same problem
        # divided by coef, whose multipliers are coef times smaller; undivided, the objective's
        # terms of size C made the interior-point method and Clarabel fail from C = 1e11 (the
        # l1 penalty's weight 1 is built into the solvers' data: not divided)
        f = rp.coef

        def undivided(w, mu, nu):
            return w, None if mu is None else mu * f, nu * f
        w, mu, nu, name = restricted_step(_divided(rp, f), centre, **again,
                                          verify=_mapped(verify, undivided),
                                          certificate=_mapped_certificate(certificate,
                                                                          undivided))
        return (*undivided(w, mu, nu), name)
    try:
        span = span_step(rp, deadline=deadline)
    except TimeLimitReached as exc:
        raise StepNotStarted(str(exc)) from None
    if span is not None:
        def unspanned(w, mu, nu):
            return span.from_span(w), mu, nu
        w, mu, nu, name = restricted_step(span.problem, span.to_span(centre), **again,
                                          verify=_mapped(verify, unspanned),
                                          certificate=_mapped_certificate(certificate,
                                                                          unspanned))
        return (*unspanned(w, mu, nu), name)
    errors = []
    attempts = []
    if rp.d <= _IPM_MAX_D:
        start = {} if multipliers is None else {"multipliers": multipliers}
        if rp.costly and costly_tol is not None:
            start["tol"] = costly_tol
        elif tol is not None:
            start["tol"] = tol
        if certificate is not None:
            start["certificate"] = certificate
        attempts.append(("ipm", lambda: _solve_ipm(rp, centre, accept_inexact, deadline,
                                                   rough=rough if accept_inexact else 0.0,
                                                   **start)))
    if rp.nb <= _CLARABEL_MAX_BAND:
        attempts.append(("clarabel", lambda: _solve_clarabel(rp, deadline)))
    else:
        errors.append(f"clarabel: not tried, {rp.nb} band pairs (its factorisations would take "
                      f"minutes)")
    if rp.l1 and rp.kappa == 0:
        attempts.insert(0 if simplex_first else len(attempts),
                        ("highs", lambda: _solve_highs(rp, deadline)))
    for name, attempt in attempts:
        if deadline is not None and deadline.expired():
            errors.append(f"{name}: not tried, the time limit was reached")
            break
        try:
            w, mu, nu = attempt()
        except _InexactStep as exc:
            if verify is not None and np.all(np.isfinite(exc.step[0])) and verify(*exc.step):
                return (*exc.step, name)
            errors.append(f"{name}: {exc}")
            continue
        except (RuntimeError, ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            errors.append(f"{name}: {exc}")
            continue
        if np.all(np.isfinite(w)):
            return w, mu, nu, name
        errors.append(f"{name}: non-finite weights")
    raise RestrictedStepFailed("; ".join(errors))


def _mapped(verify, back):
    """``verify`` of a step of a transformed problem, mapped back by ``back(w, mu, nu)`` (None
    without a test)."""
    if verify is None:
        return None
    return lambda w, mu, nu: verify(*back(w, mu, nu))


def _mapped_certificate(certificate, back):
    """``certificate = (gap_of, target)`` of a transformed problem's step, mapped back by
    ``back(w, mu, nu)`` (None without one)."""
    if certificate is None:
        return None
    gap_of, target = certificate
    return _mapped(gap_of, back), target


#: Above this C/M (C/(M N) for RankSVM), an l2 step is solved with its objective divided by it.
_LARGEST_COEF = 1e6


def _divided(rp: RestrictedProblem, f: float) -> RestrictedProblem:
    """``rp`` with its objective divided by ``f`` (the same minimiser)."""
    import copy

    out = copy.copy(rp)
    out.coef, out.c_e, out.q_w, out.kappa = rp.coef / f, rp.c_e / f, rp.q_w / f, rp.kappa / f
    return out
