"""The problem catalog: named instances and problems declared in ``catalog.toml``.

The catalog ships inside the package (``infpush_cvx/catalog/problems/catalog.toml``, read with
:mod:`importlib.resources`, so it is found in a source checkout, an editable install and an
installed wheel alike). Another catalog file is used when the environment variable
``INFPUSH_CVX_CATALOG`` names it (read at each :func:`load_catalog` call, so a change made after
import counts) or when :func:`load_catalog` is given its ``path``. The specs it hands out are
shared by every caller, so their ``options`` and ``params`` are read-only mappings.

Instances are generated from their declared generator, parameters and seed (once per process),
and problems are built by the problem factory.

Tiers: every instance and problem belongs to a tier, ``"core"`` unless the catalog says otherwise
(``tier = "real"`` on an instance; a problem inherits its instance's tier unless it, or its
family, names one). :func:`problem_ids` and everything built on it (``infpush-cvx check`` and
``bench``, the catalog tests) select the core tier by default; ``tier="real"`` or ``tier="all"``
select the others. The real tier holds subsets of real data sets (:func:`generators.real_subset`),
large for CVXPY, read from the data folders of :mod:`infpush_cvx.data.datasets`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.resources
import inspect
import itertools
import json
import os
import re
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import cvxpy as cp

from .. import formulations
from ..data import generators
from ..formulations import scaling as _scaling
from .._validation import check_choice, check_scalar
from ..data.containers import BipartiteData, PairData
from ..data.queries import QueryData, QueryWarning
from ..data.kernels import KERNELS, check_kernel
from ..files import MalformedFileError
from ..formulations._common import FORMS
from ..formulations._pnorm_push import check_p
from ..formulations._toppush import LOSSES as TOPPUSH_LOSSES
from ..formulations._query_infinite_push import check_threshold
from ..formulations._query_ranksvm import LOSSES as QUERY_RANKSVM_LOSSES
from ..formulations._query_ranksvm import NORMALIZATIONS as QUERY_NORMALIZATIONS
from ..formulations._query_ranksvm import PAIR_WEIGHTS as QUERY_PAIR_WEIGHTS
from ..solvers.registry import model_of, models
from ._files import check_name, read_small_file


def package_data(*parts: str) -> Path:
    """The path of a data file or folder shipped inside the package: ``package_data("problems",
    "catalog.toml")`` is ``infpush_cvx/catalog/problems/catalog.toml``.

    Found with :func:`importlib.resources.files`, so it is the installed copy for a wheel install
    and the checkout's own file for a source checkout or an editable install. The package must be
    on the file system (not imported from a zip archive); the path is returned whether or not
    the file exists.
    """
    return Path(os.fspath(importlib.resources.files(__package__).joinpath(*parts)))


#: Environment variable naming a catalog file to use instead of the packaged one.
CATALOG_ENV_VAR = "INFPUSH_CVX_CATALOG"
#: The catalog shipped with the package.
PACKAGED_CATALOG = package_data("problems", "catalog.toml")


def default_catalog() -> Path:
    """The catalog :func:`load_catalog` reads by default: ``$INFPUSH_CVX_CATALOG`` when set
    (read now), else the packaged one."""
    return Path(os.environ.get(CATALOG_ENV_VAR) or PACKAGED_CATALOG)


#: The catalog's generators by name: those of :mod:`infpush_cvx.data.generators` (the data of
#: ``infinite_push_0``, which also returns its solution).
def _letor_like(n_queries: int, docs_per_query: int, n_features: int, *, seed: int,
                noise: float = 1.0, vary_sizes: bool = True):
    """:func:`generators.letor_like` with MSLR-WEB10K's label shares (its default): the
    catalog's parameters are numbers and flags, each checked by its rule."""
    return generators.letor_like(n_queries, docs_per_query, n_features, seed=seed, noise=noise,
                                 vary_sizes=vary_sizes)


GENERATORS = {"infinite_push_0": lambda: generators.infinite_push_0()[0],
              "letor_like": _letor_like,
              **{name: getattr(generators, name) for name in (
                  "normalized_bipartite", "planted_bipartite", "degenerate_bipartite",
                  "rank2plan_pairs", "real_subset")}}

#: The tier of instances and problems the catalog does not place elsewhere; the default selection.
DEFAULT_TIER = "core"
#: The selection of every tier.
ALL_TIERS = "all"

#: Each catalog formulation and its CVXPY problem (``formulations.<name>_problem``): the
#: formulations the registered models answer (``Model.formulations``), so a model's
#: registration is the catalog's too.
FORMULATIONS = {name: getattr(formulations, f"{name}_problem")
                for model in models().values() for name in model.formulations}


