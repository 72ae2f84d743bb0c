"""First-order and decomposition solvers built on the prox core (one module per problem)."""

from .result import SolverResult

__all__ = ["SolverResult"]
