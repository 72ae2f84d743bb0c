"""Regenerate the README's figures in ``docs/figures/`` from measurements made in one run.

Every number drawn is measured by this script when it runs (nothing is typed in), single
threaded where it times code, on the machine at hand; the figures are PNGs at 110 dpi, each
under 150 KB. Each file is written atomically (``infpush_cvx.files.atomic_path``): a killed run
leaves the previous figure. The figures are built on ``matplotlib.figure.Figure`` directly, so
no matplotlib backend is selected.

``performance_profile.png`` (about 3 minutes)
    Every problem of the catalog's core tier x every CVXPY comparison solver and every project
    method that applies (``make_tasks(catalog.problem_ids(tier="core"))``, the same tasks as
    ``infpush-cvx bench``), one repeat, run serially so no two solves share the 2 cores;
    drawn by ``infpush_cvx.benchmarking.reports.performance_profile_figure(problems="all")``:
    each solver on the problems it attempted. ``--table`` draws it from a saved results table
    instead of running.
``projection_time.png`` (about 30 seconds)
    ``infpush_cvx.benchmarking.prox_timing.time_projection`` on n x n Gaussian matrices,
    n = 20 to 1000, radius 0.1 x the l1,inf norm (the setting of ``docs/anchors.md``,
    section 3): median of 5 calls after a warm-up for ``newton`` and ``sort``, and the floor of
    copying the matrix once; beside them the same projection written in CVXPY and solved by
    Clarabel (one solve per size, n = 20 to 200, tolerances 1e-8).
``solver_time_vs_size.png`` (about 2 minutes)
    Planted instances ``generators.planted_bipartite(m, m, 50, margin=0.5, seed=0)``, paper
    lambda 0.01: the project's l2 Infinite Push (``infinite_push``, default method) and RankSVM
    (``ranksvm``, default method), median of 3 solves, m = 100 to 10,000; CVXPY + Clarabel on the
    compact formulations (building, compiling and solving, one solve) up to m = 300, where one
    solve takes tens of seconds. The objectives are checked to agree to 1e-5.
``agarwal_roc_zoom.png`` (about 2 minutes)
    ``experiments.agarwal.agarwal_experiment`` (the protocol of [Agarwal2011], section 6: [0, 1]
    scaling fitted on the training part, 5-fold CV of C on average precision) on the first 5
    random splits of Ionosphere and Spambase; the ROC curves of the test parts are averaged
    vertically (mean true positive rate at each false positive rate) over the splits, and the
    plot zooms on the top of the list (FPR <= 0.1). Needs the UCI data (``$INFPUSH_CVX_DATA``).

Usage::

    .venv/bin/python benchmarks/make_figures.py                    # all four, ~8 minutes
    .venv/bin/python benchmarks/make_figures.py --only roc projection
    .venv/bin/python benchmarks/make_figures.py --table results/bench.parquet --only profile
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # single thread, set before numpy, numba and Clarabel load

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from infpush_cvx.benchmarking.reports import series_styles  # noqa: E402
from infpush_cvx.files import atomic_path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DPI = 110
FIGURES = ("profile", "projection", "solvers", "roc")


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` atomically and report its size."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=DPI)
    print(f"written: {path} ({path.stat().st_size / 1024:.0f} KB)", flush=True)
    return path


def _plain_log_ticks(axis) -> None:
    """Label a log axis 1, 10, 100 (or 0.01) instead of powers of ten."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


# -- performance profile ---------------------------------------------------------------------

def figure_profile(out: Path, table: str | None = None) -> Path:
    """The performance profile of the core catalog (see the module docstring)."""
    from infpush_cvx import catalog
    from infpush_cvx.benchmarking import load_results, make_tasks, run_benchmark
    from infpush_cvx.benchmarking.reports import performance_profile_figure, profile_counts
    if table is None:
        tasks = make_tasks(catalog.problem_ids(tier="core"))
        t0 = time.perf_counter()
        df = run_benchmark(tasks, "serial", progress=False)
        print(f"# profile: {len(tasks)} solves in {time.perf_counter() - t0:.0f} s")
    else:
        df = load_results(table)
    print(profile_counts(df, problems="all").to_string())
    n_p = df["problem"].nunique()
    fig = performance_profile_figure(
        df, problems="all",
        title=f"Performance profile of time, {n_p} core catalog problems, 1 run")
    return save(fig, out / "performance_profile.png")