class ReadOnlyDict(dict):
    """A dict that refuses changes (TypeError), as the catalog's specs are shared by every
    caller of the cached catalog; ``dict(...)`` copies it. Still JSON, pickle and copy as a
    dict."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a catalog spec is shared by every caller: change a copy (dict(...))")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return ReadOnlyDict, (dict(self),)


@dataclass(frozen=True)
class InstanceSpec:
    name: str
    generator: str
    params: dict = field(default_factory=dict)
    tier: str = DEFAULT_TIER

    def __post_init__(self):
        # shared by every caller of the cached catalog: read-only
        object.__setattr__(self, "params", ReadOnlyDict(self.params))

    def generate(self) -> BipartiteData | PairData:
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

    def __post_init__(self):
        # shared by every caller of the cached catalog: read-only
        object.__setattr__(self, "options", ReadOnlyDict(self.options))

    @property
    def problem_class(self) -> str:
        """The model's problem class for choosing CVXPY solvers (its ``problem_class``: "LP" for
        Rank2Plan, "EXP" for the P-Norm Push's exponential cones, "QP" otherwise), "LP" with an
        l1 penalty (its losses are piecewise linear)."""
        l1 = self.options.get("penalty") == "l1"
        return "LP" if l1 else model_of(self.formulation).problem.problem_class

    @property
    def scaling(self) -> str:
        """"paper" or "seed" for the bipartite problems, "" for Rank2Plan (it has one scaling)."""
        return self.options.get("scaling", "")

    def build(self, data: BipartiteData | PairData | None = None) -> CatalogProblem:
        """A fresh :class:`CatalogProblem` (pass ``data`` to skip regenerating the instance)."""
        data = instance_data(self.instance) if data is None else data
        return CatalogProblem(FORMULATIONS[self.formulation](data, self.lam, **self.options), self)

    def definition(self) -> dict:
        """What determines the optimal value besides the instance's data: the formulation, its
        options (penalty, scaling, form) and lambda.

        The ID, the tier and the instance's name do not: the tier only selects runs and the
        cross-check, and the data is fingerprinted on its own (``data.fingerprint()``)."""
        return {"formulation": self.formulation, "options": dict(self.options),
                "lam": float(self.lam)}

    def fingerprint(self) -> str:
        """SHA-256 of :meth:`definition` as canonical JSON (sorted keys, no spaces).

        Stored beside each reference value, so that a problem whose definition changed after
        its value was stored is detected (``infpush-cvx reference verify``)."""
        text = json.dumps(self.definition(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()


class CatalogProblem(cp.Problem):
    """A catalog problem: a ``cvxpy.Problem`` whose ``solve`` consults the project's solver table
    first (:func:`infpush_cvx.catalog.cvxpy_solvers.check_handles`, the table every entry point
    uses).

    So ``problem.solve(solver="HIGHS")`` on an l2 problem is a ValueError naming the solver and
    the problem class, instead of a solve that hangs inside HiGHS's QP path. Everything else is
    CVXPY's own ``Problem`` (the same objective, constraints, variables and parameters).
    """

    def __init__(self, problem: cp.Problem, spec: ProblemSpec):
        super().__init__(problem.objective, problem.constraints)
        self.problem_id, self.problem_class = spec.id, spec.problem_class

    def solve(self, *args, **kwargs):
        solver = kwargs.get("solver", args[0] if args and isinstance(args[0], str) else None)
        if solver is not None:
            from ..solvers.engines.cvxpy_backend import quiet_highs
            from . import cvxpy_solvers  # imports CVXPY's solver table; import when used
            if cvxpy_solvers.check_handles(solver, self.problem_class,
                                           self.problem_id).name == "HIGHS":
                quiet_highs()  # quiet by default, as through the backend
        return super().solve(*args, **kwargs)


@dataclass(frozen=True)
class Catalog:
    instances: dict
    problems: dict
    path: Path


@contextlib.contextmanager
def _at(where: str):
    """Put ``where`` (an entry of the catalog, a field of it) in front of the message of a check's
    TypeError, ValueError or OverflowError, raised again as a ValueError; nested, they name the
    entry and the field, and :func:`_load_catalog` puts the file's path in front of them all."""
    try:
        yield
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _check_known(value, name, known) -> None:
    """:func:`check_choice` of a name read from the file, looked up in a list so that a value
    that is no name (a list: unhashable) is an unknown name rather than a TypeError."""
    check_choice(value, name, list(known))


