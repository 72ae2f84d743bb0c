"""Real data sets: UCI Ionosphere and Spambase (original comma-separated files), LIBSVM a8a,
and LightGBM's LambdaRank example (a small learning-to-rank set, "letor"); the svmlight reader.

The data are never stored in this repository, nor in the installed package. A loader looks for
the file in, in order:

1. the ``data_dir`` argument;
2. for the UCI sets, the folder named by the environment variable ``INFPUSH_CVX_DATA``; for the
   LIBSVM sets, the folder named by ``INFPUSH_CVX_LIBSVM_DATA`` (the letor set:
   ``INFPUSH_CVX_LETOR_DATA``), else the folder ``libsvm/`` (``letor/``) beside the UCI folder
   found by these rules (when it exists);
3. in a source checkout only (the package's parent folder holds the project's
   ``pyproject.toml``), a ``shared/data/uci``, ``shared/data/libsvm`` or ``shared/data/letor``
   folder beside the checkout, when it exists: the layout the project's tests use;
4. the user data folder (:func:`user_data_dir`): ``$XDG_DATA_HOME/infpush_cvx`` (default
   ``~/.local/share/infpush_cvx``) on Linux and other POSIX systems,
   ``~/Library/Application Support/infpush_cvx`` on macOS, ``%LOCALAPPDATA%\\infpush_cvx`` on
   Windows, with the UCI files in its ``uci/`` folder, the LIBSVM files in ``libsvm/`` and the
   letor files in ``letor/``, when it exists.

An installed package (a wheel in site-packages) never looks beside itself. A file that is not
found raises FileNotFoundError saying where it looked and how to provide it.

Every file is checked against the SHA-256 sum embedded below before it is parsed. With
``download=True`` (off by default) a missing file is fetched from its home (the UCI repository,
the LIBSVM data collection) with urllib into the data directory (the user data folder, created,
when no other is found) and checked the same way; offline, that fails with a clear message. The
letor files are not downloaded (copy them from LightGBM's ``examples/lambdarank`` folder).

Labels follow [Agarwal2011], section 6 (docs/references.md; docs/mathematics.md, section 7.1):
Ionosphere ``g`` ("good") is positive (225 of 351), spam is positive (1813 of 4601); ``y`` is int
{0, 1}. Ionosphere's second column is zero for every instance and is dropped (33 features).
Features are returned raw; scale them to [0, 1] with :class:`MinMaxScaler01` fitted on the
training split only.

a8a (LIBSVM binary collection, from the UCI Adult census data) is read by :func:`load_libsvm`
into a sparse CSR matrix: 22,696 rows, 123 binary features, ``+1`` (5,506 rows) is positive.

Learning-to-rank files (graded labels, documents grouped by query) are read into a
:class:`~infpush_cvx.data.queries.QueryData` by :func:`load_ranking`: the queries given by the
svmlight ``qid:`` field or by a LightGBM group file; :func:`load_letor` reads the letor set so.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

import re

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_fitted_matrix, check_int, check_matrix
from ..files import atomic_open
from .labels import binary_labels
from .queries import QueryData

__all__ = ["load_ionosphere", "load_spambase", "load_a8a", "load_letor", "load_libsvm",
           "load_ranking", "load", "data_dir", "user_data_dir", "MinMaxScaler01", "DATASETS",
           "COLLECTIONS"]

ENV_VAR = "INFPUSH_CVX_DATA"
LIBSVM_ENV_VAR = "INFPUSH_CVX_LIBSVM_DATA"
LETOR_ENV_VAR = "INFPUSH_CVX_LETOR_DATA"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"

#: name -> (file name, sha256 of the original file, download URL or None: not downloaded)
DATASETS = {
    "ionosphere": ("ionosphere.data",
                   "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd",
                   f"{_UCI}/ionosphere/ionosphere.data"),
    "spambase": ("spambase.data",
                 "1855d678d9019f325b7bcd6f6a4c9baedac6f291aa9cad59e5f79a25f1988372",
                 f"{_UCI}/spambase/spambase.data"),
    "a8a": ("a8a",
            "d08a37b3fadd4bd3c8b3fc30bdc93b54d7c0f371265c90cbfb931a7efe97cd28",
            f"{_LIBSVM}/a8a"),
    # LightGBM's LambdaRank example (examples/lambdarank), with its group files
    "letor.train": ("rank.train",
                    "a0c7201c89120879c14a5059e091f441cbf2a29b8aaef363885ccb1a530448df", None),
    "letor.train.query": ("rank.train.query",
                          "40cb5fef637229311cd30fab13cb7fb633b023e86a87ff04ec55db420143d6af",
                          None),
    "letor.test": ("rank.test",
                   "3b1219ce117a0a36d2f76c02de7e7831c1d79af0d40f5195c03178bbe26c824b", None),
    "letor.test.query": ("rank.test.query",
                         "36dca82ba3bf99201bac3987b00a8fbf6fe5f563e9fa6d0da90e783710a32df4",
                         None),
}

#: name -> the collection (data folder) it belongs to: "uci", "libsvm" or "letor"
COLLECTIONS = {"ionosphere": "uci", "spambase": "uci", "a8a": "libsvm", "letor.train": "letor",
               "letor.train.query": "letor", "letor.test": "letor", "letor.test.query": "letor"}
#: collection -> the name of its source in messages
_SOURCES = {"uci": "UCI", "libsvm": "LIBSVM",
            "letor": "LightGBM (examples/lambdarank of github.com/microsoft/LightGBM)"}
#: collection -> the environment variable naming its folder
_ENV_VARS = {"uci": ENV_VAR, "libsvm": LIBSVM_ENV_VAR, "letor": LETOR_ENV_VAR}


def _how(collection: str) -> str:
    """How to provide a missing file of ``collection`` (the end of every not-found message)."""
    env = f"setting the environment variable {_ENV_VARS[collection]} to the folder that holds it"
    if collection != "uci":
        env += f" (or {ENV_VAR} to a UCI folder with a {collection}/ folder beside it)"
    ways = ["by passing data_dir=...", f"by {env}",
            f"by putting it in the user data folder {user_data_dir() / collection}"]
    if any(url for name, (_, _, url) in DATASETS.items() if COLLECTIONS[name] == collection):
        ways.append("by calling the loader with download=True when online (it is then stored in "
                    "that folder)")
    return (f"Provide the original {_SOURCES[collection]} file {', '.join(ways[:-1])}, or "
            f"{ways[-1]}.")


#: The folder holding this package's folder: a source checkout's root, or site-packages.
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def _checkout_shared_dir(collection: str) -> Path | None:
    """``<checkout>/../shared/data/<collection>`` when this package runs from a source checkout
    (its parent folder holds the project's pyproject.toml); None for an installed package, which
    must never read data from beside itself (inside site-packages)."""
    project = _PACKAGE_PARENT / "pyproject.toml"
    if _PACKAGE_PARENT.name in ("site-packages", "dist-packages") or not project.is_file():
        return None
    try:
        is_ours = 'name = "infpush_cvx"' in project.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _PACKAGE_PARENT.parent / "shared" / "data" / collection if is_ours else None


def user_data_dir() -> Path:
    """The user data folder of infpush_cvx (not created here): the UCI files go in its ``uci/``
    folder, the LIBSVM files in ``libsvm/``, the letor files in ``letor/``.

    ``$XDG_DATA_HOME/infpush_cvx`` (XDG Base Directory specification; an unset, empty or
    relative ``XDG_DATA_HOME`` means ``~/.local/share``) on Linux and other POSIX systems,
    ``~/Library/Application Support/infpush_cvx`` on macOS, ``%LOCALAPPDATA%\\infpush_cvx``
    (default ``~/AppData/Local``) on Windows.
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Application Support")
    else:
        base = os.environ.get("XDG_DATA_HOME", "")
        if not os.path.isabs(base):  # the specification: a relative path is ignored
            base = str(Path.home() / ".local" / "share")
    return Path(base) / "infpush_cvx"


def data_dir(path=None, *, collection: str = "uci") -> Path | None:
    """The folder a loader of ``collection`` ("uci", "libsvm" or "letor") reads from (module
    docstring).

    ``uci``: ``path``, else ``$INFPUSH_CVX_DATA``, else (source checkout only) a
    ``shared/data/uci`` folder beside the checkout, else the ``uci/`` folder of
    :func:`user_data_dir`, the last two when they exist.
    ``libsvm``: ``path``, else ``$INFPUSH_CVX_LIBSVM_DATA``, else the folder ``libsvm/`` beside
    the UCI folder, else (source checkout only) ``shared/data/libsvm`` beside the checkout, else
    the ``libsvm/`` folder of :func:`user_data_dir`, the last three when they exist.
    ``letor``: the same with ``$INFPUSH_CVX_LETOR_DATA`` and the folders named ``letor/``.

    Returns None when none of these is given or exists.
    """
    check_choice(collection, "collection", _ENV_VARS)
    if path is not None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"data_dir must be a str or path, got {type(path).__name__}")
        return Path(path)
    env = os.environ.get(_ENV_VARS[collection])
    if env:
        return Path(env)
    candidates = [_checkout_shared_dir(collection), user_data_dir() / collection]
    if collection != "uci":
        uci = data_dir(collection="uci")
        candidates.insert(0, None if uci is None else uci.parent / collection)
    return next((c for c in candidates if c is not None and c.is_dir()), None)


