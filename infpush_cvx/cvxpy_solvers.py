"""Old path of :mod:`infpush_cvx.catalog.cvxpy_solvers`, kept for one release (see
``infpush_cvx.catalog._keep_old_path``)."""

from .catalog import _keep_old_path

_keep_old_path(__name__)
