"""The one ranker class behind the estimators of :mod:`infpush_cvx.evaluation.rankers`.

:class:`_BipartiteRanker` is parameterised by a model of :mod:`infpush_cvx.solvers.registry`
(``_model``) and a method of that model (the hyper-parameter ``method``; None: the model's
default). A public ranker names its model, its own hyper-parameters and its problem
(:meth:`_BipartiteRanker._problem`); everything else is here: validating X, y and the sample
weights (scikit-learn's contract), the native backend (``MODEL.method(name)`` built with the
ranker's options, ``method.solve(problem, warm_start)``), the CVXPY backend (the problem's
``cvxpy_problem()`` compiled once along a path of C, lambda its parameter, solved through
:mod:`infpush_cvx.solvers.engines.cvxpy_backend`), the warnings of an uncertified or zero fit,
and prediction. Which native methods take sample weights is their ``weights`` trait.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from . import _sklearn  # noqa: F401 - first: without scikit-learn, its ImportError
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.utils.validation import validate_data
from .._logging import solver_log, verbose_logging
from .._validation import check_bool, check_choice, check_matrix, check_scalar, check_vector
from ..data.containers import BipartiteData
from ..data.kernels import check_kernel
from ..data.labels import binary_labels
from . import _kernel_ranker
from .metrics import average_precision
from ..solvers import registry
from ..solvers.engines.cvxpy_backend import check_solver, failure_message, solve_problem
from ..solvers.result import CERTIFIED, ConvergenceWarning as SolverConvergenceWarning

SOLVERS = ("auto", "native", "cvxpy")
#: The CVXPY solvers tried, in order, after ``cvxpy_solver`` gives no point.
_FALLBACK = ("CLARABEL", "ECOS", "SCS")


class ConvergenceWarning(SolverConvergenceWarning, SklearnConvergenceWarning):
    """A fit ended without its certificate: the project's solver warning and scikit-learn's
    ``ConvergenceWarning`` at once, so a filter on either (``GridSearchCV`` users silence the
    latter) reaches it."""


class ZeroModelWarning(UserWarning):
    """The fitted ranker uses no feature: every item gets the same score (a constant ranking)."""


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
        raise ValueError(f"{_sklearn_refusal(y)}{exc}") from None


def _sklearn_refusal(y: np.ndarray) -> str:
    """scikit-learn's words for a continuous target (non-integer floats) or a multiclass one
    (over two labels), which its estimator checks look for; "" for any other refusal."""
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.any(y != np.round(y)):
        return "Unknown label type: continuous. "
    try:
        multiclass = np.unique(y).size > 2
    except TypeError:  # objects that do not compare (mixed types): refused for another reason
        return ""
    return ("Only binary classification is supported. The type of the target is multiclass. "
            if multiclass else "")


def _check_name(value, name: str, choices) -> str:
    """A string among ``choices``: TypeError for a non-string, ValueError listing them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {list(choices)}; got "
                        f"{type(value).__name__} {value!r}")
    return check_choice(value, name, choices)


def _sample_weights(sample_weight, n_rows: int, pos: np.ndarray):
    """Validated sample weights: float64 copy of length n_rows, or None.

    scikit-learn's contract: None (every row weight 1), a scalar (every row that weight) or one
    finite nonnegative weight per row; at least one nonzero weight in each class, since rows of
    weight 0 are dropped. ValueError naming sample_weight otherwise.
    """
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight)
    if sw.ndim == 0:
        sw = np.full(n_rows, sw)
    try:
        # a copy: the caller's array is untouched
        sw = np.array(check_vector(sw, "sample_weight", length=n_rows, nonnegative=True))
    except TypeError as exc:  # complex numbers, strings: scikit-learn's checks want ValueError
        raise ValueError(str(exc)) from None
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
    if X.ndim == 1:
        raise ValueError(f"X must be 2-D, got an array with shape {X.shape}. Reshape your data "
                         f"with X.reshape(-1, 1) (one feature) or X.reshape(1, -1) (one row).")
    if X.ndim == 2 and X.shape[1] == 0:
        # scikit-learn's wording, so sklearn's estimator checks recognise the error
        raise ValueError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    return check_matrix(X, "X")


