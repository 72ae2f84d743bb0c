"""Quiet by default, verbose on request: the solvers' and rankers' ``verbose`` and the helper
:func:`infpush_cvx._logging.verbose_logging`.

Under pytest the root logger has pytest's capture handler, so the solvers' INFO lines reach
``caplog`` instead of stderr; what an unconfigured program sees (stderr) is checked in a fresh
interpreter (:func:`test_unconfigured_program_prints_to_stderr_only_when_verbose`) and on a
logger without handlers (:func:`test_helper_attaches_a_stderr_handler_and_removes_it`).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings

import numpy as np
import pytest

from infpush_cvx._logging import MAX_LINES, log_every, solver_log, verbose_logging
from infpush_cvx.data.generators import planted_bipartite, rank2plan_pairs
from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import (InfinitePushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker)
from infpush_cvx.solvers import infinite_push, rank2plan_lambda_max, rank2plan_lp, ranksvm
from infpush_cvx.solvers.result import ConvergenceWarning

DATA = planted_bipartite(20, 20, 5, seed=0)
PAIRS = rank2plan_pairs(4, 15, 10, 30, seed=0)
PAIR_LAM = 0.05 * rank2plan_lambda_max(PAIRS)
X = np.vstack([DATA.Xp, DATA.Xn])
Y = np.r_[np.ones(DATA.m), np.zeros(DATA.n)]

#: One tiny solve per method: (label in the iteration lines, the entry point's name, the solve).
SOLVES = {
    "working_set": ("working_set", "infinite_push",
                    lambda **kw: infinite_push(DATA, None, 0.1, **kw)),
    "working_set_l1": ("working_set", "infinite_push",
                       lambda **kw: infinite_push(DATA, None, 0.1, penalty="l1", **kw)),
    "fista": ("fista", "infinite_push",
              lambda **kw: infinite_push(DATA, None, 0.1, method="fista", **kw)),
    "paper": ("paper", "infinite_push",
              lambda **kw: infinite_push(DATA, None, 0.1, method="paper", **kw)),
    "admm": ("admm", "infinite_push",
             lambda **kw: infinite_push(DATA, None, 0.1, method="admm", **kw)),
    "smoothing_newton": ("smoothing_newton", "ranksvm",
                         lambda **kw: ranksvm(DATA, None, 0.1, **kw)),
    "ranksvm_working_set": ("working_set", "ranksvm",
                            lambda **kw: ranksvm(DATA, None, 0.1, method="working_set", **kw)),
    "ranksvm_fista": ("fista", "ranksvm",
                      lambda **kw: ranksvm(DATA, None, 0.1, method="fista", **kw)),
    "ccg": ("ccg", "rank2plan_lp",
            lambda **kw: rank2plan_lp(PAIRS, lam=PAIR_LAM, method="ccg", **kw)),
    "smoothed": ("smoothed", "rank2plan_lp",
                 lambda **kw: rank2plan_lp(PAIRS, lam=PAIR_LAM, method="smoothed", **kw)),
    "cvxpy": (None, "rank2plan_lp",
              lambda **kw: rank2plan_lp(PAIRS, lam=PAIR_LAM, method="cvxpy", **kw)),
}


def _solve(name, **kw):
    with warnings.catch_warnings():
        # "paper" stops at max_iter and "smoothed" stalls above tol: their warning is not
        # what is tested here
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SOLVES[name][2](**kw)


def _package_records(caplog, level=logging.INFO):
    return [r for r in caplog.records if r.name.startswith("infpush_cvx") and r.levelno >= level]


def _logger_state():
    return list(solver_log.handlers), solver_log.level


@pytest.mark.parametrize("name", list(SOLVES))
def test_quiet_by_default(name, capfd, caplog):
    caplog.set_level(logging.DEBUG, logger="infpush_cvx")
    _solve(name)
    assert capfd.readouterr() == ("", "")  # nothing printed, CVXPY's output included
    assert _package_records(caplog) == []  # nothing at INFO or above
    debug = [r.getMessage() for r in caplog.records if r.name == "infpush_cvx.solvers"]
    assert any("status" in line for line in debug)  # the same lines, at DEBUG


@pytest.mark.parametrize("name", list(SOLVES))
def test_verbose_logs_iterations_and_summary(name, capfd, caplog):
    label, entry, _ = SOLVES[name]
    before = _logger_state()
    result = _solve(name, verbose=True)
    lines = [r.getMessage() for r in _package_records(caplog)]
    assert all(r.levelno == logging.INFO for r in _package_records(caplog))
    assert lines[0].startswith(f"{entry} ")  # the header: sizes, lambda, tol
    summary = lines[-1]
    assert summary.startswith(f"{entry} {result.method}: status {result.status}, objective ")
    assert f"iterations {result.iterations}" in summary and "time " in summary
    if label is None:  # CVXPY: its own output, and its solver's
        assert "Clarabel" in capfd.readouterr().out
        return
    iterations = [line for line in lines if line.startswith(f"{label} ")]
    assert iterations, lines
    for line in iterations:
        assert " objective " in line and " gap " in line and " time " in line
    if name != "smoothed":  # the smoothed method certifies its gap once, at the end
        assert f"gap {result.gap:.2e}" in summary
    assert _logger_state() == before  # nothing left behind


def test_method_figures():
    """Each method's own key figure appears in its iteration lines."""
    figures = {"working_set": ("negatives", "band_pairs"), "smoothing_newton": ("mu",),
               "fista": ("Q",), "paper": ("step",), "admm": ("rho",),
               "ccg": ("features", "explicit_pairs", "linear_pairs"), "smoothed": ("tau",)}
    for name, names in figures.items():
        records = []
        handler = logging.Handler()
        handler.emit = records.append
        solver_log.addHandler(handler)
        try:
            _solve(name, verbose=True)
        finally:
            solver_log.removeHandler(handler)
        lines = [r.getMessage() for r in records if r.getMessage().startswith(f"{name} ")]
        assert lines, name
        for figure in names:
            assert f"  {figure} " in lines[0], (name, figure, lines[0])


