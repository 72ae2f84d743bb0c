"""The catalog is checked when it loads, and its names stay in their folders (issue 26, item 10).

Every reproducer of the issue is a test here: a problem ID that climbs out of the reference
folder, a catalog that is a FIFO, an option value no formulation takes (``penalty = "l7"``),
generator parameters of the wrong type or range, a binary or empty catalog, a NUL byte in an ID.
Each is now a :class:`~infpush_cvx.files.MalformedFileError` naming the file, the entry and the
field while the catalog loads, which the command line reports as a usage error (exit 2).
"""

import inspect
import os
import re
import threading

import pytest

from infpush_cvx import catalog, cli
from infpush_cvx.catalog import _files, reference
from infpush_cvx.data import generators
from infpush_cvx.files import MalformedFileError

INSTANCE = ('[instances.a]\ngenerator = "planted_bipartite"\n'
            'params = { m = 5, n = 6, d = 2, seed = 1 }\n')
PROBLEM = '[problems.p]\ninstance = "a"\nformulation = "infinite_push"\nlam = 0.1\n'
FAMILY = ('[[families]]\nprefix = "x"\nformulation = "infinite_push"\ninstances = ["a"]\n'
          'lam = 0.1\n')


@pytest.fixture
def use_catalog(tmp_path, monkeypatch):
    """``use(text)``: the default catalog becomes a file holding ``text`` (str or bytes; None:
    the file is not written, for a FIFO or a link made by the test), and the reference folder an
    empty one in ``tmp_path``."""
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path / "refs"))

    def use(text, name="catalog.toml"):
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        elif text is not None:
            path.write_text(text)
        monkeypatch.setenv(catalog.CATALOG_ENV_VAR, str(path))
        catalog.clear_cache()  # instance names and paths are reused between tests
        return path

    yield use
    catalog.clear_cache()


