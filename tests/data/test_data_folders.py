"""Issue 27, item 8: where an installed package finds its data. ``INFPUSH_CVX_DATA`` or the user
data folder (``$XDG_DATA_HOME/infpush_cvx``, ``~/.local/share/infpush_cvx``...), never a folder
beside the package (inside site-packages); a source checkout keeps its ``../shared/data``.
Never touches the network."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infpush_cvx.data import datasets as D

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not (SHARED / "uci" / "ionosphere.data").is_file(),
                                reason="shared UCI data folder not present")


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """The package as a wheel installs it: its parent folder is site-packages, with a
    ``site-packages/../shared/data/uci`` holding the data (the old fallback found it there);
    no environment variable, an empty home and XDG_DATA_HOME."""
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    beside = tmp_path / "lib" / "shared" / "data" / "uci"
    beside.mkdir(parents=True)
    monkeypatch.setattr(D, "_PACKAGE_PARENT", site)
    for name in (D.ENV_VAR, D.LIBSVM_ENV_VAR, "XDG_DATA_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the POSIX folders")
def test_user_data_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert D.user_data_dir() == tmp_path / "home" / ".local" / "share" / "infpush_cvx"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert D.user_data_dir() == tmp_path / "xdg" / "infpush_cvx"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # ignored, as the specification says
    assert D.user_data_dir() == tmp_path / "home" / ".local" / "share" / "infpush_cvx"


def test_platform_folders(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(D.sys, "platform", "darwin")
    assert D.user_data_dir() == tmp_path / "Library" / "Application Support" / "infpush_cvx"
    monkeypatch.setattr(D.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert D.user_data_dir() == tmp_path / "local" / "infpush_cvx"


def test_an_installed_package_never_reads_beside_itself(installed):
    (installed / "lib" / "shared" / "data" / "uci" / "ionosphere.data").write_text("x")
    assert D._checkout_shared_dir("uci") is None
    assert D.data_dir() is None and D.data_dir(collection="libsvm") is None
    with pytest.raises(FileNotFoundError) as exc:
        D.load_ionosphere()
    message = str(exc.value)
    # the error says how to provide the file: the variable, the user folder, download=True
    assert D.ENV_VAR in message and "download=True" in message
    assert str(installed / "home" / ".local" / "share" / "infpush_cvx" / "uci") in message
    assert "site-packages" not in message
    with pytest.raises(FileNotFoundError, match=D.LIBSVM_ENV_VAR):
        D.load_a8a()


@needs_data
def test_installed_package_reads_the_user_folder_and_the_variable(installed, monkeypatch):
    user = installed / "xdg" / "infpush_cvx"
    (user / "uci").mkdir(parents=True)
    shutil.copy(SHARED / "uci" / "ionosphere.data", user / "uci")
    monkeypatch.setenv("XDG_DATA_HOME", str(installed / "xdg"))
    assert D.data_dir() == user / "uci"
    assert D.load_ionosphere()[0].shape == (351, 33)
    # the LIBSVM folder of the user folder, once it exists
    assert D.data_dir(collection="libsvm") is None
    (user / "libsvm").mkdir()
    assert D.data_dir(collection="libsvm") == user / "libsvm"
    # the variable comes first
    monkeypatch.setenv(D.ENV_VAR, str(SHARED / "uci"))
    assert D.data_dir() == SHARED / "uci"
    assert D.data_dir(collection="libsvm") == SHARED / "libsvm"  # the variable's sibling


@needs_data
def test_download_goes_to_the_user_folder(installed, monkeypatch):
    payload = (SHARED / "uci" / "ionosphere.data").read_bytes()
    monkeypatch.setattr(D.urllib.request, "urlopen",
                        lambda url, timeout: io.BytesIO(payload))
    X, y = D.load_ionosphere(download=True)
    assert X.shape == (351, 33)
    stored = installed / "home" / ".local" / "share" / "infpush_cvx" / "uci" / "ionosphere.data"
    assert stored.read_bytes() == payload
    assert D.data_dir() == stored.parent  # found there from now on


def test_the_checkout_keeps_its_shared_folder():
    # this test runs from a checkout: the parent of the package holds the project's pyproject
    assert (D._PACKAGE_PARENT / "pyproject.toml").is_file()
    assert D._checkout_shared_dir("uci") == D._PACKAGE_PARENT.parent / "shared" / "data" / "uci"


@needs_data
def test_a_wheel_layout_in_a_fresh_interpreter(tmp_path):
    # the package copied into a site-packages folder, the data placed where the old fallback
    # looked (site-packages/../shared/data/uci): not found, and the error says what to set
    site = tmp_path / "lib" / "site-packages"
    shutil.copytree(Path(D.__file__).resolve().parents[1], site / "infpush_cvx",
                    ignore=shutil.ignore_patterns("__pycache__"))
    beside = tmp_path / "lib" / "shared" / "data" / "uci"
    beside.mkdir(parents=True)
    shutil.copy(SHARED / "uci" / "ionosphere.data", beside)
    code = ("import infpush_cvx.data.datasets as D\n"
            "assert D.__file__.startswith(%r), D.__file__\n"
            "try:\n    D.load_ionosphere()\n"
            "except FileNotFoundError as exc:\n    print(exc)\n"
            "else:\n    print('loaded')\n") % str(site)
    env = {k: v for k, v in os.environ.items()
           if k not in (D.ENV_VAR, D.LIBSVM_ENV_VAR, "XDG_DATA_HOME", "PYTHONPATH")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ionosphere data not found" in out.stdout and D.ENV_VAR in out.stdout
    assert str(tmp_path / "home" / ".local" / "share" / "infpush_cvx" / "uci") in out.stdout
