"""scikit-learn style bipartite rankers: Infinite Push (l2, l1) and RankSVM.

Each estimator minimises, in paper scaling with ``lam = 1 / C`` (Agarwal 2011 writes the
regulariser through ``C = 1/lambda``, eq. 3.8; docs/mathematics.md)::

    InfinitePushRanker        (lam/2) ||w||^2 + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    SparseInfinitePushRanker  lam ||w||_1     + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    RankSVMRanker             (lam/2) ||w||^2 + (1/(mn)) sum_ij max(0, 1 - w.(x_i^+ - x_j^-))
    SVMMAPRanker              (lam/2) ||w||^2 + max_y [1 - AP(y) - w.(Psi(y*) - Psi(y))]

(Agarwal, SDM 2011, eqs. 3.6 and 4.18; Rakotomamonjy, ICML 2012; SVMMAP: Yue et al., SIGIR
2007, see :class:`SVMMAPRanker`).
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
    RankSVM         (1/(MN)) sum_ij p_i q_j max(0, 1 - w.(x_i^+ - x_j^-))

so integer weights fit the same ranker as the data with every row repeated that many times, and
scaling every weight by one constant changes nothing. The Infinite Push loss is a maximum over
the negatives: the negatives' weights do not change it (any positive weight keeps the row in the
max, exactly as a repeated negative counts once); only a weight of 0, which drops the row, does.
RankSVM uses both classes' weights. Weighted fits need a certified native method
(``"working_set"``, ``"smoothing_newton"`` or ``method=None``, the solver's default) or the CVXPY
backend; any other native method raises ValueError. Whatever else a fit reads from the data is
weighted the same way: a kernel's ``gamma="scale"`` is ``1 / (d * Var_w(X))``, the weighted
variance of the training rows (:mod:`infpush_cvx.evaluation._kernel_ranker`). The fits agree with
the repeated rows to the precision of the solve; TopPush's are refined to the exact optimum
(:mod:`infpush_cvx.solvers.toppush.polish`), since the certified gap of its smooth truncated
quadratic loss bounds the weights' error only by its square root.

Fitting backends (hyper-parameter ``solver``):

- ``"native"``: the project's first-order solvers, ``infpush_cvx.solvers.infinite_push`` and
  ``infpush_cvx.solvers.ranksvm`` (``method`` and ``tol`` are passed on);
- ``"cvxpy"``: the CVXPY problem factory :mod:`infpush_cvx.formulations` (compact form),
  solved with ``cvxpy_solver``;
- ``"auto"`` (default): native for every ranker whose solver module is importable (all of them
  in this package), else CVXPY. The native solvers are certified and linear in memory; CVXPY
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

import importlib
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._sklearn import check_features  # first: without scikit-learn, its ImportError
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.exceptions import DataConversionWarning, NotFittedError
from .._validation import check_bool, check_choice, check_int, check_matrix, check_scalar
from ..data.containers import BipartiteData
from ..data.labels import binary_labels
from .metrics import average_precision
from ..solvers.engines.cvxpy_backend import check_solver, failure_message, solve_problem
from ..solvers.result import CERTIFIED, ConvergenceWarning as SolverConvergenceWarning

__all__ = ["ConvergenceWarning", "InfinitePushRanker", "SparseInfinitePushRanker",
           "RankSVMRanker", "SVMMAPRanker", "TopPushRanker", "PNormPushRanker",
           "ZeroModelWarning"]

SOLVERS = ("auto", "native", "cvxpy")
#: The CVXPY solvers tried, in order, after ``cvxpy_solver`` gives no point.
_FALLBACK = ("CLARABEL", "ECOS", "SCS")


class ConvergenceWarning(SolverConvergenceWarning, SklearnConvergenceWarning):
    """A fit ended without its certificate: the project's solver warning and scikit-learn's
    ``ConvergenceWarning`` at once, so a filter on either (``GridSearchCV`` users silence the
    latter) reaches it."""


class ZeroModelWarning(UserWarning):
    """The fitted ranker uses no feature: every item gets the same score (a constant ranking)."""


def _native_available(module: str) -> bool:
    try:
        importlib.import_module(f"infpush_cvx.solvers.{module}")
    except ImportError:
        return False
    return True


def _read_labels(y, n_rows: int, owner: str, *, pos_label, classes=None):
    """``y`` under the binary-label contract, one label per row of X; ValueError naming y.

    A column vector (n, 1) is read as 1-D with scikit-learn's DataConversionWarning; a
    continuous target is refused with scikit-learn's wording ("Unknown label type").
    """
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change "
                      "the shape of y to (n_samples,), for example using ravel().",
                      DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"y must be 1-D with one label per row of X ({n_rows}), "
                         f"got shape {y.shape}")
    try:
        return binary_labels(y, "y", pos_label=pos_label, classes=classes)
    except ValueError as exc:
        kind = _refused_target_kind(y)
        if kind == "continuous":
            raise ValueError(f"Unknown label type: continuous. {exc}") from None
        if kind == "multiclass":
            raise ValueError(f"Only binary classification is supported. The type of the target "
                             f"is multiclass. {exc}") from None
        raise


def _refused_target_kind(y: np.ndarray) -> str | None:
    """"continuous" (non-integer floats), "multiclass" (over two labels) or None (other)."""
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.any(y != np.round(y)):
        return "continuous"
    try:
        return "multiclass" if np.unique(y).size > 2 else None
    except TypeError:  # objects that do not compare (mixed types): refused for another reason
        return None


def _check_name(value, name: str, choices) -> str:
    """A string among ``choices``: TypeError for a non-string, ValueError listing them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {list(choices)}; got "
                        f"{type(value).__name__} {value!r}")
    return check_choice(value, name, choices)


