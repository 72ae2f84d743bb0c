"""Figures of a report (issue 27): a distinct style for every series, a profile title that says
what was dropped and why, no empty part of the image, and the suboptimality against time."""

import numpy as np
import pandas as pd
import pytest

from infpush_cvx.benchmarking import reports
from infpush_cvx.benchmarking.curves import (SUBOPTIMALITY_FLOOR, curves_path_of,
                                             is_curves_path, load_curves,
                                             relative_suboptimality, results_path_of,
                                             stored_values, suboptimality_figure)

pytest.importorskip("matplotlib")


def ink_by_cell(png, n=3):
    """Fraction of non-white pixels in each cell of an n x n grid over the image."""
    from matplotlib.image import imread
    ink = (imread(png)[..., :3] < 0.9).any(axis=2)
    h, w = ink.shape
    return np.array([[ink[i * h // n:(i + 1) * h // n, j * w // n:(j + 1) * w // n].mean()
                      for j in range(n)] for i in range(n)])


# -- styles ---------------------------------------------------------------------------------------

def test_twenty_series_have_twenty_colours():
    styles = reports.series_styles(20)
    assert len({s["color"] for s in styles}) == 20
    assert len({(s["color"], s["marker"]) for s in reports.series_styles(140)}) == 140


def test_a_solver_keeps_its_style_and_no_two_share_a_colour(result_row):
    # the issue: in the 92-problem profile CLARABEL and ranksvm.working_set were both blue
    # (series 0 and 10 of a ten-colour cycle)
    names = ["CLARABEL", "ECOS", "HIGHS", "SCS", "infinite_push.admm", "infinite_push.fista",
             "infinite_push.paper", "infinite_push.working_set", "ranksvm.fista",
             "ranksvm.paper", "ranksvm.smoothing_newton", "ranksvm.working_set"]
    df = pd.DataFrame([result_row("p", s, 1.0) for s in names])
    styles = reports.solver_styles(df)
    assert styles["CLARABEL"]["color"] != styles["ranksvm.working_set"]["color"]
    assert len({s["color"] for s in styles.values()}) == len(names)
    fig = reports.performance_profile_figure(df)
    drawn = {line.get_label().split()[0]: line for line in fig.axes[0].get_lines()}
    assert drawn["ranksvm.working_set"].get_color() == styles["ranksvm.working_set"]["color"]


# -- the profile's title and layout ----------------------------------------------------------------

def test_profile_title_says_what_was_dropped_and_why(two_problems):
    df = two_problems
    kept, dropped = reports.profile_problems(df)
    assert kept == ["p1"] and dropped == {"p2": "not attempted by HIGHS"}
    title = " ".join(reports.performance_profile_figure(df).axes[0].get_title().split())
    assert "1 problems" not in title
    assert title == ("Performance profile of time: 1 of 2 problems (those every solver "
                     "attempted); 1 dropped: not attempted by HIGHS")
    all_title = reports.profile_title(df, problems="all")
    assert all_title.endswith("2 problems, each solver on those it attempted")
    full = df[df["solver"] != "HIGHS"]
    assert reports.profile_title(full).endswith("2 problems, every one attempted by every solver")


def test_profile_title_names_a_solver_without_a_value_of_the_metric(two_problems):
    df = two_problems
    df["iterations"] = pd.array([10, 20, 30, 10, pd.NA], dtype="Int64")  # ECOS on p2: none
    kept, dropped = reports.profile_problems(df, "iterations")
    assert kept == ["p1"]
    assert dropped == {"p2": "not attempted by HIGHS; no iterations from ECOS"}
    assert reports.profile_title(df, "iterations").endswith(
        "1 dropped: not attempted by HIGHS; no iterations from ECOS")


def test_profile_title_counts_many_dropped_problems_by_solver(result_row):
    rows = [result_row(f"p{k}", s, 1.0) for k in range(6) for s in ("A", "B")]
    rows += [result_row(f"p{k}", "C", 1.0) for k in range(2)] + [result_row("p5", "D", 1.0)]
    assert reports.dropped_reasons(pd.DataFrame(rows)) == "not attempted by D (5), C (4)"
    title = reports.profile_title(pd.DataFrame(rows))
    assert title.endswith("0 of 6 problems (those every solver attempted); 6 dropped: not "
                          "attempted by D (5), C (4)")


def test_profile_leaves_no_empty_part_of_the_image(tmp_path, two_problems):
    # the issue: with two problems the legend stood beside the axes, and the space under the
    # short legend (a third of the image) was blank
    png = reports.plot_performance_profile(two_problems, tmp_path / "profile.png")
    cells = ink_by_cell(png)
    assert cells.min() > 0.005, cells.round(3)


# -- curves ----------------------------------------------------------------------------------------

def test_relative_suboptimality_by_hand(run_results):
    np.testing.assert_allclose(relative_suboptimality([2.2, 2.0, 1.8], 2.0), [0.1, 0.0, -0.1])
    np.testing.assert_allclose(relative_suboptimality([-1.5], -2.0), [0.25])  # over |reference|
    assert relative_suboptimality([1e-13], 0.0)[0] == pytest.approx(0.1)  # denominator >= 1e-12
    assert stored_values(run_results).to_dict() == {"p1": 2.0, "p2": 5.0}


def test_suboptimality_figure_draws_each_record_floored_on_log_axes(run_curves,
                                                                    run_results):
    fig = suboptimality_figure(run_curves, run_results, "p1")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    label = ax.get_ylabel()
    assert "(objective − stored value) / |stored value|" in label
    assert f"below {SUBOPTIMALITY_FLOOR:g} or negative: drawn at {SUBOPTIMALITY_FLOOR:g}" in label
    fast = [line for line in ax.get_lines() if line.get_color() ==
            reports.solver_styles(run_results)["fast"]["color"]]
    assert len(fast) == 2  # one line per repeat
    np.testing.assert_allclose(fast[0].get_xdata(), [0.01, 0.02, 0.03, 0.04, 0.05])
    np.testing.assert_allclose(fast[0].get_ydata(), [1.0, 0.1, 1e-4, SUBOPTIMALITY_FLOOR,
                                                    SUBOPTIMALITY_FLOOR])
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["fast", "slow", "CLARABEL (final answer)", "SCS (final answer)"]
    points = {line.get_label(): line for line in ax.get_lines()}
    clarabel, scs = points["CLARABEL (final answer)"], points["SCS (final answer)"]
    np.testing.assert_allclose(clarabel.get_xdata(), [0.05])
    np.testing.assert_allclose(clarabel.get_ydata(), [1e-8])
    assert scs.get_markerfacecolor() == "none"  # hollow: does not agree
    assert "Every repeat is drawn" in " ".join(t.get_text() for t in fig.texts)
    assert "p1" in ax.get_title()


def test_suboptimality_needs_a_stored_value(run_curves, run_results):
    results = run_results.copy()
    results.loc[results["problem"] == "p1", "reference"] = np.nan
    with pytest.raises(ValueError, match="'p1' has no stored value"):
        suboptimality_figure(run_curves, results, "p1")


def test_curves_files_beside_their_run(tmp_path, run_curves, run_results):
    run = tmp_path / "20260101T000000Z_abcdef"
    results, curves = run.with_suffix(".csv"), tmp_path / (run.name + "_curves.csv")
    run_results.to_csv(results, index=False)
    run_curves.to_csv(curves, index=False)
    assert is_curves_path(curves) and not is_curves_path(results)
    assert curves_path_of(results) == curves and results_path_of(curves) == results
    assert curves_path_of(tmp_path / "other.csv") is None
    back = load_curves(curves)
    assert back["objective"].dtype == float and len(back) == len(run_curves)
    with pytest.raises(ValueError, match=r"is not a curves table: no column\(s\) \['stop_val'"):
        load_curves(results)
    with pytest.raises(ValueError, match="does not exist"):
        load_curves(tmp_path / "nope_curves.csv")
    with pytest.raises(ValueError, match="its results table .*nope.csv"):
        results_path_of(tmp_path / "nope_curves.csv")


def test_legend_entries_of_long_solver_names_do_not_overlap(result_row):
    # 22 series, names as long as the project's: three columns of them overlapped
    names = [f"infinite_push.method_{k:02d}_smoothing" for k in range(22)]
    df = pd.DataFrame([result_row(p, s, 1.0 + k) for p in ("p1", "p2")
                       for k, s in enumerate(names)])
    fig = reports.performance_profile_figure(df)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays the legend out
    renderer = canvas.get_renderer()
    [legend] = fig.legends
    boxes = [t.get_window_extent(renderer) for t in legend.get_texts()]
    assert len(boxes) == 22
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    width = fig.get_size_inches()[0] * fig.dpi
    assert all(0 <= box.x0 and box.x1 <= width for box in boxes)