#: The keys each kind of catalog entry may hold; any other key is a typo, refused rather than
#: silently ignored.
_TOP_KEYS = ("instances", "problems", "families")
_INSTANCE_KEYS = ("generator", "params", "tier")
_PROBLEM_KEYS = ("instance", "formulation", "options", "lam", "tier")
_FAMILY_KEYS = ("prefix", "formulation", "instances", "options", "lam", "lam_paper", "vary", "tier")


def _check_keys(entry, allowed, required) -> dict:
    """``entry`` as a dict, after refusing unknown and missing keys."""
    if not isinstance(entry, dict):
        raise ValueError(f"expected a table, got {type(entry).__name__}")
    for key in entry:
        check_choice(key, "key", allowed)
    for key in required:
        if key not in entry:
            raise ValueError(f"missing key {key!r}")
    return entry


def _table(entry: dict, key: str) -> dict:
    """The table ``entry[key]`` (empty when absent) as a new dict."""
    value = entry.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be a table, got {type(value).__name__}")
    return dict(value)


def _lambda(value, name: str) -> float:
    """A lambda: a finite nonnegative number (:func:`check_scalar`)."""
    try:
        return check_scalar(value, name, nonnegative=True)
    except OverflowError:  # an integer beyond float range
        raise ValueError(f"{name} must be finite, got an integer too large for a float") from None


def _check_keywords(function, names, what: str, owner: str) -> None:
    """Refuse ``names`` that ``function`` (a generator or a formulation: no ``**kwargs``) does not
    take as keywords, besides a formulation's ``data`` and ``lam``, while the catalog loads
    (the instances and problems are built later, where the error would not name the file)."""
    known = {p.name for p in inspect.signature(function).parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"data", "lam"}
    for name in names:
        if name not in known:
            raise ValueError(f"unknown {what} {name!r} of {owner}; expected one of {sorted(known)}")


def _one_of(choices):
    """The check of an option that names one of ``choices``."""
    return lambda value, name: _check_known(value, name, choices)


#: The check of every formulation option's value, by name (an option means the same in every
#: formulation that takes it); run while the catalog loads, so that a value no formulation
#: takes (``penalty = "l7"``) is an error naming the file, not a failure of ``check``.
OPTION_CHECKS = {
    "penalty": _one_of(_scaling.PENALTIES),
    "scaling": _one_of(_scaling.SCALINGS),
    "form": _one_of(FORMS),
    "loss": _one_of((*TOPPUSH_LOSSES, *QUERY_RANKSVM_LOSSES)),
    "normalization": _one_of(QUERY_NORMALIZATIONS),
    "pair_weight": _one_of(QUERY_PAIR_WEIGHTS),
    "threshold": lambda value, name: check_threshold(value),
    "kernel": _one_of(KERNELS),
    "gamma": lambda value, name: check_kernel("rbf", gamma=value),
    "degree": lambda value, name: check_kernel("poly", degree=value),
    "coef0": lambda value, name: check_kernel("poly", coef0=value),
    "p": lambda value, name: check_p(value),
}


def _check_options(formulation: str, options: dict, vary: dict) -> None:
    """Refuse option names the formulation does not take and values no formulation takes
    (:data:`OPTION_CHECKS`), in ``options`` and in the lists of values of ``vary``; the message
    names the field (``options.penalty``, ``vary.scaling[1]``)."""
    _check_keywords(FORMULATIONS[formulation], [*options, *vary], "option",
                    f"formulation {formulation!r}")
    fields = [(f"options.{key}", key, value) for key, value in options.items()]
    fields += [(f"vary.{key}[{k}]", key, value) for key, values in vary.items()
               for k, value in enumerate(values)]
    for name, key, value in fields:
        with _at(name):
            OPTION_CHECKS[key](value, key)


def _check_tier(tier) -> str:
    if isinstance(tier, str) and re.fullmatch(r"[a-z][a-z0-9_]*", tier) and tier != ALL_TIERS:
        return tier
    raise ValueError(f"tier must be a lower-case name other than {ALL_TIERS!r}, got {tier!r}")


def _instance_spec(name: str, entry) -> InstanceSpec:
    entry = _check_keys(entry, _INSTANCE_KEYS, ("generator",))
    generator = entry["generator"]
    _check_known(generator, "generator", GENERATORS)
    params = _table(entry, "params")
    _check_keywords(GENERATORS[generator], params, "parameter", f"generator {generator!r}")
    with _at(f"generator {generator!r}"):  # a missing required parameter
        inspect.signature(GENERATORS[generator]).bind(**params)
    params = generators.check_parameters(params, prefix="params.")
    return InstanceSpec(name, generator, params, _check_tier(entry.get("tier", DEFAULT_TIER)))