def _native_detail(result) -> str:
    """The solver's own account of an early stop: its method, certified gap and message."""
    gap = "none" if result.gap is None else f"{result.gap:.2e}"
    detail = f"method {result.method!r}, certified relative gap {gap}"
    return detail + (f": {result.message}" if result.message else "")


#: Native methods that take sample weights (None: the solver's default, a certified one).
_WEIGHTED_METHODS = (None, "working_set", "smoothing_newton")


def _sample_weights(sample_weight, n_rows: int, pos: np.ndarray):
    """Validated sample weights: float64 copy of length n_rows, or None.

    scikit-learn's contract: None (every row weight 1), a scalar (every row that weight) or one
    finite nonnegative weight per row; at least one nonzero weight in each class, since rows of
    weight 0 are dropped. ValueError naming sample_weight otherwise.
    """
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight)
    if np.iscomplexobj(sw):
        raise ValueError("Complex data not supported: sample_weight must be real")
    try:
        sw = np.array(sw, dtype=np.float64)  # a copy: the caller's array is untouched
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must be a 1-D array of numbers: {exc}") from None
    if sw.ndim == 0:
        sw = np.full(n_rows, float(sw))
    if sw.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D (one weight per row of X), got shape "
                         f"{sw.shape}")
    if sw.shape[0] != n_rows:
        raise ValueError(f"sample_weight must have one weight per row of X ({n_rows}), got "
                         f"length {sw.shape[0]}")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinite entries")
    if np.any(sw < 0):
        raise ValueError(f"sample_weight must be nonnegative; its smallest entry is "
                         f"{float(sw.min())!r}")
    if not np.any(sw > 0):
        raise ValueError("sample_weight: every weight is zero; at least one non-zero weight is "
                         "needed in each class")
    keep = sw > 0
    if not (pos & keep).any() or not (~pos & keep).any():
        which = "positive" if not (pos & keep).any() else "negative"
        raise ValueError(f"sample_weight is zero on every {which} row: after dropping the rows of "
                         f"weight 0 only one class is left, and both classes are needed")
    return sw


def _feature_matrix(X):
    """X as a finite float64 2-D array, or CSR matrix, with at least one column; ValueError or
    TypeError naming X.

    Array-likes (lists, DataFrames, objects with ``__array__`` only) are converted. A
    scipy.sparse matrix or array of any format (CSR, CSC, COO, ...) becomes one float64
    ``scipy.sparse.csr_matrix``, here and only here: every solver takes CSR rows, and the
    fit slices rows (positives, negatives, folds), which CSR does without a copy of the rest.
    """
    if not sp.issparse(X):
        X = np.asarray(X)
    if np.iscomplexobj(X):
        raise ValueError("Complex data not supported: X must be real")
    shape = X.shape
    if len(shape) == 1:
        raise ValueError(f"X must be 2-D, got an array with shape {shape}. Reshape your data "
                         f"with X.reshape(-1, 1) (one feature) or X.reshape(1, -1) (one row).")
    if len(shape) == 2 and shape[1] == 0:
        # scikit-learn's wording, so sklearn's estimator checks recognise the error
        raise ValueError(f"X has 0 feature(s) (shape={shape}) while a minimum of 1 is "
                         f"required.")
    return check_matrix(X, "X")


