"""Views of a results table: per-problem comparison and performance profiles.

Performance profiles (Dolan & Moré, "Benchmarking optimization software with performance
profiles", Math. Programming 91, 2002): for problem p and solver s let ``t_ps`` be the cost
(median time over repeats) when the solve succeeded and agrees with the stored value, and
infinity otherwise; with the ratio ``r_ps = t_ps / min_s t_ps`` the profile of solver s is

    rho_s(tau) = |{p : r_ps <= tau}| / n_p,

the fraction of problems solved within a factor tau of the best solver.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..files import atomic_path


def comparison_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (problem, solver): repeats, agreement, worst relative error, median times."""
    g = df.groupby(["problem", "kind", "solver"], sort=True)
    out = g.agg(runs=("repeat", "size"),
                status=("status", lambda s: s.mode().iat[0] if len(s.mode()) else ""),
                agrees=("agrees", "all"), objective=("objective", "median"),
                reference=("reference", "first"), max_rel_error=("rel_error", "max"),
                gap=("gap", "median"), iterations=("iterations", "median"),
                compile_time=("compile_time", "median"), setup_time=("setup_time", "median"),
                solve_time=("solve_time", "median"), time=("time", "median"))
    return out.reset_index()


def time_matrix(df: pd.DataFrame, metric: str = "time") -> pd.DataFrame:
    """Problems x solvers, the median ``metric`` of successful, agreeing runs (NaN otherwise)."""
    ok = df[df["agrees"]]
    mat = ok.pivot_table(index="problem", columns="solver", values=metric, aggfunc="median")
    attempted = df.pivot_table(index="problem", columns="solver", values="repeat",
                               aggfunc="size")
    return mat.reindex(index=attempted.index, columns=attempted.columns)


def complete_solvers(df: pd.DataFrame) -> list[str]:
    """Solvers that attempted every problem of the table (the general-purpose ones)."""
    attempted = df.pivot_table(index="problem", columns="solver", values="repeat",
                               aggfunc="size").notna()
    return [s for s in attempted.columns if attempted[s].all()]


def performance_ratios(df: pd.DataFrame, metric: str = "time", problems: str = "common"
                       ) -> pd.DataFrame:
    """``r_ps`` (problems x solvers); inf where a solver failed or disagreed.

    problems="common": only problems every solver attempted (Dolan and Moré's setting);
    problems="all": every problem, a solver that did not attempt it counts as failing it.
    """
    check_choice(problems, "problems", ("common", "all"))
    attempted = df.pivot_table(index="problem", columns="solver", values="repeat",
                               aggfunc="size").notna()
    cost = time_matrix(df, metric)
    if problems == "common":
        keep = attempted.all(axis=1)
        if not keep.any():
            raise ValueError("no problem was attempted by every solver; select solvers or "
                             "problems, or pass problems='all'")
        cost = cost[keep]
    cost = cost.fillna(np.inf)
    best = cost.min(axis=1)
    ratios = cost.div(best.replace(np.inf, np.nan), axis=0).fillna(np.inf)
    return ratios


def performance_profile(df: pd.DataFrame, metric: str = "time", problems: str = "common",
                        taus=None) -> pd.DataFrame:
    """``rho_s(tau)`` on a grid of tau (index) for every solver (columns)."""
    ratios = performance_ratios(df, metric, problems)
    finite = ratios.to_numpy()[np.isfinite(ratios.to_numpy())]
    if taus is None:
        top = max(float(finite.max()) if finite.size else 1.0, 1.0) * 1.05
        taus = np.unique(np.concatenate([[1.0], np.sort(finite), np.geomspace(1.0, top, 200)]))
    taus = np.asarray(taus, dtype=float)
    prof = {s: [(ratios[s] <= t).mean() for t in taus] for s in ratios.columns}
    return pd.DataFrame(prof, index=pd.Index(taus, name="tau"))


def plot_performance_profile(df: pd.DataFrame, path, metric: str = "time",
                             problems: str = "common", title: str | None = None):
    """Save the performance profile as a PNG (matplotlib, Agg backend) atomically: a run killed
    while writing leaves the previous figure. Returns the path."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    prof = performance_profile(df, metric, problems)
    n_p = len(performance_ratios(df, metric, problems))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in prof.columns:
        ax.step(prof.index, prof[s], where="post", label=s)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"tau (ratio of {metric} to the best solver)")
    ax.set_ylabel("fraction of problems")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title or f"Performance profile, {n_p} problems (Dolan & More 2002)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    try:
        with atomic_path(path) as tmp:  # the format comes from the suffix, which tmp keeps
            fig.savefig(tmp, dpi=120)
    finally:
        plt.close(fig)
    return path


def format_comparison(table: pd.DataFrame) -> str:
    """Plain-text rendering of :func:`comparison_table`."""
    def num(fmt):
        return lambda v: "" if pd.isna(v) else fmt.format(v)
    with pd.option_context("display.max_rows", None, "display.width", 220):
        return table.to_string(index=False, formatters={
            "objective": num("{:.10g}"), "reference": num("{:.10g}"),
            "max_rel_error": num("{:.1e}"), "gap": num("{:.1e}"), "iterations": num("{:.0f}"),
            "compile_time": num("{:.3f}"), "setup_time": num("{:.3f}"),
            "solve_time": num("{:.3f}"), "time": num("{:.3f}")})
