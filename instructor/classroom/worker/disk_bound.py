"""A kernel's disk, bounded in all: its working folder (with its ``/tmp``) and its probes'
folder are each a tmpfs of a fixed size and number of files, mounted by the grader.

``RLIMIT_FSIZE`` (:attr:`.isolation.Limits.file_mib`) bounds one file only: a kernel wrote
1 GiB in 22 files of its working folder onto the machine's root disk. A filesystem of its
own is the one bound that counts everything a kernel can make: bytes written or allocated
(``fallocate``; the holes of a sparse file cost nothing), files, folders, and hard links
(tmpfs counts each link against its files). A write past it fails with ``ENOSPC``; the
grader reads afterwards whether the bound was reached (:meth:`BoundedFolder.check`) and says
so in the integrity report. Its pages are memory: they count in the kernel's cgroup, and go
when the folder is unmounted (:meth:`BoundedFolder.release`).

Mounting needs root (``CAP_SYS_ADMIN``; :func:`mounts_available` tries once). As root with
bubblewrap, kernels are forked by a zygote whose sandbox is a mount namespace of its own:
its slots folder is made a shared mount (:func:`share`) before the zygote starts, so that a
tmpfs the grader mounts there afterwards appears in the sandbox too (bwrap makes its mounts
slaves: they receive mounts from outside, and send none back). Without root no folder is
bounded (``isolation_note`` says so): one file is, by ``RLIMIT_FSIZE``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BoundedFolder", "DiskBound", "mounts_available"]

_MS_NOSUID, _MS_NODEV, _MS_BIND = 0x2, 0x4, 0x1000
_MS_PRIVATE, _MS_SHARED = 1 << 18, 1 << 20
_MNT_DETACH = 2

FULL_PART = 8
"""A bounded folder counts as full with less than this part of its bytes or files left: a
write past the bound fills it to its last page before it fails, but an allocation
(``fallocate``) fails whole, and leaves what it did not take."""


@dataclass(frozen=True)
class DiskBound:
    """The size of one bounded folder: bytes and files (folders and links included)."""

    mib: int
    files: int

    def options(self, uid: int, mode: int) -> str:
        return f"size={self.mib}m,nr_inodes={self.files},mode={mode:o},uid={uid},gid={uid}"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount(
    source: str | None, target: Path | str, fstype: str | None, flags: int, data: str = ""
) -> None:
    """mount(2), raising OSError."""
    encoded = [None if s is None else str(s).encode() for s in (source, target, fstype)]
    if _libc().mount(*encoded, ctypes.c_ulong(flags), data.encode() or None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def detach(target: Path | str) -> None:
    """Unmount ``target`` and every mount under it, lazily (``umount -l``): whatever still
    holds a file there keeps it until it lets go, and nothing new can reach it."""
    _libc().umount2(str(target).encode(), _MNT_DETACH)


@functools.cache
def mounts_available() -> bool:
    """Whether the grader can mount a bounded folder here: as root, a trial mount, once."""
    if os.geteuid() != 0:
        return False
    trial = tempfile.mkdtemp(prefix="disk-bound-trial-")
    try:
        mount("tmpfs", trial, "tmpfs", _MS_NOSUID | _MS_NODEV, DiskBound(1, 16).options(0, 0o700))
    except OSError:
        return False
    else:
        detach(trial)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(trial)


def share(folder: Path) -> bool:
    """Make ``folder`` a shared mount (a bind of itself), so that mounts made under it later
    also appear where a sandbox bound it: whether it could (False without root)."""
    if not mounts_available():
        return False
    try:
        mount(str(folder), folder, None, _MS_BIND)
        mount(None, folder, None, _MS_PRIVATE)  # a peer group of its own, not its parent's
        mount(None, folder, None, _MS_SHARED)
    except OSError:
        detach(folder)
        return False
    return True


def mounts_under(folder: Path, mountinfo: str | None = None) -> list[str]:
    """The mount points at or under ``folder`` (from ``/proc/self/mountinfo``), deepest
    first. Mount points with spaces are written escaped there, and so skipped: the grader
    makes none."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return []
    top = str(folder).rstrip("/")
    points = {line.split()[4] for line in mountinfo.splitlines() if len(line.split()) > 4}
    inside = [p for p in points if p == top or p.startswith(top + "/")]
    return sorted(inside, key=lambda p: -p.count("/"))


def detach_under(folder: Path) -> None:
    """Unmount whatever is mounted at or under ``folder`` (a grader that died left it)."""
    for point in mounts_under(folder):
        detach(point)


@dataclass
class BoundedFolder:
    """One folder of a kernel's, mounted as a tmpfs of :attr:`bound` (see the module)."""

    path: Path
    bound: DiskBound
    what: str
    """What it is, in the integrity report's words: "working folder", "probes' folder"."""
    peak_mib: float = 0.0
    peak_files: int = 0
    """The most it held when looked at (:meth:`check`): kept, since the kernel may delete what
    it wrote afterwards."""

    @classmethod
    def mount(
        cls, path: Path, bound: DiskBound, uid: int, mode: int, what: str
    ) -> BoundedFolder | None:
        """Mount a tmpfs of ``bound`` on the empty folder ``path``, owned by ``uid``; None
        where the grader cannot mount here (the folder stays a plain one)."""
        if not mounts_available():
            return None
        try:
            mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, bound.options(uid, mode))
        except OSError:
            return None  # a plain folder, as without root: seen the same from every side
        return cls(path, bound, what)

    def check(self) -> str:
        """What of the bound the folder reached, from what it held at its fullest so far
        (``""``: it stayed well below)."""
        with contextlib.suppress(OSError):
            stat = os.statvfs(self.path)
            used = (stat.f_blocks - stat.f_bfree) * stat.f_frsize / (1 << 20)
            self.peak_mib = max(self.peak_mib, used)
            self.peak_files = max(self.peak_files, stat.f_files - stat.f_ffree)
        if self.peak_files > self.bound.files * (1 - 1 / FULL_PART):
            return f"{self.peak_files:,} of its {self.bound.files:,} files"
        if self.peak_mib > self.bound.mib * (1 - 1 / FULL_PART):
            return f"{self.peak_mib:.0f} of its {self.bound.mib} MiB"
        return ""

    def note(self) -> str:
        """The integrity report's note, or ``""`` when the bound stopped nothing."""
        reached = self.check()
        if not reached:
            return ""
        return (
            f"disk bound: the kernel filled its {self.what} to {reached} (the grader's bound: "
            "writes past it fail)"
        )

    def release(self) -> None:
        """Unmount it (its content goes with it)."""
        detach(self.path)
