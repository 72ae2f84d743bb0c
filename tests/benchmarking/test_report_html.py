"""The HTML report (issue 27): ``report`` takes a run's results and curves (a curves table named
on the command line stands for its run) and writes one self-contained page; ``bench`` writes it
by default; without matplotlib the page keeps its tables and says figures are off. The page is
opened in headless Chromium when it is installed."""

import base64
import html
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking.html_report import FIGURES_OFF, HTML_NAME, write_report

RUN = "20260101T000000Z_abcdef"
LP = "rank2plan_pairs_dense_compact"     # HiGHS and rank2plan.ccg solve it in milliseconds


def metadata():
    return {"run_id": RUN, "date": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:01:00Z",
            "duration_s": 60.0, "command": ["infpush-cvx", "bench", "--curves"],
            "code": {"package": "infpush_cvx", "version": "0.1.0", "git_commit": "abc1234",
                     "git_dirty": False},
            "platform": {"cpu_model": "Test CPU 3000", "cpu_count": 2, "cpu_count_usable": 2,
                         "ram_bytes": 8 * 2 ** 30, "os": "Linux-test", "python": "3.11.7",
                         "python_implementation": "CPython",
                         "threadpools": [{"internal_api": "openblas", "version": "0.3.30",
                                          "num_threads": 1}]},
            "versions": {"version_cvxpy": "1.9.3", "version_numpy": "2.4.6"},
            "execution": {"executor": "serial", "n_workers": 1,
                          "worker_env": {"OMP_NUM_THREADS": "1"}}}


@pytest.fixture
def saved_run(tmp_path, run_results, run_curves):
    """A run saved as bench saves it: <run>.csv, <run>_curves.csv and <run>.json."""
    stem = tmp_path / RUN
    run_results.assign(version_cvxpy="1.9.3").to_csv(stem.with_suffix(".csv"), index=False)
    run_curves.to_csv(tmp_path / f"{RUN}_curves.csv", index=False)
    stem.with_suffix(".json").write_text(json.dumps(metadata()))
    return stem