def _validated_X(estimator, X, *, reset: bool):
    """X as an array or CSR matrix (:func:`_feature_matrix`); records (``reset``, in ``fit``) or
    checks on ``estimator`` ``n_features_in_`` and ``feature_names_in_`` (scikit-learn's checks
    and messages, its value checks skipped).

    A DataFrame's columns are checked before its values, as scikit-learn does: a frame with
    other columns is reported as such, not as the NaN entries pandas fills them with."""
    if hasattr(X, "columns"):
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        return _feature_matrix(X)
    X_array = _feature_matrix(X)
    validate_data(estimator, X_array, reset=reset, skip_check_array=True)
    return X_array


def store_params(estimator, params: dict) -> None:
    """Store the arguments of ``estimator.__init__`` (its ``locals()``) as attributes of the same
    names, unchanged: scikit-learn's constructor contract (validation happens in ``fit``)."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


def check_fitted(estimator, attribute: str) -> None:
    """NotFittedError before ``fit``, which sets ``attribute``."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"this {type(estimator).__name__} instance is not fitted yet; "
                             f"call fit(X, y) first")


def binary_ranker_tags(tags):
    """``tags`` (scikit-learn's) of a bipartite ranker, and of RankerCV: y required, sparse X
    taken, binary labels only."""
    from sklearn.utils import ClassifierTags
    tags.target_tags.required = True
    tags.input_tags.sparse = True  # scipy.sparse X: converted to CSR once (_feature_matrix)
    # binary labels only: sklearn's checks then feed two-valued y
    tags.classifier_tags = ClassifierTags(multi_class=False)
    return tags


