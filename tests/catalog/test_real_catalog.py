"""The catalog's real tier: subsets of a8a and Spambase, their stored values and provenance.

No CVXPY solve here (the real problems take CVXPY seconds to minutes each: `infpush-cvx check
--tier real` runs them); these tests check the declarations, the generator, the stored records
and that every instance regenerates to its stored fingerprint. Tests that need the data skip,
with the reason, when the data folders are absent.
"""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import catalog
from infpush_cvx.catalog import cvxpy_solvers, reference
from infpush_cvx.data import datasets, generators
from infpush_cvx.data.degeneracy import check_degeneracy

REAL = catalog.problem_ids(tier="real")
REAL_INSTANCES = sorted({catalog.get(pid).instance for pid in REAL})


def _data_or_skip(instance: str):
    """The instance's data, or a skip naming the missing data set."""
    try:
        return catalog.instance_data(instance)
    except FileNotFoundError as exc:
        pytest.skip(f"data set of {instance} not available: {exc}")


def _dataset_or_skip(name: str):
    try:
        return datasets.load(name)
    except FileNotFoundError as exc:
        pytest.skip(f"data set {name} not available: {exc}")


def test_real_tier_declarations():
    assert len(REAL) == 19
    assert catalog.tiers() == ["core", "real"]
    instances = catalog.load_catalog().instances
    assert len(REAL_INSTANCES) == 7
    for pid in REAL:
        spec = catalog.get(pid)
        inst = instances[spec.instance]
        assert spec.tier == "real" and inst.tier == "real" and inst.generator == "real_subset"
        assert spec.scaling == "paper" and spec.options["form"] == "compact", pid
        assert spec.lam in (1e-3, 1e-4)
    sizes = {(p["dataset"], p["m"], p["n"]) for p in
             (instances[name].params for name in REAL_INSTANCES)}
    assert sizes == {("a8a", 150, 1500), ("a8a", 300, 3000), ("spambase", 200, 300)}
    families = {}
    for pid in REAL:
        spec = catalog.get(pid)
        key = (spec.formulation, spec.options.get("penalty", "l2"), spec.lam)
        families.setdefault(key, set()).add(spec.instance)
    a8a_small = {f"a8a_150x1500_s{s}" for s in range(5)}
    spam = {"spambase01_200x300_s0"}
    assert families == {("infinite_push", "l2", 1e-3): a8a_small | {"a8a_300x3000_s0"},
                        ("ranksvm", "l2", 1e-3): a8a_small | {"a8a_300x3000_s0"},
                        ("infinite_push", "l1", 1e-3): a8a_small | spam,
                        ("infinite_push", "l1", 1e-4): spam}


def test_default_selection_is_the_core_tier():
    core, everything = catalog.problem_ids(), catalog.problem_ids(tier="all")
    assert not set(core) & set(REAL)
    assert set(everything) == set(core) | set(REAL) and len(everything) == len(core) + len(REAL)
    assert all(catalog.get(pid).tier == "core" for pid in core)
    assert catalog.problem_ids("a8a") == [] and len(catalog.problem_ids("a8a", tier="real")) == 17
    with pytest.raises(ValueError, match="unknown tier 'huge'"):
        catalog.problem_ids(tier="huge")


def test_catalog_tier_declarations_are_checked(tmp_path):
    head = ('[instances.r]\ngenerator = "planted_bipartite"\ntier = "{tier}"\n'
            'params = {{ m = 5, n = 6, d = 2, seed = 1 }}\n')
    bad = tmp_path / "bad.toml"
    bad.write_text(head.format(tier="all"))
    with pytest.raises(ValueError, match="tier must be a lower-case name other than 'all'"):
        catalog.load_catalog(str(bad))
    ok = tmp_path / "ok.toml"
    ok.write_text(head.format(tier="big") + '[problems.p]\ninstance = "r"\nformulation = '
                  '"ranksvm"\nlam = 0.1\n[problems.q]\ninstance = "r"\nformulation = "ranksvm"\n'
                  'lam = 0.1\ntier = "core"\n')
    cat = catalog.load_catalog(str(ok))
    assert cat.instances["r"].tier == "big"
    assert (cat.problems["p"].tier, cat.problems["q"].tier) == ("big", "core")  # inherited
    seed = tmp_path / "seed.toml"
    seed.write_text(head.format(tier="big") + '[[families]]\nprefix = "x"\nformulation = '
                    '"ranksvm"\ninstances = ["r"]\nlam_paper = 0.1\n'
                    'vary = { scaling = ["seed"] }\n')
    with pytest.raises(ValueError, match="would generate it"):
        catalog.load_catalog(str(seed))


def test_every_real_problem_has_a_complete_stored_record():
    for pid in REAL:
        record = reference.load_reference(pid)
        assert record is not None, f"{pid} has no stored value"
        assert record["status"] == "optimal" and record["solver"] == "CLARABEL"
        assert record["tier"] == "real" and isinstance(record["degenerate"], bool)
        check = record["cross_check"]
        assert check["relative_error"] <= record["tolerance"], pid
        # records state the cross-check's status since ECOS needed optimal_inaccurate (real tier
        # only); earlier records were written under "optimal only"
        assert check.get("status", "optimal") in reference.TIER_CROSS_CHECK_STATUSES["real"]
        assert check["options"] == reference.cross_check_options("real", check["solver"]) or \
            check["options"] == cvxpy_solvers.TUNED[check["solver"]].options, pid
        assert len(record["instance_fingerprint"]) == 64 and record["date"]
        assert record["times"]["reference_solve"] > 0
        spec = catalog.get(pid)
        params = catalog.load_catalog().instances[spec.instance].params
        fname, digest, _ = datasets.DATASETS[params["dataset"]]
        assert record["dataset"] == {"name": params["dataset"], "file": fname, "sha256": digest,
                                     "generator": "real_subset", "params": params}
        assert record["formulation"] == {"name": spec.formulation, "options": spec.options,
                                         "lam": spec.lam}
        assert record["spec_fingerprint"] == spec.fingerprint(), pid


