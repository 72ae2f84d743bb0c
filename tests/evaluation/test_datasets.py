"""UCI loaders: shapes, labels, checksums, error messages, scaler. Never touches the network."""

import urllib.error
from pathlib import Path

import numpy as np
import pytest

from infpush_cvx import datasets as D

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uci"
needs_data = pytest.mark.skipif(not (SHARED / "spambase.data").is_file(),
                                reason="shared UCI data folder not present")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(D.ENV_VAR, raising=False)


def test_embedded_sums_match_shared_sums_file():
    sums = (SHARED / "SHA256SUMS")
    if not sums.is_file():
        pytest.skip("no shared SHA256SUMS")
    listed = dict(reversed(line.split()) for line in sums.read_text().splitlines() if line.strip())
    for fname, digest, _ in D.DATASETS.values():
        assert listed[fname] == digest


@needs_data
def test_ionosphere_shape_labels_dropped_constant_column():
    X, y = D.load_ionosphere(SHARED)
    assert X.shape == (351, 33) and y.shape == (351,)
    assert y.sum() == 225 and set(np.unique(y)) == {0, 1}
    raw = np.loadtxt(SHARED / "ionosphere.data", delimiter=",", usecols=range(34))
    assert np.all(raw[:, 1] == 0)
    np.testing.assert_array_equal(X, np.delete(raw, 1, axis=1))
    assert np.all(X.max(0) > X.min(0))  # no other constant column left


@needs_data
def test_spambase_shape_labels():
    X, y = D.load_spambase(SHARED)
    assert X.shape == (4601, 57) and y.sum() == 1813


@needs_data
def test_default_dir_and_env_var(monkeypatch, tmp_path):
    assert D.data_dir() == SHARED
    X, _ = D.load("ionosphere")
    assert X.shape == (351, 33)
    monkeypatch.setenv(D.ENV_VAR, str(tmp_path))
    assert D.data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        D.load_spambase()


def test_missing_file_message_says_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as exc:
        D.load_ionosphere(tmp_path)
    msg = str(exc.value)
    assert str(tmp_path / "ionosphere.data") in msg
    assert D.ENV_VAR in msg and "download=True" in msg


def test_checksum_mismatch_rejected(tmp_path):
    (tmp_path / "spambase.data").write_text("0,1\n")
    with pytest.raises(ValueError, match="SHA-256"):
        D.load_spambase(tmp_path)


def test_download_failure_is_clear(tmp_path, monkeypatch):
    def offline(*a, **k):
        raise urllib.error.URLError("network is unreachable")
    monkeypatch.setattr(D.urllib.request, "urlopen", offline)
    with pytest.raises(OSError, match="could not download .*archive.ics.uci.edu"):
        D.load_ionosphere(tmp_path, download=True)
    assert not any(tmp_path.iterdir())  # no partial file left behind


def test_bad_arguments():
    with pytest.raises(ValueError, match="name"):
        D.load("iris")
    with pytest.raises(TypeError, match="data_dir"):
        D.load_spambase(3)


def test_minmax_scaler_fitted_on_train_only():
    rng = np.random.default_rng(0)
    Xtr = rng.normal(size=(50, 4))
    Xtr[:, 2] = 7.0  # constant feature
    Xte = rng.normal(size=(20, 4)) * 3
    sc = D.MinMaxScaler01().fit(Xtr)
    Ztr = sc.transform(Xtr)
    np.testing.assert_allclose(Ztr.min(0), [0, 0, 0, 0])
    np.testing.assert_allclose(Ztr.max(0), [1, 1, 0, 1])
    Zte = sc.transform(Xte)
    span = np.where(np.ptp(Xtr, 0) > 0, np.ptp(Xtr, 0), 1)
    np.testing.assert_allclose(Zte, (Xte - Xtr.min(0)) / span)
    assert Zte.min() < 0 or Zte.max() > 1  # not refitted or clipped on the test data
    with pytest.raises(ValueError, match="X"):
        sc.transform(Xte[:, :3])
    with pytest.raises(ValueError, match="not fitted"):
        D.MinMaxScaler01().transform(Xte)
    with pytest.raises(ValueError, match="X"):
        D.MinMaxScaler01().fit(np.full((3, 2), np.nan))
