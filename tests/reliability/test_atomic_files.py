"""``infpush_cvx.files``: the one atomic writer every file of the package goes through."""

import os
import stat

import pytest

from infpush_cvx.files import atomic_open, atomic_path, check_writable, write_text_atomic


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_written_files_get_normal_permissions_not_mkstemps_0600(tmp_path):
    """A stored reference value used to be left at mode 0600 by mkstemp."""
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a.json", "{}\n")
        with atomic_path(tmp_path / "b.npz") as tmp:
            tmp.write_bytes(b"x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.json") == 0o644
    assert _mode(tmp_path / "b.npz") == 0o644


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_open(target, "w") as fh:
        fh.write("new, half written")
        raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_the_temporary_file_keeps_the_suffix_writers_read(tmp_path):
    """``savez`` appends .npz and ``savefig`` reads the format from the suffix."""
    with atomic_path(tmp_path / "fig.png") as tmp:
        assert tmp.suffix == ".png" and tmp.parent == tmp_path
        tmp.write_bytes(b"png")


def test_check_writable_names_the_argument(tmp_path):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    with pytest.raises(ValueError, match="out: cannot write"):
        check_writable(tmp_path / "blocker" / "t.csv")
    with pytest.raises(ValueError, match="--table: .* is a folder"):
        check_writable(tmp_path, name="--table")
