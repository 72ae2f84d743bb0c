"""The wheel is the whole package: built from the source without network, it holds the catalog,
every stored reference value and ``py.typed``; installed into a fresh virtual environment, away
from the checkout, its ``infpush-cvx`` command lists the catalog and checks a problem against its
stored value.

The wheel is built from a copy of the package (``pyproject.toml``, ``README.md``,
``infpush_cvx/``) in a temporary folder, as ``pip wheel .`` builds it, so that setuptools' build
folders stay out of the checkout, which other runs may be building at the same time. The fresh
environment has no pip and none of the dependencies: a ``.pth`` file appends the site-packages of
the interpreter running the tests to its path, after the wheel's install location, so the
dependencies are the ones already installed and nothing is downloaded. That site-packages folder
is only put on the path, not processed as a site folder, so the editable install's import hook
in it is not loaded.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import infpush_cvx

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "infpush_cvx"
PROBLEM = "ip_l2_planted_s_paper_compact"

#: The optional extras of pyproject.toml (plots, sklearn, parquet, dask, notebooks), hidden from
#: the fresh environment so that it is a plain install (``pip install infpush_cvx``, no extras).
EXTRAS = ("matplotlib", "sklearn", "pyarrow", "dask", "distributed", "nbformat", "nbclient")
HIDE_EXTRAS = f"""import sys


class _HideExtras:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _HideExtras())
"""

pytestmark = pytest.mark.slow

#: What the wheel is built from: the files setuptools reads for it.
SOURCES = ("pyproject.toml", "README.md", "infpush_cvx")

#: Environment variables that would point the installed package elsewhere than its own data, or
#: put the checkout on the path.
CLEARED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "INFPUSH_CVX_CATALOG",
               "INFPUSH_CVX_REFERENCE_DIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
               "PIP_FIND_LINKS")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(args, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def _output(proc: subprocess.CompletedProcess) -> str:
    return (f"exit {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\n"
            f"stderr:\n{proc.stderr[-3000:]}")


#: What the installed package says about itself, as JSON.
INSTALLED_PROBE = """
import json, infpush_cvx
from infpush_cvx import catalog
from infpush_cvx.catalog import reference
try:
    reference.writable_directory()
    refused = None
except ValueError as exc:
    refused = str(exc)
print(json.dumps({"file": infpush_cvx.__file__, "version": infpush_cvx.__version__,
                  "catalog": str(catalog.default_catalog()),
                  "references": str(reference.reference_dir()),
                  "problems": len(catalog.problem_ids(tier="all")), "refused": refused}))
"""


def _missing_build_tools(tmp_path) -> str | None:
    """Why this interpreter cannot build and install the wheel offline (pip 22.3 or later, for
    ``--python``; setuptools with a ``bdist_wheel`` command: its own since 70.1, or the
    ``wheel`` package's), or None."""
    try:
        pip_version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        return "cannot build a wheel: pip is not installed"
    if tuple(int(part) for part in pip_version.split(".")[:2] if part.isdigit()) < (22, 3):
        return f"pip {pip_version} is older than 22.3 (no --python option)"
    probe = ("import setuptools.build_meta\n"
             "try:\n    import setuptools.command.bdist_wheel\n"
             "except ImportError:\n    import wheel.bdist_wheel\n")
    proc = _run([sys.executable, "-c", probe], cwd=tmp_path)
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return f"cannot build a wheel without network: {lines[-1] if lines else _output(proc)}"


def _copy_sources(dest: Path) -> Path:
    dest.mkdir()
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
        else:
            shutil.copy2(source, dest / name)
    return dest


def _build_wheel(tmp_path) -> Path:
    source = _copy_sources(tmp_path / "source")
    out = tmp_path / "wheels"
    proc = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "--no-index", "-w", out, "."], cwd=source)
    assert proc.returncode == 0, _output(proc)
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _fresh_environment(tmp_path, wheel: Path) -> tuple[Path, Path]:
    """A virtual environment without pip holding the wheel; returns (python, site-packages)."""
    venv = tmp_path / "venv"
    proc = _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    if proc.returncode != 0:
        pytest.skip(f"cannot create a virtual environment: {_output(proc)}")
    python = venv / "bin" / "python"
    proc = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                cwd=tmp_path)
    assert proc.returncode == 0, _output(proc)
    site_packages = Path(proc.stdout.strip())
    # pip runs in the new environment's interpreter (--python), so it sees only that
    # environment: it neither finds nor uninstalls the package installed in ours.
    proc = _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
                 "--no-index", wheel], cwd=tmp_path)
    assert proc.returncode == 0, _output(proc)
    # The dependencies: this interpreter's site-packages, after the wheel's install location.
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site_packages / "zz_test_dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    # A plain install: the extras the test interpreter has are hidden, as if never installed.
    (site_packages / "_hide_extras.py").write_text(HIDE_EXTRAS)
    (site_packages / "zz_hide_extras.pth").write_text("import _hide_extras\n")
    return python, site_packages


