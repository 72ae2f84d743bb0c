"""The Infinite Push and RankSVM primal problems in CVXPY.

Infinite Push (Agarwal, SDM 2011, eq. 3.6; l1 version: Rakotomamonjy, ICML 2012)::

    paper:  minimise  lam * pen(w) + max_j (1/m) sum_i max(0, 1 - (s_i - t_j))
    seed:   minimise  lam * pen_s(w) + max_j sum_i max(0, 1 - (s_i - t_j))

RankSVM, bipartite (Agarwal, eq. 4.18)::

    paper:  minimise  lam * pen(w) + (1/(m n)) sum_ij max(0, 1 - (s_i - t_j))
    seed:   minimise  lam * pen_s(w) + sum_ij max(0, 1 - (s_i - t_j))

with ``s = Xp w``, ``t = Xn w``, ``pen`` = ||w||^2/2 or ||w||_1 and ``pen_s`` = ||w||^2 or ||w||_1
(conventions in :mod:`infpush_cvx.formulations.scaling`). The weight variable is named ``w`` and
lambda is the parameter ``lam``.

Weighted data (sample weights p of the positives, q of the negatives, sums M and N; see
:class:`infpush_cvx.data.BipartiteData`): the sum over positives becomes ``sum_i p_i h_ij``, the
RankSVM sum over pairs ``sum_ij p_i q_j h_ij``, and m, m n become M, M N. q does not enter the
Infinite Push (a maximum over negatives). Integer weights give the problem on repeated rows.

Kernels (``kernel="linear" | "rbf" | "poly" | callable`` with scikit-learn ``SVC``'s ``gamma``,
``degree``, ``coef0``; l2 penalty only): the RKHS problem over ``f = sum_k beta_k K(z_k, .)``,
``Z = [Xp; Xn]`` (:mod:`infpush_cvx.data.kernels`)::

    paper:  minimise  (lam/2) beta^T K beta + loss(K beta)
    seed:   minimise  lam beta^T K beta + loss_sum(K beta)

with ``(s; t) = K beta``. The coefficient variable keeps the project's name ``w``
(``problem.var_dict["w"]`` holds beta, of length m + n, as Rank2Plan's ``w`` holds its beta),
so every consumer of ``var_dict["w"]`` reads it; the penalty is ``quad_form(w, psd_wrap(K))``,
K checked positive semidefinite first.
"""

from __future__ import annotations

import cvxpy as cp

from . import scaling as _scaling
from .._validation import check_choice
from ..data.containers import BipartiteData, check_bipartite
from ._common import pair_hinges, penalty_expression, scores, weights_and_lam


def _kernel_scores(data, kernel, gamma, degree, coef0, penalty):
    """The data whose rows score ``K beta`` (rows of K), and the RKHS penalty matrix K."""
    from ..data.kernels import gram_factor, kernel_matrix, symmetrise, training_rows

    if penalty != "l2":
        raise ValueError(f"kernel={kernel!r} needs penalty='l2' (the RKHS norm), got "
                         f"penalty={penalty!r}")
    K = symmetrise(kernel_matrix(training_rows(data), None, kernel, gamma, degree, coef0))
    gram_factor(K)  # refuses a Gram matrix that is not positive semidefinite, naming kernel
    return BipartiteData(K[:data.m], K[data.m:], data.wp, data.wn), K


def _bipartite_problem(data, lam, *, loss: str, penalty: str, scaling: str,
                       form: str, kernel=None, gamma="scale", degree=3,
                       coef0=0.0) -> cp.Problem:
    data = check_bipartite(data)
    check_choice(scaling, "scaling", _scaling.SCALINGS)
    K = None
    if kernel is not None:
        data, K = _kernel_scores(data, kernel, gamma, degree, coef0, penalty)
    w, lam_p = weights_and_lam(data.d, lam)
    s, t, constraints = scores(data, w, form)
    hinges = pair_hinges(s, t, data.m, data.n)
    if loss == "squared_hinge_ranksvm":  # RankSVM's sums over pairs, of the squared hinges
        hinges = cp.square(hinges)
    if loss == "infinite_push":
        # (weighted) sum over positives i, max over negatives j; the negatives' weights drop out
        per_negative = cp.sum(hinges, axis=0) if data.wp is None else data.wp @ hinges
        loss_sum = cp.max(per_negative)
    elif not data.weighted:
        loss_sum = cp.sum(hinges)
    else:
        loss_sum = data.pos_weights @ hinges @ data.neg_weights
    # Paper scaling averages the loss (over positives, or over pairs); seed scaling sums it.
    N = _scaling.loss_normaliser(loss, data.wp_sum, data.wn_sum)
    loss_term = loss_sum / N if scaling == "paper" else loss_sum
    objective = lam_p * penalty_expression(w, penalty, scaling, K) + loss_term
    return cp.Problem(cp.Minimize(objective), constraints)


def infinite_push_problem(data, lam, *, penalty: str = "l2", scaling: str = "paper",
                  form: str = "compact", kernel=None, gamma="scale", degree: int = 3,
                  coef0: float = 0.0) -> cp.Problem:
    """The Infinite Push primal, l2 or l1 penalty, in paper or seed scaling, compact or direct;
    with ``kernel``, the RKHS problem over beta (module docstring)."""
    return _bipartite_problem(data, lam, loss="infinite_push", penalty=penalty,
                              scaling=scaling, form=form, kernel=kernel, gamma=gamma,
                              degree=degree, coef0=coef0)


def ranksvm_problem(data, lam, *, scaling: str = "paper", form: str = "compact", kernel=None,
            gamma="scale", degree: int = 3, coef0: float = 0.0) -> cp.Problem:
    """The bipartite RankSVM primal (l2 penalty), in paper or seed scaling; with ``kernel``,
    the RKHS problem over beta (module docstring)."""
    return _bipartite_problem(data, lam, loss="ranksvm", penalty="l2", scaling=scaling,
                              form=form, kernel=kernel, gamma=gamma, degree=degree,
                              coef0=coef0)
