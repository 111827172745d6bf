"""A kernel's bounded folders (:mod:`instructor.classroom.worker.disk_bound`): a tmpfs of a
size and a number of files, mounted by the grader (as root; skipped elsewhere)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from instructor.classroom.worker.disk_bound import (
    BoundedFolder,
    DiskBound,
    mounts_available,
    mounts_under,
)

needs_mounts = pytest.mark.skipif(
    not mounts_available(), reason="mounting a bounded folder needs root"
)


def test_mounts_under_a_folder_deepest_first() -> None:
    info = "\n".join(
        f"{n} 1 0:{n} / {point} rw - tmpfs tmpfs rw"
        for n, point in enumerate(["/", "/tmp/k", "/tmp/k/z/n1", "/tmp/k/z", "/tmp/kk"])
    )
    assert mounts_under(Path("/tmp/k"), info) == ["/tmp/k/z/n1", "/tmp/k/z", "/tmp/k"]


@pytest.fixture
def bounded(tmp_path: Path):
    folder = BoundedFolder.mount(tmp_path / "w", DiskBound(4, 64), 0, 0o700, "working folder")
    yield folder
    if folder is not None:
        folder.release()


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()


@needs_mounts
def test_bytes_past_the_bound_fail_and_are_noted(bounded: BoundedFolder) -> None:
    assert bounded.note() == ""
    written = 0
    with pytest.raises(OSError) as stopped:
        for i in range(8):  # 8 files of 1 MiB into 4 MiB
            with open(bounded.path / f"f{i}", "wb") as handle:
                handle.write(b"x" * (1 << 20))
            written += 1
    assert stopped.value.errno == errno.ENOSPC and written <= 4
    assert bounded.check()  # as the grader looks while the cells run
    for path in bounded.path.iterdir():  # emptied afterwards: the bound was still reached
        path.unlink()
    assert "disk bound" in bounded.note() and "of its 4 MiB" in bounded.note()


@needs_mounts
def test_hard_links_and_empty_files_count_against_the_files(bounded: BoundedFolder) -> None:
    (bounded.path / "target").write_bytes(b"x")
    made = 0
    with pytest.raises(OSError) as stopped:
        for i in range(1000):
            os.link(bounded.path / "target", bounded.path / f"link{i}")
            made += 1
    assert stopped.value.errno == errno.ENOSPC and made < 64
    assert "of its 64 files" in bounded.note()


@needs_mounts
def test_a_sparse_file_costs_what_is_allocated(bounded: BoundedFolder) -> None:
    with open(bounded.path / "sparse", "wb") as handle:
        handle.truncate(1 << 30)  # a hole of 1 GiB: nothing
        assert bounded.check() == ""
        with pytest.raises(OSError):
            os.posix_fallocate(handle.fileno(), 0, 8 << 20)


@needs_mounts
def test_release_unmounts_the_folder(tmp_path: Path, bounded: BoundedFolder) -> None:
    (bounded.path / "kept").write_text("gone with the mount")
    bounded.release()
    assert not (tmp_path / "w" / "kept").exists()
    assert str(tmp_path / "w") not in mounts_under(tmp_path)