def _validated_X(estimator, X, *, reset: bool):
    """X as an array or CSR matrix (:func:`_feature_matrix`); records (``reset``, in ``fit``) or
    checks on ``estimator`` the number of columns and, for a DataFrame, their names (checked
    first)."""
    if hasattr(X, "columns"):
        check_features(estimator, X, reset=reset)
        return _feature_matrix(X)
    X_array = _feature_matrix(X)
    check_features(estimator, X_array, reset=reset)
    return X_array


class _TrainingSet(NamedTuple):
    """The validated data of one fit or path: the split data, the classes and the backend."""

    data: BipartiteData
    classes: np.ndarray
    backend: str
    rows: np.ndarray | None = None      # the row of X behind each row of [Xp; Xn]
    n_samples: int | None = None        # rows of X


class _PathFit(NamedTuple):
    """One solve: weights, status, iterations (None if unknown), certified gap (NaN if none)."""

    coef: np.ndarray
    status: str
    n_iter: int | None
    dual_gap: float
    detail: str


class _BipartiteRanker(ClassifierMixin, BaseEstimator):
    _loss = "infinite_push"
    _penalty = "l2"
    _native_module = "infinite_push"
    #: the native methods that take sample weights (None: the default method); None: all
    _weighted_methods: tuple | None = _WEIGHTED_METHODS

    def __init__(self, C=1.0, *, solver="auto", method=None, tol=1e-6, max_iter=None, eta0=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        self.C = C
        self.solver = solver
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.eta0 = eta0
        self.cvxpy_solver = cvxpy_solver
        self.sparsity_tol = sparsity_tol
        self.pos_label = pos_label
        self.verbose = verbose

    # ---- validation -------------------------------------------------------------------------
    def _check_params(self):
        """Validate every hyper-parameter (``pos_label`` with the labels); return C as float."""
        C = check_scalar(self.C, "C", positive=True)
        _check_name(self.solver, "solver", SOLVERS)
        if self.method is not None:
            _check_name(self.method, "method", self._native_methods())
        check_scalar(self.tol, "tol", positive=True)
        if self.max_iter is not None:
            check_int(self.max_iter, "max_iter", minimum=1)
        if self.eta0 is not None:
            check_scalar(self.eta0, "eta0", positive=True)
        if (self.max_iter is not None or self.eta0 is not None) and self._backend() == "cvxpy":
            raise ValueError("max_iter and eta0 are options of the native solver; "
                             "got them with the CVXPY backend")
        check_solver(self.cvxpy_solver, "cvxpy_solver")
        check_scalar(self.sparsity_tol, "sparsity_tol", nonnegative=True)
        check_bool(self.verbose, "verbose")
        return C

    def _native_methods(self) -> tuple:
        """The native solver's methods for this ranker (the catalog registry's, without the
        "cvxpy" method: that is the ranker's solver="cvxpy" backend); none when the solver
        module cannot be imported."""
        from ..solvers.registry import model
        try:
            return tuple(name for name in model(self._native_module).method_names(
                penalty=self._penalty) if name != "cvxpy")
        except ImportError:
            return ()

    def _backend(self) -> str:
        if self.solver == "auto":
            return "native" if _native_available(self._native_module) else "cvxpy"
        return self.solver

    def _training_set(self, X, y, sample_weight=None, *, classes=None) -> _TrainingSet:
        """The data of a fit: X an array from :func:`_feature_matrix`, y and the weights read
        and checked (``classes``: the labels of the whole data set, when X is one fold)."""
        labels = _read_labels(y, X.shape[0], type(self).__name__, pos_label=self.pos_label,
                              classes=classes)
        sw = _sample_weights(sample_weight, X.shape[0], labels.positive)
        data = BipartiteData.from_labels(X, labels.positive, sample_weight=sw)
        backend = self._backend()
        weighted_methods = self._weighted_methods
        if (data.weighted and backend == "native" and weighted_methods is not None
                and self.method not in weighted_methods):
            raise ValueError(f"sample_weight is supported by the native solver only with the "
                             f"certified methods {weighted_methods[1:]} (or method=None, the "
                             f"default); got method={self.method!r}. Use one of them or "
                             f"solver='cvxpy'.")
        keep = np.ones(X.shape[0], dtype=bool) if sw is None else sw > 0
        rows = np.concatenate([np.flatnonzero(labels.positive & keep),
                               np.flatnonzero(~labels.positive & keep)])
        return _TrainingSet(data, labels.classes, backend, rows, X.shape[0])

    # ---- fitting ----------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit on features X (N x d) and binary labels y (positives: ``pos_label``, else the
        greater label).

        ``sample_weight``: None, a scalar, or one finite nonnegative weight per row (rows of
        weight 0 are dropped); integer weights are equivalent to repeating rows. For the Infinite
        Push rankers the negatives' weights do not change the loss (a maximum over negatives);
        see the module docstring. With the native backend weights need a certified ``method``
        (None, ``"working_set"`` or ``"smoothing_newton"``).
        """
        C = self._check_params()
        X_array = _validated_X(self, X, reset=True)
        training = self._training_set(X_array, y, sample_weight)
        (solve,) = self._solve_path(training, [C])
        self._warn_if_unreliable(training, C, solve, stacklevel=3)
        self._set_fitted(training, C, solve)
        return self

    def _fit_path(self, X, y, Cs, *, sample_weight=None):
        """Weights for every C in ``Cs`` on the same data, as ``[(w, status), ...]`` in the order
        of ``Cs`` (solved from the smallest C up, warm-started; the CVXPY problem is compiled
        once). Warns for every fit that is unconverged or zero. Does not change the estimator.
        """
        self._check_params()
        Cs = [check_scalar(c, "C", positive=True) for c in Cs]
        training = self._training_set(_feature_matrix(X), y, sample_weight)
        path = self._solve_path(training, Cs)
        for C, solve in zip(Cs, path):
            self._warn_if_unreliable(training, C, solve, stacklevel=3)
        return [(solve.coef, solve.status) for solve in path]

    def _set_fitted(self, training: _TrainingSet, C: float, solve: _PathFit) -> None:
        """Store one solve as the fitted model (``n_features_in_``, names: set by the caller)."""
        self.coef_ = solve.coef
        self.status_ = solve.status
        self.n_iter_ = solve.n_iter
        self.dual_gap_ = solve.dual_gap
        self.C_ = C
        self.backend_ = training.backend
        self.n_features_used_ = int(np.count_nonzero(np.abs(solve.coef) > self.sparsity_tol))
        self.classes_ = training.classes
        self._set_kernel_model(training, solve)

    # ---- kernels (InfinitePushRanker, RankSVMRanker: infpush_cvx.evaluation._kernel_ranker)
    # -------------
    def _kernel_kwargs(self, data) -> dict:
        return {}

    def _set_kernel_model(self, training, solve) -> None:
        pass

    def _solve_path(self, training: _TrainingSet, Cs) -> list:
        """One :class:`_PathFit` per C, in the order of ``Cs``; solved in increasing C."""
        if training.backend == "cvxpy":
            path = self._solve_cvxpy(training.data, Cs)
        else:
            path = self._solve_native_path(training.data, Cs)
        if self._penalty == "l1":
            # interior-point solvers return ~1e-9 instead of exact zeros; their signs are noise
            # that would otherwise still order the items
            path = [s._replace(coef=np.where(np.abs(s.coef) > self.sparsity_tol, s.coef, 0.0))
                    for s in path]
        return path

    # ---- honest reporting -------------------------------------------------------------------
    def _warn_if_unreliable(self, training, C, solve, stacklevel, *, zero_model=True):
        """ConvergenceWarning for a fit without its certificate; ZeroModelWarning for w = 0
        (unless ``zero_model`` is False).

        ``stacklevel`` counts from this method's frame, so the warnings point at the caller.
        """
        name = f"{type(self).__name__}(C={C!r})"
        if solve.status not in CERTIFIED:
            detail = solve.detail
            warnings.warn(f"{name}: the {training.backend} solve ended without its optimality "
                          f"certificate (status {solve.status!r}{'; ' + detail if detail else ''}"
                          f"), so coef_ may be far from the optimum. Scale the features (e.g. to "
                          f"[0, 1]), or try method=None (the certified default) or "
                          f"solver='cvxpy'.", ConvergenceWarning, stacklevel=stacklevel)
        if zero_model and not np.any(np.abs(solve.coef) > self.sparsity_tol):
            warnings.warn(f"{name}: the model uses no feature (every |w_k| <= sparsity_tol="
                          f"{self.sparsity_tol!r}), so every item gets the same score: "
                          f"{self._why_zero(training.data, C)}", ZeroModelWarning,
                          stacklevel=stacklevel)

    def _why_zero(self, data, C) -> str:
        """Why the weights are zero: degenerate data (w = 0 optimal for every C), else the C."""
        if self._loss == "ranksvm":
            # at w = 0 every pair is inside the margin: the gradient is mean(Xn) - mean(Xp)
            gap = (data.Xp.T @ data.pos_weights / data.wp_sum
                   - data.Xn.T @ data.neg_weights / data.wn_sum)
            unit = max(float(np.abs(data.Xp).max()), float(np.abs(data.Xn).max()))
            if np.abs(gap).max() <= 1e-9 * unit:  # equal up to rounding, at the data's scale
                return ("the positives and the negatives have the same mean, so w = 0 is the "
                        "RankSVM optimum for every C")
        else:
            from ..data.degeneracy import is_degenerate
            if is_degenerate(data):
                return ("the data are degenerate for the Infinite Push: the mean positive lies "
                        "in the convex hull of the negatives, so w = 0 is optimal for every C "
                        "(see infpush_cvx.data.degeneracy)")
            if self._penalty == "l1":
                from ._lambda_max import infinite_push_l1_lambda_max
                C_min = 1.0 / infinite_push_l1_lambda_max(data)
                if C <= C_min * (1 + 1e-9):
                    return (f"C={C!r} is too small for the l1 penalty, which sets every weight "
                            f"to zero for every C <= C_min = {C_min:.6g} on these data "
                            f"(SparseInfinitePushRanker.C_min); increase C")
        return (f"w = 0 is not optimal for these data: C={C!r} may be very small, the features "
                f"badly scaled, or the solve ended early")

    # ---- backends ---------------------------------------------------------------------------
    def _native_options(self, data) -> dict:
        """The native solver's options common to every C of a path."""
        kwargs = {"tol": self.tol, "verbose": self.verbose}
        for name in ("method", "max_iter", "eta0"):
            if getattr(self, name, None) is not None:
                kwargs[name] = getattr(self, name)
        if data.weighted:
            kwargs["wp"], kwargs["wn"] = data.wp, data.wn
        kwargs.update(self._kernel_kwargs(data))
        return kwargs

    def _native_solve(self, data, lam: float, options: dict, warm_start):
        """One native solve at ``lam`` (paper scaling); returns the solver's result."""
        mod = importlib.import_module(f"infpush_cvx.solvers.{self._native_module}")
        if warm_start is not None:
            options = {**options, "warm_start": warm_start}
        if self._loss == "infinite_push":
            return mod.infinite_push(data.Xp, data.Xn, lam, penalty=self._penalty,
                                     scaling="paper", **options)
        return mod.ranksvm(data.Xp, data.Xn, lam, scaling="paper", **options)

    def _solve_native_path(self, data, Cs):
        """Native solves in increasing C, each warm-started from the previous one."""
        options = self._native_options(data)
        out = [None] * len(Cs)
        prev = None
        for i in np.argsort(Cs, kind="stable"):
            with warnings.catch_warnings():
                # the ranker reports an unconverged solve itself, once, naming C and the caller
                warnings.simplefilter("ignore", SolverConvergenceWarning)
                res = self._native_solve(data, 1.0 / Cs[i], options, prev)
            out[i] = _PathFit(coef=np.asarray(res.w, dtype=np.float64).ravel(),
                              status=res.status, n_iter=_iterations(res.iterations),
                              dual_gap=np.nan if res.gap is None else float(res.gap),
                              detail=_native_detail(res))
            prev = res
        return out

    def _cvxpy_problem(self, data, lam: float):
        """The CVXPY problem of this ranker at ``lam`` (a parameter named "lam")."""
        from .. import formulations
        if self._loss == "infinite_push":
            return formulations.infinite_push_problem(data, lam, penalty=self._penalty,
                                                      scaling="paper", form="compact",
                                                      **self._kernel_kwargs(data))
        return formulations.ranksvm_problem(data, lam, scaling="paper", form="compact",
                                            **self._kernel_kwargs(data))

    def _solve_cvxpy(self, data, Cs):
        """CVXPY solves through the backend (:func:`~infpush_cvx.solvers.engines.cvxpy_backend.
        solve_problem`: the project's statuses), in increasing C of one compiled problem (lambda
        is a cp.Parameter), each with ``warm_start=True``; no certified gap (``dual_gap``
        NaN). RuntimeError naming each solver's cause when none of them gives a point."""
        prob = self._cvxpy_problem(data, 1.0 / Cs[0])
        lam = prob.param_dict["lam"]
        first = check_solver(self.cvxpy_solver, "cvxpy_solver")
        out = [None] * len(Cs)
        for i in np.argsort(Cs, kind="stable"):
            C = Cs[i]
            lam.value = 1.0 / C
            # an interior-point failure on one C should not end a cross-validation run (nor
            # Clarabel's exponential cones, where ECOS or SCS succeed): the other installed
            # conic solvers, in order
            causes = []
            for solver in [first] + [s for s in _FALLBACK if s != first]:
                solve = solve_problem(prob, solver=solver, verbose=self.verbose,
                                      warm_start=True)
                if solve.has_point:
                    break
                causes.append(failure_message(solve, solver))  # it names the solver
            else:
                raise RuntimeError(f"every CVXPY solver failed for C={C}: {'; '.join(causes)}")
            out[i] = _PathFit(coef=solve.values["w"].ravel().copy(), status=solve.status,
                              n_iter=solve.iterations, dual_gap=np.nan,
                              detail=solve.message or f"CVXPY solver {solver}")
        return out

    # ---- prediction -------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise NotFittedError(f"this {type(self).__name__} instance is not fitted yet; "
                                 f"call fit(X, y) first")

    def decision_function(self, X):
        """Ranking scores ``X @ coef_`` (higher = nearer the top), shape (N,).

        X must have the columns seen in ``fit`` (their number, and their names when fitted on a
        DataFrame); ValueError otherwise.
        """
        self._check_fitted()
        X = _validated_X(self, X, reset=False)
        if getattr(self, "kernel", None) is not None:
            from . import _kernel_ranker
            return _kernel_ranker.decision_function(self, X)
        return X @ self.coef_

    def predict(self, X):
        """The positive class (``pos_label``, else the greater label) where
        ``decision_function(X) > 0``, the other class elsewhere; an array of ``classes_``' type.

        The threshold 0 is scikit-learn's rule for a binary decision function, not a fitted one:
        the rankers have no intercept (a ranking ignores shifts), so where 0 falls among the
        scores depends on the origin of the features. Fit a threshold on held-out data when the
        decisions matter (e.g. ``sklearn.model_selection.TunedThresholdClassifierCV``).
        """
        above = self.decision_function(X) > 0
        is_positive = binary_labels(self.classes_, "classes_", pos_label=self.pos_label).positive
        positive_class = self.classes_[is_positive][0]
        negative_class = self.classes_[~is_positive][0]
        return np.where(above, positive_class, negative_class)

    def score(self, X, y, sample_weight=None):
        """Average precision of the ranking of X (Agarwal 2011, section 6).

        ``y`` is read with the classes seen in ``fit`` (and ``pos_label``): a label not among
        ``classes_`` is a ValueError. ``sample_weight``: one weight per row of X, the weighted
        AP of :func:`~infpush_cvx.evaluation.metrics.average_precision` (integer weights are
        repeated rows).
        """
        scores = self.decision_function(X)
        labels = _read_labels(y, scores.shape[0], type(self).__name__, pos_label=self.pos_label,
                              classes=self.classes_)
        return average_precision(labels.positive, scores, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # ClassifierMixin: estimator_type "classifier"
        from sklearn.utils import ClassifierTags
        tags.target_tags.required = True
        tags.input_tags.sparse = True  # scipy.sparse X: converted to CSR once (_feature_matrix)
        # binary labels only: sklearn's checks then feed two-valued y
        tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags


def _iterations(count) -> int | None:
    """A solver's iteration count as an int, None when it reports none."""
    return None if count is None else int(count)


class _KernelRanker(_BipartiteRanker):
    """A bipartite ranker with scikit-learn ``SVC``'s kernel hyper-parameters
    (:mod:`infpush_cvx.evaluation._kernel_ranker`)."""

    def __init__(self, C=1.0, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 solver="auto", method=None, tol=1e-6, max_iter=None, eta0=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        super().__init__(C, solver=solver, method=method, tol=tol, max_iter=max_iter,
                         eta0=eta0, cvxpy_solver=cvxpy_solver, sparsity_tol=sparsity_tol,
                         pos_label=pos_label, verbose=verbose)
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def _check_params(self):
        from . import _kernel_ranker
        _kernel_ranker.check_params(self)
        return super()._check_params()

    def _kernel_kwargs(self, data) -> dict:
        from . import _kernel_ranker
        return _kernel_ranker.solver_kwargs(self, data)

    def _set_kernel_model(self, training, solve) -> None:
        from . import _kernel_ranker
        _kernel_ranker.set_fitted(self, training, solve)

    def _why_zero(self, data, C) -> str:
        from . import _kernel_ranker
        if _kernel_ranker.is_linear(self):
            return super()._why_zero(data, C)
        # the degeneracy tests read the features, not the kernel's feature space
        return (f"beta = 0 is optimal for kernel={self.kernel!r} here: C={C!r} may be very "
                f"small, or the kernel's gamma makes every item alike")


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
    method : None (the native solver's default, certified) or one of the native solver's
        methods for this ranker; ``tol``: passed to the native solver.
    max_iter, eta0 : None (the method's defaults) or the native solver's iteration cap and, for
        ``method="paper"`` (Agarwal's gradient projection), its step scale ``eta_0`` (the
        paper's protocol: ``max_iter=1000`` and ``eta0`` chosen by cross-validation).
    cvxpy_solver : name of an installed CVXPY solver, for the "cvxpy" backend.
    sparsity_tol : ``|w_k| > sparsity_tol`` counts as a used feature (``n_features_used_``);
        for the l1 ranker smaller weights are set to exactly 0.
    pos_label : the positive class; None: the greater of the two labels.
    verbose : bool, default False. True prints the solver's progress to stderr during ``fit``:
        the native solver's lines (a header, one line per iteration, a summary; see
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

    _penalty = "l1"

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
        from ._lambda_max import infinite_push_l1_lambda_max
        X = _feature_matrix(X)
        labels = _read_labels(y, X.shape[0], type(self).__name__, pos_label=self.pos_label)
        sw = _sample_weights(sample_weight, X.shape[0], labels.positive)
        data = BipartiteData.from_labels(X, labels.positive, sample_weight=sw)
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

    _loss = "ranksvm"
    _native_module = "ranksvm"


class SVMMAPRanker(_BipartiteRanker):
    """SVMMAP (Yue, Finley, Radlinski & Joachims, SIGIR 2007): the structural SVM that optimises
    average precision, ``(1/(2C))||w||^2 + max_y [Delta(y) - w.(Psi(y*) - Psi(y))]`` with
    ``Delta = 1 - AP`` (:mod:`infpush_cvx.solvers.svmmap`; paper scaling, ``lam = 1/C``).

    Same parameters and attributes as :class:`InfinitePushRanker`, except: the native backend is
    :func:`infpush_cvx.solvers.svmmap.svmmap` (1-slack cutting planes certified by the duality
    gap of the cutting-plane QP; ``max_iter`` counts its rounds), warm-started along a path of C
    from the previous C's cuts; the ``"cvxpy"`` backend enumerates every ranking
    (:func:`infpush_cvx.formulations.svmmap_problem`) and is limited to training sets of at most
    4 positives and 4 negatives. ``fit`` takes no ``sample_weight`` (average precision with
    weighted items is not defined here).
    """

    _loss = "svmmap"
    _native_module = "svmmap"

    def fit(self, X, y):
        """Fit on features X (N x d) and binary labels y (see :class:`InfinitePushRanker`)."""
        return super().fit(X, y)

    def _native_options(self, data) -> dict:
        if data.weighted:
            raise ValueError("SVMMAPRanker does not take sample weights")
        if getattr(self, "eta0", None) is not None:
            raise ValueError("eta0 is an option of Agarwal's gradient projection, not of SVMMAP's "
                             "cutting planes; leave it None")
        return super()._native_options(data)

    def _native_solve(self, data, lam, options, warm_start):
        from ..solvers.svmmap import svmmap
        return svmmap(data.Xp, data.Xn, lam, warm_start=warm_start, **options)

    def _cvxpy_problem(self, data, lam):
        from ..formulations._svmmap import MAX_SIDE, svmmap_problem
        if data.weighted:
            raise ValueError("SVMMAPRanker does not take sample weights")
        if data.m > MAX_SIDE or data.n > MAX_SIDE:
            raise ValueError(f"SVMMAPRanker(solver='cvxpy') enumerates every ranking and takes at "
                             f"most {MAX_SIDE} positives and {MAX_SIDE} negatives, got {data.m} "
                             f"and {data.n}; use solver='native'")
        return svmmap_problem(data, lam)

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
    dual gradient, certified by the same gap), warm-started along a path of C. A certified
    native solve is then refined to the exact optimum on its active sets, kept only when its
    certified gap is smaller (:mod:`infpush_cvx.solvers.toppush.polish`; ``dual_gap_`` is
    the kept point's): the smooth loss leaves the weights of a point at gap ``g`` only
    ``sqrt(g)``-accurate. As for the Infinite Push the negatives' sample weights do not change
    the loss (a maximum over them).
    """

    _loss = "toppush"
    _native_module = "toppush"
    _weighted_methods = None  # every native method takes sample weights

    def __init__(self, C=1.0, *, loss="truncated_quadratic", solver="auto", method=None,
                 tol=1e-6, cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None,
                 verbose=False):
        super().__init__(C, solver=solver, method=method, tol=tol, cvxpy_solver=cvxpy_solver,
                         sparsity_tol=sparsity_tol, pos_label=pos_label, verbose=verbose)
        self.loss = loss

    def _check_params(self):
        from ..solvers.toppush import LOSSES
        _check_name(self.loss, "loss", LOSSES)
        return super()._check_params()

    def _native_options(self, data) -> dict:
        # a maximum over the negatives: their weights do not enter the loss
        options = {**super()._native_options(data), "loss": self.loss, "wp": data.wp}
        options.pop("wn", None)
        return options

    def _native_solve(self, data, lam, options, warm_start):
        from ..solvers.toppush import toppush
        from infpush_cvx.solvers.toppush.polish import polish
        result = toppush(data.Xp, data.Xn, lam, warm_start=warm_start, **options)
        if result.status not in CERTIFIED:
            return result
        # the exact optimum on the certified point's active sets, certified by the same gap
        # (the negatives' weights, in data, do not enter TopPush's objective or certificate)
        return polish(data, lam, self.loss, result)

    def _cvxpy_problem(self, data, lam):
        from ..formulations import toppush_problem
        return toppush_problem(data, lam, loss=self.loss)

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
    (Rudin's algorithm: coordinate descent over the features, ``max_iter`` rounds, default 100,
    unregularised, so C does not change its model and every fit warns that the regularised
    problem is not certified). The ``"cvxpy"`` backend solves the exponential-cone problem of
    :func:`infpush_cvx.formulations.pnorm_push_problem`. Sample weights weight both averages
    (integer weights are repeated rows), with every method.
    """

    _loss = "pnorm_push"
    _native_module = "pnorm_push"
    _weighted_methods = None  # every native method takes sample weights

    def __init__(self, C=1.0, *, p=1.0, solver="auto", method=None, tol=1e-6, max_iter=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        super().__init__(C, solver=solver, method=method, tol=tol, max_iter=max_iter,
                         cvxpy_solver=cvxpy_solver, sparsity_tol=sparsity_tol,
                         pos_label=pos_label, verbose=verbose)
        self.p = p

    def _check_params(self):
        from ..formulations._pnorm_push import check_p
        check_p(self.p)
        return super()._check_params()

    def _native_options(self, data) -> dict:
        return {**super()._native_options(data), "p": self.p, "wp": data.wp, "wn": data.wn}

    def _native_solve(self, data, lam, options, warm_start):
        from ..solvers.pnorm_push import pnorm_push
        warm = self.method in (None, "newton")  # Rudin's rounds start from w = 0, as published
        return pnorm_push(data.Xp, data.Xn, lam, warm_start=warm_start if warm else None,
                          **options)

    def _cvxpy_problem(self, data, lam):
        from ..formulations import pnorm_push_problem
        return pnorm_push_problem(data, lam, p=self.p)

    def _why_zero(self, data, C) -> str:
        # the gradient at w = 0 is the weighted mean negative minus the weighted mean positive
        gap = (data.Xn.T @ data.neg_weights / data.wn_sum
               - data.Xp.T @ data.pos_weights / data.wp_sum)
        unit = max(float(np.abs(data.Xp).max()), float(np.abs(data.Xn).max()))
        if np.abs(gap).max() <= 1e-9 * unit:
            return ("the positives and the negatives have the same mean, so w = 0 is the "
                    "P-Norm Push optimum for every C")
        return (f"w = 0 is not optimal for these data: C={C!r} may be very small, the features "
                f"badly scaled, or the solve ended early")
