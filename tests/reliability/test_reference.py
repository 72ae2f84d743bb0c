"""Stored reference values and the catalog they belong to, under misuse and damage.

A record is read only when it is valid (finite value, every key with its type, the right
problem), and every error names the file. ``reference verify`` checks everything a stored value
depends on: the instance, the problem's definition, and the value itself by a certified re-solve.
``reference regenerate`` never replaces a differing value without ``--accept-changes`` and says
what changed when it does. Catalog errors are one ValueError naming the file and the entry.

Everything here works on copies of two stored records in a temporary folder (``store``).
"""

import dataclasses
import json
import math
import re
import shutil

import pytest

from infpush_cvx import catalog, cli
from infpush_cvx.catalog import reference
from infpush_cvx.files import MalformedFileError

PID = "ip_l2_planted_s_paper_compact"  # stored optimal value 0.48658940...
SEED_PID = "ip_l2_planted_s_seed_compact"  # the same problem in seed scaling
DUAL_PID = "ip_dual_planted_s_paper"
PAIRS_PID = "rank2plan_pairs_dense_direct"
STORED = 0.4865894034589988


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A reference folder with copies of a few stored records, in place of the packaged
    infpush_cvx/catalog/reference_values/."""
    folder = tmp_path / "reference_values"
    folder.mkdir()
    for pid in (PID, SEED_PID, DUAL_PID, PAIRS_PID):
        shutil.copy(reference.reference_path(pid), folder / f"{pid}.json")
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(folder))
    return folder


@pytest.fixture
def edited_catalog(tmp_path, monkeypatch):
    """``edit(old, new)``: the default catalog becomes a copy of
    infpush_cvx/catalog/problems/catalog.toml with the one occurrence of ``old`` replaced by
    ``new``."""
    def edit(old: str, new: str):
        text = catalog.default_catalog().read_text()
        assert text.count(old) == 1, old
        path = tmp_path / "catalog.toml"
        path.write_text(text.replace(old, new))
        monkeypatch.setenv(catalog.CATALOG_ENV_VAR, str(path))  # where load_catalog reads it
        catalog.clear_cache()  # the same path may hold another edit
        return path

    yield edit
    catalog.clear_cache()  # the next load_catalog() reads the real catalog again


def _edit(folder, pid, *, drop=(), **changes):
    """Rewrite a stored record with ``changes`` and without the keys in ``drop``."""
    path = folder / f"{pid}.json"
    record = json.loads(path.read_text())
    record.update(changes)
    for key in drop:
        record.pop(key, None)
    path.write_text(json.dumps(record, indent=2))  # json writes NaN and Infinity as given
    return path


def _verify(*argv):
    return cli.main(["reference", "verify", *argv])


# --- reading a record ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_stored_value_that_is_not_finite_is_refused_naming_the_file(store, bad):
    path = _edit(store, PID, opt_val=bad)
    with pytest.raises(ValueError, match=re.escape(f"{path}: opt_val must be a finite number")):
        reference.load_reference(PID)


def test_a_truncated_record_is_refused_naming_the_file(store):
    path = store / f"{PID}.json"
    path.write_text(path.read_text()[:150])
    with pytest.raises(ValueError, match=re.escape(f"{path}: not a valid JSON record")):
        reference.load_reference(PID)
    path.write_text("")
    with pytest.raises(ValueError, match=re.escape(f"{path}: not a valid JSON record")):
        reference.load_reference(PID)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match=re.escape(f"{path}: expected a JSON object, got list")):
        reference.load_reference(PID)


@pytest.mark.parametrize("key", ["opt_val", "instance_fingerprint", "formulation", "problem_id"])
def test_a_record_missing_a_key_is_refused_naming_the_file_and_the_key(store, key):
    path = _edit(store, PID, drop=[key])
    with pytest.raises(ValueError, match=re.escape(f"{path}: missing key {key!r}")):
        reference.load_reference(PID)


@pytest.mark.parametrize("key, value, message", [
    ("opt_val", "0.48", "opt_val must be a number, got str"),
    ("opt_val", True, "opt_val must be a number, got bool"),
    ("opt_val", None, "opt_val must be a number, got NoneType"),
    ("instance_fingerprint", 5, "instance_fingerprint must be a string, got int"),
    ("instance_fingerprint", "abc", "instance_fingerprint must be 64 hexadecimal digits"),
    ("formulation", [], "formulation must be an object, got list"),
    ("formulation", {"name": "infinite_push", "options": {}}, "missing key 'formulation.lam'"),
    ("degenerate", "no", "degenerate must be true, false or null, got str"),
    ("tolerance", math.nan, "tolerance must be a finite number"),
    ("cross_check", {"solver": "ECOS", "value": math.nan},
     "cross_check.value must be a finite number"),
])
def test_a_record_with_a_wrong_type_is_refused_naming_the_file(store, key, value, message):
    path = _edit(store, PID, **{key: value})
    with pytest.raises(ValueError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)):
        reference.load_reference(PID)


def test_a_record_of_another_problem_is_refused(store):
    path = store / f"{PID}.json"
    shutil.copy(store / f"{SEED_PID}.json", path)
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: holds the record of problem {SEED_PID!r}, not {PID!r}")):
        reference.load_reference(PID)


def test_catalog_problems_yield_no_unvalidated_value(store):
    path = _edit(store, PID, opt_val=math.nan)
    with pytest.raises(ValueError, match=re.escape(str(path))):
        list(catalog.problems([PID]))


# --- regenerate never overwrites silently --------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_regenerate_refuses_to_replace_a_non_finite_stored_value(store, bad):
    path = _edit(store, PID, opt_val=bad)
    before = path.read_text()
    with pytest.raises(reference.ReferenceError, match="opt_val must be a finite number"):
        reference.regenerate([PID])
    assert path.read_text() == before, "refused: the file is left as it was"
    actions = reference.regenerate([PID], accept_changes=True)
    assert actions[PID].startswith("replaced: ") and "opt_val must be a finite number" in \
        actions[PID], actions
    assert json.loads(path.read_text())["opt_val"] == pytest.approx(STORED, rel=1e-8)


def test_regenerate_refuses_a_changed_value_and_says_what_changed_when_accepting(store, capsys):
    path = _edit(store, PID, opt_val=0.5)
    assert cli.main(["reference", "regenerate", "--only", PID]) == 1  # a disagreement
    err = capsys.readouterr().err
    assert re.search(rf"{PID}: value 0\.5 -> 0\.486589403\d* \(relative change 2\.7e-02\)", err)
    assert "--accept-changes" in err
    assert json.loads(path.read_text())["opt_val"] == 0.5
    assert cli.main(["reference", "regenerate", "--only", PID, "--accept-changes"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"{PID}: replaced: value 0\.5 -> 0\.486589403\d* \(relative change "
                     r"2\.7e-02\)", out), out
    assert json.loads(path.read_text())["opt_val"] == pytest.approx(STORED, rel=1e-8)


def test_regenerate_refuses_a_fresh_value_that_is_not_finite(store, monkeypatch):
    fresh = reference.load_reference(PID)
    fresh["opt_val"] = math.nan
    monkeypatch.setattr(reference, "compute_reference", lambda pid: dict(fresh))
    before = (store / f"{PID}.json").read_text()
    for accept in (False, True):
        with pytest.raises(reference.ReferenceError, match="opt_val must be a finite number"):
            reference.regenerate([PID], accept_changes=accept)
        assert (store / f"{PID}.json").read_text() == before


def test_regenerate_refuses_a_changed_problem_definition(store, edited_catalog):
    edited_catalog('options = { penalty = "l2" }\nlam_paper = 0.1\n',
                   'options = { penalty = "l2" }\nlam_paper = 0.2\n')
    with pytest.raises(reference.ReferenceError,
                       match=r"problem definition changed since the value was stored \(lam 0\.1 "
                             r"-> 0\.2\)"):
        reference.regenerate([PID])


def test_fresh_records_hold_the_definition_fingerprint(store):
    record = reference.compute_reference(PID)
    assert record["spec_fingerprint"] == catalog.get(PID).fingerprint()


# --- the problem definition's fingerprint --------------------------------------------------


def test_the_definition_fingerprint_covers_what_determines_the_optimum():
    spec = catalog.get(PID)
    fp = spec.fingerprint()
    assert re.fullmatch(r"[0-9a-f]{64}", fp) and fp == catalog.get(PID).fingerprint()
    for change in ({"lam": 0.2}, {"formulation": "ranksvm"},
                   {"options": {**spec.options, "penalty": "l1"}},
                   {"options": {**spec.options, "scaling": "seed"}}):
        assert dataclasses.replace(spec, **change).fingerprint() != fp, change
    # neither the name, nor the tier, nor the options' order determine the optimum; the
    # instance's data has its own fingerprint
    same = dataclasses.replace(spec, id="renamed", tier="real", instance="planted_m",
                               options=dict(reversed(list(spec.options.items()))))
    assert same.fingerprint() == fp
    assert catalog.get(SEED_PID).fingerprint() != fp


# --- verify ----------------------------------------------------------------------------------


def test_verify_passes_on_the_stored_records_and_says_what_it_checked(store, capsys):
    assert _verify("--only", PID, SEED_PID, DUAL_PID, PAIRS_PID) == 0
    out = capsys.readouterr().out
    assert "4 of 4 stored values match" in out and "re-solve" in out


def test_verify_detects_a_changed_stored_value(store, capsys):
    _edit(store, PID, opt_val=0.5)
    assert _verify("--only", PID) == 1
    err = capsys.readouterr().err
    assert re.search(rf"{PID}: stored value 0\.5 disagrees with a re-solve by "
                     r"infinite_push\.working_set: 0\.486589\d* \(relative error 2\.7e-02 > "
                     r"2e-06\)", err), err


def test_verify_detects_a_changed_dual_and_rank2plan_value(store, capsys):
    for pid in (DUAL_PID, PAIRS_PID):
        record = reference.load_reference(pid)
        _edit(store, pid, opt_val=record["opt_val"] * (1 + 1e-4))
    assert _verify("--only", DUAL_PID, PAIRS_PID) == 1
    err = capsys.readouterr().err
    assert f"{DUAL_PID}: stored value" in err and "infinite_push.working_set" in err
    assert f"{PAIRS_PID}: stored value" in err and "rank2plan.ccg" in err


def test_verify_detects_a_paper_record_swapped_for_a_seed_one(store, capsys):
    shutil.copy(store / f"{SEED_PID}.json", store / f"{PID}.json")
    assert _verify("--only", PID) == 1
    assert f"holds the record of problem {SEED_PID!r}, not {PID!r}" in capsys.readouterr().err
    _edit(store, PID, problem_id=PID)  # a swap that also renamed the record
    assert _verify("--only", PID) == 1
    err = capsys.readouterr().err
    assert re.search(rf"{PID}: problem definition changed since the value was stored "
                     r"\(options\.scaling 'seed' -> 'paper'; lam [\d.]+ -> 0\.1\)", err), err


@pytest.mark.parametrize("old, new, change", [
    ('options = { penalty = "l2" }\nlam_paper = 0.1\n',
     'options = { penalty = "l2" }\nlam_paper = 0.2\n', "lam 0.1 -> 0.2"),
    ('options = { penalty = "l2" }\nlam_paper = 0.1\n',
     'options = { penalty = "l1" }\nlam_paper = 0.1\n', "options.penalty 'l2' -> 'l1'"),
])
def test_verify_detects_a_changed_catalog_definition(store, edited_catalog, capsys, old, new,
                                                     change):
    edited_catalog(old, new)
    assert _verify("--only", PID) == 1
    err = capsys.readouterr().err
    assert f"{PID}: problem definition changed since the value was stored ({change})" in err
    assert _verify("--only", PID, "--no-resolve") == 1  # the fast check sees it too


def test_verify_fails_on_a_record_without_a_definition_fingerprint(store, capsys):
    path = _edit(store, PID, drop=["spec_fingerprint"])
    assert _verify("--only", PID, "--no-resolve") == 1
    err = capsys.readouterr().err
    assert f"{path}: missing key 'spec_fingerprint'" in err
    assert f"infpush-cvx reference regenerate --only {PID} --accept-changes" in err


def test_verify_reports_an_unreadable_record_naming_the_file(store, capsys):
    path = _edit(store, PID, opt_val=math.nan)
    assert _verify("--only", PID, SEED_PID) == 1
    captured = capsys.readouterr()
    assert f"{path}: opt_val must be a finite number" in captured.err
    assert "1 of 2 stored values match" in captured.out


def test_verify_of_an_unknown_problem_is_a_usage_error(store, capsys):
    assert _verify("--only", "nope") == 2
    assert "unknown problem 'nope'" in capsys.readouterr().err


# --- catalog errors name the file and the entry ----------------------------------------------

_INSTANCE = ('[instances.a]\ngenerator = "planted_bipartite"\n'
             'params = { m = 5, n = 6, d = 2, seed = 1 }\n')
_PROBLEM = '[problems.p]\ninstance = "a"\nformulation = "ranksvm"\nlam = 0.1\n'
_FAMILY = ('[[families]]\nprefix = "x"\nformulation = "ranksvm"\ninstances = ["a"]\n'
           'lam = 0.1\n')


def _catalog_error(tmp_path, text: str) -> tuple[str, str]:
    path = tmp_path / "catalog.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        catalog.load_catalog(str(path))
    # a ValueError of the kind the CLI reports as bad input (exit 2), not an internal failure
    assert type(info.value) is MalformedFileError, type(info.value)
    message = str(info.value)
    assert message.startswith(f"{path}"), message
    return str(path), message


def test_a_toml_syntax_error_names_the_file_and_the_line(tmp_path):
    _, message = _catalog_error(tmp_path, _INSTANCE + '[problems.p\ninstance = "a"\n')
    assert "not valid TOML" in message and "line 4" in message


@pytest.mark.parametrize("text, entry, problem", [
    ('[instance.a]\ngenerator = "planted_bipartite"\n', "",
     "unknown key 'instance'; expected one of ['families', 'instances', 'problems']"),
    (_INSTANCE.replace("params", "parms"), "instance a", "unknown key 'parms'"),
    (_INSTANCE.replace("params = { m", "params = { mm"), "instance a",
     "unknown parameter 'mm' of generator 'planted_bipartite'"),
    ('[instances.a]\ngenerator = "planted_bipartite"\nparams = 3\n', "instance a",
     "params must be a table, got int"),
    ('[instances.a]\nparams = {}\n', "instance a", "missing key 'generator'"),
    (_INSTANCE + _PROBLEM.replace("lam =", "lamda ="), "problem p", "unknown key 'lamda'"),
    (_INSTANCE + _PROBLEM.replace("lam = 0.1\n", ""), "problem p", "missing key 'lam'"),
    (_INSTANCE + _PROBLEM.replace("0.1", '"0.1"'), "problem p", "lam must be a real number, "
                                                               "got str"),
    (_INSTANCE + _PROBLEM.replace("0.1", "nan"), "problem p", "lam must be finite"),
    (_INSTANCE + _PROBLEM.replace("0.1", "-1.0"), "problem p", "lam must be nonnegative"),
    (_INSTANCE + _PROBLEM + 'options = { penalti = "l2" }\n', "problem p",
     "unknown option 'penalti' of formulation 'ranksvm'"),
    (_INSTANCE + _PROBLEM + 'options = 1\n', "problem p", "options must be a table, got int"),
    (_INSTANCE + _PROBLEM.replace('formulation = "ranksvm"', "formulation = 3"), "problem p",
     "unknown formulation 3"),
    (_INSTANCE + _FAMILY.replace('["a"]', '"a"'), "family 0 (prefix 'x')",
     "instances must be a list of instance names, got str"),
    (_INSTANCE + _FAMILY + 'lam_paper = 0.1\n', "family 0 (prefix 'x')",
     "give one of lam and lam_paper, not both"),
    (_INSTANCE + _FAMILY + 'vary = { scaling = "seed" }\n', "family 0 (prefix 'x')",
     "vary.scaling must be a non-empty list"),
    (_INSTANCE + _FAMILY.replace("prefix", "prefx"), "family 0", "unknown key 'prefx'"),
    (_INSTANCE + _FAMILY.replace('"ranksvm"', '"ranksvm"\nstray = 1'), "family 0 (prefix 'x')",
     "unknown key 'stray'"),
])
def test_catalog_entry_errors_name_the_file_and_the_entry(tmp_path, text, entry, problem):
    path, message = _catalog_error(tmp_path, text)
    where = f"{path}: {entry}: " if entry else f"{path}: "
    assert message.startswith(where) and problem in message, message


def test_a_valid_catalog_still_loads(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text(_INSTANCE + _PROBLEM + 'options = { scaling = "seed" }\n' + _FAMILY
                    + 'vary = { scaling = ["paper", "seed"] }\n')
    cat = catalog.load_catalog(str(path))
    assert sorted(cat.problems) == ["p", "x_a_paper", "x_a_seed"]
    assert cat.problems["p"].options == {"scaling": "seed"} and cat.problems["p"].lam == 0.1
