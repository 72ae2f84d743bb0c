"""Pair-difference operator and LP duality certificate for the Rank2Plan weighted-pair LP.

The LP (docs/mathematics.md, sections 4.1 and 4.2; [Rank2PlanNote], eq. 1)::

    P(beta) = sum_k s_k max(0, g_k - D_k beta) + lam ||beta||_1,     D = E X,  D_k = X_j - X_i

has the dual (Lagrange multipliers pi_k of ``D_k beta + xi_k >= g_k``)::

    maximise g^T pi   subject to   0 <= pi <= s,   ||D^T pi||_inf <= lam.

Any pi in [0, s] becomes dual feasible after scaling by ``min(1, lam / ||D^T pi||_inf)``, so
``g^T pi_scaled`` is a lower bound on the optimum and ``P(beta) - g^T pi_scaled`` is a certified
bound on the suboptimality of beta. D is never formed: ``D beta = r[j] - r[i]`` with ``r = X beta``
and ``D^T u = X^T (E^T u)`` with ``E^T u`` two bincounts, so every product costs O(nnz(X) + n).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from infpush_cvx.data.containers import PairData
from infpush_cvx.formulations.objectives import rank2plan_objective
from infpush_cvx.solvers.result import relative_gap


#: Sparse X at least this full is held dense: each product of the smoothed method's 300 took
#: half as long for a full 2,000 x 200 X (BLAS against CSR), a third longer at 30% fill.
DENSE_FILL = 0.5


class PairOperator:
    """Matrix-free ``D = E X`` (n_pairs x p) for a :class:`PairData`, plus its LP certificate."""

    def __init__(self, data: PairData):
        self.data = data
        X = data.X
        if sp.issparse(X) and X.nnz >= DENSE_FILL * X.shape[0] * X.shape[1]:
            X = X.toarray()
        self.X = X
        self.XT = X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(X.T)
        self.i, self.j = data.i, data.j
        self.s, self.g = data.weight, data.margin
        self.N, self.p, self.n = data.n_states, data.n_features, data.n_pairs

    def matvec(self, beta: np.ndarray) -> np.ndarray:
        """``D beta = (X beta)[j] - (X beta)[i]``."""
        r = np.asarray(self.X @ beta).ravel()
        return r[self.j] - r[self.i]

    def rmatvec(self, u: np.ndarray) -> np.ndarray:
        """``D^T u = X^T (E^T u)``; ``E^T u`` scatters +u to rows j and -u to rows i."""
        v = np.bincount(self.j, u, self.N) - np.bincount(self.i, u, self.N)
        return np.asarray(self.XT @ v).ravel()

    def rows(self, pairs: np.ndarray, features: np.ndarray):
        """The block ``D[pairs][:, features]`` (dense, or CSC when X is sparse)."""
        sparse = sp.issparse(self.X)
        # every feature in its own order: no column selection (a copy of X); in any other
        # order the columns must follow ``features`` (the restricted LP's row order)
        natural = features.size == self.p and np.array_equal(features, np.arange(self.p))
        Xf = self.X if sparse and natural else self.X[:, features]
        B = Xf[self.j[pairs]] - Xf[self.i[pairs]]
        if sparse:
            B = B.tocsc()
            B.eliminate_zeros()
        return B

    def sigma_max(self, *, max_iter: int = 200, rtol: float = 1e-4, seed: int = 0,
                  deadline=None) -> float:
        """Largest eigenvalue of ``Xt^T Xt`` (rows ``s_k D_k``) by power iteration on the operator.

        Power iteration approaches the eigenvalue from below; the caller adds a safety margin.
        It stops early, with its current estimate, once ``deadline`` (a
        :class:`~._deadline.Deadline`) has passed: the solve then stops on its time limit.
        """
        rng = np.random.default_rng(seed)
        v = rng.standard_normal(self.p)
        v /= np.linalg.norm(v)
        s2 = self.s * self.s
        est = 0.0
        for _ in range(max_iter):
            u = self.rmatvec(s2 * self.matvec(v))
            new = float(np.linalg.norm(u))
            if new == 0.0:
                return 0.0
            v = u / new
            converged = abs(new - est) <= rtol * new
            est = new
            if converged or (deadline is not None and deadline.expired()):
                break
        return est

    def objective(self, beta: np.ndarray, lam: float) -> float:
        return rank2plan_objective(self.data, beta, lam)

    def lambda_max(self) -> float:
        """``||D^T (s * 1[g > 0])||_inf``: for lam at or above it, beta = 0 is optimal.

        At beta = 0 the pairs with g > 0 have slack g > 0, so their multiplier must be s; this pi is
        dual feasible exactly when lam >= the returned value, and then ``g^T pi = P(0)``.
        """
        return float(np.abs(self.rmatvec(self.s * (self.g > 0))).max())

    def repaired_dual(self, beta: np.ndarray, pi: np.ndarray, lam: float,
                      rounds: int = 2) -> np.ndarray:
        """Multipliers near ``pi`` (clipped to ``[0, s]``) with less reduced-cost excess
        ``|(D^T pi)_f| - lam > 0``, for a sharper :meth:`certificate` of an external solver's
        pi (an interior-point solver's multipliers violate ``||D^T pi||_inf <= lam`` by its
        tolerance, and scaling pi by ``lam / ||D^T pi||_inf`` loses that relative amount of the
        bound, 1e-5 at CVXPY's defaults).

        Each round changes only the multipliers of the pairs nearest their margin at beta
        (where complementary slackness leaves them free): the least-norm change ``delta`` with
        ``D_{A,V}^T delta = -excess`` on the violating features V, clipped to the box. Any pi
        in the box gives a valid bound after :meth:`certificate`'s scaling, so this can only
        change how sharp the bound is, never its validity."""
        pi = np.clip(pi, 0.0, self.s)
        z = self.g - self.matvec(beta)
        for _ in range(rounds):
            rho = self.rmatvec(pi)
            V = np.flatnonzero(np.abs(rho) > lam)
            if V.size == 0:
                break
            excess = rho[V] - lam * np.sign(rho[V])
            k = min(self.n, max(4 * V.size, 2 * np.count_nonzero(beta) + 10))
            A = np.argpartition(np.abs(z), k - 1)[:k]
            block = self.rows(A, V)
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            delta = np.linalg.lstsq(block.T, -excess, rcond=None)[0]
            pi = pi.copy()
            pi[A] = np.clip(pi[A] + delta, 0.0, self.s[A])
        return pi

    def certificate(self, beta: np.ndarray, pi: np.ndarray, lam: float) -> dict:
        """Certified optimality measures of (beta, pi) for the full LP.

        Returns ``primal`` P(beta), ``dual`` g^T pi after clipping pi to [0, s] and scaling it into
        the dual feasible set (a valid lower bound on the optimum), ``dual_raw`` g^T pi before
        scaling, ``dual_infeasibility`` max_f (|(D^T pi)_f| - lam)_+, ``reduced_costs`` D^T pi,
        ``raw_gap`` the relative gap of ``dual_raw`` and ``gap``, the relative gap
        (:func:`~.result.relative_gap`) of ``primal`` and ``dual``.

        With lam = 0 no multiple of pi is feasible unless ``D^T pi = 0``, so there ``gap`` is the
        larger of ``raw_gap`` and ``dual_infeasibility`` (in the units of this operator's data,
        which :func:`~.rank2plan.rank2plan_lp` scales to unit size): at most tol exactly when
        both are, the stopping test of the lam = 0 LP.
        """
        pi = np.clip(pi, 0.0, self.s)
        rho = self.rmatvec(pi)
        rmax = float(np.abs(rho).max()) if rho.size else 0.0
        primal = self.objective(beta, lam)
        dual_raw = float(self.g @ pi)
        factor = 1.0 if rmax <= lam else lam / rmax  # 0 for lam = 0: no multiple is feasible
        dual = factor * dual_raw
        infeasibility = max(rmax - lam, 0.0)
        raw_gap = relative_gap(primal, dual_raw)
        gap = relative_gap(primal, dual) if factor > 0 else max(raw_gap, infeasibility)
        return {"primal": primal, "dual": dual, "dual_raw": dual_raw,
                "dual_infeasibility": infeasibility, "gap": gap, "raw_gap": raw_gap,
                "reduced_costs": rho, "pi": pi}
