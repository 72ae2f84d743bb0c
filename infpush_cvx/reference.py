"""Old path of :mod:`infpush_cvx.catalog.reference`, kept for one release.

``import infpush_cvx.reference`` gives the very module object
``infpush_cvx.catalog.reference`` (so ``monkeypatch.setattr`` on either reaches the same
code), without a DeprecationWarning: the solver modules, tests and notebooks still import it by
this name. New code imports
``from infpush_cvx.catalog import reference``.
"""

import sys

from .catalog import reference as _module

sys.modules[__name__] = _module
