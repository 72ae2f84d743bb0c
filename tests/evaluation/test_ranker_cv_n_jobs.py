"""Issue 27, item 7: ``RankerCV(n_jobs=...)`` runs the folds through joblib with the results
(scores, iterations, C, model) and the warnings of ``n_jobs=1``.
"""

import numpy as np
import pytest

from sklearn.base import clone

from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import ConvergenceWarning, InfinitePushRanker, RankSVMRanker
from ranker_data import two_classes  # tests/evaluation/ranker_data.py


@pytest.mark.slow  # two worker processes importing the package: 3-11 s on the shared machine
def test_ranker_cv_n_jobs_2_gives_the_results_of_n_jobs_1_and_its_warnings(caplog):
    # was: RankerCV(n_jobs=2) refused (TypeError: unexpected keyword argument)
    X, y = two_classes(N=150, zeros=0.0)
    ranker = InfinitePushRanker(method="fista", max_iter=15)  # uncertified: warns per C
    fits, messages, progress = {}, {}, {}
    for n_jobs in (1, 2):
        caplog.clear()
        with pytest.warns(ConvergenceWarning) as record:
            fits[n_jobs] = RankerCV(ranker, Cs=[0.1, 1.0, 10.0], cv=3, n_jobs=n_jobs,
                                    verbose=True).fit(X, y)
        folds = [w for w in record if issubclass(w.category, ConvergenceWarning)]
        messages[n_jobs] = [str(w.message) for w in folds]
        assert {w.filename for w in folds[:9]} == {__file__}  # at the caller of RankerCV.fit
        progress[n_jobs] = [r.getMessage() for r in caplog.records
                            if r.getMessage().startswith("RankerCV")]
    one, two = fits[1], fits[2]
    np.testing.assert_array_equal(two.scores_, one.scores_)
    np.testing.assert_array_equal(two.n_iter_path_, one.n_iter_path_)
    np.testing.assert_array_equal(two.coef_, one.coef_)
    assert two.C_ == one.C_
    # the workers' warnings, raised again in fold order: 3 folds x 3 C, then the refit's
    assert messages[2] == messages[1] and len(messages[1]) == 10
    # one progress line per fold and C, in order, then the choice
    assert progress[2] == progress[1] and len(progress[1]) == 10
    assert progress[1][0].startswith("RankerCV fold 1/3, C=0.1:")


@pytest.mark.parametrize("n_jobs,error", [(0, ValueError), ("2", TypeError), (1.5, TypeError)])
def test_ranker_cv_bad_n_jobs_is_named(n_jobs, error):
    X, y = two_classes()
    with pytest.raises(error, match="n_jobs"):
        RankerCV(RankSVMRanker(), Cs=[1.0], cv=3, n_jobs=n_jobs).fit(X, y)


def test_ranker_cv_n_jobs_is_a_parameter():
    assert RankerCV(n_jobs=-1).get_params()["n_jobs"] == -1
    assert clone(RankerCV(n_jobs=2)).n_jobs == 2