def _load_error(path) -> str:
    with pytest.raises(MalformedFileError) as info:
        catalog.load_catalog(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    return message


@pytest.fixture
def unblock_fifos():
    """``watch(path)``: while the test runs, a reader blocked on the FIFO ``path`` is given an
    end of file (a writer opens and closes it), so a regression fails instead of hanging."""
    paths, done = [], threading.Event()

    def unblock():
        while not done.wait(0.2):
            for path in paths:
                try:  # succeeds only while a reader has the FIFO open
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    yield paths.append
    done.set()
    thread.join()


fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


# --- every path stays in its folder -----------------------------------------------------------

#: The issue's ID, ``zz_test/../../../../../<elsewhere>/evil``, with <elsewhere> in tmp_path: from
#: the reference folder tmp_path/refs it names tmp_path/elsewhere/evil.json.
ESCAPING_ID = "zz_test/../../elsewhere/evil"


def test_a_problem_id_that_climbs_out_is_refused_when_the_catalog_loads(use_catalog):
    path = use_catalog(INSTANCE + PROBLEM.replace("problems.p", f'problems."{ESCAPING_ID}"'))
    message = _load_error(path)
    assert f"problem ID {ESCAPING_ID!r} is not a valid name" in message, message


def test_regenerate_of_an_escaping_id_writes_nothing_anywhere(use_catalog, tmp_path, capsys):
    """The reproducer: ``reference regenerate --only <id>`` wrote ``<elsewhere>/evil.json``."""
    use_catalog(INSTANCE + PROBLEM.replace("problems.p", f'problems."{ESCAPING_ID}"'))
    assert cli.main(["reference", "regenerate", "--only", ESCAPING_ID]) == 2
    assert "is not a valid name" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists()
    assert not list(tmp_path.rglob("evil*"))


@pytest.mark.parametrize("name", [
    "../evil", "a/b", "a\\b", "..", ".", ".hidden", "-x", "", "a\x00b", "a b", "é", "a\n",
    "x" * (_files.MAX_NAME_LENGTH + 1), 5, None])
def test_names_that_are_not_plain_file_names_are_refused(name):
    with pytest.raises(ValueError, match="problem ID"):
        _files.check_name(name, "problem ID")
    with pytest.raises(ValueError, match="problem ID"):
        reference.reference_path(name)
    with pytest.raises(ValueError, match="problem ID"):
        catalog.get(name)


@pytest.mark.parametrize("name", ["ip_l2_lam1e-3_a8a_150x1500_s0_paper_compact", "a", "A.b-c_1",
                                  "x" * _files.MAX_NAME_LENGTH])
def test_plain_names_are_accepted(name, tmp_path):
    assert _files.check_name(name, "problem ID") == name
    assert reference.reference_path(name, tmp_path) == tmp_path / f"{name}.json"


def test_the_path_is_checked_to_stay_in_its_folder_as_a_second_defence(monkeypatch, tmp_path):
    monkeypatch.setattr(_files, "check_name", lambda name, what: name)  # the first defence fails
    with pytest.raises(ValueError, match="would be outside"):
        _files.path_in(tmp_path, "../evil", ".json", "problem ID")
    with pytest.raises(ValueError, match="would be outside"):
        _files.path_in(tmp_path, "a/b", ".json", "problem ID")
    assert _files.path_in(tmp_path, "ok", ".json", "problem ID") == tmp_path / "ok.json"


def test_every_packaged_name_is_a_plain_file_name():
    cat = catalog.load_catalog()
    for name in [*cat.instances, *cat.problems]:
        _files.check_name(name, "name")


@pytest.mark.parametrize("text, entry", [
    (INSTANCE.replace("instances.a", 'instances."../a"'), "instance name '../a'"),
    (INSTANCE + PROBLEM.replace("problems.p", 'problems."p\\u0000x"'), "problem ID 'p\\x00x'"),
    (INSTANCE + PROBLEM.replace("problems.p", 'problems.".p"'), "problem ID '.p'"),
    (INSTANCE + FAMILY.replace('prefix = "x"', 'prefix = "x/.."'),
     "family 0 (prefix 'x/..'): problem ID 'x/.._a'"),
    (INSTANCE + FAMILY + 'vary = { kernel = ["rbf", "poly"], gamma = ["scale", 1e-3] }\n',
     None),
])
def test_invalid_names_name_the_file_and_the_entry(use_catalog, text, entry):
    path = use_catalog(text)
    if entry is None:  # every generated ID is valid: "x_a_rbf_0.001"...
        assert "x_a_rbf_0.001" in catalog.load_catalog(str(path)).problems
        return
    message = _load_error(path)
    assert entry in message and "is not a valid name" in message, message


def test_a_nul_byte_in_a_problem_id_is_a_usage_error_of_check(use_catalog, capsys):
    """The reproducer: a problem ID with a NUL byte made ``check`` exit 3."""
    path = use_catalog(INSTANCE + PROBLEM.replace("problems.p", 'problems."p\\u0000x"'))
    assert cli.main(["check", "--cvxpy", "CLARABEL", "--native", "--no-progress",
                     "--out", str(path.parent / "out.csv")]) == 2
    assert f"{path}: problem ID 'p\\x00x' is not a valid name" in capsys.readouterr().err


def test_names_differing_only_in_case_are_refused(use_catalog):
    path = use_catalog(INSTANCE + PROBLEM + PROBLEM.replace("problems.p", "problems.P"))
    assert "problems 'p' and 'P' differ only in case" in _load_error(path)
    path = use_catalog(INSTANCE + INSTANCE.replace("instances.a", "instances.A") + PROBLEM)
    assert "instances 'a' and 'A' differ only in case" in _load_error(path)


# --- only small regular files are read ----------------------------------------------------------


@fifo_only
@pytest.mark.parametrize("command", [["list"], ["check", "--cvxpy", "CLARABEL", "--native"],
                                     ["solve", "p", "--solver", "CLARABEL"],
                                     ["reference", "verify", "--no-resolve"]])
def test_a_catalog_that_is_a_fifo_is_refused_not_waited_on(use_catalog, unblock_fifos, capsys,
                                                           tmp_path, command):
    path = use_catalog(None, "catalog.fifo")
    os.mkfifo(path)
    unblock_fifos(path)
    if command[0] == "check":
        command = [*command, "--no-progress", "--out", str(tmp_path / "out.csv")]
    assert cli.main(command) == 2  # a regression blocks until unblock_fifos gives an EOF
    err = capsys.readouterr().err
    assert f"{path}: a FIFO (named pipe), not a regular file" in err, err


@pytest.mark.parametrize("target, kind", [("/dev/zero", "a character device"),
                                          (None, "a folder")])
def test_a_catalog_that_is_a_device_or_a_folder_is_refused_unread(use_catalog, tmp_path, target,
                                                                  kind):
    """The reproducer: a catalog linked to /dev/zero was read without bound."""
    if target is not None and not os.path.exists(target):
        pytest.skip(f"no {target}")
    path = use_catalog(None)
    if target is None:
        path.mkdir()
    else:
        path.symlink_to(target)
    assert _load_error(path).startswith(f"{path}: {kind}, not a regular file")


def test_a_file_larger_than_the_bound_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.toml"
    path.write_text(INSTANCE + PROBLEM + "# padding\n" * 100)
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 200)
    assert "more than the 200 a catalog may hold" in _load_error(path)
    assert _files.read_small_file(path, limit=path.stat().st_size) == path.read_bytes()
    with pytest.raises(MalformedFileError, match="more than the 10"):
        _files.read_small_file(path, limit=10)


