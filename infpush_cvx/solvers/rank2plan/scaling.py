"""Exact rescaling of the Rank2Plan LP to data of unit size (powers of two: no rounding).

The LP (docs/mathematics.md, section 4.1)::

    P(beta; X, g, s, lam) = sum_k s_k max(0, g_k - (X_j - X_i) beta) + lam ||beta||_1

is homogeneous in each of its data. With ``X = a X'``, ``g = b g'``, ``s = c s'``, where a, b and c
are the powers of two that bring the largest entry of X, g and s into [0.5, 1), and with
``beta = (b / a) beta'`` and ``lam' = lam / (a c)``::

    P(beta; X, g, s, lam) = b c P(beta'; X', g', s', lam').

The LP's multipliers scale as ``pi = c pi'`` and its reduced costs ``D^T pi`` as ``a c``; relative
gaps are unchanged. Solving the unit-sized LP keeps HiGHS's absolute tolerances and limits
(matrix entries of 1e15 are "infinite" to it) meaningful for data of any scale, and makes the
solvers exactly invariant to scaling the data by a power of two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from infpush_cvx.data.containers import PairData


def _exponent(top: float) -> int:
    """e with ``top * 2**-e`` in [0.5, 1) (0 for top = 0, which needs no scaling)."""
    return math.frexp(top)[1] if top > 0 else 0


def _ldexp(x: float, e: int) -> float:
    """``x * 2**e`` for a scalar, inf instead of OverflowError."""
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(math.inf, x)


@dataclass(frozen=True)
class PairScaling:
    """Exponents of the powers of two that scale X (``ex``), g (``eg``) and s (``es``)."""

    ex: int
    eg: int
    es: int

    @classmethod
    def of(cls, data: PairData) -> "PairScaling":
        """The scaling of ``data`` (see :meth:`check` for whether its LP is representable)."""
        return cls(_exponent(float(abs(data.X).max())), _exponent(float(data.margin.max())),
                   _exponent(float(data.weight.max())))

    def check(self, data: PairData) -> None:
        """A ValueError when the LP of ``data`` cannot be represented in float64.

        Refused: an objective at beta = 0, ``sum_k s_k g_k``, that overflows or underflows, and
        gaps so large or small against X that a beta of the LP's size, about g / X, would.
        """
        p0 = float(np.ldexp(data.weight, -self.es) @ np.ldexp(data.margin, -self.eg))
        objective_at_zero = _ldexp(p0, self.eg + self.es)
        if not math.isfinite(objective_at_zero) or 0 < objective_at_zero < np.finfo(float).tiny:
            raise ValueError(f"weight and margin: the objective at beta = 0, "
                             f"sum(weight * margin) = {p0:.3g} * 2**{self.eg + self.es}, is "
                             f"outside float64's range; rescale them (the optimal beta does not "
                             f"change when weight is scaled with lam)")
        if p0 > 0 and float(abs(data.X).max()) > 0 and abs(self.eg - self.ex) > 1000:
            raise ValueError(f"margin and X: the LP's beta is of the order of margin / X = "
                             f"2**{self.eg - self.ex}, outside float64's range; rescale them")

    def data(self, data: PairData) -> PairData:
        """The unit-sized data ``(X', g', s')``: each largest entry in [0.5, 1), or all zero."""
        if sp.issparse(data.X):
            X = data.X.copy()
            X.data = np.ldexp(X.data, -self.ex)
        else:
            X = np.ldexp(data.X, -self.ex)
        return PairData(X, data.i, data.j, np.ldexp(data.margin, -self.eg),
                        np.ldexp(data.weight, -self.es))

    def lam(self, lam: float) -> float:
        """``lam' = lam / (a c)`` (inf when it overflows: then beta = 0 is optimal)."""
        return _ldexp(lam, -(self.ex + self.es))

    def beta_in(self, beta: np.ndarray) -> np.ndarray:
        """``beta' = (a / b) beta``."""
        return np.ldexp(np.asarray(beta, dtype=np.float64), self.ex - self.eg)

    def beta_out(self, beta: np.ndarray) -> np.ndarray:
        """``beta = (b / a) beta'``."""
        return np.ldexp(np.asarray(beta, dtype=np.float64), self.eg - self.ex)

    def objective(self, value):
        """An objective value, lower bound, smoothing bound or smoothing parameter tau (in the
        units of ``s_k g_k``): times ``b c``."""
        return None if value is None else _ldexp(float(value), self.eg + self.es)

    def dual(self, pi: np.ndarray) -> np.ndarray:
        """The multipliers ``pi = c pi'``."""
        return np.ldexp(pi, self.es)

    def reduced_cost(self, value):
        """A reduced cost or dual infeasibility (lam units): times ``a c``."""
        return None if value is None else _ldexp(float(value), self.ex + self.es)

    def tau_in(self, tau: np.ndarray) -> np.ndarray:
        """Smoothing parameters live in the units of ``s_k g_k``: divided by ``b c``."""
        return np.ldexp(np.asarray(tau, dtype=np.float64), -(self.eg + self.es))
