"""The problems: their scalings, their objectives in NumPy, and the CVXPY problem factory.

- :mod:`.scaling`: paper and seed scaling, the only place the conversions live.
- :mod:`.objectives`: primal objectives in NumPy, O((m+n) log m), no m x n array.
- The factory: ``infinite_push_problem``, ``ranksvm_problem`` (primal, direct or compact form,
  kernel (RKHS) forms), ``infinite_push_dual_problem``, ``ranksvm_dual_problem`` (and
  ``primal_value_from_dual``), ``rank2plan_lp_problem``, ``pnorm_push_problem``,
  ``toppush_problem``, ``svmmap_problem``. Every one returns a :class:`cvxpy.Problem` whose weight
  variable is named ``w`` (``problem.var_dict["w"]``; ``alpha`` for the duals; for a kernel
  problem, ``kernel=...``, it holds the coefficients beta over the training rows) and whose
  regularisation is a parameter (``lam``; ``C = 1/lam`` for the duals), so re-solving for another
  lambda skips recompilation.

A factory name ends in ``_problem``, so it cannot shadow the solver of the same problem
(``infpush_cvx.solvers.infinite_push``) in a user's namespace. CVXPY is imported on the first use
of a factory name, not by ``scaling`` and ``objectives``, which the solvers import.
"""

import importlib

#: Each name of the factory and the private module that defines it.
_FACTORY = {"FORMS": "_common", "infinite_push_problem": "_infinite_push",
            "ranksvm_problem": "_infinite_push", "infinite_push_dual_problem": "_duals",
            "ranksvm_dual_problem": "_duals", "primal_value_from_dual": "_duals",
            "rank2plan_lp_problem": "_rank2plan", "pnorm_push_problem": "_pnorm_push",
            "toppush_problem": "_toppush", "svmmap_problem": "_svmmap",
            "squared_hinge_ranksvm_problem": "_squared_hinge_ranksvm",
            "query_infinite_push_problem": "_query_infinite_push",
            "query_ranksvm_problem": "_query_ranksvm"}

__all__ = ["scaling", "objectives", *_FACTORY]


def __getattr__(name: str):
    if name not in _FACTORY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_FACTORY[name]}", __name__), name)
    globals()[name] = value  # resolved once
    return value


def __dir__():
    return sorted(set(globals()) | set(_FACTORY))
