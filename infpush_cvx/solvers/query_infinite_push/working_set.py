"""The certified working-set method of the Infinite Push over queries.

Each query's loss is a maximum over its other documents, and at the optimum few of them attain
it (the bipartite model's observation, docs/mathematics.md section 1.8, query by query). The
method keeps a working set ``W_q`` of other documents per query and repeats
(docs/mathematics.md, section 12.4):

1. solve the restricted problem (each query's maximum over ``W_q`` only, every pair of
   ``R_q x W_q``) exactly, by Clarabel: a QP (l2) or an LP (l1) over ``w``, the scores of the
   documents it touches, one ``t_q`` per query and one hinge per pair;
2. evaluate every other document's loss at its ``w`` from the sorted scores (:mod:`.push_sums`),
   which gives P(w) over all of ``N_q``;
3. certify: the restricted problem's hinge multipliers, zero on the other pairs, are a feasible
   pair dual of the full problem (:meth:`~.problem.QueryInfinitePushProblem.dual_value`), so
   ``P(w) - D`` bounds the error; stop when the relative gap is at most ``tol``;
4. else add, in every query, up to ``batch`` of the other documents whose loss exceeds the
   query's restricted loss, the largest first.

Where the first round is the whole problem (:func:`all_pairs_are_small`) and the penalty is l1,
an LP over the other documents is tried first: it certifies ``w* = 0`` where the instance is
degenerate ("degenerate_optimal", :mod:`.zero_point`), at a fraction of the round's cost.

The restricted optimum can only grow as the sets grow, and a round adds a document that the
restricted solution violates, so the loop ends; the time limit (one :class:`Deadline`) is handed
to Clarabel and looked at between the stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from infpush_cvx._logging import log_progress
from infpush_cvx._validation import check_int
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.query_infinite_push.methods import QueryPushMethod
from infpush_cvx.solvers.query_infinite_push.problem import Certificate
from infpush_cvx.solvers.query_infinite_push.zero_point import zero_weights
from infpush_cvx.solvers.result import SolverResult, relative_gap

#: Clarabel's tolerances on the restricted problems (the certificate is computed by the project):
#: at most 1e-8 and tol / 100, divided by 100 when a round finds no violation but no certificate
#: either, down to the floor (then the solve has stalled).
_CLARABEL_TOL = 1e-8
_CLARABEL_FLOOR = 1e-13
#: Seconds per unit of :func:`setup_work`: Clarabel's set-up and first factorization, which run
#: before it looks at its time limit (letor_like 300 x 120 x 136: 8.8 s for 3.2e8 units on the
#: loaded 2-core machine of November 2026, with the restricted problem's assembly).
_SECONDS_PER_UNIT = 2.7e-8


class RestrictedSolveFailed(RuntimeError):
    """Clarabel gave no usable answer to a restricted problem (its status in the message)."""


@dataclass(frozen=True)
class Restricted:
    """A restricted problem's pairs ``(I, J)`` (positions in the groups' relevant and other
    rows) and its working other documents ``work`` (positions, grouped by query)."""

    I: np.ndarray
    J: np.ndarray
    work: np.ndarray


def restricted_pairs(groups, work: np.ndarray) -> Restricted:
    """Every pair of ``R_q x W_q`` for the working other documents ``work`` (sorted)."""
    query = groups.neg_query[work]
    n_rel = np.diff(groups.ptr_r)[query]
    J = np.repeat(work, n_rel)
    offsets = np.arange(J.size) - np.repeat(np.cumsum(n_rel) - n_rel, n_rel)
    I = np.repeat(groups.ptr_r[query], n_rel) + offsets
    return Restricted(I, J, work)


def setup_work(problem, n_docs: int) -> float:
    """A restricted problem's set-up work: eliminating each score row ``u_k = x_k . w`` couples
    its nonzeros (at most d) pairwise, ``sum_k nnz_k^2`` over the documents it holds (taken as
    the relevant documents' mean row, for ``n_docs`` rows), plus the dense ``d^3`` of w."""
    g, d = problem.groups, problem.data.d
    X = problem.data.X
    per_row = float(np.mean(np.diff(X.indptr)[g.rel_rows])) if hasattr(X, "indptr") else d
    return n_docs * per_row ** 2 + float(d) ** 3


def shifted_rows(X, docs: np.ndarray, query: np.ndarray) -> sp.csr_matrix:
    """The rows ``docs`` of ``X`` (``query``: each one's query), each feature less its most
    common value among the query's rows where that value is not 0 and is held by at least two
    rows and by more rows than 0 is. Every pair of the Infinite Push is within a query, so the
    restricted problem's hinges ``1 - u_i + u_j`` are unchanged (each query's scores move by
    one constant), but the score rows hold fewer nonzeros: their elimination couples a row's
    nonzeros pairwise, the cost of each factorization (LETOR: 27% fewer nonzeros, the features
    constant within a query vanish). Dense ``X`` is taken as it is: its values seldom repeat,
    and sorting every entry would cost memory beside the data (letor_like at scale)."""
    Xd = X[docs]
    if not sp.issparse(Xd):
        return sp.csr_matrix(Xd)
    Xd = Xd.tocsr()
    coo = Xd.tocoo()
    q = query[coo.row]
    order = np.lexsort((coo.data, coo.col, q))
    q, f, val = q[order], coo.col[order], coo.data[order]
    if val.size == 0:
        return Xd
    # runs of one (query, feature, value): the most common value of each (query, feature)
    new_run = np.r_[True, (q[1:] != q[:-1]) | (f[1:] != f[:-1]) | (val[1:] != val[:-1])]
    start = np.flatnonzero(new_run)
    count = np.diff(np.r_[start, val.size])
    rq, rf, rv = q[start], f[start], val[start]
    best = np.lexsort((-count, rf, rq))  # per (query, feature), the largest count first
    first = np.r_[True, (rq[best][1:] != rq[best][:-1]) | (rf[best][1:] != rf[best][:-1])]
    top = best[first]
    sizes = np.bincount(query, minlength=int(query.max()) + 1)
    nnz_of = np.bincount(rq * Xd.shape[1] + rf, weights=count,
                         minlength=sizes.size * Xd.shape[1])
    zeros = sizes[rq[top]] - nnz_of[rq[top] * Xd.shape[1] + rf[top]]
    keep = (count[top] >= 2) & (count[top] > zeros)
    if not keep.any():
        return Xd
    mq, mf, mv = rq[top][keep], rf[top][keep], rv[top][keep]
    # subtract the value from every row of the query in that feature
    by_query = np.argsort(query, kind="stable")
    q_ptr = np.r_[0, np.cumsum(sizes)]
    reps = sizes[mq]
    rows = by_query[np.repeat(q_ptr[mq], reps) + np.arange(reps.sum())
                    - np.repeat(np.cumsum(reps) - reps, reps)]
    offset = sp.csr_matrix((np.repeat(mv, reps), (rows, np.repeat(mf, reps))), shape=Xd.shape)
    out = (Xd - offset).tocsr()
    out.eliminate_zeros()
    return out


def solve_restricted(problem, rp: Restricted, deadline,
                     accuracy: float = _CLARABEL_TOL) -> tuple[np.ndarray, np.ndarray]:
    """``(w, alpha)``: the restricted problem's weights and its hinge rows' multipliers, by
    Clarabel (section 12.4 of docs/mathematics.md gives the rows). A
    :class:`RestrictedSolveFailed` names Clarabel's status when it gives no usable answer."""
    import clarabel

    g, d, l1 = problem.groups, problem.data.d, problem.penalty == "l1"
    nR, nW, P, Q = g.rel_rows.size, rp.work.size, rp.I.size, g.n_queries
    # one score u per document held (with threshold="each" a document is in several groups)
    docs, score_of = np.unique(np.r_[g.rel_rows, g.neg_rows[rp.work]], return_inverse=True)
    # the variables: w (d), for l1 its bound a (d), t (Q), the scores u, xi (P)
    o_a = d
    o_t = d + (d if l1 else 0)
    o_u = o_t + Q
    o_xi = o_u + docs.size
    n_var = o_xi + P
    place = np.full(g.neg_rows.size, -1, dtype=np.int64)
    place[rp.work] = score_of[nR + np.arange(nW)]
    pair = np.arange(P)
    # u = X_docs w: zero-cone rows u - X_docs w = 0
    Xd = shifted_rows(problem.data.X, docs, problem.data.query_index[docs])
    scores = sp.hstack([-Xd, sp.csr_matrix((docs.size, o_u - d)),
                        sp.identity(docs.size, format="csr"),
                        sp.csr_matrix((docs.size, P))], format="csr")
    # hinge rows: -xi - u_i + u_j <= -1 (their multipliers are the pair dual)
    hinge = sp.csr_matrix((np.r_[-np.ones(P), -np.ones(P), np.ones(P)],
                           (np.r_[pair, pair, pair],
                            np.r_[o_xi + pair, o_u + score_of[rp.I], o_u + place[rp.J]])),
                          shape=(P, n_var))
    positive = sp.csr_matrix((-np.ones(P), (pair, o_xi + pair)), shape=(P, n_var))
    # epigraph rows: (1/M_q) sum_i p_i xi_ij - t_q <= 0 for j in W_q
    row_of = np.searchsorted(rp.work, rp.J)
    query = g.neg_query[rp.work]
    epigraph = sp.csr_matrix((np.r_[g.p[rp.I] / g.M[g.rel_query[rp.I]], -np.ones(nW)],
                              (np.r_[row_of, np.arange(nW)], np.r_[o_xi + pair, o_t + query])),
                             shape=(nW, n_var))
    rows = [scores, hinge, positive, epigraph]
    b = [np.zeros(docs.size), -np.ones(P), np.zeros(P), np.zeros(nW)]
    q = np.zeros(n_var)
    q[o_t:o_t + Q] = g.omega
    lam = problem.lam_paper
    if l1:  # |w| <= a:  w - a <= 0, -w - a <= 0
        eye = sp.identity(d, format="csr")
        rows.append(sp.hstack([sp.vstack([eye, -eye]), sp.vstack([-eye, -eye]),
                               sp.csr_matrix((2 * d, n_var - 2 * d))], format="csr"))
        b.append(np.zeros(2 * d))
        q[o_a:o_a + d] = lam
        Pm = sp.csc_matrix((n_var, n_var))
    else:
        Pm = sp.csc_matrix((np.full(d, lam), (np.arange(d), np.arange(d))),
                           shape=(n_var, n_var))
    A = sp.vstack(rows, format="csc")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = "qdldl"
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = accuracy
    limit = deadline.for_solver()
    if limit is not None:
        # its clock starts after the set-up, and it looks at it after each iteration (a
        # factorization, about half the set-up): both come out of its limit
        setup = _SECONDS_PER_UNIT * setup_work(problem, docs.size)
        settings.time_limit = max(limit - 1.5 * setup, 1e-6)
    cones = [clarabel.ZeroConeT(docs.size), clarabel.NonnegativeConeT(A.shape[0] - docs.size)]
    sol = clarabel.DefaultSolver(Pm, q, A, np.concatenate(b), cones, settings).solve()
    status = str(sol.status)
    if status not in ("Solved", "AlmostSolved"):
        raise RestrictedSolveFailed(status)
    z = np.asarray(sol.z)
    return np.asarray(sol.x)[:d].copy(), z[docs.size:docs.size + P].copy()


def initial_point(problem) -> np.ndarray:
    """The direction ``sum_q omega_q (mean relevant - mean other document)`` (weighted by p on
    the relevant side): the scores whose top other documents start the working sets."""
    g = problem.groups
    coef = np.zeros(problem.data.n)
    np.add.at(coef, g.rel_rows, (g.omega / g.M)[g.rel_query] * g.p)
    np.add.at(coef, g.neg_rows, -(g.omega / np.diff(g.ptr_n))[g.neg_query])
    return problem.document_vector(coef)


def all_pairs_are_small(problem) -> bool:
    """Whether the full problem's pair rows (3 nonzeros each) are at most the nonzeros of the
    score rows ``u = X_R w`` that every restricted problem holds: then a round costs about what
    the full problem costs, and the working set starts with every other document (one round)."""
    g = problem.groups
    pairs = int(np.sum(np.diff(g.ptr_r) * np.diff(g.ptr_n)))
    X, rows = problem.data.X, np.unique(g.rel_rows)
    nnz = int(np.sum(np.diff(X.indptr)[rows])) if hasattr(X, "indptr") else \
        rows.size * problem.data.d
    return 3 * pairs <= nnz


def zero_certificate(problem, deadline) -> Certificate | None:
    """The certificate of ``w = 0`` by the pair dual of :func:`.zero_point.zero_weights`, or
    None when that LP finds none (the l1 problem's ``w* != 0``)."""
    c = zero_weights(problem, deadline.for_solver())
    if c is None:
        return None
    g = problem.groups
    rp = restricted_pairs(g, np.flatnonzero(c > 0))
    alpha = c[rp.J] * g.p[rp.I] / g.M[g.rel_query[rp.I]]
    return problem.certificate(np.zeros(problem.data.d), rp.I, rp.J, alpha)


def top_per_query(value: np.ndarray, candidate: np.ndarray, query: np.ndarray,
                  batch: int) -> np.ndarray:
    """The positions of the ``batch`` largest ``value`` among the ``candidate`` positions of
    each query (sorted)."""
    pos = np.flatnonzero(candidate)
    order = np.lexsort((-value[pos], query[pos]))
    pos = pos[order]
    q = query[pos]
    first = np.searchsorted(q, q, side="left")
    return np.sort(pos[np.arange(pos.size) - first < batch])


@dataclass(frozen=True, kw_only=True)
class WorkingSet(QueryPushMethod):
    """The certified working set over (query, other document) pairs (module docstring).
    Options: ``batch`` (other documents added per query and round, and the initial working
    set's size per query: the top scores at the warm start or at :func:`initial_point`; every
    other document when :func:`all_pairs_are_small`)."""

    batch: int = 3

    name: ClassVar[str] = "working_set"
    default_max_iter: ClassVar[int] = 200

    def _check(self) -> None:
        check_int(self.batch, "batch", minimum=1)

    def _solve(self, problem, warm_start, deadline) -> SolverResult:
        self._log_start(problem)
        g = problem.groups
        w0 = self._start_point(problem, warm_start)
        d = problem.data.d
        _, t0 = problem.scores(w0)
        work = top_per_query(t0, np.ones(t0.size, bool), g.neg_query, self.batch)
        if all_pairs_are_small(problem):  # one round on every pair costs what any round costs
            work = np.arange(g.neg_rows.size)
            # before it, an LP over the other documents (much smaller) certifies w* = 0 where
            # the l1 problem is degenerate (its infeasibility is found within milliseconds)
            zero = zero_certificate(problem, deadline) if problem.penalty == "l1" else None
            if zero is not None and zero.gap <= self.tol:
                history = {"objective": [zero.primal * problem.multiplier()],
                           "gap": [zero.gap], "time": [deadline.elapsed()]}
                return self._finish(problem, deadline, w=np.zeros(d), cert=zero,
                                    status="degenerate_optimal", message="", iterations=0,
                                    history=history,
                                    info={"working_set": 0, "rounds": 0, "degenerate": True})
        # the best primal point and dual bound so far: w = 0 has P = 1, alpha = 0 has D = 0
        best_w, best_p, best_d = np.zeros(d), problem.paper_objective(np.zeros(d)), 0.0
        cert, history, status, message, rounds = None, {}, "max_iter", "", 0
        accuracy = min(_CLARABEL_TOL, self.tol / 100)
        while rounds < self.iterations:
            rp = restricted_pairs(g, work)
            held = np.unique(np.r_[g.rel_rows, g.neg_rows[work]]).size  # the scores it holds
            setup = _SECONDS_PER_UNIT * setup_work(problem, held)
            if not deadline.allows(setup):  # Clarabel would overrun the limit before it checks
                status, message = "time_limit", deadline.message_before(setup)
                break
            try:
                w, alpha = solve_restricted(problem, rp, deadline, accuracy)
            except RestrictedSolveFailed as exc:
                limited = str(exc) == "MaxTime" or deadline.expired()
                status = "time_limit" if limited else "stalled"
                message = (deadline.message() if limited else
                           f"Clarabel did not solve the restricted problem: {exc}")
                break
            rounds += 1
            v = problem.negative_losses(w)
            primal = problem.paper_objective(w, v)
            cert = problem.certificate(w, rp.I, rp.J, alpha, primal=primal)
            if primal < best_p:
                best_w, best_p = w, primal
            best_d = max(best_d, cert.dual)
            gap = relative_gap(best_p, best_d)
            record(history, objective=best_p * problem.multiplier(), gap=gap,
                   time=deadline.elapsed(), working=int(work.size), pairs=int(rp.I.size))
            if self.verbose:
                log_progress(f"round {rounds}: {work.size} other documents, {rp.I.size} pairs, "
                             f"P {primal:.10g}, D {cert.dual:.10g}, gap {gap:.3g}")
            if gap <= self.tol:
                status = "optimal"
                break
            # each query's restricted loss at w, and the other documents that exceed it
            restricted = np.full(g.n_queries, -np.inf)
            np.maximum.at(restricted, g.neg_query[work], v[work])
            outside = np.ones(v.size, bool)
            outside[work] = False
            excess = v - restricted[g.neg_query]
            violated = outside & (excess > 1e-12 * np.maximum(1.0, np.abs(restricted))
                                  [g.neg_query])
            if not violated.any() and accuracy > _CLARABEL_FLOOR:
                accuracy /= 100  # the same working set again, solved more accurately
                continue
            if not violated.any():
                status = "stalled"
                message = (f"no other document violates the restricted solution, but the "
                           f"certified gap is {gap:.3g} (Clarabel's accuracy)")
                break
            work = np.union1d(work, top_per_query(v, violated, g.neg_query, self.batch))
        # (before any round: w = 0 against alpha = 0, P = 1 and D = 0, still a certificate)
        final = Certificate(best_p, best_d, relative_gap(best_p, best_d),
                            0.0 if cert is None else cert.roundoff)
        return self._finish(problem, deadline, w=best_w, cert=final, status=status,
                            message=message, iterations=rounds, history=history,
                            info={"working_set": int(work.size), "rounds": rounds})

    @staticmethod
    def _start_point(problem, warm_start) -> np.ndarray:
        if warm_start is None:
            return initial_point(problem)
        w = np.asarray(getattr(warm_start, "w", warm_start), dtype=np.float64).ravel()
        if w.shape != (problem.data.d,) or not np.all(np.isfinite(w)):
            raise ValueError(f"warm_start must be a result or a finite weight vector of length "
                             f"d={problem.data.d}, got shape {w.shape}")
        return w
