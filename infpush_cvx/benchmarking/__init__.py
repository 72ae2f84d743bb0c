"""Benchmarking: tasks (problem x solver x repeat), executors, the results table and its reports.

- :mod:`.tasks`: one task (a catalog problem, or a generated :class:`Instance`) and the row it
  produces, the package's one row builder (:func:`run_task` never raises).
- :mod:`.executors`: serial, local processes (default) and Dask distributed.
- :mod:`.runner`: :func:`make_tasks`, :func:`run_benchmark`, :func:`save_results` (CSV + Parquet);
  :func:`benchmark` and :func:`save_run` for a run with its provenance, in new files every time.
- :mod:`.warmup`: one untimed solve of every solver kind in every worker before timing.
- :mod:`.provenance`: the run's metadata (date, commit, machine, options, instances).
- :mod:`.curves`: per-iteration convergence curves of the project's solvers.
- :mod:`.reports`: per-problem comparison table, performance profiles (Dolan & More 2002).
- :mod:`.html_report`: the run's report, one self-contained HTML page and its parts.
- :mod:`.instances`: catalog instances to and from ``.npz`` with fingerprints.
- :mod:`.prox_timing`: timing of the l1,inf projection against the copy floor.
- :mod:`.memory`: resident memory and the peak of one solve (every row carries both).

The main job (``infpush-cvx check``, :mod:`infpush_cvx.benchmarking.compare`) is this runner on
the serial executor; which solvers run on which problem is the catalog's
(:mod:`infpush_cvx.catalog.registry`).
"""

from .executors import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor
from .reports import (comparison_table, complete_solvers, format_comparison, performance_profile,
                      performance_ratios, plot_performance_profile, time_matrix)
from .runner import (BenchmarkRun, benchmark, load_metadata, load_results, make_tasks,
                     run_benchmark, run_paths, save_results, save_run)
from .tasks import CallTask, Instance, Task, native_methods, run_task

__all__ = [
    "BenchmarkRun", "CallTask", "DaskExecutor", "Instance", "ProcessExecutor", "SerialExecutor",
    "Task", "benchmark", "comparison_table", "complete_solvers", "format_comparison",
    "load_metadata", "load_results", "make_executor", "make_tasks", "native_methods",
    "performance_profile", "performance_ratios", "plot_performance_profile", "run_benchmark",
    "run_paths", "run_task", "save_results", "save_run", "time_matrix",
]
