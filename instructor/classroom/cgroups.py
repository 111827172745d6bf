"""A cgroup for each kernel: its own CPU share, memory and process limits, the list of every
process it started, and its CPU time.

``prlimit`` limits each *process* (and, as root, each user id): a kernel that starts 50
processes gets 50 times the memory and, without a share of its own, takes the CPU from every
other kernel on the machine. A cgroup limits the kernel *as a whole*, whatever it starts:

- **CPU**: a group of its own, so that the scheduler shares the CPU between kernels, not
  between their processes, and a quota of :attr:`.sandbox.Limits.cores` cores;
- **memory**: the resident memory of all its processes together
  (:attr:`.sandbox.Limits.memory_mib`), swap included;
- **processes**: :attr:`.sandbox.Limits.processes` tasks at most (threads count, as for
  ``RLIMIT_NPROC``), whatever their user id;
- **the process list**: every process the kernel started, even one that left its session or
  was re-parented: :meth:`KernelCgroup.kill` ends them all when the notebook ends;
- **CPU time**: the kernel's own, read from outside (:meth:`KernelCgroup.cpu_seconds`), so that
  a timed rule does not depend on how loaded the machine is (:mod:`.kernel_session`).

Both cgroup versions are used, each for what it can do here: a controller enabled in the
unified (v2) hierarchy is used there, else in its v1 hierarchy; the process list and the
CPU time come from v2 when it can be written (it has both even without controllers), else
from v1 (``cpuacct`` for the time). Every folder is made under the grader's *own* cgroup in
each hierarchy (``/proc/self/cgroup``), so that limits set on the grader still hold for its
kernels. Whatever cannot be written (not root, a read-only ``/sys/fs/cgroup``) is named by
:meth:`Layout.missing`, and the grader says so when it starts (:func:`.sandbox.isolation_note`).

cgroup files are plain writes: no library is needed.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing.util
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONTROLLERS",
    "Base",
    "KernelCgroup",
    "Layout",
    "kernel_cgroup",
    "layout",
]

CONTROLLERS = ("cpu", "memory", "pids")
"""The controllers a kernel's cgroup is limited by."""
WHAT = {
    "cpu": "CPU share per kernel",
    "memory": "memory per kernel (all its processes together)",
    "pids": "process count per kernel",
    "procs": "the list of a kernel's processes (what it leaves running is ended by other means)",
    "clock": "timed rules in the kernel's own CPU time (they use the wall clock)",
}
"""What each part of a cgroup isolates, for the grader's message when it is missing."""
_PERIOD_US = 100_000
_KILL_ROUNDS = 500
"""Rounds of SIGKILL at most (each round 10 ms): each kills what the last one missed."""


@dataclass(frozen=True)
class Base:
    """Where this process makes its kernels' cgroups in one hierarchy: a folder of its own
    under the grader's own cgroup."""

    version: int
    path: Path
    controllers: frozenset[str]
    """The limits written here (a subset of :data:`CONTROLLERS`)."""
    procs: bool = False
    """Whether this hierarchy's ``cgroup.procs`` is the kernel's process list."""
    clock: str = ""
    """The file of the kernel's CPU time here (``cpu.stat`` or ``cpuacct.usage``), or ""."""


@dataclass(frozen=True)
class Layout:
    """What this process's kernels get: one :class:`Base` per hierarchy used."""

    bases: tuple[Base, ...] = ()

    @property
    def controllers(self) -> frozenset[str]:
        return frozenset().union(*(base.controllers for base in self.bases))

    @property
    def procs(self) -> Base | None:
        return next((base for base in self.bases if base.procs), None)

    @property
    def clock(self) -> Base | None:
        return next((base for base in self.bases if base.clock), None)

    def missing(self) -> list[str]:
        """What a kernel's cgroup does not isolate here, in words (empty: everything)."""
        missing = [WHAT[c] for c in CONTROLLERS if c not in self.controllers]
        if self.procs is None:
            missing.append(WHAT["procs"])
        if self.clock is None:
            missing.append(WHAT["clock"])
        return missing

    def describe(self) -> str:
        """The cgroups in use, for the grader's first line: ``cgroups v1 (cpu, memory,
        pids), v2 (processes, CPU time)``; "no cgroups" where none can be written."""
        parts = []
        for base in self.bases:
            what = sorted(base.controllers)
            what += ["processes"] if base.procs else []
            what += ["CPU time"] if base.clock else []
            parts.append(f"v{base.version} ({', '.join(what)})")
        return "cgroups " + ", ".join(parts) if parts else "no cgroups"


@dataclass(frozen=True)
class _Mount:
    version: int
    directory: Path
    """The grader's own cgroup in this hierarchy."""
    controllers: frozenset[str]