def test_wheel_holds_the_data_and_runs_installed(tmp_path):
    reason = _missing_build_tools(tmp_path)
    if reason is not None:
        pytest.skip(reason)
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]

    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        wheel_metadata = archive.read(metadata_name).decode()
    stored = sorted(p.name for p in (PACKAGE / "catalog" / "reference_values").glob("*.json"))
    assert stored
    expected = {"infpush_cvx/py.typed", "infpush_cvx/catalog/problems/catalog.toml",
                *(f"infpush_cvx/catalog/reference_values/{name}" for name in stored)}
    assert expected <= names, sorted(expected - names)
    assert all(n.startswith(("infpush_cvx/", "infpush_cvx-")) for n in names), sorted(names)
    assert not any("__pycache__" in n for n in names)
    requires = [line for line in wheel_metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    assert not [r for r in requires if "pytest" in r and "extra ==" not in r], requires

    python, site_packages = _fresh_environment(tmp_path, wheel)
    proc = _run([sys.executable, "-c", "import infpush_cvx; print(infpush_cvx.__file__)"],
                cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == infpush_cvx.__file__, \
        f"the test environment lost its own infpush_cvx: {_output(proc)}"
    work = tmp_path / "work"  # outside the checkout: no infpush_cvx/ beside the command
    work.mkdir()

    proc = _run([python, "-I", "-c", INSTALLED_PROBE], cwd=work)
    assert proc.returncode == 0, _output(proc)
    found = json.loads(proc.stdout)
    for key in ("file", "catalog", "references"):
        assert Path(found[key]).is_relative_to(site_packages), (key, found)
    assert found["version"] == version
    assert found["problems"] > 0
    assert found["refused"] and "INFPUSH_CVX_REFERENCE_DIR" in found["refused"], found

    command = [python, "-I", python.parent / "infpush-cvx"]  # the installed entry point
    proc = _run([*command, "--version"], cwd=work)
    assert proc.returncode == 0 and proc.stdout.strip() == f"infpush-cvx {version}", _output(proc)

    proc = _run([*command, "list"], cwd=work)
    assert proc.returncode == 0, _output(proc)
    assert PROBLEM in proc.stdout

    proc = _run([*command, "check", "--problems", PROBLEM, "--cvxpy", "CLARABEL", "--native",
                 "--no-progress", "--out", work / "comparison.csv"], cwd=work, timeout=300)
    assert proc.returncode == 0, _output(proc)
    assert (work / "comparison.csv").is_file()

    # Without any extra, bench runs to completion (CSV, no Parquet, no figures: each said) and
    # report reads what it wrote (issue 27: a plain wheel runs bench and report).
    proc = _run([python, "-I", "-c", "import matplotlib"], cwd=work)
    assert proc.returncode != 0 and "No module named 'matplotlib'" in proc.stderr, _output(proc)
    proc = _run([*command, "bench", "--problems", PROBLEM, "--cvxpy", "CLARABEL", "--native",
                 "infinite_push.working_set", "--no-progress", "--out", work / "bench"],
                cwd=work, timeout=300)
    assert proc.returncode == 0, _output(proc)
    (table,) = (work / "bench").glob("*.csv")
    assert not list((work / "bench").glob("*.parquet"))
    (page,) = (work / "bench").glob("*_report/report.html")
    proc = _run([*command, "report", table, "--out", work / "report"], cwd=work, timeout=300)
    assert proc.returncode == 0, _output(proc)
    assert (work / "report" / "report.html").is_file() and page.is_file()

    # Writing stored values into the installed package is refused before any solve (usage error).
    proc = _run([*command, "reference", "regenerate", "--only", PROBLEM], cwd=work)
    assert proc.returncode == 2, _output(proc)
    assert "INFPUSH_CVX_REFERENCE_DIR" in proc.stderr, _output(proc)
    assert sorted(p.name for p in (site_packages / "infpush_cvx" / "catalog" / "reference_values")
                  .glob("*.json")) == stored
