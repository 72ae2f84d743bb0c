"""Benchmark: SVMMAP ([Yue2007]) by 1-slack cutting planes on Ionosphere and Spambase.

Data: the whole data set, features scaled to [0, 1] by one min-max map (as
``infpush_cvx.evaluation.experiments.agarwal`` with ``scale="all"``), positives = class 1; C in
{0.1, 1, 10, 100, 1000} (the experiments' grid), ``lam = 1/C``, ``tol = 1e-6``.

Each solve runs in its own freshly spawned single-threaded process (``benchmarks/_harness.py``)
after a tiny warm-up solve (imports, numba cache loading). Columns:

- ``time_s``: wall-clock of ``svmmap(...)``; ``rounds``: oracle calls; ``cuts``: working set;
  ``gap``: certified relative duality gap; ``status``; ``peak_rss_mib``: peak resident memory of
  the solve (``rss_before_mib``: just before it, data loaded);
- ``ranksvm_s``: the baseline timed in the same run, the bipartite RankSVM (the pairwise SVM
  SVMMAP is usually compared with; ``ranksvm`` default method, certified to the same tol) on the
  same data and C, and ``ratio`` = ``time_s / ranksvm_s``;
- ``oracle_ms``: one most-violated-ranking call at the solution (divide and conquer,
  ``O((m+n) log(m+n))``), ``scan_ms``: the paper's ``O(m n)`` full scan of every position for
  every negative (numba, here), and ``scan_ratio`` = ``scan_ms / oracle_ms``; both medians of
  repeated calls, and the two maxima are checked equal.

No CVXPY baseline: SVMMAP's QP has one constraint per ranking ((m+n)! of them; the CVXPY
formulation in ``infpush_cvx.formulations.svmmap_problem`` enumerates them for m, n <= 4 only).

Usage::

    python benchmarks/bench_svmmap.py                 # both data sets, five C (~1 minute)
    python benchmarks/bench_svmmap.py --quick         # C in {1, 100}
    python benchmarks/bench_svmmap.py --csv svmmap.csv
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness  # noqa: E402  (the benchmarks folder is not a package)

CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
DATASETS = ("ionosphere", "spambase")


def _data(name):
    from infpush_cvx.data import BipartiteData
    from infpush_cvx.data.datasets import MinMaxScaler01, load

    X, y = load(name)
    return BipartiteData.from_labels(MinMaxScaler01().fit(X).transform(X), y)


def _scan(s_desc, t_desc):
    """The paper's greedy: every negative tries every position among the sorted positives,
    O(m n); returns the positions a_j (largest maximiser) and the summed maxima."""
    m, n = s_desc.shape[0], t_desc.shape[0]
    prefix = np.zeros(m + 1)
    for i in range(m):
        prefix[i + 1] = prefix[i] + s_desc[i]
    total = 0.0
    a = np.zeros(n, dtype=np.int64)
    vals = np.empty(m + 1)
    for j in range(1, n + 1):
        ap_part = 0.0  # sum_{k > q} k / ((k+j-1)(k+j)), accumulated from q = m down
        for q in range(m, -1, -1):
            vals[q] = ap_part / m + 2.0 / (m * n) * (prefix[q] - q * t_desc[j - 1])
            if q > 0:
                ap_part += q / ((q + j - 1.0) * (q + j))
        best, arg = -np.inf, m
        for q in range(m + 1):
            if vals[q] >= best:
                best, arg = vals[q], q
        a[j - 1] = arg
        total += best
    return a, total


def _scan_kernel():
    import numba
    return numba.njit(_scan)


def _timed_solve(probe, solver, name, C):
    """``solver`` on the data set ``name`` at ``lam = 1/C``, timed by ``probe`` after an untimed
    warm-up on a tiny problem (imports, numba compilation); returns (data, result)."""
    import numpy as np

    rng = np.random.default_rng(0)
    solver(rng.normal(size=(6, 3)) + 0.5, rng.normal(size=(7, 3)), 1.0)  # warm-up
    data = _data(name)
    with probe.measure():
        res = solver(data, None, 1.0 / C, tol=1e-6)
    return data, res


def measure_svmmap(probe, name, C):
    import numpy as np

    from infpush_cvx.solvers.svmmap import most_violated_ranking, svmmap

    data, res = _timed_solve(probe, svmmap, name, C)
    s, t = data.Xp @ res.w, data.Xn @ res.w
    scan = _scan_kernel()
    sd, td = np.sort(s)[::-1].copy(), np.sort(t)[::-1].copy()
    scan(sd, td)  # compile
    reps = 20

    def median_ms(f):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - t0)
        return 1e3 * float(np.median(times)), out

    oracle_ms, ours = median_ms(lambda: most_violated_ranking(s, t))
    scan_ms, (_, _) = median_ms(lambda: scan(np.sort(s)[::-1].copy(), np.sort(t)[::-1].copy()))
    # the same maximum, from the full scan's positions
    a_scan, _ = scan(sd, td)
    c = np.searchsorted(a_scan, np.arange(1, data.m + 1), side="left")
    k = np.arange(1, data.m + 1)
    scan_value = ((1 - np.mean(k / (k + c)))
                  - 2.0 / (data.m * data.n) * (sd @ c - td @ (data.m - a_scan)))
    return {"dataset": name, "C": C, "m": data.m, "n": data.n, "d": data.d,
            "status": res.status, "gap": res.gap, "rounds": res.iterations,
            "cuts": int(res.info["cuts"].shape[0]), "objective": res.objective,
            "oracle_ms": oracle_ms, "scan_ms": scan_ms,
            "oracle_agrees": bool(abs(scan_value - ours.violation) <= 1e-10)}


def measure_ranksvm(probe, name, C):
    from infpush_cvx.solvers.ranksvm import ranksvm

    _, res = _timed_solve(probe, ranksvm, name, C)
    return {"ranksvm_status": res.status, "ranksvm_gap": res.gap}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="C in {1, 100} only")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--csv", help="write the rows to this CSV file")
    args = parser.parse_args(argv)
    Cs = (1.0, 100.0) if args.quick else CS
    print(f"# bench_svmmap: python {platform.python_version()}, {platform.machine()}, "
          f"single-threaded processes ({', '.join(sorted(_harness.THREAD_ENV))}=1)")
    cols = ["dataset", "C", "status", "gap", "rounds", "cuts", "time_s", "ranksvm_s", "ratio",
            "oracle_ms", "scan_ms", "scan_ratio", "peak_rss_mib"]
    print("  ".join(f"{c:>10}" for c in cols))
    rows = []
    for name in args.datasets:
        for C in Cs:
            row = _harness.run(measure_svmmap, name, C, timeout=args.timeout)
            base = _harness.run(measure_ranksvm, name, C, timeout=args.timeout)
            row.setdefault("dataset", name)
            row.setdefault("C", C)
            row["ranksvm_s"] = base.get("time_s", float("nan"))
            row["ranksvm_status"] = base.get("ranksvm_status", base.get("status"))
            row["ratio"] = row.get("time_s", float("nan")) / row["ranksvm_s"]
            row["scan_ratio"] = row.get("scan_ms", float("nan")) / row.get("oracle_ms",
                                                                           float("nan"))
            rows.append(row)
            print("  ".join(_fmt(row.get(c)) for c in cols), flush=True)
            if not row.get("oracle_agrees", True):
                print(f"# WARNING: the two oracles disagree on {name}, C={C}")
    if args.csv:
        _harness.write_csv(args.csv, rows)
    failed = [r for r in rows if r.get("status") != "optimal"]
    return 1 if failed else 0


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:>10.3g}"
    return f"{v!s:>10}"


if __name__ == "__main__":
    sys.exit(main())
