"""Problem size and compile time of the direct and compact Infinite Push formulations.

For d = 100 and m = n in {100, 300, 500, 1000} (the direct form only up to 500: at 1000 it needs
about 11 GiB), each configuration runs in a fresh subprocess that builds the planted instance,
compiles the problem for CLARABEL (``Problem.get_problem_data``) and reports the nonzeros of the
problem data (A and P), the compile time and the subprocess's peak resident memory. The ratio
column is direct / compact, measured in this run.

    python benchmarks/bench_formulations.py [--sizes 100 300] [--d 100] [--direct-max 500]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def measure(m: int, d: int, form: str) -> dict:
    import cvxpy as cp

    from infpush_cvx.formulations import infinite_push_problem
    from infpush_cvx.data.generators import planted_bipartite

    data = planted_bipartite(m, m, d, seed=0)
    problem = infinite_push_problem(data, 0.1, form=form)
    start = time.perf_counter()
    problem_data, _, _ = problem.get_problem_data(cp.CLARABEL)
    compile_time = time.perf_counter() - start
    nnz = problem_data["A"].nnz + (problem_data["P"].nnz if "P" in problem_data else 0)
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    return {"m": m, "d": d, "form": form, "nnz": nnz, "compile_s": compile_time,
            "peak_gib": peak_gib}


def run_in_subprocess(m: int, d: int, form: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(m), str(d), form],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500, 1000])
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--direct-max", type=int, default=500)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        m, d, form = args.child
        print(json.dumps(measure(int(m), int(d), form)))
        return

    print(f"| m = n | d | direct nnz | direct compile (s) | direct peak (GiB) | compact nnz | "
          f"compact compile (s) | compact peak (GiB) | nnz ratio | compile ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in args.sizes:
        compact = run_in_subprocess(m, args.d, "compact")
        direct = run_in_subprocess(m, args.d, "direct") if m <= args.direct_max else None
        if direct is None:
            cells = ["(skipped)", "", ""]
            ratios = ["", ""]
        else:
            cells = [f"{direct['nnz'] / 1e6:.2f}M", f"{direct['compile_s']:.2f}",
                     f"{direct['peak_gib']:.2f}"]
            ratios = [f"{direct['nnz'] / compact['nnz']:.1f}x",
                      f"{direct['compile_s'] / compact['compile_s']:.1f}x"]
        print(f"| {m} | {args.d} | " + " | ".join(cells) + " | "
              f"{compact['nnz'] / 1e6:.2f}M | {compact['compile_s']:.2f} | "
              f"{compact['peak_gib']:.2f} | " + " | ".join(ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