# -- projection time against size ------------------------------------------------------------

def _cvxpy_projection_seconds(n: int, rng) -> float:
    """One CVXPY + Clarabel solve of the l1,inf projection of an n x n Gaussian matrix (radius
    0.1 x its norm): building, compiling and solving."""
    import cvxpy as cp
    from infpush_cvx.prox import l1inf_norm
    V = rng.standard_normal((n, n))
    t0 = time.perf_counter()
    P = cp.Variable(V.shape)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(P - V)),
                      [cp.sum(cp.max(cp.abs(P), axis=0)) <= 0.1 * l1inf_norm(V, axis=0)])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8)
    return time.perf_counter() - t0


def figure_projection(out: Path) -> Path:
    """Time of the l1,inf projection against the matrix size (see the module docstring)."""
    from threadpoolctl import threadpool_limits
    from infpush_cvx.benchmarking.prox_timing import time_projection
    sizes, cvxpy_sizes = (20, 50, 100, 200, 400, 1000), (20, 50, 100, 200)
    timing = time_projection(sizes, (0.1,), repeats=5, seed=0)
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1):
        _cvxpy_projection_seconds(5, rng)  # CVXPY's first-call costs, not timed
        cvx = pd.Series({n: 1e3 * _cvxpy_projection_seconds(n, rng) for n in cvxpy_sizes})
    print(timing[["size", "method", "time_ms", "copy_floor_ms", "ratio_to_floor"]]
          .to_string(index=False))
    print("CVXPY + Clarabel (ms):", cvx.round(1).to_dict())

    t = timing.pivot_table(index="size", columns="method", values="time_ms")
    floor = timing.groupby("size")["copy_floor_ms"].median()
    n_big, n_cvx = max(sizes), max(cvxpy_sizes)
    fig = Figure(figsize=(9.0, 4.5))
    ax = fig.add_axes((0.09, 0.12, 0.5, 0.78))
    styles = series_styles(3)
    ax.plot(t.index ** 2, t["newton"], "-", lw=1.8, ms=6, **styles[0],
            label=f"newton (default, numba):\n{t.at[n_big, 'newton']:.2f} ms at {n_big} x {n_big}, "
                  f"{t.at[n_big, 'newton'] / floor[n_big]:.0f}x the copy")
    ax.plot(t.index ** 2, t["sort"], "-", lw=1.8, ms=6, **styles[1],
            label=f"sort ([Quattoni2009]'s algorithm):\n{t.at[n_big, 'sort']:.0f} ms at "
                  f"{n_big} x {n_big}, {t.at[n_big, 'sort'] / t.at[n_big, 'newton']:.0f}x newton")
    ax.plot(cvx.index ** 2, cvx, ":", lw=1.8, ms=6, **styles[2],
            label=f"CVXPY + Clarabel (build + solve):\n{cvx[n_cvx]:.0f} ms at {n_cvx} x {n_cvx}, "
                  f"{cvx[n_cvx] / t.at[n_cvx, 'newton']:.0f}x newton")
    ax.plot(floor.index ** 2, floor, "--", color="black", marker="x", ms=6,
            label="floor: copying the matrix once")
    ax.set(xscale="log", yscale="log",
           xlabel="entries N = n² of the n x n matrix (log scale)",
           ylabel="time per projection (ms, log scale)",
           title=r"$\ell_{1,\infty}$ projection, radius $0.1\,\|V\|_{1,\infty}$, one thread")
    _plain_log_ticks(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
              labelspacing=1.0)
    fig.text(0.61, 0.14, "Gaussian n x n matrices; median of 5 calls after a\n"
                         "warm-up (CVXPY: one solve). Measured in one run.",
             fontsize=8, color="0.3")
    return save(fig, out / "projection_time.png")


# -- solver time against size ----------------------------------------------------------------

def _project_solve(problem: str, data, lam: float):
    from infpush_cvx.solvers.infinite_push import infinite_push
    from infpush_cvx.solvers.ranksvm import ranksvm
    if problem == "infinite_push":
        return infinite_push(data.Xp, data.Xn, lam)
    return ranksvm(data.Xp, data.Xn, lam)


