"""The svmlight / LIBSVM text format: ``label [qid:N] index:value ...`` a line.

:func:`load_libsvm` reads a file into ``(X, y)`` (binary labels) or ``(X, y, qid)`` (graded
labels and the ``qid:`` field, as scikit-learn's ``load_svmlight_file(query_id=True)``);
:func:`load_ranking` reads a learning-to-rank file into a
:class:`~infpush_cvx.data.queries.QueryData`, its queries given by the ``qid:`` fields or by a
LightGBM group file (one integer a line, the documents of each consecutive query). The named
data sets that use them (a8a, the letor set) are in :mod:`.datasets`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._validation import check_int
from .labels import binary_labels
from .queries import QueryData

__all__ = ["load_libsvm", "load_ranking"]


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


def _text_lines(path: Path, what: str) -> list[str]:
    """The lines of the UTF-8 text file ``path`` (``what`` names it in the errors: a missing
    file is a FileNotFoundError, one that is not UTF-8 text a ValueError)."""
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:
        return path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file (UTF-8): {exc}") from None


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
    lines = _text_lines(path, "LIBSVM file")

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
    lines = _text_lines(query_file, "query file")
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