def _download(url: str, target: Path, timeout: float, how: str) -> None:
    try:  # the project's one atomic writer: a failed download leaves nothing behind
        target.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=timeout) as resp, \
                atomic_open(target, "wb") as out:
            out.write(resp.read())
    except (urllib.error.URLError, OSError) as exc:
        raise OSError(f"could not download {url} to {target} (is this machine offline?): {exc}. "
                      f"{how}") from exc


def _locate(name: str, data_dir_arg, download: bool, timeout: float) -> Path:
    fname, digest, url = DATASETS[name]
    collection = COLLECTIONS[name]
    how = _how(collection)
    folder = data_dir(data_dir_arg, collection=collection)
    if folder is None:
        if download:
            folder = user_data_dir() / collection
        else:
            env = ENV_VAR if collection == "uci" else f"{_ENV_VARS[collection]} and {ENV_VAR}"
            raise FileNotFoundError(f"{name} data not found: no data_dir argument, {env} unset, "
                                    f"and no data folder exists ({user_data_dir() / collection} "
                                    f"or a checkout's shared/data/{collection}). {how}")
    path = folder / fname
    if not path.is_file():
        if not download or url is None:
            raise FileNotFoundError(f"{name} data not found: looked for {path}. {how}")
        _download(url, path, timeout, how)
    with open(path, "rb") as fh:
        got = hashlib.file_digest(fh, "sha256").hexdigest()
    if got != digest:
        raise ValueError(f"{path} has SHA-256 {got}, expected {digest} (the original "
                         f"{_SOURCES[collection]} file); the file is corrupt or not the original "
                         f"{name} data.")
    return path


