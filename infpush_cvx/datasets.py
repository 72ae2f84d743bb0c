"""UCI Ionosphere and Spambase, read from their original comma-separated files.

The data are never stored in this repository. A loader looks for the file in, in order:

1. the ``data_dir`` argument,
2. the directory named by the environment variable ``INFPUSH_CVX_DATA``,
3. ``../shared/data/uci`` relative to the repository root (the project's shared data folder),
   when it exists.

Every file is checked against the SHA-256 sum embedded below before it is parsed. With
``download=True`` (off by default) a missing file is fetched from the UCI repository with urllib
into the data directory and checked the same way; offline, that fails with a clear message.

Labels follow Agarwal (SDM 2011, section 6): Ionosphere ``g`` ("good") is positive (225 of 351),
spam is positive (1813 of 4601); ``y`` is int {0, 1}. Ionosphere's second column is zero for every
instance and is dropped (33 features). Features are returned raw; scale them to [0, 1] with
:class:`MinMaxScaler01` fitted on the training split only.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from ._validation import check_matrix

__all__ = ["load_ionosphere", "load_spambase", "load", "data_dir", "MinMaxScaler01", "DATASETS"]

ENV_VAR = "INFPUSH_CVX_DATA"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"

#: name -> (file name, sha256 of the original UCI file, download URL)
DATASETS = {
    "ionosphere": ("ionosphere.data",
                   "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd",
                   f"{_UCI}/ionosphere/ionosphere.data"),
    "spambase": ("spambase.data",
                 "1855d678d9019f325b7bcd6f6a4c9baedac6f291aa9cad59e5f79a25f1988372",
                 f"{_UCI}/spambase/spambase.data"),
}

_HOW = (f"Provide the original UCI file by passing data_dir=..., by setting the environment "
        f"variable {ENV_VAR} to the folder that holds it, or by calling the loader with "
        f"download=True when online.")


def _default_shared_dir() -> Path:
    # repository root = parent of the package folder
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "uci"


def data_dir(path=None) -> Path | None:
    """The folder a loader reads from: ``path``, else ``$INFPUSH_CVX_DATA``, else the shared folder.

    Returns None when no argument, no environment variable and no shared folder exist.
    """
    if path is not None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"data_dir must be a str or path, got {type(path).__name__}")
        return Path(path)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    shared = _default_shared_dir()
    return shared if shared.is_dir() else None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(url: str, target: Path, timeout: float) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
            out.write(resp.read())
    except (urllib.error.URLError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(f"could not download {url} to {target} (is this machine offline?): {exc}. "
                      f"{_HOW}") from exc
    tmp.replace(target)


def _locate(name: str, data_dir_arg, download: bool, timeout: float) -> Path:
    fname, digest, url = DATASETS[name]
    folder = data_dir(data_dir_arg)
    if folder is None:
        looked = (f"no data_dir argument, {ENV_VAR} unset, and the shared folder "
                  f"{_default_shared_dir()} does not exist")
        if download:
            raise OSError(f"cannot download {name}: {looked}; pass data_dir= to choose where to "
                          f"store it.")
        raise FileNotFoundError(f"{name} data not found: {looked}. {_HOW}")
    path = folder / fname
    if not path.is_file():
        if not download:
            raise FileNotFoundError(f"{name} data not found: looked for {path}. {_HOW}")
        _download(url, path, timeout)
    got = _sha256(path)
    if got != digest:
        raise ValueError(f"{path} has SHA-256 {got}, expected {digest} (the original UCI file); "
                         f"the file is corrupt or not the original {name} data.")
    return path


def _read_csv(path: Path, n_cols: int):
    rows = path.read_text().strip().splitlines()
    cells = [r.split(",") for r in rows if r.strip()]
    bad = [i for i, c in enumerate(cells) if len(c) != n_cols]
    if bad:
        raise ValueError(f"{path}: line {bad[0] + 1} has {len(cells[bad[0]])} fields, "
                         f"expected {n_cols}")
    return cells


def load_ionosphere(data_dir=None, *, download: bool = False, timeout: float = 30.0):
    """UCI Ionosphere: ``X`` (351 x 33 float64), ``y`` (int {0, 1}, 1 = ``g``, 225 positives).

    The constant second column (index 1, zero for every instance) is dropped, as in Agarwal 2011.
    """
    path = _locate("ionosphere", data_dir, download, timeout)
    cells = _read_csv(path, 35)
    X = np.array([[float(v) for v in c[:34]] for c in cells])
    labels = np.array([c[34].strip() for c in cells])
    if not set(labels) <= {"g", "b"}:
        raise ValueError(f"{path}: unexpected labels {sorted(set(labels) - {'g', 'b'})}")
    X = np.delete(X, 1, axis=1)
    return X, (labels == "g").astype(np.int64)


def load_spambase(data_dir=None, *, download: bool = False, timeout: float = 30.0):
    """UCI Spambase: ``X`` (4601 x 57 float64), ``y`` (int {0, 1}, 1 = spam, 1813 positives)."""
    path = _locate("spambase", data_dir, download, timeout)
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)
    if data.ndim != 2 or data.shape[1] != 58:
        raise ValueError(f"{path}: expected 58 comma-separated columns, got shape {data.shape}")
    y = data[:, 57]
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(f"{path}: the last column must be the 0/1 spam label")
    return data[:, :57].copy(), y.astype(np.int64)


def load(name: str, data_dir=None, **kwargs):
    """``load("ionosphere")`` or ``load("spambase")``: the matching loader."""
    loaders = {"ionosphere": load_ionosphere, "spambase": load_spambase}
    if name not in loaders:
        raise ValueError(f"unknown name {name!r}; expected one of {sorted(loaders)}")
    return loaders[name](data_dir, **kwargs)


class MinMaxScaler01:
    """Per-feature affine map to [0, 1] on the data it was fitted on: ``(x - min) / (max - min)``.

    Fit on the training split only; test data may fall outside [0, 1] and are not clipped.
    A constant feature maps to 0. (The same map as sklearn's ``MinMaxScaler``, without the
    dependency.)
    """

    def fit(self, X):
        X = check_matrix(X, "X", allow_sparse=False)
        self.data_min_ = X.min(axis=0)
        rng = X.max(axis=0) - self.data_min_
        self.scale_ = np.where(rng > 0, rng, 1.0)
        return self

    def transform(self, X):
        if not hasattr(self, "scale_"):
            raise ValueError("MinMaxScaler01 is not fitted; call fit(X_train) first")
        X = check_matrix(X, "X", allow_sparse=False)
        if X.shape[1] != self.scale_.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features, the scaler was fitted on "
                             f"{self.scale_.shape[0]}")
        return (X - self.data_min_) / self.scale_

    def fit_transform(self, X):
        return self.fit(X).transform(X)
