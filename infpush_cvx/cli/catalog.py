"""The catalog commands: ``list`` its problems, ``generate`` its instances, and ``reference``
(verify or regenerate the stored optimal values)."""

from __future__ import annotations

import sys
from pathlib import Path

from .arguments import add_problems, output_path
from .common import check_outputs, plural, problem_ids, working


def _cmd_reference(args) -> int:
    """Exit 1 when a stored value disagrees (verify failures, refused replacements), 2 on bad
    arguments (an unknown problem ID, before any work)."""
    from .. import catalog
    from ..data import datasets
    from ..catalog import reference
    ids = list(dict.fromkeys(args.only)) if args.only else catalog.problem_ids(tier=args.tier)
    for pid in ids:
        catalog.get(pid)
    if args.action == "regenerate":
        from tqdm.auto import tqdm
        try:
            actions = reference.regenerate(ids, accept_changes=args.accept_changes,
                                           progress=lambda xs: tqdm(xs, desc="reference"))
        except reference.ReferenceError as exc:
            print("\n".join(line.strip() for line in str(exc).splitlines()), file=sys.stderr)
            return 1
        for pid, action in actions.items():
            print(f"{pid}: {action}")
        return 0
    reference.check_directory()
    failures, skipped = [], []
    for pid in ids:
        try:
            reference.verify(pid, resolve=not args.no_resolve)
        except reference.ReferenceError as exc:
            failures.append(str(exc))
        except FileNotFoundError as exc:
            if reference.dataset_provenance(catalog.get(pid).instance) is None:
                raise
            skipped.append(f"{pid}: skipped, its data set is not available: {exc}")
    for line in skipped + failures:
        print(line, file=sys.stderr)
    checked = len(ids) - len(skipped)
    checks = "fingerprints (instance and problem definition)" + (
        "" if args.no_resolve else
        f" and a re-solve by the project's certified solvers (within {reference.RESOLVE_RTOL:g})")
    values = "stored value matches its" if checked == 1 else "stored values match their"
    print(f"{checked - len(failures)} of {checked} {values} {checks}"
          + (f"; {len(skipped)} skipped (data set not available, see "
             f"{datasets.LIBSVM_ENV_VAR} and {datasets.ENV_VAR})" if skipped else ""))
    return 1 if failures else 0


def _cmd_list(args) -> int:
    from .. import catalog
    ids = problem_ids(args.problems, args.tier)
    rows = [(pid, spec.instance, spec.formulation, f"{spec.lam:g}", spec.tier,
             " ".join(f"{k}={v}" for k, v in sorted(spec.options.items())) or "-")
            for pid, spec in ((pid, catalog.get(pid)) for pid in ids)]
    header = ("problem", "instance", "formulation", "lambda", "tier", "options")
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header) - 1)]
    for r in [header, *rows]:
        print("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)) + "  " + r[-1])
    print(f"\n{plural(len(ids), 'problem')} of tier {args.tier!r}"
          + ("" if args.tier == "all" else " (--tier all for every tier)"))
    return 0


def _cmd_generate(args) -> int:
    from .. import catalog
    from .._validation import check_choice
    from ..benchmarking.instances import save_instance
    known = catalog.load_catalog().instances
    names = list(dict.fromkeys(args.instances or known))  # each once
    for name in names:  # every name before the first file
        check_choice(name, "instance", known)
    out = Path(args.out)
    check_outputs([out / f"{name}.npz" for name in names])  # every file before the first
    with working("generate"):
        for name in names:
            path = save_instance(name, out)
            print(f"{name}\t{path}")
    return 0


def add_reference(sub) -> None:
    """The ``reference`` subcommand."""
    p = sub.add_parser("reference", help="verify or (explicitly) regenerate stored values")
    p.add_argument("action", choices=["verify", "regenerate"],
                   help="verify: instance and problem-definition fingerprints, and a re-solve "
                        "of each value by the project's certified solvers; regenerate: solve "
                        "with CVXPY and store new values")
    p.add_argument("--only", nargs="+", metavar="ID", help="only these problem IDs")
    add_problems(p, by_text=False, tier_when=" when --only is not given")
    p.add_argument("--no-resolve", action="store_true",
                   help="verify: fingerprints only, no re-solve of the stored values")
    p.add_argument("--accept-changes", action="store_true",
                   help="regenerate: replace stored records that differ (value beyond "
                        "tolerance, instance, definition, unreadable) and say what changed")
    p.set_defaults(func=_cmd_reference)


def add_list(sub) -> None:
    """The ``list`` subcommand."""
    p = sub.add_parser("list", help="list the catalog problems")
    add_problems(p)
    p.set_defaults(func=_cmd_list)


def add_generate(sub) -> None:
    """The ``generate`` subcommand."""
    p = sub.add_parser("generate", help="write catalog instances to .npz files with fingerprints")
    p.add_argument("--instances", nargs="+", metavar="NAME", help="instance names (default: all)")
    p.add_argument("--out", type=output_path, required=True, help="output directory")
    p.set_defaults(func=_cmd_generate)