def images(page):
    return re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([^"]+)"', page)


def test_report_takes_the_curves_of_a_run(saved_run, capsys):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    # the issue: `report <run>_curves.csv` said "is not a results table: no column(s) ['kind',
    # 'status', ...]"
    curves = saved_run.with_name(RUN + "_curves.csv")
    assert cli.main(["report", str(curves)]) == 0
    folder = saved_run.with_name(RUN + "_report")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["comparison.csv", "profile_time.png", HTML_NAME, "suboptimality_p1.png"]
    page = (folder / HTML_NAME).read_text()
    shown = dict(images(page))
    assert set(shown) == {"Performance profile (time)", "Suboptimality against time: p1"}
    assert base64.b64decode(shown["Suboptimality against time: p1"]) == \
        (folder / "suboptimality_p1.png").read_bytes()
    out = capsys.readouterr().out
    assert f"written: {folder / HTML_NAME}" in out


def test_report_of_a_table_uses_the_curves_beside_it_or_those_named(saved_run, tmp_path,
                                                                    run_curves):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    assert cli.main(["report", str(saved_run.with_suffix(".csv")), "--out",
                     str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "suboptimality_p1.png").is_file()
    other = tmp_path / "elsewhere.csv"
    curves = run_curves.copy()
    curves["problem"] = "p2"
    curves["objective"] += 3.0  # p2's stored value is 5
    curves.to_csv(other, index=False)
    assert cli.main(["report", str(saved_run.with_suffix(".csv")), "--curves", str(other),
                     "--out", str(tmp_path / "b")]) == 0
    assert sorted(p.name for p in (tmp_path / "b").glob("sub*")) == ["suboptimality_p2.png"]


def test_report_of_curves_without_their_run_names_the_missing_table(tmp_path, capsys,
                                                                     run_curves):
    curves = tmp_path / "x_curves.csv"
    run_curves.to_csv(curves, index=False)
    assert cli.main(["report", str(curves)]) == 2
    err = capsys.readouterr().err
    assert "its results table" in err and "x.csv" in err and "\n" not in err.strip()


def test_page_is_self_contained_with_summary_table_and_provenance(saved_run):
    assert cli.main(["report", str(saved_run.with_suffix(".csv"))]) == 0
    page = saved_run.with_name(RUN + "_report").joinpath(HTML_NAME).read_text()
    # nothing fetched from elsewhere: every source is embedded
    assert not re.search(r'(src|href)\s*=\s*(?!["\']?data:)', page)
    assert "<script" not in page and "@import" not in page and "url(" not in page
    for _, data in images(page):
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    # summary: counts and what did not agree
    assert "5 solves of 2 problems by 4 solvers" in page
    bad = page[page.index("Solves that did not agree"):page.index("Per solver")]
    assert "SCS" in bad and "slow" in bad and "CLARABEL" not in bad
    # the comparison table: a row per (problem, solver), disagreements marked
    comparison = page[page.index("<h2>Comparison"):page.index("<h2>Provenance")]
    assert comparison.count("<tr") == 1 + 5 and comparison.count("<tr class=bad>") == 2
    # provenance: date, command, code, machine, threads, versions
    provenance = page[page.index("<h2>Provenance"):]
    for text in ("2026-01-01T00:00:00Z", "infpush-cvx bench --curves", "commit abc1234",
                 "Test CPU 3000, 2 logical cores", "8.0 GiB RAM", "openblas 0.3.30: 1",
                 "serial executor", "cvxpy", "1.9.3", "report written"):
        assert text in provenance, text


def test_page_without_metadata_gives_the_tables_record(tmp_path, run_results):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    done = write_report(run_results.assign(version_numpy="2.4.6", reference_note=""),
                        tmp_path / "r")
    assert done.errors == [] and (tmp_path / "r" / HTML_NAME) in done.written
    page = (tmp_path / "r" / HTML_NAME).read_text()
    assert "reference_note" not in page  # a column of empty text is left out
    assert "no run metadata (.json) was found" in page and "2.4.6" in page
    assert "No convergence curves: run" in page


def test_page_without_matplotlib_keeps_the_tables_and_says_figures_are_off(saved_run,
                                                                            monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli.main(["report", str(saved_run.with_suffix(".csv"))]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().err
    folder = saved_run.with_name(RUN + "_report")
    assert sorted(p.name for p in folder.iterdir()) == ["comparison.csv", HTML_NAME]
    page = (folder / HTML_NAME).read_text()
    assert html.escape(FIGURES_OFF) in page and "<img" not in page
    assert page.count("<table>") >= 3 and "Test CPU 3000" in page


def test_profile_falls_back_to_every_problem_and_says_why(tmp_path, two_problems):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    # no problem every solver attempted (HIGHS on p1 only, SCS on p2 only): every solver on
    # its own problems, and the page says why
    df = two_problems[two_problems["solver"] != "ECOS"]
    df = pd.concat([df, df.iloc[[-1]].assign(solver="SCS")])
    done = write_report(df, tmp_path)
    assert done.messages == ["no problem was attempted by every solver: the profile shows "
                             "every solver on the problems it attempted"]
    assert [alt for alt, _ in images((tmp_path / HTML_NAME).read_text())] == [
        "Performance profile (time)"]


def test_bench_writes_the_report_with_its_curves(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    out = tmp_path / "b"
    assert cli.main(["bench", "--problems", LP, "--cvxpy", "HIGHS", "--native", "rank2plan.ccg",
                     "--executor", "serial", "--curves", "--no-progress", "--out", str(out)]) == 0
    [folder] = out.glob("*_report")
    page = (folder / HTML_NAME).read_text()
    assert {alt for alt, _ in images(page)} == {"Performance profile (time)",
                                                f"Suboptimality against time: {LP}"}
    assert "infpush-cvx bench --problems" in page and "2 solves of 1 problem by 2 solvers" in page
    assert str(folder / HTML_NAME) in capsys.readouterr().out


# -- the page in a browser -----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(tmp_path, *args):
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args],
        capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_page_renders_in_a_headless_browser(saved_run, tmp_path):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    from matplotlib.image import imread
    assert cli.main(["report", str(saved_run.with_suffix(".csv"))]) == 0
    page = saved_run.with_name(RUN + "_report") / HTML_NAME
    shot = tmp_path / "shot.png"
    proc = chromium(tmp_path, f"--screenshot={shot}", "--dump-dom", "--window-size=1200,2000",
                    page.as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    rgb = (pixels * 255).round().astype(np.int32)
    colours = np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2])
    assert len(colours) > 100, "the render is (nearly) one colour"
    assert (pixels < 0.9).any(axis=2).mean() > 0.02, "the render is (nearly) blank"
    # the figures were drawn, not broken-image icons: the first solver's colour is on screen
    first = np.array([0x1f, 0x77, 0xb4]) / 255
    assert (np.abs(pixels - first).max(axis=2) < 0.06).sum() > 200
    dom = proc.stdout  # the page as the browser built it
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', dom)) == 2
    assert dom.count("<table>") >= 4 and "Test CPU 3000" in dom
