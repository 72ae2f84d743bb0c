"""Benchmark: certified Infinite Push (l2, l1) and RankSVM solvers against CVXPY + Clarabel.

Every figure printed comes from this run. Each measurement runs in a fresh process (spawned) after
a tiny warm-up solve there (imports, numba caches), so its peak memory is its own:

- ``time_s``: wall-clock of the solve call (CVXPY: construction + compile + solve);
- ``rel_gap``: certified relative duality gap returned by the solver (CVXPY: none);
- ``rel_diff``: relative difference of the objective to the CVXPY value of the case, when run;
- ``speedup``: CVXPY time / row time, measured in this run (the 300 x 300 baseline), against
  the faster of Clarabel's default direct solver (faer) and qdldl (``cvxpy-clarabel-qdldl``,
  3x faster on this problem);
- ``target_s``: the brief's target, seconds or a speed-up over CVXPY (``"100x"``); ``met``
  whether the certified gap is <= 1e-6 within it;
- ``warm``: for the Spambase rows marked ``warm from C=...``, the solve is warm-started from the
  solution at the previous C of the path (that solve is done first and not timed); all other
  rows are cold starts;
- ``peak_rss_mib``: peak resident memory of the measuring process (``ru_maxrss``, native solver
  memory included) and ``base_rss_mib`` the same just before the solve (imports + data).
  (``tracemalloc`` is not used: it slows CVXPY's compilation many times over.)

Cases: planted instances (``generators.planted_bipartite``, seed 0, paper lambda 1e-2) and UCI
Spambase (all 4601 rows, spam positive, 57 features min-max scaled to [0, 1], paper scaling with
C = 1/lambda in {0.1, 1, 10, 100, 1000}; file from ``$INFPUSH_CVX_DATA``, else a
``shared/data/uci`` folder beside the repository).

Usage::

    python benchmarks/bench_solvers.py            # full run
    python benchmarks/bench_solvers.py --quick    # under 3 minutes
    python benchmarks/bench_solvers.py --csv results.csv
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import platform
import resource
import sys
import time


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _data(case):
    from infpush_cvx.data import BipartiteData
    from infpush_cvx.generators import planted_bipartite

    if case == "spambase":
        from infpush_cvx.datasets import MinMaxScaler01, load_spambase
        X, y = load_spambase()
        return BipartiteData.from_labels(MinMaxScaler01().fit_transform(X), y)
    m, n, d = {"planted300": (300, 300, 50), "planted1000": (1000, 1000, 100)}[case]
    return planted_bipartite(m, n, d, seed=0)


def _measure(job, queue):
    from infpush_cvx.generators import planted_bipartite
    from infpush_cvx.solvers.infinite_push import infinite_push
    from infpush_cvx.solvers.ranksvm import rank_svm

    case, solver, penalty, lam, time_limit, warm_lam = job
    small = planted_bipartite(12, 15, 4, seed=1)  # warm-up: imports, numba caches
    infinite_push(small.Xp, small.Xn, 0.1, penalty=penalty)
    data = _data(case)
    warm = None
    if warm_lam is not None:  # the previous point of the regularisation path, not timed
        warm = infinite_push(data.Xp, data.Xn, warm_lam, penalty=penalty, time_limit=time_limit)
    base = _rss_mib()
    t0 = time.perf_counter()
    if solver.startswith("cvxpy-clarabel"):
        from infpush_cvx.formulations import infinite_push as problem
        prob = problem(data, lam, penalty=penalty, form="compact")
        opts = {"direct_solve_method": "qdldl"} if solver.endswith("qdldl") else {}
        prob.solve(solver="CLARABEL", **opts)
        elapsed = time.perf_counter() - t0
        row = dict(objective=prob.value, rel_gap=None, status=prob.status, iterations=None)
    else:
        fn = rank_svm if solver == "rank_svm" else infinite_push
        kw = {} if solver == "rank_svm" else {"penalty": penalty}
        res = fn(data.Xp, data.Xn, lam, time_limit=time_limit, warm_start=warm, **kw)
        elapsed = time.perf_counter() - t0
        row = dict(objective=res.objective, rel_gap=res.gap, status=res.status,
                   iterations=res.iterations)
    row.update(time_s=elapsed, m=data.m, n=data.n, d=data.d, peak_rss_mib=_rss_mib(),
               base_rss_mib=base)
    queue.put(row)


def run(job):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(job, queue))
    proc.start()
    row = queue.get()
    proc.join()
    return row


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
                ("planted1000", "rank_svm", "l2", lam, 5.0, None)]
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
    rows, cvx = [], {}
    for case, solver, penalty, lam, target, warm_lam in jobs(args.quick):
        row = run((case, solver, penalty, lam, limit, warm_lam))
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