def _problem_spec(pid: str, entry, instances: dict) -> ProblemSpec:
    entry = _check_keys(entry, _PROBLEM_KEYS, ("instance", "formulation", "lam"))
    [spec] = _specs(entry, [entry["instance"]], instances, lambda instance, values: pid)
    return spec


def _family_problems(family: dict, instances: dict):
    family = _check_keys(family, _FAMILY_KEYS, ("prefix", "formulation", "instances"))
    prefix, names = family["prefix"], family["instances"]
    if not isinstance(prefix, str):
        raise ValueError(f"prefix must be a string, got {type(prefix).__name__}")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"instances must be a list of instance names, got {type(names).__name__}")
    if ("lam" in family) == ("lam_paper" in family):
        raise ValueError("give one of lam and lam_paper, not both" if "lam" in family
                         else "missing key 'lam' (or 'lam_paper')")
    return _specs(family, names, instances, lambda instance, values: check_name(
        "_".join([prefix, instance, *map(str, values)]), "problem ID"))


def _specs(entry: dict, names: list, instances: dict, problem_id):
    """The problems of a checked problem or family ``entry``: its formulation on each instance
    of ``names``, with its options and each combination of the values of its ``vary`` (none
    for a problem), named ``problem_id(instance name, values)``; a generator, so that its
    errors are raised where it is consumed (inside the entry's :func:`_at`)."""
    formulation = entry["formulation"]
    _check_known(formulation, "formulation", FORMULATIONS)
    lam_key = "lam" if "lam" in entry else "lam_paper"
    lam = _lambda(entry[lam_key], lam_key)
    base_options, vary = _table(entry, "options"), _table(entry, "vary")
    for key, values in vary.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"vary.{key} must be a non-empty list, got {values!r}")
    _check_options(formulation, base_options, vary)
    for name in names:
        _check_known(name, "instance", instances)
        instance = instances[name]
        # a problem's tier: its own (or its family's), else its instance's
        tier = _check_tier(entry["tier"]) if "tier" in entry else instance.tier
        for values in itertools.product(*vary.values()):
            options = {**base_options, **dict(zip(vary, values))}
            yield ProblemSpec(problem_id(name, values), name, formulation, options,
                              lam if lam_key == "lam" else
                              _lambda_in_scaling(lam, formulation, options, instance), tier)


def _lambda_in_scaling(lam_paper: float, formulation, options, instance: InstanceSpec) -> float:
    scaling = options.get("scaling", "paper")
    if scaling == "paper":
        return lam_paper
    if instance.tier != DEFAULT_TIER:
        # The conversion needs m and n, i.e. the instance generated while the catalog loads.
        raise ValueError(f"lam_paper with {scaling!r} scaling on the {instance.tier!r} instance "
                         f"{instance.name!r} would generate it (and read its data) whenever "
                         f"the catalog loads; use paper scaling or an explicit lam")
    with _at(f"lambda in {scaling!r} scaling on instance {instance.name!r}"):
        data = instance_data(instance.name)
        if not isinstance(data, QueryData):
            m, n = data.m, data.n
        else:  # a model over queries: its problem holds the weights
            with warnings.catch_warnings():  # (queries without pairs: said when it is solved)
                warnings.simplefilter("ignore", QueryWarning)
                paper = model_of(formulation).problem.from_catalog(
                    formulation, {**options, "scaling": "paper"}, 1.0, data)
            if formulation == "query_ranksvm":  # lam = 2 lam_s / T
                return float(lam_paper * paper.total_weight / 2.0)
            m, n = paper.groups.nu, 1.0  # the Infinite Push over queries: N = sum_q M_q
        return float(_scaling.from_paper_lambda(
            lam_paper, scaling, loss=model_of(formulation).name,
            penalty=options.get("penalty", "l2"), m=m, n=n))


