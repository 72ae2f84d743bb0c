"""Small results and curves tables for the report tests (test_report_*.py)."""

import numpy as np
import pandas as pd
import pytest


def _row(problem, solver, time, *, kind="cvxpy", agrees=True, objective=1.0, reference=1.0,
         iterations=10):
    """One row of a results table, with the columns the reports read."""
    return {"problem": problem, "kind": kind, "solver": solver, "repeat": 0,
            "status": "optimal" if agrees else "max_iter", "agrees": agrees,
            "objective": objective, "reference": reference,
            "rel_error": abs(objective - reference) / abs(reference), "gap": np.nan,
            "iterations": iterations, "compile_time": 0.0, "setup_time": 0.0,
            "solve_time": time, "time": time}


@pytest.fixture
def result_row():
    return _row


@pytest.fixture
def two_problems():
    """The issue's two-problem table: HIGHS runs the LP p1 only."""
    return pd.DataFrame([_row("p1", "CLARABEL", 0.1), _row("p1", "HIGHS", 0.2),
                         _row("p1", "ECOS", 0.3), _row("p2", "CLARABEL", 0.2),
                         _row("p2", "ECOS", 0.6)])


@pytest.fixture
def run_curves():
    """Records of two project solvers on p1 (stored value 2.0): 'fast' reaches the stored
    value, one record below it, in two repeats; 'slow' stalls at 1e-3."""
    rows = []
    for repeat in (0, 1):
        for k, obj in enumerate([4.0, 2.2, 2.0002, 2.0 - 1e-9, 2.0]):
            rows.append({"run_id": "r", "problem": "p1", "solver": "fast", "repeat": repeat,
                         "stop_val": k + 1, "objective": obj, "gap": 1.0,
                         "time": 0.01 * (k + 1)})
    for k, obj in enumerate([3.0, 2.1, 2.002]):
        rows.append({"run_id": "r", "problem": "p1", "solver": "slow", "repeat": 0,
                     "stop_val": k + 1, "objective": obj, "gap": None, "time": 0.1 * (k + 1)})
    return pd.DataFrame(rows)


@pytest.fixture
def run_results():
    """The results of the run of ``run_curves``: CVXPY solvers CLARABEL (agrees) and SCS
    (does not) on p1, the project solvers, and CLARABEL on p2 (stored value 5.0)."""
    return pd.DataFrame([
        _row("p1", "CLARABEL", 0.05, objective=2.0 + 2e-8, reference=2.0),
        _row("p1", "SCS", 0.08, objective=2.1, reference=2.0, agrees=False),
        _row("p1", "fast", 0.05, kind="native", objective=2.0, reference=2.0),
        _row("p1", "slow", 0.3, kind="native", objective=2.002, reference=2.0, agrees=False),
        _row("p2", "CLARABEL", 0.05, objective=5.0, reference=5.0)])
