"""Issue 30, item 1: learning-to-rank files. The svmlight ``qid:`` field in ``load_libsvm``,
LightGBM's group files in ``load_ranking``, and the letor set (LightGBM's LambdaRank example) in
``load_letor``; checked against scikit-learn's reader. Never touches the network."""

import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import datasets as D
from infpush_cvx.data.queries import QueryData, QueryWarning

SHARED_LETOR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "letor"
needs_letor = pytest.mark.skipif(not (SHARED_LETOR / "rank.train").is_file(),
                                 reason="shared letor data folder (letor/rank.train) not present")
#: rank.train's documents of each label 0 to 4 (the shared data README)
TRAIN_LABEL_COUNTS = [645, 1211, 858, 222, 69]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in (D.ENV_VAR, D.LIBSVM_ENV_VAR, D.LETOR_ENV_VAR):
        monkeypatch.delenv(name, raising=False)


def _write(tmp_path, text, name="rank.svm"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _canonical(X):
    X = sp.csr_matrix(X)
    X.sort_indices()
    X.eliminate_zeros()
    return X


def _assert_same_matrix(X, Xs):
    Xs = _canonical(Xs)
    assert X.shape == Xs.shape and X.dtype == Xs.dtype
    for a, b in ((X.indptr, Xs.indptr), (X.indices, Xs.indices), (X.data, Xs.data)):
        np.testing.assert_array_equal(a, b)


def _quiet(fn, *args, **kwargs):
    """Call ``fn`` with QueryData's QueryWarning silenced (tested where it is meant)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        return fn(*args, **kwargs)


# --- the qid: field in load_libsvm ---------------------------------------------------------------

# scikit-learn's reader wants sorted indices (this parser does not), hence sorted ones here
QID_TEXT = """\
# graded labels, query ids after the label, comments and blank lines
3 qid:7 1:0.5 3:2   # trailing comment
1 qid:7 2:1.5e-1

0 qid:7
4 qid:-2 1:1 4:-3
2.5 qid:+11 3:1
0 qid:11 1:7 2:0 4:1
"""


def test_qid_field_matches_sklearn(tmp_path):
    sk = pytest.importorskip("sklearn.datasets")
    files = [(_write(tmp_path, QID_TEXT), {}),
             (_write(tmp_path, QID_TEXT, "wide.svm"), {"n_features": 9}),
             (_write(tmp_path, QID_TEXT.replace(" 1:", " 0:"), "zero.svm"), {}),
             (_write(tmp_path, QID_TEXT, "zero9.svm"), {"zero_based": True, "n_features": 9})]
    for path, kw in files:
        X, y, qid = D.load_libsvm(path, query_id=True, **kw)
        Xs, ys, qs = sk.load_svmlight_file(str(path), dtype=np.float64, query_id=True, **kw)
        _assert_same_matrix(X, Xs)
        assert y.dtype == np.float64 and qid.dtype == np.int64
        np.testing.assert_array_equal(y, ys)
        np.testing.assert_array_equal(qid, qs)
    np.testing.assert_array_equal(qid, [7, 7, 7, -2, 11, 11])
    np.testing.assert_array_equal(y, [3, 1, 0, 4, 2.5, 0])  # graded, as read: no binary check


def test_qid_field_is_dropped_without_query_id(tmp_path):
    text = "+1 qid:1 1:2 3:0.5\n-1 qid:1 2:1\n-1 qid:2 1:1\n"
    X, y = D.load_libsvm(_write(tmp_path, text))
    Xn, yn = D.load_libsvm(_write(tmp_path, text.replace("qid:1 ", "").replace("qid:2 ", ""),
                                  "plain.svm"))
    assert (X != Xn).nnz == 0 and X.shape == Xn.shape == (3, 3)
    np.testing.assert_array_equal(y, yn)
    np.testing.assert_array_equal(y, [1, 0, 0])
    # without query_id, the labels must still be binary (today's behaviour)
    with pytest.raises(ValueError, match=r"rank\.svm: labels must be binary"):
        D.load_libsvm(_write(tmp_path, QID_TEXT))


@pytest.mark.parametrize("text, line, what", [
    ("1 qid:1 1:1\n0 1:2\n", 2, "no qid: field, while line 1 has one"),
    ("# c\n\n1 1:1\n0 qid:3 1:2\n", 4, "a qid: field, while line 3 has none"),
    ("1 qid:1 1:1\n0 qid:1 1:2\n\n2 qid:2 2:1\n0 2:1\n", 5, "no qid: field, while line 1"),
])
def test_qid_on_some_lines_only_names_file_and_line(tmp_path, text, line, what):
    for query_id in (True, False):
        with pytest.raises(ValueError, match=rf"rank\.svm: line {line}: {what}.*every line or "
                                             rf"on none"):
            D.load_libsvm(_write(tmp_path, text), query_id=query_id)


@pytest.mark.parametrize("bad", ["qid:", "qid:x", "qid:1.5", "qid:1e3", "qid:--1", "qid:٣",
                                 "qid:99999999999999999999"])
def test_malformed_qid_names_file_and_line(tmp_path, bad):
    path = _write(tmp_path, f"1 qid:1 1:1\n\n0 {bad} 1:2\n")
    with pytest.raises(ValueError, match=rf"rank\.svm: line 3: malformed query id '{bad}'"):
        D.load_libsvm(path, query_id=True)


def test_qid_elsewhere_than_after_the_label_is_a_malformed_token(tmp_path):
    path = _write(tmp_path, "1 qid:1 1:1\n0 1:2 qid:1\n")
    with pytest.raises(ValueError, match=r"line 2: malformed token 'qid:1'"):
        D.load_libsvm(path, query_id=True)


def test_query_id_without_qid_fields_and_bad_arguments(tmp_path):
    path = _write(tmp_path, "1 1:1\n0 1:2\n")
    with pytest.raises(ValueError, match=r"rank\.svm: no qid: field.*load_ranking"):
        D.load_libsvm(path, query_id=True)
    with pytest.raises(TypeError, match="query_id"):
        D.load_libsvm(path, query_id="yes")


# --- load_ranking: qid: fields or a group file ----------------------------------------------------

def test_load_ranking_reads_qid_fields(tmp_path):
    data = _quiet(D.load_ranking, _write(tmp_path, QID_TEXT))
    assert isinstance(data, QueryData) and sp.issparse(data.X) and data.X.shape == (6, 4)
    np.testing.assert_array_equal(data.queries, [7, -2, 11])  # the ids as read, in file order
    np.testing.assert_array_equal(data.ptr, [0, 3, 4, 6])
    np.testing.assert_array_equal(data.y, [3, 1, 0, 4, 2.5, 0])
    np.testing.assert_array_equal(data.pair_counts, [3, 0, 1])


GROUPED = "0 1:1\n2 2:1\n1 1:3\n\n4 3:1\n0 1:1 3:2\n"


def test_load_ranking_reads_the_default_and_a_named_group_file(tmp_path):
    path = _write(tmp_path, GROUPED)
    _write(tmp_path, "3\n2\n", "rank.svm.query")  # path + ".query": used when present
    data = D.load_ranking(path)
    np.testing.assert_array_equal(data.qid, [0, 0, 0, 1, 1])  # ids 0, 1, ... from a group file
    np.testing.assert_array_equal(data.y, [0, 2, 1, 4, 0])
    np.testing.assert_array_equal(data.X.toarray(), [[1, 0, 0], [0, 1, 0], [3, 0, 0],
                                                     [0, 0, 1], [1, 0, 2]])
    named = _write(tmp_path, "1\n\n4\n", "groups.txt")  # an explicit file comes first
    with pytest.warns(QueryWarning, match="1 of 2 queries"):  # the one-document query
        data = D.load_ranking(str(path), named, n_features=5)
    np.testing.assert_array_equal(data.sizes, [1, 4])
    assert data.X.shape == (5, 5)


def test_group_sizes_must_sum_to_the_documents(tmp_path):
    path = _write(tmp_path, GROUPED)
    query = _write(tmp_path, "3\n3\n", "rank.svm.query")
    with pytest.raises(ValueError, match=r"rank\.svm\.query: the query sizes sum to 6 documents, "
                                         r"but .*rank\.svm has 5"):
        D.load_ranking(path)
    query.write_text("2\n")
    with pytest.raises(ValueError, match=r"sum to 2 documents, but .*has 5"):
        D.load_ranking(path)
    query.write_text("")
    with pytest.raises(ValueError, match=r"sum to 0 documents"):
        D.load_ranking(path)


@pytest.mark.parametrize("bad", ["0", "-2", "2.0", "a", "2 1", "٣"])
def test_group_file_line_that_is_not_a_size(tmp_path, bad):
    path = _write(tmp_path, GROUPED)
    _write(tmp_path, f"1\n\n{bad}\n4\n", "rank.svm.query")
    with pytest.raises(ValueError, match=rf"rank\.svm\.query: line 3: '{bad}' is not a query size"):
        D.load_ranking(path)


def test_load_ranking_refuses_files_without_queries_and_bad_arguments(tmp_path):
    path = _write(tmp_path, GROUPED)
    with pytest.raises(ValueError, match=r"rank\.svm: no queries.*rank\.svm\.query"):
        D.load_ranking(path)
    with pytest.raises(FileNotFoundError, match=r"query file not found: .*nope\.query"):
        D.load_ranking(path, tmp_path / "nope.query")
    with pytest.raises(TypeError, match="query_file"):
        D.load_ranking(path, 3)
    with pytest.raises(FileNotFoundError, match=r"LIBSVM file not found: .*nope\.svm"):
        D.load_ranking(tmp_path / "nope.svm")


def test_load_ranking_refuses_a_query_split_in_two_runs(tmp_path):
    path = _write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\n# c\n1 qid:2 1:1\n0 qid:1 1:3\n")
    with pytest.raises(ValueError, match=r"rank\.svm: line 5: query 1 starts again"):
        D.load_ranking(path)
    # load_libsvm reads it as it is (as scikit-learn does): the order is the caller's
    np.testing.assert_array_equal(D.load_libsvm(path, query_id=True)[2], [1, 1, 2, 1])


def test_qid_fields_and_a_group_file_must_agree(tmp_path):
    path = _write(tmp_path, QID_TEXT)
    query = _write(tmp_path, "3\n1\n2\n", "rank.svm.query")
    data = _quiet(D.load_ranking, path)
    np.testing.assert_array_equal(data.queries, [7, -2, 11])  # the qid: fields' ids are kept
    query.write_text("3\n2\n1\n")
    with pytest.raises(ValueError, match=r"rank\.svm\.query: query 2 has 2 documents, but the "
                                         r"qid: fields of .*rank\.svm give it 1 \(qid -2 from "
                                         r"line 6\)"):
        D.load_ranking(path)
    query.write_text("3\n3\n")  # fewer queries, the same total
    with pytest.raises(ValueError, match=r"query 2 has 3 documents.*give it 1"):
        D.load_ranking(path)


# --- the letor set -------------------------------------------------------------------------------

@needs_letor
def test_letor_train_shape_labels_queries_and_speed():
    start = time.perf_counter()
    with pytest.warns(QueryWarning, match="6 of 201 queries contribute no pair"):
        data = D.load_letor(data_dir=SHARED_LETOR)
    elapsed = time.perf_counter() - start
    assert isinstance(data, QueryData) and sp.isspmatrix_csr(data.X)
    assert data.X.shape == (3005, 300) and data.X.dtype == np.float64
    assert data.n_queries == 201 and int(data.sizes.sum()) == 3005
    np.testing.assert_array_equal(data.labels, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(np.bincount(data.y.astype(int)), TRAIN_LABEL_COUNTS)
    np.testing.assert_array_equal(data.queries, np.arange(201))
    sizes = np.loadtxt(SHARED_LETOR / "rank.train.query", dtype=np.int64)
    np.testing.assert_array_equal(data.sizes, sizes)
    assert data.n_pairs == 13543
    # About 0.1 s here (checksums included); the bound, far above, only catches a per-token
    # Python parser on a loaded CI machine.
    assert elapsed < 10.0, elapsed


@needs_letor
def test_letor_test_split_and_load_by_name():
    data = D.load("letor", SHARED_LETOR, split="test")
    assert data.X.shape == (768, 300) and data.n_queries == 50
    np.testing.assert_array_equal(np.bincount(data.y.astype(int)), [206, 256, 252, 44, 10])
    assert data.queries_without_pairs.size == 0
    train = _quiet(D.load, "letor", SHARED_LETOR)
    assert train.X.shape == (3005, 300)
    with pytest.raises(ValueError, match="split"):
        D.load_letor("valid", SHARED_LETOR)


@needs_letor
@pytest.mark.parametrize("split", ["train", "test"])
def test_letor_agrees_with_sklearn_and_the_group_file(split):
    sk = pytest.importorskip("sklearn.datasets")
    data = _quiet(D.load_letor, split, SHARED_LETOR)
    Xs, ys = sk.load_svmlight_file(str(SHARED_LETOR / f"rank.{split}"), n_features=300,
                                   dtype=np.float64)
    sizes = np.loadtxt(SHARED_LETOR / f"rank.{split}.query", dtype=np.int64)
    _assert_same_matrix(data.X, Xs)
    np.testing.assert_array_equal(data.y, ys)
    np.testing.assert_array_equal(data.qid, np.repeat(np.arange(sizes.size), sizes))


@needs_letor
def test_letor_with_qid_fields_matches_sklearn(tmp_path):
    # rank.train rewritten in the svmlight qid: convention: the same QueryData, and the same
    # (X, y, qid) as scikit-learn's reader
    sk = pytest.importorskip("sklearn.datasets")
    sizes = np.loadtxt(SHARED_LETOR / "rank.train.query", dtype=np.int64)
    qid = np.repeat(np.arange(sizes.size) * 10 + 5, sizes)
    lines = (SHARED_LETOR / "rank.train").read_text().splitlines()
    text = "".join(f"{line.split(' ', 1)[0]} qid:{q} {line.split(' ', 1)[1]}\n"
                   for line, q in zip(lines, qid))
    path = _write(tmp_path, text, "rank.train")
    X, y, q = D.load_libsvm(path, n_features=300, query_id=True)
    Xs, ys, qs = sk.load_svmlight_file(str(path), n_features=300, dtype=np.float64,
                                       query_id=True)
    _assert_same_matrix(X, Xs)
    np.testing.assert_array_equal(y, ys)
    np.testing.assert_array_equal(q, qs)
    np.testing.assert_array_equal(q, qid)
    data = _quiet(D.load_ranking, path, n_features=300)
    letor = _quiet(D.load_letor, data_dir=SHARED_LETOR)
    assert (data.X != letor.X).nnz == 0
    np.testing.assert_array_equal(data.y, letor.y)
    np.testing.assert_array_equal(data.ptr, letor.ptr)
    np.testing.assert_array_equal(data.queries, np.arange(201) * 10 + 5)


@needs_letor
def test_letor_default_folders_and_env_vars(monkeypatch, tmp_path):
    assert D.data_dir(collection="letor") == SHARED_LETOR
    assert _quiet(D.load_letor).n == 3005
    # $INFPUSH_CVX_DATA names a UCI folder: its sibling letor/ is used when it exists
    (tmp_path / "uci").mkdir()
    monkeypatch.setenv(D.ENV_VAR, str(tmp_path / "uci"))
    assert D.data_dir(collection="letor") == SHARED_LETOR
    (tmp_path / "letor").mkdir()
    assert D.data_dir(collection="letor") == tmp_path / "letor"
    # $INFPUSH_CVX_LETOR_DATA comes first
    monkeypatch.setenv(D.LETOR_ENV_VAR, str(tmp_path / "mine"))
    assert D.data_dir(collection="letor") == tmp_path / "mine"
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "mine" / "rank.train")):
        D.load_letor()


@needs_letor
@pytest.mark.parametrize("corrupt", ["rank.train", "rank.train.query"])
def test_letor_checksums_of_both_files(tmp_path, corrupt):
    for name in ("rank.train", "rank.train.query"):
        (tmp_path / name).write_bytes((SHARED_LETOR / name).read_bytes())
    raw = bytearray((tmp_path / corrupt).read_bytes())
    raw[0] = ord("7") if raw[0] != ord("7") else ord("8")
    (tmp_path / corrupt).write_bytes(bytes(raw))
    digest = D.DATASETS[corrupt.replace("rank", "letor")][1]
    with pytest.raises(ValueError, match=rf"{corrupt} has SHA-256 .* expected {digest}"):
        D.load_letor(data_dir=tmp_path)
    (tmp_path / "rank.train.query").unlink()  # the data file alone: its group file is missing
    (tmp_path / "rank.train").write_bytes((SHARED_LETOR / "rank.train").read_bytes())
    with pytest.raises(FileNotFoundError, match=r"looked for .*rank\.train\.query"):
        D.load_letor(data_dir=tmp_path)


def test_letor_missing_file_message_says_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as exc:
        D.load_letor(data_dir=tmp_path)
    msg = str(exc.value)
    assert str(tmp_path / "rank.train") in msg and D.LETOR_ENV_VAR in msg
    assert "LightGBM" in msg and "download=True" not in msg  # not downloadable


def test_an_installed_package_finds_no_letor_folder_beside_itself(monkeypatch, tmp_path):
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    (tmp_path / "lib" / "shared" / "data" / "letor").mkdir(parents=True)
    monkeypatch.setattr(D, "_PACKAGE_PARENT", site)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_DATA_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    assert D.data_dir(collection="letor") is None
    with pytest.raises(FileNotFoundError, match=D.LETOR_ENV_VAR):
        D.load_letor()
