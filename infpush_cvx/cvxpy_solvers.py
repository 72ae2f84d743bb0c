"""Old path of :mod:`infpush_cvx.catalog.cvxpy_solvers`, kept for one release.

``import infpush_cvx.cvxpy_solvers`` gives the very module object
``infpush_cvx.catalog.cvxpy_solvers`` (so ``monkeypatch.setattr`` on either reaches the same
code), without a DeprecationWarning: the solver modules, tests and notebooks still import it by
this name. New code imports
``from infpush_cvx.catalog import cvxpy_solvers``.
"""

import sys

from .catalog import cvxpy_solvers as _module

sys.modules[__name__] = _module