def load_ionosphere(data_dir=None, *, download: bool = False, timeout: float = 30.0):
    """UCI Ionosphere: ``X`` (351 x 33 float64), ``y`` (int {0, 1}, 1 = ``g``, 225 positives).

    The constant second column (index 1, zero for every instance) is dropped, as in Agarwal 2011.
    The file's layout needs no check: its SHA-256 says it is the original (34 numbers and the
    label ``g`` or ``b`` a line), as for every loader here.
    """
    path = _locate("ionosphere", data_dir, download, timeout)
    X = np.delete(np.loadtxt(path, delimiter=",", usecols=range(34)), 1, axis=1)
    labels = np.loadtxt(path, delimiter=",", usecols=34, dtype=str)
    return X, (labels == "g").astype(np.int64)


def load_spambase(data_dir=None, *, download: bool = False, timeout: float = 30.0):
    """UCI Spambase: ``X`` (4601 x 57 float64), ``y`` (int {0, 1}, 1 = spam, 1813 positives)."""
    path = _locate("spambase", data_dir, download, timeout)
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)  # (57 features, then the label)
    return data[:, :57].copy(), data[:, 57].astype(np.int64)


#: One well-formed ``index:value`` token after another, each followed by one space.
_PAIRS = re.compile(r"(?:[0-9]+:[^\s:]+ )*+")
#: One well-formed query id (the text after ``qid:``) after another, each followed by one space.
_QIDS = re.compile(r"(?:[+-]?[0-9]+ )*+")
_INT64 = np.iinfo(np.int64)


