"""Catalog instances saved to and loaded from ``.npz`` files, with their fingerprints.

One file per instance. Dense arrays are stored as they are; a scipy.sparse matrix ``A`` is stored
as its canonical CSR parts (``A__csr_data``, ``A__csr_indices``, ``A__csr_indptr``,
``A__csr_shape``), the layout of ``scipy.sparse.save_npz`` but several matrices in one file.
Metadata: ``__kind__`` ("bipartite", "pairs" or "queries"), ``__fingerprint__`` (sha256 of
:func:`infpush_cvx.data.fingerprint`), ``__generator__`` and ``__params__`` (JSON).
Loading recomputes the fingerprint and refuses a file whose content does not match it.

:func:`instance_record` and :func:`instance_shape` describe an instance for the rows and the
provenance of benchmark results (generator, seed, tier; sizes and non-zeros);
:func:`stored_opt_val` is a problem's stored optimal value.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import catalog
from .._validation import check_choice
from ..data.containers import BipartiteData, PairData
from ..data.queries import QueryData
from ..files import atomic_open


def _instance_spec(name: str):
    instances = catalog.load_catalog().instances
    return instances[check_choice(name, "instance", instances)]


def _nnz(a) -> int:
    return int(a.nnz) if sp.issparse(a) else int(np.count_nonzero(a))


def instance_shape(data) -> dict:
    """Sizes of an instance's data: ``m``, ``n``, ``d`` and ``nnz`` (non-zero feature entries).

    For BipartiteData, m positives and n negatives of d features (nnz of Xp and Xn); for
    PairData (Rank2Plan), m states, n pairs and d features (nnz of X); for QueryData (documents
    grouped by query), m documents, n pairs within the queries and d features (nnz of X)."""
    if isinstance(data, BipartiteData):
        return {"m": data.m, "n": data.n, "d": data.d, "nnz": _nnz(data.Xp) + _nnz(data.Xn)}
    if isinstance(data, PairData):
        return {"m": data.n_states, "n": data.n_pairs, "d": data.n_features, "nnz": _nnz(data.X)}
    if isinstance(data, QueryData):
        return {"m": data.n, "n": data.n_pairs, "d": data.d, "nnz": _nnz(data.X)}
    raise TypeError(f"data must be BipartiteData, PairData or QueryData, got "
                    f"{type(data).__name__}")


def save_instance(name: str, directory, data=None) -> Path:
    """Generate the catalog instance ``name`` (or use ``data``) and save ``<directory>/<name>.npz``
    atomically (a process killed while writing leaves the previous file)."""
    spec = _instance_spec(name)
    data = catalog.instance_data(name) if data is None else data
    arrays = {}
    for key, a in data.arrays().items():
        if sp.issparse(a):
            a = sp.csr_matrix(a)
            a.sum_duplicates()  # the canonical form: sorted indices too
            arrays.update({f"{key}__csr_data": a.data, f"{key}__csr_indices": a.indices,
                           f"{key}__csr_indptr": a.indptr, f"{key}__csr_shape": np.array(a.shape)})
        else:
            arrays[key] = np.asarray(a)
    kind = "bipartite" if isinstance(data, BipartiteData) else \
        "queries" if isinstance(data, QueryData) else "pairs"
    path = Path(directory) / f"{name}.npz"
    with atomic_open(path, "wb") as fh:
        np.savez_compressed(fh, __kind__=np.array(kind),
                            __fingerprint__=np.array(data.fingerprint()),
                            __generator__=np.array(spec.generator),
                            __params__=np.array(json.dumps(spec.params, sort_keys=True)),
                            **arrays)
    return path


def load_instance(path):
    """Read a file written by :func:`save_instance`; returns BipartiteData, PairData or
    QueryData.

    Raises ValueError when the arrays do not reproduce the stored fingerprint.
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"path {str(path)!r} does not exist")
    with np.load(path, allow_pickle=False) as z:
        files = set(z.files)
        if "__kind__" not in files:
            raise ValueError(f"{path} is not an infpush-cvx instance file (no __kind__)")
        arrays = {key: z[key] for key in files if "__" not in key}  # dense; then sparse
        for base in {key.partition("__csr_")[0] for key in files if "__csr_" in key}:
            arrays[base] = sp.csr_matrix((z[f"{base}__csr_data"], z[f"{base}__csr_indices"],
                                          z[f"{base}__csr_indptr"]),
                                         shape=tuple(z[f"{base}__csr_shape"]))
        kind, stored = str(z["__kind__"]), str(z["__fingerprint__"])
    data = {"bipartite": BipartiteData, "queries": QueryData}.get(kind, PairData)(**arrays)
    if data.fingerprint() != stored:
        raise ValueError(f"{path}: content does not match its fingerprint "
                         f"({data.fingerprint()[:16]}... vs stored {stored[:16]}...)")
    return data


@dataclass(frozen=True)
class Instance:
    """A problem that is not in the catalog, named the way benchopt names a Dataset: the instance
    is ``generator`` (a catalog generator, ``catalog.GENERATORS``: ``planted_bipartite``,
    ``real_subset``, ``rank2plan_pairs``...) called with ``params``, and the problem is the
    catalog ``formulation`` with ``options`` and ``lam`` (``(name, value)`` pairs keep it
    hashable). Generated once per process (the last two are cached). It has no stored value:
    its rows have no ``reference`` and never ``agree``; a benchmark compares its solvers."""

    name: str
    generator: str
    params: tuple = ()
    formulation: str = "infinite_push"
    options: tuple = ()
    lam: float = 1.0

    def __post_init__(self):
        check_choice(self.generator, "generator", catalog.GENERATORS)
        check_choice(self.formulation, "formulation", catalog.FORMULATIONS)

    def __str__(self) -> str:
        return self.name

    def spec(self):
        """The problem as a catalog ProblemSpec (tier ``"generated"``)."""
        return catalog.ProblemSpec(self.name, self.name, self.formulation, dict(self.options),
                           float(self.lam), tier="generated")

    def data(self):
        return _generated(self.generator, self.params)


@functools.lru_cache(maxsize=2)
def _generated(generator: str, params: tuple):
    return catalog.GENERATORS[generator](**dict(params))


def problem_spec(problem):
    """The ProblemSpec of a task's ``problem`` (a catalog ID or an :class:`Instance`)."""
    return problem.spec() if isinstance(problem, Instance) else catalog.get(problem)


def instance_record(problem) -> dict:
    """What is declared about the instance of a task's ``problem``: ``generator``, ``params``
    (a copy), ``seed`` (None when the generator takes none) and ``tier``: the catalog's for a
    catalog problem's instance, a generated :class:`Instance`'s own (tier ``"generated"``)."""
    if isinstance(problem, Instance):
        generator, params, tier = problem.generator, dict(problem.params), "generated"
    else:
        spec = _instance_spec(problem_spec(problem).instance)
        generator, params, tier = spec.generator, dict(spec.params), spec.tier
    return {"generator": generator, "params": params, "seed": params.get("seed"), "tier": tier}


def stored_opt_val(problem) -> float | None:
    """The optimal value stored for a task's ``problem`` (None when none is: a generated
    :class:`Instance` never has one)."""
    from ..catalog.reference import load_reference
    ref = None if isinstance(problem, Instance) else load_reference(problem)
    return None if ref is None else ref["opt_val"]


def problem_data(problem):
    """The instance data of a task's ``problem`` (cached per process)."""
    return problem.data() if isinstance(problem, Instance) else \
        catalog.instance_data(catalog.get(problem).instance)
