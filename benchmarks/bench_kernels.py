"""Benchmark of the kernel Infinite Push (RBF) on all of Ionosphere and all of Spambase.

Every solve runs in its own freshly spawned, single-threaded process (``benchmarks/_harness.py``):
the timed call is the whole kernel route, Gram matrix + factor + certified solve
(``infpush_cvx.solvers.infinite_push(..., kernel="rbf", gamma="scale")``), on the whole data set
with every feature scaled to [0, 1] (as in Agarwal 2011), positives first. Lambda is given in
paper scaling; ``lam = 1`` is the paper's ``C = 1``. Printed per row: time, the Gram/factor part
of it, the factor's rank, iterations, status, certified relative gap (of the RKHS problem: the
linear solver's gap on the factor rows; for a Nystroem row also its gap on the exact problem,
computed after the timed call from the full Gram matrix), objective, peak RSS, and for Ionosphere the time of
CVXPY + Clarabel on the same RKHS problem (``formulations.infinite_push(..., kernel="rbf")``,
compile included) measured in the same run, with the ratio and the relative difference of
the two objectives.

Targets: certified gap 1e-6 on all of Ionosphere in <= 2 s, and on all of Spambase (exact
factor) in <= 60 s. The Spambase rows run under ``--time-limit`` (the solver's own limit: an
unfinished solve reports its status and gap), with the exact factor, with a Nystroem factor
(``--nystroem`` landmarks; that certifies the problem restricted to the landmarks' span), and
with ``nystroem="adaptive"`` (a span grown until the gap on the exact problem, certified with
the full Gram matrix, is 1e-6; its rank column is the final span's).

    python benchmarks/bench_kernels.py --quick      # Ionosphere only (about 30 s)
    python benchmarks/bench_kernels.py              # + Spambase, exact and Nystroem
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402  (the benchmarks folder is not a package)


def _data(name: str):
    """(Xp, Xn) of the whole data set, features scaled to [0, 1]."""
    import numpy as np
    from infpush_cvx.datasets import MinMaxScaler01, load_ionosphere, load_spambase

    X, y = load_ionosphere() if name == "ionosphere" else load_spambase()
    X = MinMaxScaler01().fit_transform(X)
    return np.ascontiguousarray(X[y == 1]), np.ascontiguousarray(X[y == 0])


def measure_native(probe, name: str, lam: float, nystroem, time_limit: float) -> dict:
    import warnings

    from infpush_cvx.generators import planted_bipartite
    from infpush_cvx.solvers import infinite_push

    warnings.simplefilter("ignore")
    warm = planted_bipartite(20, 30, 5, seed=1)
    infinite_push(warm.Xp, warm.Xn, 0.1, kernel="rbf")  # warm-up (numba compilation)
    Xp, Xn = _data(name)
    with probe.measure():
        res = infinite_push(Xp, Xn, lam, kernel="rbf", gamma="scale", nystroem=nystroem,
                            time_limit=time_limit)
    row = {"status": res.status, "time_s": res.time, "factor_s": res.info["factor_time"],
           "rank": res.info["rank"], "iterations": res.iterations, "gap": res.gap,
           "objective": res.objective, "m": Xp.shape[0], "n": Xn.shape[0]}
    if isinstance(nystroem, int) and res.dual is not None:
        row["exact_gap"] = exact_problem_gap(Xp, Xn, res, lam)  # after the timed call
    return row


def exact_problem_gap(Xp, Xn, res, lam: float) -> float:
    """Relative gap of a Nystroem result on the exact RKHS problem (full Gram matrix K): its
    objective is exact (beta lives on the landmarks), and its pair dual is feasible for the
    exact problem, whose dual value is ``lam (sum alpha - 1/2 b^T K b)``,
    ``b = [alpha 1_n; -alpha^T 1_m]``."""
    import numpy as np
    from infpush_cvx.kernels import kernel_matrix

    m, n = Xp.shape[0], Xn.shape[0]
    rows, cols = np.zeros(m), np.zeros(n)
    for j in range(n):
        col = res.dual.column(j)
        rows += col
        cols[j] = col.sum()
    b = np.concatenate([rows, -cols])
    K = kernel_matrix(np.vstack([Xp, Xn]), None, "rbf", res.info["gamma"])
    dual = lam * (cols.sum() - 0.5 * b @ (K @ b))
    return float((res.objective - dual) / abs(res.objective))


def measure_cvxpy(probe, name: str, lam: float) -> dict:
    import warnings

    from infpush_cvx import formulations
    from infpush_cvx.data import BipartiteData

    warnings.simplefilter("ignore")
    data = BipartiteData(*_data(name))
    with probe.measure():
        t0 = time.perf_counter()
        problem = formulations.infinite_push(data, lam, kernel="rbf", gamma="scale")
        value = problem.solve(solver="CLARABEL")
        elapsed = time.perf_counter() - t0
    return {"status": problem.status, "time_s": elapsed, "objective": float(value)}


def _fmt(value, spec):
    return "" if value is None else spec.format(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Ionosphere only")
    parser.add_argument("--lam", type=float, nargs="+", default=[1.0, 0.01],
                        help="lambdas in paper scaling (default 1 = the paper's C = 1, and 0.01)")
    parser.add_argument("--time-limit", type=float, default=300.0,
                        help="seconds per Spambase solve (the solver's own limit)")
    parser.add_argument("--nystroem", type=int, default=500, help="Spambase Nystroem landmarks")
    parser.add_argument("--no-exact-spambase", action="store_true",
                        help="skip the exact Spambase rows (Nystroem only)")
    args = parser.parse_args(argv)

    rows = []
    for lam in args.lam:
        native = _harness.run(measure_native, "ionosphere", lam, None, 60.0, timeout=60.0)
        base = _harness.run(measure_cvxpy, "ionosphere", lam, timeout=600.0)
        rows.append(("ionosphere", "exact", lam, native, base, 2.0))
    if not args.quick:
        for lam in args.lam:
            for nys in ((args.nystroem, "adaptive") if args.no_exact_spambase
                        else (None, args.nystroem, "adaptive")):
                native = _harness.run(measure_native, "spambase", lam, nys, args.time_limit,
                                      timeout=args.time_limit + 600.0)
                label = "exact" if nys is None else (
                    "adaptive span" if nys == "adaptive" else f"nystroem {nys}")
                rows.append(("spambase", label, lam,
                             native, None, 60.0))

    header = ("data", "factor", "lambda", "m x n", "status", "time (s)", "gram+factor (s)",
              "rank", "iters", "gap", "gap on exact problem", "objective", "peak RSS (MiB)", "CVXPY+Clarabel (s)",
              "ratio", "rel. diff", "target met")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, factor, lam, r, base, target in rows:
        ratio = diff = btime = None
        if base is not None and "time_s" in base and "time_s" in r:
            btime = base["time_s"]
            ratio = btime / r["time_s"]
            if "objective" in base and "objective" in r:
                diff = abs(r["objective"] - base["objective"]) / abs(base["objective"])
        met = (r.get("status") == "optimal" and r.get("gap") is not None and r["gap"] <= 1e-6
               and r.get("time_s", float("inf")) <= target
               and factor in ("exact", "adaptive span"))
        print("| " + " | ".join([
            name, factor, f"{lam:g}",
            f"{r.get('m', '')} x {r.get('n', '')}", str(r.get("status")),
            _fmt(r.get("time_s"), "{:.2f}"), _fmt(r.get("factor_s"), "{:.2f}"),
            str(r.get("rank", "")), str(r.get("iterations", "")), _fmt(r.get("gap"), "{:.1e}"),
            _fmt(r.get("exact_gap", r.get("gap") if factor in ("exact", "adaptive span")
                       else None), "{:.1e}"),
            _fmt(r.get("objective"), "{:.10g}"), _fmt(r.get("peak_rss_mib"), "{:.0f}"),
            _fmt(btime, "{:.2f}") + (f" ({base['status']})" if base else ""),
            _fmt(ratio, "{:.1f}x"), _fmt(diff, "{:.1e}"),
            f"{'yes' if met else 'no'} (<= {target:g} s, gap 1e-6)"]) + " |")
        if "error" in r:
            print(f"    {name} {factor}: {r['error']}")
    print(f"\nmachine: {os.cpu_count()} CPUs, single-threaded BLAS per process; "
          f"command: python benchmarks/bench_kernels.py {' '.join(argv or sys.argv[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