def _number(text: str) -> float | None:
    """``float(text)`` when that is a finite number, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _query_id(text: str) -> int | None:
    """``int(text)`` when ``text`` is an integer (ASCII digits, optional sign) within int64."""
    if re.fullmatch(r"[+-]?[0-9]+", text) is None:
        return None
    value = int(text)
    return value if _INT64.min <= value <= _INT64.max else None


def _malformed(path: Path, lines) -> ValueError:
    """The ValueError naming the first malformed line of a LIBSVM file (slow, exact pass)."""
    for k, line in enumerate(lines, start=1):
        toks = line.partition("#")[0].split()
        if toks and _number(toks[0]) is None:
            return ValueError(f"{path}: line {k}: malformed label {toks[0]!r} (expected a number "
                              f"first, then index:value pairs)")
        features = toks[1:]
        if features and features[0].startswith("qid:"):
            if _query_id(features[0][4:]) is None:
                return ValueError(f"{path}: line {k}: malformed query id {features[0]!r} "
                                  f"(expected qid:<integer> after the label)")
            features = features[1:]
        for tok in features:
            idx, colon, val = tok.partition(":")
            if not colon or not idx.isdigit() or not idx.isascii():
                why = "expected index:value with a nonnegative integer index"
            elif _number(val) is None:
                why = "the value is not a finite number"
            else:
                continue
            return ValueError(f"{path}: line {k}: malformed token {tok!r} ({why})")
    return ValueError(f"{path}: malformed LIBSVM data")  # not reached for parseable files


def _binary_labels(path: Path, labels: np.ndarray) -> np.ndarray:
    """File labels as int64 {0, 1} under the binary-label contract (:mod:`infpush_cvx.data.labels`):
    the greater of two labels is positive (+1 of +1/-1, 1 of 1/0, 2 of 1/2); a file holding one
    label may use 1 (positive) or 0 / -1 (negative)."""
    try:
        positive = binary_labels(labels, "labels", require_both=False).positive
    except ValueError:
        found = np.unique(labels)
        shown = ", ".join(f"{v:g}" for v in found[:10]) + (", ..." if found.size > 10 else "")
        raise ValueError(f"{path}: labels must be binary: two integer labels, the greater one "
                         f"positive (+1/-1, 1/0, 1/2), or one label 1, 0 or -1; found the labels "
                         f"{{{shown}}}") from None
    return positive.astype(np.int64)


def _mixed_query_ids(path: Path, line_of_row: list, qid_lines: list) -> ValueError:
    """The ValueError naming the first line that breaks "a ``qid:`` field on every line or on
    none", given the lines of the rows and those of the rows with a ``qid:`` field."""
    first = line_of_row[0]
    if qid_lines[0] == first:  # the first row has one: name the first row without
        k = int(np.setdiff1d(line_of_row, qid_lines)[0])
        what = f"no qid: field, while line {first} has one"
    else:
        k = qid_lines[0]
        what = f"a qid: field, while line {first} has none"
    return ValueError(f"{path}: line {k}: {what} (the qid: field must be on every line or on "
                      f"none)")