def test_the_bound_is_16_mib():
    assert _files.MAX_FILE_BYTES == 16 * 1024 * 1024


def test_a_missing_catalog_is_still_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        catalog.load_catalog(str(tmp_path / "none.toml"))


# --- the catalog's contents -----------------------------------------------------------------


def test_a_binary_catalog_names_the_file(use_catalog, capsys):
    """The reproducer: ``'utf-8' codec can't decode`` without the file."""
    path = use_catalog(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)))
    assert re.match(re.escape(f"{path}: not a UTF-8 text file (byte ") + r"\d+",
                    _load_error(path))
    assert cli.main(["list"]) == 2
    assert f"{path}: not a UTF-8 text file" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["", "# nothing\n", INSTANCE])
def test_an_empty_catalog_is_refused(use_catalog, text, capsys):
    path = use_catalog(text)
    assert "declares no problem (an empty catalog)" in _load_error(path)
    assert cli.main(["list"]) == 2
    assert f"{path}: declares no problem" in capsys.readouterr().err


@pytest.mark.parametrize("text", [
    'a = ' + "[" * 5000 + "]" * 5000 + "\n",
    'a = ' + "1" * 5000 + "\n",
])
def test_toml_too_deep_or_too_long_names_the_file(use_catalog, text):
    path = use_catalog(text)
    assert "not valid TOML" in _load_error(path)


def test_duplicate_problem_ids_are_refused(use_catalog):
    path = use_catalog(INSTANCE + PROBLEM + FAMILY.replace('prefix = "x"', 'prefix = "p"') +
                       '[problems.p_a]\ninstance = "a"\nformulation = "ranksvm"\nlam = 0.1\n')
    assert "problem 'p_a' is declared twice" in _load_error(path)


@pytest.mark.parametrize("option, value, message", [
    ("penalty", '"l7"', "options.penalty: unknown penalty 'l7'; expected one of ['l1', 'l2']"),
    ("penalty", "1", "options.penalty: unknown penalty 1"),
    ("scaling", '"papr"', "options.scaling: unknown scaling 'papr'"),
    ("form", '"compressed"', "options.form: unknown form 'compressed'"),
    ("kernel", '"sigmoid"', "options.kernel: unknown kernel 'sigmoid'"),
    ("gamma", '"big"', "options.gamma: unknown gamma 'big'"),
    ("gamma", "-1.0", "options.gamma: gamma must be nonnegative"),
    ("degree", "2.5", "options.degree: degree must be an integer"),
    ("coef0", "nan", "options.coef0: coef0 must be finite"),
])
def test_option_values_no_formulation_takes_are_refused(use_catalog, option, value, message):
    path = use_catalog(INSTANCE + PROBLEM + f"options = {{ {option} = {value} }}\n")
    got = _load_error(path)
    assert got.startswith(f"{path}: problem p: {message}"), got


