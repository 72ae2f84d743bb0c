"""scikit-learn style bipartite rankers, one per model of :mod:`infpush_cvx.solvers.registry`.

Each estimator minimises, in paper scaling with ``lam = 1 / C`` (Agarwal 2011 writes the
regulariser through ``C = 1/lambda``, eq. 3.8; docs/mathematics.md)::

    InfinitePushRanker        (lam/2) ||w||^2 + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    SparseInfinitePushRanker  lam ||w||_1     + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    RankSVMRanker             (lam/2) ||w||^2 + (1/(mn)) sum_ij max(0, 1 - w.(x_i^+ - x_j^-))
    SquaredHingeRankSVMRanker (lam/2) ||w||^2 + (1/(mn)) sum_ij max(0, 1 - w.(x_i^+ - x_j^-))^2
    SVMMAPRanker              (lam/2) ||w||^2 + max_y [1 - AP(y) - w.(Psi(y*) - Psi(y))]

and TopPush and the P-Norm Push (:class:`TopPushRanker`, :class:`PNormPushRanker`) (Agarwal,
SDM 2011, eqs. 3.6 and 4.18; Rakotomamonjy, ICML 2012; Lee & Lin, Neural Computation 2014;
SVMMAP: Yue et al., SIGIR 2007, see :class:`SVMMAPRanker`). Each is the one ranker class of
:mod:`infpush_cvx.evaluation._ranker` given its model, its hyper-parameters and its problem.
The score is linear, ``decision_function(X) = X @ coef_`` (no intercept: the objective fixes only
differences of scores, and a ranking is invariant to a shift). ``score(X, y)`` is the average
precision of :func:`infpush_cvx.evaluation.metrics.average_precision`. ``predict(X)`` is the
positive class where ``decision_function(X) > 0`` (scikit-learn's rule for a binary decision
function). That threshold is not fitted: without an intercept the score 0 is wherever the origin of
the features puts it (on features scaled to [0, 1] it can put every item in the positive class), so
choose a threshold on held-out data when the decisions matter
(``sklearn.model_selection.TunedThresholdClassifierCV``).

Labels follow the binary-label contract of :mod:`infpush_cvx.data.labels` (scikit-learn's):
``classes_`` holds the two labels seen in ``fit``, sorted; the positive class is the greater one
({0, 1}, {-1, 1}, {1, 2}, booleans) or the hyper-parameter ``pos_label`` (needed for string labels).
``score`` reads its ``y`` with the same classes, so cross-validation on any two labels works.

scikit-learn conventions. The rankers are binary classifiers to scikit-learn (``ClassifierMixin``:
the ``estimator_type`` tag, and ``_estimator_type`` for scikit-learn < 1.6), so
``check_cv(5, y, classifier=True)`` stratifies the folds, ``cross_val_predict(...,
method="decision_function")`` returns the 1-D scores and the ``"roc_auc"`` and
``"average_precision"`` scorers read ``decision_function``. scikit-learn reads a binary
``decision_function`` as the score of ``classes_[1]``; that is the positive class unless
``pos_label`` names the smaller label (``pos_label=0`` on {0, 1}, ``"fraud"`` against
``"legit"``), when scikit-learn's scorers see the ranking reversed (``"roc_auc"`` reports
``1 - AUC``): there, score with :mod:`infpush_cvx.evaluation.metrics` and ``pos_label``, or encode
the labels so that the positive class is the greater one. After ``fit``: ``n_features_in_``, and
``feature_names_in_`` when X has string column names (a pandas DataFrame); ``decision_function``,
``predict`` and ``score`` refuse an X with another number of columns or other names
(ValueError). ``n_iter_`` is the iteration count of the solve (None when CVXPY's solver reports
none) and ``dual_gap_`` its certified relative duality gap (NaN without a certificate, as for every
CVXPY solve). :class:`infpush_cvx.evaluation.ranker_cv.RankerCV` selects C by cross-validation
along a warm-started path.

Every hyper-parameter is validated in ``fit`` (as in scikit-learn), by name and type: a wrong
value raises ValueError or TypeError naming it and, for names, listing the valid choices.

Fits are quiet by default; ``verbose=True`` prints the solver's progress to stderr (the native
solvers log through the logger ``infpush_cvx.solvers``, see :mod:`infpush_cvx._logging`; the
CVXPY backend passes ``verbose=True`` to ``Problem.solve``).

Fits are checked after the solve. One that ends without its optimality certificate (a native
status other than ``"optimal"``/``"degenerate_optimal"``, a CVXPY status other than
``"optimal"``) warns with :class:`~infpush_cvx.solvers.result.ConvergenceWarning`; a model that
uses no feature (every ``|w_k| <= sparsity_tol``, a constant ranking) warns with
:class:`ZeroModelWarning`, saying why: degenerate data, or an l1 penalty too strong for the C.

Sample weights, scikit-learn style: ``fit(X, y, sample_weight=None)``, one finite nonnegative
weight per row; rows of weight 0 are dropped (both classes must keep a row of positive weight).
With weights ``p_i`` of the positives and ``q_j`` of the negatives, ``M = sum p``, ``N = sum q``,
the losses become::

    Infinite Push   max_j (1/M) sum_i p_i max(0, 1 - w.(x_i^+ - x_j^-))
    RankSVM         (1/(MN)) sum_ij p_i q_j max(0, 1 - w.(x_i^+ - x_j^-))   (squared: ^2)

so integer weights fit the same ranker as the data with every row repeated that many times, and
scaling every weight by one constant changes nothing. The Infinite Push loss is a maximum over
the negatives: the negatives' weights do not change it (any positive weight keeps the row in the
max, exactly as a repeated negative counts once); only a weight of 0, which drops the row, does.
RankSVM uses both classes' weights. Weighted fits need a native method that takes sample
weights (its ``weights`` trait: ``"working_set"``, ``"smoothing_newton"``, ``method=None``, the
model's default...) or the CVXPY backend; any other native method raises ValueError. Whatever
else a fit reads from the data is weighted the same way: a kernel's ``gamma="scale"`` is
``1 / (d * Var_w(X))``, the weighted variance of the training rows
(:mod:`infpush_cvx.evaluation._kernel_ranker`). The fits agree with the repeated rows to the
precision of the solve; TopPush's are refined to the exact optimum
(:mod:`infpush_cvx.solvers.toppush.polish`), since the certified gap of its smooth truncated
quadratic loss bounds the weights' error only by its square root.

Fitting backends (hyper-parameter ``solver``):

- ``"native"``: the model's method ``method`` (None: the model's default, certified), built
  with the ranker's ``tol``, ``max_iter``, ``eta0``, ``verbose`` (an option the method does not
  have is a ValueError naming it), solving the model's problem;
- ``"cvxpy"``: the problem's ``cvxpy_problem()`` (compact form), solved with ``cvxpy_solver``
  through :mod:`infpush_cvx.solvers.engines.cvxpy_backend`;
- ``"auto"`` (default): native (every model has a native method). The native solvers are
  certified and linear in memory; CVXPY
  compiles the compact problem, which grows with the data (the l1 ranker at C=10 on the 3,220
  rows of the Spambase training split: native about 1 s, CVXPY killed after 150 s at 3.75 GB;
  on 230 scaled rows, C in {0.1, ..., 1000}: native 1.0 s, CVXPY + Clarabel 2.0 s).

Sparse X: every ranker takes scipy.sparse matrices and arrays of any format (the sklearn tag
``input_tags.sparse`` is True); X is converted once to a float64 CSR matrix, which every
backend takes as it is (a kernel other than "linear" reads dense rows, its Gram matrix being
dense anyway). ``decision_function`` returns a dense 1-D array.

Along a path of C values (cross-validation, :class:`~infpush_cvx.evaluation.ranker_cv.RankerCV`) the
C are solved from the smallest (strongest regularisation) to the largest. Native solves are
warm-started from the previous C's result. The CVXPY problem is compiled once, with lambda a
``cp.Parameter``, and solved with ``warm_start=True``: CVXPY then reuses its compiled problem
and, for solvers that accept one, the previous solution (SCS); Clarabel, the default, is an
interior-point method that reuses its allocated solver but starts from its own initial point.

The rankers are scikit-learn estimators (the ``sklearn`` extra; without it, importing this
module raises an ImportError naming the extra). ``sklearn.utils.estimator_checks`` runs on every
ranker (tests/evaluation/test_rankers.py); the checks that do not apply to a bipartite ranker are
listed there with the reason (``_expected_failed_checks``).
"""