class _TrainingSet(NamedTuple):
    """The validated data of one fit or path: the split data and the classes."""

    data: BipartiteData
    classes: np.ndarray
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
    """One ranker over every model of :mod:`infpush_cvx.solvers.registry`: a subclass names its
    model (``_model``), its hyper-parameters (``__init__``), builds the model's problem
    (:meth:`_problem`) and may say why a zero model is optimal (:meth:`_why_zero`). The native
    backend solves the problem with the model's method ``method`` (None: the model's default),
    built with the ranker's options; the CVXPY backend solves the problem's CVXPY form."""

    _model = "infinite_push"
    _penalty = "l2"
    #: whether a path's native solves start from the previous C's result
    _warm_starts = True
    #: the model's name when w = 0 is optimal for every C exactly at equal class means
    _zero_at_equal_means = None
    #: the hyper-parameters that are options of the model's problem (TopPush's ``loss``, ...)
    _problem_params = ()

    def __init__(self, C=1.0, *, solver="auto", method=None, tol=1e-6, max_iter=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        store_params(self, locals())

    # ---- the model --------------------------------------------------------------------------
    def _problem(self, data: BipartiteData, lam: float):
        """The model's problem on ``data`` at ``lam`` (paper scaling, ``lam = 1/C``), with the
        ranker's ``_problem_params`` and its kernel's arguments (none for the linear kernel)."""
        options = {name: getattr(self, name) for name in self._problem_params}
        return registry.model(self._model).problem(data, lam, scaling="paper", **options,
                                                   **_kernel_ranker.solver_kwargs(self, data))

    def _native_methods(self) -> tuple:
        """The model's methods for this ranker's penalty, less its "cvxpy" method (that is the
        ranker's ``solver="cvxpy"`` backend)."""
        names = registry.model(self._model).method_names(penalty=self._penalty)
        return tuple(name for name in names if name != "cvxpy")

    def _method_class(self) -> type:
        model = registry.model(self._model)
        return model.method(self.method or model.default.name)

    def _method_options(self) -> dict:
        """The ranker's options for its native method (those left None are the method's)."""
        options = {"tol": self.tol, "verbose": self.verbose}
        for name in ("max_iter", "eta0"):  # eta0: the rankers with Agarwal's gradient method
            if getattr(self, name, None) is not None:
                options[name] = getattr(self, name)
        return options

    def _native_method(self):
        """The native method built with the ranker's options; ValueError naming an option the
        method does not have."""
        cls = self._method_class()
        fields = {f.name for f in dataclasses.fields(cls)}
        options = self._method_options()
        unknown = sorted(options.keys() - fields)
        if unknown:
            raise ValueError(f"{unknown[0]} is not an option of the method {cls.name!r} of "
                             f"{type(self).__name__}; leave it None")
        return cls(**options)

    # ---- validation -------------------------------------------------------------------------
    def _check_params(self):
        """Validate every hyper-parameter (``pos_label`` with the labels); return C as float."""
        C = check_scalar(self.C, "C", positive=True)
        _check_name(self.solver, "solver", SOLVERS)
        if self.method is not None:
            _check_name(self.method, "method", self._native_methods())
        check_scalar(self.tol, "tol", positive=True)  # (the CVXPY backend builds no method)
        # max_iter and eta0 (where set): options of the native method, checked by building it
        if self._backend() == "cvxpy" and self._method_options().keys() & {"max_iter", "eta0"}:
            raise ValueError("max_iter and eta0 are options of the native solver; "
                             "got them with the CVXPY backend")
        check_solver(self.cvxpy_solver, "cvxpy_solver")
        check_scalar(self.sparsity_tol, "sparsity_tol", nonnegative=True)
        check_bool(self.verbose, "verbose")
        if self._backend() == "native":
            self._native_method()
        return C

    def _backend(self) -> str:
        """``"native"`` for ``solver="auto"``: every registered model has a native method."""
        return "native" if self.solver == "auto" else self.solver

    def _bipartite_data(self, X, y, sample_weight, *, classes=None):
        """``(data, labels, weights)``: X (from :func:`_feature_matrix`) split by the labels
        ``y`` read as in ``fit``, with the validated sample weights (None: unweighted)."""
        labels = _read_labels(y, X.shape[0], type(self).__name__, pos_label=self.pos_label,
                              classes=classes)
        sw = _sample_weights(sample_weight, X.shape[0], labels.positive)
        return BipartiteData.from_labels(X, labels.positive, sample_weight=sw), labels, sw

    def _training_set(self, X, y, sample_weight=None, *, classes=None) -> _TrainingSet:
        """The data of a fit: X an array from :func:`_feature_matrix`, y and the weights read
        and checked (``classes``: the labels of the whole data set, when X is one fold)."""
        data, labels, sw = self._bipartite_data(X, y, sample_weight, classes=classes)
        if data.weighted and self._backend() == "native" and not self._method_class().weights:
            model = registry.model(self._model)
            weighted = [name for name in self._native_methods() if model.method(name).weights]
            raise ValueError(f"sample_weight is supported by the native solver only with the "
                             f"methods {weighted} (or method=None, the default); got "
                             f"method={self.method!r}. Use one of them or solver='cvxpy'.")
        keep = np.ones(X.shape[0], dtype=bool) if sw is None else sw > 0
        rows = np.concatenate([np.flatnonzero(labels.positive & keep),
                               np.flatnonzero(~labels.positive & keep)])
        return _TrainingSet(data, labels.classes, rows, X.shape[0])

    # ---- fitting ----------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit on features X (N x d) and binary labels y (positives: ``pos_label``, else the
        greater label).

        ``sample_weight``: None, a scalar, or one finite nonnegative weight per row (rows of
        weight 0 are dropped); integer weights are equivalent to repeating rows. For the losses
        that are a maximum over the negatives their weights do not change the loss; see the
        module docstring. With the native backend weights need a method that takes them.
        """
        C = self._check_params()
        X_array = _validated_X(self, X, reset=True)
        training = self._training_set(X_array, y, sample_weight)
        (solve,) = self._solve_path(training, [C])
        self._warn_if_unreliable(training.data, C, solve, stacklevel=3)
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
            self._warn_if_unreliable(training.data, C, solve, stacklevel=3)
        return [(solve.coef, solve.status) for solve in path]

    def _set_fitted(self, training: _TrainingSet, C: float, solve: _PathFit) -> None:
        """Store one solve as the fitted model (``n_features_in_``, names: set by the caller)."""
        self.coef_ = solve.coef
        self.status_ = solve.status
        self.n_iter_ = solve.n_iter
        self.dual_gap_ = solve.dual_gap
        self.C_ = C
        self.backend_ = self._backend()
        self.n_features_used_ = int(np.count_nonzero(np.abs(solve.coef) > self.sparsity_tol))
        self.classes_ = training.classes
        if hasattr(self, "kernel"):
            _kernel_ranker.set_fitted(self, training, solve)

    def _solve_path(self, training: _TrainingSet, Cs) -> list:
        """One :class:`_PathFit` per C, in the order of ``Cs``; solved in increasing C by the
        backend's generator, which takes the C values in that order."""
        order = np.argsort(Cs, kind="stable")
        solves = self._solve_cvxpy if self._backend() == "cvxpy" else self._solve_native
        path = [None] * len(Cs)
        for i, solve in zip(order, solves(training.data, [Cs[i] for i in order])):
            if self._penalty == "l1":
                # interior-point solvers return ~1e-9 instead of exact zeros; their signs are
                # noise that would otherwise still order the items
                solve = solve._replace(coef=np.where(np.abs(solve.coef) > self.sparsity_tol,
                                                     solve.coef, 0.0))
            path[i] = solve
        return path

    def _solve_native(self, data, Cs):
        """The native method's solves along ``Cs``, each warm-started from the previous one's
        result; the detail of each is the method's own account (certified gap, message)."""
        method = self._native_method()
        prev = None
        for C in Cs:
            with warnings.catch_warnings(), verbose_logging(solver_log, self.verbose):
                # the ranker reports an unconverged solve itself, once, naming C and the caller
                warnings.simplefilter("ignore", SolverConvergenceWarning)
                res = method.solve(self._problem(data, 1.0 / C), prev)  # (logs its summary)
            gap = "none" if res.gap is None else f"{res.gap:.2e}"
            yield _PathFit(coef=np.asarray(res.w, dtype=np.float64).ravel(), status=res.status,
                           n_iter=None if res.iterations is None else int(res.iterations),
                           dual_gap=np.nan if res.gap is None else float(res.gap),
                           detail=f"method {res.method!r}, certified relative gap {gap}"
                                  + (f": {res.message}" if res.message else ""))
            prev = res if self._warm_starts else None

    def _solve_cvxpy(self, data, Cs):
        """CVXPY solves through the backend (:func:`~infpush_cvx.solvers.engines.cvxpy_backend.
        solve_problem`: the project's statuses) along ``Cs`` of one compiled problem
        (:meth:`_problem`'s ``cvxpy_problem()``, lambda its parameter "lam"), each with
        ``warm_start=True``; no certified gap (``dual_gap`` NaN). RuntimeError naming each
        solver's cause when none of them gives a point."""
        prob = self._problem(data, 1.0 / Cs[0]).cvxpy_problem()
        lam = prob.param_dict["lam"]
        first = check_solver(self.cvxpy_solver, "cvxpy_solver")
        for C in Cs:
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
            yield _PathFit(coef=solve.values["w"].ravel().copy(), status=solve.status,
                           n_iter=solve.iterations, dual_gap=np.nan,
                           detail=solve.message or f"CVXPY solver {solver}")

    # ---- honest reporting -------------------------------------------------------------------
    def _warn_if_unreliable(self, data, C, solve, stacklevel, *, zero_model=True):
        """ConvergenceWarning for a fit without its certificate; ZeroModelWarning for w = 0
        (unless ``zero_model`` is False), saying why from the training ``data``.

        ``stacklevel`` counts from this method's frame, so the warnings point at the caller.
        """
        name = f"{type(self).__name__}(C={C!r})"
        if solve.status not in CERTIFIED:
            detail = solve.detail
            warnings.warn(f"{name}: the {self._backend()} solve ended without its optimality "
                          f"certificate (status {solve.status!r}{'; ' + detail if detail else ''}"
                          f"), so coef_ may be far from the optimum. Scale the features (e.g. to "
                          f"[0, 1]), or try method=None (the certified default) or "
                          f"solver='cvxpy'.", ConvergenceWarning, stacklevel=stacklevel)
        if zero_model and not np.any(np.abs(solve.coef) > self.sparsity_tol):
            if _kernel_ranker.is_linear(self):
                why = self._why_zero(data, C)
            else:  # the degeneracy tests read the features, not the kernel's feature space
                why = (f"beta = 0 is optimal for kernel={self.kernel!r} here: C={C!r} may be "
                       f"very small, or the kernel's gamma makes every item alike")
            warnings.warn(f"{name}: the model uses no feature (every |w_k| <= sparsity_tol="
                          f"{self.sparsity_tol!r}), so every item gets the same score: {why}",
                          ZeroModelWarning, stacklevel=stacklevel)

    def _why_zero(self, data, C) -> str:
        """Why the weights are zero: degenerate data (w = 0 optimal for every C), else the C.

        Degenerate data are recognised here for the models named by ``_zero_at_equal_means``:
        their loss's gradient at w = 0 is a multiple of the weighted mean negative minus the
        weighted mean positive, so w = 0 is optimal for every C when those means are equal."""
        if self._zero_at_equal_means:
            gap = (data.Xp.T @ data.pos_weights / data.wp_sum
                   - data.Xn.T @ data.neg_weights / data.wn_sum)
            unit = max(float(np.abs(data.Xp).max()), float(np.abs(data.Xn).max()))
            if np.abs(gap).max() <= 1e-9 * unit:  # equal up to rounding, at the data's scale
                return (f"the positives and the negatives have the same mean, so w = 0 is the "
                        f"{self._zero_at_equal_means} optimum for every C")
        return (f"w = 0 is not optimal for these data: C={C!r} may be very small, the features "
                f"badly scaled, or the solve ended early")

    # ---- prediction -------------------------------------------------------------------------
    def decision_function(self, X):
        """Ranking scores ``X @ coef_`` (higher = nearer the top), shape (N,).

        X must have the columns seen in ``fit`` (their number, and their names when fitted on a
        DataFrame); ValueError otherwise.
        """
        check_fitted(self, "coef_")
        # X @ coef_ for the rankers without a kernel too
        return _kernel_ranker.decision_function(self, _validated_X(self, X, reset=False))

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
        return np.where(above, self.classes_[is_positive][0], self.classes_[~is_positive][0])

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
        # ClassifierMixin's: estimator_type "classifier"
        return binary_ranker_tags(super().__sklearn_tags__())


class _KernelRanker(_BipartiteRanker):
    """A bipartite pair-hinge ranker with scikit-learn ``SVC``'s kernel hyper-parameters
    (:mod:`infpush_cvx.evaluation._kernel_ranker`)."""

    def __init__(self, C=1.0, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 solver="auto", method=None, tol=1e-6, max_iter=None, eta0=None,
                 cvxpy_solver="CLARABEL", sparsity_tol=1e-6, pos_label=None, verbose=False):
        store_params(self, locals())

    def _check_params(self):
        check_kernel(self.kernel, self.gamma, self.degree, self.coef0)  # errors name them
        return super()._check_params()
