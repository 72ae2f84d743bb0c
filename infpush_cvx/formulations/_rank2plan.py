"""The Rank2Plan weighted-pair LP ([Rank2PlanNote], eq. 1; docs/mathematics.md, section 4.1)::

    minimise   sum_k s_k xi_k + lam ||beta||_1
    subject to (X_j - X_i) beta >= g_k - xi_k,   xi >= 0,      k = (i, j) in P

with the hinge constraints written out (``problem.constraints[-1]``, ``xi >= g - D beta``), so
that their multipliers are the pair multipliers pi of the LP's dual (docs/mathematics.md,
section 4.2), which certify a CVXPY answer; CVXPY performs the split ``beta = beta+ - beta-``
itself. The weight variable is named ``w`` (it is beta) and lambda is the
parameter ``lam``. Sparse X stays sparse: the pair differences are ``E @ X`` for the sparse
incidence matrix E of :meth:`PairData.difference_operator`.

``direct``: the constraint rows hold the pair differences ``(E X) w`` (nnz of E X).
``compact``: a score variable ``r = X w`` and rows ``E r`` with two nonzeros each.
"""

from __future__ import annotations

import cvxpy as cp

from .._validation import check_choice
from ..data.containers import PairData
from ._common import FORMS, weights_and_lam


def rank2plan_lp_problem(data, lam, *, form: str = "compact") -> cp.Problem:
    """The weighted-pair LP of Rank2Plan for ``data`` (a :class:`PairData`)."""
    if not isinstance(data, PairData):
        raise TypeError(f"data must be a PairData, got {type(data).__name__}")
    check_choice(form, "form", FORMS)
    w, lam_p = weights_and_lam(data.n_features, lam)
    E = data.difference_operator()
    if form == "direct":
        margins, constraints = (E @ data.X) @ w, []
    else:
        r = cp.Variable(data.n_states, name="r")
        margins, constraints = E @ r, [r == data.X @ w]
    xi = cp.Variable(data.n_pairs, name="xi", nonneg=True)
    constraints.append(xi >= data.margin - margins)  # multipliers: the pair multipliers pi
    objective = data.weight @ xi + lam_p * cp.norm1(w)
    return cp.Problem(cp.Minimize(objective), constraints)