@pytest.mark.parametrize("text, message", [
    ('formulation = "toppush"', "options.loss: unknown loss 'square'"),
    ('formulation = "pnorm_push"', "options.p: p must be at least 1"),
])
def test_the_loss_and_p_of_their_formulations_are_checked(use_catalog, text, message):
    option = "loss = \"square\"" if "toppush" in text else "p = 0.5"
    path = use_catalog(INSTANCE + PROBLEM.replace('formulation = "infinite_push"', text)
                       + f"options = {{ {option} }}\n")
    assert message in _load_error(path)


def test_family_options_and_vary_values_are_checked_naming_the_field(use_catalog):
    path = use_catalog(INSTANCE + FAMILY + 'options = { penalty = "l7" }\n')
    assert "family 0 (prefix 'x'): options.penalty: unknown penalty 'l7'" in _load_error(path)
    path = use_catalog(INSTANCE + FAMILY + 'vary = { scaling = ["paper", "sead"] }\n')
    assert "family 0 (prefix 'x'): vary.scaling[1]: unknown scaling 'sead'" in _load_error(path)


@pytest.mark.parametrize("text, message", [
    ('[instances.a]\ngenerator = ["planted_bipartite"]\n',
     "instance a: unknown generator ['planted_bipartite']"),
    (INSTANCE + PROBLEM.replace('"infinite_push"', '["infinite_push"]'),
     "problem p: unknown formulation ['infinite_push']"),
    (INSTANCE + FAMILY + 'options = { form = ["compact"] }\n',
     "family 0 (prefix 'x'): options.form: unknown form ['compact']"),
])
def test_a_list_where_a_name_belongs_names_the_file_and_the_entry(use_catalog, text, message):
    """A list is not hashable: the check of a name refuses it as an unknown name (it was a
    TypeError naming neither the file nor the entry)."""
    assert message in _load_error(use_catalog(text))


def test_penalty_l7_is_a_usage_error_of_list_and_check(use_catalog, capsys, tmp_path):
    """The reproducer: ``penalty = "l7"`` passed ``list``, then ``check`` exited 3 with
    ``KeyError: 'l7'``."""
    path = use_catalog(INSTANCE + PROBLEM + 'options = { penalty = "l7" }\n')
    assert cli.main(["list"]) == 2
    assert f"{path}: problem p: options.penalty: unknown penalty 'l7'" in \
        capsys.readouterr().err
    assert cli.main(["check", "--no-progress", "--out", str(tmp_path / "o.csv")]) == 2
    assert "unknown penalty 'l7'" in capsys.readouterr().err


def test_every_formulation_option_has_a_value_check():
    for name, factory in catalog.FORMULATIONS.items():
        options = set(inspect.signature(factory).parameters) - {"data", "lam"}
        assert options <= set(catalog.specs.OPTION_CHECKS), (name, options)


def test_every_packaged_option_value_passes_its_check():
    for spec in catalog.load_catalog().problems.values():
        for key, value in spec.options.items():
            catalog.specs.OPTION_CHECKS[key](value, key)


# --- generator parameters -----------------------------------------------------------------------


