"""Issue 27, item 7: ``solver="auto"`` is the project's native solver wherever one exists (the
l1 ranker too, which used to pick CVXPY: killed after 150 s at 3.75 GB on the Spambase training
split), with its progress logged when ``verbose``.
"""

import time
import warnings

import pytest

from infpush_cvx.evaluation.rankers import (InfinitePushRanker, PNormPushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker, SquaredHingeRankSVMRanker,
                                            SVMMAPRanker, TopPushRanker, ZeroModelWarning)
from ranker_data import CERTIFIED, SHARED, two_classes  # tests/evaluation/ranker_data.py


@pytest.mark.parametrize("cls", [InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker,
                                 SVMMAPRanker, TopPushRanker, PNormPushRanker,
                                 SquaredHingeRankSVMRanker])
def test_auto_is_the_native_solver_for_every_ranker(cls):
    X, y = two_classes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroModelWarning)
        assert cls().fit(X, y).backend_ == "native"


def test_verbose_native_l1_fit_logs_its_progress_and_quiet_logs_nothing(caplog):
    # the progress goes to the logger infpush_cvx.solvers (stderr when nothing else shows it;
    # under pytest, its log capture shows it)
    X, y = two_classes()
    SparseInfinitePushRanker(C=100.0).fit(X, y)
    assert not [r for r in caplog.records if r.name.startswith("infpush_cvx")]
    SparseInfinitePushRanker(C=100.0, verbose=True).fit(X, y)
    lines = [r.getMessage() for r in caplog.records if r.name == "infpush_cvx.solvers"]
    assert lines[0].startswith("infinite_push working_set (l1 penalty)")
    assert "status optimal" in lines[-1] and len(lines) >= 3


@pytest.mark.skipif(not (SHARED / "uci" / "spambase.data").is_file(), reason="no Spambase")
def test_l1_ranker_on_the_spambase_training_split_is_the_certified_native_solve():
    # was: solver="auto" picked CVXPY, killed after 150 s at 3.75 GB; native: about 1-2 s
    train_test_split = pytest.importorskip("sklearn.model_selection").train_test_split

    from infpush_cvx.data.datasets import load_spambase
    X, y = load_spambase(SHARED / "uci")
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    start = time.perf_counter()
    r = SparseInfinitePushRanker(C=10).fit(X_train, y_train)
    elapsed = time.perf_counter() - start
    assert r.backend_ == "native" and r.status_ in CERTIFIED and r.n_features_used_ > 0
    assert elapsed < 60.0, elapsed  # a generous bound on a loaded 2-core machine
