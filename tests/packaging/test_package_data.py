"""The packaged catalog and reference values: found inside the package, replaced by the
environment variables, never written into an installed package; the version and --version."""

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import infpush_cvx
from infpush_cvx import catalog, cli
from infpush_cvx.catalog import reference

PACKAGE = Path(infpush_cvx.__file__).resolve().parent
PID = "ip_l2_planted_s_paper_compact"


def test_data_is_found_inside_the_package():
    assert catalog.PACKAGED_CATALOG == PACKAGE / "catalog" / "problems" / "catalog.toml"
    assert reference.PACKAGED_REFERENCE_DIR == PACKAGE / "catalog" / "reference_values"
    assert catalog.PACKAGED_CATALOG.is_file()
    assert (reference.PACKAGED_REFERENCE_DIR / f"{PID}.json").is_file()
    assert (PACKAGE / "py.typed").is_file()


def test_environment_variables_name_another_catalog_and_reference_folder(tmp_path):
    own_catalog = tmp_path / "catalog.toml"
    own_catalog.write_text('[instances.tiny]\ngenerator = "infinite_push_0"\n\n'
                           '[problems.only_one]\ninstance = "tiny"\n'
                           'formulation = "infinite_push"\nlam = 1.0\n')
    env = {**os.environ, "INFPUSH_CVX_CATALOG": str(own_catalog),
           "INFPUSH_CVX_REFERENCE_DIR": str(tmp_path / "refs"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's package
    probe = ("import json\nfrom infpush_cvx import catalog\n"
             "from infpush_cvx.catalog import reference\n"
             "print(json.dumps([catalog.problem_ids(), str(reference.reference_dir()),"
             " str(reference.writable_directory())]))")
    proc = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ids, folder, writable = json.loads(proc.stdout)
    assert ids == ["only_one"]
    assert folder == writable == str(tmp_path / "refs")


def test_a_source_checkout_writes_its_own_reference_folder():
    # The tests run from the checkout (editable install): `reference regenerate` stores there.
    assert reference._in_source_checkout()
    assert reference.writable_directory(reference.PACKAGED_REFERENCE_DIR) == \
        reference.PACKAGED_REFERENCE_DIR


def test_an_installed_package_refuses_to_write_its_own_reference_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(reference, "_in_source_checkout", lambda: False)
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(reference.PACKAGED_REFERENCE_DIR))

    def no_solve(pid):
        raise AssertionError("refused only after solving")

    monkeypatch.setattr(reference, "compute_reference", no_solve)
    with pytest.raises(ValueError, match="directory: refusing to write reference values "
                                         "into the installed package") as info:
        reference.regenerate([PID])
    assert "INFPUSH_CVX_REFERENCE_DIR" in str(info.value)
    assert str(reference.PACKAGED_REFERENCE_DIR) in str(info.value)
    # Another folder, given or from the environment, is written.
    assert reference.writable_directory(tmp_path) == tmp_path
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path / "refs"))
    assert reference.writable_directory() == tmp_path / "refs"


def test_the_cli_reports_the_refusal_as_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(reference, "_in_source_checkout", lambda: False)
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(reference.PACKAGED_REFERENCE_DIR))
    assert cli.main(["reference", "regenerate", "--only", PID]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "refusing to write reference values" in err and "INFPUSH_CVX_REFERENCE_DIR" in err


def test_version_is_the_installed_metadata_and_the_cli_prints_it(capsys):
    assert infpush_cvx.__version__ == metadata.version("infpush_cvx")
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"infpush-cvx {infpush_cvx.__version__}"


def test_pytest_is_not_a_runtime_dependency():
    requires = metadata.requires("infpush_cvx") or []
    assert not [r for r in requires if r.startswith("pytest") and "extra ==" not in r], requires
