"""Data containers: validation with clear errors, and fingerprints."""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import BipartiteData, PairData, fingerprint

rng = np.random.default_rng(0)
Xp, Xn = rng.standard_normal((5, 3)), rng.standard_normal((7, 3))


@pytest.mark.parametrize("bad, match", [
    (np.full((5, 3), np.nan), "Xp contains NaN"),
    (np.full((5, 3), np.inf), "Xp contains NaN or infinite"),
    (np.ones(3), "Xp must be 2-D"),
    (np.ones((0, 3)), "Xp must be non-empty"),
    (np.ones((5, 4)), "same number of features"),
])
def test_bipartite_rejects_bad_positives(bad, match):
    with pytest.raises(ValueError, match=match):
        BipartiteData(bad, Xn)


def test_bipartite_rejects_empty_negatives_and_non_numeric():
    with pytest.raises(ValueError, match="Xn must be non-empty"):
        BipartiteData(Xp, np.ones((0, 3)))
    with pytest.raises(TypeError, match="Xn must be a numeric"):
        BipartiteData(Xp, [["a", "b", "c"]])
    with pytest.raises(ValueError, match="Xn contains NaN"):
        BipartiteData(Xp, sp.csr_matrix(np.array([[np.nan, 0, 1.0]])))


def test_from_labels_needs_both_classes():
    X = np.vstack([Xp, Xn])
    y = np.r_[np.ones(5), np.zeros(7)]
    data = BipartiteData.from_labels(X, y)
    assert (data.m, data.n, data.d) == (5, 7, 3)
    np.testing.assert_array_equal(data.Xp, Xp)
    with pytest.raises(ValueError, match="one class is empty"):
        BipartiteData.from_labels(X, np.ones(12))
    with pytest.raises(ValueError, match="one label per row"):
        BipartiteData.from_labels(X, np.ones(3))


def test_fingerprint_is_content_based():
    a = BipartiteData(Xp, Xn)
    assert a.fingerprint() == BipartiteData(Xp.copy(order="F"), Xn.copy()).fingerprint()
    changed = Xp.copy()
    changed[0, 0] = np.nextafter(changed[0, 0], 1)
    assert BipartiteData(changed, Xn).fingerprint() != a.fingerprint()
    # Sparse storage hashes differently from dense (the data really is stored differently),
    # but canonically: duplicates summed, explicit zeros dropped, indices sorted.
    s = sp.coo_matrix(([1.0, 2.0, 0.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    assert fingerprint(A=s) == fingerprint(A=sp.csr_matrix(np.array([[0, 3.0], [0, 0]])))
    assert fingerprint(A=s) != fingerprint(A=s.toarray())
    assert fingerprint(A=np.zeros(2), B=np.ones(2)) != fingerprint(B=np.zeros(2), A=np.ones(2))


X = rng.random((6, 4))


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(i=[0, 7], j=[1, 2]), ValueError, "i has index 7 outside"),
    (dict(i=[0, -1], j=[1, 2]), ValueError, "i has index -1"),
    (dict(i=[0, 1], j=[1, 1]), ValueError, r"pair 1 compares row 1 with itself"),
    (dict(i=[0, 1], j=[1]), ValueError, "same length"),
    (dict(i=[], j=[]), ValueError, "at least one pair"),
    (dict(i=[0.5], j=[1]), TypeError, "i must hold integer"),
    (dict(i=[0], j=[1], margin=[-1.0]), ValueError, "margin must be nonnegative"),
    (dict(i=[0], j=[1], weight=[-0.1]), ValueError, "weight must be nonnegative"),
    (dict(i=[0], j=[1], weight=[np.nan]), ValueError, "weight contains NaN"),
    (dict(i=[0], j=[1], margin=[1.0, 2.0]), ValueError, "margin must have length 1"),
])
def test_pairdata_rejects_bad_pairs(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        PairData(X, **kwargs)


def test_pairdata_defaults_and_difference_operator():
    data = PairData(sp.csr_matrix(X), [0, 2, 2], [1, 3, 3])
    np.testing.assert_array_equal(data.margin, 1.0)
    np.testing.assert_array_equal(data.weight, 1.0)
    E = data.difference_operator()
    np.testing.assert_allclose((E @ data.X).toarray(), X[[1, 3, 3]] - X[[0, 2, 2]])


def test_pairdata_is_a_plain_frozen_dataclass_with_margin():
    import dataclasses
    data = PairData(X, [0, 2], [1, 3], [2.0, 3.0])
    assert [f.name for f in dataclasses.fields(PairData)] == ["X", "i", "j", "margin", "weight"]
    np.testing.assert_array_equal(data.margin, [2.0, 3.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.margin = np.ones(2)
    with pytest.raises(TypeError, match="gap"):
        PairData(X, [0], [1], gap=[1.0])
    assert not hasattr(data, "gap")


def test_rank2plan_takes_the_data_first_then_lam():
    from infpush_cvx.solvers import rank2plan_lambda_max, rank2plan_lp
    from infpush_cvx.solvers.result import ConvergenceWarning
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(12, 4))
    i, j = np.arange(0, 6), np.arange(6, 12)
    data = PairData(Z, i, j, margin=np.full(6, 2.0))
    lam = 0.1 * rank2plan_lambda_max(data)
    front = rank2plan_lp(data, lam)
    assert front.objective == pytest.approx(rank2plan_lp(data, lam=lam).objective, rel=1e-9)
    with pytest.warns(ConvergenceWarning, match="max_iter") as record:
        rank2plan_lp(data, lam, method="smoothed", max_iter=1)
    assert record[0].filename == __file__  # points at the caller
