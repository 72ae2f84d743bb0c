"""The ``infpush-cvx`` command line.

    infpush-cvx check [--problems PATTERN] [--solvers S ...] [--out results/comparison.csv]
        The main job: solve the catalog with every installed solver, compare with the stored
        values, print and save the table; exit 1 on any disagreement.
    infpush-cvx reference verify | regenerate [--only ID ...] [--accept-changes]
    infpush-cvx list
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_check(args) -> int:
    from . import catalog, compare
    ids = catalog.problem_ids(args.problems)
    if not ids:
        raise ValueError(f"no catalog problem matches {args.problems!r}")
    df = compare.run(ids, args.solvers, progress=not args.no_progress)
    print(compare.format_table(df))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    bad = df[~df["agrees"]]
    print(f"\n{len(df)} solves of {len(ids)} problems; {len(df) - len(bad)} agree with the stored "
          f"values; table saved to {out}")
    if len(bad):
        print("DISAGREEMENTS:\n" + compare.format_table(bad), file=sys.stderr)
        return 1
    return 0


def _cmd_reference(args) -> int:
    from . import catalog, reference
    ids = args.only or catalog.problem_ids()
    if args.action == "regenerate":
        from tqdm.auto import tqdm
        actions = reference.regenerate(ids, accept_changes=args.accept_changes,
                                       progress=lambda xs: tqdm(xs, desc="reference"))
        for pid, action in actions.items():
            print(f"{pid}: {action}")
        return 0
    failures = []
    for pid in ids:
        try:
            reference.check_fingerprint(pid)
        except reference.ReferenceError as exc:
            failures.append(str(exc))
    for line in failures:
        print(line, file=sys.stderr)
    print(f"{len(ids) - len(failures)} of {len(ids)} stored instances match their fingerprints")
    return 1 if failures else 0


def _cmd_list(args) -> int:
    from . import catalog
    for pid in catalog.problem_ids(args.problems):
        spec = catalog.get(pid)
        print(f"{pid}\t{spec.instance}\t{spec.formulation}\t{spec.options}\tlam={spec.lam:g}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="infpush-cvx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="solve the catalog with every installed solver and compare "
                                     "with the stored optimal values (the main job)")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.add_argument("--solvers", nargs="+", help="solver names (default: all installed)")
    p.add_argument("--out", default="results/comparison.csv", help="CSV output path")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("reference", help="verify or (explicitly) regenerate stored values")
    p.add_argument("action", choices=["verify", "regenerate"])
    p.add_argument("--only", nargs="+", metavar="ID", help="only these problem IDs")
    p.add_argument("--accept-changes", action="store_true",
                   help="replace stored values that changed beyond tolerance")
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("list", help="list the catalog problems")
    p.add_argument("--problems", help="only problems whose ID contains this text")
    p.set_defaults(func=_cmd_list)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, RuntimeError) as exc:
        print(f"infpush-cvx: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