@pytest.mark.parametrize("old, new, message", [
    ("m = 5", "m = -5", "params.m must be a positive integer (at most 2147483647), got -5"),
    ("m = 5", "m = 10.5", "params.m must be a positive integer (at most 2147483647), got 10.5"),
    ("m = 5", 'm = "10"', "params.m must be a positive integer (at most 2147483647), got '10'"),
    ("m = 5", "m = 1e11",
     "params.m must be a positive integer (at most 2147483647), got 100000000000.0"),
    ("m = 5", "m = 100000000000", "params.m must be a positive integer (at most 2147483647)"),
    ("m = 5", "m = true", "params.m must be a positive integer"),
    ("seed = 1", "seed = -1", "params.seed must be an integer in [0, 4294967295], got -1"),
    ("seed = 1", "seed = 4294967296", "params.seed must be an integer in [0, 4294967295]"),
    ("seed = 1", "seed = 1.0", "params.seed must be an integer in [0, 4294967295], got 1.0"),
    ("seed = 1", "seed = 1, margin = nan", "params.margin must be finite, got nan"),
    ("seed = 1", "seed = 1, margin = -0.5", "params.margin must be positive"),
    ("seed = 1", 'seed = 1, margin = "big"', "params.margin must be a real number, got str"),
    ("seed = 1", "seed = 1, margin = " + "9" * 400, "params.margin must be a finite number"),
    ("seed = 1", "seed = 1, density = 1.5", "params.density must be in (0, 1], got 1.5"),
])
def test_generator_parameters_are_checked_when_the_catalog_loads(use_catalog, old, new, message):
    """The reproducers: m = -5, 10.5, "10", 1e11, seed -1, margin nan reached ``generate``
    (exit 3, a message naming neither the file nor the parameter)."""
    path = use_catalog(INSTANCE.replace(old, new) + PROBLEM)
    got = _load_error(path)
    assert got.startswith(f"{path}: instance a: {message}"), got


@pytest.mark.parametrize("old, new", [("m = 5", "m = -5"), ("m = 5", "m = 1e11"),
                                      ("seed = 1", "seed = -1"),
                                      ("seed = 1", "seed = 1, margin = nan")])
def test_generate_reports_bad_parameters_as_a_usage_error(use_catalog, capsys, tmp_path, old,
                                                          new):
    path = use_catalog(INSTANCE.replace(old, new) + PROBLEM)
    assert cli.main(["generate", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: instance a: params." in err, err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize("generator, params", [
    ("rank2plan_pairs", 'n_groups = 2, states_per_group = 1, n_features = 3, '
                        'pairs_per_group = 4, seed = 1'),
    ("rank2plan_pairs", 'n_groups = 2, states_per_group = 5, n_features = 3, '
                        'pairs_per_group = 4, seed = 1, sparse = "no"'),
    ("real_subset", 'dataset = "iris", m = 5, n = 5, seed = 0'),
    ("real_subset", 'dataset = "a8a", m = 5, n = 5, seed = 0, scale01 = 1'),
    ("normalized_bipartite", "m = 5, n = 5, d = 2, mu = 0.0, seed = 0"),
])
def test_other_generators_parameters_are_checked(use_catalog, generator, params):
    path = use_catalog(f'[instances.a]\ngenerator = "{generator}"\nparams = {{ {params} }}\n'
                       + PROBLEM)
    message = _load_error(path)
    assert "instance a: " in message and "params." in message, message


def test_every_generator_parameter_has_a_check():
    for name, function in catalog.GENERATORS.items():
        for parameter in inspect.signature(function).parameters:
            assert parameter in generators.PARAMETER_CHECKS, (name, parameter)


def test_every_packaged_instance_passes_the_checks():
    for spec in catalog.load_catalog().instances.values():
        assert generators.check_parameters(spec.params) == spec.params


@pytest.mark.parametrize("call, message", [
    (lambda: generators.planted_bipartite(5, 6, 2, seed=-1), "seed must be an integer in"),
    (lambda: generators.planted_bipartite(5, 6, 2, seed=1.5), "seed must be an integer in"),
    (lambda: generators.degenerate_bipartite(5, 6, 2, seed=True), "seed must be an integer"),
    (lambda: generators.normalized_bipartite(5, 6, 2, seed=2**32), "seed must be an integer"),
    (lambda: generators.binary_bipartite(5, 6, 50, seed=-3), "seed must be an integer in"),
    (lambda: generators.planted_bipartite(2**40, 6, 2, seed=1), "m must be a positive integer"),
    (lambda: generators.rank2plan_pairs(2, 5, 3, 4, seed=1, sparse="no"),
     "sparse must be true or false"),
    (lambda: generators.rank2plan_pairs(2, 5, 3, 4, seed=1, max_distance=0),
     "max_distance must be a positive integer"),
])
def test_generators_check_their_parameters_when_called_directly(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