from __future__ import annotations

import numpy as np

from ._ranker import (ConvergenceWarning, ZeroModelWarning, _BipartiteRanker, _KernelRanker,
                      _feature_matrix, store_params)
from ._lambda_max import infinite_push_l1_lambda_max
from ..solvers import registry

__all__ = ["ConvergenceWarning", "InfinitePushRanker", "SparseInfinitePushRanker",
           "RankSVMRanker", "SquaredHingeRankSVMRanker", "SVMMAPRanker", "TopPushRanker",
           "PNormPushRanker", "ZeroModelWarning"]


class InfinitePushRanker(_KernelRanker):
    """Infinite Push, l2 (Agarwal, SDM 2011, eq. 3.6): ``(1/(2C))||w||^2 + max_j mean_i hinge_ij``.

    Parameters
    ----------
    C : float > 0, ``1/lambda``.
    kernel : "linear" (default: the weights ``coef_`` on the features), "rbf", "poly" or a
        callable ``kernel(A, B)``; ``gamma`` ("scale", "auto" or a number >= 0), ``degree``,
        ``coef0``: as in scikit-learn's ``SVC`` (except that "scale" reads the training rows
        with their sample weights, so integer weights are repeated rows). A kernel fits
        ``f = sum_k beta_k K(x_k, .)`` over the training rows (the RKHS problem,
        :mod:`infpush_cvx.data.kernels`), exactly, by the native solvers on the rows of a
        factor of the Gram matrix (O(N^2) memory, O(N^3) time) or by CVXPY. Not for the l1
        ranker.
    solver : "auto" | "native" | "cvxpy" (see the module docstring).
    method : None (the model's default method, certified) or one of the model's native
        methods for this ranker; ``tol``: passed to the method.
    max_iter, eta0 : None (the method's defaults) or the method's iteration cap and, for
        ``method="paper"`` (Agarwal's gradient projection), its step scale ``eta_0`` (the
        paper's protocol: ``max_iter=1000`` and ``eta0`` chosen by cross-validation).
    cvxpy_solver : name of an installed CVXPY solver, for the "cvxpy" backend.
    sparsity_tol : ``|w_k| > sparsity_tol`` counts as a used feature (``n_features_used_``);
        for the l1 ranker smaller weights are set to exactly 0.
    pos_label : the positive class; None: the greater of the two labels.
    verbose : bool, default False. True prints the solver's progress to stderr during ``fit``:
        the native method's lines (a header, one line per iteration, a summary; see
        :func:`infpush_cvx.solvers.infinite_push`), or CVXPY's and its solver's own output
        (``Problem.solve(verbose=True)``). False prints nothing.

    Attributes: ``coef_``, ``status_``, ``backend_``, ``classes_`` (the two labels, sorted),
    ``n_features_used_``, ``n_features_in_``, ``feature_names_in_`` (fitted on string column
    names only), ``n_iter_`` (the solver's iterations; None when CVXPY's solver reports none),
    ``dual_gap_`` (certified relative duality gap; NaN without a certificate, as with CVXPY),
    ``C_``; ``dual_coef_`` (one coefficient beta per row of the X given to ``fit``),
    ``support_`` (the rows with a nonzero one), ``support_vectors_`` and ``gamma_`` (resolved):
    ``decision_function(X) = K(X, support_vectors_) @ dual_coef_[support_]``. With a kernel other
    than "linear", ``coef_`` and ``n_features_used_`` are None.

    ``fit(X, y, sample_weight=None)``: integer weights are repeated rows. The loss is a maximum
    over the negatives, so the negatives' weights do not change it (only a weight of 0, which
    drops the row, does); the positives' weights weight the mean over positives.
    """

    _model = "infinite_push"

    def _why_zero(self, data, C) -> str:
        """Why w = 0 is the Infinite Push optimum: degenerate data, or (l1) C at most C_min
        (the l1 ranker's ``_why_zero`` too)."""
        from ..data.degeneracy import is_degenerate
        if is_degenerate(data):
            return ("the data are degenerate for the Infinite Push: the mean positive lies in the "
                    "convex hull of the negatives, so w = 0 is optimal for every C "
                    "(see infpush_cvx.data.degeneracy)")
        if self._penalty == "l1":
            C_min = 1.0 / infinite_push_l1_lambda_max(data)
            if C <= C_min * (1 + 1e-9):
                return (f"C={C!r} is too small for the l1 penalty, which sets every weight to "
                        f"zero for every C <= C_min = {C_min:.6g} on these data "
                        f"(SparseInfinitePushRanker.C_min); increase C")
        return _BipartiteRanker._why_zero(self, data, C)


