"""Ranking metrics: the paper's Table 1 example, brute-force definitions with ties, sklearn."""

import numpy as np
import pytest

from infpush_cvx import metrics as M

# Agarwal (2011), Table 1 / formulations.md section 5: m = 4 positives, n = 6 negatives.
F1_POS = [9.7, 7.3, 5.2, 4.0]
F1_NEG = [8.7, 6.3, 3.9, 2.7, 1.1, 0.8]
F2_POS = [9.5, 8.1, 7.2, 1.5]
F2_NEG = [6.3, 5.1, 4.4, 3.1, 2.7, 0.9]


def _labelled(pos, neg):
    y = np.r_[np.ones(len(pos), int), np.zeros(len(neg), int)]
    return y, np.r_[pos, neg]


@pytest.mark.parametrize("pos,neg,top", [(F1_POS, F1_NEG, 1), (F2_POS, F2_NEG, 3)])
def test_table1_auc_equal_but_top_differs(pos, neg, top):
    y, s = _labelled(pos, neg)
    assert M.auc(y, s) == pytest.approx(19 / 24, abs=1e-15)
    assert M.positives_at_top(y, s) == top


def test_table1_rank_based_measures_by_hand():
    y, s = _labelled(F1_POS, F1_NEG)
    # f1 ranks of the positives: 1, 3, 5, 6
    assert M.average_precision(y, s) == pytest.approx((1 + 2 / 3 + 3 / 5 + 4 / 6) / 4)
    assert M.dcg(y, s) == pytest.approx(sum(1 / np.log2(r + 1) for r in (1, 3, 5, 6)))
    assert M.r_inf(y, s) == pytest.approx(3 / 4)
    y, s = _labelled(F2_POS, F2_NEG)
    # f2 ranks of the positives: 1, 2, 3, 9
    assert M.average_precision(y, s) == pytest.approx((3 + 4 / 9) / 4)
    assert M.dcg(y, s) == pytest.approx(sum(1 / np.log2(r + 1) for r in (1, 2, 3, 9)))
    assert M.r_inf(y, s) == pytest.approx(1 / 4)
    assert M.precision_at_k(y, s, 3) == 1.0
    assert M.precision_at_k(y, s, 5) == pytest.approx(3 / 5)


def _brute(y, s):
    """O(N^2) definitions straight from formulations.md section 5."""
    pos = y == 1
    sp, sn = s[pos], s[~pos]
    auc = np.mean((sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :]))
    r = 1 + (s[None, :] > s[:, None]).sum(axis=1)
    rp = r[pos]
    ap = np.mean([(rp <= ri).sum() / ri for ri in rp])
    dcg = np.sum(1 / np.log2(rp + 1))
    rinf = max(np.mean(sp < t) for t in sn)
    top = int(np.sum(sp > sn.max()))
    return auc, ap, dcg, rinf, top, r


@pytest.mark.parametrize("seed", range(12))
def test_against_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(2, 40))
    y = rng.integers(0, 2, N)
    y[0], y[1] = 0, 1
    s = rng.integers(0, 6, N).astype(float)  # few distinct values: many ties
    auc, ap, dcg, rinf, top, r = _brute(y, s)
    assert M.auc(y, s) == pytest.approx(auc, abs=1e-14)
    assert M.average_precision(y, s) == pytest.approx(ap, abs=1e-14)
    assert M.dcg(y, s) == pytest.approx(dcg, abs=1e-12)
    assert M.r_inf(y, s) == pytest.approx(rinf, abs=1e-15)
    assert M.positives_at_top(y, s) == top
    np.testing.assert_array_equal(M.ranks(s), r)
    fpr, tpr, _ = M.roc_curve_points(y, s)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc, abs=1e-14)


def test_tie_rule_documented_examples():
    y = np.array([1, 0, 1, 0])
    s = np.array([2.0, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(M.ranks(s), [1, 1, 3, 4])  # ties share the best rank
    assert M.auc(y, s) == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    assert M.positives_at_top(y, s) == 0  # a tie with a negative is not "strictly above"
    # prec@1 with a two-way tie on top (one positive): expected value 1/2
    assert M.precision_at_k(y, s, 1) == pytest.approx(0.5)
    assert M.precision_at_k(y, s, 2) == pytest.approx(0.5)
    assert M.precision_at_k(y, s, 3) == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_precision_at_k_expected_under_random_tie_breaking(seed):
    rng = np.random.default_rng(100 + seed)
    y = rng.integers(0, 2, 15)
    s = rng.integers(0, 3, 15).astype(float)
    for k in (1, 4, 9, 15):
        draws = []
        for _ in range(3000):
            order = np.lexsort((rng.random(15), -s))
            draws.append(y[order[:k]].mean())
        assert M.precision_at_k(y, s, k) == pytest.approx(np.mean(draws), abs=0.03)


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_sklearn_without_ties(seed):
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = rng.normal(size=300) + 0.8 * y
    assert M.auc(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-13)
    assert M.average_precision(y, s) == pytest.approx(sk.average_precision_score(y, s), abs=1e-13)
    # sklearn's roc_auc_score also gives ties 1/2
    s_tied = np.round(s)
    assert M.auc(y, s_tied) == pytest.approx(sk.roc_auc_score(y, s_tied), abs=1e-13)


def test_labels_pm1_and_bool_equivalent():
    y01, s = _labelled(F1_POS, F1_NEG)
    for y in (2 * y01 - 1, y01.astype(bool), y01.astype(float)):
        assert M.average_precision(y, s) == M.average_precision(y01, s)
        assert M.auc(y, s) == M.auc(y01, s)


@pytest.mark.parametrize("fn", [M.auc, M.positives_at_top, M.r_inf, M.average_precision, M.dcg,
                                M.roc_curve_points])
def test_bad_input(fn):
    y, s = _labelled(F1_POS, F1_NEG)
    with pytest.raises(ValueError, match="y_score"):
        fn(y, np.r_[s[:-1], np.nan])
    with pytest.raises(ValueError, match="y_score"):
        fn(y, s[:-1])
    with pytest.raises(ValueError, match="y_score"):
        fn(y, s[:, None])
    with pytest.raises(ValueError, match="y_true"):
        fn(np.ones_like(y), s)
    with pytest.raises(ValueError, match="y_true"):
        fn(y + 1, s)  # labels {1, 2}: not binary in the accepted encodings
    with pytest.raises(ValueError, match="y_true"):
        fn(y[:, None], s)
    with pytest.raises(ValueError, match="y_true"):
        fn([], [])


def test_precision_at_k_bad_k():
    y, s = _labelled(F1_POS, F1_NEG)
    with pytest.raises(ValueError, match="k"):
        M.precision_at_k(y, s, 0)
    with pytest.raises(ValueError, match="k"):
        M.precision_at_k(y, s, 11)
    with pytest.raises(TypeError, match="k"):
        M.precision_at_k(y, s, 2.5)
    assert M.precision_at_k(np.ones(3, int), [1.0, 2.0, 3.0], 2) == 1.0
