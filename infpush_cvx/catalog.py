"""The problem catalog: named instances and problems declared in ``problems/catalog.toml``.

>>> from infpush_cvx import catalog
>>> for p in catalog.problems(["infinite_push_0"]):        # the seed's problem dictionaries
...     p["problem"].solve(); print(p["problemID"], p["opt_val"])

Instances are generated from their declared generator, parameters and seed (once per process),
and problems are built by the problem factory. ``opt_val`` is the stored reference value.

Tiers: every instance and problem belongs to a tier, ``"core"`` unless the catalog says otherwise
(``tier = "real"`` on an instance; a problem inherits its instance's tier unless it, or its
family, names one). :func:`problem_ids` and everything built on it (``infpush-cvx check`` and
``bench``, the catalog tests) select the core tier by default; ``tier="real"`` or ``tier="all"``
select the others. The real tier holds subsets of real data sets (:func:`generators.real_subset`),
large for CVXPY, read from the data folders of :mod:`infpush_cvx.datasets`.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import cvxpy as cp

from . import formulations, generators
from . import scaling as _scaling

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CATALOG = Path(os.environ.get("INFPUSH_CVX_CATALOG", REPO_ROOT / "problems" / "catalog.toml"))

GENERATORS = {
    "infinite_push_0": lambda: generators.infinite_push_0()[0],
    "normalized_bipartite": generators.normalized_bipartite,
    "planted_bipartite": generators.planted_bipartite,
    "degenerate_bipartite": generators.degenerate_bipartite,
    "rank2plan_pairs": generators.rank2plan_pairs,
    "real_subset": generators.real_subset,
}

#: The tier of instances and problems the catalog does not place elsewhere; the default selection.
DEFAULT_TIER = "core"
#: The selection of every tier.
ALL_TIERS = "all"

FORMULATIONS = {
    "infinite_push": formulations.infinite_push,
    "ranksvm": formulations.ranksvm,
    "infinite_push_dual": formulations.infinite_push_dual,
    "ranksvm_dual": formulations.ranksvm_dual,
    "rank2plan_lp": formulations.rank2plan_lp,
}

#: The loss each bipartite formulation's lambda refers to (for scaling conversions).
_LOSS = {"infinite_push": "infinite_push", "infinite_push_dual": "infinite_push",
         "ranksvm": "ranksvm", "ranksvm_dual": "ranksvm"}


@dataclass(frozen=True)
class InstanceSpec:
    name: str
    generator: str
    params: dict = field(default_factory=dict)
    tier: str = DEFAULT_TIER

    def generate(self):
        """The instance data (BipartiteData or PairData), freshly generated."""
        return GENERATORS[self.generator](**self.params)


@dataclass(frozen=True)
class ProblemSpec:
    """One catalog problem: an instance, a formulation, its options and lambda."""

    id: str
    instance: str
    formulation: str
    options: dict
    lam: float
    tier: str = DEFAULT_TIER

    @property
    def problem_class(self) -> str:
        """"LP" (l1 penalties, Rank2Plan), "QP" (l2 primal, duals) for choosing solvers."""
        if self.formulation == "rank2plan_lp" or self.options.get("penalty") == "l1":
            return "LP"
        return "QP"

    @property
    def scaling(self) -> str:
        """"paper" or "seed" for the bipartite problems, "" for Rank2Plan (it has one scaling)."""
        return self.options.get("scaling", "")

    def build(self, data=None) -> cp.Problem:
        """A fresh cvxpy.Problem (pass ``data`` to skip regenerating the instance)."""
        data = instance_data(self.instance) if data is None else data
        return FORMULATIONS[self.formulation](data, self.lam, **self.options)


@dataclass(frozen=True)
class Catalog:
    instances: dict
    problems: dict
    path: Path


def _check_known(value, name, known, where):
    if value not in known:
        raise ValueError(f"{where}: unknown {name} {value!r}; expected one of {sorted(known)}")


_TIER_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _check_tier(tier, where: str) -> str:
    if not isinstance(tier, str) or not _TIER_NAME.fullmatch(tier) or tier == ALL_TIERS:
        raise ValueError(f"{where}: tier must be a lower-case name other than {ALL_TIERS!r}, "
                         f"got {tier!r}")
    return tier


def _problem_tier(entry: dict, instance: InstanceSpec, where: str) -> str:
    """A problem's tier: its own (or its family's), else its instance's."""
    return _check_tier(entry["tier"], where) if "tier" in entry else instance.tier


