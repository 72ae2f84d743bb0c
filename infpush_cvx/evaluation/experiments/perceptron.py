"""Perceptron@K experiments ([Modi2017]; docs/mathematics.md, section 6.5): prec@k and cumulative
label queries per mini-batch.

One row per (stream, k, kernel, scheme, batch) in a tidy DataFrame; plots are views of it.
Schemes: ``full`` (Algorithm 1 reading every label: the baseline of the query counts),
``sequential`` (Algorithm 1's updates, queries counted from the top), and the active
``exponential``, ``inverse`` and ``uniform`` of Algorithm 2; kernels ``linear`` and ``rbf``
(random Fourier features).
"""

from __future__ import annotations

from ..._plots import series_style
from ...data.datasets import MinMaxScaler01, load_spambase
from ..online import SCHEMES, imbalanced_stream, perceptron_at_k

#: every label-query scheme, in the order of the figures' styles
DEFAULT_SCHEMES = SCHEMES


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
                          rate: float = 5.0, gamma="scale", n_components: int = 300,
                          progress: bool = True):
    """Run Perceptron@K on every ``{name: (X, y)}`` stream for every k, kernel and scheme.

    All runs on one stream share ``seed``, hence the same mini-batch split. Returns a tidy
    DataFrame with columns stream, k, kernel, scheme, batch, batch_size, prec_at_k, mistakes,
    queries, cumulative_queries. ``progress``: a tqdm bar on stderr counting the runs, one per
    (stream, k, kernel, scheme); ``False`` writes nothing to stderr.
    """
    import itertools

    import pandas as pd
    from tqdm import tqdm
    runs = list(itertools.product(streams, ks, kernels, schemes))
    frames = []
    with tqdm(total=len(runs), desc="perceptron", unit="run", disable=not progress) as bar:
        for name, k, kernel, scheme in runs:
            bar.set_postfix_str(f"{name} K={k} {kernel} {scheme}")
            X, y = streams[name]
            r = perceptron_at_k(X, y, k, scheme=scheme, seed=seed, n_batches=n_batches,
                                rate=rate, kernel=kernel, gamma=gamma, n_components=n_components)
            f = r.frame()
            f.insert(0, "stream", name)
            frames.append(f)
            bar.update()
    return pd.concat(frames, ignore_index=True)


def summarise(results):
    """Per (stream, k, kernel, scheme): mean prec@k over the second half of the batches and the
    total number of label queries."""
    def late(g):
        return g.loc[g["batch"] > g["batch"].max() / 2, "prec_at_k"].mean()
    g = results.groupby(["stream", "k", "kernel", "scheme"])
    out = g.apply(late, include_groups=False).rename("prec_at_k_late").to_frame()
    out["total_queries"] = g["queries"].sum()
    out["n_points"] = g["batch_size"].sum()
    return out


def plot_perceptron_experiment(results, *, stream: str):
    """prec@k and label queries per mini-batch of one stream, every scheme on the same axes.

    One row of panels per (k, kernel): prec@k of each batch, measured before the update (left),
    and the cumulative number of labels queried (right, on a log axis: the schemes' counts span
    decades, from about K per batch for the active ones to the whole stream for ``full``; the
    right panels share that axis, and a grey line marks the stream's size). Each scheme has its
    own colour, line style and marker, the same in every panel, named in one legend above the
    panels. Returns a
    :class:`matplotlib.figure.Figure`, built without pyplot: no backend is selected or changed
    (in a notebook, show it with ``display(fig)``).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    d = results[results["stream"] == stream]
    if d.empty:
        raise ValueError(f"no results for stream {stream!r}; streams: "
                         f"{sorted(results['stream'].unique())}")
    combos = list(d[["k", "kernel"]].drop_duplicates().itertuples(index=False))
    # one style per scheme for the whole figure, in the order of DEFAULT_SCHEMES
    schemes = sorted(d["scheme"].unique(), key=lambda s: (
        DEFAULT_SCHEMES.index(s) if s in DEFAULT_SCHEMES else len(DEFAULT_SCHEMES), s))
    styles = {scheme: series_style(i) for i, scheme in enumerate(schemes)}
    fig = Figure(figsize=(11, 0.8 + 3.0 * len(combos)), layout="constrained")
    axes = fig.subplots(len(combos), 2, squeeze=False, sharex=True)
    for row, (k, kernel) in enumerate(combos):
        sub = d[(d["k"] == k) & (d["kernel"] == kernel)]
        left, right = axes[row]
        if row > 0:
            right.sharey(axes[0, 1])
        for scheme in schemes:
            g = sub[sub["scheme"] == scheme]
            if g.empty:
                continue
            label = scheme if row == 0 else None  # one legend entry per scheme
            left.plot(g["batch"], g["prec_at_k"], ms=5, lw=1.4, label=label, **styles[scheme])
            right.plot(g["batch"], g["cumulative_queries"], ms=5, lw=1.4, **styles[scheme])
        n_points = int(sub.groupby("scheme")["batch_size"].sum().max())
        left.set(ylim=(-0.02, 1.02), ylabel=f"prec@{k} of the batch\n(fraction, {kernel} kernel)")
        right.set(yscale="log", ylabel="labels queried so far\n(count, log scale)")
        right.axhline(n_points, color="0.5", lw=0.8, gid="reference")
        right.annotate(f"all {n_points:,} labels", (0.01, n_points), xycoords=("axes fraction",
                       "data"), xytext=(0, -3), textcoords="offset points", va="top",
                       fontsize=8, color="0.35")
        # 1-2-5 ticks written out in full: "2 x 10^3" is harder to read than "2,000"
        right.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        right.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        right.yaxis.set_minor_formatter(NullFormatter())
        for ax in (left, right):
            ax.grid(alpha=0.3, which="major")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in axes[-1]:
        ax.set_xlabel("mini-batch (in stream order)")
    fig.legend(loc="outside upper center", ncol=min(len(schemes), 5), fontsize=9,
               title=f"Perceptron@K on {stream}: label-query scheme", title_fontsize=10)
    return fig
