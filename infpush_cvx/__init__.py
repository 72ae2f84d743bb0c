"""infpush_cvx: convex models for ranking at the top of the list.

The subpackages follow the data through the package (docs/architecture.md):

- :mod:`infpush_cvx.data`: the containers ``BipartiteData`` and ``PairData``, labels, generated
  and real data sets, exact reductions, the degeneracy test, kernel matrices and Gram factors.
- :mod:`infpush_cvx.formulations`: the problems: paper and seed scaling (``scaling``), primal
  objectives in NumPy (``objectives``) and the CVXPY problem factory.
- :mod:`infpush_cvx.prox`: projections and proximal operators.
- :mod:`infpush_cvx.solvers`: the project's certified solvers, each returning a ``SolverResult``.
- :mod:`infpush_cvx.evaluation`: ranking metrics, scikit-learn rankers, Perceptron@K and the
  papers' experiments (``infpush-cvx experiments``).
- :mod:`infpush_cvx.catalog`: named problems, stored optimal values, the CVXPY solvers compared
  and the registry of which solver solves what.
- :mod:`infpush_cvx.benchmarking`: the runner (tasks, executors, rows, reports) and the main job
  (``benchmarking.compare``).
- :mod:`infpush_cvx.cli`: the ``infpush-cvx`` command.
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
