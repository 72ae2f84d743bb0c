"""Every file the command line writes survives a kill in the middle of the write.

Each case runs the CLI in a subprocess whose low-level writer (``DataFrame.to_csv``,
``DataFrame.to_parquet``, ``numpy.savez_compressed``, ``Figure.savefig``) is wrapped to write the
first half of its output where the real writer would and then sleep; the test kills the
subprocess with SIGKILL during that sleep and checks that the file that was there before is
intact byte for byte (an atomic write leaves only a hidden temporary file beside it).
"""

import os
import signal
import subprocess
import sys
import time

from pathlib import Path

import pandas as pd
import pytest

import infpush_cvx

LP = "rank2plan_pairs_dense_compact"   # the quickest catalog problem for HiGHS
#: The subprocess imports this checkout's package, not one installed elsewhere (its working
#: folder is the test's temporary folder).
ENV = {**os.environ, "PYTHONPATH": str(Path(infpush_cvx.__file__).resolve().parents[1])}

DRIVER = r'''
import io, os, sys, time
from pathlib import Path

marker, writer, argv = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]


def hang_in_write(target, data):
    """Write the first half of ``data`` where the real writer would, then wait to be killed."""
    if isinstance(target, (str, os.PathLike)):
        target = open(target, "wb")
    if isinstance(target, io.TextIOBase):
        data = data.decode()
    target.write(data[: len(data) // 2])
    target.flush()
    marker.touch()
    time.sleep(120)
    raise SystemExit("the test did not kill this process")


if writer in ("to_csv", "to_parquet"):
    import pandas as pd
    real_csv, real_parquet = pd.DataFrame.to_csv, pd.DataFrame.to_parquet

    def to_csv(self, path_or_buf=None, *args, **kwargs):
        if path_or_buf is None:  # to a string: nothing is written
            return real_csv(self, None, *args, **kwargs)
        hang_in_write(path_or_buf, real_csv(self, None, *args, **kwargs).encode())

    def to_parquet(self, path=None, *args, **kwargs):
        buf = io.BytesIO()
        real_parquet(self, buf, *args, **kwargs)
        hang_in_write(path, buf.getvalue())

    if writer == "to_csv":
        pd.DataFrame.to_csv = to_csv
    else:
        pd.DataFrame.to_parquet = to_parquet
elif writer == "savez_compressed":
    import numpy as np
    real_savez = np.savez_compressed

    def savez_compressed(file, *args, **kwds):
        buf = io.BytesIO()
        real_savez(buf, *args, **kwds)
        hang_in_write(file, buf.getvalue())

    np.savez_compressed = savez_compressed
elif writer == "savefig":
    from matplotlib.figure import Figure
    real_savefig = Figure.savefig

    def savefig(self, fname, **kwargs):
        buf = io.BytesIO()
        real_savefig(self, buf, format="png", **kwargs)
        hang_in_write(fname, buf.getvalue())

    Figure.savefig = savefig
else:
    raise SystemExit(f"unknown writer {writer}")

if argv[0] == "experiments":
    # A stand-in for the 10 s experiment: this run is about the write of its table.
    import pandas as pd
    from infpush_cvx.evaluation.experiments import perceptron
    table = pd.DataFrame({"k": [50] * 2000, "prec": [0.5] * 2000})
    perceptron.spambase_stream = perceptron.generated_stream = lambda *a, **k: None
    perceptron.perceptron_experiment = lambda streams, **kwargs: table
    perceptron.summarise = lambda res: res.head()

from infpush_cvx import cli
sys.exit(cli.main(argv))
'''


def kill_during_write(tmp_path, writer, argv, timeout=90.0):
    """Run ``infpush-cvx argv`` with ``writer`` hanging half-way; SIGKILL it inside the write."""
    marker = tmp_path / "in-write.marker"
    log = tmp_path / "driver.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(marker), writer, *argv],
                                stdout=fh, stderr=subprocess.STDOUT, cwd=tmp_path, env=ENV)
        deadline = time.monotonic() + timeout
        try:
            while not marker.exists():
                if proc.poll() is not None:
                    pytest.fail(f"the CLI ended (code {proc.returncode}) before writing:\n"
                                + log.read_text())
                if time.monotonic() > deadline:
                    pytest.fail("the CLI did not reach the write in time:\n" + log.read_text())
                time.sleep(0.02)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    marker.unlink()
    log.unlink()


def previous_files(*paths):
    """Put recognisable previous content at ``paths``; returns ``{path: bytes}``."""
    before = {}
    for k, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"previous content {k} of {path.name}\n".encode() * 50)
        before[path] = path.read_bytes()
    return before


def assert_intact(before):
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path} was replaced by a partial write"


def test_check_out(tmp_path):
    out = tmp_path / "cmp.csv"
    before = previous_files(out)
    kill_during_write(tmp_path, "to_csv", ["check", "--problems", LP, "--cvxpy", "HIGHS",
                                           "--native", "--no-progress", "--out", str(out)])
    assert_intact(before)


@pytest.mark.parametrize("writer", ["to_csv", "to_parquet"])
def test_bench_out(writer, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "bench"
    # Both tables of the run stay the previous ones: a new CSV beside an old Parquet file
    # would be two different runs under one name.
    before = previous_files(out.with_suffix(".csv"), out.with_suffix(".parquet"))
    kill_during_write(tmp_path, writer, ["bench", "--problems", LP, "--cvxpy", "HIGHS",
                                         "--native", "--executor", "serial", "--no-progress",
                                         "--out", str(out)])
    assert_intact(before)


def test_generate_out(tmp_path):
    out = tmp_path / "instances"
    before = previous_files(out / "pairs_dense.npz")
    kill_during_write(tmp_path, "savez_compressed",
                      ["generate", "--instances", "pairs_dense", "--out", str(out)])
    assert_intact(before)


def _results_table(path):
    rows = [{"problem": p, "kind": "cvxpy", "solver": s, "repeat": 0, "status": "optimal",
             "agrees": True, "objective": 1.0, "reference": 1.0, "rel_error": 0.0, "gap": None,
             "iterations": 10, "compile_time": 0.01, "setup_time": 0.0, "solve_time": 0.1 + i,
             "time": 0.2 + i} for p in ("p1", "p2") for i, s in enumerate(("A", "B"))]
    pd.DataFrame(rows).to_csv(path, index=False)


@pytest.mark.parametrize("writer, name", [("savefig", "profile_time.png"),
                                          ("to_csv", "comparison.csv")])
def test_report_out(writer, name, tmp_path):
    table = tmp_path / "input.csv"
    _results_table(table)
    out = tmp_path / "report"
    before = previous_files(out / name)
    kill_during_write(tmp_path, writer, ["report", str(table), "--out", str(out)])
    assert_intact(before)


def test_experiments_out(tmp_path):
    out = tmp_path / "runs.csv"
    before = previous_files(out)
    kill_during_write(tmp_path, "to_csv", ["experiments", "perceptron", "--out", str(out)])
    assert_intact(before)
