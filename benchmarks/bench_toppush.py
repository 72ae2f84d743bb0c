"""TopPush (Li, Jin & Zhou, NIPS 2014): time to a certified relative gap of 1e-6.

Instances: the whole of Spambase (4601 x 57, scaled to [0, 1] by ``MinMaxScaler01`` as
``infpush_cvx.data.datasets`` does) and planted m = n = 10^4, d = 50 (``planted_bipartite``, seed
0), both at C = 1, i.e. ``lam = 1/C = 1`` in paper scaling (the rankers' and
``experiments/agarwal.py``'s convention). Every figure is measured in this run, each solve in a
fresh single-threaded process after a warm-up (``benchmarks/_harness.py``), with its peak RSS:

- ``interior_point`` and ``dual_agd`` (:func:`infpush_cvx.solvers.toppush.toppush`), both losses
  for the interior point, stopped at a certified relative gap of 1e-6;
- ``authors_rule``: the paper's algorithm as the authors' code runs it (Nesterov's method with a
  doubling line search from L = 1/m in their scaling, the equal-sums projection, stopped once the
  dual objective changes by less than 1e-4 relatively after at least 10 steps), written here on
  the project's projection; its certified gap at that stop is computed after the clock stops;
- CVXPY + Clarabel on :func:`infpush_cvx.formulations.toppush_problem` (the ratios' baseline);
- the project's Infinite Push (``infinite_push``, default certified method, same lam) for scale.

Usage: ``.venv/bin/python benchmarks/bench_toppush.py [--quick]`` (``--quick``: planted
m = n = 2000 instead of 10^4 and shorter limits).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _harness  # noqa: E402

LAM = 1.0  # C = 1


def _data(name: str, size: int):
    from infpush_cvx.data import BipartiteData
    if name == "spambase":
        from infpush_cvx.data.datasets import MinMaxScaler01, load
        X, y = load("spambase")[:2]
        X = MinMaxScaler01().fit(X).transform(X)
        return BipartiteData.from_labels(X, y == 1)
    from infpush_cvx.data.generators import planted_bipartite
    return planted_bipartite(size, size, 50, seed=0)


def authors_rule(data, lam, *, tol=1e-4, max_iter=10000):
    """The paper's accelerated dual gradient with the authors' line search and stopping rule, in
    the scaling of :mod:`infpush_cvx.solvers.toppush` (their f is m times ours, their alpha m
    times ours, so their starting L = 1/m is 1/m^2 here). Returns (w, alpha, beta, steps)."""
    import numpy as np

    from infpush_cvx.prox.equal_sums import _project_checked
    m, n = data.m, data.n
    Xp, Xn = data.Xp, data.Xn

    def f_and_grad(a, q):
        v = Xp.T @ a - Xn.T @ q
        ga = Xp @ v / lam + m * a / 2.0 - 1.0
        gq = -(Xn @ v) / lam
        return (v @ v) / (2 * lam) - a.sum() + m * (a @ a) / 4.0, ga, gq

    L = 1.0 / m ** 2
    a, q = np.zeros(m), np.zeros(n)
    a_prev, q_prev = a, q
    t, t_prev, gamma = 1.0, 0.0, 0.0
    values = []
    empty = np.empty(0)
    for it in range(1, max_iter + 1):
        mom = (t_prev - 1.0) / t
        sa, sq = a + mom * (a - a_prev), q + mom * (q - q_prev)
        f_s, ga, gq = f_and_grad(sa, sq)
        a_prev, q_prev = a, q
        stop = False
        while True:
            a, q, gamma = _project_checked(sa - ga / L, sq - gq / L, empty, False, gamma)
            da, dq = a - sa, q - sq
            r = da @ da + dq @ dq
            if math.sqrt(r) <= 1e-6 / m:  # the code's 1e-6 on its m-times-larger alpha
                stop = True
                break
            v = Xp.T @ a - Xn.T @ q
            f_new = (v @ v) / (2 * lam) - a.sum() + m * (a @ a) / 4.0
            if f_new - f_s - ga @ da - gq @ dq <= 0.5 * L * r:
                break
            L *= 2.0
        t_prev, t = t, (1.0 + math.sqrt(4.0 * t * t + 1.0)) / 2.0
        values.append(f_new)
        if stop or (it >= 10 and abs(values[-1] - values[-2]) <= abs(values[-2]) * tol):
            break
    return (Xp.T @ a - Xn.T @ q) / lam, a, q, it


def run_toppush(probe, name, size, method, loss, time_limit):
    import warnings

    from infpush_cvx.solvers.toppush import toppush
    data = _data(name, size)
    small = _data("planted", 60)
    toppush(small, None, LAM, loss=loss, method=method)  # compile and warm up
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with probe.measure():
            res = toppush(data, None, LAM, loss=loss, method=method, time_limit=time_limit)
    return {"status": res.status, "gap": res.gap, "objective": res.objective,
            "iterations": res.iterations}


def run_authors(probe, name, size):
    from infpush_cvx.solvers.toppush import duality_gap
    data = _data(name, size)
    authors_rule(_data("planted", 60), LAM)
    with probe.measure():
        w, a, q, steps = authors_rule(data, LAM)
    primal, _, gap = duality_gap(data, w, a, q, LAM, "truncated_quadratic")
    return {"status": "stopped (1e-4 change)", "gap": gap, "objective": primal,
            "iterations": steps}


def run_cvxpy(probe, name, size, loss):
    from infpush_cvx.formulations._toppush import toppush_problem as build
    from infpush_cvx.solvers.toppush import primal_objective
    data = _data(name, size)
    build(_data("planted", 20), LAM, loss=loss).solve(solver="CLARABEL")
    with probe.measure():
        prob = build(data, LAM, loss=loss)
        prob.solve(solver="CLARABEL")
    w = prob.var_dict["w"].value
    return {"status": prob.status, "gap": None,
            "objective": primal_objective(data, w, LAM, loss) if w is not None else None,
            "iterations": prob.solver_stats.num_iters}


def run_infinite_push(probe, name, size, time_limit):
    import warnings

    from infpush_cvx.solvers import infinite_push
    data = _data(name, size)
    small = _data("planted", 60)
    infinite_push(small.Xp, small.Xn, LAM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with probe.measure():
            res = infinite_push(data.Xp, data.Xn, LAM, time_limit=time_limit)
    return {"status": res.status, "gap": res.gap, "objective": res.objective,
            "iterations": res.iterations}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    size = 2000 if args.quick else 10_000
    limit = 60.0 if args.quick else 300.0
    instances = [("spambase", 0), ("planted", size)]
    for name, n in instances:
        label = "spambase (4601 x 57)" if name == "spambase" else f"planted {n} x {n} x 50"
        rows = []
        for loss in ("truncated_quadratic", "hinge"):
            rows.append((f"CVXPY + Clarabel, {loss}",
                         _harness.run(run_cvxpy, name, n, loss, timeout=limit)))
            rows.append((f"interior_point, {loss}",
                         _harness.run(run_toppush, name, n, "interior_point", loss, limit,
                                      timeout=limit)))
        rows.append(("dual_agd, truncated_quadratic",
                     _harness.run(run_toppush, name, n, "dual_agd", "truncated_quadratic",
                                  limit, timeout=limit)))
        rows.append(("authors' rule (1e-4 change), truncated_quadratic",
                     _harness.run(run_authors, name, n, timeout=limit)))
        rows.append(("Infinite Push (certified 1e-6), for scale",
                     _harness.run(run_infinite_push, name, n, limit, timeout=limit)))
        base = {loss: rows[2 * k][1].get("time_s") for k, loss in
                enumerate(("truncated_quadratic", "hinge"))}
        authors = rows[5][1].get("time_s")
        print(f"\n{label}, lam = {LAM:g} (C = 1)")
        print(f"{'method':52s} {'status':22s} {'time s':>8s} {'/CVXPY':>7s} {'/authors':>8s} "
              f"{'gap':>9s} {'objective':>13s} {'iters':>6s} {'peak MiB':>8s}")
        for what, row in rows:
            t = row.get("time_s", float("nan"))
            loss = "hinge" if what.endswith("hinge") else "truncated_quadratic"
            ref = base.get(loss) or float("nan")
            gap = row.get("gap")
            obj = row.get("objective")
            print(f"{what:52s} {str(row.get('status'))[:22]:22s} {t:8.3f} "
                  f"{t / ref if ref == ref and ref else float('nan'):7.2f} "
                  f"{t / authors if authors else float('nan'):8.2f} "
                  f"{'-' if gap is None else format(gap, '.1e'):>9s} "
                  f"{'-' if obj is None else format(obj, '.10f'):>13s} "
                  f"{str(row.get('iterations', '-')):>6s} "
                  f"{row.get('peak_rss_mib', float('nan')):8.0f}")
            if "error" in row:
                print(f"    {row['error']}")


if __name__ == "__main__":
    main()
