"""The catalog's Infinite Push over queries: its option checks, its problems (thresholds 1, 2
and "each", l2 and l1, paper and seed scaling, one degenerate pair), their stored values (seed
values N times the paper ones) and the certified working set reproducing them."""

import warnings

import numpy as np
import pytest

from infpush_cvx import catalog
from infpush_cvx.catalog import reference, registry
from infpush_cvx.data.queries import QueryWarning
from infpush_cvx.files import MalformedFileError
from infpush_cvx.solvers.query_infinite_push import QueryInfinitePushProblem

IDS = [pid for pid in catalog.problem_ids() if pid.startswith("qip_")]
DEGENERATE = [pid for pid in IDS if pid.startswith("qip_degenerate_")]


def _value(pid):
    return reference.load_reference(pid)["opt_val"]


def _problem(pid):
    spec = catalog.get(pid)
    with warnings.catch_warnings():  # threshold 2 leaves some queries out: said, and known
        warnings.simplefilter("ignore", QueryWarning)
        return registry.problem(spec, catalog.instance_data(spec.instance))


def test_problems_cover_thresholds_penalties_scalings_and_both_seeds():
    assert len(IDS) == 22 and len(DEGENERATE) == 2
    specs = [catalog.get(pid) for pid in IDS]
    assert {s.formulation for s in specs} == {"query_infinite_push"}
    assert {str(s.options["threshold"]) for s in specs} == {"1", "2", "each"}
    assert {s.options["penalty"] for s in specs} == {"l2", "l1"}
    assert {s.options["scaling"] for s in specs} == {"paper", "seed"}
    assert {s.instance for s in specs} >= {"letor_n05_s0", "letor_n05_s1"}
    assert isinstance(_problem(IDS[0]), QueryInfinitePushProblem)


def test_seed_lambda_and_values_are_N_times_paper_ones():
    pairs = [pid for pid in IDS if pid.endswith("_paper") and pid not in DEGENERATE]
    assert len(pairs) == 10
    for pid in pairs:
        seed_id = pid[:-len("paper")] + "seed"
        problem = _problem(pid)
        N, c = problem.groups.nu, 0.5 if problem.penalty == "l2" else 1.0
        assert catalog.get(seed_id).lam == pytest.approx(catalog.get(pid).lam * N * c,
                                                         rel=1e-15), pid
        assert _value(seed_id) == pytest.approx(N * _value(pid), rel=1e-6), pid


@pytest.mark.parametrize("pid", IDS)
def test_certified_solver_reproduces_the_stored_value(pid):
    spec = catalog.get(pid)
    label = registry.certified_label(spec)
    assert label == "query_infinite_push.working_set"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        result = registry.solve(spec, label, catalog.instance_data(spec.instance), tol=1e-8)
    assert result.status in ("optimal", "degenerate_optimal"), result.message
    assert result.objective == pytest.approx(_value(pid), rel=1e-6)
    # the degenerate problems have w* = 0 (the value at w = 0, 1, at any lambda); the others
    # do not, and are well below it
    at_zero = _problem(pid).objective(np.zeros(result.w.size))
    if pid in DEGENERATE:
        assert np.linalg.norm(result.w) <= 1e-6
        assert at_zero == pytest.approx(1.0, rel=1e-12)
        assert _value(pid) == pytest.approx(1.0, rel=1e-9)
    else:
        assert np.linalg.norm(result.w) > 0.5 and _value(pid) < 0.8 * at_zero


INSTANCE = ('[instances.q]\ngenerator = "letor_like"\n'
            'params = { n_queries = 4, docs_per_query = 5, n_features = 3, seed = 1 }\n')
PROBLEM = '[problems.p]\ninstance = "q"\nformulation = "query_infinite_push"\nlam = 0.1\n'


@pytest.fixture
def use_catalog(tmp_path, monkeypatch):
    """``use(text)``: the default catalog becomes a file holding ``text``."""
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path / "refs"))

    def use(text):
        path = tmp_path / "catalog.toml"
        path.write_text(text)
        monkeypatch.setenv(catalog.CATALOG_ENV_VAR, str(path))
        catalog.clear_cache()
        return path

    yield use
    catalog.clear_cache()


@pytest.mark.parametrize("value, threshold", [("1", 1.0), ("0.5", 0.5), ('"each"', "each")])
def test_threshold_a_number_or_each_is_taken(use_catalog, value, threshold):
    path = use_catalog(INSTANCE + PROBLEM + f"options = {{ threshold = {value} }}\n")
    spec = catalog.load_catalog(str(path)).problems["p"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        problem = registry.problem(spec, catalog.instance_data("q"))
    assert problem.threshold == threshold and problem.lam == 0.1


@pytest.mark.parametrize("option, value, message", [
    ("threshold", '"all"', "options.threshold: threshold must be a number or 'each', got 'all'"),
    ("threshold", "true", "options.threshold: threshold must be a real number, got bool"),
    ("threshold", "inf", "options.threshold: threshold must be finite"),
    ("threshold", "[1, 2]", "options.threshold: threshold must be a real number, got list"),
    ("penalty", '"l7"', "options.penalty: unknown penalty 'l7'"),
    ("form", '"compact"', "unknown option 'form' of formulation 'query_infinite_push'"),
])
def test_bad_options_are_refused_naming_the_file_and_field(use_catalog, option, value, message):
    path = use_catalog(INSTANCE + PROBLEM + f"options = {{ {option} = {value} }}\n")
    with pytest.raises(MalformedFileError) as info:
        catalog.load_catalog(str(path))
    assert str(info.value).startswith(f"{path}: problem p: {message}"), str(info.value)


def test_seed_lambda_of_a_family_is_converted_without_a_warning(use_catalog):
    """A seed-scaling family needs the relevant documents' weight N while the catalog loads;
    queries left out at threshold 2 are said when the problem is solved, not then."""
    family = ('[[families]]\nprefix = "x"\nformulation = "query_infinite_push"\n'
              'instances = ["q"]\noptions = { threshold = 2, penalty = "l1" }\n'
              'lam_paper = 0.1\nvary = { scaling = ["seed"] }\n')
    path = use_catalog(INSTANCE + family)
    with warnings.catch_warnings():
        warnings.simplefilter("error", QueryWarning)
        spec = catalog.load_catalog(str(path)).problems["x_q_seed"]
    data = catalog.instance_data("q")
    N = 0  # the relevant documents of the queries that also have others
    for k in range(data.n_queries):
        relevant = data.y[data.ptr[k]:data.ptr[k + 1]] >= 2
        N += relevant.sum() if 0 < relevant.sum() < relevant.size else 0
    assert N > 0 and spec.lam == pytest.approx(0.1 * N, rel=1e-15)