def _own_cgroups(text: str) -> dict[str, str]:
    """The grader's cgroup path per hierarchy, keyed by its controllers joined by commas
    (``"cpu,cpuacct"``; ``""`` for v2), from ``/proc/self/cgroup``'s ``text``."""
    own = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        own[",".join(sorted(controllers.split(","))) if controllers else ""] = path
    return own


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _mounts(mountinfo: str | None = None, cgroup: str | None = None) -> list[_Mount]:
    """The mounted cgroup hierarchies (the first mount of each), with the grader's own
    cgroup in each, from ``/proc/self/mountinfo`` and ``/proc/self/cgroup`` (or the texts
    given)."""
    lines = (_read("/proc/self/mountinfo") if mountinfo is None else mountinfo).splitlines()
    own = _own_cgroups(_read("/proc/self/cgroup") if cgroup is None else cgroup)
    found, seen = [], set()
    for line in lines:
        fields, _, tail = line.partition(" - ")
        fstype, _, options = (tail.split() + ["", "", ""])[:3]
        if fstype not in ("cgroup", "cgroup2"):
            continue
        root, point = fields.split()[3:5]
        version = 2 if fstype == "cgroup2" else 1
        if version == 1:
            controllers = sorted(o for o in options.split(",") if o in _V1_CONTROLLERS)
            key = ",".join(controllers)
            if not controllers:
                continue  # a named hierarchy (name=systemd): no controller, not ours
        else:
            controllers, key = [], ""
        path = own.get(key)
        if key in seen or path is None or not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        seen.add(key)
        relative = path[len(root.rstrip("/")) :].lstrip("/")
        found.append(_Mount(version, Path(point) / relative, frozenset(controllers)))
    return found


_V1_CONTROLLERS = {"cpu", "cpuacct", "memory", "pids"}


def _enters(procs_files: Iterable[Path]) -> bool:
    """Whether a new process can be moved into each of these ``cgroup.procs`` (a trial, with
    the command kernels are started with: :meth:`KernelCgroup.enter_command`)."""
    command = _enter_prefix(list(procs_files)) + ["true"]
    try:
        return subprocess.run(command, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _enter_prefix(procs_files: list[Path]) -> list[str]:
    # The shell writes its own pid into each cgroup, then becomes the kernel's command: the
    # kernel is in its cgroups before it starts anything.
    script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *map(str, procs_files), "--"]


def _usable_base(mount: _Mount, name: str) -> Path | None:
    """This process's folder ``name`` in ``mount``'s hierarchy, if it can be made and a
    process moved into a cgroup under it (writable is not enough: a v2 move needs the
    common ancestor too); None otherwise."""
    path = mount.directory / name
    try:
        path.mkdir()
    except OSError:
        return None
    if mount.version == 2:
        # Controllers the grader's own cgroup passes down, for the kernels' cgroups.
        available = set(_read(str(path / "cgroup.controllers")).split())
        for controller in set(CONTROLLERS) & available:
            with contextlib.suppress(OSError):
                (path / "cgroup.subtree_control").write_text(f"+{controller}")
    trial = path / "trial"
    try:
        trial.mkdir()
        moved = _enters([trial / "cgroup.procs"])
    except OSError:
        moved = False
    _remove_folder(trial)
    if not moved:
        _remove_folder(path)
        return None
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(mount: _Mount) -> None:
    """Remove the folders of graders that have died without removing them (a Dask worker
    ended by its nanny runs no exit handler), ending whatever their kernels left running."""
    for base in mount.directory.glob("grade-*-*"):
        pid = base.name.split("-")[1]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            for folder in [p for p in base.iterdir() if p.is_dir()]:
                _kill_listed(folder)
                _remove_folder(folder)
        _remove_folder(base)


def _kill_listed(folder: Path) -> None:
    """SIGKILL every process listed in ``folder``'s ``cgroup.procs`` until none is left
    (a process forked meanwhile is listed in the next round; the process limit bounds
    them)."""
    for _ in range(_KILL_ROUNDS):
        try:
            left = {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        except OSError:
            return
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _discover(mounts: list[_Mount] | None = None) -> Layout:
    """This process's layout: a folder in every hierarchy (of ``mounts``, default all) that
    can be used, each given what it does best: v2 its enabled controllers, the process
    list and the CPU time; v1 the controllers v2 lacks, and the list and time where v2
    cannot give them."""
    if os.name != "posix" or not Path("/proc/self/cgroup").exists():
        return Layout()
    name = f"grade-{os.getpid()}-{secrets.token_hex(4)}"
    mounts = _mounts() if mounts is None else mounts
    for mount in mounts:
        _sweep(mount)
    usable = [(m, path) for m in mounts if (path := _usable_base(m, name)) is not None]
    bases: list[Base] = []
    wanted = set(CONTROLLERS)
    for mount, path in sorted(usable, key=lambda found: -found[0].version):
        if mount.version == 2:
            limits = wanted & set(_read(str(path / "cgroup.subtree_control")).split())
            clock = "cpu.stat" if (path / "cpu.stat").exists() else ""
        else:
            limits = wanted & mount.controllers
            timed = "cpuacct" in mount.controllers
            clock = "cpuacct.usage" if timed and not any(b.clock for b in bases) else ""
        procs = not any(b.procs for b in bases)
        if not limits and not clock and not procs:
            _remove_folder(path)  # nothing left for this hierarchy to do
            continue
        bases.append(Base(mount.version, path, frozenset(limits), procs=procs, clock=clock))
        wanted -= limits
    return Layout(tuple(bases))


def _remove_folder(path: Path) -> None:
    for _ in range(200):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)  # its last processes are still exiting


