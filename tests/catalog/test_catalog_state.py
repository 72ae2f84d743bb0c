"""No process-wide state frozen at import (issue 28): the environment variables naming another
catalog and another reference folder are read when used, and the cached catalog hands every
caller the same specs, whose options and parameters cannot be changed under the others."""

import pytest

from infpush_cvx import catalog
from infpush_cvx.catalog import reference

TINY = ('[instances.tiny]\ngenerator = "infinite_push_0"\n\n[problems.only_one]\n'
        'instance = "tiny"\nformulation = "infinite_push"\nlam = 1.0\n')


def test_the_catalog_variable_is_read_when_used(tmp_path, monkeypatch):
    own = tmp_path / "catalog.toml"
    own.write_text(TINY)
    assert "only_one" not in catalog.problem_ids(tier="all")
    monkeypatch.setenv(catalog.CATALOG_ENV_VAR, str(own))  # after the import
    try:
        assert catalog.default_catalog() == own
        assert catalog.problem_ids(tier="all") == ["only_one"]
    finally:
        monkeypatch.delenv(catalog.CATALOG_ENV_VAR)
        catalog.clear_cache()
    assert "only_one" not in catalog.problem_ids(tier="all")


def test_the_reference_variable_is_read_when_used(tmp_path, monkeypatch):
    assert reference.reference_dir() == reference.PACKAGED_REFERENCE_DIR
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path))
    assert reference.reference_dir() == tmp_path
    assert reference.reference_path("x").parent == tmp_path


def test_the_shared_specs_are_read_only():
    pid = catalog.problem_ids()[0]
    spec = catalog.get(pid)
    with pytest.raises(TypeError):
        spec.options["penalty"] = "l1"
    instance = catalog.load_catalog().instances[spec.instance]
    with pytest.raises(TypeError):
        instance.params["seed"] = 1
    assert catalog.get(pid) is spec and dict(spec.options) == spec.definition()["options"]
