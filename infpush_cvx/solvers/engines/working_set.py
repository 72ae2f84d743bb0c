"""Certified working-set solver shared by the Infinite Push (l2, l1) and RankSVM, in linear memory.

Idea (constraint generation; cf. the "active negatives" of the Infinite Push): at an optimum
only a few negatives attain the max of the hinge sums, and only pairs near the margin
``s_i - t_j = 1`` need their hinge written out. So the objective is replaced by a *lower model*
built at a reference point ``w_c`` (the centre):

- negatives outside a working set W are dropped (Infinite Push only: they lie below the max);
- a *band* of pairs keeps its hinge exactly; every other pair (i, j) of a kept negative is
  replaced by its linear piece ``1 - s_i + t_j`` when it is below the margin at ``w_c``
  (``s_i < 1 + t_j``), and by 0 otherwise.

Every replacement is <= the true hinge, so ``model <= P`` everywhere, and the model is exact near
``w_c``. The pairs below the margin are a prefix of the sorted positive scores for each negative,
so their sums are prefix sums (:mod:`._pair_sums`): nothing of size m x n is ever formed, and a
round costs O(nnz(X) + (m + n) log m) plus the restricted problem.

Each round takes a proximal step ``min model(w) + kappa/2 ||w - w_c||^2`` (C-scaling,
C = 1/lambda), solved to high accuracy by the structured interior-point method of
:mod:`._restricted_ipm` (Clarabel, then HiGHS for an LP, if it fails:
:mod:`.restricted_step`). This is a proximal bundle method with serious and null steps
(Kiwiel 1990; Lemarechal's bundle methods): the step becomes the new centre when the true
objective drops by a fraction of the model's prediction (serious step), and the proximal
weight ``kappa`` shrinks when the model was exact there; otherwise (null step) the missing
negatives are added, the band is widened by the pairs near the margin at the step, and
``kappa`` grows, so the next step stays where the model is exact. Any step's
multipliers extend to a feasible dual point of the full problem (:mod:`.implicit_dual`), so
every round gives a certified relative duality gap, the stopping test.

Real data (binary features, repeated rows, ties, bad scaling) shape three choices:

- the data are rescaled internally to unit largest row norm (lambda rescaled to match), so
  every tolerance is relative and the iterates do not depend on the units of X;
- identical rows should be collapsed into weights beforehand (:mod:`infpush_cvx.data.reductions`):
  the method takes sample weights ``p`` (positives) and ``q`` (negatives);
- many pairs can sit exactly at the margin (ties): they enter the band together, up to
  ``tie_cap``; beyond it they fall on one side (the model stays a lower bound); the band grows
  by up to half its size a round and sheds the pairs that are far from the margin at a new
  centre, and a restricted step that fails ends the solve with its best certified point and an
  honest status instead of an exception.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from infpush_cvx._logging import log_iteration
from infpush_cvx._validation import check_int, check_options, check_scalar
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations.objectives import mean_loss, negative_hinge_sums, penalty_value
from infpush_cvx.data.reductions import collapse_duplicates
from infpush_cvx.solvers.engines.deadline import Deadline, round_end
from infpush_cvx.solvers.engines.pair_sums import SortedScores, near_margin_pairs
from infpush_cvx.solvers.engines.lower_model import LowerModel
from infpush_cvx.solvers.engines.restricted_step import (RestrictedStepFailed, StepNotStarted,
                                                         restricted_step)
from infpush_cvx.solvers.engines.duality import dual_bound, largest_row_norm, relative_gap
from infpush_cvx.solvers.engines.implicit_dual import ImplicitDual


@dataclass(frozen=True)
class WorkingSetOptions:
    """Options of the working-set method (defaults chosen on planted, UCI and LIBSVM data).

    band : margin half-width of the band around ``s_i - t_j = 1`` at the centre.
    band_cap : most new band pairs per round, except pairs exactly at the margin (ties), of
        which up to ``tie_cap`` enter; max_band : most band pairs in a model.
    new_negatives : negatives added per round (Infinite Push; 100 gave the fewest rounds from
        n = 300 to 2,788, and n / 50 was 3x slower than 100 at n = 30,000).
    prox : initial proximal weight (C-scaling; the l2 penalty has curvature 1).
    prune : band pairs farther than ``prune * band`` from the margin at a new centre leave the
        band (0 keeps them all).
    near_max : (Infinite Push) new band pairs are taken only from the negatives that may be at
        the max: those whose hinge sum is at least ``1 - near_max`` times the largest (at the
        centre; at a rejected step, times the model's max there) or whose group had a positive
        multiplier in the last step. A negative far below the max keeps its exact linear piece,
        a lower bound that does not move the step (Spambase l1 at lambda 1e-4: 54 of 709
        working negatives active at the optimum, 3,000 of its 82,000 band pairs); 1 takes
        every working negative's pairs.
    exact_pairs, exact_after : an Infinite Push with at most ``exact_pairs`` (collapsed) pairs
        is solved whole, in one restricted step on the exact model (every negative and every
        pair, no proximal term), after ``exact_after`` rounds without a certificate (l1: one
        a8a subset took 46 rounds). ``exact_pairs=0`` turns it off. (l2 went there from the
        start when every negative tied at the max, as on the a8a subsets; with the band taken
        from the negatives near the max, the rounds are 3-5x faster there than that one step
        of 20 interior-point iterations on all 220,000 pairs.)
    """

    band: float = 0.2
    band_cap: int = 5_000
    tie_cap: int = 100_000
    max_band: int = 500_000
    new_negatives: int = 100
    prox: float = 1.0
    prune: float = 1.0
    near_max: float = 0.1
    exact_pairs: int = 250_000
    exact_after: int = 12

    def __post_init__(self):
        for name in ("band_cap", "tie_cap", "max_band", "new_negatives"):
            check_int(getattr(self, name), f"options.{name}", minimum=1)
        for name in ("exact_pairs", "exact_after"):
            check_int(getattr(self, name), f"options.{name}", minimum=0)
        check_scalar(self.band, "options.band", positive=True)
        for name in ("prox", "prune"):
            check_scalar(getattr(self, name), f"options.{name}", nonnegative=True)
        check_scalar(self.near_max, "options.near_max", nonnegative=True)
        if self.near_max > 1.0:
            raise ValueError(f"options.near_max must be at most 1, got {self.near_max!r}")

    @classmethod
    def of(cls, options) -> WorkingSetOptions | None:
        """``options`` as WorkingSetOptions (None: the defaults): one, or a dict of its field
        names (as CVXPY's ``solver_opts``: an unknown name is a TypeError listing the known
        ones)."""
        if isinstance(options, dict):
            check_options(options, "options", [f.name for f in dataclasses.fields(cls)])
            return cls(**options)
        if options is not None and not isinstance(options, cls):
            raise TypeError(f"options must be a WorkingSetOptions, a dict of its fields or None, "
                            f"got {type(options).__name__}")
        return options


_LARGEST_LAMBDA = 1e200  # on the rescaled problem (unit largest row norm)
#: A rescaling within this of 1 is none.
_UNIT_SCALE = 1e-12


class _Problem:
    """The rescaled problem: data with unit largest row norm, weights, lambda, the objective."""

    def __init__(self, data: BipartiteData, lam: float, loss: str, penalty: str):
        largest = largest_row_norm(data)
        self.scale = 1.0 / largest if largest > 0 else 1.0
        if abs(self.scale - 1.0) <= _UNIT_SCALE:
            # rows of unit norm already, to round-off (a factor of an RBF kernel's Gram
            # matrix: k(x, x) = 1): the data as they are (the product is a copy, 0.36 s of
            # Spambase's 4,601 x 4,146 factor rows)
            self.scale = 1.0
            self.Xp, self.Xn = data.Xp, data.Xn
        else:
            self.Xp, self.Xn = data.Xp * self.scale, data.Xn * self.scale
        self.loss, self.penalty = loss, penalty
        # w . x is unchanged when x -> c x, w -> w / c: lam ||w||^2/2 -> lam c^2,
        # lam ||w||_1 -> lam c
        # (c times c, not c ** 2, which underflows first)
        self.alpha_scale = self.scale * self.scale if penalty == "l2" else self.scale
        self.lam = lam * self.scale * self.scale if penalty == "l2" else lam * self.scale
        # data of size 1e-300 at lambda 0.1 make the rescaled lambda overflow. With unit rows,
        # any lambda above 1e17 gives w* within 1e-17 of 0 and P* = 1 to every digit, so a
        # cap changes no float of the answer, and keeps C = 1/lambda clear of subnormals
        self.lam = min(self.lam, _LARGEST_LAMBDA)
        self.p = np.asarray(data.pos_weights, float)
        self.q = np.asarray(data.neg_weights, float)
        self.M, self.N = float(self.p.sum()), float(self.q.sum())
        self.m, self.n, self.d = data.m, data.n, data.d
        self.coef = dual_bound(self.lam, self.M, self.N, loss)  # C/M or C/(M N)

    def scores(self, w):
        return np.asarray(self.Xp @ w).ravel(), np.asarray(self.Xn @ w).ravel()

    def with_penalty(self, w, loss: float) -> float:
        """``lam pen(w) + loss``: the objective (paper scaling) of ``w`` with the given loss."""
        return self.lam * penalty_value(w, self.penalty, "paper") + loss

    def parts(self, w, s, t):
        """The hinge sums per negative at the scores (s, t) of ``w``, and the objective."""
        H = negative_hinge_sums(s, t, self.p)
        return H, self.with_penalty(w, mean_loss(H, self.loss, self.M, self.q, self.N))

    def objective(self, w, s=None, t=None) -> float:
        if s is None:
            s, t = self.scores(w)
        return self.parts(w, s, t)[1]


#: A null step beyond this proximal weight (C-scaling) ends the solve.
_MAX_PROX = 1e12
#: Early rounds accept a stalled interior-point step (:func:`.restricted_step.restricted_step`)
#: while the certified gap is above this, or the band is so large that Clarabel's
#: factorisations would take minutes.
_INEXACT_UNTIL, _LARGE_BAND = 1e-3, 50_000


#: Below this times ``prox`` a shrinking proximal weight becomes 0 (a plain step), and from 0 a
#: null step raises it back to this.
_SMALLEST_PROX = 1e-4


def _raised(kappa: float, opt: WorkingSetOptions) -> float:
    """The proximal weight after a null step: 4 times ``kappa``, and from a plain step (0) the
    smallest kept one. (Four times 0 is 0: a plain step taken far from the optimum, as a warm
    start's first or one after inexact steps shrank the weight fast, then stayed plain while
    every null step added negatives: the binary 1,500 x 48,000 set's l1 ran 33 null steps at
    gap 0.13 to its time limit.)"""
    return max(4.0 * kappa, _SMALLEST_PROX * opt.prox)


#: A step is solved to ``_STEP_SHARE`` times the certified gap so far, within
#: ``[_TIGHTEST_STEP, _LOOSEST_STEP]`` (the tightest: the interior point's default). Far from
#: the optimum a model step needs no 1e-8 accuracy (its multipliers give an honest certificate
#: whatever their accuracy: :meth:`.LowerModel.dual` repairs them), and an interior point's
#: last decades are a third to a half of its iterations (Spambase's RBF kernel at lambda
#: 1e-3, a step of 46,000 pairs: 36 iterations to 1e-8, 19 to 1e-5). Loose only while the gap
#: is above ``_LOOSE_ABOVE`` (:func:`_step_tol`): that solve took 81 s against about 94 s
#: (67 s when loose down to the last step; :func:`_step_tol` says why it is not).
_STEP_SHARE, _TIGHTEST_STEP, _LOOSEST_STEP, _LOOSE_ABOVE = 1e-3, 1e-8, 1e-5, 0.1
#: A costly step (:attr:`.RestrictedProblem.costly`: the kernel route's spans of 500
#: coordinates or more, where an interior-point iteration is most of a round) is solved to
#: ``_COSTLY_SHARE`` times the certified gap, within ``[_TIGHTEST_STEP, _COSTLY_LOOSEST]``, at
#: every gap; the interior point tests the caller's certificate once there, and goes on
#: towards 1e-8 when it is near (:func:`.restricted_ipm.solve_restricted`), so a last step is
#: not lost to its looseness. Spambase's RBF kernel, one thread: 20.9 s at lambda 1e-3 (9
#: rounds) against 43.5 s (12) with the steps of cheap problems; 20.4 s against 77.7 s at
#: 7e-4, 30.4 s against 41.8 s at 1.5e-3, 13.7 s against 15.6 s at 1e-2. Looser still (up to
#: 1e-3) the band grew to 350,000 pairs on spans of 2,100 coordinates: 60 s at 1e-3.
_COSTLY_SHARE, _COSTLY_LOOSEST = 1e-2, 1e-4


def _step_tol(gap: float, penalty: str, costly: bool = False) -> float:
    """The interior-point accuracy of a step taken when the certified gap is ``gap``; the
    tightest before any certificate (infinite ``gap``: a warm start's first step may be its
    last), for the l1 penalty, whose steps are LPs once the proximal weight has shrunk to 0
    (loose ones sent the binary 1,500 x 48,000 x 300 set's plain steps from vertex to vertex,
    30 null steps at gap 0.0096 to the 150 s limit, against certified in 37 s with tight ones),
    and, unless the step is ``costly`` (``_COSTLY_SHARE``), once the gap is at most
    ``_LOOSE_ABOVE``: cheap steps solved loosely below it changed the path for little gain
    (binary 600 x 20,000 x 300, l2: 15 rounds instead of 14, 2.7 s against 2.4 s; planted
    3,000 x 3,000 x 100: 13 instead of 10), and the RBF ranker's fits on weighted and on
    repeated rows of 15 points, each certified to 1e-9, agreed to 2.8e-5 only in their scores
    instead of 1e-9 (a certificate bounds w by about the square root of its gap; the same
    path, not the certificate, made them agree)."""
    if not np.isfinite(gap) or penalty == "l1":
        return _TIGHTEST_STEP
    if costly:
        return min(_COSTLY_LOOSEST, max(_TIGHTEST_STEP, _COSTLY_SHARE * gap))
    if gap <= _LOOSE_ABOVE:
        return _TIGHTEST_STEP
    return min(_LOOSEST_STEP, max(_TIGHTEST_STEP, _STEP_SHARE * gap))


def _rough(gap: float) -> float:
    """The error below which a crawling interior-point step is taken
    (:func:`.restricted_step.restricted_step`'s ``rough``): a tenth of the certified gap while
    it is above 1e-3 (a step as inexact as the gap itself cannot be relied on to reduce it),
    none before any certificate or below."""
    return 0.1 * gap if _INEXACT_UNTIL < gap < np.inf else 0.0


# ---- the loop ----------------------------------------------------------------------------------

def _initial_w(prob: _Problem, deadline: Deadline | None = None, direction=None):
    """The start: the centroid direction ``mean(Xp) - mean(Xn)`` (weighted) and, when given,
    ``direction``, each scaled by a 1-D search (:func:`_best_along`); the better of the two."""
    w0 = (np.asarray(prob.Xp.T @ prob.p).ravel() / prob.M
          - np.asarray(prob.Xn.T @ prob.q).ravel() / prob.N)
    best = _best_along(prob, w0, deadline)
    if direction is not None and not (deadline is not None and deadline.expired()):
        best = min(best, _best_along(prob, np.asarray(direction, float), deadline), key=_first)
    return best[1]


def _best_along(prob: _Problem, v, deadline: Deadline | None = None):
    """``(objective, c v)`` for the best of 31 scales c (each an objective evaluation: 0.27 s
    at 100,000 x 2,000 sparse), cut short, with the best scale so far, once ``deadline`` has
    passed; ``(inf, 0)`` for v = 0."""
    if not np.any(v):
        return np.inf, np.zeros(prob.d)
    s0, t0 = prob.scores(v)
    spread = max(float(s0.max() - t0.min()), np.finfo(float).tiny)
    best, best_c = np.inf, 0.0
    for c in np.geomspace(1e-3, 1e3, 31) / spread:
        value = prob.objective(c * v, c * s0, c * t0)
        if value < best:
            best, best_c = value, c
        if deadline is not None and deadline.expired():
            break
    return best, best_c * v


#: A group's multiplier counts (the negative is at the model's max) above this fraction of all.
_IN_MAX = 1e-6
_TINY = np.finfo(float).tiny


def _near_max(H, top: float, opt: WorkingSetOptions):
    """Which negatives may be at the max: hinge sums ``H`` at least ``1 - near_max`` times
    ``top``, the largest (a nonpositive ``top``: every negative)."""
    return H >= (1.0 - opt.near_max) * top


def _pair_keys(pairs, n):
    """One integer per pair ``(i, j)`` of the index arrays ``pairs``: ``i n + j``."""
    return pairs[0].astype(np.int64) * n + pairs[1]


def _new_near_margin(ss, v, cols, band, n, *, width, cap, tie_cap):
    """The ``cap`` pairs closest to the margin that are not in ``band`` yet (so the band grows
    by up to ``cap`` pairs whenever such pairs exist), or all pairs exactly at the margin when
    there are more of them (up to ``tie_cap``)."""
    i, j = near_margin_pairs(ss, v, cols, width=width, cap=cap + band[0].size,
                             tie_cap=tie_cap + band[0].size)
    if band[0].size and i.size:
        fresh = ~np.isin(_pair_keys((i, j), n), _pair_keys(band, n))
        i, j = i[fresh], j[fresh]
    if i.size > cap:
        dist = np.abs(ss.raw[i] - v[j])
        ties = int(np.count_nonzero(dist == 0))
        keep_n = min(max(cap, ties), tie_cap, i.size)
        if keep_n < i.size:
            keep = np.argpartition(dist, keep_n - 1)[:keep_n]
            i, j = i[keep], j[keep]
    return i, j


def _merge_band(s, t, max_band, n, *bands):
    """Union of pair lists, the pairs closest to the margin at (s, t) kept when too many."""
    bi, bj = (np.concatenate(part) for part in zip(*bands))
    _, first = np.unique(_pair_keys((bi, bj), n), return_index=True)
    bi, bj = bi[first], bj[first]
    if bi.size > max_band:
        dist = np.abs(s[bi] - t[bj] - 1.0)
        keep = np.sort(np.argpartition(dist, max_band)[:max_band])
        bi, bj = bi[keep], bj[keep]
    order = np.lexsort((bi, bj))  # by negative, then positive
    return bi[order], bj[order]


#: New band pairs a round may number up to this times d^2 (d the features): a step's Newton
#: matrix costs about d^2 per row of its data, a band pair about d, so on wide rows (the kernel
#: route's factor, d = 4,146 on Spambase) the pairs near the margin are cheap next to the
#: step and are all taken at once. Spambase's RBF kernel at lambda 1e-3 had 200,000 to 300,000
#: pairs near the margin from the tenth round on, and a band growing by half a round reached
#: them in 17 rounds (73 s); all at once, in 12 (49 s). On narrow rows the cap is below
#: ``band_cap`` (4,500 at d = 300, the binary sets): growth by half a round, as before (all at
#: once, planted 3,000 x 3,000 x 100 took 40% longer).
_WIDE_BAND = 1.0 / 20.0


def _updated_band(band, prob, opt, ss, s_c, t_c, cols, extra, inW):
    """The band of a new round: pairs far from the margin at the centre pruned, the pairs
    nearest to it among those of the negatives ``cols`` and those near the margin at the last
    rejected step (``extra``) added, and only pairs of working negatives (``inW``) kept."""
    n, v_c = prob.n, 1.0 + t_c
    if opt.prune and band[0].size:  # pairs now far from the margin are exact pieces again
        keep = np.abs(s_c[band[0]] - v_c[band[1]]) <= opt.prune * opt.band
        band = (band[0][keep], band[1][keep])
    # the band may grow by half its size a round: real data can need a large part of the
    # pairs near the margin (a8a subsets: up to a third of them), planted data few; on wide
    # rows by up to d^2 / 20 pairs (:data:`_WIDE_BAND`)
    cap = max(opt.band_cap, band[0].size // 2, int(_WIDE_BAND * prob.d ** 2))
    near = _new_near_margin(ss, v_c, cols, band, n, width=opt.band, cap=cap, tie_cap=opt.tie_cap)
    band = _merge_band(s_c, t_c, opt.max_band, n, band, near, extra)
    keep = inW[band[1]]  # only pairs of working negatives (W only grows: nothing new is lost)
    return band[0][keep], band[1][keep]


def collapse(data: BipartiteData):
    """Identical rows collapsed into weights (an exact reduction), and what to undo it with."""
    reduced, info = collapse_duplicates(data)
    if reduced.m == data.m and reduced.n == data.n:
        return data, None
    return reduced, (info, data.pos_weights, data.neg_weights)


def _attach(dual, collapsed):
    if dual is not None:
        dual.collapsed = collapsed
    return dual


def solve(data: BipartiteData, lam: float, *, loss: str, penalty: str, tol: float,
          max_iter: int, w0=None, deadline: Deadline | None = None,
          options: WorkingSetOptions | None = None, collapsed=None, hull=None):
    """Run the working-set method; returns a dict with w, dual, gap, status, message, history.

    ``lam`` is in paper scaling; ``w0`` a starting point (the caller's units). ``status`` is
    "optimal" when the certified relative gap is <= ``tol``, else "max_iter", "time_limit",
    "stalled" or "failed" (a restricted step no solver could solve), with the best certified
    point found. ``deadline``: the solve's :class:`~.deadline.Deadline` (None: no limit).
    ``collapsed``: ``collapse(data)`` when the caller has it already (a pass over every row).
    ``hull`` (Infinite Push): the non-degenerate
    :class:`~infpush_cvx.data.degeneracy.DegeneracyReport` of the (collapsed) data, if made:
    the negatives of the hull's face nearest the mean positive (its weights' support), which
    attain the max for small w, are working negatives from the first round, and without ``w0``
    the start is the best point along its separating direction when that beats the
    centroid's (a8a's 150 x 1,500 samples, near-degenerate: 1-6 rounds instead of 5-9).
    """
    opt = options or WorkingSetOptions()
    deadline = Deadline(None) if deadline is None else deadline
    begun = deadline.elapsed()
    data, collapsed = collapse(data) if collapsed is None else collapsed
    prob = _Problem(data, lam, loss, penalty)
    n = prob.n
    ip = loss == "infinite_push"
    hull = hull if ip else None
    w_c = (_initial_w(prob, deadline, None if hull is None else hull.direction) if w0 is None
           else np.asarray(w0, float) / prob.scale)
    s_c, t_c = prob.scores(w_c)
    H, P_c = prob.parts(w_c, s_c, t_c)

    # the working negatives (RankSVM: every one). The Infinite Push's are only the top ones at
    # the start, even when (a small starting w: ties) nearly all of them are near the max: a
    # LIBSVM-like set of 1,500 x 48,000 x 300 has 1,272 working negatives at its optimum, and
    # starting with all 48,000 made each step factor a 48,000-group system (l2: the 120 s limit
    # at gap 0.09, against 11 s from the top 100)
    inW = np.zeros(n, dtype=bool) if ip else np.ones(n, dtype=bool)
    inW[np.argsort(-H, kind="stable")[:min(n, opt.new_negatives)]] = True
    if hull is not None:
        inW[np.asarray(hull.weights) > 0] = True
    empty = np.zeros(0, np.intp)
    band = (empty, empty)
    kappa = 0.0 if w0 is not None else opt.prox  # from a warm start, try a plain step first
    small = ip and 0 < prob.m * n <= opt.exact_pairs
    exact_from = None  # the round from which the model is the exact problem

    history = {"objective": [], "gap": [], "time": [], "working_negatives": [], "band_pairs": [],
               "step_solver": [], "prox": [], "step": []}
    best_p, best_d = (P_c, w_c), (-np.inf, None)  # (value, point) candidates
    P_zero = prob.objective(np.zeros(prob.d))
    if P_zero <= P_c:
        # w = 0 is the best point so far (a large lambda, or degenerate data): a candidate
        # with its own dual point, which certifies it at once when lambda is large enough.
        # That dual costs about twice the set-up so far (a product with every row; 0.3 s of
        # 50,000 + 50,000 x 300): under a time limit it is begun only when that fits
        best_p = (P_zero, np.zeros(prob.d))
        if deadline.allows(2.0 * (deadline.elapsed() - begun)):
            zero = _dual_at_zero(prob)
            best_d = (zero.value(prob.lam, penalty), zero)
    status, message, gap, it = "max_iter", "", np.inf, 0
    extra = (empty, empty)  # pairs near the margin at the last rejected step
    H_c = H  # the hinge sums per negative at the centre
    in_max = np.zeros(n, dtype=bool)  # negatives whose group had a multiplier in the last step
    last = None  # the last step's multipliers, by negative and by pair (Infinite Push)
    exact_lp = False  # the model holds the whole (l1) problem: solve it by the simplex method
    for it in range(1, max_iter + 1):
        if small and exact_from is None and it > opt.exact_after:
            exact_from = it
        if it == exact_from:
            # the exact model: every negative, every pair (by negative, then positive)
            inW[:] = True
            band = (np.tile(np.arange(prob.m), n), np.repeat(np.arange(n), prob.m))
            kappa = 0.0
        cols = np.flatnonzero(inW)
        ss = SortedScores(s_c, prob.p)
        if it != exact_from:  # (the exact model has every pair already)
            grow = cols[_near_max(H_c, H_c.max(), opt)[cols] | in_max[cols]] if ip else cols
            band = _updated_band(band, prob, opt, ss, s_c, t_c, grow, extra, inW)
        model = LowerModel(prob, s_c, t_c, cols, *band)

        def certified_gap(w, mu, nu, model=model):
            """The relative gap a step's point and multipliers certify (its certificate)."""
            value = model.dual(mu, nu).value(prob.lam, penalty)
            return relative_gap(min(best_p[0], prob.objective(w)), max(best_d[0], value))

        def certifies(w, mu, nu):
            """Whether a step ends the solve."""
            return certified_gap(w, mu, nu) <= tol
        try:
            w_r, mu, nu, used = restricted_step(model.restricted(kappa, w_c), w_c,
                                                deadline=deadline,
                                                multipliers=_carried(last, cols, band, n),
                                                accept_inexact=(gap > _INEXACT_UNTIL
                                                                or band[0].size > _LARGE_BAND),
                                                simplex_first=exact_lp and kappa == 0,
                                                verify=certifies, rough=_rough(gap),
                                                tol=_step_tol(gap, penalty),
                                                costly_tol=_step_tol(gap, penalty, True),
                                                certificate=(certified_gap, tol))
        except RestrictedStepFailed as exc:
            if isinstance(exc, StepNotStarted) or deadline.expired():
                status = "time_limit"
                message = str(exc) if isinstance(exc, StepNotStarted) else deadline.message()
                break
            if kappa < 1e6 * max(opt.prox, 1.0):  # a better-conditioned (shorter) step next
                kappa = max(10.0 * kappa, opt.prox)
                _record(history, deadline, "failed", best_p[0], gap, cols.size, band[0].size,
                        "none", kappa)
                message = f"restricted step failed, retried with a larger proximal weight: {exc}"
                continue
            status, message = "failed", f"restricted step failed: {exc}"
            break
        dual = model.dual(mu, nu)
        if ip:
            last = (cols, np.asarray(mu, float), _pair_keys(band, n), np.asarray(nu, float))
            in_max[:] = False
            in_max[cols[dual.mu > _IN_MAX * max(float(dual.mu.sum()), _TINY)]] = True
        best_d = max(best_d, (dual.value(prob.lam, penalty), dual), key=_first)
        s_r, t_r = prob.scores(w_r)
        H_r, P_r = prob.parts(w_r, s_r, t_r)
        best_p = min(best_p, (P_r, w_r), key=_first)
        if penalty == "l2" and dual.total > 0:  # w(alpha) is a primal candidate too
            best_p = min(best_p, (prob.objective(dual.w_alpha), dual.w_alpha), key=_first)
        gap = relative_gap(best_p[0], best_d[0])
        loss_r = model.loss_value(w_r)
        model_r = prob.with_penalty(w_r, loss_r)
        predicted = P_c - model_r
        serious = P_r <= P_c - 0.1 * max(predicted, 0.0)
        # the negatives the model misses are found at the model's own step (at a shorter point
        # found below they can lie under the max: a line search that then halves the step
        # round after round without ever adding them stalled Spambase l1 at lambda 1e-4)
        viol_r = np.where(inW, -np.inf, H_r - loss_r * prob.M) if ip else None
        if not serious:
            # a model step too long for the model: the best point on the segment to it, by the
            # true objective (each evaluation O(nnz + (m + n) log m), far cheaper than a step)
            w_l, s_l, t_l, P_l = _segment_search(prob, w_c, s_c, t_c, w_r, s_r, t_r)
            if P_l <= P_c - 0.1 * max(P_c - P_l, 0.0) and P_l < P_c:
                serious = True
                w_r, s_r, t_r, P_r = w_l, s_l, t_l, P_l
                model_r = prob.with_penalty(w_r, model.loss_value(w_r))
                best_p = min(best_p, (P_r, w_r), key=_first)
                gap = relative_gap(best_p[0], best_d[0])
        _record(history, deadline, "serious" if serious else "null", best_p[0], gap, cols.size,
                band[0].size, used, kappa)
        end = round_end(gap, tol, deadline)
        if end is not None:
            status, message = end
            break
        added = 0
        if ip:  # negatives above the model's max at the model's step
            new = viol_r > 1e-12 * max(float(H_r.max()), 1.0)
            if new.sum() > opt.new_negatives:
                new = np.zeros(n, dtype=bool)
                new[np.argpartition(-viol_r, opt.new_negatives)[:opt.new_negatives]] = True
            inW |= new
            added = int(new.sum())
        if serious:
            exact = P_r - model_r <= 0.5 * max(predicted, 0.0)
            w_c, s_c, t_c, P_c = w_r, s_r, t_r, P_r
            H_c = negative_hinge_sums(s_c, t_c, prob.p) if ip else H_c
            extra = (empty, empty)
            if exact:
                kappa = 0.0 if kappa < _SMALLEST_PROX * opt.prox else kappa / 4.0
        else:
            # the model was too optimistic at w_r: widen the band there, shorten the step
            ss_r = SortedScores(s_r, prob.p)
            # the negatives whose model may be wrong at w_r: those near the model's max there
            cols_r = np.flatnonzero(inW & _near_max(H_r, loss_r * prob.M, opt)) if ip else (
                np.flatnonzero(inW))

            def near_step(width):
                return _new_near_margin(ss_r, 1.0 + t_r, cols_r, band, n, width=width,
                                        cap=opt.band_cap, tie_cap=opt.tie_cap)
            extra = near_step(opt.band)
            if not added and extra[0].size == 0:
                # the model is wrong at pairs farther than the band from the margin (they
                # changed sides along a long step): take the closest pairs at any distance
                v_r = 1.0 + t_r[cols_r]
                extra = near_step(float(s_r.max() - s_r.min() + v_r.max() - v_r.min()) + 1.0)
            if not added and extra[0].size == 0 and not exact_lp:
                # every pair of the negatives near the max is in the band and no negative is
                # missing: the model is the problem itself where it matters (every other
                # negative lies below the model's max at the step), so its plain step is the
                # optimum;
                # for the l1 penalty (an LP) a simplex solve gives it without the round-off
                # floor of an interior point that made this step a null step
                kappa, exact_lp = 0.0, penalty == "l1"
            elif not added and extra[0].size == 0:
                if kappa >= _MAX_PROX:
                    status = "stalled"
                    message = ("the model could not be refined: no pair or negative to add and "
                               "the proximal weight at its limit")
                    break
                kappa = max(4.0 * kappa, opt.prox, 1.0)
            elif not added:
                kappa = _raised(kappa, opt)
            elif kappa < opt.prox:
                # negatives were missing, but a step of a proximal weight shrunk by serious
                # steps (to 2.4e-4) also reaches far past the model's band: back towards
                # ``prox`` (binary 1,500 x 48,000, l1: ten null steps at gap 0.34, then 0.085
                # at 60 s instead of 0.34 at 120 s)
                kappa = min(_raised(kappa, opt), opt.prox)
    if status == "max_iter":
        message = f"max_iter={max_iter} rounds reached"
    elif status == "optimal":
        message = ""  # a step that failed and was retried does not concern the caller
    return {"w": best_p[1] * prob.scale, "dual": _attach(best_d[1], collapsed), "gap": gap,
            "status": status, "message": message, "iterations": it, "history": history,
            "objective_paper": best_p[0]}


def _dual_at_zero(prob: _Problem) -> ImplicitDual:
    """The dual point of ``w = 0``: every pair below the margin, the negatives weighted by
    their sample weights for the Infinite Push (theta_j = q_j / N).

    Its gap at ``w = 0`` is about ``||mean positive - mean negative||^2 / (2 lambda)`` relative to
    ``P(0) = 1`` for the l2 penalty, and 0 for the l1 penalty once ``lambda`` is at least the
    largest entry of that difference: it certifies ``w* = 0`` (or nearly) at a large lambda,
    where the working set's own steps (proximal steps of length ~1/lambda) cannot.
    """
    ip = prob.loss == "infinite_push"
    return _dual_below_margin(prob, np.arange(prob.n), prob.q if ip else None, prob.N)


def _dual_below_margin(prob: _Problem, cols, weights, total) -> ImplicitDual:
    """The dual point of ``w = 0`` with every pair of the negatives ``cols`` below the margin
    and no band; for the Infinite Push, group multipliers ``C/M weights / total``."""
    empty = np.zeros(0, np.intp)
    model = LowerModel(prob, np.zeros(prob.m), np.zeros(prob.n), cols, empty, empty)
    # (0 on the "loss >= 0" row)
    mu = None if weights is None else np.append(prob.coef * weights / total, 0.0)
    return model.dual(mu, np.zeros(0))


def _carried(last, cols, band, n):
    """The last step's group and pair multipliers on this round's model, by negative (the
    "loss >= 0" group last) and by pair, 0 for a negative or pair new to it: where the next
    interior-point solve starts (None without a last step)."""
    if last is None:
        return None
    cols_l, mu_l, keys_l, nu_l = last
    mu = np.zeros(cols.size + 1)
    at = np.minimum(np.searchsorted(cols_l, cols), max(cols_l.size - 1, 0))
    hit = cols_l[at] == cols if cols_l.size else np.zeros(cols.size, dtype=bool)
    mu[:-1][hit] = mu_l[at[hit]]
    mu[-1] = mu_l[-1]
    keys = _pair_keys(band, n)
    nu = np.zeros(keys.size)
    if keys_l.size:
        order = np.argsort(keys_l)
        at = np.minimum(np.searchsorted(keys_l[order], keys), keys_l.size - 1)
        hit = keys_l[order][at] == keys
        nu[hit] = nu_l[order[at[hit]]]
    return mu, nu


def _first(pair):
    """The value of a ``(value, point)`` candidate, the key by which the best is kept (the
    first of equals: a later candidate must be strictly better)."""
    return pair[0]


def _segment_search(prob, w_c, s_c, t_c, w_r, s_r, t_r):
    """The best of ``w_c + a (w_r - w_c)``, a in {1/2, 1/4, ..., 1/1024}: scores are affine in a,
    so each point costs one objective evaluation."""
    best = (np.inf, (w_c, s_c, t_c))  # (no finite value on the segment: stay at the centre)
    for a in 0.5 ** np.arange(1, 11):
        w, s, t = w_c + a * (w_r - w_c), s_c + a * (s_r - s_c), t_c + a * (t_r - t_c)
        P = prob.objective(w, s, t)
        if P < best[0]:
            best = (P, (w, s, t))
        elif best[0] < np.inf:
            break  # P is convex along the segment: past its minimum
    return (*best[1], best[0])


def _record(history, deadline, step, objective, gap, n_cols, n_band, used, kappa):
    """A round's row of the history (``step``: serious, null or failed), logged."""
    row = dict(objective=objective, gap=gap, time=deadline.elapsed(), working_negatives=int(n_cols),
               band_pairs=int(n_band), step_solver=used, prox=float(kappa), step=step)
    for key, value in row.items():
        history[key].append(value)
    log_iteration("working_set", len(history["objective"]), objective, gap, row["time"],
                  negatives=int(n_cols), band_pairs=int(n_band), step=step, solver=used,
                  prox=float(kappa))




def degenerate_certificate(data: BipartiteData, lam: float, *, penalty: str, theta,
                           collapsed=None):
    """Certify ``w* = 0`` from convex weights ``theta`` with ``Xn^T theta = mean positive``.

    The dual point ``alpha_ij = (C/M) theta_j p_i`` (every pair of the negatives in theta's
    support below the margin at w = 0, no band) has ``w(alpha) = C (mean positive - Xn^T theta)``,
    so its dual value is ``P(0) = 1`` up to the residual of theta; the returned gap is computed
    from that point like any other, never assumed. ``data`` may be collapsed data, with
    ``collapsed`` from :func:`collapse`.
    """
    prob = _Problem(data, lam, "infinite_push", penalty)
    theta = np.maximum(np.asarray(theta, float), 0.0)
    cols = np.flatnonzero(theta > 0)
    dual = _dual_below_margin(prob, cols, theta[cols], theta[cols].sum())
    w = np.zeros(prob.d)
    primal = prob.objective(w)
    return {"w": w, "dual": _attach(dual, collapsed),
            "gap": relative_gap(primal, dual.value(prob.lam, penalty)),
            "objective_paper": primal}