def _family_problems(family: dict, instances: dict, where: str):
    formulation = family["formulation"]
    _check_known(formulation, "formulation", FORMULATIONS, where)
    vary = family.get("vary", {})
    keys = list(vary)
    for inst_name in family["instances"]:
        _check_known(inst_name, "instance", instances, where)
        tier = _problem_tier(family, instances[inst_name], where)
        for values in itertools.product(*(vary[k] for k in keys)):
            options = {**family.get("options", {}), **dict(zip(keys, values))}
            pid = "_".join([family["prefix"], inst_name, *map(str, values)])
            if "lam_paper" in family:
                lam = _lambda_in_scaling(family["lam_paper"], formulation, options,
                                         instances[inst_name], where)
            else:
                lam = float(family["lam"])
            yield ProblemSpec(pid, inst_name, formulation, options, lam, tier)


def _lambda_in_scaling(lam_paper, formulation, options, instance: InstanceSpec,
                       where: str = "") -> float:
    scaling = options.get("scaling", "paper")
    if scaling == "paper":
        return float(lam_paper)
    if instance.tier != DEFAULT_TIER:
        # The conversion needs m and n, i.e. the instance generated while the catalog loads.
        raise ValueError(f"{where}: lam_paper with {scaling!r} scaling on the {instance.tier!r} "
                         f"instance {instance.name!r} would generate it (and read its data) "
                         f"whenever the catalog loads; use paper scaling or an explicit lam")
    data = instance_data(instance.name)
    return float(_scaling.from_paper_lambda(
        lam_paper, scaling, loss=_LOSS[formulation], penalty=options.get("penalty", "l2"),
        m=data.m, n=data.n))


@functools.lru_cache(maxsize=None)
def load_catalog(path: str | os.PathLike | None = None) -> Catalog:
    """Parse and check the catalog file (default ``problems/catalog.toml``)."""
    path = Path(path) if path is not None else DEFAULT_CATALOG
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    instances = {}
    for name, entry in raw.get("instances", {}).items():
        where = f"{path}: instance {name}"
        _check_known(entry.get("generator"), "generator", GENERATORS, where)
        instances[name] = InstanceSpec(name, entry["generator"], dict(entry.get("params", {})),
                                       _check_tier(entry.get("tier", DEFAULT_TIER), where))
    _INSTANCE_SPECS.update(instances)
    problems = {}

    def add(spec: ProblemSpec):
        if spec.id in problems:
            raise ValueError(f"{path}: problem {spec.id!r} is declared twice")
        problems[spec.id] = spec

    for pid, entry in raw.get("problems", {}).items():
        where = f"{path}: problem {pid}"
        _check_known(entry.get("instance"), "instance", instances, where)
        _check_known(entry.get("formulation"), "formulation", FORMULATIONS, where)
        add(ProblemSpec(pid, entry["instance"], entry["formulation"],
                        dict(entry.get("options", {})), float(entry["lam"]),
                        _problem_tier(entry, instances[entry["instance"]], where)))
    for k, family in enumerate(raw.get("families", [])):
        for spec in _family_problems(family, instances, f"{path}: family {k}"):
            add(spec)
    return Catalog(instances, problems, path)


_INSTANCE_SPECS: dict = {}


@functools.lru_cache(maxsize=None)
def instance_data(name: str):
    """The generated data of a catalog instance (cached per process)."""
    if name not in _INSTANCE_SPECS:
        load_catalog()
    if name not in _INSTANCE_SPECS:
        raise ValueError(f"unknown instance {name!r}; expected one of {sorted(_INSTANCE_SPECS)}")
    return _INSTANCE_SPECS[name].generate()


def tiers() -> list[str]:
    """The tiers of the catalog's problems, ``"core"`` first."""
    found = {spec.tier for spec in load_catalog().problems.values()} | {DEFAULT_TIER}
    return [DEFAULT_TIER] + sorted(found - {DEFAULT_TIER})


def problem_ids(pattern: str | None = None, tier: str = DEFAULT_TIER) -> list[str]:
    """The problem IDs of ``tier`` (default ``"core"``; ``"all"`` for every tier), optionally
    only those containing ``pattern``."""
    known = tiers()
    if tier != ALL_TIERS and tier not in known:
        raise ValueError(f"unknown tier {tier!r}; expected one of {known + [ALL_TIERS]}")
    return [pid for pid, spec in load_catalog().problems.items()
            if (tier == ALL_TIERS or spec.tier == tier) and (pattern is None or pattern in pid)]


def get(problem_id: str) -> ProblemSpec:
    problems = load_catalog().problems
    if problem_id not in problems:
        raise ValueError(f"unknown problem {problem_id!r}; see infpush_cvx.catalog.problem_ids()")
    return problems[problem_id]


def problems(ids=None):
    """Yield the seed's benchmark dictionaries ``{"problemID", "problem", "opt_val"}``.

    ``opt_val`` is the stored reference value (None when none is stored yet).
    """
    from .reference import load_reference

    for pid in (problem_ids() if ids is None else ids):
        spec = get(pid)
        ref = load_reference(pid)
        yield {"problemID": pid, "problem": spec.build(),
               "opt_val": None if ref is None else ref["opt_val"]}
