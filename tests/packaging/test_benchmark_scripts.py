"""The benchmark scripts still fit the package: each imports (its code runs under a main guard),
and the shared harness measures a call's time and peak memory.

They are not run here (minutes each, ``make bench``); an API they call that was renamed or
removed shows up at import or in the harness first.
"""

from __future__ import annotations

import importlib
import queue
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py"))


@pytest.fixture(autouse=True)
def benchmarks_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as when a script is run: its folder first


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_benchmark_script_imports(name):
    module = importlib.import_module(name)
    assert module.__doc__, f"benchmarks/{name}.py has no docstring saying what it measures"
    sys.modules.pop(name, None)


def test_the_harness_measures_a_call():
    harness = importlib.import_module("_harness")
    probe = harness.Probe(queue.Queue())
    with probe.measure() as m:
        sum(range(10_000))
    assert m.time_s >= 0 and m.peak_rss_mib > 0 and m.rss_before_mib > 0 and m.peak_source


def _thread_settings(probe):
    """A target for the harness: the numerical libraries' thread settings in its process."""
    import os
    with probe.measure():
        pass
    return {"env": {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}}


@pytest.mark.parametrize("threads, expected", [(1, "1"), (None, None)])
def test_the_harness_sets_the_threads_of_its_process(monkeypatch, threads, expected):
    """One thread by default; ``threads=None`` leaves the libraries their own defaults (no
    setting in the measuring process), as a user runs them."""
    harness = importlib.import_module("_harness")
    for name in harness.THREAD_ENV:  # (restored after the test: run() sets the parent's)
        monkeypatch.setenv(name, "3")
    row = harness.run(_thread_settings, timeout=60.0, threads=threads)
    assert row.get("status") != "failed", row
    assert row["env"] == {"OPENBLAS_NUM_THREADS": expected, "OMP_NUM_THREADS": expected}
