"""Stored optimal values (``reference_values/<problemID>.json``) and their provenance.

Each file records the optimal value of one catalog problem, how it was obtained (solver, options,
status, tolerance, library versions, date), the cross-check by a second solver, the instance
fingerprint and whether the instance is degenerate. Records written since the catalog has tiers
also hold the problem's ``tier``, the wall-clock ``times`` of the two CVXPY solves (compilation
included; the machine's architecture and CPU count beside them), and for instances drawn from a
real data set its ``dataset``: name, file, SHA-256 of the original file and the subset drawn.

Regeneration is explicit (``infpush-cvx reference regenerate``). It never overwrites silently:
a stored value that moved beyond tolerance, or an instance whose fingerprint changed, is an error
unless ``accept_changes=True`` is passed; a value within tolerance leaves the file untouched.
Files are written atomically (temporary file + rename).
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import os
import platform
import time
from importlib import metadata
from pathlib import Path

import cvxpy as cp

from . import catalog as _catalog
from .files import write_text_atomic
from . import cvxpy_solvers
from .data import BipartiteData

REFERENCE_DIR = Path(os.environ.get("INFPUSH_CVX_REFERENCE_DIR",
                                    _catalog.REPO_ROOT / "reference_values"))

#: Relative change of a stored value that regeneration refuses without accept_changes.
STORED_RTOL = 1e-6

#: Cross-check options that replace a solver's comparison options on one catalog tier.
#: Real tier (60,000 to 900,000 pairs):
#: - HiGHS's default method (dual simplex) ran over 20 minutes without finishing on the l1
#:   Infinite Push LP of a Spambase 400 x 600 subset (240,000 pair rows; measured while it was in
#:   the catalog); its interior-point method (IPX, then crossover) solved it in 9 minutes, to
#:   6e-13 of Clarabel's value, and the a8a 150 x 1500 LPs in 5 to 13 minutes.
#: - ECOS 2.0.14 at its comparison tolerances (1e-8) stopped with "optimal_inaccurate" on 9 of
#:   the 10 a8a 150 x 1500 QPs (its values within 1.7e-8 of Clarabel's); at 1e-7 it reports
#:   "optimal" on all but two RankSVM QPs (see TIER_CROSS_CHECK_STATUSES).
TIER_CROSS_CHECK_OPTIONS = {
    ("real", "HIGHS"): {"highs_options": {"solver": "ipm"}},
    ("real", "ECOS"): {"abstol": 1e-7, "reltol": 1e-7, "feastol": 1e-7, "max_iters": 500},
}

#: Cross-check statuses accepted on a tier (default: "optimal" only). ECOS still stops with
#: "optimal_inaccurate" at 1e-7 on two a8a RankSVM QPs (150 x 1500 seed 2 and 300 x 3000, values
#: within 1.1e-11 of Clarabel's): on the real tier that status passes when the value agrees
#: within CROSS_CHECK_RTOL, and the record's cross_check states it.
TIER_CROSS_CHECK_STATUSES = {"real": (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)}


def cross_check_options(tier: str, solver: str) -> dict:
    """The options of the cross-check by ``solver`` on a problem of ``tier``."""
    options = TIER_CROSS_CHECK_OPTIONS.get((tier, solver), cvxpy_solvers.SOLVERS[solver].options)
    return copy.deepcopy(options)


class ReferenceError(RuntimeError):
    """A stored value or fingerprint disagrees with a fresh computation."""


def versions() -> dict:
    """Versions of the libraries that produce and check reference values."""
    out = {"python": platform.python_version()}
    for pkg in ("cvxpy", "numpy", "scipy", "clarabel", "ecos", "scs", "highspy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def reference_path(problem_id: str, directory: Path | None = None) -> Path:
    return Path(directory or REFERENCE_DIR) / f"{problem_id}.json"


def load_reference(problem_id: str, directory: Path | None = None) -> dict | None:
    """The stored record of a problem, or None when there is none."""
    path = reference_path(problem_id, directory)
    if not path.exists():
        return None
    with open(path) as fh:
        return json.load(fh)


def dataset_provenance(instance: str) -> dict | None:
    """Name, file, SHA-256 and subset parameters of the real data set behind a catalog instance
    (None for generated instances)."""
    spec = _catalog.load_catalog().instances[instance]
    if spec.generator != "real_subset":
        return None
    from .datasets import DATASETS
    name = spec.params["dataset"]
    fname, digest, _ = DATASETS[name]
    return {"name": name, "file": fname, "sha256": digest, "generator": spec.generator,
            "params": dict(spec.params)}


def solve(problem: cp.Problem, solver: str, options: dict | None = None) -> cp.Problem:
    """Solve with ``solver`` and ``options`` (defaults: the solver's comparison options)."""
    spec = cvxpy_solvers.spec(solver)
    problem.solve(solver=spec.name, **(spec.options if options is None else options))
    return problem


def compute_reference(problem_id: str) -> dict:
    """Solve a catalog problem to high accuracy, cross-check it and return its record.

    Raises :class:`ReferenceError` when the solve is not optimal or the cross-check disagrees
    beyond ``CROSS_CHECK_RTOL`` or ends with a status its tier does not accept
    (``TIER_CROSS_CHECK_STATUSES``; "optimal" only, unless stated there).
    """
    spec = _catalog.get(problem_id)
    data = _catalog.instance_data(spec.instance)
    problem = spec.build(data)
    start = time.perf_counter()
    solve(problem, cvxpy_solvers.REFERENCE_SOLVER, cvxpy_solvers.REFERENCE_OPTIONS)
    reference_time = time.perf_counter() - start
    if problem.status != cp.OPTIMAL:
        raise ReferenceError(f"{problem_id}: reference solve by {cvxpy_solvers.REFERENCE_SOLVER} "
                             f"ended with status {problem.status!r}")
    value = float(problem.value)
    checker = cvxpy_solvers.CROSS_CHECK[spec.problem_class]
    check_options = cross_check_options(spec.tier, checker)
    start = time.perf_counter()
    check = solve(spec.build(data), checker, copy.deepcopy(check_options))
    check_time = time.perf_counter() - start
    check_err = cvxpy_solvers.relative_error(check.value, value)
    accepted = TIER_CROSS_CHECK_STATUSES.get(spec.tier, (cp.OPTIMAL,))
    if check.status not in accepted or check_err > cvxpy_solvers.CROSS_CHECK_RTOL:
        raise ReferenceError(
            f"{problem_id}: cross-check by {checker} disagrees (status {check.status!r}, "
            f"value {check.value!r} vs {value!r}, relative error {check_err:.2e})")
    degenerate = None
    if isinstance(data, BipartiteData):
        from .degeneracy import is_degenerate
        degenerate = bool(is_degenerate(data))
    record = {
        "problem_id": problem_id,
        "opt_val": value,
        "status": problem.status,
        "solver": cvxpy_solvers.REFERENCE_SOLVER,
        "solver_options": cvxpy_solvers.REFERENCE_OPTIONS,
        "tolerance": cvxpy_solvers.CROSS_CHECK_RTOL,
        "cross_check": {"solver": checker, "status": check.status, "value": float(check.value),
                        "relative_error": check_err,
                        "options": check_options},
        "instance": spec.instance,
        "instance_fingerprint": data.fingerprint(),
        "degenerate": degenerate,
        "formulation": {"name": spec.formulation, "options": spec.options, "lam": spec.lam},
        "versions": versions(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tier": spec.tier,
        "times": {"reference_solve": round(reference_time, 3),
                  "cross_check_solve": round(check_time, 3),
                  "machine": platform.machine(), "cpu_count": os.cpu_count()},
    }
    source = dataset_provenance(spec.instance)
    if source is not None:
        record["dataset"] = source
    return record


def regenerate(ids=None, *, accept_changes: bool = False, directory: Path | None = None,
               progress=None, tier: str = _catalog.DEFAULT_TIER) -> dict:
    """Compute reference values and store the new ones; returns ``{id: action}``.

    ``ids`` default to the problems of ``tier`` (``"core"``; ``"all"`` for every tier).

    Actions: ``"written"`` (no value was stored), ``"unchanged"`` (stored value within
    ``STORED_RTOL`` and same fingerprint: the file is left as it was), ``"replaced"`` (changed,
    and ``accept_changes`` was given). A change without ``accept_changes`` raises
    :class:`ReferenceError` listing every changed problem, after the others were processed.
    """
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    actions, errors = {}, []
    for pid in (ids if progress is None else progress(ids)):
        record = compute_reference(pid)
        old = load_reference(pid, directory)
        if old is not None:
            problems = []
            if old["instance_fingerprint"] != record["instance_fingerprint"]:
                problems.append("instance fingerprint changed")
            err = cvxpy_solvers.relative_error(record["opt_val"], old["opt_val"])
            if err > STORED_RTOL:
                problems.append(f"value {old['opt_val']!r} -> {record['opt_val']!r} "
                                f"(relative change {err:.2e})")
            if not problems:
                actions[pid] = "unchanged"
                continue
            if not accept_changes:
                errors.append(f"{pid}: " + "; ".join(problems))
                actions[pid] = "refused"
                continue
            actions[pid] = "replaced"
        else:
            actions[pid] = "written"
        write_text_atomic(reference_path(pid, directory), json.dumps(record, indent=2) + "\n")
    if errors:
        raise ReferenceError("stored reference values differ (rerun with --accept-changes to "
                             "replace them):\n  " + "\n  ".join(errors))
    return actions


def check_fingerprint(problem_id: str, data=None) -> None:
    """Raise :class:`ReferenceError` when the regenerated instance differs from the stored one."""
    record = load_reference(problem_id)
    if record is None:
        raise ReferenceError(f"{problem_id}: no stored reference value "
                             f"(run `infpush-cvx reference regenerate`)")
    spec = _catalog.get(problem_id)
    data = _catalog.instance_data(spec.instance) if data is None else data
    fp = data.fingerprint()
    if fp != record["instance_fingerprint"]:
        raise ReferenceError(f"{problem_id}: instance {spec.instance!r} regenerated with "
                             f"fingerprint {fp[:16]}..., stored {record['instance_fingerprint'][:16]}...")
