"""The README's counts of the catalog, its version and the changelog agree with the package, so
they cannot go stale unnoticed."""

import re
import tomllib
from pathlib import Path

from infpush_cvx import catalog

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _number(pattern: str) -> tuple[int, ...]:
    found = re.search(pattern, README)
    assert found, f"README no longer says {pattern!r}"
    return tuple(int(g.replace(",", "")) for g in found.groups())


def test_catalog_counts():
    core = catalog.problem_ids(tier="core")
    every = catalog.problem_ids(tier="all")
    real = catalog.problem_ids(tier="real")
    instances = catalog.load_catalog().instances
    assert _number(r"declares (\d+) instances and (\d+) problems in two tiers") == (
        len(instances), len(every))
    assert _number(r"The core tier, (\d+) instances and\s+(\d+) problems") == (
        len({catalog.get(p).instance for p in core}), len(core))
    assert _number(r"holds (\d+) problems on real data") == (len(real),)
    assert _number(r"the (\d+) core values are re-solved in about [\d.]+ s, the (\d+) of "
                   r"`--tier all`") == (len(core), len(every))
    assert _number(r"\((\d+) core problems in [\d.]+ s; `--tier all` (\d+) in") == (
        len(core), len(every))
    assert _number(r"(\d+) solves of the (\d+) core-tier problems")[1] == len(core)


def test_version_changelog_and_readme_agree():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    release = re.match(r"\d+\.\d+\.\d+", version).group(0)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    newest = re.search(r"^## (\S+)", changelog, flags=re.M).group(1)
    assert newest == release, (newest, version)
    assert f"### Renamed in {release}" in README
