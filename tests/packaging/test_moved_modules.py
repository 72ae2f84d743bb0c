"""The old module paths of the flat layout: each still imports, as the very module at its new
path, with a DeprecationWarning that names the new path."""

import importlib
import subprocess
import sys

import pytest

from infpush_cvx import _moved


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_path_is_the_new_module_and_warns(old):
    new = importlib.import_module(f"infpush_cvx.{_moved.MOVED[old]}")
    sys.modules.pop(f"infpush_cvx.{old}", None)
    with pytest.warns(DeprecationWarning, match=rf"infpush_cvx\.{old} is now {new.__name__}"):
        module = importlib.import_module(f"infpush_cvx.{old}")
    assert module is new


def test_a_module_below_an_old_package_path_is_the_new_one():
    sys.modules.pop("infpush_cvx.online.stream", None)
    with pytest.warns(DeprecationWarning, match="infpush_cvx.evaluation.online.stream"):
        stream = importlib.import_module("infpush_cvx.online.stream")
    assert stream is importlib.import_module("infpush_cvx.evaluation.online.stream")


def test_new_paths_do_not_warn():
    code = ("import warnings; warnings.simplefilter('error')\n"
            "import infpush_cvx.evaluation.rankers, infpush_cvx.data.generators, "
            "infpush_cvx.benchmarking.compare, infpush_cvx.catalog.reference")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_unmoved_and_foreign_names_are_left_to_the_normal_import():
    assert _moved.new_path("infpush_cvx.solvers") is None
    assert _moved.new_path("infpush_cvx.metricsx") is None
    assert _moved.new_path("numpy.metrics") is None
