"""scikit-learn style bipartite rankers: Infinite Push (l2, l1) and RankSVM.

Each estimator minimises, in paper scaling with ``lam = 1 / C`` (Agarwal 2011 writes the
regulariser through ``C = 1/lambda``, eq. 3.8)::

    InfinitePushRanker        (lam/2) ||w||^2 + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    SparseInfinitePushRanker  lam ||w||_1     + max_j (1/m) sum_i max(0, 1 - w.(x_i^+ - x_j^-))
    RankSVMRanker             (lam/2) ||w||^2 + (1/(mn)) sum_ij max(0, 1 - w.(x_i^+ - x_j^-))

(Agarwal, SDM 2011, eqs. 3.6 and 4.18; Rakotomamonjy, ICML 2012).
The score is linear, ``decision_function(X) = X @ coef_`` (no intercept: a ranking is invariant
to it). ``score(X, y)`` is the average precision of :func:`infpush_cvx.metrics.average_precision`.

Labels follow the binary-label contract of :mod:`infpush_cvx.labels` (scikit-learn's): ``classes_``
holds the two labels seen in ``fit``, sorted; the positive class is the greater one ({0, 1},
{-1, 1}, {1, 2}, booleans) or the hyper-parameter ``pos_label`` (needed for string labels).
``score`` reads its ``y`` with the same classes, so cross-validation on any two labels works.

Every hyper-parameter is validated in ``fit`` (as in scikit-learn), by name and type: a wrong
value raises ValueError or TypeError naming it and, for names, listing the valid choices.

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
backend; any other native method raises ValueError.

Fitting backends (hyper-parameter ``solver``):

- ``"native"``: the project's first-order solvers, ``infpush_cvx.solvers.infinite_push`` and
  ``infpush_cvx.solvers.ranksvm`` (``method`` and ``tol`` are passed on);
- ``"cvxpy"``: the CVXPY problem factory :mod:`infpush_cvx.formulations` (compact form),
  solved with ``cvxpy_solver``;
- ``"auto"`` (default): native when those solver modules are importable, else CVXPY (except the
  l1 ranker, where CVXPY is faster; see :class:`SparseInfinitePushRanker`).
Along a path of C values (cross-validation) the native solves are warm-started from the previous
C and the CVXPY problem is compiled once (lambda is a parameter).

scikit-learn is optional: without it the estimators still work (a small ``get_params`` /
``set_params`` base replaces ``BaseEstimator``). With it, every check of
``sklearn.utils.estimator_checks.check_estimator`` passes (tests/evaluation/test_rankers.py), with
these documented exceptions: ``check_array_api_input`` is skipped by scikit-learn itself unless
``SCIPY_ARRAY_API`` is set; ``check_sample_weights_pandas_series`` is skipped by scikit-learn
when pandas is not installed; sparse inputs are not accepted (declared by the input tags), so
``check_sample_weight_equivalence_on_sparse_data`` does not apply; the rankers have no
``predict``, so classifier checks do not apply, and the tag ``classifier_tags.multi_class = False``
declares the binary-label contract so that the generic checks feed two-valued targets. The
sample-weight checks that apply (list / not-an-array weights, shape errors, all-zero weights,
weights not overwritten, and ``check_sample_weight_equivalence_on_dense_data``: integer weights
against repeated rows, zero weights against removed rows, compared on ``decision_function`` to
scikit-learn's default ``rtol=1e-7``) run and pass.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import scipy.sparse as sp

from ._validation import check_choice, check_matrix, check_scalar
from .data import BipartiteData
from .labels import binary_labels
from .metrics import average_precision
from .solvers.result import ConvergenceWarning

try:  # scikit-learn is optional
    from sklearn.base import BaseEstimator as _Base
    _HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised only without sklearn
    _HAVE_SKLEARN = False

    class _Base:
        """get_params / set_params from the __init__ signature (the sklearn contract)."""

        @classmethod
        def _get_param_names(cls):
            import inspect
            sig = inspect.signature(cls.__init__)
            return sorted(p for p in sig.parameters if p != "self")

        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError(f"invalid parameter {k!r} for {type(self).__name__}")
                setattr(self, k, v)
            return self

__all__ = ["InfinitePushRanker", "SparseInfinitePushRanker", "RankSVMRanker", "ZeroModelWarning"]

SOLVERS = ("auto", "native", "cvxpy")
_FALLBACK = ("CLARABEL", "ECOS", "SCS")
#: Statuses whose certificate holds: the native solvers' two, and CVXPY's "optimal".
_CERTIFIED = ("optimal", "degenerate_optimal")


class ZeroModelWarning(UserWarning):
    """The fitted ranker uses no feature: every item gets the same score (a constant ranking)."""


def _native_available(module: str) -> bool:
    try:
        importlib.import_module(f"infpush_cvx.solvers.{module}")
    except ImportError:
        return False
    return True


def _read_labels(y, n_rows: int, owner: str, *, pos_label, classes=None):
    """``y`` under the binary-label contract, one label per row of X; ValueError naming y."""
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"y must be 1-D with one label per row of X ({n_rows}), "
                         f"got shape {y.shape}")
    return binary_labels(y, "y", pos_label=pos_label, classes=classes)


def _check_name(value, name: str, choices) -> str:
    """A string among ``choices``: TypeError for a non-string, ValueError listing them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {list(choices)}; got "
                        f"{type(value).__name__} {value!r}")
    return check_choice(value, name, choices)


