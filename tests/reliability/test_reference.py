"""Stored reference values and the catalog they belong to, under misuse and damage.

Catalog errors are one ValueError naming the file and the entry.
"""

import pytest

from infpush_cvx import catalog

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
    assert type(info.value) is ValueError, type(info.value)
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
