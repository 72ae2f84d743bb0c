"""The catalog's problems over queries: letor_like instances, their stored values (seed values
T times the paper ones) and the certified solver reproducing them."""

import pytest

from infpush_cvx import catalog
from infpush_cvx.catalog import reference, registry
from infpush_cvx.data.queries import QueryData

IDS = [pid for pid in catalog.problem_ids() if pid.startswith("qrsvm")]


def _value(pid):
    return reference.load_reference(pid)["opt_val"]


def test_query_problems_cover_both_losses_normalisations_and_scalings():
    assert len(IDS) == 20
    options = [catalog.get(pid).options for pid in IDS]
    assert {o["loss"] for o in options} == {"hinge", "squared_hinge"}
    assert {o["normalization"] for o in options} == {"query", "pairs"}
    assert {o.get("scaling", "paper") for o in options} == {"paper", "seed"}
    assert any(o.get("pair_weight") == "label_difference" for o in options)
    assert isinstance(catalog.instance_data("letor_s0"), QueryData)


def test_seed_values_are_T_times_paper_values():
    pairs = [pid for pid in IDS if pid.endswith("_paper")]
    assert len(pairs) == 8
    for pid in pairs:
        spec = catalog.get(pid)
        problem = registry.problem(spec, catalog.instance_data(spec.instance))
        assert _value(pid[:-len("paper")] + "seed") == pytest.approx(
            problem.total_weight * _value(pid), rel=1e-6), pid


@pytest.mark.parametrize("pid", IDS)
def test_certified_solver_reproduces_the_stored_value(pid):
    spec = catalog.get(pid)
    label = registry.certified_label(spec)
    assert label == "query_ranksvm.newton" and registry.methods(spec) == [label]
    result = registry.solve(spec, label, catalog.instance_data(spec.instance), tol=1e-8)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(_value(pid), rel=1e-6)