def _read_svmlight(path, n_features, zero_based):
    """Parse an svmlight / LIBSVM file: ``(X, labels, qid, line_of_row)``, ``labels`` float64 as
    read, ``qid`` int64 (None when no line has a ``qid:`` field), ``line_of_row`` the line number
    of each row (for messages). The format and the errors: :func:`load_libsvm`."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path, got {type(path).__name__}")
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        n_features = check_int(n_features, "n_features", minimum=1)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"LIBSVM file not found: {path}")
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file (UTF-8): {exc}") from None

    labels, qids, qid_lines, tokens, counts, line_of_row = [], [], [], [], [], []
    for k, line in enumerate(lines, start=1):
        toks = line.partition("#")[0].split()
        if not toks:
            continue
        labels.append(toks[0])
        first = 1
        if len(toks) > 1 and toks[1].startswith("qid:"):  # svmlight: the query, after the label
            qids.append(toks[1][4:])
            qid_lines.append(k)
            first = 2
        tokens += toks[first:]
        counts.append(len(toks) - first)
        line_of_row.append(k)
    if not labels:
        raise ValueError(f"{path}: no data lines (only blank lines or comments)")
    joined = " ".join(tokens)
    fields = joined.replace(":", " ").split()
    try:
        if _PAIRS.fullmatch(joined + " " if tokens else "") is None:
            raise ValueError
        if _QIDS.fullmatch(" ".join(qids) + " " if qids else "") is None:
            raise ValueError
        y_raw = np.array(labels, dtype=np.float64)
        qid = np.array(qids, dtype=np.int64) if qids else None
        cols = np.array(fields[0::2], dtype=np.int64)
        vals = np.array(fields[1::2], dtype=np.float64)
        if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(y_raw))):
            raise ValueError
    except (ValueError, OverflowError):
        raise _malformed(path, lines) from None
    if qids and len(qids) < len(labels):
        raise _mixed_query_ids(path, line_of_row, qid_lines)

    counts = np.array(counts, dtype=np.int64)
    rows = np.repeat(np.arange(counts.size), counts)
    line_of_row = np.array(line_of_row, dtype=np.int64)
    if zero_based == "auto":
        zero_based = bool(cols.size and cols.min() == 0)
    base = 0 if zero_based else 1  # the file's first index
    if not zero_based:
        if cols.size and cols.min() == 0:
            k = line_of_row[rows[np.argmax(cols == 0)]]
            raise ValueError(f"{path}: line {k}: feature index 0 in a one-based file "
                             f"(zero_based=False)")
        cols = cols - 1
    needed = int(cols.max()) + 1 if cols.size else 0
    if n_features is None:
        n_features = needed
    elif needed > n_features:
        bad = np.argmax(cols >= n_features)
        raise ValueError(f"{path}: line {line_of_row[rows[bad]]}: feature index "
                         f"{cols[bad] + base} is beyond n_features={n_features} "
                         f"({('zero', 'one')[base]}-based)")
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    repeated = (rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])
    if np.any(repeated):
        r = np.argmax(repeated)
        raise ValueError(f"{path}: line {line_of_row[rows[r]]}: feature index {cols[r] + base} "
                         f"appears twice")
    indptr = np.concatenate([[0], np.cumsum(counts)])
    X = sp.csr_matrix((vals, cols, indptr), shape=(counts.size, n_features))
    X.eliminate_zeros()
    return X, y_raw, qid, line_of_row


def load_libsvm(path, *, n_features: int | None = None, zero_based="auto",
                query_id: bool = False):
    """Read a file in svmlight / LIBSVM format into ``(X, y)``, or ``(X, y, qid)``.

    Each line is ``label [qid:N] index:value index:value ...``; text after ``#`` is a comment
    and blank lines are skipped. ``X`` is a ``scipy.sparse.csr_matrix`` of float64 in canonical
    form (sorted indices, no explicit zeros) with ``n_features`` columns (default: the largest
    index seen).

    ``query_id=False``: returns ``(X, y)`` with ``y`` int64 {0, 1}: the labels must be binary,
    the greater one positive (+1 of +1/-1, 1 of 1/0, 2 of 1/2; see
    :mod:`infpush_cvx.data.labels`); more than two labels, or non-integer ones, are a ValueError.
    A ``qid:`` field is read and dropped.

    ``query_id=True``: returns ``(X, y, qid)`` as scikit-learn's
    ``load_svmlight_file(query_id=True)`` does: ``y`` the labels as read (float64, graded: any
    finite numbers), ``qid`` the int64 query ids of the svmlight ``qid:`` field (Joachims,
    SVMrank), in file order. A file without ``qid:`` fields is a ValueError here (scikit-learn
    returns an empty ``qid``); queries given by a group file are read by :func:`load_ranking`.

    The ``qid:N`` field comes right after the label, ``N`` an integer; it is on every line or on
    none (a ValueError naming the first line that breaks this).

    ``zero_based``: True (indices start at 0), False (at 1, the LIBSVM convention) or "auto"
    (zero-based when some index is 0, else one-based, as scikit-learn decides). Indices within
    a line may come in any order; a repeated index is an error.

    A malformed token (or query id) raises ValueError with the file name and the line number; a
    missing file FileNotFoundError with its path. The parse is vectorised (one pass of Python
    over the lines, NumPy over the tokens): a8a (22,696 rows) takes about 0.2 s.
    """
    if not isinstance(query_id, (bool, np.bool_)):
        raise TypeError(f"query_id must be True or False, got {type(query_id).__name__}")
    X, labels, qid, _ = _read_svmlight(path, n_features, zero_based)
    if not query_id:
        return X, _binary_labels(path, labels)
    if qid is None:
        raise ValueError(f"{path}: no qid: field on any line (query_id=True); a file whose "
                         f"queries are given by a group file is read by load_ranking(path, "
                         f"query_file)")
    return X, labels, qid


def _group_sizes(query_file: Path, n_rows: int, path: Path) -> np.ndarray:
    """The query sizes of a LightGBM group file (one positive integer a line, the number of
    consecutive documents of each query; blank lines skipped), which must sum to ``n_rows``,
    the rows of the data file ``path``."""
    if not query_file.is_file():
        raise FileNotFoundError(f"query file not found: {query_file}")
    try:
        lines = query_file.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{query_file}: not a text file (UTF-8): {exc}") from None
    sizes = []
    for k, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if not (text.isascii() and text.isdigit()) or int(text) == 0:
            raise ValueError(f"{query_file}: line {k}: {text!r} is not a query size (one "
                             f"positive integer a line: the documents of each query)")
        sizes.append(int(text))
    if sum(sizes) != n_rows:
        raise ValueError(f"{query_file}: the query sizes sum to {sum(sizes)} documents, but "
                         f"{path} has {n_rows}")
    return np.array(sizes, dtype=np.int64)


def load_ranking(path, query_file=None, *, n_features: int | None = None,
                 zero_based="auto") -> QueryData:
    """Read a learning-to-rank file in svmlight format into a :class:`QueryData`.

    The labels are read as they are (graded relevance, float64) and ``X`` as by
    :func:`load_libsvm` (sparse CSR; ``n_features`` and ``zero_based`` as there). The queries
    come from either convention:

    - the svmlight ``qid:N`` field of every line (Joachims, SVMrank): the query ids as read;
    - a group file (LightGBM's convention): one positive integer a line, the number of
      consecutive documents of each query, in order; the query ids are then 0, 1, 2, ...
      ``query_file`` names it; by default ``path + ".query"`` is used when it exists.

    When the file has ``qid:`` fields and a group file is found too, the two must agree (the
    sizes are the runs of equal ``qid``); the ids of the ``qid:`` fields are kept.

    Errors (ValueError, naming the file and the line where there is one): a file with neither;
    group sizes that do not sum to the documents (the message gives both counts); a size that is
    not a positive integer; a query whose documents are not consecutive; the svmlight errors of
    :func:`load_libsvm`. A query without pairs (one label) is named in a ``QueryWarning``.
    """
    X, labels, qid, line_of_row = _read_svmlight(path, n_features, zero_based)
    path = Path(path)
    if query_file is None:
        default = path.with_name(path.name + ".query")
        query_file = default if default.is_file() else None
    elif not isinstance(query_file, (str, os.PathLike)):
        raise TypeError(f"query_file must be a str or path, got {type(query_file).__name__}")
    n = X.shape[0]
    if query_file is not None:
        query_file = Path(query_file)
        sizes = _group_sizes(query_file, n, path)
    elif qid is None:
        raise ValueError(f"{path}: no queries: no line has a qid: field and there is no query "
                         f"file (looked for {path}.query; pass query_file=...)")
    if qid is None:
        qid = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])  # the runs of one query id
    ids = qid[starts]
    _, first = np.unique(ids, return_index=True)
    if first.size < ids.size:
        again = np.ones(ids.size, dtype=bool)
        again[first] = False
        r = int(np.argmax(again))
        raise ValueError(f"{path}: line {line_of_row[starts[r]]}: query {ids[r]} starts again "
                         f"after other queries (the documents of a query must be consecutive)")
    if query_file is not None:
        runs = np.diff(np.r_[starts, n])
        m = min(runs.size, sizes.size)
        if runs.size != sizes.size or np.any(runs != sizes):
            # both sum to n, so they differ within the first m queries
            k = int(np.argmax(runs[:m] != sizes[:m]))
            raise ValueError(f"{query_file}: query {k + 1} has {sizes[k]} documents, but the "
                             f"qid: fields of {path} give it {runs[k]} (qid {ids[k]} from line "
                             f"{line_of_row[starts[k]]}); the two must agree")
    return QueryData(X, labels, qid)


def load_a8a(data_dir=None, *, download: bool = False, timeout: float = 30.0):
    """LIBSVM a8a: ``X`` (22,696 x 123 sparse CSR float64, binary features), ``y`` (int {0, 1},
    1 = ``+1``, income above 50K, 5,506 positives).

    Read from the LIBSVM data folder (see :func:`data_dir` with ``collection="libsvm"``) after its
    SHA-256 check.
    """
    path = _locate("a8a", data_dir, download, timeout)
    return load_libsvm(path, n_features=123, zero_based=False)


def load_letor(split: str = "train", data_dir=None) -> QueryData:
    """LightGBM's LambdaRank example: a small learning-to-rank set, as a :class:`QueryData`.

    - ``split="train"`` (``rank.train``): 3,005 documents in 201 queries (1 to 27 documents
      each), labels 0 to 4 held by 645, 1,211, 858, 222 and 69 documents; 13,543 pairs
      ``y_i > y_j`` within a query; 6 queries have no pair (they are named in a QueryWarning).
    - ``split="test"`` (``rank.test``): 768 documents in 50 queries (6 to 24 each), labels 0 to 4
      held by 206, 256, 252, 44 and 10 documents; 3,599 pairs.

    ``X`` is sparse CSR float64 with 300 features (about 32% nonzero, values in [0, 1]); ``y``
    the labels (float64); the query ids are 0, 1, 2, ... in file order.

    Read from the letor data folder (see :func:`data_dir` with ``collection="letor"``): the
    svmlight file ``rank.<split>`` (labels and one-based features, no ``qid:`` field) and its
    group file ``rank.<split>.query`` (documents per query), both after their SHA-256 check,
    by :func:`load_ranking` with ``n_features=300``. The files are not downloaded: they are
    in LightGBM's ``examples/lambdarank`` folder (MIT licence).
    """
    check_choice(split, "split", ("train", "test"))
    path = _locate(f"letor.{split}", data_dir, False, 0.0)
    query_file = _locate(f"letor.{split}.query", data_dir, False, 0.0)
    return load_ranking(path, query_file, n_features=300, zero_based=False)


def load(name: str, data_dir=None, **kwargs):
    """``load("ionosphere")``, ``load("spambase")``, ``load("a8a")`` or ``load("letor")`` (with
    ``split="test"`` for its test part): the matching loader."""
    loaders = {"ionosphere": load_ionosphere, "spambase": load_spambase, "a8a": load_a8a,
               "letor": lambda folder, **kw: load_letor(data_dir=folder, **kw)}
    return loaders[check_choice(name, "name", loaders)](data_dir, **kwargs)


class MinMaxScaler01:
    """Per-feature affine map to [0, 1] on the data it was fitted on: ``(x - min) / (max - min)``.

    Fit on the training split only; test data may fall outside [0, 1] and are not clipped.
    A constant feature maps to 0. (The same map as sklearn's ``MinMaxScaler``, without the
    dependency.) Safe at the ends of the float range: where ``max - min`` or ``x - min``
    overflows (features spanning -1e308 to 1e308), both are halved first, which is exact.

    Attributes: ``data_min_``, ``data_max_`` and ``scale_`` (``max - min``, 1 for a constant
    feature; ``inf`` when the range exceeds the largest float).
    """

    def fit(self, X):
        X = check_matrix(X, "X", allow_sparse=False)
        self.data_min_ = X.min(axis=0)
        self.data_max_ = X.max(axis=0)
        # halving is exact (for normal numbers) and keeps the difference within the float range
        self._half_range = self.data_max_ / 2 - self.data_min_ / 2
        with np.errstate(over="ignore"):
            rng = self.data_max_ - self.data_min_
        self.scale_ = np.where(rng > 0, rng, 1.0)
        return self

    def transform(self, X):
        X = check_fitted_matrix(self, X, "scale_", "fit(X_train)")
        with np.errstate(over="ignore"):
            shifted = X - self.data_min_  # an overflow here is repaired below
        with np.errstate(invalid="ignore"):
            out = shifted / self.scale_  # inf / inf: likewise
        overflowed = np.isinf(shifted) | np.isinf(self.scale_)
        if np.any(overflowed):
            half_shifted = X / 2 - self.data_min_ / 2
            half_scale = np.where(np.isinf(self.scale_), self._half_range, self.scale_ / 2)
            out = np.where(overflowed, half_shifted / half_scale, out)
        return out

    def fit_transform(self, X):
        return self.fit(X).transform(X)
