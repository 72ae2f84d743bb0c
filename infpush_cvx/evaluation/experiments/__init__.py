"""Reproducible experiments: each returns a tidy pandas table (one row per run); plots are views.

- :mod:`.agarwal`: the Infinite Push paper's section 6 protocol on Ionosphere and Spambase.
- :mod:`.perceptron`: Perceptron@K and its active variant, prec@k and label queries per batch.
- :mod:`.letor`: every model over queries on the LETOR set (NDCG@k, MAP), C chosen over
  whole queries, the certified solvers beside CVXPY.
- :mod:`.command`: all three on the command line (``infpush-cvx experiments``).

The names below are imported when first used, so the command line's ``--help`` does not load
the experiments.
"""

import importlib

_WHERE = {"agarwal_experiment": "agarwal", "compare_with_paper": "agarwal",
          "PAPER_RESULTS": "agarwal", "paper_results": "agarwal", "splits": "agarwal",
          "sample_run_scores": "agarwal", "plot_roc_curves": "agarwal",
          "plot_agarwal_results": "agarwal", "perceptron_experiment": "perceptron",
          "plot_perceptron_experiment": "perceptron", "spambase_stream": "perceptron",
          "generated_stream": "perceptron", "summarise": "perceptron",
          "letor_experiment": "letor", "plot_letor_results": "letor"}

__all__ = list(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *__all__])