@pytest.mark.parametrize("pid", REAL)
def test_real_instance_regenerates_to_stored_fingerprint(pid):
    data = _data_or_skip(catalog.get(pid).instance)
    reference.check_fingerprint(pid, data)


@pytest.mark.parametrize("name", REAL_INSTANCES)
def test_stored_degeneracy_of_real_instances(name):
    data = _data_or_skip(name)
    report = check_degeneracy(data)
    for pid in [p for p in REAL if catalog.get(p).instance == name]:
        record = reference.load_reference(pid)
        assert record["degenerate"] == report.degenerate, pid
        spec = catalog.get(pid)
        if report.degenerate and spec.formulation == "infinite_push":
            assert record["opt_val"] == pytest.approx(1.0, rel=1e-8), pid  # w* = 0
        elif spec.formulation == "infinite_push" and spec.options["penalty"] == "l2":
            # a descent direction at w = 0, and the l2 penalty is flat there: P* < 1. (The l1
            # penalty is not flat: a non-degenerate instance may still have w* = 0.)
            assert record["opt_val"] < 1.0 - 1e-6, pid
    # a8a_150x1500_s3 is the degenerate one (the mean positive is in the negatives' hull)
    assert report.degenerate == (name == "a8a_150x1500_s3")


def test_real_subset_draws_sorted_rows_reproducibly():
    X, y = _dataset_or_skip("a8a")
    data = generators.real_subset("a8a", 40, 70, seed=5)
    assert sp.issparse(data.Xp) and sp.issparse(data.Xn) and (data.m, data.n, data.d) == \
        (40, 70, 123)
    rng = np.random.default_rng(5)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    rows_p = pos[np.sort(rng.choice(pos.size, 40, replace=False))]
    rows_n = neg[np.sort(rng.choice(neg.size, 70, replace=False))]
    assert (data.Xp != X[rows_p]).nnz == 0 and (data.Xn != X[rows_n]).nnz == 0
    assert generators.real_subset("a8a", 40, 70, seed=5).fingerprint() == data.fingerprint()
    assert generators.real_subset("a8a", 40, 70, seed=6).fingerprint() != data.fingerprint()
    # scale01 on a8a's binary features changes nothing and keeps the data sparse
    scaled = generators.real_subset("a8a", 40, 70, seed=5, scale01=True)
    assert sp.issparse(scaled.Xp) and scaled.fingerprint() == data.fingerprint()
    # the cached whole set is read-only, the subsets are not
    data.Xp.data[0] = data.Xp.data[0]


def test_real_subset_scales_spambase_on_the_whole_set():
    X, y = _dataset_or_skip("spambase")
    data = generators.real_subset("spambase", 30, 40, seed=0, scale01=True)
    assert isinstance(data.Xp, np.ndarray) and data.d == 57
    lo, span = X.min(0), np.where(np.ptp(X, 0) > 0, np.ptp(X, 0), 1)
    rng = np.random.default_rng(0)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    rows_p = pos[np.sort(rng.choice(pos.size, 30, replace=False))]
    np.testing.assert_allclose(data.Xp, (X[rows_p] - lo) / span, rtol=0, atol=1e-15)
    assert data.Xp.min() >= 0 and data.Xp.max() <= 1


def test_real_subset_bad_arguments():
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        generators.real_subset("iris", 1, 1, 0)
    with pytest.raises(ValueError, match="m must be a positive integer"):
        generators.real_subset("a8a", 0, 1, 0)
    _dataset_or_skip("a8a")
    with pytest.raises(ValueError, match="5506 positives .* cannot draw m=6000"):
        generators.real_subset("a8a", 6000, 10, 0)


def test_reference_verify_covers_the_real_tier(capsys):
    # fingerprints only: the re-solve of the real tier's values takes about 30 s and is
    # tests/solvers/test_catalog_values.py::test_certified_solver_reproduces_stored_real_value
    from infpush_cvx import cli
    _data_or_skip(REAL_INSTANCES[0])
    assert cli.main(["reference", "verify", "--tier", "real", "--no-resolve"]) == 0
    assert f"{len(REAL)} of {len(REAL)} stored values match their fingerprints (instance and " \
        "problem definition)" in capsys.readouterr().out


def test_reference_verify_skips_real_instances_without_their_data(tmp_path, monkeypatch, capsys):
    from infpush_cvx import cli
    monkeypatch.setenv(datasets.ENV_VAR, str(tmp_path))
    monkeypatch.setenv(datasets.LIBSVM_ENV_VAR, str(tmp_path))
    catalog.instance_data.cache_clear()
    generators._real_data.cache_clear()
    try:
        assert cli.main(["reference", "verify", "--tier", "real"]) == 0
        captured = capsys.readouterr()
        assert "0 of 0 stored values match their fingerprints" in captured.out
        assert f"; {len(REAL)} skipped (data set not available" in captured.out
        assert "skipped, its data set is not available" in captured.err
    finally:
        catalog.instance_data.cache_clear()
        generators._real_data.cache_clear()


def test_stored_real_records_are_plain_json():
    # written by files.write_text_atomic (temporary file + os.replace): no stray temporary files
    leftovers = [p.name for p in reference.reference_dir().glob(".*.tmp")]
    assert leftovers == []
    for pid in REAL:
        json.loads(reference.reference_path(pid).read_text())
