"""Ranking metrics (infpush_cvx.evaluation.metrics) against scikit-learn on one million scores.

Times AUC, average precision and DCG against ``sklearn.metrics`` on the same labels and scores
(best of ``--repeats`` calls each, measured in this run), checks that the values agree, and
times the metrics scikit-learn does not have (positives at the top, R_inf, prec@k). Scores are
continuous (no ties) unless ``--ties``, which rounds them to 2 decimals (scikit-learn's DCG then
averages tied gains, ours ranks ties pessimistically: only AUC and AP are compared).

    python benchmarks/bench_metrics.py [--n 1000000] [--repeats 3] [--ties]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn import metrics as sk

from infpush_cvx.evaluation import metrics


def best_time(f, *args, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = f(*args)
        best = min(best, time.perf_counter() - t0)
    return best, value


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="number of scores")
    p.add_argument("--repeats", type=int, default=3, help="calls per timing (best is kept)")
    p.add_argument("--ties", action="store_true", help="round the scores to 2 decimals")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    y = rng.integers(0, 2, args.n)
    s = rng.normal(size=args.n) + y
    if args.ties:
        s = np.round(s, 2)
    pairs = [("AUC", metrics.auc, lambda: sk.roc_auc_score(y, s)),
             ("average precision", metrics.average_precision,
              lambda: sk.average_precision_score(y, s))]
    if not args.ties:
        pairs.append(("DCG", metrics.dcg, lambda: sk.dcg_score(y[None], s[None])))
    print(f"| metric (N = {args.n:g}{', ties' if args.ties else ', no ties'}) | infpush_cvx "
          f"| scikit-learn | speed-up | abs. difference |")
    print("|---|---|---|---|---|")
    for name, ours, theirs in pairs:
        t_ours, v_ours = best_time(ours, y, s, repeats=args.repeats)
        t_sk, v_sk = best_time(theirs, repeats=args.repeats)
        print(f"| {name} | {t_ours * 1e3:.0f} ms | {t_sk * 1e3:.0f} ms | {t_sk / t_ours:.1f}x "
              f"| {abs(v_ours - v_sk):.1e} |")
    for name, f, extra in [("positives at the top", metrics.positives_at_top, ()),
                           ("R_inf", metrics.r_inf, ()),
                           ("prec@1000", metrics.precision_at_k, (1000,))]:
        t, _ = best_time(f, y, s, *extra, repeats=args.repeats)
        print(f"| {name} | {t * 1e3:.0f} ms | (none) | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
