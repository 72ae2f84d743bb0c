"""The bipartite pair-hinge problems (Infinite Push, RankSVM) as values.

Both are ``lam pen(w) + loss(h)`` over the pair hinges ``h_ij = max(0, 1 - (x_i^+ - x_j^-) . w)``
(docs/mathematics.md, sections 1.2, 2.1 and 3.1), in paper or seed scaling, optionally on a kernel:
the RKHS problem ``(lam/2) beta^T K beta + loss(K beta)`` over the training rows ``[Xp; Xn]``
(:mod:`infpush_cvx.data.kernels`). :class:`BipartiteProblem` holds what they share; each model
names its loss and its penalties.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from infpush_cvx._validation import check_choice
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.base import Problem


@dataclass(frozen=True, eq=False)
class BipartiteProblem(Problem):
    """``data`` (a :class:`~infpush_cvx.data.BipartiteData`, its sample weights included),
    ``lam`` in ``scaling`` (``"paper"`` or ``"seed"``), ``penalty`` (one of the model's
    ``penalties``) and an optional kernel (``kernel``: ``"linear"``, ``"rbf"``, ``"poly"`` or a
    callable ``kernel(A, B)``, with scikit-learn ``SVC``'s ``gamma``, ``degree``, ``coef0``; l2
    only). Built, it holds ``lam_paper``, lambda in paper scaling (converted once, here)."""

    data: BipartiteData
    lam: float
    penalty: str = "l2"
    scaling: str = "paper"
    kernel: Any = None
    gamma: Any = "scale"
    degree: int = 3
    coef0: float = 0.0

    loss: ClassVar[str] = ""
    penalties: ClassVar[tuple] = ("l2",)
    problem_class: ClassVar[str] = "QP"
    catalog_options: ClassVar[tuple] = ("penalty", "scaling")

    def __post_init__(self):
        check_choice(self.penalty, "penalty", self.penalties)
        self._check_lambda(self.loss, self.penalty, representable=self.kernel is None)
        if self.kernel is None:
            return
        if self.penalty != "l2":
            raise ValueError(f"kernel={self.kernel!r} needs penalty='l2' (the RKHS norm), got "
                             f"penalty={self.penalty!r}")
        from infpush_cvx.data.kernels import check_kernel
        checked = check_kernel(self.kernel, self.gamma, self.degree, self.coef0)
        for name, value in zip(("gamma", "degree", "coef0"), checked[1:]):
            object.__setattr__(self, name, value)

    @classmethod
    def _catalog_arguments(cls, options: dict) -> dict:
        from infpush_cvx.data.kernels import kernel_options
        # a dual is answered by its primal (l2)
        return {**super()._catalog_arguments(options), **kernel_options(options)}

    def on_rows(self, Xp, Xn) -> BipartiteProblem:
        """The linear problem of the same model, weights, lambda and scaling on the rows
        ``(Xp, Xn)``: the kernel route's problem on the rows of a factor ``K = L L^T``."""
        return dataclasses.replace(self, data=BipartiteData(Xp, Xn, self.data.wp, self.data.wn),
                                   kernel=None, gamma="scale", degree=3, coef0=0.0)

    def objective(self, w) -> float:
        """The primal objective at ``w`` (beta on a kernel problem) in the caller's scaling."""
        if self.kernel is not None:
            from infpush_cvx.solvers.engines.kernel import kernel_objective
            return kernel_objective(self, w)
        from infpush_cvx.formulations.objectives import bipartite_objective
        return bipartite_objective(self.data, w, self.lam, loss=self.loss, penalty=self.penalty,
                                   scaling=self.scaling)

    def certificate(self, w, dual) -> tuple[float, float, float]:
        """``(primal, dual value, relative gap)`` of ``w`` and a pair dual point (made feasible
        first on a linear problem), paper scaling (:mod:`~infpush_cvx.solvers.engines.duality`;
        a kernel problem: :func:`~infpush_cvx.solvers.engines.kernel.exact_certificate`)."""
        if self.kernel is not None:
            from infpush_cvx.solvers.engines.kernel import exact_certificate, gram_matrix
            return exact_certificate(gram_matrix(self)[0], w, dual, self, scaling="paper")
        from infpush_cvx.solvers.engines import duality
        alpha = duality.make_feasible(self.data, dual, self.lam_paper, loss=self.loss,
                                      penalty=self.penalty)
        return duality.duality_gap(self.data, w, alpha, self.lam_paper, loss=self.loss,
                                   penalty=self.penalty)

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx import formulations
        factory = getattr(formulations, f"{self.loss}_problem")
        penalty = {"penalty": self.penalty} if len(self.penalties) > 1 else {}
        return factory(self.data, self.lam, scaling=self.scaling, form=form, kernel=self.kernel,
                       gamma=self.gamma, degree=self.degree, coef0=self.coef0, **penalty)


@dataclass(frozen=True, eq=False)
class InfinitePushProblem(BipartiteProblem):
    """The Infinite Push (Agarwal, SDM 2011; l1: Rakotomamonjy, ICML 2012), paper scaling::

        P(w) = lam pen(w) + max_j (1/M) sum_i p_i max(0, 1 - (x_i^+ - x_j^-) . w),
        pen(w) = ||w||^2 / 2 (l2)  or  ||w||_1 (l1),  M = sum_i p_i.
    """

    model: ClassVar[str] = "infinite_push"
    loss: ClassVar[str] = "infinite_push"
    penalties: ClassVar[tuple] = ("l2", "l1")
