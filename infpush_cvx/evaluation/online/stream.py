"""Streams for Perceptron@K: the random mini-batch split of [Modi2017] (docs/mathematics.md,
section 6.2) and a generated stream.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_int, check_scalar


def minibatch_indices(N: int, *, n_batches: int | None = None, seed: int) -> list[np.ndarray]:
    """Split ``range(N)`` at random into mini-batches ([Modi2017], Algorithms 1 and 2;
    docs/mathematics.md, sections 6.2 and 6.3).

    Default: ``round(ln N)`` batches of about ``N / ln N`` points each. ``seed`` drives the
    permutation.
    """
    N = check_int(N, "N", minimum=1)
    n_batches = (max(1, int(round(np.log(N)))) if n_batches is None
                 else check_int(n_batches, "n_batches", minimum=1))
    if n_batches > N:
        raise ValueError(f"n_batches must be at most N={N}, got {n_batches}")
    perm = np.random.default_rng(seed).permutation(N)
    return np.array_split(perm, n_batches)


def imbalanced_stream(N: int, d: int, *, positive_fraction: float = 0.05, separation: float = 1.5,
                      noise: float = 1.0, seed: int):
    """A linearly informative, class-imbalanced labelled stream ``(X, y)``, y in {0, 1}.

    A unit direction ``u`` is drawn at random; negatives are ``N(0, noise^2 I)`` and positives are
    ``separation * u + N(0, noise^2 I)``. About ``positive_fraction * N`` positives (exactly
    ``round``), rows in random order. The best linear ranker is ``x -> u.x``.
    """
    N, d = check_int(N, "N", minimum=1), check_int(d, "d", minimum=1)
    positive_fraction = check_scalar(positive_fraction, "positive_fraction")
    if not 0 < positive_fraction < 1:
        raise ValueError(f"positive_fraction must be in (0, 1), got {positive_fraction!r}")
    separation = check_scalar(separation, "separation", nonnegative=True)
    noise = check_scalar(noise, "noise", positive=True)
    rng = np.random.default_rng(seed)
    m = min(max(1, int(round(positive_fraction * N))), N - 1)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    y = (rng.permutation(N) < m).astype(np.int64)  # m positives, at random places
    X = noise * rng.standard_normal((N, d)) + separation * np.outer(y, u)
    return X, y
