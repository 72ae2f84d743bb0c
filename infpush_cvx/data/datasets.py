"""Real data sets: UCI Ionosphere and Spambase (original comma-separated files), LIBSVM a8a,
and LightGBM's LambdaRank example (a small learning-to-rank set, "letor"), read by the svmlight
reader of :mod:`.svmlight` where they are in that format.

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

import numpy as np

from .._validation import check_choice, check_fitted_matrix, check_matrix
from ..files import atomic_open
from .queries import QueryData
from .svmlight import load_libsvm, load_ranking

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
