"""Catalog instances to and from .npz, checked by fingerprint."""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import catalog
from infpush_cvx.benchmarking.instances import load_instance, save_instance


@pytest.mark.parametrize("name", ["planted_s", "planted_sparse", "pairs_dense", "pairs_sparse_s"])
def test_round_trip_keeps_the_fingerprint(name, tmp_path):
    data = catalog.instance_data(name)
    path = save_instance(name, tmp_path)
    back = load_instance(path)
    assert type(back) is type(data)
    assert back.fingerprint() == data.fingerprint()
    assert back.is_sparse == data.is_sparse
    with np.load(path) as z:
        assert str(z["__fingerprint__"]) == data.fingerprint()


def test_tampered_file_is_refused(tmp_path):
    path = save_instance("planted_sparse", tmp_path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["Xp__csr_data"] = arrays["Xp__csr_data"] * 1.0000001
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="fingerprint"):
        load_instance(path)


def test_bad_names_and_paths(tmp_path):
    with pytest.raises(ValueError, match="unknown instance"):
        save_instance("nope", tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        load_instance(tmp_path / "missing.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="not an infpush-cvx instance"):
        load_instance(tmp_path / "other.npz")
    assert sp.issparse(load_instance(save_instance("planted_sparse", tmp_path)).Xp)
