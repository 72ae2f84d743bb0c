"""Random Fourier features ([Rahimi2007]): an explicit map for the RBF kernel.

``z(x) = sqrt(2/D) cos(W x + b)`` with rows of ``W ~ N(0, 2 gamma I)`` and ``b ~ U[0, 2 pi)``
gives ``E[z(x).z(y)] = exp(-gamma ||x - y||^2)``. A linear Perceptron@K on ``z(x)`` is the
"kernelised" Perceptron@K of [Modi2017] (docs/mathematics.md, section 6.4) without storing
support points.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_fitted_matrix, check_int, check_matrix, check_scalar


class RandomFourierFeatures:
    """``z(x) = sqrt(2/D) cos(W x + b)``, approximating ``k(x, y) = exp(-gamma ||x - y||^2)``.

    Parameters
    ----------
    n_components : int
        D, the number of random features.
    gamma : float
        RBF width, > 0.
    seed : int
        Seed of the draw of ``W`` and ``b`` (required: every random thing takes a seed).
    """

    def __init__(self, n_components: int = 300, gamma: float = 1.0, *, seed: int):
        self.n_components = check_int(n_components, "n_components", minimum=1)
        self.gamma = check_scalar(gamma, "gamma", positive=True)
        self.seed = check_int(seed, "seed")

    def fit(self, X):
        X = check_matrix(X, "X", allow_sparse=False)
        rng = np.random.default_rng(self.seed)
        self.W_ = rng.normal(scale=np.sqrt(2.0 * self.gamma), size=(X.shape[1], self.n_components))
        self.b_ = rng.uniform(0.0, 2.0 * np.pi, size=self.n_components)
        return self

    def transform(self, X):
        X = check_fitted_matrix(self, X, "W_", "fit(X)")
        return np.sqrt(2.0 / self.n_components) * np.cos(X @ self.W_ + self.b_)

    def fit_transform(self, X):
        return self.fit(X).transform(X)
