"""Label-query probabilities of active Perceptron@K ([Modi2017], section 3.1; docs/mathematics.md,
section 6.3).

After a mistake (``Delta > 0`` negatives in the predicted top K), each point outside the top K is
queried independently with probability ``p_i = min(1, rate * Delta * g_i / sum_l g_l)``, where the
weight ``g_i`` depends on its margin ``delta_i = s_(K) - s_i >= 0`` to the K-th score:

- ``"exponential"``: ``g_i = exp(-delta_i / temperature)``, i.e. proportional to
  ``exp(score - score_K)`` ([Modi2017], section 3.1, scheme 2; its Algorithm 2 box writes the
  exponent with the opposite sign, which would favour the points *furthest* from the top;
  section 3.1 and the stated intent, "points closer to the margin", fix the sign used here);
- ``"inverse"``: ``g_i = 1 / (delta_i + eps)``, proportional to ``1/(score_K - score)`` (scheme 3;
  ``eps`` keeps ties with the K-th score finite);
- ``"uniform"``: ``g_i = 1`` (scheme 4, the baseline).

[Modi2017] fixes only proportionality; the normalisation makes ``rate * Delta`` the expected number
of queries (before the cap at 1), so all schemes spend a comparable label budget.
Scheme 1, ``"sequential"``, is not random: labels are read from the top down until Delta positives
are found (Algorithm 1's update, with its queries counted) and is handled by the caller.
"""

from __future__ import annotations

import numpy as np

#: all schemes: "full" (Algorithm 1, every label observed), then the four of [Modi2017], section
#: 3.1 (docs/mathematics.md, section 6.3).
SCHEMES = ("full", "sequential", "exponential", "inverse", "uniform")
RANDOM_SCHEMES = ("exponential", "inverse", "uniform")


def query_probabilities(margins, n_mistakes: int, scheme: str, *, rate: float = 5.0,
                        temperature: float = 1.0, eps: float = 1e-3) -> np.ndarray:
    """``p_i = min(1, rate * n_mistakes * g_i / sum g)`` for margins ``delta_i >= 0``."""
    delta = np.maximum(np.asarray(margins, dtype=np.float64), 0.0)
    if scheme == "exponential":
        # shift by the smallest margin so the largest weight is exp(0) = 1: no underflow of all g
        g = np.exp(-(delta - delta.min(initial=0.0)) / temperature)
    elif scheme == "inverse":
        g = 1.0 / (delta + eps)
    elif scheme == "uniform":
        g = np.ones_like(delta)
    else:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {list(RANDOM_SCHEMES)}")
    total = g.sum()
    if total == 0 or delta.size == 0:
        return np.zeros_like(delta)
    return np.minimum(1.0, rate * n_mistakes * g / total)
