"""Stored records are checked when they load, and a stale one is never used silently (issue 26,
item 10).

The reproducers: a record with a 400-digit ``opt_val`` or JSON nested 100,000 deep exited 3
naming no file; a record that is a FIFO blocked ``verify``, ``check`` and ``solve``, one linked
to /dev/zero was read without bound; ``status: "infeasible"``, a negative tolerance and a
duplicated ``opt_val`` key passed ``verify --no-resolve``; ``check`` and ``solve`` used a record
whose instance fingerprint no longer matched without a word.
"""

import json
import os
import re
import shutil
import threading
import warnings

import pytest

from infpush_cvx import catalog, cli
from infpush_cvx.catalog import _files, reference
from infpush_cvx.files import MalformedFileError

PID = "ip_l2_planted_s_paper_compact"
STORED = 0.4865894034589988


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A reference folder holding a copy of PID's record, in place of the packaged one."""
    folder = tmp_path / "reference_values"
    folder.mkdir()
    shutil.copy(reference.reference_path(PID), folder / f"{PID}.json")
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(folder))
    return folder


def _write(folder, text: str):
    path = folder / f"{PID}.json"
    path.write_text(text)
    return path


def _edited(folder, old: str, new: str):
    """Replace the one occurrence of ``old`` in PID's record file by ``new``."""
    path = folder / f"{PID}.json"
    text = path.read_text()
    assert text.count(old) == 1, old
    return _write(folder, text.replace(old, new))


def _refused(path, message: str) -> str:
    with pytest.raises(MalformedFileError) as info:
        reference.load_reference(PID)
    got = str(info.value)
    assert got.startswith(f"{path}: ") and message in got, got
    return got


OPT_VAL = f'"opt_val": {STORED!r}'
STORED_FINGERPRINT = '"instance_fingerprint": "5e2f'  # its first four digits


# --- records checked when they load -------------------------------------------------------------


@pytest.mark.parametrize("value, message", [
    ("1" * 400, "an integer of 400 digits, more than 30"),
    ("-" + "1" * 400, "an integer of 400 digits, more than 30"),
    ("1" * 5000, "an integer of 5000 digits"),  # beyond Python's int-string limit as well
    ("1" * 400 + ".0", "opt_val must be a finite number, got inf"),
    ("1e400", "opt_val must be a finite number, got inf"),
])
def test_a_huge_opt_val_names_the_file(store, value, message):
    path = _edited(store, OPT_VAL, f'"opt_val": {value}')
    _refused(path, message)


def test_json_nested_100000_deep_names_the_file(store):
    path = _write(store, "[" * 100_000 + "]" * 100_000)
    _refused(path, "not a valid JSON record (objects and arrays nested more than 32 deep)")
    path = _edited(store, "[" * 100_000 + "]" * 100_000,  # within the parser's recursion limit
                   json.dumps({"a": json.loads("[" * 40 + "]" * 40)}))
    _refused(path, "objects and arrays nested more than 32 deep")


@pytest.mark.parametrize("old, new, message", [
    (OPT_VAL, f'"opt_val": 5.0, {OPT_VAL}', "key 'opt_val' given twice in one object"),
    ('"solver": "ECOS"', '"solver": "ECOS", "solver": "SCS"', "key 'solver' given twice"),
])
def test_a_key_given_twice_is_refused(store, old, new, message):
    path = _edited(store, old, new)
    _refused(path, message)


@pytest.mark.parametrize("old, new, message", [
    ('"status": "optimal",\n  "solver"', '"status": "infeasible",\n  "solver"',
     "status must be one of ['optimal'] (only an optimum is a reference value), got "
     "'infeasible'"),
    ('"status": "optimal",\n  "solver"', '"status": "optimal_inaccurate",\n  "solver"',
     "status must be one of ['optimal']"),
    ('"tolerance": 1e-06', '"tolerance": -1e-06', "tolerance must be nonnegative, got -1e-06"),
    ('"tolerance": 1e-06', '"tolerance": NaN', "tolerance must be a finite number, got nan"),
    ('"solver": "ECOS"', '"solver": "ECOS", "status": "infeasible"',
     "cross_check.status must be one of ['optimal', 'optimal_inaccurate'], got 'infeasible'"),
])
def test_a_record_that_is_not_of_an_optimum_within_tolerance_is_refused(store, old, new,
                                                                        message):
    path = _edited(store, old, new)
    _refused(path, message)