def _check_cvxpy_solver(name) -> str:
    """The name of an installed CVXPY solver (any case), upper-cased as CVXPY spells it."""
    import cvxpy as cp
    installed = cp.installed_solvers()
    if not isinstance(name, str):
        raise TypeError(f"cvxpy_solver must be a string, one of the installed CVXPY solvers "
                        f"{installed}; got {type(name).__name__} {name!r}")
    if name.upper() not in installed:
        raise ValueError(f"unknown cvxpy_solver {name!r}; the installed CVXPY solvers are "
                         f"{installed}")
    return name.upper()


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


class _BipartiteRanker(_Base):
    _loss = "infinite_push"
    _penalty = "l2"
    _native_module = "infinite_push"
    _auto_prefers_cvxpy = False

    def __init__(self, C=1.0, *, solver="auto", method=None, tol=1e-6, cvxpy_solver="CLARABEL",
                 sparsity_tol=1e-6, pos_label=None):
        self.C = C
        self.solver = solver
        self.method = method
        self.tol = tol
        self.cvxpy_solver = cvxpy_solver
        self.sparsity_tol = sparsity_tol
        self.pos_label = pos_label

    # ---- validation -------------------------------------------------------------------------
    def _check_params(self):
        """Validate every hyper-parameter (``pos_label`` with the labels); return C as float."""
        C = check_scalar(self.C, "C", positive=True)
        _check_name(self.solver, "solver", SOLVERS)
        if self.method is not None:
            _check_name(self.method, "method", self._native_methods())
        check_scalar(self.tol, "tol", positive=True)
        _check_cvxpy_solver(self.cvxpy_solver)
        check_scalar(self.sparsity_tol, "sparsity_tol", nonnegative=True)
        return C

    def _native_methods(self) -> tuple:
        """The native solver's methods for this ranker (none when it cannot be imported)."""
        try:
            module = importlib.import_module(f"infpush_cvx.solvers.{self._native_module}")
        except ImportError:
            return ()
        methods = module.METHODS  # Infinite Push: by penalty; RankSVM: one tuple
        return tuple(methods[self._penalty] if isinstance(methods, dict) else methods)

    def _backend(self) -> str:
        if self.solver == "auto":
            if self._auto_prefers_cvxpy:
                return "cvxpy"
            return "native" if _native_available(self._native_module) else "cvxpy"
        return self.solver

    def _check_X(self, X, *, reset: bool):
        if not sp.issparse(X):
            # array-likes (lists, DataFrames, objects with __array__ only) become arrays first
            X = np.asarray(X)
        if np.iscomplexobj(X):
            raise ValueError("Complex data not supported: X must be real")
        shape = np.shape(X)
        if len(shape) == 1:
            raise ValueError(f"X must be 2-D, got an array with shape {shape}. Reshape your data "
                             f"with X.reshape(-1, 1) (one feature) or X.reshape(1, -1) (one row).")
        if len(shape) == 2 and shape[1] == 0:
            # scikit-learn's wording, so sklearn's estimator checks recognise the error
            raise ValueError(f"X has 0 feature(s) (shape={shape}) while a minimum of 1 is "
                             f"required.")
        X = check_matrix(X, "X", allow_sparse=False)
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        return X

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
        self._fit_path(X, y, [self.C], sample_weight=sample_weight, _store=True, _stacklevel=3)
        return self

    def _fit_path(self, X, y, Cs, *, sample_weight=None, _store=False, _stacklevel=2):
        """Weights for every C in ``Cs`` on the same data (the CVXPY problem is compiled once).

        Returns ``[(w, status), ...]``; warns for every fit that is unconverged or zero.
        """
        C = self._check_params()
        X = self._check_X(X, reset=True)
        labels = _read_labels(y, X.shape[0], type(self).__name__, pos_label=self.pos_label)
        sw = _sample_weights(sample_weight, X.shape[0], labels.positive)
        data = BipartiteData.from_labels(X, labels.positive, sample_weight=sw)
        Cs = [check_scalar(c, "C", positive=True) for c in Cs]
        backend = self._backend()
        if data.weighted and backend == "native" and self.method not in _WEIGHTED_METHODS:
            raise ValueError(f"sample_weight is supported by the native solver only with the "
                             f"certified methods {_WEIGHTED_METHODS[1:]} (or method=None, the "
                             f"default); got method={self.method!r}. Use one of them or "
                             f"solver='cvxpy'.")
        if backend == "cvxpy":
            out = self._solve_cvxpy(data, Cs)
        else:
            out = self._solve_native_path(data, Cs)
        if self._penalty == "l1":
            # interior-point solvers return ~1e-9 instead of exact zeros; their signs are noise
            # that would otherwise still order the items
            out = [(np.where(np.abs(w) > self.sparsity_tol, w, 0.0), st, detail)
                   for w, st, detail in out]
        for c, (w, status, detail) in zip(Cs, out):
            self._warn_if_unreliable(data, c, w, status, detail, backend, _stacklevel + 1)
        out = [(w, status) for w, status, _ in out]
        if _store:
            self.coef_, self.status_ = out[0]
            self.C_ = C
            self.backend_ = backend
            self.n_features_used_ = int(np.count_nonzero(np.abs(self.coef_) > self.sparsity_tol))
            self.classes_ = labels.classes
        return out

    # ---- honest reporting -------------------------------------------------------------------
    def _warn_if_unreliable(self, data, C, w, status, detail, backend, stacklevel):
        """ConvergenceWarning for a fit without its certificate; ZeroModelWarning for w = 0.

        ``stacklevel`` counts from this method's frame, so the warnings point at the caller.
        """
        name = f"{type(self).__name__}(C={C!r})"
        if status not in _CERTIFIED:
            warnings.warn(f"{name}: the {backend} solve ended without its optimality certificate "
                          f"(status {status!r}{'; ' + detail if detail else ''}), so coef_ may "
                          f"be far from the optimum. Scale the features (e.g. to [0, 1]), or try "
                          f"method=None (the certified default) or solver='cvxpy'.",
                          ConvergenceWarning, stacklevel=stacklevel)
        if not np.any(np.abs(w) > self.sparsity_tol):
            warnings.warn(f"{name}: the model uses no feature (every |w_k| <= sparsity_tol="
                          f"{self.sparsity_tol!r}), so every item gets the same score: "
                          f"{self._why_zero(data, C)}", ZeroModelWarning,
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
            from .degeneracy import is_degenerate
            if is_degenerate(data):
                return ("the data are degenerate for the Infinite Push: the mean positive lies "
                        "in the convex hull of the negatives, so w = 0 is optimal for every C "
                        "(see infpush_cvx.degeneracy)")
            if self._penalty == "l1":
                return (f"C={C!r} is too small for the l1 penalty, which sets every weight to "
                        f"zero here; increase C")
        return (f"w = 0 is not optimal for these data: C={C!r} may be very small, the features "
                f"badly scaled, or the solve ended early")

    def _solve_native_path(self, data, Cs):
        """Native solves in increasing C, each warm-started from the previous one."""
        mod = importlib.import_module(f"infpush_cvx.solvers.{self._native_module}")
        kwargs = {"tol": self.tol}
        if self.method is not None:
            kwargs["method"] = self.method
        if data.weighted:
            kwargs["wp"], kwargs["wn"] = data.wp, data.wn
        out = [None] * len(Cs)
        prev = None
        for i in np.argsort(Cs, kind="stable"):
            if prev is not None:
                kwargs["warm_start"] = prev
            lam = 1.0 / Cs[i]
            with warnings.catch_warnings():
                # the ranker reports an unconverged solve itself, once, naming C and the caller
                warnings.simplefilter("ignore", ConvergenceWarning)
                if self._loss == "infinite_push":
                    res = mod.infinite_push(data.Xp, data.Xn, lam, penalty=self._penalty,
                                            scaling="paper", **kwargs)
                else:
                    res = mod.rank_svm(data.Xp, data.Xn, lam, scaling="paper", **kwargs)
            out[i] = (np.asarray(res.w, dtype=np.float64).ravel(), res.status,
                      _native_detail(res))
            prev = res
        return out

    def _solve_cvxpy(self, data, Cs):
        import cvxpy as cp

        from . import formulations
        if self._loss == "infinite_push":
            prob = formulations.infinite_push(data, 1.0 / Cs[0], penalty=self._penalty,
                                              scaling="paper", form="compact")
        else:
            prob = formulations.ranksvm(data, 1.0 / Cs[0], scaling="paper", form="compact")
        lam = prob.param_dict["lam"]
        w = prob.var_dict["w"]
        first = _check_cvxpy_solver(self.cvxpy_solver)
        out = []
        for C in Cs:
            lam.value = 1.0 / C
            # an interior-point failure on one C should not end a cross-validation run: retry
            # with the other installed conic solvers, in order
            for solver in [first] + [s for s in _FALLBACK if s != first]:
                try:
                    prob.solve(solver=solver)
                    break
                except cp.error.SolverError:
                    continue
            else:
                raise RuntimeError(f"every CVXPY solver failed for C={C} "
                                   f"(tried {first} and {_FALLBACK})")
            if w.value is None:
                raise RuntimeError(f"CVXPY solver {solver} returned no solution "
                                   f"(status {prob.status}) for C={C}")
            out.append((np.asarray(w.value, dtype=np.float64).copy(), prob.status,
                        f"CVXPY solver {solver}"))
        return out

    # ---- prediction -------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            try:
                from sklearn.exceptions import NotFittedError
            except ImportError:  # pragma: no cover
                NotFittedError = ValueError
            raise NotFittedError(f"this {type(self).__name__} instance is not fitted yet; "
                                 f"call fit(X, y) first")

    def decision_function(self, X):
        """Ranking scores ``X @ coef_`` (higher = nearer the top)."""
        self._check_fitted()
        return self._check_X(X, reset=False) @ self.coef_

    def score(self, X, y):
        """Average precision of the ranking of X (Agarwal 2011, section 6).

        ``y`` is read with the classes seen in ``fit`` (and ``pos_label``): a label not among
        ``classes_`` is a ValueError.
        """
        scores = self.decision_function(X)
        labels = _read_labels(y, scores.shape[0], type(self).__name__, pos_label=self.pos_label,
                              classes=self.classes_)
        return average_precision(labels.positive, scores)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        from sklearn.utils import ClassifierTags
        tags.target_tags.required = True
        tags.input_tags.sparse = False
        # binary labels only: sklearn's checks then feed two-valued y (the ranker is not a
        # classifier: no predict, score is average precision)
        tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags


class InfinitePushRanker(_BipartiteRanker):
    """Infinite Push, l2 (Agarwal, SDM 2011, eq. 3.6): ``(1/(2C))||w||^2 + max_j mean_i hinge_ij``.

    Parameters
    ----------
    C : float > 0, ``1/lambda``.
    solver : "auto" | "native" | "cvxpy" (see the module docstring).
    method : None (the native solver's default, certified) or one of the native solver's
        methods for this ranker; ``tol``: passed to the native solver.
    cvxpy_solver : name of an installed CVXPY solver, for the "cvxpy" backend.
    sparsity_tol : ``|w_k| > sparsity_tol`` counts as a used feature (``n_features_used_``);
        for the l1 ranker smaller weights are set to exactly 0.
    pos_label : the positive class; None: the greater of the two labels.

    Attributes: ``coef_``, ``status_``, ``backend_``, ``classes_`` (the two labels, sorted),
    ``n_features_used_``, ``n_features_in_``.

    ``fit(X, y, sample_weight=None)``: integer weights are repeated rows. The loss is a maximum
    over the negatives, so the negatives' weights do not change it (only a weight of 0, which
    drops the row, does); the positives' weights weight the mean over positives.
    """


class SparseInfinitePushRanker(_BipartiteRanker):
    """Sparse Infinite Push, l1 (Rakotomamonjy, ICML 2012):
    ``(1/C)||w||_1 + max_j mean_i hinge_ij``.

    Same parameters and attributes as :class:`InfinitePushRanker`. ``solver="auto"`` uses CVXPY
    here: on Spambase-sized training sets (230 x 57, C in {0.1, ..., 1000}) CVXPY + Clarabel on
    the compact LP took about 6.6 s against 17-20 s for the native working-set method.
    As for the l2 ranker, the negatives' sample weights do not change the loss.
    """

    _penalty = "l1"
    _auto_prefers_cvxpy = True


class RankSVMRanker(_BipartiteRanker):
    """Bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18): ``(1/(2C))||w||^2 + mean_ij hinge_ij``.

    Same parameters and attributes as :class:`InfinitePushRanker`. With ``sample_weight`` both
    classes' weights enter: ``(1/(MN)) sum_ij p_i q_j hinge_ij``.
    """

    _loss = "ranksvm"
    _native_module = "ranksvm"
