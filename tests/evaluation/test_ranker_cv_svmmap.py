"""RankerCV over a ranker whose fit takes no sample weights (SVMMAP): the refit on all the data
calls ``fit(X, y)``, as the folds do, so the Agarwal experiment can choose SVMMAP's C."""

import numpy as np
import pytest

from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import SVMMAPRanker
from ranker_data import two_classes  # tests/evaluation/ranker_data.py


def test_ranker_cv_fits_svmmap_without_sample_weights():
    # was: TypeError: SVMMAPRanker.fit() got an unexpected keyword argument 'sample_weight'
    X, y = two_classes(N=40, zeros=0.0)
    search = RankerCV(SVMMAPRanker(), Cs=[1.0, 10.0], cv=2).fit(X, y)
    assert search.C_ in (1.0, 10.0)
    np.testing.assert_array_equal(search.coef_, search.best_estimator_.coef_)


def test_ranker_cv_refuses_weights_svmmap_cannot_take():
    X, y = two_classes(N=40, zeros=0.0)
    with pytest.raises((TypeError, ValueError), match="sample_weight"):
        RankerCV(SVMMAPRanker(), Cs=[1.0], cv=2).fit(X, y, sample_weight=np.ones(len(y)))
