"""Benchmark: certified Infinite Push (l2, l1) and RankSVM solvers against CVXPY + Clarabel.

Every figure printed comes from this run. The solves are tasks of the package's benchmark runner
(:mod:`infpush_cvx.benchmarking`) on generated instances (``Instance``: a generator and its
parameters), run by its process executor with ``fresh=True``: each solve in a new
single-threaded process, after a warm-up there (imports, numba caches), so its memory is its own:

- ``time_s``: wall-clock of the task (CVXPY: construction + compile + solve);
- ``rel_gap``: certified relative duality gap returned by the solver (CVXPY: none);
- ``rel_diff``: relative difference of the objective to the CVXPY value of the case, when run;
- ``speedup``: CVXPY time / row time, measured in this run (the 300 x 300 baseline), against
  the faster of Clarabel's default direct solver (faer) and qdldl (``cvxpy-clarabel-qdldl``),
  both at CVXPY's default options;
- ``target_s``: the brief's target, seconds or a speed-up over CVXPY (``"100x"``); ``met``
  whether the certified gap is <= 1e-6 within it;
- ``warm``: for the Spambase rows marked ``warm from C=...``, the solve is warm-started from the
  solution at the previous C of the path (that solve is done first and not timed); all other
  rows are cold starts;
- ``peak_rss_mib``: peak resident memory during the solve (``VmHWM`` reset before it, native
  solver memory included) and ``base_rss_mib`` the memory just before it (imports + data).
  (``tracemalloc`` is not used: it slows CVXPY's compilation many times over.)

Cases: planted instances (``generators.planted_bipartite``, seed 0, paper lambda 1e-2) and UCI
Spambase (all 4601 rows, spam positive, 57 features min-max scaled to [0, 1]:
``generators.real_subset`` with every row, paper scaling with C = 1/lambda in {0.1, 1, 10, 100,
1000}; file from ``$INFPUSH_CVX_DATA``, else a ``shared/data/uci`` folder beside the
repository).

Usage::

    python benchmarks/bench_solvers.py            # full run
    python benchmarks/bench_solvers.py --quick    # under 3 minutes
    python benchmarks/bench_solvers.py --csv results.csv
"""

from __future__ import annotations

import argparse
import platform
import sys

from infpush_cvx.benchmarking import benchmark
from infpush_cvx.benchmarking.executors import ProcessExecutor
from infpush_cvx.benchmarking.tasks import Instance, Task

#: Seconds a CVXPY baseline solve may take (it has no target; the project solvers get --time-limit).
CVXPY_TIME_LIMIT = 600.0
_SIZES = {"planted300": (300, 300, 50), "planted1000": (1000, 1000, 100)}
#: The project solver behind each row name, and the CVXPY options of each baseline.
_NATIVE = {"infinite_push": "infinite_push.working_set", "ranksvm": "ranksvm.smoothing_newton"}
_CVXPY = {"cvxpy-clarabel": (), "cvxpy-clarabel-qdldl": (("direct_solve_method", "qdldl"),)}


def instance(case, solver, penalty, lam) -> Instance:
    formulation = "ranksvm" if solver == "ranksvm" else "infinite_push"
    options = (("scaling", "paper"), ("form", "compact")) + \
        ((("penalty", penalty),) if formulation == "infinite_push" else ())
    if case == "spambase":  # every row: 1813 spam (positive), 2788 other, scaled to [0, 1]
        params = (("dataset", "spambase"), ("m", 1813), ("n", 2788), ("seed", 0),
                  ("scale01", True))
        return Instance(case, "real_subset", params, formulation, options, lam)
    m, n, d = _SIZES[case]
    params = (("m", m), ("n", n), ("d", d), ("seed", 0))
    return Instance(case, "planted_bipartite", params, formulation, options, lam)


def task(job, time_limit) -> Task:
    case, solver, penalty, lam, _, warm_lam = job
    problem = instance(case, solver, penalty, lam)
    if solver in _CVXPY:
        return Task(problem, "cvxpy", "CLARABEL", timeout=CVXPY_TIME_LIMIT,
                    options=_CVXPY[solver])
    return Task(problem, "native", _NATIVE[solver], timeout=time_limit,
                options=None if warm_lam is None else (("warm_start_lam", warm_lam),))


