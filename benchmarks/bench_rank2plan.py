"""Benchmark: Rank2Plan weighted-pair LP, column/constraint generation vs CVXPY (Clarabel, HiGHS).

Instances come from ``infpush_cvx.data.generators.rank2plan_pairs`` (sparse count features, pairs
within groups, unequal gaps and weights). The solves are tasks of the package's benchmark runner
(:mod:`infpush_cvx.benchmarking`) on generated instances (``Instance``: the generator and its
parameters), run by its process executor with ``fresh=True``: each solve in a new process (so its
peak resident memory is its own) after a warm-up solve there (imports, numba cache loading,
CVXPY's first-call overhead); every figure printed comes from this run:

- ``time_s``: wall-clock of the task (for CVXPY: problem construction + compile + solve, at
  CVXPY's default solver options);
- ``objective``: P(beta) as the solver reports it;
- ``rel_diff``: relative difference to the best objective of the row's case;
- ``speedup``: time of the best CVXPY solver on the case / time of the row (target: at least
  ``TARGET_SPEEDUP`` = 20 for ``ccg`` on the 2,000-state instance at lambda 1 and at 0.05
  lambda_max, certified; the large instance's target is the exact optimum within 60 s);
- ``peak_rss_mib``: peak resident memory during the solve (``VmHWM`` reset before it), and
  ``base_rss_mib`` the memory just before it (imports + data).

Usage::

    python benchmarks/bench_rank2plan.py            # full run (several minutes, CVXPY included)
    python benchmarks/bench_rank2plan.py --quick    # under 2 minutes
    python benchmarks/bench_rank2plan.py --csv results.csv
"""

from __future__ import annotations

import argparse
import platform
import sys

from infpush_cvx.benchmarking import benchmark
from infpush_cvx.benchmarking.executors import ProcessExecutor
from infpush_cvx.benchmarking.tasks import Instance, Task

#: The 2,000-state instance: 2,000 states, 200 sparse features, 20,000 pairs.
MEDIUM = dict(n_groups=20, states_per_group=100, n_features=200, pairs_per_group=1000, seed=0)
#: The 20,000-state instance: 20,000 states, 1,000 sparse features, 200,000 pairs.
LARGE = dict(n_groups=200, states_per_group=100, n_features=1000, pairs_per_group=1000, seed=0)

#: name -> (rank2plan_pairs arguments, lambda: a fraction of lambda_max, or {"lam": value})
CASES = {
    # Target (issue 29): at least 20x faster than CVXPY + Clarabel, certified, at lambda 1 and
    # at 0.05 lambda_max.
    "medium": (MEDIUM, 0.05),
    "medium_lam1": (MEDIUM, {"lam": 1.0}),
    # Target: the exact optimum in at most 60 s.
    "large": (LARGE, 0.3),
    "large_denser_beta": (LARGE, 0.1),
    # Quick-mode stand-in for "medium".
    "small": (dict(n_groups=10, states_per_group=50, n_features=100, pairs_per_group=500,
                   seed=0), 0.05),
}
#: The speed-up over the best CVXPY solver that the "medium" cases must reach.
TARGET_SPEEDUP = 20.0
#: Seconds the certified column-and-constraint generation may take.
CCG_TIME_LIMIT = 600.0


def instance(case) -> Instance:
    """The case as a generated problem; a lambda given as a fraction of lambda_max is computed
    here."""
    from infpush_cvx.data.generators import rank2plan_pairs
    from infpush_cvx.solvers.rank2plan import rank2plan_lambda_max

    kwargs, lam = CASES[case]
    lam = lam["lam"] if isinstance(lam, dict) else lam * rank2plan_lambda_max(
        rank2plan_pairs(**kwargs))
    return Instance(case, "rank2plan_pairs", tuple(kwargs.items()), "rank2plan_lp",
                    (("form", "compact"),), lam)


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
        plan = [("medium", True), ("medium_lam1", True), ("large", True),
                ("large_denser_beta", False)]
        cvx_timeout = args.cvxpy_timeout
    tasks = []
    for case, with_cvxpy in plan:
        problem = instance(case)
        tasks.append(Task(problem, "native", "rank2plan.ccg", timeout=CCG_TIME_LIMIT))
        tasks += [Task(problem, "cvxpy", solver, timeout=cvx_timeout, options=())
                  for solver in (("CLARABEL", "HIGHS") if with_cvxpy else ())]
    table = benchmark(tasks, ProcessExecutor(n_workers=1, fresh=True)).table
    rows = []
    for case, case_rows in table.groupby("problem", sort=False):
        case_rows = [_row(r) for r in case_rows.to_dict("records")]
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
    for r in rows:
        if r["case"].startswith("medium") and r["method"] == "ccg":
            met = r["status"] == "optimal" and r["speedup"] >= TARGET_SPEEDUP
            print(f"{r['case']}: ccg {r['speedup']:.1f}x the best CVXPY solver (target "
                  f"{TARGET_SPEEDUP:g}x, certified): {'met' if met else 'NOT met'}")
    if args.csv:
        import pandas as pd

        from infpush_cvx.files import atomic_open
        with atomic_open(args.csv, "w", newline="") as fh:
            pd.DataFrame(rows).to_csv(fh, index=False)
    return 0


def _row(r: dict) -> dict:
    """A runner row in this benchmark's columns (a CVXPY solve is the method "cvxpy")."""
    cvxpy = r["kind"] == "cvxpy"
    status = r["status"] if r["status"] != "timeout" else f"skipped (over {r['timeout']:.0f} s)"
    return {"case": r["problem"], "states": r["m"], "features": r["d"], "pairs": r["n"],
            "nnz_X": r["nnz"], "lam": r["lam"], "method": "cvxpy" if cvxpy else "ccg",
            "solver": r["solver"] if cvxpy else "", "status": status, "time_s": r["time"],
            "objective": float(r["objective"]), "certified_gap": r["gap"],
            "iterations": r["iterations"], "nnz_beta": r["nnz_w"],
            "peak_rss_mib": r["peak_rss_mib"], "base_rss_mib": r["rss_before_mib"]}


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
