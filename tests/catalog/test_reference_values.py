"""Every catalog problem against its stored optimal value, with every installed CVXPY solver."""

import json

import cvxpy as cp
import pytest

from infpush_cvx import catalog
from infpush_cvx.formulations import scaling
from infpush_cvx.benchmarking.tasks import Task, solve_task
from infpush_cvx.catalog import cvxpy_solvers, reference, registry
from infpush_cvx.formulations import primal_value_from_dual

IDS = catalog.problem_ids()
JOBS = [pytest.param(pid, s.name, id=f"{pid}-{s.name}") for pid in IDS
        for s in registry.cvxpy_solvers_for(catalog.get(pid), cvxpy_solvers.comparison_set())]


def test_every_problem_has_a_complete_stored_record():
    assert len(IDS) >= 60
    for pid in IDS:
        record = reference.load_reference(pid)
        assert record is not None, f"{pid} has no stored value"
        assert record["status"] == "optimal" and record["solver"] == "CLARABEL"
        assert record["cross_check"]["relative_error"] <= record["tolerance"]
        assert set(record["versions"]) >= {"cvxpy", "numpy", "clarabel", "python"}
        assert len(record["instance_fingerprint"]) == 64 and record["date"]
        assert record["spec_fingerprint"] == catalog.get(pid).fingerprint(), pid


@pytest.mark.parametrize("pid", IDS)
def test_regenerated_instance_matches_stored_fingerprint(pid):
    reference.check_fingerprint(pid)


@pytest.mark.parametrize("pid, solver", JOBS)
def test_solver_reproduces_stored_value(pid, solver):
    row = solve_task(Task(pid, "cvxpy", solver))
    assert row["status"] == cp.OPTIMAL, row
    assert row["rel_error"] <= row["rtol"] == cvxpy_solvers.TUNED[solver].rtol, row
    assert row["agrees"] and row["reference"] == reference.load_reference(pid)["opt_val"], row


def _value(pid):
    return reference.load_reference(pid)["opt_val"]


def test_stored_seed_values_are_N_times_paper_values():
    pairs = [pid for pid in IDS if "_paper_" in pid and pid.replace("_paper_", "_seed_") in IDS]
    assert len(pairs) >= 20
    for pid in pairs:
        spec = catalog.get(pid)
        data = catalog.instance_data(spec.instance)
        N = scaling.loss_normaliser(spec.formulation, data.m, data.n)  # named as its loss
        assert _value(pid.replace("_paper_", "_seed_")) == pytest.approx(N * _value(pid),
                                                                         rel=1e-6), pid


def test_stored_dual_values_match_stored_primal_values():
    for pid in [p for p in IDS if p.startswith(("ip_dual_", "ranksvm_dual_"))]:
        spec = catalog.get(pid)
        data = catalog.instance_data(spec.instance)
        loss = "infinite_push" if pid.startswith("ip_") else "ranksvm"
        primal_id = pid.replace("ip_dual_", "ip_l2_").replace("ranksvm_dual_", "ranksvm_") \
            + "_compact"
        assert primal_value_from_dual(_value(pid), spec.lam, loss=loss, scaling="paper",
                                      m=data.m, n=data.n) == pytest.approx(_value(primal_id),
                                                                           rel=1e-6)


def test_seed_and_degenerate_values_are_exact():
    assert _value("infinite_push_0") == pytest.approx(100.0, rel=1e-9)
    for pid in IDS:
        record = reference.load_reference(pid)
        if record["degenerate"] and catalog.get(pid).formulation == "infinite_push":
            spec = catalog.get(pid)
            expected = catalog.instance_data(spec.instance).m if spec.scaling == "seed" else 1.0
            assert record["opt_val"] == pytest.approx(expected, rel=1e-8), pid


