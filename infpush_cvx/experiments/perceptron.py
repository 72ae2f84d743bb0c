"""Perceptron@K experiments ([Modi2017]; docs/mathematics.md, section 6.5): prec@k and cumulative
label queries per mini-batch.

One row per (stream, k, kernel, scheme, batch) in a tidy DataFrame; plots are views of it.
Schemes: ``full`` (Algorithm 1 reading every label: the baseline of the query counts),
``sequential`` (Algorithm 1's updates, queries counted from the top), and the active
``exponential``, ``inverse`` and ``uniform`` of Algorithm 2; kernels ``linear`` and ``rbf``
(random Fourier features).
"""

from __future__ import annotations

from ..datasets import MinMaxScaler01, load_spambase
from ..online import imbalanced_stream, perceptron_at_k

DEFAULT_SCHEMES = ("full", "sequential", "exponential", "inverse", "uniform")


def spambase_stream(data_dir=None):
    """Spambase as a stream (X scaled to [0, 1], y: spam = 1).

    The min-max map is fitted on the whole stream: there is no held-out split in this online
    protocol (each batch is scored before its labels are used), and only the feature ranges leak.
    """
    X, y = load_spambase(data_dir)
    return MinMaxScaler01().fit_transform(X), y


def generated_stream(N: int = 50000, d: int = 20, *, positive_fraction: float = 0.1,
                     separation: float = 3.0, seed: int = 0):
    """The generated imbalanced stream used beside Spambase (see :func:`imbalanced_stream`).

    Defaults: 1 positive in 10, and about 11 batches of about 4500 points, so that each batch
    holds more than K = 300 positives and prec@300 can reach 1.
    """
    return imbalanced_stream(N, d, positive_fraction=positive_fraction, separation=separation,
                             seed=seed)


def perceptron_experiment(streams, *, ks=(50, 300), schemes=DEFAULT_SCHEMES,
                          kernels=("linear", "rbf"), seed: int = 0, n_batches=None,
                          rate: float = 5.0, gamma="scale", n_components: int = 300):
    """Run Perceptron@K on every ``{name: (X, y)}`` stream for every k, kernel and scheme.

    All runs on one stream share ``seed``, hence the same mini-batch split. Returns a tidy
    DataFrame with columns stream, k, kernel, scheme, batch, batch_size, prec_at_k, mistakes,
    queries, cumulative_queries.
    """
    import pandas as pd
    frames = []
    for name, (X, y) in streams.items():
        for k in ks:
            for kernel in kernels:
                for scheme in schemes:
                    r = perceptron_at_k(X, y, k, scheme=scheme, seed=seed, n_batches=n_batches,
                                        rate=rate, kernel=kernel, gamma=gamma,
                                        n_components=n_components)
                    f = r.frame()
                    f.insert(0, "stream", name)
                    frames.append(f)
    return pd.concat(frames, ignore_index=True)


def summarise(results):
    """Per (stream, k, kernel, scheme): mean prec@k over the second half of the batches and the
    total number of label queries."""
    def late(g):
        return g.loc[g["batch"] > g["batch"].max() / 2, "prec_at_k"].mean()
    keys = ["stream", "k", "kernel", "scheme"]
    g = results.groupby(keys)
    out = g.apply(late, include_groups=False).rename("prec_at_k_late").to_frame()
    out["total_queries"] = g["queries"].sum()
    out["n_points"] = g["batch_size"].sum()
    return out


def plot_perceptron_experiment(results, *, stream: str):
    """Grid: one row per (k, kernel); prec@k per batch (left), cumulative queries (right)."""
    import matplotlib.pyplot as plt
    d = results[results["stream"] == stream]
    combos = d[["k", "kernel"]].drop_duplicates().itertuples(index=False)
    combos = list(combos)
    fig, axes = plt.subplots(len(combos), 2, figsize=(10, 2.8 * len(combos)), squeeze=False)
    for row, (k, kernel) in enumerate(combos):
        sub = d[(d["k"] == k) & (d["kernel"] == kernel)]
        for scheme, g in sub.groupby("scheme", sort=False):
            axes[row, 0].plot(g["batch"], g["prec_at_k"], marker="o", ms=3, label=scheme)
            axes[row, 1].plot(g["batch"], g["cumulative_queries"], marker="o", ms=3, label=scheme)
        axes[row, 0].set_ylabel(f"prec@{k} ({kernel})")
        axes[row, 1].set_ylabel("cumulative queries")
        axes[row, 0].set_ylim(-0.02, 1.02)
    for ax in axes[-1]:
        ax.set_xlabel("mini-batch")
    axes[0, 1].legend(fontsize=8)
    fig.suptitle(f"Perceptron@K on {stream}")
    fig.tight_layout()
    return fig
