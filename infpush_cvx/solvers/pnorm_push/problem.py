"""The P-Norm Push problem: its objective, its Fenchel dual and the certificate at any w.

Paper scaling, with ``s = Xp w``, ``t = Xn w`` and the averaging weights ``a_i = p_i / M``,
``b_j = q_j / N`` (``1/m``, ``1/n`` without sample weights)::

    P(w) = (lam/2) ||w||^2 + f(t) + g(s)
    f(t) = (1/p) log sum_j b_j exp(p t_j),      g(s) = log sum_i a_i exp(-s_i)

f + g is ``(1/p) log( sum_j b_j (sum_i a_i exp(-(s_i - t_j)))^p )``: the inner sum over the
positives factorises, so the loss is two log-sum-exps of linear functions of w, each computed
stably (shifted by its largest term). Its gradient uses the softmax weights
``sigma_j = b_j exp(p t_j) / sum`` and ``rho_i = a_i exp(-s_i) / sum``::

    grad P = lam w + Xn^T sigma - Xp^T rho

Certificate. The conjugate of a log-sum-exp is the negative entropy on the simplex, so the
Fenchel dual of ``min P`` is, for sigma and rho in the simplices,

    D(sigma, rho) = -(1/p) KL(sigma || b) - KL(rho || a) - ||Xn^T sigma - Xp^T rho||^2 / (2 lam)

with ``KL(u || v) = sum u log(u / v)``, and ``D <= P* <= P(w)`` for every such pair. At the softmax
weights of w, Fenchel-Young holds with equality for both log-sum-exps, and the gap is exactly

    P(w) - D(sigma(w), rho(w)) = ||grad P(w)||^2 / (2 lam)

(the strong-convexity bound ``P(w) - P* <= ||grad P||^2 / (2 lam)`` is attained by this dual
point), reported relative to ``|P(w)|`` (:func:`~infpush_cvx.solvers.result.relative_gap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations._pnorm_push import check_p, log_mean_weights
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.result import relative_gap


@dataclass(frozen=True)
class PNormPushProblem(Problem):
    """The l2-regularised P-Norm Push of exponent ``p >= 1`` on ``data``, ``lam`` in paper
    scaling (the only scaling of this problem).

    Derived on construction: ``lam_paper`` (= ``lam``), ``solved`` (``data`` with far-off
    columns shifted towards 0, :func:`~infpush_cvx.solvers.engines.common.centred`: f + g is
    unchanged when every score moves by the same ``c.w``) and ``logs`` (``log a``, ``log b``).
    """

    data: BipartiteData
    lam: float
    p: float = 1.0
    scaling: str = "paper"

    model = "pnorm_push"
    catalog_options = ("p", "scaling")
    problem_class = "EXP"

    def __post_init__(self):
        if self.lam is None:
            raise TypeError("lam (lambda in paper scaling) is required")
        object.__setattr__(self, "p", check_p(self.p))
        self._paper_only()
        object.__setattr__(self, "logs", log_mean_weights(self.solved))

    def loss(self, w) -> float:
        """``(1/p) log((1/N) sum_j q_j ((1/M) sum_i p_i exp(-(s_i - t_j)))^p)`` at w (M = m,
        N = n and unit weights without sample weights)."""
        return float(loss_parts(self.data, self._vector(w), self.p, self.logs)[0])

    def objective(self, w) -> float:
        """``P(w) = (lam/2) ||w||^2 + loss(w)``."""
        w = self._vector(w)
        return float(0.5 * self.lam_paper * (w @ w) + self.loss(w))

    def dual(self, sigma, rho) -> float:
        """The Fenchel dual value ``D(sigma, rho)`` (module docstring), a lower bound on min P
        for any sigma, rho in the simplices (entries >= 0 summing to 1; 0 log 0 = 0)."""
        sigma, rho = np.asarray(sigma, dtype=float), np.asarray(rho, dtype=float)
        v = self.data.Xn.T @ sigma - self.data.Xp.T @ rho
        return float(-_kl(sigma, self.logs[1]) / self.p - _kl(rho, self.logs[0])
                     - (v @ v) / (2.0 * self.lam_paper))

    def certificate(self, w) -> dict:
        """The certificate at any w: ``objective`` P(w), the dual point ``sigma``, ``rho``
        (softmax weights at w), its value ``dual_value`` = P(w) - ``gap_abs`` with ``gap_abs`` =
        ``||grad P(w)||^2 / (2 lam)``, and ``gap``, the relative gap (module docstring)."""
        return State(self.data, self._vector(w), self.lam_paper, self.p, self.logs).certificate()

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations._pnorm_push import pnorm_push_problem
        return pnorm_push_problem(self.solved, self.lam_paper, p=self.p)

    def _vector(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape[0] != self.data.d:
            raise ValueError(f"w must have length d={self.data.d}, got {w.shape[0]}")
        return w


def log_sum_exp(u: np.ndarray, log_weights: np.ndarray) -> tuple[float, np.ndarray]:
    """``log sum_k exp(u_k + log_weights_k)`` and the softmax weights, shifted by the largest
    term (no overflow whatever the scale of u)."""
    v = u + log_weights
    top = float(v.max())
    e = np.exp(v - top)
    total = float(e.sum())
    return top + math.log(total), e / total


def loss_parts(data: BipartiteData, w: np.ndarray, p: float, logs, scores=None) -> tuple:
    """``(loss, sigma, rho, s, t)`` at w: the loss ``f(t) + g(s)`` and the softmax weights
    (``scores``: ``(s, t)`` when the caller has them)."""
    log_a, log_b = logs
    s, t = (data.Xp @ w, data.Xn @ w) if scores is None else scores
    lse_n, sigma = log_sum_exp(p * t, log_b)
    lse_p, rho = log_sum_exp(-s, log_a)
    return lse_n / p + lse_p, sigma, rho, s, t


def loss_only(s: np.ndarray, t: np.ndarray, p: float, logs) -> float:
    """The loss from the scores alone (the line search's trial points: no softmax weights)."""
    v_n, v_p = p * t + logs[1], -s + logs[0]
    top_n, top_p = float(v_n.max()), float(v_p.max())
    return (top_n + math.log(np.exp(v_n - top_n).sum())) / p \
        + top_p + math.log(np.exp(v_p - top_p).sum())


def _kl(u: np.ndarray, log_v: np.ndarray) -> float:
    nz = u > 0
    return float(np.sum(u[nz] * (np.log(u[nz]) - log_v[nz])))


class State:
    """Objective, gradient, softmax weights and certified gap at one w."""

    def __init__(self, data, w, lam, p, logs, scores=None):
        self.w = w
        self.loss, self.sigma, self.rho, self.s, self.t = loss_parts(data, w, p, logs, scores)
        self.objective = 0.5 * lam * float(w @ w) + self.loss
        self.grad = lam * w + data.Xn.T @ self.sigma - data.Xp.T @ self.rho
        self.gap_abs = float(self.grad @ self.grad) / (2.0 * lam)
        self.gap = relative_gap(self.objective, self.objective - self.gap_abs)

    def certificate(self) -> dict:
        """:meth:`PNormPushProblem.certificate` at this state's w."""
        return {"objective": float(self.objective), "gap": float(self.gap),
                "dual_value": self.objective - self.gap_abs, "gap_abs": self.gap_abs,
                "sigma": self.sigma, "rho": self.rho}
