"""Perceptron@K ([Kar2015]) and its active variant ([Modi2017], Algorithms 1 and 2).

The keys are those of docs/references.md; docs/mathematics.md, sections 6.2 and 6.3, writes the
algorithms out.

The stream is split at random into about ``ln N`` mini-batches of about ``N / ln N`` points; w = 0.
For each batch B with scores ``s = B w``:

1. predict the top K (ties broken by the batch's random order) and record ``prec@k`` of that
   prediction, *before* updating (progressive validation);
2. ``Delta`` = number of negatives in the top K (the prec@k loss, times K);
3. if ``Delta > 0``: ``w -= x`` for every false positive in the top K, then ``w += x`` for
   positives found outside the top K:

   - ``"full"`` (Algorithm 1): all labels observed; add the Delta highest-scored positives
     outside the top K (all of them if fewer exist). Queries: the whole batch.
   - ``"sequential"`` (scheme 1): the same update, but labels are read from the top down until
     Delta positives are found. Queries: K + the points read. Same iterates as ``"full"``.
   - ``"exponential"``, ``"inverse"``, ``"uniform"`` (Algorithm 2, schemes 2-4): every point
     outside the top K is queried independently with the probability of
     :func:`infpush_cvx.evaluation.online.sampling.query_probabilities`; every queried positive is
     added. Queries: K + the points sampled.

The RBF variant (``kernel="rbf"``) runs the same linear algorithm on random Fourier features.
Deterministic under ``seed`` (batch split, random features and query draws).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._validation import check_choice, check_int, check_matrix, check_scalar
from ...data.kernels import resolve_gamma
from ...data.labels import binary_labels
from .features import RandomFourierFeatures
from .sampling import RANDOM_SCHEMES, SCHEMES, query_probabilities
from .stream import minibatch_indices


@dataclass
class PerceptronAtKResult:
    """Per-batch record of a Perceptron@K run.

    Attributes: ``w`` final weights (in feature space, i.e. random-feature space for RBF);
    ``prec_at_k``, ``mistakes`` (Delta), ``queries`` and ``batch_sizes``, one entry per batch;
    ``expected_queries`` (per batch: K plus the sum of the query probabilities for the active
    schemes, equal to ``queries`` for the deterministic ones);
    ``feature_map`` (the fitted :class:`RandomFourierFeatures` or None).
    """

    w: np.ndarray
    k: int
    scheme: str
    kernel: str
    prec_at_k: np.ndarray
    mistakes: np.ndarray
    queries: np.ndarray
    batch_sizes: np.ndarray
    expected_queries: np.ndarray = None
    feature_map: RandomFourierFeatures | None = None
    params: dict = field(default_factory=dict)

    @property
    def cumulative_queries(self) -> np.ndarray:
        return np.cumsum(self.queries)

    def decision_function(self, X) -> np.ndarray:
        """Scores of new points under the final weights (through the feature map if any)."""
        X = check_matrix(X, "X", allow_sparse=False)
        Z = self.feature_map.transform(X) if self.feature_map is not None else X
        return Z @ self.w

    def frame(self):
        """Tidy per-batch table (pandas): prec_at_k, mistakes, queries, cumulative_queries."""
        import pandas as pd
        return pd.DataFrame({
            "batch": np.arange(1, self.prec_at_k.size + 1), "k": self.k, "scheme": self.scheme,
            "kernel": self.kernel, "batch_size": self.batch_sizes, "prec_at_k": self.prec_at_k,
            "mistakes": self.mistakes, "queries": self.queries,
            "cumulative_queries": self.cumulative_queries})


def perceptron_at_k(X, y, k: int, *, scheme: str = "sequential", seed: int,
                    n_batches: int | None = None, rate: float = 5.0, temperature: float = 1.0,
                    eps: float = 1e-3, kernel: str = "linear", gamma="scale",
                    n_components: int = 300) -> PerceptronAtKResult:
    """Run Perceptron@K over a random mini-batch split of ``(X, y)`` (see the module docstring).

    Parameters
    ----------
    X : (N, d) array; y : (N,) binary labels, the greater one positive ({0, 1}, {-1, 1},
        booleans; see :mod:`infpush_cvx.data.labels`).
    k : int, the K of prec@K; at most the smallest batch size.
    scheme : "full" | "sequential" | "exponential" | "inverse" | "uniform".
    seed : int, drives the batch split, the random features and the query draws.
    n_batches : default ``round(ln N)``.
    rate, temperature, eps : sampling parameters of the active schemes (expected queries per
        mistake, exponential temperature, inverse-scheme offset). The default ``rate=5`` was
        chosen on generated streams with 10% positives: with ``rate=2`` the active schemes
        subtract Delta false positives but find far fewer than Delta positives per mistake, and
        prec@k oscillates; at 5 they match Algorithm 1's prec@k with fewer label queries.
    kernel : "linear" | "rbf" (random Fourier features with ``gamma`` and ``n_components``);
        ``gamma="scale"`` uses ``1 / (d * X.var())`` (scikit-learn's SVC convention), so the
        kernel is neither ~0 nor ~1 for every pair whatever the feature scale.
    """
    X = check_matrix(X, "X", allow_sparse=False)
    yb_all = binary_labels(y, "y", require_both=False).positive.astype(np.int64)
    if yb_all.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got "
                         f"{yb_all.shape[0]}")
    check_choice(scheme, "scheme", SCHEMES)
    check_choice(kernel, "kernel", ("linear", "rbf"))
    seed, k = check_int(seed, "seed"), check_int(k, "k")
    rate = check_scalar(rate, "rate", positive=True)
    temperature = check_scalar(temperature, "temperature", positive=True)
    eps = check_scalar(eps, "eps", positive=True)

    batches = minibatch_indices(X.shape[0], n_batches=n_batches, seed=seed)
    smallest = min(b.size for b in batches)
    if not 1 <= k <= smallest:
        raise ValueError(f"k must be in [1, {smallest}] (the smallest mini-batch), got {k}")

    fmap = None
    if kernel == "rbf":
        if isinstance(gamma, str):  # scikit-learn's SVC rule, 1 when X.var() is 0
            gamma = resolve_gamma(check_choice(gamma, "gamma", ("scale",)), X)
        fmap = RandomFourierFeatures(n_components, gamma, seed=seed).fit(X)
    Z = X if fmap is None else fmap.transform(X)
    rng = np.random.default_rng([seed, 1])  # query draws: a stream separate from the split

    w = np.zeros(Z.shape[1])
    nb = len(batches)
    prec = np.empty(nb)
    mistakes = np.zeros(nb, dtype=np.int64)
    queries = np.zeros(nb, dtype=np.int64)
    expected = np.full(nb, float(k))  # K, plus the query probabilities' sum (active schemes)
    for t, idx in enumerate(batches):
        B, yb = Z[idx], yb_all[idx]
        s = B @ w
        order = np.argsort(-s, kind="stable")
        top, rest = order[:k], order[k:]
        y_top = yb[top]
        prec[t] = y_top.mean()
        delta = int(k - y_top.sum())
        mistakes[t] = delta
        queries[t] = idx.size if scheme == "full" else k
        if delta == 0:
            continue
        step = -B[top[y_top == 0]].sum(axis=0)
        if scheme in ("full", "sequential"):
            pos_rest = np.flatnonzero(yb[rest] == 1)  # positions in `rest`, best score first
            chosen = pos_rest[:delta]
            if scheme == "sequential":
                # labels read from the top down until Delta positives (or the batch end)
                queries[t] += (chosen[-1] + 1) if chosen.size == delta else rest.size
            step += B[rest[chosen]].sum(axis=0)
        else:
            p = query_probabilities(s[top[-1]] - s[rest], delta, scheme, rate=rate,
                                    temperature=temperature, eps=eps)
            asked = rest[rng.random(rest.size) < p]
            queries[t] += asked.size
            expected[t] = k + p.sum()
            step += B[asked[yb[asked] == 1]].sum(axis=0)
        w += step
    if scheme not in RANDOM_SCHEMES:
        expected = queries.astype(np.float64)
    return PerceptronAtKResult(
        w=w, k=k, scheme=scheme, kernel=kernel, prec_at_k=prec, mistakes=mistakes,
        queries=queries, batch_sizes=np.array([b.size for b in batches]), feature_map=fmap,
        expected_queries=expected,
        params={"seed": seed, "rate": rate, "temperature": temperature, "eps": eps,
                "gamma": gamma, "n_components": n_components, "n_batches": nb})
