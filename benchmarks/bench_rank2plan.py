"""Benchmark: Rank2Plan weighted-pair LP, column/constraint generation vs CVXPY (Clarabel, HiGHS).

Instances come from ``infpush_cvx.generators.rank2plan_pairs`` (sparse count features, pairs within
groups, unequal gaps and weights). Every measurement runs in a fresh process (so the peak resident
memory is that solve's alone) after a tiny warm-up solve in the same process (imports, numba cache
loading, CVXPY's first-call overhead), and every figure printed comes from this run:

- ``time_s``: wall-clock of the solve call (for CVXPY: problem construction + compile + solve);
- ``objective``: P(beta) recomputed with ``infpush_cvx.objectives.rank2plan_objective``;
- ``rel_diff``: relative difference to the best objective of the row's case;
- ``speedup``: time of the best CVXPY solver on the case / time of the row;
- ``peak_rss_mib``: peak resident memory of the measuring process (``ru_maxrss``), and
  ``base_rss_mib`` the same just before the solve (imports + data).

Usage::

    python benchmarks/bench_rank2plan.py            # full run (several minutes, CVXPY included)
    python benchmarks/bench_rank2plan.py --quick    # under 2 minutes
    python benchmarks/bench_rank2plan.py --csv results.csv
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import platform
import resource
import sys
import time

#: name -> (rank2plan_pairs arguments, lambda as a fraction of lambda_max)
CASES = {
    # 2,000 states, 200 features, 20,000 pairs (target: >= 10x faster than CVXPY).
    "medium": (dict(n_groups=20, states_per_group=100, n_features=200, pairs_per_group=1000,
                    seed=0), 0.05),
    # 20,000 states, 1,000 sparse features, 200,000 pairs (target: exact optimum in <= 60 s).
    "large": (dict(n_groups=200, states_per_group=100, n_features=1000, pairs_per_group=1000,
                   seed=0), 0.3),
    "large_denser_beta": (dict(n_groups=200, states_per_group=100, n_features=1000,
                               pairs_per_group=1000, seed=0), 0.1),
    # Quick-mode stand-in for "medium".
    "small": (dict(n_groups=10, states_per_group=50, n_features=100, pairs_per_group=500,
                   seed=0), 0.05),
}


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _instance(case):
    from infpush_cvx.generators import rank2plan_pairs
    from infpush_cvx.solvers.rank2plan import rank2plan_lambda_max

    kwargs, frac = CASES[case]
    data = rank2plan_pairs(**kwargs)
    return data, frac * rank2plan_lambda_max(data)


def _measure(case, method, solver, queue):
    """Child process: warm up, build the instance, time one solve, report."""
    import numpy as np

    from infpush_cvx.solvers.rank2plan import rank2plan_lp

    tiny, tiny_lam = _instance("small") if case != "small" else (None, None)
    if tiny is None:
        from infpush_cvx.generators import rank2plan_pairs
        tiny, tiny_lam = rank2plan_pairs(2, 20, 10, 30, seed=1), 0.01
    rank2plan_lp(tiny, lam=tiny_lam, method=method, solver=solver)  # warm-up
    data, lam = _instance(case)
    base = _rss_mib()
    t0 = time.perf_counter()
    res = rank2plan_lp(data, lam=lam, method=method, solver=solver)
    elapsed = time.perf_counter() - t0
    queue.put({
        "case": case, "states": data.n_states, "features": data.n_features,
        "pairs": data.n_pairs, "nnz_X": int(data.X.nnz) if hasattr(data.X, "nnz") else
        int(np.count_nonzero(data.X)), "lam": lam,
        "method": method, "solver": solver or "", "status": res.status, "time_s": elapsed,
        "objective": res.objective, "certified_gap": res.gap,
        "nnz_beta": int(np.count_nonzero(res.w)), "iterations": res.iterations,
        "peak_rss_mib": _rss_mib(), "base_rss_mib": base,
    })


def run(case, method, solver=None, timeout=None) -> dict:
    """One measurement in a fresh spawned process; a timeout ends that process (ours) only."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(case, method, solver, queue))
    proc.start()
    try:
        row = queue.get(timeout=timeout)
    except Exception:  # queue.Empty on timeout, or the child died
        row = {"case": case, "method": method, "solver": solver or "",
               "status": f"skipped (over {timeout:.0f} s)" if timeout else "failed",
               "time_s": float("nan"), "objective": float("nan")}
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small instances, < 2 minutes")
    parser.add_argument("--csv", help="also write the results table to this CSV file")
    parser.add_argument("--cvxpy-timeout", type=float, default=900.0,
                        help="seconds after which a CVXPY solve is stopped and reported skipped")
    args = parser.parse_args(argv)

    if args.quick:
        plan = [("small", True), ("large", False)]
        cvx_timeout = 60.0
    else:
        plan = [("medium", True), ("large", True), ("large_denser_beta", False)]
        cvx_timeout = args.cvxpy_timeout
    rows = []
    for case, with_cvxpy in plan:
        case_rows = [run(case, "ccg")]
        if with_cvxpy:
            for solver in ("CLARABEL", "HIGHS"):
                case_rows.append(run(case, "cvxpy", solver, timeout=cvx_timeout))
        for r in case_rows:
            print(f"  {r['case']:>18} {r['method']:>5} {r['solver']:>8}: {r['status']}, "
                  f"{r['time_s']:.2f} s", flush=True)
        objs = [r["objective"] for r in case_rows if r["objective"] == r["objective"]]
        best = min(objs)
        cvx_times = [r["time_s"] for r in case_rows
                     if r["method"] == "cvxpy" and r["status"] == "optimal"]
        best_cvx = min(cvx_times) if cvx_times else float("nan")
        for r in case_rows:
            r["rel_diff"] = (r["objective"] - best) / abs(best) if best else 0.0
            r["speedup"] = best_cvx / r["time_s"]
        rows.extend(case_rows)

    import cvxpy
    import highspy  # noqa: F401
    import numpy

    print(f"\nPython {platform.python_version()}, numpy {numpy.__version__}, cvxpy "
          f"{cvxpy.__version__}; one run, each solve in its own process after a warm-up solve.")
    cols = ["case", "states", "features", "pairs", "lam", "method", "solver", "status", "time_s",
            "speedup", "objective", "rel_diff", "certified_gap", "nnz_beta", "peak_rss_mib",
            "base_rss_mib"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(_fmt(c, r.get(c, "")) for c in cols) + " |")
    if args.csv:
        import pandas as pd

        from infpush_cvx.files import atomic_open
        with atomic_open(args.csv, "w", newline="") as fh:
            pd.DataFrame(rows).to_csv(fh, index=False)
    return 0


def _fmt(col, v) -> str:
    if isinstance(v, float):
        if v != v:
            return "n/a"
        if col == "objective":
            return f"{v:.10g}"
        if col in ("rel_diff", "certified_gap", "lam"):
            return f"{v:.2e}"
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.6g}"
    if v is None:
        return "n/a"
    return str(v)


if __name__ == "__main__":
    sys.exit(main())