def _cvxpy_solve(problem: str, data, lam: float) -> float:
    from infpush_cvx import formulations
    prob = (formulations.infinite_push_problem(data, lam, penalty="l2")
            if problem == "infinite_push"
            else formulations.ranksvm_problem(data, lam))
    prob.solve(solver="CLARABEL")
    return float(prob.value)


def figure_solvers(out: Path) -> Path:
    """Project solvers against CVXPY + Clarabel as the instance grows (module docstring)."""
    from threadpoolctl import threadpool_limits
    from infpush_cvx.data.generators import planted_bipartite
    lam, d = 0.01, 50
    sizes, cvxpy_sizes = (100, 200, 300, 1000, 3000, 10000), (100, 200, 300)
    rows = []
    with threadpool_limits(limits=1):
        warm = planted_bipartite(20, 20, 5, margin=0.5, seed=1)
        for problem in ("infinite_push", "ranksvm"):  # imports, numba, CVXPY's first call
            _project_solve(problem, warm, lam)
            _cvxpy_solve(problem, warm, lam)
        for m in sizes:
            data = planted_bipartite(m, m, d, margin=0.5, seed=0)
            for problem in ("infinite_push", "ranksvm"):
                times = []
                for _ in range(3):
                    t0 = time.perf_counter()
                    res = _project_solve(problem, data, lam)
                    times.append(time.perf_counter() - t0)
                row = {"m": m, "problem": problem, "project_s": float(np.median(times)),
                       "status": res.status}
                if m in cvxpy_sizes:
                    t0 = time.perf_counter()
                    value = _cvxpy_solve(problem, data, lam)
                    row["cvxpy_s"] = time.perf_counter() - t0
                    row["rel_diff"] = abs(value - res.objective) / abs(value)
                    if row["rel_diff"] > 1e-5:
                        raise RuntimeError(f"{problem} m = {m}: the objectives differ by "
                                           f"{row['rel_diff']:.1e}")
                rows.append(row)
                print(row, flush=True)
    table = pd.DataFrame(rows)

    fig = Figure(figsize=(9.0, 4.5))
    ax = fig.add_axes((0.09, 0.12, 0.5, 0.78))
    names = {"infinite_push": "l2 Infinite Push", "ranksvm": "RankSVM"}
    for (problem, g), style in zip(table.groupby("problem", sort=False), series_styles(2)):
        big = g.iloc[-1]
        ax.plot(g["m"] ** 2, g["project_s"], "-", lw=1.8, ms=6, **style,
                label=f"{names[problem]}, infpush_cvx:\n{big['project_s']:.2f} s at "
                      f"{big['m']:,} x {big['m']:,}")
        c = g.dropna(subset=["cvxpy_s"])
        last = c.iloc[-1]
        ax.plot(c["m"] ** 2, c["cvxpy_s"], ":", lw=1.8, ms=6, mfc="none", **style,
                label=f"{names[problem]}, CVXPY + Clarabel:\n{last['cvxpy_s']:.1f} s at "
                      f"{last['m']} x {last['m']}, {last['cvxpy_s'] / last['project_s']:.0f}x "
                      "infpush_cvx")
    uncertified = table[~table["status"].isin(["optimal", "degenerate_optimal"])]
    if len(uncertified):  # a solve that stopped without its certificate is marked, not hidden
        ax.plot(uncertified["m"] ** 2, uncertified["project_s"], "x", color="black", ms=10,
                label="stopped uncertified: " + ", ".join(sorted(set(uncertified["status"]))))
    ax.set(xscale="log", yscale="log",
           xlabel="pairs m x n (planted, m = n, d = 50; log scale)",
           ylabel="wall time of one solve (s, log scale)",
           title="Certified solves against CVXPY + Clarabel, one thread")
    _plain_log_ticks(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
              labelspacing=1.0)
    fig.text(0.61, 0.14, "infpush_cvx: default methods, certified relative gap 1e-6,\n"
                         "median of 3 solves; CVXPY: compact form, build + compile\n"
                         "+ solve, one solve. Objectives agree to 1e-5. One run.",
             fontsize=8, color="0.3")
    return save(fig, out / "solver_time_vs_size.png")


