"""Ranking metrics: the paper's Table 1 example, brute-force definitions with ties, sklearn."""

import numpy as np
import pytest

from infpush_cvx.evaluation import metrics as M

# [Agarwal2011], Table 1; docs/mathematics.md, section 5.3: m = 4 positives, n = 6 negatives.
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
    """O(N^2) definitions straight from docs/mathematics.md, sections 5.1 and 5.2 (tie rules)."""
    pos = y == 1
    sp, sn = s[pos], s[~pos]
    auc = np.mean((sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :]))
    r = 1 + (s[None, :] > s[:, None]).sum(axis=1)
    # AP with ties: a tied group entered together (sklearn's threshold convention)
    ap = np.mean([(sp >= si).sum() / (s >= si).sum() for si in sp])
    rinf = max(np.mean(sp < t) for t in sn)
    top = int(np.sum(sp > sn.max()))
    return auc, ap, rinf, top, r


@pytest.mark.parametrize("seed", range(12))
def test_against_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(2, 40))
    y = rng.integers(0, 2, N)
    y[0], y[1] = 0, 1
    s = rng.integers(0, 6, N).astype(float)  # few distinct values: many ties
    auc, ap, rinf, top, r = _brute(y, s)
    assert M.auc(y, s) == pytest.approx(auc, abs=1e-14)
    assert M.average_precision(y, s) == pytest.approx(ap, abs=1e-14)
    assert M.r_inf(y, s) == pytest.approx(rinf, abs=1e-15)
    assert M.positives_at_top(y, s) == top
    np.testing.assert_array_equal(M.ranks(s), r)
    fpr, tpr, _ = M.roc_curve_points(y, s)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc, abs=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_rank_formulas_without_ties(seed):
    # docs/mathematics.md, section 5.1 verbatim, with distinct scores
    rng = np.random.default_rng(50 + seed)
    y = rng.integers(0, 2, 30)
    y[:2] = [0, 1]
    s = rng.permutation(30).astype(float)
    r = M.ranks(s)[y == 1]
    assert M.average_precision(y, s) == pytest.approx(np.mean([(r <= ri).sum() / ri for ri in r]))
    assert M.dcg(y, s) == pytest.approx(np.sum(1 / np.log2(r + 1)))


@pytest.mark.parametrize("seed", range(4))
def test_dcg_with_ties_is_expected_value_over_tie_breaking(seed):
    rng = np.random.default_rng(70 + seed)
    y = rng.integers(0, 2, 12)
    y[:2] = [0, 1]
    s = rng.integers(0, 3, 12).astype(float)
    # exact expectation: average over many random tie-breaks of the no-tie DCG
    vals = []
    for _ in range(4000):
        order = np.lexsort((rng.random(12), -s))
        pos_rank = np.flatnonzero(y[order] == 1) + 1
        vals.append(np.sum(1 / np.log2(pos_rank + 1)))
    assert M.dcg(y, s) == pytest.approx(np.mean(vals), rel=5e-3)


def test_constant_scorer_gets_no_credit_from_ties():
    y = np.array([1, 0, 0, 1, 0])
    s = np.zeros(5)
    assert M.auc(y, s) == 0.5
    assert M.average_precision(y, s) == pytest.approx(2 / 5)
    assert M.dcg(y, s) == pytest.approx(2 / 5 * sum(1 / np.log2(r + 1) for r in range(1, 6)))
    assert M.positives_at_top(y, s) == 0 and M.r_inf(y, s) == 0.0
    assert M.precision_at_k(y, s, 2) == pytest.approx(2 / 5)


def test_tie_rule_documented_examples():
    y = np.array([1, 0, 1, 0])
    s = np.array([2.0, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(M.ranks(s), [1, 1, 3, 4])  # ties share the best rank
    assert M.auc(y, s) == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    # AP: positive 0 sees 1 positive among 2 items scored >= 2; positive 2: 2 among 3
    assert M.average_precision(y, s) == pytest.approx((1 / 2 + 2 / 3) / 2)
    # DCG: the tied top pair spreads one positive over positions 1 and 2
    assert M.dcg(y, s) == pytest.approx(0.5 * (1 + 1 / np.log2(3)) + 1 / np.log2(4))
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
def test_agrees_with_sklearn(seed):
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = rng.normal(size=300) + 0.8 * y
    assert M.auc(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-13)
    assert M.average_precision(y, s) == pytest.approx(sk.average_precision_score(y, s), abs=1e-13)
    assert M.dcg(y, s) == pytest.approx(sk.dcg_score(y[None], s[None]), abs=1e-12)
    # the tie rules coincide with sklearn's too: AUC 1/2, AP by threshold, DCG tie-averaged
    s_tied = np.round(s)
    assert M.auc(y, s_tied) == pytest.approx(sk.roc_auc_score(y, s_tied), abs=1e-13)
    assert M.average_precision(y, s_tied) == pytest.approx(
        sk.average_precision_score(y, s_tied), abs=1e-13)
    assert M.dcg(y, s_tied) == pytest.approx(sk.dcg_score(y[None], s_tied[None]), abs=1e-12)


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
        fn(np.arange(len(y)) % 3, s)  # three classes
    with pytest.raises(ValueError, match="y_true.*pos_label"):
        fn(np.where(y == 1, "pos", "neg"), s)  # strings need pos_label
    np.testing.assert_equal(fn(y + 1, s), fn(y, s))  # {1, 2}: 2 is the positive class
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


def test_svmmap_losses_are_one_minus_the_metric_average_precision():
    """SVMMAP's formulation and the metric share the formula of formulations/_ranking.py; the
    formulation's 1 - AP of each ranking is the metric's on the ranking's untied scores."""
    import itertools

    from infpush_cvx.formulations._svmmap import ranking_patterns
    Y, delta = ranking_patterns(2, 2)
    labels = np.r_[1, 1, 0, 0]
    metric = {}
    for order in itertools.permutations(range(4)):
        scores = -np.argsort(order).astype(float)  # item order[0] first
        above = tuple((scores[:2, None] > scores[None, 2:]).ravel())
        metric[above] = 1.0 - M.average_precision(labels, scores)
    assert len(metric) == len(delta) > 1
    for y, d in zip(Y, delta):
        assert d == metric[tuple((y > 0).ravel())]
