"""Reproducible experiments: each returns a tidy pandas table (one row per run); plots are views.

- :mod:`.agarwal`: the Infinite Push paper's section 6 protocol on Ionosphere and Spambase.
- :mod:`.perceptron`: Perceptron@K and its active variant, prec@k and label queries per batch.
"""

from .agarwal import (PAPER_RESULTS, agarwal_experiment, compare_with_paper, paper_results,
                      plot_roc_curves, sample_run_scores, splits)
from .perceptron import (generated_stream, perceptron_experiment, plot_perceptron_experiment,
                         spambase_stream, summarise)

__all__ = ["agarwal_experiment", "compare_with_paper", "PAPER_RESULTS", "paper_results", "splits",
           "sample_run_scores", "plot_roc_curves", "perceptron_experiment",
           "plot_perceptron_experiment", "spambase_stream", "generated_stream", "summarise"]