_LAYOUTS: dict[int, Layout] = {}
_LOCK = threading.Lock()


def layout() -> Layout:
    """This process's layout, made on first use (a forked child makes its own)."""
    with _LOCK:
        pid = os.getpid()
        if pid not in _LAYOUTS:
            _LAYOUTS[pid] = _discover()
        return _LAYOUTS[pid]


@atexit.register
def _remove_bases() -> None:
    with _LOCK:
        found = _LAYOUTS.pop(os.getpid(), None)
    for base in found.bases if found else ():
        with contextlib.suppress(OSError):
            for left in [p for p in base.path.iterdir() if p.is_dir()]:
                KernelCgroup(((base, left),)).close()
        _remove_folder(base.path)


# A Dask worker is a multiprocessing child, which ends without running atexit handlers.
multiprocessing.util.Finalize(None, _remove_bases, exitpriority=10)


@dataclass(frozen=True)
class KernelCgroup:
    """One kernel's cgroup: a folder in each hierarchy of the :class:`Layout`."""

    folders: tuple[tuple[Base, Path], ...]

    @property
    def procs_files(self) -> list[Path]:
        return [folder / "cgroup.procs" for _, folder in self.folders]

    def enter_command(self, command: list[str]) -> list[str]:
        """``command``, started inside this cgroup (before it runs anything)."""
        return _enter_prefix(self.procs_files) + command

    def add(self, pid: int) -> None:
        """Move the process ``pid`` (of this process's PID namespace) into this cgroup."""
        for procs in self.procs_files:
            procs.write_text(str(pid))

    def pids(self) -> set[int]:
        """Every process in this cgroup now (none where no hierarchy keeps the list)."""
        for base, folder in self.folders:
            if base.procs:
                with contextlib.suppress(FileNotFoundError):
                    return {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return set()

    def cpu_seconds(self) -> float | None:
        """The CPU time its processes have used (user and system), or None where no
        hierarchy counts it."""
        for base, folder in self.folders:
            if base.clock == "cpu.stat":
                for line in (folder / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
            elif base.clock == "cpuacct.usage":
                return int((folder / "cpuacct.usage").read_text()) / 1e9
        return None

    def kill(self) -> None:
        """End every process in this cgroup, whatever its session, parent or user id."""
        for base, folder in self.folders:
            if base.procs and base.version == 2 and (folder / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (folder / "cgroup.kill").write_text("1")  # atomic, forks included
        # v1 (and v2 before Linux 5.14): rounds of SIGKILL.
        for base, folder in self.folders:
            if base.procs:
                _kill_listed(folder)

    def close(self) -> None:
        """Kill what is left and remove the folders."""
        self.kill()
        for _, folder in self.folders:
            _remove_folder(folder)


def _write_limits(base: Base, folder: Path, memory_bytes: int, cores: float, tasks: int) -> None:
    quota = max(int(cores * _PERIOD_US), 1000)
    files: list[tuple[str, str]] = []
    if "cpu" in base.controllers:
        files += (
            [("cpu.max", f"{quota} {_PERIOD_US}")]
            if base.version == 2
            else [("cpu.cfs_period_us", str(_PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
        )
    if "memory" in base.controllers:
        # Swap too, so that a kernel cannot trade its memory limit for swap.
        files += (
            [("memory.max", str(memory_bytes)), ("memory.swap.max", "0")]
            if base.version == 2
            else [
                ("memory.limit_in_bytes", str(memory_bytes)),
                ("memory.memsw.limit_in_bytes", str(memory_bytes)),
            ]
        )
    if "pids" in base.controllers:
        files.append(("pids.max", str(tasks)))
    for name, value in files:
        if "swap" in name and not (folder / name).exists():
            continue  # no swap accounting here (and so no swap to escape to)
        (folder / name).write_text(value)


def kernel_cgroup(
    memory_bytes: int, cores: float, tasks: int, found: Layout | None = None
) -> KernelCgroup | None:
    """A new cgroup for one kernel, with these limits in every hierarchy of ``found`` (default
    :func:`layout`) that has the controller; None where no cgroup can be made here
    (:meth:`Layout.missing` says what is then not isolated)."""
    found = layout() if found is None else found
    if not found.bases:
        return None
    name = f"kernel-{secrets.token_hex(6)}"
    folders: list[tuple[Base, Path]] = []
    try:
        for base in found.bases:
            folder = base.path / name
            folder.mkdir()
            folders.append((base, folder))
            _write_limits(base, folder, memory_bytes, cores, tasks)
    except OSError:
        KernelCgroup(tuple(folders)).close()
        raise
    return KernelCgroup(tuple(folders))
