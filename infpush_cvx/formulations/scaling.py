"""The two scaling conventions, written once.

Paper scaling (Agarwal 2011; Rakotomamonjy 2012)::

    P(w) = lam * pen(w) + loss_mean(w)
    pen(w) = ||w||^2 / 2   (l2)      or   ||w||_1   (l1)

Seed scaling (the CVXPY benchmark script ``infinite_push_0``)::

    P_seed(w) = lam_s * pen_s(w) + loss_sum(w)
    pen_s(w) = ||w||^2     (l2)      or   ||w||_1   (l1)

``loss_sum = N * loss_mean`` with ``N = m`` for the Infinite Push (max over negatives of the sum
over positives) and ``N = m * n`` for RankSVM and the squared-hinge RankSVM (sums over all pairs).
The two share a minimiser when ``lam = lam_s / (N * c)`` with ``c = 1/2`` for l2 and ``1`` for l1
(so ``lam = 2 lam_s / m`` for the l2 Infinite Push), and then ``P_seed = N * P``.

With sample weights, m and n stand for the weight sums of the positives and negatives
(``data.wp_sum``, ``data.wn_sum``), the weighted generalisation of the counts: integer weights
then give the values of the data with repeated rows. Every function below accepts them as floats.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice

SCALINGS = ("paper", "seed")
PENALTIES = ("l2", "l1")
LOSSES = ("infinite_push", "ranksvm")
#: The losses whose lambda converts between the scalings: the hinge losses, the squared hinge and
#: the Infinite Push over queries (N = the relevant documents' weight over the queries counted).
SCALED_LOSSES = (*LOSSES, "squared_hinge_ranksvm", "query_infinite_push")


def loss_normaliser(loss: str, m: float, n: float) -> float:
    """N such that ``loss_sum = N * loss_mean``: m (Infinite Push, and over queries: the relevant
    documents' weight) or m*n (RankSVM, squared-hinge RankSVM).

    ``m`` and ``n`` are the counts, or the weight sums for weighted data.
    """
    check_choice(loss, "loss", SCALED_LOSSES)
    return m if loss in ("infinite_push", "query_infinite_push") else m * n


def penalty_coefficient(penalty: str, scaling: str) -> float:
    """c with ``pen(w) = c * pen_s(w)`` in ``scaling``: in paper scaling 1/2 for l2 and 1 for
    l1, in seed scaling 1."""
    check_choice(scaling, "scaling", SCALINGS)
    check_choice(penalty, "penalty", PENALTIES)
    return 0.5 if penalty == "l2" and scaling == "paper" else 1.0


def to_paper_lambda(lam, scaling: str, *, loss: str, penalty: str, m: float, n: float) -> float:
    """The paper-scaling lambda equivalent to ``lam`` given in ``scaling``."""
    return _convert_lambda(lam, scaling, loss, penalty, m, n, to_paper=True)


def from_paper_lambda(lam, scaling: str, *, loss: str, penalty: str, m: float, n: float) -> float:
    """The lambda in ``scaling`` equivalent to the paper-scaling ``lam``."""
    return _convert_lambda(lam, scaling, loss, penalty, m, n, to_paper=False)


def _convert_lambda(lam, scaling, loss, penalty, m, n, *, to_paper: bool):
    """``lam / (N c)`` (to paper scaling) or ``lam N c`` (from it); the identity in paper
    scaling. ValueError when the conversion overflows to inf or underflows a nonzero lam to 0,
    which would silently change the problem."""
    check_choice(scaling, "scaling", SCALINGS)
    if scaling == "paper":
        return lam
    factor = loss_normaliser(loss, m, n) * penalty_coefficient(penalty, "paper")
    with np.errstate(over="ignore", under="ignore"):
        converted = lam / factor if to_paper else lam * factor
    if np.any(~np.isfinite(converted)) or np.any((converted == 0) & (np.asarray(lam) != 0)):
        raise ValueError(f"lam={lam!r} is {converted!r} in {'paper' if to_paper else scaling} "
                         f"scaling: outside the float range; rescale the data or choose another "
                         f"lam")
    return converted


def objective_multiplier(scaling: str, *, loss: str, m: float, n: float) -> float:
    """Factor taking a paper-scaling objective value to ``scaling`` (1 or N)."""
    check_choice(scaling, "scaling", SCALINGS)
    return 1 if scaling == "paper" else loss_normaliser(loss, m, n)

