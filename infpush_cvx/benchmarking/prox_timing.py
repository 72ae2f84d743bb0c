"""Timing of the l1,inf projection core against the floor of copying the matrix once.

The setting of the project's timing anchors: a standard Gaussian matrix (seeded), radius equal to
``factor * ||V||_{1,inf}`` for factors 0.001, 0.01, 0.1, 0.5, single thread. Every figure is a
median over ``repeats`` runs measured in this run, reported with its ratio to the copy floor
(``V.copy()``) measured on the same matrix, so figures from noisy machines stay comparable.
"""

from __future__ import annotations

import timeit

import numpy as np
import pandas as pd

from .._validation import check_choice, check_scalar

RADIUS_FACTORS = (0.001, 0.01, 0.1, 0.5)


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up (numba compilation, caches)
    return float(np.median(timeit.repeat(fn, number=1, repeat=repeats)))


def time_projection(sizes=(100, 1000), factors=RADIUS_FACTORS, methods=None, *, repeats=5,
                    seed: int = 0) -> pd.DataFrame:
    """One row per (size, factor, method): median seconds, ratio to the copy floor, and the
    largest difference from the first method's answer (a correctness check of the timed code)."""
    from threadpoolctl import threadpool_limits
    from ..prox import METHODS, l1inf_norm, project_l1inf
    methods = list(METHODS) if methods is None else list(methods)
    for method in methods:  # before any timing
        check_choice(method, "methods", METHODS)
    repeats = int(check_scalar(repeats, "repeats", positive=True))
    rows = []
    rng = np.random.default_rng(seed)
    with threadpool_limits(limits=1):
        for size in sizes:
            size = int(check_scalar(size, "sizes", positive=True))
            V = rng.standard_normal((size, size))
            norm = float(l1inf_norm(V, axis=0))
            floor = _median_time(V.copy, repeats)
            for factor in factors:
                radius = check_scalar(factor, "factors", positive=True) * norm
                first = None
                for method in methods:
                    P = project_l1inf(V, radius, axis=0, method=method)
                    first = P if first is None else first
                    t = _median_time(lambda: project_l1inf(V, radius, axis=0, method=method),
                                     repeats)
                    rows.append({"size": size, "radius_factor": factor, "method": method,
                                 "time_ms": 1e3 * t, "copy_floor_ms": 1e3 * floor,
                                 "ratio_to_floor": t / floor,
                                 "max_abs_diff": float(np.abs(P - first).max())})
    return pd.DataFrame(rows)
