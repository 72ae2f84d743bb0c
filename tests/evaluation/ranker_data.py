"""Data the ranker tests share: a small two-class set with a sparse pattern, the shared data
folder beside the repository, and the statuses that claim a certificate."""

from pathlib import Path

import numpy as np

from infpush_cvx.solvers.result import CERTIFIED  # noqa: F401 -- imported by the tests

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def two_classes(seed=0, N=80, d=6, shift=1.2, zeros=0.5):
    """Two classes apart on three of d features, small entries set to 0 (a sparse pattern)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.4).astype(int)
    X = rng.normal(size=(N, d))
    X[:, :3] += shift * y[:, None]
    X[np.abs(X) < zeros] = 0.0
    return X, y