def test_catalog_yields_the_seed_problem_dictionaries():
    (entry,) = list(catalog.problems(["infinite_push_0"]))
    assert set(entry) == {"problemID", "problem", "opt_val"}
    assert entry["problemID"] == "infinite_push_0" and entry["opt_val"] == pytest.approx(100)
    entry["problem"].solve(solver="CLARABEL")
    assert entry["problem"].value == pytest.approx(entry["opt_val"], rel=1e-6)


def test_regenerate_writes_missing_keeps_unchanged_and_refuses_changes(tmp_path):
    pid = "ip_l2_planted_s_paper_compact"
    assert reference.regenerate([pid], directory=tmp_path) == {pid: "written"}
    path = reference.reference_path(pid, tmp_path)
    original = path.read_text()
    assert reference.regenerate([pid], directory=tmp_path) == {pid: "unchanged"}
    assert path.read_text() == original
    record = json.loads(original)
    record["opt_val"] *= 1.001
    path.write_text(json.dumps(record))
    with pytest.raises(reference.ReferenceError, match="relative change"):
        reference.regenerate([pid], directory=tmp_path)
    assert json.loads(path.read_text())["opt_val"] == record["opt_val"], "must not overwrite"
    record["instance_fingerprint"] = "0" * 64
    path.write_text(json.dumps(record))
    with pytest.raises(reference.ReferenceError, match="fingerprint changed"):
        reference.regenerate([pid], directory=tmp_path)
    (action,) = reference.regenerate([pid], directory=tmp_path, accept_changes=True).values()
    assert action.startswith("replaced: instance fingerprint changed; value "), action
    assert json.loads(path.read_text())["opt_val"] == pytest.approx(json.loads(original)["opt_val"])
    assert [p.name for p in tmp_path.iterdir()] == [path.name], "no temporary file left behind"


def test_fingerprint_mismatch_is_an_error(tmp_path, monkeypatch):
    pid = "ranksvm_planted_s_paper_compact"
    record = reference.load_reference(pid)
    record["instance_fingerprint"] = "f" * 64
    (tmp_path / f"{pid}.json").write_text(json.dumps(record))
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path))
    with pytest.raises(reference.ReferenceError, match="fingerprint"):
        reference.check_fingerprint(pid)


def test_unknown_problem_and_solver_are_rejected():
    with pytest.raises(ValueError, match="unknown problem 'nope'"):
        catalog.get("nope")
    with pytest.raises(ValueError, match="unknown solver 'GUROBI_X'"):
        cvxpy_solvers.spec("gurobi_x")


def test_malformed_catalog_is_rejected(tmp_path):
    bad = tmp_path / "catalog.toml"
    bad.write_text('[instances.a]\ngenerator = "nonexistent"\n')
    with pytest.raises(ValueError, match="unknown generator 'nonexistent'"):
        catalog.load_catalog(str(bad))


def test_regenerate_defaults_to_the_core_tier(tmp_path, monkeypatch):
    computed = []

    template = reference.load_reference(IDS[0])

    def fake(pid):
        computed.append(pid)
        return {**template, "problem_id": pid}

    monkeypatch.setattr(reference, "compute_reference", fake)
    reference.regenerate(directory=tmp_path)
    assert computed == IDS
    computed.clear()
    reference.regenerate(directory=tmp_path, tier="real")
    assert computed == catalog.problem_ids(tier="real") and computed


def test_fresh_record_provenance_tier_times_and_no_dataset_for_generated_data():
    record = reference.compute_reference("ip_l1_planted_s_paper_compact")
    assert record["tier"] == "core" and "dataset" not in record
    assert record["times"]["reference_solve"] > 0 and record["times"]["cross_check_solve"] > 0
    assert record["cross_check"]["solver"] == "HIGHS"
    assert record["cross_check"]["status"] == "optimal"
    assert record["cross_check"]["options"] == {}  # the comparison options outside the real tier
    assert record["opt_val"] == pytest.approx(_value("ip_l1_planted_s_paper_compact"), rel=1e-6)
