"""The catalog: named problems, their stored optimal values, and the solvers that run them.

- :mod:`.specs`: instances and problems declared in ``catalog.toml`` (everything it defines is
  importable from here: ``catalog.get``, ``catalog.problem_ids``, ``catalog.instance_data``...).
- :mod:`.reference`: stored optimal values, their provenance, verification and regeneration.
- :mod:`.cvxpy_solvers`: the CVXPY solvers compared, their options, tolerances, time limits and
  the problem classes each takes.
- :mod:`.registry`: which project solver methods solve which formulation, and how they are
  called (the one table of the main job, the benchmarks, ``reference verify`` and the tests).

Imports go one way: ``specs`` <- ``reference`` (which also reads ``cvxpy_solvers`` and
``registry``) <- this module. The data files are ``problems/catalog.toml`` and
``reference_values/*.json`` in this folder.

>>> from infpush_cvx import catalog
>>> for p in catalog.problems(["infinite_push_0"]):        # the original script's dictionaries
...     p["problem"].solve(); print(p["problemID"], p["opt_val"])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .specs import (ALL_TIERS, CATALOG_ENV_VAR, DEFAULT_TIER, FORMULATIONS,  # noqa: F401
                    GENERATORS, PACKAGED_CATALOG, Catalog, CatalogProblem, InstanceSpec,
                    ProblemSpec, clear_cache, default_catalog, get, instance_data, load_catalog,
                    package_data, problem_ids, tiers)


def problems(ids: Iterable[str] | None = None) -> Iterator[dict]:
    """Yield the original script's benchmark dictionaries ``{"problemID", "problem", "opt_val"}``.

    ``opt_val`` is the stored reference value, None when none is stored yet or when the stored
    one no longer belongs to the problem (changed instance or definition; a
    :class:`.reference.StaleReferenceWarning` says so: :func:`.reference.stored_value`).
    """
    from .reference import stored_value

    for pid in (problem_ids() if ids is None else ids):
        data = instance_data(get(pid).instance)
        yield {"problemID": pid, "problem": get(pid).build(data),
               "opt_val": stored_value(pid, data).value}