# -- Agarwal's ROC curves, top of the list ---------------------------------------------------

def _vertical_average(curves, grid):
    """Mean and standard deviation over ``curves`` [(fpr, tpr)] of the TPR reached at each FPR
    of ``grid`` (the ROC step function read from the left)."""
    tprs = np.array([tpr[np.searchsorted(fpr, grid, side="right") - 1] for fpr, tpr in curves])
    return tprs.mean(axis=0), tprs.std(axis=0)


def figure_roc(out: Path, n_splits: int = 5, zoom: float = 0.1) -> Path:
    """Averaged ROC curves at the top of the list (see the module docstring)."""
    from infpush_cvx.evaluation import metrics
    from infpush_cvx.evaluation.experiments import agarwal as A
    t0 = time.perf_counter()
    results, scores = A.agarwal_experiment(("ionosphere", "spambase"), n_splits=n_splits,
                                           n_folds=5, seed=0, n_jobs=1, return_scores=True)
    print(f"# roc: {n_splits} splits in {time.perf_counter() - t0:.0f} s")
    print(results.groupby(["dataset", "method"])[["auc", "pos_at_top", "ap"]].mean()
          .round(4).to_string())
    methods = list(results["method"].unique())
    names = {"ranksvm": "RankSVM", "infinite_push": "Infinite Push (l2)",
             "sparse_infinite_push": "sparse Infinite Push (l1)"}
    grid = np.linspace(0.0, zoom, 401)

    fig = Figure(figsize=(10, 4.3))
    axes = [fig.add_axes((0.07 + 0.49 * k, 0.13, 0.42, 0.74)) for k in range(2)]
    for ax, ds in zip(axes, ("ionosphere", "spambase")):
        top = 0.0
        for method, style, ls in zip(methods, series_styles(len(methods)), ("-", "--", "-.")):
            curves = []
            for split in range(n_splits):
                y_test, sc = scores[(ds, split)]
                fpr, tpr, _ = metrics.roc_curve_points(y_test, sc[method])
                curves.append((fpr, tpr))
            mean, std = _vertical_average(curves, grid)
            top = max(top, float((mean + std).max()))
            at_top = results[(results["dataset"] == ds) & (results["method"] == method)]
            ax.fill_between(grid, mean - std, mean + std, color=style["color"], alpha=0.12,
                            lw=0)
            ax.plot(grid, mean, ls=ls, lw=1.8, color=style["color"],
                    label=f"{names.get(method, method)}: "
                          f"{at_top['pos_at_top'].mean():.1f} at the top")
        y_test = scores[(ds, 0)][0]
        n_neg = int((np.asarray(y_test) == 0).sum())
        ax.set(xlim=(0, zoom), ylim=(0, min(1.0, 1.05 * top)),
               xlabel="false positive rate (share of negatives ranked above)",
               ylabel="true positive rate (share of positives)",
               title=f"{ds}: top {zoom:.0%} of the {n_neg} test negatives")
        ax.grid(alpha=0.3)
        # ionosphere's curves fill the lower right; spambase's the upper left
        ax.legend(fontsize=8.5, loc="upper left" if ds == "ionosphere" else "lower right",
                  title="positives above every negative (mean)", title_fontsize=8.5)
    fig.suptitle(f"ROC curves at the top of the list, mean (band: ± 1 sd) over {n_splits} "
                 f"splits, the protocol of Agarwal (SDM 2011)", fontsize=11)
    return save(fig, out / "agarwal_roc_zoom.png")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=FIGURES, default=list(FIGURES),
                   help="figures to make (default: all)")
    p.add_argument("--out", default=str(REPO / "docs" / "figures"),
                   help="output folder (default: docs/figures)")
    p.add_argument("--table", help="results table (.csv or .parquet) for the profile, instead "
                                   "of running the core catalog")
    args = p.parse_args(argv)
    out = Path(args.out)
    makers = {"profile": lambda: figure_profile(out, args.table),
              "projection": lambda: figure_projection(out),
              "solvers": lambda: figure_solvers(out), "roc": lambda: figure_roc(out)}
    for name in args.only:
        makers[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
