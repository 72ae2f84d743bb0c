"""Benchmark: the models over queries (issue 30) on the LETOR set and at MSLR-WEB10K's shape.

One section per model (the query RankSVM here; the Infinite Push over queries joins it). Every
solve is certified to a relative duality gap of ``tol = 1e-6`` in paper scaling.

RankSVM over queries (``query_ranksvm``, normalization "query", both losses):

1. The LETOR set (``rank.train``: 3,005 documents, 201 queries, 300 features, labels 0-4,
   13,543 pairs) at lambda 1e-3 and 1e-4, against CVXPY + Clarabel on
   ``formulations.query_ranksvm_problem`` (explicit pairs, its default tolerances) in the same
   run; ``ratio`` is ``cvxpy_s / time_s``, ``objective_diff`` the relative difference of the
   objectives. Target: certified in at most 1 s. ``ndcg10_test`` is NDCG@10 on ``rank.test``
   (where ``infpush_cvx.evaluation.query_metrics`` is installed).
2. ``letor_like(10_000, 120, 136, seed=0)`` (MSLR-WEB10K's shape: about 1.2 million documents,
   1.3 GB of features) at lambda 1e-3: time and ``peak_above_data_mib``, the peak resident
   memory of the solve above what the process held with the data loaded. Target: at most 60 s
   and 1 GiB. ``--quick`` runs it on ``letor_like(1_000, 120, 136)``.

Each solve runs in a freshly spawned single-threaded process (``benchmarks/_harness.py``) after
an untimed warm-up solve (imports, numba compilation). The LETOR files are read by
:func:`infpush_cvx.data.datasets.load_letor` (its data folder: ``$INFPUSH_CVX_LETOR_DATA``, or a
``letor`` folder beside the UCI one or in the checkout's ``shared/data``).

Usage::

    python benchmarks/bench_queries.py              # both cases (~5 minutes)
    python benchmarks/bench_queries.py --quick      # the LETOR set at 1e-3, 1,000 MSLR queries
    python benchmarks/bench_queries.py --csv queries.csv
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness  # noqa: E402  (the benchmarks folder is not a package)

LOSSES = ("squared_hinge", "hinge")
LETOR_LAMBDAS = (1e-3, 1e-4)
TOL = 1e-6


def _letor(split: str = "train"):
    """The LETOR split as a QueryData (its queries without pairs are said once, not here)."""
    import warnings

    from infpush_cvx.data.datasets import load_letor
    from infpush_cvx.data.queries import QueryWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        return load_letor(split)


def _generated(n_queries: int):
    from infpush_cvx.data.generators import letor_like

    return letor_like(n_queries, 120, 136, seed=0)


def _warm_up():
    import scipy.sparse as sp

    from infpush_cvx.data.generators import letor_like
    from infpush_cvx.data.queries import QueryData
    from infpush_cvx.solvers import query_ranksvm

    data = letor_like(6, 8, 4, seed=0)
    for X in (data.X, sp.csr_matrix(data.X)):
        for loss in LOSSES:
            query_ranksvm(QueryData(X, data.y, data.qid), 0.1, loss=loss)


def _ndcg10(w) -> float | None:
    try:
        from infpush_cvx.evaluation.query_metrics import ndcg_at_k
    except ImportError:
        return None
    test = _letor("test")
    return float(ndcg_at_k(test.y, test.X @ w, test.qid, k=10))


def measure(probe, instance, loss, lam):
    """One certified solve of the query RankSVM on ``instance`` ("letor" or a query count)."""
    from infpush_cvx.solvers import query_ranksvm

    _warm_up()
    data = _letor() if instance == "letor" else _generated(instance)
    with probe.measure() as m:
        res = query_ranksvm(data, lam, loss=loss, tol=TOL)
    return {"status": res.status, "gap": res.gap, "iterations": res.iterations,
            "objective": res.objective, "peak_above_data_mib": m.peak_rss_mib - m.rss_before_mib,
            "ndcg10_test": _ndcg10(res.w) if instance == "letor" else None,
            "documents": data.n, "pairs": data.n_pairs}


def measure_cvxpy(probe, loss, lam):
    """CVXPY + Clarabel on the LETOR set (explicit pairs, default tolerances)."""
    from infpush_cvx.formulations import query_ranksvm_problem

    data = _letor()
    with probe.measure():
        problem = query_ranksvm_problem(data, lam, loss=loss)
        problem.solve(solver="CLARABEL")
    return {"cvxpy_status": problem.status, "cvxpy_objective": problem.value}


def ranksvm_letor(lambdas, timeout):
    rows = []
    for lam in lambdas:
        for loss in LOSSES:
            row = _harness.run(measure, "letor", loss, lam, timeout=timeout)
            base = _harness.run(measure_cvxpy, loss, lam, timeout=timeout)
            objective = row.get("objective", float("nan"))
            reference = base.get("cvxpy_objective", float("nan"))
            row.update(case="letor rank.train", model=f"query_ranksvm {loss}", lam=lam,
                       cvxpy_s=base.get("time_s"), cvxpy_status=base.get("cvxpy_status"),
                       ratio=_ratio(base, row),
                       objective_diff=abs(objective - reference) / abs(reference))
            rows.append(row)
            _harness.print_row(row, COLUMNS)
    return rows


def ranksvm_scale(n_queries, timeout):
    rows = []
    for loss in LOSSES:
        row = _harness.run(measure, n_queries, loss, 1e-3, timeout=timeout)
        row.update(case=f"letor_like({n_queries}, 120, 136)", model=f"query_ranksvm {loss}",
                   lam=1e-3)
        rows.append(row)
        _harness.print_row(row, COLUMNS)
    return rows


def _ratio(row, base) -> float:
    try:
        return row["time_s"] / base["time_s"]
    except (KeyError, TypeError, ZeroDivisionError):
        return float("nan")


COLUMNS = ["case", "model", "lam", "status", "gap", "iterations", "time_s", "cvxpy_s", "ratio",
           "objective_diff", "peak_above_data_mib", "ndcg10_test"]



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the LETOR set at lambda 1e-3; 1,000 generated queries")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--csv", help="write the rows to this CSV file")
    args = parser.parse_args(argv)
    _harness.print_header("bench_queries", COLUMNS, f"tol {TOL}")
    rows = ranksvm_letor(LETOR_LAMBDAS[:1] if args.quick else LETOR_LAMBDAS, args.timeout)
    rows += ranksvm_scale(1_000 if args.quick else 10_000, args.timeout)
    if args.csv:
        _harness.write_csv(args.csv, rows)
    return 1 if any(r.get("status") != "optimal" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