def load_catalog(path: str | os.PathLike | None = None) -> Catalog:
    """Parse and check the catalog file ``path`` (default :func:`default_catalog`: the file
    named by ``$INFPUSH_CVX_CATALOG`` now, else the packaged catalog); parsed once per path and
    process (:func:`clear_cache` forgets them).

    Every error in the file is one :class:`~infpush_cvx.files.MalformedFileError` (a ValueError)
    that names the file and, where there is one, the entry and the field: a file that is not a
    regular file of at most 16 MiB (:func:`._files.read_small_file`) or not UTF-8 text, TOML
    syntax, unknown or missing keys, values of the wrong type, unknown generators, formulations,
    instances, generator parameters and formulation options, generator parameters out of range
    (:func:`infpush_cvx.data.generators.check_parameters`), option values no formulation takes
    (:data:`OPTION_CHECKS`), lambdas that are not finite nonnegative numbers, instance names and
    problem IDs that are not plain file names (:func:`._files.check_name`), problem IDs declared
    twice (or differing only in case: one file on a case-insensitive file system), and a catalog
    that declares no problem. A missing file is FileNotFoundError.
    """
    catalog = _load_catalog(Path(path) if path is not None else default_catalog())
    _INSTANCE_SPECS.update(catalog.instances)  # the instances of the catalog last loaded
    return catalog


def clear_cache() -> None:
    """Forget the catalogs parsed and the instances generated (a catalog file edited since)."""
    _load_catalog.cache_clear()
    instance_data.cache_clear()


@functools.lru_cache(maxsize=None)
def _load_catalog(path: Path) -> Catalog:
    try:
        return _parse_catalog(path)
    except MalformedFileError:  # read_small_file's: the message starts with the path
        raise
    except ValueError as exc:
        raise MalformedFileError(f"{path}: {exc}") from None
    except (OverflowError, RecursionError) as exc:  # a safety net: no check should let these by
        raise MalformedFileError(f"{path}: {type(exc).__name__}: {exc}") from None


def _parse_catalog(path: Path) -> Catalog:
    data = read_small_file(path, "catalog")
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not a UTF-8 text file (byte {exc.start}: {exc.reason})") from None
    except (ValueError, RecursionError) as exc:
        # TOMLDecodeError; ValueError of an integer beyond Python's digit limit; RecursionError
        # of arrays nested thousands deep
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(f"not valid TOML: {what}") from None
    _check_keys(raw, _TOP_KEYS, ())
    instances = {}
    for name, entry in _table(raw, "instances").items():
        check_name(name, "instance name")  # before it is shown as the entry
        with _at(f"instance {name}"):
            instances[name] = _instance_spec(name, entry)
    _INSTANCE_SPECS.update(instances)  # the lambdas of the problems below may need their data
    _check_unique(instances, "instance")
    found = []
    for pid, entry in _table(raw, "problems").items():
        check_name(pid, "problem ID")
        with _at(f"problem {pid}"):
            found.append(_problem_spec(pid, entry, instances))
    families = raw.get("families", [])
    if not isinstance(families, list):
        raise ValueError(f"families must be an array of tables ([[families]]), got "
                         f"{type(families).__name__}")
    for k, family in enumerate(families):
        prefix = family.get("prefix") if isinstance(family, dict) else None
        with _at(f"family {k}" + (f" (prefix {prefix!r})" if isinstance(prefix, str) else "")):
            found += _family_problems(family, instances)  # generated inside the with
    _check_unique([spec.id for spec in found], "problem")
    problems = {spec.id: spec for spec in found}
    if not problems:
        raise ValueError(f"declares no problem (an empty catalog); see the packaged catalog "
                         f"{PACKAGED_CATALOG} for the format")
    return Catalog(instances, problems, path)


def _check_unique(names, what: str) -> None:
    """Refuse a name given twice, and two names that differ only in case: their files would be
    one on a case-insensitive file system (macOS, Windows)."""
    seen = {}
    for name in names:
        other = seen.get(name.casefold())
        if other is not None:
            raise ValueError(f"{what} {name!r} is declared twice" if other == name else
                             f"{what}s {other!r} and {name!r} differ only in case "
                             f"(one file on a case-insensitive file system)")
        seen[name.casefold()] = name


_INSTANCE_SPECS: dict = {}


@functools.lru_cache(maxsize=None)
def instance_data(name: str) -> BipartiteData | PairData:
    """The generated data of a catalog instance (cached per process)."""
    check_name(name, "instance name")
    if name not in _INSTANCE_SPECS:
        load_catalog()
    check_choice(name, "instance", _INSTANCE_SPECS)
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
    """The catalog's problem ``problem_id``; ValueError when it is not a valid problem ID (a plain
    file name, :func:`._files.check_name`) or not in the catalog."""
    check_name(problem_id, "problem ID")
    problems = load_catalog().problems
    if problem_id not in problems:
        raise ValueError(f"unknown problem {problem_id!r}; see infpush_cvx.catalog.problem_ids()")
    return problems[problem_id]