@pytest.mark.parametrize("name", ["paper", "admm", "smoothed"])
def test_first_order_methods_log_about_fifty_lines(name, caplog):
    label = SOLVES[name][0]
    _solve(name, verbose=True, max_iter=1000)
    lines = [r for r in _package_records(caplog) if r.getMessage().startswith(f"{label} ")]
    assert 1 <= len(lines) <= MAX_LINES + 1  # + the last iteration when it is not a multiple


def test_log_every():
    assert log_every(20000, 10) == 400 and log_every(1000, 10) == 20
    assert log_every(200) == 4 and log_every(30) == 1 and log_every(0) == 1
    assert log_every(5000, 10) % 10 == 0


@pytest.mark.parametrize("call", [
    lambda: infinite_push(DATA, None, 0.1, verbose="yes"),
    lambda: ranksvm(DATA, None, 0.1, verbose=1),
    lambda: rank2plan_lp(PAIRS, lam=PAIR_LAM, verbose="yes"),
    lambda: InfinitePushRanker(verbose="yes").fit(X, Y),
    lambda: SparseInfinitePushRanker(verbose=None).fit(X, Y),
    lambda: RankSVMRanker(verbose="no").fit(X, Y),
    lambda: RankerCV(Cs=[1.0], cv=2, verbose="yes").fit(X, Y),
])
def test_verbose_must_be_a_bool(call):
    with pytest.raises(TypeError, match="verbose"):
        call()


def test_numpy_bool_accepted(caplog):
    infinite_push(DATA, None, 0.1, verbose=np.bool_(True))
    assert _package_records(caplog)


# ---- the helper ---------------------------------------------------------------------------

@pytest.fixture
def bare_logger():
    """A logger with no handler and no ancestor, at WARNING: logging unconfigured. (Made
    outside logging's registry: pytest attaches its capture handler to registered loggers that
    do not propagate.)"""
    return logging.Logger("infpush_cvx_test_bare", logging.WARNING)


def test_helper_attaches_a_stderr_handler_and_removes_it(bare_logger, capsys):
    with verbose_logging(bare_logger, True):
        assert len(bare_logger.handlers) == 1
        bare_logger.info("shown")
        bare_logger.debug("not shown")
    assert bare_logger.handlers == [] and bare_logger.level == logging.WARNING
    bare_logger.info("after")
    assert capsys.readouterr() == ("", "shown\n")


def test_helper_cleans_up_on_exceptions(bare_logger):
    bare_logger.setLevel(logging.ERROR)
    with pytest.raises(RuntimeError), verbose_logging(bare_logger, True):
        raise RuntimeError("solve failed")
    assert bare_logger.handlers == [] and bare_logger.level == logging.ERROR


def test_helper_quiet_changes_nothing(bare_logger, capsys):
    with verbose_logging(bare_logger, False):
        assert bare_logger.handlers == []
        bare_logger.info("no")
    assert capsys.readouterr() == ("", "")


