"""The CVXPY problem factory.

Every function returns a :class:`cvxpy.Problem` whose weight variable is named ``w``
(``problem.var_dict["w"]``; ``alpha`` for the duals; for a kernel problem, ``kernel=...``, it
holds the coefficients beta over the training rows) and whose regularisation is a parameter
(``lam``; ``C = 1/lam`` for the duals), so re-solving for another lambda skips recompilation.
"""

from ._common import FORMS
from .duals import infinite_push_dual, primal_value_from_dual, ranksvm_dual
from .infinite_push import infinite_push, ranksvm
from .pnorm_push import pnorm_push
from .rank2plan import rank2plan_lp
from .toppush import toppush

__all__ = ["FORMS", "infinite_push", "ranksvm", "infinite_push_dual", "ranksvm_dual",
           "primal_value_from_dual", "rank2plan_lp", "pnorm_push", "toppush"]