class SparseInfinitePushRanker(_BipartiteRanker):
    """Sparse Infinite Push, l1 (Rakotomamonjy, ICML 2012):
    ``(1/C)||w||_1 + max_j mean_i hinge_ij``.

    Same parameters and attributes as :class:`InfinitePushRanker` (no kernel). ``solver="auto"``
    is the native certified working-set method (``infpush_cvx.solvers.infinite_push``,
    ``penalty="l1"``). As for the l2 ranker, the negatives' sample weights do not change the
    loss.

    The model is zero (every item scored alike) for every ``C <= C_min``: :meth:`C_min` and
    :meth:`lambda_max` give that threshold for given data, a natural start of a grid of C
    (``RankerCV(ranker, Cs=C_min * np.logspace(0.1, 3, 10))``).
    """

    _model = "infinite_push"
    _penalty = "l1"

    def __init__(self, C=1.0, *, solver="auto", method=None, tol=1e-6, max_iter=None, eta0=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        store_params(self, locals())

    def _problem(self, data, lam):
        return registry.model(self._model).problem(data, lam, penalty="l1", scaling="paper")

    _why_zero = InfinitePushRanker._why_zero

    def lambda_max(self, X, y, sample_weight=None) -> float:
        """The smallest ``lam = 1/C`` with ``w* = 0`` on (X, y) (paper scaling)::

            lambda_max = min_{mu in simplex} || xbar^+ - Xn^T mu ||_inf

        with ``xbar^+`` the (weighted) mean positive and ``Xn`` the negatives: the least
        ``||g||_inf`` over the subgradients ``g`` of the loss at ``w = 0``, so that ``w = 0``
        is optimal exactly when the l1 penalty's box ``lam [-1, 1]^d`` holds one
        (docs/mathematics.md, section 2.5; :mod:`infpush_cvx.evaluation._lambda_max`). One LP
        over the negatives (HiGHS). 0.0 on degenerate data, where ``w* = 0`` for every C.
        X, y, ``sample_weight`` and ``pos_label`` are read as in ``fit``; the ranker is not
        changed.
        """
        data = self._bipartite_data(_feature_matrix(X), y, sample_weight)[0]
        return infinite_push_l1_lambda_max(data)

    def C_min(self, X, y, sample_weight=None) -> float:
        """``1 / lambda_max(X, y, sample_weight)``: the model is zero for every ``C <= C_min``
        and uses some feature for every larger C; ``inf`` on degenerate data (zero for every
        C). See :meth:`lambda_max`."""
        lam_max = self.lambda_max(X, y, sample_weight)
        return np.inf if lam_max == 0.0 else 1.0 / lam_max


class RankSVMRanker(_KernelRanker):
    """Bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18): ``(1/(2C))||w||^2 + mean_ij hinge_ij``.

    Same parameters and attributes as :class:`InfinitePushRanker`. With ``sample_weight`` both
    classes' weights enter: ``(1/(MN)) sum_ij p_i q_j hinge_ij``.
    """

    _model = "ranksvm"

    # at w = 0 every pair is inside the margin: the gradient is mean(Xn) - mean(Xp)
    _zero_at_equal_means = "RankSVM"


class SquaredHingeRankSVMRanker(_BipartiteRanker):
    """The squared-hinge (L2-loss) RankSVM (Lee & Lin, Neural Computation 2014), bipartite::

        (1/(2C))||w||^2 + (1/(MN)) sum_ij p_i q_j max(0, 1 - w.(x_i^+ - x_j^-))^2

    (:mod:`infpush_cvx.solvers.squared_hinge_ranksvm`; paper scaling, ``lam = 1/C``). Same
    parameters and attributes as :class:`SparseInfinitePushRanker`, except ``eta0``: the native
    method is ``"newton"`` (truncated Newton on the sorted scores, certified by the duality
    gap, warm-started along a path of C). Sample weights weight both classes' sums (integer
    weights are repeated rows).
    """

    _model = "squared_hinge_ranksvm"

    # at w = 0 every pair is inside the margin: the gradient is 2 (mean(Xn) - mean(Xp))
    _zero_at_equal_means = "squared-hinge RankSVM"


class SVMMAPRanker(_BipartiteRanker):
    """SVMMAP (Yue, Finley, Radlinski & Joachims, SIGIR 2007): the structural SVM that optimises
    average precision, ``(1/(2C))||w||^2 + max_y [Delta(y) - w.(Psi(y*) - Psi(y))]`` with
    ``Delta = 1 - AP`` (:mod:`infpush_cvx.solvers.svmmap`; paper scaling, ``lam = 1/C``).

    Same parameters and attributes as :class:`InfinitePushRanker`, except (no kernel, no
    ``eta0``): the native backend is
    :func:`infpush_cvx.solvers.svmmap.svmmap` (1-slack cutting planes certified by the duality
    gap of the cutting-plane QP; ``max_iter`` counts its rounds), warm-started along a path of C
    from the previous C's cuts; the ``"cvxpy"`` backend enumerates every ranking
    (:func:`infpush_cvx.formulations.svmmap_problem`) and is limited to training sets of at most
    4 positives and 4 negatives. ``fit`` takes no ``sample_weight`` (average precision with
    weighted items is not defined here).
    """

    _model = "svmmap"

    def fit(self, X, y):
        """Fit on features X (N x d) and binary labels y (see :class:`InfinitePushRanker`)."""
        return super().fit(X, y)

    def _problem(self, data, lam):
        from ..formulations._svmmap import MAX_SIDE
        if self._backend() == "cvxpy" and (data.m > MAX_SIDE or data.n > MAX_SIDE):
            raise ValueError(f"SVMMAPRanker(solver='cvxpy') enumerates every ranking and takes at "
                             f"most {MAX_SIDE} positives and {MAX_SIDE} negatives, got {data.m} "
                             f"and {data.n}; use solver='native'")
        return super()._problem(data, lam)

    def _why_zero(self, data, C) -> str:
        return (f"w = 0 is the SVMMAP optimum only when no direction improves the worst-case "
                f"average precision loss: C={C!r} may be very small, or the classes "
                f"indistinguishable by a linear score")


class TopPushRanker(_BipartiteRanker):
    """TopPush (Li, Jin & Zhou, NIPS 2014): ``(1/(2C))||w||^2 + mean_i loss(max_j t_j - s_i)``,
    every positive pushed above the highest-scoring negative (:mod:`infpush_cvx.solvers.toppush`).

    ``loss``: ``"truncated_quadratic"`` (``(1 + z)_+^2``, the paper's) or ``"hinge"``. Other
    parameters and attributes as :class:`InfinitePushRanker`; the native methods are
    ``"interior_point"`` (the default, certified) and ``"dual_agd"`` (the paper's accelerated
    dual gradient, certified by the same gap), warm-started along a path of C, and built with
    ``polish=True``: a certified solve is refined to the exact optimum on its active sets, kept
    only when its certified gap is smaller (:mod:`infpush_cvx.solvers.toppush.polish`;
    ``dual_gap_`` is the kept point's), since the smooth loss leaves the weights of a point at
    gap ``g`` only ``sqrt(g)``-accurate. As for the Infinite Push the negatives' sample weights
    do not change the loss (a maximum over them).
    """

    _model = "toppush"
    _problem_params = ("loss",)

    def __init__(self, C=1.0, *, loss="truncated_quadratic", solver="auto", method=None,
                 tol=1e-6, cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None,
                 verbose=False):
        store_params(self, locals())

    def _method_options(self) -> dict:
        return {**super()._method_options(), "polish": True}

    def _why_zero(self, data, C) -> str:
        return (f"w = 0 is the TopPush optimum only when no direction lowers the positives' "
                f"losses against the top negative: C={C!r} may be very small, or the classes "
                f"indistinguishable by a linear score")


class PNormPushRanker(_BipartiteRanker):
    """The P-Norm Push (Rudin, JMLR 2009), l2-regularised, paper scaling, ``lam = 1/C``::

        (1/(2C))||w||^2 + (1/p) log( (1/n) sum_j ((1/m) sum_i exp(-w.(x_i^+ - x_j^-)))^p )

    (:mod:`infpush_cvx.solvers.pnorm_push`; p = 1 is RankBoost's exponential loss, and [Agarwal,
    SDM 2011] compares p = 1, 4, 16, 64). ``p``: the exponent, a number >= 1. Other parameters
    and attributes as :class:`InfinitePushRanker`; the native methods are ``"newton"`` (the
    default, certified by the duality gap, warm-started along a path of C) and ``"boosting"``
    (Rudin's algorithm: coordinate descent over the features from w = 0, as published,
    ``max_iter`` rounds, default 100, unregularised, so C does not change its model and every
    fit warns that the regularised problem is not certified). The ``"cvxpy"`` backend solves
    the exponential-cone problem of :func:`infpush_cvx.formulations.pnorm_push_problem`. Sample
    weights weight both averages (integer weights are repeated rows), with every method.
    """

    _model = "pnorm_push"
    _problem_params = ("p",)

    def __init__(self, C=1.0, *, p=1.0, solver="auto", method=None, tol=1e-6, max_iter=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        store_params(self, locals())

    @property
    def _warm_starts(self) -> bool:
        return self.method in (None, "newton")  # Rudin's rounds start from w = 0, as published

    # the gradient at w = 0 is the weighted mean negative minus the weighted mean positive
    _zero_at_equal_means = "P-Norm Push"