def test_helper_nested_blocks_share_one_handler(bare_logger, capsys):
    with verbose_logging(bare_logger, True):
        handlers = list(bare_logger.handlers)
        with verbose_logging(bare_logger, True):
            assert bare_logger.handlers == handlers
        assert bare_logger.handlers == handlers  # the outer block still prints
        bare_logger.info("outer")
    assert bare_logger.handlers == []
    assert capsys.readouterr().err == "outer\n"


def test_helper_uses_the_application_handler(bare_logger, capsys):
    """A configured handler that shows INFO gets the lines, once; no stderr handler is added,
    and a logger level above INFO is lowered for the block only."""
    records = []
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append
    bare_logger.addHandler(handler)
    bare_logger.setLevel(logging.WARNING)
    with verbose_logging(bare_logger, True):
        assert bare_logger.handlers == [handler]
        bare_logger.info("line")
    assert [r.getMessage() for r in records] == ["line"]
    assert bare_logger.level == logging.WARNING
    assert capsys.readouterr() == ("", "")


def test_helper_ignores_handlers_that_would_not_show_info(bare_logger, capsys):
    bare_logger.addHandler(logging.NullHandler())
    warning_only = logging.StreamHandler(sys.stdout)
    warning_only.setLevel(logging.WARNING)
    bare_logger.addHandler(warning_only)
    with verbose_logging(bare_logger, True):
        bare_logger.info("line")
    assert capsys.readouterr().err == "line\n"
    assert len(bare_logger.handlers) == 2


_PROGRAM = """
import sys
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers import infinite_push
data = planted_bipartite(20, 20, 5, seed=0)
infinite_push(data, None, 0.1)
sys.stderr.write("--quiet above--\\n")
infinite_push(data, None, 0.1, verbose=True)
"""


def test_unconfigured_program_prints_to_stderr_only_when_verbose():
    run = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    quiet, verbose = run.stderr.split("--quiet above--\n")
    assert quiet == ""
    lines = verbose.splitlines()
    assert lines[0].startswith("infinite_push working_set (l2 penalty): 20 positives")
    assert lines[1].startswith("working_set     1  objective ")
    assert lines[-1].startswith("infinite_push working_set: status optimal")


# ---- the rankers --------------------------------------------------------------------------

@pytest.mark.parametrize("ranker", [InfinitePushRanker, RankSVMRanker,
                                    lambda **kw: SparseInfinitePushRanker(C=10, solver="native",
                                                                          **kw)])
def test_native_rankers_pass_verbose(ranker, caplog, capfd):
    ranker().fit(X, Y)
    assert _package_records(caplog) == [] and capfd.readouterr() == ("", "")
    ranker(verbose=True).fit(X, Y)
    lines = [r.getMessage() for r in _package_records(caplog)]
    assert lines and lines[-1].split()[1] in ("working_set:", "smoothing_newton:")


@pytest.mark.parametrize("ranker", [InfinitePushRanker, SparseInfinitePushRanker,
                                    RankSVMRanker])
def test_cvxpy_rankers_pass_verbose(ranker, capfd):
    ranker(C=10, solver="cvxpy").fit(X, Y)
    assert capfd.readouterr() == ("", "")
    ranker(C=10, solver="cvxpy", verbose=True).fit(X, Y)
    assert "Clarabel" in capfd.readouterr().out


def test_ranker_verbose_is_a_parameter():
    ranker = InfinitePushRanker(verbose=True)
    assert ranker.get_params()["verbose"] is True
    assert RankerCV(verbose=True).get_params()["verbose"] is True


def test_ranker_cv_verbose(caplog):
    RankerCV(RankSVMRanker(), Cs=[0.1, 1.0], cv=2, verbose=True).fit(X, Y)
    records = _package_records(caplog)
    folds = [r.getMessage() for r in records if r.name == "infpush_cvx.evaluation.ranker_cv"]
    assert len(folds) == 2 * 2 + 1
    assert folds[0].startswith("RankerCV fold 1/2, C=0.1: held-out score ")
    assert folds[-1].startswith("RankerCV: C=")
    summaries = [r for r in records if r.name == "infpush_cvx.solvers"
                 and r.getMessage().startswith("ranksvm smoothing_newton: status")]
    assert len(summaries) == 2 * 2 + 1  # every path solve and the refit


def test_ranker_cv_quiet_keeps_the_rankers_verbose(caplog):
    RankerCV(RankSVMRanker(verbose=True), Cs=[1.0], cv=2).fit(X, Y)
    records = _package_records(caplog)
    assert records and all(r.name == "infpush_cvx.solvers" for r in records)
    caplog.clear()
    RankerCV(RankSVMRanker(), Cs=[1.0], cv=2).fit(X, Y)
    assert _package_records(caplog) == []
