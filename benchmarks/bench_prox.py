"""Benchmark of the l1,inf projection (infpush_cvx.prox.project_l1inf), single-threaded.

Gaussian matrices at radius factors of the input's l1,inf norm, both axes, with and without
nonneg, both methods. Every time is the median of several calls after compilation, printed
with its ratio to ``np.copyto`` of the same matrix measured in the same run (the machine is
shared: quote ratios). Also the first-call time of the numba kernels in a fresh process, cold
(cache cleared) and warm (cache=True files present).

    python benchmarks/bench_prox.py            # full: 100x100, 1000x1000, 300x3000
    python benchmarks/bench_prox.py --quick    # < 1 minute: axis 0, sort only at factor 0.1

The last column gives the ssn method's counting passes over V (the semismooth Newton
iterations), read from ``project_l1inf(..., return_info=True).passes``; "fallback" if the kernel
gave up and the sort method answered.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")        # single thread, set before numpy/numba load

import numpy as np  # noqa: E402

from infpush_cvx.prox import METHODS, l1inf_norm, project_l1inf  # noqa: E402

FACTORS = (0.001, 0.01, 0.1, 0.5)


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def ssn_passes(V, radius, axis, nonneg) -> str:
    """Counting passes of the default kernel, as ``return_info`` reports them."""
    _, info = project_l1inf(V, radius, axis=axis, nonneg=nonneg, method="ssn", return_info=True)
    return "fallback" if info.fallback else str(info.passes)


def compile_times() -> tuple[float, float]:
    """Seconds for the first projection in a fresh interpreter: cold cache, then warm cache."""
    code = ("import time, numpy as np; t=time.perf_counter(); "
            "from infpush_cvx.prox import project_l1inf; "
            "project_l1inf(np.random.default_rng(0).standard_normal((50, 40)), 1.0); "
            "print(time.perf_counter()-t)")
    pkg = Path(__file__).resolve().parents[1] / "infpush_cvx" / "prox" / "__pycache__"
    for f in pkg.glob("*.nb*"):
        f.unlink()
    out = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        out.append(float(res.stdout.strip()))
    return out[0], out[1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time measurement")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    if args.quick:
        shapes, repeats, axes, nonnegs = [(100, 100), (1000, 1000)], 5, (0,), (False, True)
    else:
        shapes, repeats, axes, nonnegs = [(100, 100), (1000, 1000), (300, 3000)], 9, (0, 1), \
            (False, True)
    if not args.no_compile:
        cold, warm = compile_times()
        print(f"first call in a fresh process: cold cache {cold:.2f} s, cached {warm:.2f} s")
    print("| shape | axis | nonneg | radius factor | method | median ms | ratio to copy "
          "| passes |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in shapes:
        V = rng.standard_normal(shape)
        D = np.empty_like(V)
        for axis in axes:
            for nonneg in nonnegs:
                base = np.maximum(V, 0) if nonneg else V
                norm = l1inf_norm(base, axis)
                for factor in FACTORS:
                    r = factor * norm
                    for method in METHODS:
                        big = shape[0] * shape[1] > 1e5
                        if method == "sort" and (args.quick or nonneg) and factor != 0.1:
                            continue
                        project_l1inf(V, r, axis=axis, nonneg=nonneg, method=method)
                        reps = repeats if method == "ssn" else (3 if big else repeats)
                        t = median_time(lambda: project_l1inf(V, r, axis=axis, nonneg=nonneg,
                                                              method=method), reps)
                        c = median_time(lambda: np.copyto(D, V), 11)
                        extra = ""
                        if method == "ssn":
                            extra = ssn_passes(V, r, axis, nonneg)
                        print(f"| {shape[0]}x{shape[1]} | {axis} | {nonneg} | {factor} | "
                              f"{method} | {t * 1e3:.3f} | {t / c:.1f} | {extra} |", flush=True)


if __name__ == "__main__":
    main()
