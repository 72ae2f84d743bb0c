"""Benchmarking: tasks (problem x solver x repeat), executors, the results table and its reports.

- :mod:`.tasks`: one task and the row it produces (:func:`run_task` never raises).
- :mod:`.executors`: serial, local processes (default) and Dask distributed.
- :mod:`.runner`: :func:`make_tasks`, :func:`run_benchmark`, :func:`save_results` (CSV + Parquet).
- :mod:`.reports`: per-problem comparison table, performance profiles (Dolan & More 2002).
- :mod:`.instances`: catalog instances to and from ``.npz`` with fingerprints.
- :mod:`.prox_timing`: timing of the l1,inf projection against the copy floor.
"""

from .executors import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor
from .reports import (comparison_table, complete_solvers, format_comparison, performance_profile,
                      performance_ratios, plot_performance_profile, time_matrix)
from .runner import load_results, make_tasks, run_benchmark, save_results
from .tasks import Task, native_methods, run_task

__all__ = [
    "DaskExecutor", "ProcessExecutor", "SerialExecutor", "Task", "comparison_table",
    "complete_solvers", "format_comparison", "load_results", "make_executor", "make_tasks",
    "native_methods", "performance_profile", "performance_ratios", "plot_performance_profile",
    "run_benchmark", "run_task", "save_results", "time_matrix",
]
