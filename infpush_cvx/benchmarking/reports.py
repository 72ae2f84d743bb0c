"""Views of a results table: per-problem comparison and performance profiles.

Performance profiles (Dolan & Moré, "Benchmarking optimization software with performance
profiles", Math. Programming 91, 2002): for problem p and solver s let ``t_ps`` be the cost
(median of ``metric`` over repeats) when the solve succeeded and agrees with the stored value,
and infinity otherwise (Dolan and Moré's ``r_M``: a failure stays in the count); with the ratio
``r_ps = t_ps / min_s t_ps`` the profile of solver s is

    rho_s(tau) = |{p in A_s : r_ps <= tau}| / |A_s|,

the fraction of the problems s attempted (``A_s``) that it solved within a factor tau of the
best solver. Two choices of problems:

- ``problems="common"``: only the problems every solver attempted, so ``A_s`` is the same set
  for every solver: Dolan and Moré's setting exactly.
- ``problems="all"``: every problem of the table. A results table holds solvers that apply to
  some problems only (HiGHS runs the LPs, each project method its own problem class). A problem
  outside a solver's scope is *not attempted*, which is not a failure: it is left out of that
  solver's denominator (its ratio is NaN), and ``min_s`` runs over the solvers that attempted
  p. Each curve is then the profile of s on its own problems; curves with different ``|A_s|``
  answer different questions, so the plots give every solver's attempted count (and draw the
  solvers that did not attempt everything with dashed lines).

A solve that agrees but has no value of ``metric`` (a solver that reports no iteration count)
gives nothing to compare; it is treated as not attempted for that metric. Costs are floored at
the smallest positive cost of the table, since the ratios need positive costs (a count of 0
iterations ties with the smallest count measured).

A profile's title (:func:`profile_title`) names the problems it covers; with
``problems="common"`` it says how many problems of the table were dropped and why: the solvers
that did not attempt them, or gave no value of the metric (:func:`dropped_reasons`).

Figures need matplotlib (the ``plots`` extra); :func:`matplotlib_available` says whether it is
installed, so a caller can leave the figure out and say so. Figures are built on
:class:`matplotlib.figure.Figure` directly, never through ``matplotlib.use`` or pyplot's global
state: the library does not select or change the caller's backend, so a notebook's inline
figures keep working.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import check_choice
from .._plots import COLOURS, LIGHT_COLOURS, MARKERS, matplotlib_available
from ..files import atomic_path
from .outcomes import _missing


def series_styles(n: int) -> list[dict]:
    """``n`` distinct styles (``color``, ``marker``) for line plots: series k takes colour
    ``k % 20`` of ``COLOURS + LIGHT_COLOURS`` (the "tab20" colours, dark ones first) and marker
    ``k % 7``, so the first 20 series differ in colour and no two of the first 140 share both."""
    palette = COLOURS + LIGHT_COLOURS
    return [{"color": palette[k % len(palette)], "marker": MARKERS[k % len(MARKERS)]}
            for k in range(n)]


def solver_styles(df: pd.DataFrame) -> dict:
    """``{solver: style}`` for every solver of a results table (sorted by name): the style a
    solver has in every figure of a report (:func:`series_styles`)."""
    solvers = sorted(map(str, df["solver"].dropna().unique()))
    return dict(zip(solvers, series_styles(len(solvers))))


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


def _metric_values(df: pd.DataFrame, metric: str) -> pd.Series:
    """``df[metric]`` as float64; a missing value (``pd.NA`` of the nullable integer column
    ``iterations``, which numpy's ufuncs refuse) becomes NaN."""
    if metric not in df.columns:
        raise ValueError(f"metric {metric!r} is not a column of the results table")
    try:
        return pd.to_numeric(df[metric]).astype("float64")
    except (TypeError, ValueError):
        raise ValueError(f"metric {metric!r} is not a numeric column of the results table"
                         ) from None


def _by_problem_and_solver(df: pd.DataFrame, values: pd.Series, aggfunc) -> pd.DataFrame:
    """Problems x solvers, ``aggfunc`` of ``values`` (a column of ``df``) over the repeats."""
    return values.groupby([df["problem"], df["solver"]]).agg(aggfunc).unstack()


def attempted_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Problems x solvers, True where the table holds a run of that solver on that problem."""
    return pd.crosstab(df["problem"], df["solver"]) > 0


def time_matrix(df: pd.DataFrame, metric: str = "time") -> pd.DataFrame:
    """Problems x solvers, the median ``metric`` (as float) of successful, agreeing runs (NaN
    otherwise: failed, disagreeing, not attempted, or no value of the metric)."""
    values = _metric_values(df, metric).where(df["agrees"].astype(bool).to_numpy())
    mat = _by_problem_and_solver(df, values, "median")
    attempted = attempted_matrix(df)
    return mat.reindex(index=attempted.index, columns=attempted.columns).astype("float64")


def complete_solvers(df: pd.DataFrame) -> list[str]:
    """Solvers that attempted every problem of the table (the general-purpose ones)."""
    attempted = attempted_matrix(df)
    return [s for s in attempted.columns if attempted[s].all()]


def _counted_and_cost(df: pd.DataFrame, metric: str):
    """(counted, cost): counted[p, s] when s attempted p and the outcome can be compared (a
    failure, or a success with a value of the metric); cost: the floored median cost."""
    cost = time_matrix(df, metric)
    agreed = _by_problem_and_solver(df, df["agrees"].astype(float), "max").reindex_like(cost)
    counted = attempted_matrix(df) & ~((agreed > 0) & cost.isna())
    values = cost.to_numpy()
    positive = values[values > 0]  # NaN compares False
    floor = float(positive.min()) if positive.size else 1.0
    return counted, cost.clip(lower=floor)


def performance_ratios(df: pd.DataFrame, metric: str = "time", problems: str = "common"
                       ) -> pd.DataFrame:
    """``r_ps`` (problems x solvers): inf where a solver failed or disagreed, NaN where it did
    not attempt the problem (possible with ``problems="all"`` only).

    problems="common": only problems every solver attempted (Dolan and Moré's setting;
    ValueError if there is none). problems="all": every problem; the best cost is taken over
    the solvers that attempted it.
    """
    check_choice(problems, "problems", ("common", "all"))
    counted, cost = _counted_and_cost(df, metric)
    if problems == "common":
        keep = counted.all(axis=1)
        if not keep.any():
            raise ValueError("no problem was attempted by every solver; select solvers or "
                             "problems, or pass problems='all'")
        counted, cost = counted[keep], cost[keep]
    cost = cost.mask(counted & cost.isna(), np.inf).where(counted)  # failed: inf; not tried: NaN
    best = cost.min(axis=1, skipna=True)
    ratios = cost.div(best.where(np.isfinite(best)), axis=0)  # NaN rows: nobody solved p
    return ratios.mask(counted & ratios.isna(), np.inf).where(counted)


def performance_profile(df: pd.DataFrame, metric: str = "time", problems: str = "common",
                        taus=None) -> pd.DataFrame:
    """``rho_s(tau)`` on a grid of tau (index) for every solver (columns): the fraction of the
    problems s attempted that it solved within tau times the best cost (NaN for a solver with
    no comparable problem). The default grid: 1, every finite ratio, and 200 points spaced
    geometrically up to 1.05 times the largest finite ratio (at least 2)."""
    ratios = performance_ratios(df, metric, problems)
    if taus is None:
        finite = ratios.to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        top = max(float(finite.max()) if finite.size else 1.0, 2.0) * 1.05
        taus = np.unique(np.concatenate([[1.0], np.sort(finite), np.geomspace(1.0, top, 200)]))
    taus = np.asarray(taus, dtype=float)
    solved = (ratios.to_numpy(dtype=float)[:, :, None] <= taus).sum(axis=0)  # NaN, inf: never
    with np.errstate(invalid="ignore"):  # a solver that attempted nothing: 0 / 0, NaN
        prof = solved / ratios.notna().sum().to_numpy()[:, None]
    return pd.DataFrame(prof.T, index=pd.Index(taus, name="tau"), columns=list(ratios.columns))


def profile_counts(df: pd.DataFrame, metric: str = "time", problems: str = "common"
                   ) -> pd.DataFrame:
    """Per solver: ``problems`` (in the profile), ``attempted``, ``solved`` (succeeded and
    agree), ``failed`` (attempted, not solved) and ``not_attempted``."""
    ratios = performance_ratios(df, metric, problems)
    attempted = ratios.notna().sum()
    solved = np.isfinite(ratios).sum()
    return pd.DataFrame({"problems": len(ratios), "attempted": attempted, "solved": solved,
                         "failed": attempted - solved, "not_attempted": len(ratios) - attempted}
                        ).rename_axis("solver")


def _why_dropped(df: pd.DataFrame, metric: str) -> dict:
    """``{problem: (missing, no_value)}`` for the problems some solver did not attempt
    (``missing``) or solved without a value of ``metric`` (``no_value``): the problems the rule
    of :func:`performance_ratios` leaves out of the ``"common"`` profile."""
    counted, _ = _counted_and_cost(df, metric)
    attempted = attempted_matrix(df)
    return {p: ([s for s in counted.columns if not attempted.at[p, s]],
                [s for s in counted.columns if attempted.at[p, s] and not counted.at[p, s]])
            for p in counted.index if not counted.loc[p].all()}


def profile_problems(df: pd.DataFrame, metric: str = "time", problems: str = "common"
                     ) -> tuple[list, dict]:
    """``(kept, dropped)``: the problems of the profile, and ``{problem: reason}`` for the
    problems of the table it leaves out. ``problems="all"`` leaves none out; ``"common"`` leaves
    out every problem that some solver did not attempt (reason ``"not attempted by S, ..."``)
    or solved without a value of ``metric`` (``"no <metric> from S, ..."``): the rule of
    :func:`performance_ratios`."""
    check_choice(problems, "problems", ("common", "all"))
    why = _why_dropped(df, metric)
    everything = list(attempted_matrix(df).index)
    if problems == "all":
        return everything, {}
    return [p for p in everything if p not in why], {
        p: _reasons(missing, no_value, metric, ", ".join) for p, (missing, no_value) in why.items()}


def _reasons(missing: list, no_value: list, metric: str, names) -> str:
    """``"not attempted by <names(missing)>; no <metric> from <names(no_value)>"``, each part
    only when its list is not empty."""
    return "; ".join([f"not attempted by {names(missing)}"] * bool(missing)
                     + [f"no {metric} from {names(no_value)}"] * bool(no_value))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _most_often(names: list, limit: int = 3) -> str:
    """``"A (3), B (2) and 4 more"``: the names counted, most frequent first."""
    counts = pd.Series(names, dtype=object).value_counts(sort=True)
    shown = [f"{s} ({c})" if counts.iloc[0] > 1 else str(s)
             for s, c in counts.iloc[:limit].items()]
    more = len(counts) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def dropped_reasons(df: pd.DataFrame, metric: str = "time") -> str:
    """Why the profile of the problems every solver attempted leaves problems out, in one line:
    ``"not attempted by A (3), B (2); no <metric> from C"`` (the solvers, the most frequent
    first, with the number of problems when more than one was dropped); "" when none is."""
    why = _why_dropped(df, metric).values()
    return _reasons([s for missing, _ in why for s in missing],
                    [s for _, no_value in why for s in no_value], metric, _most_often)


def profile_title(df: pd.DataFrame, metric: str = "time", problems: str = "common") -> str:
    """The title of a profile: the metric, the problems it covers and, for ``"common"``, how
    many problems of the table were dropped and why (:func:`dropped_reasons`)."""
    kept, dropped = profile_problems(df, metric, problems)
    head = f"Performance profile of {metric}: "
    if problems == "all":
        return head + f"{plural(len(kept), 'problem')}, each solver on those it attempted"
    if not dropped:
        return head + f"{plural(len(kept), 'problem')}, every one attempted by every solver"
    return (head + f"{len(kept)} of {plural(len(kept) + len(dropped), 'problem')} (those every "
            f"solver attempted); {len(dropped)} dropped: {dropped_reasons(df, metric)}")


class _LegendBelow:
    """A figure of one axes with its legend and notes below it, sized to its contents so that
    no part of the image is left empty (the legend used to stand beside the axes, leaving the
    space under a short legend blank). Sizes in inches."""

    WIDTH, LEFT, RIGHT, AXES_HEIGHT = 8.0, 0.95, 0.25, 3.6
    MARGIN = 0.2  # the legend and the notes span the width but for this, each side
    LINE = 0.205  # one line of 8.5 pt text, with its spacing
    CHAR, HANDLE = 0.066, 0.55  # a character of 8.5 pt text; a legend handle and spacing

    def __init__(self, labels: list[str], title: str, notes: list[str]):
        import textwrap
        from matplotlib.figure import Figure
        n_entries = len(labels)
        # as many columns as the longest label allows (3 at most; 1 for a short legend)
        entry = self.HANDLE + self.CHAR * max(map(len, labels), default=1)
        fits = int((self.WIDTH - 2 * self.MARGIN) // entry)
        self.ncol = max(1, min(fits, 3 if n_entries > 3 else 1))
        self.title = "\n".join(textwrap.wrap(title, 88))
        self.notes = "\n".join(line for note in notes for line in textwrap.wrap(note, 125))
        rows = -(-max(n_entries, 1) // self.ncol)
        title_h = 0.24 * (self.title.count("\n") + 1) + 0.15
        xlabel_h = 0.42 + 0.2  # the tick labels and spacing, then one line of axis label
        self.legend_h = 0.3 + rows * self.LINE + 0.08
        self.notes_h = (self.notes.count("\n") + 1) * 0.16 + 0.08 if notes else 0.0
        height = title_h + self.AXES_HEIGHT + xlabel_h + self.legend_h + self.notes_h
        self.fig = Figure(figsize=(self.WIDTH, height))
        self.height = height
        self.ax = self.fig.add_axes((
            self.LEFT / self.WIDTH, (xlabel_h + self.legend_h + self.notes_h) / height,
            (self.WIDTH - self.LEFT - self.RIGHT) / self.WIDTH, self.AXES_HEIGHT / height))
        self.ax.set_title(self.title, fontsize=10.5)

    def finish(self, legend_title: str):
        """The legend (the axes' labelled artists, in order) and the notes; returns the
        figure."""
        x = self.MARGIN / self.WIDTH
        handles, labels = self.ax.get_legend_handles_labels()
        if handles:
            top = (self.legend_h + self.notes_h) / self.height
            self.fig.legend(handles, labels, loc="upper left", ncol=self.ncol, mode="expand",
                            bbox_to_anchor=(x, top, 1 - 2 * x, 0), title=legend_title,
                            fontsize=8.5, title_fontsize=9, frameon=False, alignment="left")
        if self.notes:
            self.fig.text(x + 0.005, (self.notes_h - 0.04) / self.height, self.notes,
                          fontsize=8, va="top", ha="left", color="0.25")
        return self.fig


def performance_profile_figure(df: pd.DataFrame, metric: str = "time",
                               problems: str = "common", title: str | None = None, *,
                               styles: dict | None = None, notes=()):
    """The performance profile as a :class:`matplotlib.figure.Figure` (not registered with
    pyplot: no backend is selected; show it with ``display(fig)`` in a notebook).

    Every solver gets its own (colour, marker) pair: ``styles`` (``{solver: style}``, default
    :func:`solver_styles` of ``df``, so a report gives a solver the same style in every figure).
    A solver that did not attempt every problem of the profile is drawn dashed, and its legend
    entry reads ``solved/attempted of N``; others read ``solved/N``. A failed or disagreeing
    solve keeps the curve below 1 (it counts as never solved); a problem not attempted is left
    out of that solver's fraction. The title (:func:`profile_title`) names the metric and the
    problems, and says how many were dropped and why; ``notes`` are added under the legend.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    counts = profile_counts(df, metric, problems)
    prof = performance_profile(df, metric, problems)
    styles = solver_styles(df) if styles is None else styles
    n_p = int(counts["problems"].iat[0])
    drawn = [s for s in prof.columns if counts.at[s, "attempted"] > 0]
    unmeasured = [s for s in prof.columns if counts.at[s, "attempted"] == 0]
    partial = counts["not_attempted"] > 0  # the solvers that attempted some problems only
    # solved/attempted of N for those, else solved/N
    labels = {s: f"{s}  {counts.at[s, 'solved']}/" + (
        f"{counts.at[s, 'attempted']} of {n_p}" if partial[s] else f"{n_p}") for s in drawn}
    notes = ["Solved: succeeded and agrees with the stored optimal value; a failed solve counts "
             "as never solved (the curve ends below 1).", *notes]
    if partial[drawn].any():
        notes.append("Dashed: the solver attempted only some problems; the others are left out "
                     "of its fraction (not counted as failures).")
    if unmeasured:
        notes.append(f"No value of {metric}, not drawn: {', '.join(unmeasured)}.")
    layout = _LegendBelow(list(labels.values()), title or profile_title(df, metric, problems),
                          notes)
    ax = layout.ax
    for k, s in enumerate(drawn):
        # markers at evenly spaced places along the curve, staggered so that curves lying on
        # top of each other still show every marker
        ax.step(prof.index, prof[s], where="post", label=labels[s], lw=1.6,
                ls="--" if partial[s] else "-", ms=5.5, markevery=((0.013 * k) % 0.09, 0.09),
                **styles.get(s, series_styles(1)[0]))
    top = float(prof.index.max())
    ax.set_xscale("log", base=10 if top > 2 ** 10 else 2)
    if top > 2 ** 10:
        ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlim=(1.0, top), ylim=(-0.02, 1.02),
           xlabel=f"τ = {metric} / best {metric} on the problem (ratio, log scale)",
           ylabel="fraction of its problems solved\nwithin τ × best")
    ax.grid(alpha=0.3, which="both")
    return layout.finish("solver  solved/attempted")


def save_figure(fig, path) -> Path:
    """Save ``fig`` atomically (a run killed while writing leaves the previous file), cropped
    to its contents; the format comes from the suffix. Returns the path."""
    path = Path(path)
    with atomic_path(path) as tmp:  # tmp keeps the suffix
        fig.savefig(tmp, dpi=110, bbox_inches="tight", pad_inches=0.12)
    return path


def plot_performance_profile(df: pd.DataFrame, path, metric: str = "time",
                             problems: str = "common", title: str | None = None, *,
                             styles: dict | None = None, notes=()):
    """Save :func:`performance_profile_figure` as a PNG atomically (:func:`save_figure`);
    returns the path. Uses no pyplot state and no backend selection. ValueError if
    ``problems="common"`` and no problem was attempted by every solver."""
    return save_figure(performance_profile_figure(df, metric, problems, title, styles=styles,
                                                  notes=notes), path)


#: How the reports print the columns of numbers (format specs; others are printed as text).
FORMATS = {"objective": ".10g", "reference": ".10g", "max_rel_error": ".1e", "rel_error": ".1e",
           "gap": ".1e", "iterations": ".0f", "compile_time": ".3f", "setup_time": ".3f",
           "solve_time": ".3f", "time": ".3f"}


def number_format(spec: str = ""):
    """A formatter: a value as ``format(value, spec)`` (as text when it is not a number), a
    missing value (None, NaN, pandas' NA) as ""."""
    def text(value) -> str:
        if _missing(value):
            return ""
        try:
            return format(value, spec)
        except (ValueError, TypeError):
            return str(value)
    return text


def format_comparison(table: pd.DataFrame) -> str:
    """Plain-text rendering of :func:`comparison_table` (``to_string`` shows every row and
    column whatever pandas' display options)."""
    return table.to_string(index=False, formatters={
        c: number_format(f) for c, f in FORMATS.items() if c in table.columns})