def test_a_zero_tolerance_and_an_inaccurate_cross_check_are_accepted(store):
    _edited(store, '"tolerance": 1e-06', '"tolerance": 0.0')
    _edited(store, '"solver": "ECOS"', '"solver": "ECOS", "status": "optimal_inaccurate"')
    assert reference.load_reference(PID)["tolerance"] == 0.0


@pytest.mark.parametrize("old, new, message", [
    ('"status": "optimal",\n  "solver"', '"status": "infeasible",\n  "solver"',
     "status must be one of ['optimal']"),
    ('"tolerance": 1e-06', '"tolerance": -1.0', "tolerance must be nonnegative"),
    (OPT_VAL, f'"opt_val": 5.0, {OPT_VAL}', "key 'opt_val' given twice"),
    (OPT_VAL, '"opt_val": ' + "1" * 400, "an integer of 400 digits"),
])
def test_verify_no_resolve_fails_on_them_naming_the_file(store, capsys, old, new, message):
    """The reproducers passed ``verify --no-resolve`` (or exited 3 naming no file)."""
    path = _edited(store, old, new)
    assert cli.main(["reference", "verify", "--only", PID, "--no-resolve"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: " in err and message in err, err


def test_a_deep_record_is_a_usage_error_of_solve_not_a_failure(store, capsys):
    path = _write(store, "[" * 100_000 + "]" * 100_000)
    assert cli.main(["solve", PID, "--solver", "CLARABEL"]) == 2
    assert f"{path}: not a valid JSON record" in capsys.readouterr().err


def test_a_record_that_is_not_utf8_names_the_file(store):
    path = store / f"{PID}.json"
    path.write_bytes(b'{"opt_val": "\xff\xfe"}')
    _refused(path, "not a valid JSON record ('utf-8' codec can't decode")


def test_a_record_larger_than_the_bound_is_refused(store, monkeypatch):
    path = store / f"{PID}.json"
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 100)
    _refused(path, "more than the 100 a reference record may hold")


# --- a record that is not a regular file --------------------------------------------------------


@pytest.fixture
def fifo_record(store):
    """PID's record replaced by a FIFO; a reader blocked on it (a regression) is given an end of
    file after a moment, so the test fails instead of hanging."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = store / f"{PID}.json"
    path.unlink()
    os.mkfifo(path)
    done = threading.Event()

    def unblock():
        while not done.wait(0.2):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader: nothing is blocked
                pass

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    yield path
    done.set()
    thread.join()


def test_a_fifo_record_is_refused_not_waited_on(fifo_record):
    _refused(fifo_record, "a FIFO (named pipe), not a regular file; a reference record must be "
                          "a regular file")


@pytest.mark.parametrize("command, code", [
    (["reference", "verify", "--only", PID, "--no-resolve"], 1),
    (["solve", PID, "--solver", "CLARABEL"], 2),
    (["check", "--problems", PID, "--cvxpy", "CLARABEL", "--native", "--no-progress"], 2),
])
def test_verify_check_and_solve_do_not_block_on_a_fifo_record(fifo_record, capsys, tmp_path,
                                                              command, code):
    if command[0] == "check":
        command = [*command, "--out", str(tmp_path / "out.csv")]
    assert cli.main(command) == code
    err = capsys.readouterr().err
    assert f"{fifo_record}: a FIFO (named pipe), not a regular file" in err, err


def test_a_record_linked_to_dev_zero_is_refused_unread(store):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    path = store / f"{PID}.json"
    path.unlink()
    path.symlink_to("/dev/zero")
    _refused(path, "a character device, not a regular file")


# --- a stale record is not used silently --------------------------------------------------------


def test_a_matching_record_gives_its_value(store):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reference.stored_value(PID) == reference.StoredValue(STORED, "")


def test_no_record_gives_no_value_and_says_so_without_a_warning(store):
    (store / f"{PID}.json").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = reference.stored_value(PID)
    assert found.value is None
    assert found.reason == (f"{PID}: no stored value (run `infpush-cvx reference regenerate "
                            f"--only {PID}`)")


def test_a_record_of_another_instance_is_not_used_and_says_why(store):
    """The reproducer: ``check`` and ``solve`` used such a record without a word."""
    path = _edited(store, STORED_FINGERPRINT, '"instance_fingerprint": "0000')
    before = path.read_text()
    with pytest.warns(reference.StaleReferenceWarning) as caught:
        found = reference.stored_value(PID)
    assert found.value is None and str(caught[0].message) == found.reason
    assert re.fullmatch(
        rf"{PID}: stored value {STORED!r} not used: instance 'planted_s' regenerated with "
        r"fingerprint [0-9a-f]{16}\.\.\., stored 0000[0-9a-f]{12}\.\.\.; run `infpush-cvx "
        rf"reference regenerate --only {PID}` to see the change and store a fresh value \(add "
        r"--accept-changes\)", found.reason), found.reason
    assert path.read_text() == before, "the stored value is never overwritten by a lookup"


def test_a_record_of_another_definition_is_not_used_and_says_why(store, tmp_path, monkeypatch):
    text = catalog.default_catalog().read_text()
    old = 'options = { penalty = "l2" }\nlam_paper = 0.1\n'
    assert text.count(old) == 1
    edited = tmp_path / "catalog.toml"
    edited.write_text(text.replace(old, old.replace("0.1", "0.2")))
    monkeypatch.setenv(catalog.CATALOG_ENV_VAR, str(edited))
    try:
        with pytest.warns(reference.StaleReferenceWarning, match=re.escape(
                f"{PID}: stored value {STORED!r} not used: problem definition changed since "
                f"the value was stored (lam 0.1 -> 0.2); run `infpush-cvx reference regenerate "
                f"--only {PID}`")):
            assert reference.stored_value(PID).value is None
    finally:
        catalog.clear_cache()


def test_the_original_scripts_dictionaries_hold_no_stale_value(store):
    _edited(store, STORED_FINGERPRINT, '"instance_fingerprint": "0000')
    with pytest.warns(reference.StaleReferenceWarning, match=PID):
        (entry,) = catalog.problems([PID])
    assert entry["opt_val"] is None and entry["problemID"] == PID


def test_the_original_scripts_dictionaries_hold_the_matching_value(store):
    (entry,) = catalog.problems([PID])
    assert entry["opt_val"] == STORED


def test_regenerate_still_refuses_to_replace_a_record_it_cannot_read(store, monkeypatch):
    """Stored values are never silently overwritten: a record refused by the new checks is
    replaced only with ``accept_changes``, and says why."""
    path = _edited(store, '"tolerance": 1e-06', '"tolerance": -1.0')
    before = path.read_text()
    fresh = json.loads(before.replace('"tolerance": -1.0', '"tolerance": 1e-06'))
    monkeypatch.setattr(reference, "compute_reference", lambda pid: dict(fresh))
    with pytest.raises(reference.ReferenceError, match="tolerance must be nonnegative"):
        reference.regenerate([PID])
    assert path.read_text() == before
    actions = reference.regenerate([PID], accept_changes=True)
    assert actions[PID].startswith("replaced: stored record not readable") and \
        "tolerance must be nonnegative" in actions[PID], actions
    assert json.loads(path.read_text())["tolerance"] == 1e-06
