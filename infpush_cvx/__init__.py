"""infpush_cvx: convex models for ranking at the top of the list.

Subpackages and modules, by layer:

- :mod:`infpush_cvx.data`, :mod:`infpush_cvx.generators`, :mod:`infpush_cvx.degeneracy`: problem data.
- :mod:`infpush_cvx.scaling`, :mod:`infpush_cvx.objectives`: conventions and primal objectives.
- :mod:`infpush_cvx.formulations`: the CVXPY problem factory.
- :mod:`infpush_cvx.catalog`, :mod:`infpush_cvx.reference`: named instances and stored optimal values.
- :mod:`infpush_cvx.prox`: projections and proximal operators.
- :mod:`infpush_cvx.solvers`: first-order solvers.
"""

from .data import BipartiteData, PairData, fingerprint

__version__ = "0.1.0"
__all__ = ["BipartiteData", "PairData", "fingerprint", "__version__"]
