"""Provenance of a benchmark run: when, which code, on what machine, with which settings.

:func:`run_metadata` gathers the record that ``infpush-cvx bench`` writes beside its results
(``<run id>.json``):

- ``run_id`` and ``date`` (UTC, ISO 8601), ``finished`` and ``duration_s``, the ``command``;
- ``code``: the package version and, when the package is imported from a git checkout, the
  short commit hash and whether the checkout had uncommitted changes (``git_dirty``);
- ``platform`` (:func:`platform_info`): CPU model, logical and usable cores, RAM, OS, machine,
  Python, and the BLAS/OpenMP thread pools loaded (``threadpoolctl.threadpool_info()``);
- ``versions`` of Python and the packages a solve can touch;
- ``execution``: executor, workers, their thread settings and what each warm-up did;
- ``solvers``: every option each solver was called with (CVXPY settings, the solver's options
  and time limit; the project solvers' ``method``, ``tol``, ``time_limit`` and the defaults of
  everything else) and the tolerance it is held to;
- ``problems`` and ``instances``: formulation, options, lambda and stored value of each problem;
  generator, parameters, seed, tier, sizes (m, n, d) and non-zeros of each instance;
- ``summary``: rows, agreements, and the rows that did not agree, by outcome (disagree,
  suboptimal, failed: :mod:`.compare`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import secrets
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

#: Version of the metadata layout; bump when a key changes meaning.
METADATA_FORMAT = 1


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    """``2026-01-31T12:00:00Z``-style UTC time (seconds precision)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(moment: datetime | None = None) -> str:
    """``<UTC time>_<6 hex digits>``, e.g. ``20260131T120000Z_3fa9c2``: sorts by time, and two
    runs started in the same second still differ."""
    moment = utc_now() if moment is None else moment
    return f"{moment.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}_{secrets.token_hex(3)}"


#: The folder holding the package folder: a checkout's top, or site-packages.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=4)
def code_revision(root: Path = PACKAGE_PARENT) -> dict:
    """``{"package", "version", "git_commit", "git_dirty"}``: the commit (short hash) of the git
    checkout whose top folder is ``root`` (default: the one the package is imported from), with
    ``git_dirty`` True when tracked files have uncommitted changes; both None when ``root`` is
    not the top of a checkout (an installed package: then the version identifies it)."""
    from ..catalog.reference import versions
    out = {"package": "infpush_cvx", "version": versions(("infpush_cvx",))["infpush_cvx"],
           "git_commit": None, "git_dirty": None}
    root = Path(root).resolve()

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=20, check=True).stdout.strip()
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # no git, or no checkout
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            return out  # the package lives inside some other repository (site-packages)
        out["git_commit"] = git("rev-parse", "--short", "HEAD")
        out["git_dirty"] = bool(git("status", "--porcelain", "--untracked-files=no"))
    return out


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        return None


def platform_info() -> dict:
    """The machine this process runs on, and the native thread pools it has loaded."""
    from threadpoolctl import threadpool_info
    return {"cpu_model": _cpu_model(), "cpu_count": os.cpu_count(),
            "cpu_count_usable": (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                 else os.cpu_count()),  # sched_getaffinity: Linux only
            "ram_bytes": _ram_bytes(), "os": platform.platform(), "machine": platform.machine(),
            "python": sys.version.split()[0],
            "python_implementation": platform.python_implementation(),
            "threadpools": threadpool_info()}


def _solver_records(tasks) -> dict:
    from ..catalog import cvxpy_solvers, registry
    out = {}
    for task in tasks:
        key = f"{task.solver} (tol={task.tol:g}, timeout={task.timeout})" \
            if task.kind == "native" else f"{task.solver} (timeout={task.timeout})"
        if key in out:
            continue
        if task.kind == "cvxpy":
            try:
                record = cvxpy_solvers.spec(task.solver).describe(task.timeout)
            except ValueError as exc:
                record = {"solver": task.solver, "error": str(exc)}
            record["cvxpy_settings"] = dict(cvxpy_solvers.CVXPY_SETTINGS)
        else:
            record = {"solver": task.solver,
                      "options": registry.options(task.solver, tol=task.tol,
                                                  time_limit=task.timeout),
                      "rtol": registry.rtol(task.tol)}
            try:
                record["defaults"] = registry.defaults(task.solver)
            except ValueError:
                record["defaults"] = None
        out[key] = {"kind": task.kind, "blas_threads": task.blas_threads, **record}
    return out


def _problem_records(problems) -> tuple[dict, dict]:
    from .instances import instance_record, problem_spec, stored_opt_val
    problem_records, instance_records = {}, {}
    for problem in problems:
        pid = str(problem)
        try:
            spec = problem_spec(problem)
        except ValueError:
            problem_records[pid] = {"error": "unknown problem"}
            continue
        problem_records[pid] = {"instance": spec.instance, "formulation": spec.formulation,
                                "options": dict(spec.options), "lam": spec.lam,
                                "problem_class": spec.problem_class, "tier": spec.tier,
                                "reference_value": stored_opt_val(problem)}
        if spec.instance not in instance_records:
            instance_records[spec.instance] = instance_record(problem)
    return problem_records, instance_records


def _instance_sizes(table, instances: dict) -> None:
    """Add m, n, d, nnz (as measured by the workers, in the rows) to the instance records."""
    for name, record in instances.items():
        rows = table[table["instance"] == name]
        for col in ("m", "n", "d", "nnz"):
            values = rows[col].dropna()
            record[col] = int(values.iloc[0]) if len(values) else None


def _summary(table) -> dict:
    """``rows``, ``agree`` (rows that agree with their stored value) and, by outcome
    (:func:`.compare.outcome`), the rows that did not: ``disagree`` (a claimed optimum the stored
    value contradicts), ``suboptimal`` (stopped without a certificate) and ``failed``."""
    from .outcomes import outcomes
    found = outcomes(table)

    def rows(outcome):
        return [{"problem": r.problem, "solver": r.solver, "repeat": int(r.repeat),
                 "status": str(r.status)} for r in table[found == outcome].itertuples()]
    return {"rows": int(len(table)), "agree": int(table["agrees"].astype(bool).sum()),
            "disagree": rows("disagrees"), "suboptimal": rows("suboptimal"),
            "failed": rows("failed")}


def run_metadata(tasks, table, *, run_id: str, started: datetime,
                 execution: dict | None = None, command=None) -> dict:
    """The provenance record of a run of ``tasks`` whose rows are ``table`` (see the module
    docstring for its keys). JSON-serialisable."""
    from .tasks import versions
    tasks = list(tasks)
    problems = list(dict.fromkeys(t.problem for t in tasks))
    problem_records, instance_records = _problem_records(problems)
    _instance_sizes(table, instance_records)
    finished = utc_now()
    return {"format": METADATA_FORMAT, "run_id": run_id, "date": iso(started),
            "finished": iso(finished), "duration_s": (finished - started).total_seconds(),
            "command": list(sys.argv if command is None else command),
            "code": code_revision(), "platform": platform_info(), "versions": versions(),
            "execution": dict(execution or {}),
            "tasks": {"count": len(tasks),
                      "repeats": 1 + max((t.repeat for t in tasks), default=0),
                      "curves": any(getattr(t, "curves", False) for t in tasks)},
            "solvers": _solver_records(tasks), "problems": problem_records,
            "instances": instance_records, "summary": _summary(table),
            "files": {}}  # save_run names them
