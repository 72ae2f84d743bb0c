"""Benchmark: the P-Norm Push (Rudin 2009), certified Newton solver against CVXPY + Clarabel.

Instance: ``generators.planted_bipartite(1000, 1000, 50, margin=0.5, seed=0)`` (``--m``, ``--n``,
``--d``, ``--seed``), paper-scaling lambda ``--lam`` (default 0.1), p in {1, 4, 16, 64}.

Every solve runs in its own freshly spawned, single-threaded process (``benchmarks/_harness.py``:
BLAS, OpenMP, numba and rayon, Clarabel's pool, limited to one thread), after a warm-up solve of a
20 x 30 x 5 instance by the same method in the same process (imports, CVXPY's first call). Every
figure printed comes from this run:

- ``time (s)``: wall clock of the call, the fastest of ``--repeat`` (default 3) calls in the
  same process, each on its own clock, for every solver alike (``median (s)`` beside it; the
  machine the figures were measured on is shared, so single calls of a few milliseconds are
  noisy). Native: ``solvers.pnorm_push(Xp, Xn, lam, p=p)`` (Newton,
  certified relative gap 1e-8; or ``method="boosting"``, Rudin's 100 rounds). CVXPY: building
  ``formulations.pnorm_push_problem`` plus ``problem.solve(solver=...)`` at CVXPY's default settings
  (canonicalisation, compilation and the solve; the solver's own time is its own column);
- ``certified gap``: the relative duality gap of the returned w, for every row (the certificate
  of :mod:`infpush_cvx.solvers.pnorm_push` applies to any w; CVXPY's w is checked with it after
  the timed call);
- ``speed-up``: the CVXPY + Clarabel time of the same p / the row's time (fastest / fastest),
  both from this run
  (target: >= 50x for Newton at 1,000 x 1,000 x 50); when Clarabel fails its time to the failure
  is shown and the target is not judged;
- ``rel. diff``: |P_row - P_Newton| / |P_Newton|, objectives recomputed at the returned w;
- ``peak RSS (MiB)``: peak resident memory of the solve itself (``VmHWM`` reset before the call)
  and the resident memory before it (interpreter, libraries, data).

Results go to ``--out`` (CSV, written atomically after every row) with a JSON sidecar (same
name, ``.json``: date, git commit, platform, library versions, BLAS, the arguments), as for
``bench_scale.py``, whose ``environment`` this script reuses.

Usage::

    .venv/bin/python benchmarks/bench_pnorm.py                  # 1,000 x 1,000 x 50 (about 1 min)
    .venv/bin/python benchmarks/bench_pnorm.py --quick          # 300 x 300 x 20, p in {1, 64}
    .venv/bin/python benchmarks/bench_pnorm.py --out results/pnorm.csv --ecos
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402  (the benchmarks folder is not a package)
from bench_scale import environment  # noqa: E402  (date, commit, versions, BLAS)

from infpush_cvx.files import atomic_open  # noqa: E402

TARGET = 50.0
CERTIFIED = ("optimal", "degenerate_optimal")


def _data(spec):
    from infpush_cvx.data.generators import planted_bipartite
    return planted_bipartite(spec["m"], spec["n"], spec["d"], margin=0.5, seed=spec["seed"])


def _solve(method, data, lam, p):
    """One solve; returns (w, extra row fields)."""
    if method in ("newton", "boosting"):
        from infpush_cvx.solvers.pnorm_push import pnorm_push
        res = pnorm_push(data.Xp, data.Xn, lam, p=p, method=method)
        return res.w, {"status": res.status, "iterations": res.iterations}
    import cvxpy as cp

    from infpush_cvx import formulations
    prob = formulations.pnorm_push_problem(data, lam, p=p)
    try:
        prob.solve(solver=method)
    except cp.error.SolverError as exc:  # a row with its status, not a crash
        return None, {"status": "solver_error", "message": str(exc).split(". ")[0]}
    stats = prob.solver_stats
    return prob.var_dict["w"].value, {"status": prob.status, "iterations": stats.num_iters,
                                      "solver_time_s": stats.solve_time}


def measure(probe, spec: dict, method: str, lam: float, p: float, repeat: int = 1) -> dict:
    """Child process: warm up, make the data, time ``repeat`` solves (each on its own clock;
    ``time_s`` is the fastest, ``median_time_s`` the median), then certify the last w."""
    import warnings

    import numpy as np
    from infpush_cvx.data.generators import planted_bipartite
    from infpush_cvx.solvers.pnorm_push import PNormPushProblem

    warnings.simplefilter("ignore")
    _solve(method, planted_bipartite(20, 30, 5, margin=0.5, seed=1), lam, p)  # warm-up
    data = _data(spec)
    times = []
    with probe.measure():
        for _ in range(repeat):
            t0 = time.perf_counter()
            w, row = _solve(method, data, lam, p)
            times.append(time.perf_counter() - t0)
    row.update(time_s=min(times), median_time_s=float(np.median(times)), repeats=repeat)
    if w is not None:
        check = PNormPushProblem(data, lam, p=p).certificate(w)  # after the timed call
        row.update(objective=check["objective"], gap=check["gap"])
    return row


COLUMNS = [("p", "p", "{:g}"), ("solver", "solver", "{}"), ("status", "status", "{}"),
           ("time (s)", "time_s", "{:.4f}"), ("median (s)", "median_time_s", "{:.4f}"),
           ("iterations", "iterations", "{}"),
           ("certified gap", "gap", "{:.1e}"), ("objective", "objective", "{:.10g}"),
           ("rel. diff", "rel_diff", "{:.1e}"),
           ("CVXPY + Clarabel time (s)", "baseline_time_s", "{:.3f}"),
           ("speed-up", "speedup", "{:.3g}x"), ("target", "target", "{}"),
           ("met", "met", "{}"), ("peak RSS (MiB)", "peak_rss_mib", "{:.0f}"),
           ("RSS before (MiB)", "rss_before_mib", "{:.0f}"),
           ("solver's own time (s)", "solver_time_s", "{:.3f}"), ("note", "note", "{}")]
CSV_KEYS = ["shape", "lam", "p", "solver", "status", "time_s", "median_time_s", "repeats",
            "iterations", "gap", "objective",
            "rel_diff", "baseline_time_s", "speedup", "target", "met", "peak_rss_mib",
            "rss_before_mib", "peak_source", "solver_time_s", "note", "error"]
LABEL = {"newton": "native Newton", "boosting": "native boosting (Rudin, 100 rounds)",
         "CLARABEL": "CVXPY + Clarabel", "ECOS": "CVXPY + ECOS"}


def _cell(fmt, v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    try:
        return fmt.format(v)
    except (ValueError, TypeError):
        return str(v)


def markdown(rows) -> str:
    lines = ["| " + " | ".join(h for h, _, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(_cell(f, r.get(k)) for _, k, f in COLUMNS) + " |")
    return "\n".join(lines)


def save(out, rows, env) -> None:
    if out is None:
        return
    with atomic_open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_KEYS, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: "" if r.get(k) is None else r.get(k) for k in CSV_KEYS})
    with atomic_open(out.with_suffix(".json"), "w") as fh:
        json.dump({"environment": env, "columns": CSV_KEYS}, fh, indent=2, default=str)
        fh.write("\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 x 300 x 20, p in {1, 64}")
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lam", type=float, default=0.1, help="lambda, paper scaling")
    ap.add_argument("--p", type=float, nargs="+", default=None, help="default 1 4 16 64")
    ap.add_argument("--ecos", action="store_true", help="also time CVXPY + ECOS")
    ap.add_argument("--no-boosting", action="store_true", help="skip Rudin's boosting rows")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed solves per row, each on its own clock (the machine is shared: "
                         "the fastest is reported, and the median beside it)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per row")
    ap.add_argument("--out", type=Path, default=None, help="CSV (+ .json sidecar)")
    args = ap.parse_args(argv)
    if args.quick:
        args.m, args.n, args.d = 300, 300, 20
    ps = args.p or ([1.0, 64.0] if args.quick else [1.0, 4.0, 16.0, 64.0])
    spec = {"m": args.m, "n": args.n, "d": args.d, "seed": args.seed}
    shape = f"{args.m:,} x {args.n:,} x {args.d}"
    env = environment(args)
    print(f"# P-Norm Push, planted {shape} (seed {args.seed}), lambda {args.lam:g}; "
          f"one single-threaded process per solve", flush=True)
    methods = ["CLARABEL", "newton"] + ([] if args.no_boosting else ["boosting"]) \
        + (["ECOS"] if args.ecos else [])
    rows = []
    for p in ps:
        by_method = {}
        for method in methods:
            r = _harness.run(measure, spec, method, args.lam, p, args.repeat,
                             timeout=args.timeout)
            r.update(shape=shape, lam=args.lam, p=p, solver=LABEL[method])
            by_method[method] = r
            rows.append(r)
            print(f"  p={p:<4g} {LABEL[method]:<38} {r.get('status', ''):<18} "
                  f"{_cell('{:.4f}', r.get('time_s')):>9} s  gap={_cell('{:.1e}', r.get('gap'))}"
                  f"  peak={_cell('{:.0f}', r.get('peak_rss_mib'))} MiB"
                  + (f"  ({r['error']})" if r.get("error") else ""), flush=True)
        base, newton = by_method["CLARABEL"], by_method["newton"]
        for method, r in by_method.items():
            if r.get("objective") is not None and newton.get("objective") is not None:
                r["rel_diff"] = abs(r["objective"] - newton["objective"]) / abs(newton["objective"])
            if method == "CLARABEL":
                r["note"] = r.get("message") or r.get("error") or "(the baseline)"
                continue
            if base.get("time_s") and r.get("time_s"):
                r["baseline_time_s"] = base["time_s"]
                r["speedup"] = base["time_s"] / r["time_s"]
            if method == "newton":
                r["target"] = f">= {TARGET:g}x vs CVXPY + Clarabel"
                judged = base.get("status") in ("optimal", "optimal_inaccurate") \
                    and (args.m, args.n, args.d) == (1000, 1000, 50)
                r["met"] = ("yes" if r.get("status") in CERTIFIED and r.get("speedup", 0)
                            >= TARGET else "no") if judged else ""
                if (args.m, args.n, args.d) != (1000, 1000, 50):
                    r["target"] += " (set for 1,000 x 1,000 x 50; not judged)"
                elif not judged:
                    r["note"] = f"Clarabel ended {base.get('status')!r}: not judged"
        save(args.out, rows, env)
    print()
    print(markdown(rows))
    newton_rows = [r for r in rows if r["solver"] == LABEL["newton"] and r.get("met")]
    if newton_rows:
        print(f"\nNewton >= {TARGET:g}x faster than CVXPY + Clarabel on "
              f"{sum(r['met'] == 'yes' for r in newton_rows)} of {len(newton_rows)} judged p")
    return 0


if __name__ == "__main__":
    sys.exit(main())