def jobs(quick):
    lam = 1e-2
    out = [  # (case, solver, penalty, lambda, target seconds, warm-start lambda)
        ("planted300", "cvxpy-clarabel", "l2", lam, None, None),
        ("planted300", "cvxpy-clarabel-qdldl", "l2", lam, None, None),
        ("planted300", "infinite_push", "l2", lam, "100x", None),
        ("planted1000", "infinite_push", "l2", lam, 2.0, None),
    ]
    if not quick:
        out += [("planted1000", "infinite_push", "l1", lam, 5.0, None),
                ("planted1000", "ranksvm", "l2", lam, 5.0, None)]
    for C in ((1.0,) if quick else (0.1, 1.0, 10.0, 100.0, 1000.0)):
        out.append(("spambase", "infinite_push", "l2", 1.0 / C, 10.0, None))
    if not quick:  # the hardest C again, warm-started along the path from C = 100
        out.append(("spambase", "infinite_push", "l2", 1.0 / 1000.0, 10.0, 1.0 / 100.0))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a run under 3 minutes")
    ap.add_argument("--csv", help="write the results table to this CSV file")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="per-solve time limit in seconds (default 30, quick 15)")
    args = ap.parse_args(argv)
    limit = args.time_limit or (15.0 if args.quick else 30.0)
    import numpy as np
    print(f"# python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; quick={args.quick}; time limit {limit:g} s", flush=True)
    plan = jobs(args.quick)
    table = benchmark([task(job, limit) for job in plan],
                      ProcessExecutor(n_workers=1, fresh=True)).table
    rows, cvx = [], {}
    for (case, solver, penalty, lam, target, warm_lam), r in zip(plan, table.to_dict("records")):
        row = dict(objective=r["objective"], rel_gap=_none(r["gap"]), status=r["status"],
                   iterations=_none(r["iterations"]), time_s=r["time"], m=r["m"], n=r["n"],
                   d=r["d"], peak_rss_mib=r["peak_rss_mib"], base_rss_mib=r["rss_before_mib"])
        row.update(case=case, solver=solver, penalty=penalty, lam=lam, target_s=target,
                   warm=None if warm_lam is None else f"warm from C={1.0 / warm_lam:g}")
        if solver.startswith("cvxpy-clarabel"):  # the baseline is the faster configuration
            best = cvx.get((case, penalty))
            if best is None or row["time_s"] < best["time_s"]:
                cvx[(case, penalty)] = row
        ref = cvx.get((case, penalty)) if solver == "infinite_push" else None
        row["speedup"] = ref["time_s"] / row["time_s"] if ref else None
        row["rel_diff"] = abs(row["objective"] - ref["objective"]) / abs(ref["objective"]) \
            if ref else None
        certified = row["rel_gap"] is not None and row["rel_gap"] <= 1e-6
        if target is None:
            row["met"] = None
        elif isinstance(target, str):  # a speed-up over CVXPY + Clarabel, e.g. "100x"
            row["met"] = bool(certified and row["speedup"] is not None
                              and row["speedup"] >= float(target[:-1]))
        else:
            row["met"] = bool(certified and row["time_s"] <= target)
        rows.append(row)
        print(_fmt_row(row), flush=True)
    print()
    print(markdown(rows))
    if args.csv:
        import pandas as pd

        from infpush_cvx.files import atomic_open
        with atomic_open(args.csv, "w", newline="") as fh:
            pd.DataFrame(rows).to_csv(fh, index=False)
        print(f"\nwrote {args.csv}")


def _none(x):
    """None for a missing value of the table (NaN, pandas' NA)."""
    return None if x is None or x != x or str(x) == "<NA>" else x


def _f(x, spec):
    return "" if x is None else format(x, spec)


def _fmt_row(r):
    return (f"{r['case']:<12} {r['solver']:<15} {r['penalty']} lam={r['lam']:<8g} "
            f"{r['warm'] or 'cold'} time={r['time_s']:.3f}s gap={_f(r['rel_gap'], '.1e')} "
            f"status={r['status']} "
            f"speedup={_f(r['speedup'], '.1f')} rss={r['peak_rss_mib']:.0f}MiB")


def markdown(rows):
    head = ("| case (m x n x d) | solver | penalty | lambda (paper) | start | time (s) | rel. gap "
            "| status | vs CVXPY | target | met | peak RSS (MiB) | RSS before solve (MiB) |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        lines.append(
            f"| {r['case']} ({r['m']} x {r['n']} x {r['d']}) | {r['solver']} | {r['penalty']} "
            f"| {r['lam']:g} | {r['warm'] or 'cold'} | {r['time_s']:.3f} "
            f"| {_f(r['rel_gap'], '.1e')} | {r['status']} "
            f"| {_f(r['speedup'], '.1f') + 'x' if r['speedup'] else ''} "
            f"| {'' if r['target_s'] is None else r['target_s']} "
            f"| {'' if r['met'] is None else ('yes' if r['met'] else 'no')} "
            f"| {r['peak_rss_mib']:.0f} | {r['base_rss_mib']:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
