"""Stored optimal values (``<reference folder>/<problemID>.json``) and their provenance.

The reference folder ships inside the package (``infpush_cvx/catalog/reference_values/``, found with
:mod:`importlib.resources`); the environment variable ``INFPUSH_CVX_REFERENCE_DIR`` (read
when used) or a function's ``directory`` argument names another one.

Each file records the optimal value of one catalog problem, how it was obtained (solver, options,
status, tolerance, library versions, date), the cross-check by a second solver, the instance
fingerprint and whether the instance is degenerate, and the fingerprint of the problem's
definition (``spec_fingerprint``: formulation, options, lambda; see
:meth:`infpush_cvx.catalog.ProblemSpec.fingerprint`). Records written since the catalog has tiers
also hold the problem's ``tier``, the wall-clock ``times`` of the two CVXPY solves (compilation
included; the machine's architecture and CPU count beside them), and for instances drawn from a
real data set its ``dataset``: name, file, SHA-256 of the original file and the subset drawn.

Reading a record (:func:`load_reference`) checks it (:mod:`._records`: a regular file of at
most 16 MiB, valid JSON, every required key with its type, an optimal status) and that it is
the record of the problem its file is named after. Any fault is a
:class:`~infpush_cvx.files.MalformedFileError` (a ValueError) naming the file. A problem ID is a
plain file name (:func:`._files.check_name`), and its record's path is checked to stay in the
reference folder.

Using a stored value to judge a solve (:func:`stored_value`; :func:`infpush_cvx.catalog.problems`
uses it) also checks that it still belongs to the problem: a record whose instance fingerprint
or problem definition no longer matches gives no value, and says why
(:class:`StaleReferenceWarning`).

Verification (``infpush-cvx reference verify``, :func:`verify`) checks everything a stored value
depends on: the instance regenerates to its fingerprint, the catalog's definition of the problem
has the stored definition fingerprint, and a re-solve by the project's certified solvers agrees
with the value.

Regeneration is explicit (``infpush-cvx reference regenerate``). It never overwrites silently:
a stored value that moved beyond tolerance (NaN counts as moved), a changed instance or problem
definition, or a record that cannot be read is an error unless ``accept_changes=True`` is passed;
an agreeing record leaves the file untouched. Files are written atomically (temporary file +
rename), never with NaN or infinity.
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

import cvxpy as cp

from ..data.containers import BipartiteData, PairData
from ..files import MalformedFileError
from ..solvers.result import CERTIFIED
from . import cvxpy_solvers, registry
from . import specs as _catalog
from ._files import path_in, read_small_file
from ._records import check_record, parse_record, write_record

#: Environment variable naming a reference folder to use instead of the packaged one.
REFERENCE_DIR_ENV_VAR = "INFPUSH_CVX_REFERENCE_DIR"
#: The reference values shipped with the package.
PACKAGED_REFERENCE_DIR = _catalog.package_data("reference_values")


def reference_dir() -> Path:
    """The folder read and written when no ``directory`` is given: ``$INFPUSH_CVX_REFERENCE_DIR``
    when set (read now), else the packaged one."""
    return Path(os.environ.get(REFERENCE_DIR_ENV_VAR) or PACKAGED_REFERENCE_DIR)


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
    options = TIER_CROSS_CHECK_OPTIONS.get((tier, solver), cvxpy_solvers.TUNED[solver].options)
    return copy.deepcopy(options)


class ReferenceError(RuntimeError):
    """A stored value or fingerprint disagrees with a fresh computation."""


#: The libraries that produce and check reference values (their versions are in each record).
VERSION_PACKAGES = ("cvxpy", "numpy", "scipy", "clarabel", "ecos", "scs", "highspy")


def versions(packages=VERSION_PACKAGES) -> dict:
    """``{"python": version, <package>: version or None}`` for every name in ``packages``
    (default: the libraries that produce and check reference values); read once per process."""
    return {"python": platform.python_version(), **{pkg: _version(pkg) for pkg in packages}}


@functools.lru_cache(maxsize=None)
def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def reference_path(problem_id: str, directory: str | os.PathLike | None = None) -> Path:
    """The file of ``problem_id``'s record in ``directory`` (default :func:`reference_dir`).

    ValueError unless ``problem_id`` is a plain file name (:func:`._files.check_name`) and the
    path stays directly inside the folder (:func:`._files.path_in`)."""
    return path_in(directory or reference_dir(), problem_id, ".json", "problem ID")


def _in_source_checkout() -> bool:
    """Whether the package is imported from a source checkout (the project folder, installed
    editable or not at all) rather than installed from a wheel: the folder above the package
    holds ``pyproject.toml``."""
    return (PACKAGED_REFERENCE_DIR.parents[2] / "pyproject.toml").is_file()


def check_directory(directory: str | os.PathLike | None = None) -> Path:
    """The reference folder read when no ``directory`` is given (:func:`reference_dir`), or
    ``directory``; ValueError naming it (and :data:`REFERENCE_DIR_ENV_VAR`) when it is not an
    existing folder: a mistyped ``INFPUSH_CVX_REFERENCE_DIR`` made every solve "disagree" with
    a stored value it could not find (exit 1), and a file there failed on every record."""
    target = Path(directory or reference_dir())
    if not target.is_dir():
        what = "is not a folder" if os.path.lexists(target) else "does not exist"
        source = "" if directory or target == PACKAGED_REFERENCE_DIR else \
            f" (set by {REFERENCE_DIR_ENV_VAR})"
        raise ValueError(f"reference folder {target}{source} {what}")
    return target


def writable_directory(directory: str | os.PathLike | None = None) -> Path:
    """The reference folder that :func:`regenerate` writes to: ``directory``,
    else :func:`reference_dir`.

    ValueError when that is the reference folder inside an installed package (a wheel install):
    records written there would be lost or mixed with another version on the next install. In a
    source checkout the packaged folder is the project's own and is written to.
    """
    target = Path(directory or reference_dir())
    if target.resolve() == PACKAGED_REFERENCE_DIR.resolve() and not _in_source_checkout():
        raise ValueError(
            f"directory: refusing to write reference values into the installed package "
            f"({target}); pass directory=... or set {REFERENCE_DIR_ENV_VAR} to a folder of your "
            f"own (copy the stored values there first to keep them)")
    return target


def load_reference(problem_id: str, directory: str | os.PathLike | None = None) -> dict | None:
    """The stored record of a problem, checked, or None when there is none.

    :class:`~infpush_cvx.files.MalformedFileError` naming the file when it is not a valid record
    of ``problem_id`` (module docstring): not a regular file of at most 16 MiB (a FIFO, a
    device), not UTF-8 JSON (a truncated file), a key given twice, nested too deep, a missing
    key, a value of the wrong type, NaN or infinity anywhere, a status other than optimal, a
    negative tolerance, or the record of another problem. ValueError when ``problem_id`` is not
    a valid problem ID.
    """
    path = reference_path(problem_id, directory)
    try:
        data = read_small_file(path, "reference record")
    except FileNotFoundError:
        return None
    record = check_record(parse_record(data, path), str(path))
    if record["problem_id"] != problem_id:
        raise MalformedFileError(f"{path}: holds the record of problem {record['problem_id']!r}, "
                         f"not {problem_id!r}")
    return record


def _no_record(problem_id: str) -> str:
    return (f"{problem_id}: no stored value (run `infpush-cvx reference regenerate --only "
            f"{problem_id}`)")


class StaleReferenceWarning(UserWarning):
    """A stored value was not used: its record no longer matches the problem (its instance
    regenerates to another fingerprint, or the catalog's definition changed)."""


@dataclass(frozen=True)
class StoredValue:
    """The stored optimal value of a problem as it may be used for agreement.

    ``value`` is None when no value may be used, and ``reason`` then says why (no record; the
    record no longer matches the problem, with the command that stores a fresh value);
    ``reason`` is "" when ``value`` is given."""

    value: float | None
    reason: str = ""


def stored_value(problem_id: str, data: BipartiteData | PairData | None = None, *,
                 directory: str | os.PathLike | None = None) -> StoredValue:
    """The stored optimal value of ``problem_id`` for comparing a solve with, when it still
    belongs to the problem.

    A record whose instance fingerprint differs from the instance's (``data``, else regenerated
    once per process) or whose problem definition differs from the catalog's gives no value:
    ``StoredValue(None, reason)`` and a :class:`StaleReferenceWarning` with the same text, which
    names the problem, what changed, and says to run ``infpush-cvx reference regenerate --only
    <id>``. No record: ``StoredValue(None, "no stored value ...")``, without a warning. An
    unreadable record raises, as :func:`load_reference` does; so does an instance whose data set
    is not available (FileNotFoundError).
    """
    record = load_reference(problem_id, directory)
    if record is None:
        return StoredValue(None, _no_record(problem_id))
    spec = _catalog.get(problem_id)
    changes = [c for c in (_instance_change(spec, record, data),
                           _definition_change(record, spec)) if c is not None]
    if not changes:
        return StoredValue(float(record["opt_val"]))
    reason = (f"{problem_id}: stored value {record['opt_val']!r} not used: "
              f"{'; '.join(changes)}; run `infpush-cvx reference regenerate --only "
              f"{problem_id}` to see the change and store a fresh value (add --accept-changes)")
    warnings.warn(reason, StaleReferenceWarning, stacklevel=2)
    return StoredValue(None, reason)


def dataset_provenance(instance: str) -> dict | None:
    """Name, file, SHA-256 and subset parameters of the real data set behind a catalog instance
    (None for generated instances)."""
    spec = _catalog.load_catalog().instances[instance]
    if spec.generator != "real_subset":
        return None
    from ..data.datasets import DATASETS
    name = spec.params["dataset"]
    fname, digest, _ = DATASETS[name]
    return {"name": name, "file": fname, "sha256": digest, "generator": spec.generator,
            "params": dict(spec.params)}


def _solve(problem: cp.Problem, solver: str, options: dict) -> tuple:
    """``(status, value, seconds)`` of ``problem`` solved by ``solver`` with exactly
    ``options`` (wall-clock, CVXPY's compilation included)."""
    start = time.perf_counter()
    out = cvxpy_solvers.solve(problem, replace(cvxpy_solvers.spec(solver),
                                               options=copy.deepcopy(options)))
    return out.solver_status, out.value, time.perf_counter() - start


def compute_reference(problem_id: str) -> dict:
    """Solve a catalog problem to high accuracy, cross-check it and return its record.

    Raises :class:`ReferenceError` when the solve is not optimal or the cross-check disagrees
    beyond ``CROSS_CHECK_RTOL`` or ends with a status its tier does not accept
    (``TIER_CROSS_CHECK_STATUSES``; "optimal" only, unless stated there).
    """
    spec = _catalog.get(problem_id)
    data = _catalog.instance_data(spec.instance)
    reference_options = cvxpy_solvers.reference_options(spec.problem_class)
    status, value, reference_time = _solve(spec.build(data), cvxpy_solvers.REFERENCE_SOLVER,
                                           reference_options)
    if status != cp.OPTIMAL or value is None or not math.isfinite(value):
        raise ReferenceError(f"{problem_id}: reference solve by {cvxpy_solvers.REFERENCE_SOLVER} "
                             f"ended with status {status!r} and the value {value!r}")
    value = float(value)
    checker = cvxpy_solvers.CROSS_CHECK[spec.problem_class]
    check_options = cross_check_options(spec.tier, checker)
    check_status, check_value, check_time = _solve(spec.build(data), checker, check_options)
    check_err = cvxpy_solvers.relative_error(check_value, value)
    accepted = TIER_CROSS_CHECK_STATUSES.get(spec.tier, (cp.OPTIMAL,))
    # written "not <=" so that a NaN error is a disagreement
    if check_status not in accepted or not check_err <= cvxpy_solvers.CROSS_CHECK_RTOL:
        raise ReferenceError(
            f"{problem_id}: cross-check by {checker} disagrees (status {check_status!r}, "
            f"value {check_value!r} vs {value!r}, relative error {check_err:.2e})")
    from ..data.degeneracy import is_degenerate
    record = {
        "problem_id": problem_id,
        "opt_val": value,
        "status": status,
        "solver": cvxpy_solvers.REFERENCE_SOLVER,
        "solver_options": reference_options,
        "tolerance": cvxpy_solvers.CROSS_CHECK_RTOL,
        "cross_check": {"solver": checker, "status": check_status, "value": float(check_value),
                        "relative_error": check_err, "options": check_options},
        "instance": spec.instance,
        "instance_fingerprint": data.fingerprint(),
        "spec_fingerprint": spec.fingerprint(),
        "degenerate": bool(is_degenerate(data)) if isinstance(data, BipartiteData) else None,
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


def _definition_changes(before: dict, after: dict) -> list[str]:
    """What differs between two problem definitions: ``["options.scaling 'seed' -> 'paper'",
    "lam 1.0 -> 0.1"]``, formulation first, lambda last."""
    def flat(definition):
        return {"formulation": definition["formulation"], "lam": definition["lam"],
                **{f"options.{key}": value for key, value in definition["options"].items()}}

    def shown(values, key):
        return repr(values[key]) if key in values else "unset"

    old, new = flat(before), flat(after)
    keys = sorted(dict.fromkeys([*new, *old]), key=lambda key: key == "lam")  # stable: lam last
    return [f"{key} {shown(old, key)} -> {shown(new, key)}" for key in keys
            if old.get(key) != new.get(key) or (key in old) != (key in new)]


def _definition_change(record: dict, spec) -> str | None:
    """Why ``record`` was not stored for the catalog's definition of ``spec``, or None.

    The stored definition fingerprint decides; the record's ``formulation`` names what
    changed."""
    stored_fingerprint = record["spec_fingerprint"]
    if stored_fingerprint == spec.fingerprint():
        return None
    stored = record["formulation"]  # ProblemSpec.definition(), its formulation under "name"
    changes = _definition_changes({**stored, "formulation": stored["name"]}, spec.definition())
    detail = "; ".join(changes) or (f"definition fingerprint {stored_fingerprint[:16]}..., "
                                    f"now {spec.fingerprint()[:16]}...")
    return f"problem definition changed since the value was stored ({detail})"


def _differences(old: dict, fresh: dict, spec) -> list[str]:
    """What differs between a stored record and a freshly computed one of ``spec``."""
    changes = []
    if old["instance_fingerprint"] != fresh["instance_fingerprint"]:
        changes.append("instance fingerprint changed")
    definition = _definition_change(old, spec)
    if definition is not None:
        changes.append(definition)
    err = cvxpy_solvers.relative_error(fresh["opt_val"], old["opt_val"])
    if not err <= STORED_RTOL:  # "not <=": a NaN is a change
        changes.append(f"value {old['opt_val']!r} -> {fresh['opt_val']!r} "
                       f"(relative change {err:.1e})")
    return changes


def regenerate(ids: Iterable[str] | None = None, *, accept_changes: bool = False,
               directory: str | os.PathLike | None = None,
               progress: Callable[[list[str]], Iterable[str]] | None = None,
               tier: str = _catalog.DEFAULT_TIER) -> dict[str, str]:
    """Compute reference values and store the new ones; returns ``{id: action}``.

    ``ids`` default to the problems of ``tier`` (``"core"``; ``"all"`` for every tier).
    Records are read from and written to ``directory`` (default :func:`reference_dir`); writing
    into an installed package's own folder is refused before any solve
    (:func:`writable_directory`). ``progress`` wraps the list of IDs (a progress bar).

    Actions: ``"written"`` (no value was stored), ``"unchanged"`` (the stored record agrees:
    value within ``STORED_RTOL``, same instance and definition; the file is left as it was),
    ``"replaced: <what changed>"`` (it differs, and ``accept_changes`` was given).

    A stored record differs when its value moved beyond ``STORED_RTOL`` (NaN included), its
    instance or problem definition changed, or it cannot be read (:func:`load_reference`).
    Without ``accept_changes`` a difference raises :class:`ReferenceError` with one line per
    differing problem, after the others were processed; those files are left as they were.
    A fresh record that is not valid (a NaN value) raises :class:`ReferenceError` at once.
    """
    directory = writable_directory(directory)
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    actions, refused = {}, []
    for pid in (ids if progress is None else progress(ids)):
        spec = _catalog.get(pid)
        try:
            record = check_record(compute_reference(pid), f"{pid}: fresh record")
        except ValueError as exc:
            raise ReferenceError(str(exc)) from None
        path = reference_path(pid, directory)
        try:
            old = load_reference(pid, directory)
            changes = None if old is None else _differences(old, record, spec)
        except ValueError as exc:
            changes = [f"stored record not readable: {exc}"]
        if changes == []:
            actions[pid] = "unchanged"
        elif changes is None or accept_changes:
            write_record(path, record)
            actions[pid] = "written" if changes is None else "replaced: " + "; ".join(changes)
        else:
            refused.append(f"{pid}: {'; '.join(changes)}; not replaced (rerun with "
                           f"--accept-changes to replace {path})")
            actions[pid] = "refused"
    if refused:
        raise ReferenceError("stored reference values differ:\n  " + "\n  ".join(refused))
    return actions


def check_fingerprint(problem_id: str, data: BipartiteData | PairData | None = None) -> None:
    """Raise :class:`ReferenceError` when the regenerated instance differs from the stored one."""
    record = load_reference(problem_id)
    if record is None:
        raise ReferenceError(_no_record(problem_id))
    change = _instance_change(_catalog.get(problem_id), record, data)
    if change is not None:
        raise ReferenceError(f"{problem_id}: {change}")


def _instance_change(spec, record: dict, data=None) -> str | None:
    """What says that ``spec``'s instance (``data``, else regenerated) is not the one ``record``
    was stored for (its fingerprint), or None."""
    data = _catalog.instance_data(spec.instance) if data is None else data
    fingerprint, stored = data.fingerprint(), record["instance_fingerprint"]
    if fingerprint == stored:
        return None
    return (f"instance {spec.instance!r} regenerated with fingerprint {fingerprint[:16]}..., "
            f"stored {stored[:16]}...")


#: Target relative duality gap of the re-solve by :func:`verify`.
RESOLVE_TOL = 1e-6
#: Agreement of a re-solve with a stored value: twice the target gap, as for the certified
#: solvers everywhere (``registry.rtol``, tests/solvers/test_catalog_values.py).
RESOLVE_RTOL = registry.rtol(RESOLVE_TOL)


def certified_value(spec: _catalog.ProblemSpec, data: BipartiteData | PairData | None = None, *,
                    tol: float = RESOLVE_TOL) -> tuple[str, float]:
    """The optimal value of a catalog problem by the project's own certified solver
    (:func:`.registry.certified_label`), independent of CVXPY; returns ``(solver label, value)``.

    The solver stops when its relative duality gap is at most ``tol``, so the value is within
    about ``tol`` of the optimum. A dual problem's value is the primal's converted
    (:func:`infpush_cvx.formulations._duals.primal_value_from_dual` is linear in the dual value).
    :class:`ReferenceError` when the solver does not certify its answer.
    """
    data = _catalog.instance_data(spec.instance) if data is None else data
    label = registry.certified_label(spec)
    result = registry.solve(spec, label, data, tol=tol)
    if result.status not in CERTIFIED:
        raise ReferenceError(f"{spec.id}: the re-solve by {label} ended with status "
                             f"{result.status!r} ({result.message})")
    value = float(result.objective)
    if spec.formulation.endswith("_dual"):
        from ..formulations._duals import primal_value_from_dual
        value /= primal_value_from_dual(
            1.0, spec.lam, loss=spec.formulation.removesuffix("_dual"),
            scaling=spec.options.get("scaling", "paper"), m=data.wp_sum, n=data.wn_sum)
    return label, value


def verify(problem_id: str, data: BipartiteData | PairData | None = None, *,
           resolve: bool = True, directory: str | os.PathLike | None = None) -> None:
    """Check everything the stored value of a problem depends on; :class:`ReferenceError` saying
    which check failed.

    1. A valid record is stored (an unreadable one is reported naming its file).
    2. The instance regenerates to the stored instance fingerprint (``data``: the instance,
       to skip regenerating it).
    3. The catalog's definition of the problem has the stored definition fingerprint; the
       message names what changed (``lam 0.01 -> 0.02``).
    4. With ``resolve``, :func:`certified_value` agrees with the stored value within
       ``RESOLVE_RTOL``. It runs when 2 and 3 pass (otherwise the value is known to be stale).

    A real data set that is not available raises FileNotFoundError (the caller may skip).
    """
    spec = _catalog.get(problem_id)
    try:
        record = load_reference(problem_id, directory)
    except ValueError as exc:
        raise ReferenceError(f"{exc} (`infpush-cvx reference regenerate --only {problem_id} "
                             f"--accept-changes` recomputes it)") from None
    if record is None:
        raise ReferenceError(_no_record(problem_id))
    data = _catalog.instance_data(spec.instance) if data is None else data
    failures = [c for c in (_instance_change(spec, record, data),
                            _definition_change(record, spec)) if c is not None]
    if resolve and not failures:
        label, value = certified_value(spec, data)
        err = cvxpy_solvers.relative_error(value, record["opt_val"])
        if not err <= RESOLVE_RTOL:  # "not <=": a NaN is a disagreement
            failures.append(f"stored value {record['opt_val']!r} disagrees with a re-solve by "
                            f"{label}: {value!r} (relative error {err:.1e} > {RESOLVE_RTOL:g})")
    if failures:
        raise ReferenceError(f"{problem_id}: " + "; ".join(failures))
