"""Figures that carry their claim: no backend changes, distinguishable series, labelled axes,
"not attempted" drawn apart from "failed", and the profile of every numeric metric."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")  # the plots extra: without it these tests skip

from infpush_cvx import cli
from infpush_cvx.benchmarking.reports import (performance_profile_figure, profile_counts,
                                              series_styles)

PACKAGE = Path(__file__).resolve().parents[2] / "infpush_cvx"
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
BACKEND_CHANGE = re.compile(r"matplotlib\.use\(|\.use\(\s*['\"]agg|switch_backend", re.I)


def _table(n_solvers=12, n_problems=6):
    """A results table: solvers 0-3 run every problem (S01 fails p0), the others the first half
    only; iterations is the nullable Int64 column of real tables, with one missing count."""
    rows = []
    for s in range(n_solvers):
        for p in range(n_problems if s < 4 else n_problems // 2):
            rows.append({"problem": f"p{p}", "kind": "cvxpy" if s < 4 else "native",
                         "solver": f"S{s:02d}", "repeat": 0, "status": "optimal",
                         "agrees": not (s == 1 and p == 0), "objective": 1.0, "reference": 1.0,
                         "rel_error": 0.0, "gap": np.nan, "iterations": 5 + s + p,
                         "compile_time": 0.0, "setup_time": 0.0, "solve_time": 0.1,
                         "time": (1 + s) * (1 + p) / 10})
    df = pd.DataFrame(rows)
    df["iterations"] = df["iterations"].astype("Int64")
    df.loc[df.index[-1], "iterations"] = pd.NA
    return df


def test_package_never_selects_a_backend():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{k}"
                 for path in sorted(PACKAGE.rglob("*.py"))
                 for k, line in enumerate(path.read_text().splitlines(), 1)
                 if BACKEND_CHANGE.search(line)]
    assert offenders == []


def test_notebooks_never_select_a_backend():
    offenders = [p.name for p in sorted(NOTEBOOKS.glob("*.ipynb"))
                 if BACKEND_CHANGE.search(p.read_text())]
    assert offenders == []


def test_profile_leaves_the_backend_and_pyplot_alone(tmp_path):
    # a fresh interpreter with a backend of the caller's choice: saving a profile keeps it and
    # never imports pyplot (so it cannot touch a notebook's inline figures)
    code = (
        "import sys, matplotlib\n"
        "from infpush_cvx.benchmarking.reports import plot_performance_profile\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from test_figures import _table\n"
        "plot_performance_profile(_table(), sys.argv[1], problems='all')\n"
        "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.png"),
                          str(Path(__file__).parent)],
                         env=dict(os.environ, MPLBACKEND="svg"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["svg", "False"]
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_series_styles_are_distinct_beyond_ten():
    pairs = [(s["color"], s["marker"]) for s in series_styles(70)]
    assert len(set(pairs)) == 70


def _lines(fig):
    ax = fig.axes[0]
    return {line.get_label(): line for line in ax.get_lines()}, ax


def test_profile_with_many_series_is_readable():
    df = _table()
    fig = performance_profile_figure(df, problems="all")
    lines, ax = _lines(fig)
    assert len(lines) == 12
    styles = {(line.get_color(), line.get_marker()) for line in lines.values()}
    assert len(styles) == 12, "two series share a colour and a marker"
    assert ax.get_xlabel() and ax.get_ylabel() and "log scale" in ax.get_xlabel()
    assert ax.get_xscale() == "log"
    assert "6 problems" in ax.get_title()
    [legend] = fig.legends  # below the axes, so no part of the image is left empty
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 8


def test_not_attempted_is_drawn_apart_from_failed():
    df = _table()
    fig = performance_profile_figure(df, problems="all")
    lines, _ = _lines(fig)
    by_solver = {label.split()[0]: (label, line) for label, line in lines.items()}
    # S01 attempted everything and failed once: solid, "5/6"
    label, line = by_solver["S01"]
    assert line.get_linestyle() == "-" and label.endswith("5/6")
    # S07 attempted 3 of 6 and solved them: dashed, "3/3 of 6", and its curve reaches 1
    label, line = by_solver["S07"]
    assert line.get_linestyle() == "--" and label.endswith("3/3 of 6")
    assert line.get_ydata()[-1] == 1.0
    assert any("not counted as failures" in " ".join(t.get_text().split()) for t in fig.texts)
    counts = profile_counts(df, problems="all")
    assert counts.loc["S01", "failed"] == 1 and counts.loc["S01", "not_attempted"] == 0
    assert counts.loc["S07", "failed"] == 0 and counts.loc["S07", "not_attempted"] == 3


def test_common_profile_keeps_dolan_more_setting():
    df = _table()
    fig = performance_profile_figure(df)  # problems every solver attempted: p0-p2
    lines, ax = _lines(fig)
    title = " ".join(ax.get_title().split())
    assert "3 of 6 problems (those every solver attempted); 3 dropped: not attempted by S04 (3)" \
        in title
    assert all(line.get_linestyle() == "-" for line in lines.values())
    assert not any("Dashed" in t.get_text() for t in fig.texts)


@pytest.mark.parametrize("metric", ["iterations", "time", "solve_time"])
def test_report_profiles_every_numeric_metric(metric, tmp_path, capsys):
    table = tmp_path / "bench.parquet"
    _table().to_parquet(table)  # keeps iterations as Int64 with <NA>
    out = tmp_path / "report"
    assert cli.main(["report", str(table), "--metric", metric, "--out", str(out),
                     "--problems-set", "all"]) == 0
    png = out / f"profile_{metric}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["report", str(table), "--metric", metric, "--out", str(out)]) == 0
