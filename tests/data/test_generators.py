"""Instance generators: the original script's data ([OriginalScript], docs/references.md)
reproduced exactly, planted and degenerate families, pairs."""

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.data.degeneracy import check_degeneracy, is_degenerate, separating_direction
from infpush_cvx.data.generators import (binary_bipartite, degenerate_bipartite, infinite_push_0,
                                    normalized_bipartite, normalized_data_matrix,
                                    planted_bipartite, rank2plan_pairs)


def test_infinite_push_0_reproduces_the_seed_script_bit_for_bit():
    # The original script's own lines, run against NumPy's legacy global generator.
    state = np.random.get_state()
    try:
        np.random.seed(0)
        A = np.random.randn(100, 20)
        A /= np.sqrt(np.sum(A ** 2, 0))
        B = np.random.randn(200, 20)
        B /= np.sqrt(np.sum(B ** 2, 0))
    finally:
        np.random.set_state(state)
    data, lam = infinite_push_0()
    assert lam == 1.0 and (data.m, data.n, data.d) == (100, 200, 20)
    np.testing.assert_array_equal(data.Xp, A)
    np.testing.assert_array_equal(data.Xn, B)


def test_generators_leave_the_global_random_state_alone():
    state = np.random.get_state()[1].copy()
    infinite_push_0()
    normalized_bipartite(5, 6, 4, mu=0.5, seed=1)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_sparse_branch_of_normalized_data_matrix():
    A = normalized_data_matrix(50, 8, 0.3, np.random.RandomState(3))
    assert sp.issparse(A)
    norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=0)).ravel())
    np.testing.assert_allclose(norms[norms > 0], 1.0)
    # A column with no nonzero stays zero instead of becoming NaN.
    B = normalized_data_matrix(2, 50, 0.02, np.random.RandomState(0))
    assert np.all(np.isfinite(B.toarray()))
    with pytest.raises(TypeError, match="RandomState"):
        normalized_data_matrix(3, 3, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="density"):
        normalized_data_matrix(3, 3, 1.5, np.random.RandomState(0))


def test_seed_instance_is_degenerate():
    assert is_degenerate(infinite_push_0()[0])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("density", [1.0, 0.2])
def test_planted_instances_are_non_degenerate_and_reproducible(seed, density):
    data = planted_bipartite(15, 25, 20, margin=0.3, seed=seed, density=density)
    report = check_degeneracy(data)
    assert not report.degenerate and report.distance > 1e-3
    assert data.is_sparse == (density < 1)
    again = planted_bipartite(15, 25, 20, margin=0.3, seed=seed, density=density)
    assert again.fingerprint() == data.fingerprint()
    assert planted_bipartite(15, 25, 20, margin=0.3, seed=seed + 100,
                             density=density).fingerprint() != data.fingerprint()


@pytest.mark.parametrize("density", [1.0, 0.3])
def test_degenerate_family_is_degenerate(density):
    assert is_degenerate(degenerate_bipartite(10, 30, 6, seed=4, density=density))


@pytest.mark.parametrize("seed", range(4))
def test_separating_direction_never_contradicts_the_lp(seed):
    """The cheap non-degeneracy certificate is found on planted instances and never on degenerate
    ones (where the mean positive is inside the hull of the negatives)."""
    planted = planted_bipartite(40, 60, 10, seed=seed, density=1.0 if seed < 2 else 0.3)
    v = separating_direction(planted)
    assert v is not None and not is_degenerate(planted)
    mean_pos = np.asarray(planted.Xp.mean(axis=0)).ravel()
    assert mean_pos @ v > np.max(planted.Xn @ v)
    degenerate = degenerate_bipartite(10, 30, 6, seed=seed)
    assert is_degenerate(degenerate) and separating_direction(degenerate) is None
    assert separating_direction(infinite_push_0()[0]) is None


@pytest.mark.parametrize("seed", range(3))
def test_separating_direction_is_the_same_on_sparse_and_dense_rows(seed):
    """Gilbert's iterates take the rows of a sparse Xn from its CSR arrays: the same direction
    as from the dense rows, on an instance it separates and on one it does not."""
    for data in (planted_bipartite(40, 60, 10, seed=seed, density=0.3),
                 degenerate_bipartite(10, 30, 6, seed=seed, density=0.3)):
        assert data.is_sparse
        dense = BipartiteData(data.Xp.toarray(), data.Xn.toarray())
        v_sparse, v_dense = separating_direction(data), separating_direction(dense)
        assert (v_sparse is None) == (v_dense is None)
        if v_sparse is not None:
            np.testing.assert_allclose(v_sparse, v_dense, rtol=1e-12, atol=1e-15)


