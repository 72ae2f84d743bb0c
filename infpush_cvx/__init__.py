"""infpush_cvx: convex models for ranking at the top of the list.

Subpackages and modules, by layer:

- :mod:`infpush_cvx.data`, :mod:`infpush_cvx.generators`, :mod:`infpush_cvx.degeneracy`: problem data.
- :mod:`infpush_cvx.scaling`, :mod:`infpush_cvx.objectives`: conventions and primal objectives.
- :mod:`infpush_cvx.formulations`: the CVXPY problem factory.
- :mod:`infpush_cvx.catalog`: named problems, stored optimal values (``catalog.reference``), the
  CVXPY solver settings (``catalog.cvxpy_solvers``) and which solver solves what
  (``catalog.registry``).
- :mod:`infpush_cvx.prox`: projections and proximal operators.
- :mod:`infpush_cvx.solvers`: first-order and decomposition solvers with certificates.
- :mod:`infpush_cvx.compare`: the main job, the benchmark runner on the serial executor (every
  catalog problem with every installed solver against its stored value).
- :mod:`infpush_cvx.metrics`, :mod:`infpush_cvx.datasets`: ranking metrics and the UCI data sets.
- :mod:`infpush_cvx.rankers`: scikit-learn estimators (optional extra ``sklearn``).
- :mod:`infpush_cvx.online`: Perceptron@K with active sampling.
- :mod:`infpush_cvx.experiments`: the papers' experiments (``python -m infpush_cvx.experiments``).
- :mod:`infpush_cvx.benchmarking`, :mod:`infpush_cvx.cli`: benchmark runner, reports and the
  ``infpush-cvx`` command.
"""

from importlib import metadata as _metadata

from .data import BipartiteData, PairData, fingerprint


def _version() -> str:
    """The installed distribution's version; ``"0+unknown"`` for a source checkout that was
    never installed (no package metadata)."""
    try:
        return _metadata.version("infpush_cvx")
    except _metadata.PackageNotFoundError:
        return "0+unknown"


#: The package version, from its installed metadata (``pyproject.toml``'s ``version``).
__version__: str = _version()
__all__ = ["BipartiteData", "PairData", "fingerprint", "__version__"]
