"""Shared by the reliability tests: ``no_solving`` (a fixture) and ``cli_runs.run_cli`` (made
importable here: pytest runs with ``--import-mode=importlib``, which does not put test folders
on sys.path)."""

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def no_solving(monkeypatch):
    """Fail the test at once if anything starts solving (argument and output checks come
    first)."""
    import cvxpy as cp
    from cvxpy.reductions.solvers.solving_chain import SolvingChain

    from infpush_cvx import benchmarking
    from infpush_cvx.benchmarking import compare
    from infpush_cvx.catalog import registry

    def refuse(*args, **kwargs):
        raise AssertionError("a solve started before the arguments and outputs were checked")
    monkeypatch.setattr(cp.Problem, "solve", refuse)
    monkeypatch.setattr(SolvingChain, "solve_via_data", refuse)  # the CVXPY backend's
    monkeypatch.setattr(compare, "run", refuse)
    monkeypatch.setattr(registry, "solve", refuse)
    monkeypatch.setattr(benchmarking, "run_benchmark", refuse)
    monkeypatch.setattr(benchmarking, "benchmark", refuse)