def test_rank2plan_pairs_shape_and_content():
    data = rank2plan_pairs(6, 30, 40, 50, seed=0, density=0.1)
    assert data.is_sparse and data.n_states == 180 and data.n_features == 40
    assert data.n_pairs == 6 * 50
    assert np.all(data.X.data >= 1) and np.all(data.X.data == np.round(data.X.data))
    assert np.all(data.i // 30 == data.j // 30), "pairs stay inside one group"
    assert np.unique(data.margin).size > 1 and np.unique(data.weight).size > 1
    np.testing.assert_allclose(np.bincount(data.i // 30, weights=data.weight) > 0, True)
    assert rank2plan_pairs(6, 30, 40, 50, seed=0, density=0.1).fingerprint() == data.fingerprint()
    assert not rank2plan_pairs(2, 5, 4, 3, seed=0, sparse=False).is_sparse


@pytest.mark.parametrize("call, match", [
    (lambda: planted_bipartite(0, 5, 5, seed=0), "m must be a positive integer"),
    (lambda: planted_bipartite(5, 5, 5, margin=-1, seed=0), "margin must be positive"),
    (lambda: planted_bipartite(5, 5, 5, seed=0, density=0), "density must be in"),
    (lambda: rank2plan_pairs(2, 1, 4, 3, seed=0), "states_per_group must be at least 2"),
])
def test_generators_reject_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _openblas_kernel():
    """The kernel name of NumPy's OpenBLAS, or None when NumPy uses another BLAS."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    for lib in threadpoolctl.threadpool_info():
        if lib.get("internal_api") == "openblas":
            return lib.get("architecture")
    return None


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="OPENBLAS_CORETYPE names x86-64 kernels")
def test_catalog_instances_do_not_depend_on_the_cpu_blas_kernel():
    # BLAS kernels order their sums differently per CPU: an instance built with a dense `@`
    # changes its last bits, and so its stored fingerprint, from machine to machine. Regenerate
    # every catalog instance under a forced generic kernel and compare with this process.
    if _openblas_kernel() is None:
        pytest.skip("NumPy is not linked to OpenBLAS")
    from infpush_cvx import catalog
    names, here = [], {}
    for name in sorted(catalog.load_catalog().instances):
        try:  # the real tier's instances need their data set; without it they are skipped
            here[name] = catalog.instance_data(name).fingerprint()
        except FileNotFoundError:
            continue
        names.append(name)
    code = ("import json; from infpush_cvx import catalog; "
            f"print(json.dumps({{n: catalog.instance_data(n).fingerprint() for n in {names!r}}}))")
    env = dict(os.environ, OPENBLAS_CORETYPE="Prescott")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == here


@pytest.mark.parametrize("seed", range(3))
def test_binary_instances_are_libsvm_like_non_degenerate_and_reproducible(seed):
    data = binary_bipartite(40, 300, 60, seed=seed, row_nnz=6.0, informative=8, exclusive=4)
    assert data.is_sparse and data.m == 40 and data.n == 300 and data.d == 60
    for X in (data.Xp, data.Xn):
        assert np.all(X.data == 1.0)
    assert 3 < data.Xn.nnz / data.n < 9, "about row_nnz nonzeros a row"
    # the exclusive features: on for some positive, never for a negative
    only_pos = np.flatnonzero((np.asarray(data.Xn.sum(axis=0)).ravel() == 0)
                              & (np.asarray(data.Xp.sum(axis=0)).ravel() > 0))
    assert only_pos.size >= 1
    report = check_degeneracy(data)
    assert not report.degenerate
    assert binary_bipartite(40, 300, 60, seed=seed, row_nnz=6.0, informative=8,
                            exclusive=4).fingerprint() == data.fingerprint()


def test_binary_instances_refuse_bad_sizes():
    with pytest.raises(ValueError, match="informative"):
        binary_bipartite(5, 5, 10, seed=0, informative=8, exclusive=4)
    with pytest.raises(ValueError, match="exclusive"):
        binary_bipartite(5, 5, 10, seed=0, exclusive=0)
    with pytest.raises(ValueError, match="informative"):
        binary_bipartite(5, 5, 10, seed=0, informative=-1)
