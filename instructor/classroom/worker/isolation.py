"""Where a submission's kernel runs, and everything it leaves ended: one :class:`Isolation`.

- **bubblewrap** (:func:`isolation`, :func:`sandbox_command`): new network, PID, IPC and UTS
  namespaces, the system and the Python environment read-only, one writable folder (the
  submission's copy): ``solutions/``, the gradebook and other students' work are not there.
  As root (:func:`kernels_leave_root`), each kernel runs as a user id of its own, so that
  ``RLIMIT_NPROC`` stops fork bombs. ``prlimit`` sets each process's limits. Without bwrap
  the kernel is a plain process with the same limits, and :func:`isolation_note` says what
  is not isolated (``docs/instructors.md`` has the table).
- **a cgroup per kernel** (:class:`KernelCgroup`): CPU, memory (swap included) and task
  limits for the kernel as a whole; the list of every process it started, even one that left
  its session (:meth:`KernelCgroup.kill` ends them); its CPU time, read from outside. v2 is
  used where it has the controller, else v1, under the grader's own cgroup; whatever cannot
  be written is named by :meth:`Layout.missing`.
- **the reaper** (:func:`reaped`): the grading process is a child subreaper, so a process a
  kernel leaves with a double fork is re-parented to it and killed once the notebook ends.
  Without bubblewrap this is what ends them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import multiprocessing.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import psutil

from instructor.classroom.worker.disk_bound import DiskBound, detach_under, mounts_available

__all__ = ["Limits", "isolation_note"]


FIRST_UID = 61000
"""Kernels started by root run as an unprivileged user id from here on: one per kernel, since
the process limit counts every process of a user id, and one student's fork bomb must not
use up another's."""


def sandbox_uid() -> int:
    """A fresh unprivileged user id for one kernel (as root with bubblewrap)."""
    return FIRST_UID + secrets.randbelow(30000)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one notebook's execution."""

    wall_seconds: float = 300.0
    """Whole notebook, kernel start included; the sandbox is killed after it."""
    cell_seconds: int = 60
    """One cell (as nbgrader's ``Execute.timeout``): the kernel is interrupted, the cell fails."""
    memory_mib: int = 4096
    """Address space of each process (torch alone maps about 1.5 GiB)."""
    cpu_seconds: int = 300
    processes: int = 64
    cores: float = 1.0
    """CPU cores the kernel's processes share at most (its cgroup's quota, where it has one)."""
    file_mib: int = 64
    output_kib: int = 512
    """Output kept per cell; the rest is dropped with a note."""
    notebook_output_kib: int = 4096
    """Output kept for the whole notebook, display updates included (:mod:`.output_bound`)."""
    disk_mib: int = 256
    """What the kernel may write in all: its working folder with its /tmp (a tmpfs of this
    size, where the grader can mount one: :mod:`.disk_bound`)."""
    disk_files: int = 10_000
    """Files, folders and links in the working folder."""
    probe_mib: int = 512
    """The probes' folder (the grader's calls, the kernel's answers), bounded the same way."""

    def disk(self) -> DiskBound:
        return DiskBound(self.disk_mib, self.disk_files)

    def probe_disk(self) -> DiskBound:
        return DiskBound(self.probe_mib, 50_000)


class Isolation(StrEnum):
    """Where kernels run here: in a bubblewrap sandbox, or as plain processes."""

    BWRAP = "bwrap"
    NONE = "none"


@functools.cache
def isolation() -> Isolation:
    """:attr:`Isolation.BWRAP` when bubblewrap works here, else :attr:`Isolation.NONE`.

    ``COURSE_SANDBOX=none`` in the environment turns bubblewrap off (the tests grade the
    hostile corpus both ways; an instructor on a machine without user namespaces too).
    """
    if os.environ.get("COURSE_SANDBOX", "") == "none":
        return Isolation.NONE
    trial = ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "true"]
    return Isolation.BWRAP if _succeeds(trial) else Isolation.NONE


def _succeeds(command: list[str]) -> bool:
    """Whether a trial run of ``command`` exits with 0 (within 20 s)."""
    try:
        return subprocess.run(command, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def kernels_leave_root() -> bool:
    """Whether each kernel runs as a user id of its own: only as root with bubblewrap (where
    kernels also fork from a zygote, :func:`.zygote.zygote_available`)."""
    return os.geteuid() == 0 and isolation() == Isolation.BWRAP


@functools.cache
def _unshare_ipc() -> bool:
    """Whether a kernel can have an IPC namespace of its own without bubblewrap (as root,
    with util-linux's ``unshare``): a trial run, once."""
    return os.geteuid() == 0 and _succeeds(["unshare", "--ipc", "true"])


def isolation_note() -> str:
    """What the grader says of its isolation when it starts: the sandbox and the kernels'
    cgroups, and in capitals what is NOT isolated here (see docs/instructors.md)."""
    found = layout()
    missing = [] if isolation() == Isolation.BWRAP else ["no bubblewrap sandbox"]
    if isolation() != Isolation.BWRAP and not _unshare_ipc():
        missing.append("IPC namespace per kernel (SysV objects are shared)")
    missing += found.missing()
    if not mounts_available():
        missing.append("disk bounded per file only (a bounded working folder needs root)")
    note = f"{isolation()}, {found.describe()}"
    if missing:
        note += f" (NOT isolated: {'; '.join(missing)}; see docs/instructors.md)"
    return note


def rlimits(limits: Limits, own_uid: bool) -> dict[str, int]:
    """A kernel's resource limits by ``prlimit``'s option names (``RLIMIT_`` + the name in
    capitals, in :mod:`resource`), in bytes, seconds and counts. No POSIX message queue at
    all: a queue outlives its process and, without an IPC namespace of the kernel's own, the
    next kernel could read it."""
    mib = 1024 * 1024
    processes = limits.processes
    if not own_uid:
        # The kernel shares the count (every process and thread of a user id) with the grader.
        for process in psutil.process_iter(["uids", "num_threads"]):
            uids = process.info["uids"]
            if uids is not None and uids.real == os.getuid():
                processes += process.info["num_threads"] or 0
    return {
        "as": limits.memory_mib * mib,
        "cpu": limits.cpu_seconds,
        "nproc": processes,
        "fsize": limits.file_mib * mib,
        "core": 0,
        "msgqueue": 0,
    }


ZYGOTE_TMP_MIB = 64
"""The zygote sandbox's own /tmp: root's, mode 0755 (bwrap's), so its kernels, each of a
user of its own, cannot write there."""


def copy_font_cache(folder: Path) -> None:
    """Copy matplotlib's font cache into ``folder`` (a kernel's ``MPLCONFIGDIR``), so that
    matplotlib does not rebuild it there (about 1 s)."""
    for cache in Path(os.path.expanduser("~/.cache/matplotlib")).glob("fontlist-*.json"):
        shutil.copy(cache, folder)


def kernel_environment(workdir: Path) -> dict[str, str]:
    """The whole environment of a kernel whose only writable folder is ``workdir``."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(workdir),
        "MPLCONFIGDIR": str(workdir / ".matplotlib"),
        "IPYTHONDIR": str(workdir / ".ipython"),
        "JUPYTER_RUNTIME_DIR": str(workdir / ".jupyter"),
        # Temporary files go with the notebook (PyG writes a module for each GATConv it
        # builds), not into /tmp.
        "TMPDIR": str(workdir),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }


def _bwrap(writable: list[Path], home: Path, tmp_mib: int) -> list[str]:
    """bwrap's arguments up to the command: new namespaces, the system and the Python
    environment read-only, ``writable`` the only folders it may write, ``home`` its working
    folder and the root of its environment (:func:`kernel_environment`), a ``/tmp`` of
    ``tmp_mib`` MiB (its memory; unbounded where this bwrap has no ``--size``)."""
    import helpers
    import instructor

    args = (
        "bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --die-with-parent"
        " --new-session --proc /proc --dev /dev"
    ).split()
    args += [*(["--size", str(tmp_mib << 20)] if _bwrap_sizes() else []), "--tmpfs", "/tmp"]
    for top in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    # What the kernel reads: the interpreter, the environment, the course's packages.
    python = {
        Path(sys.base_prefix),
        Path(sys.prefix),
        Path(helpers.__file__).resolve().parent,
        Path(instructor.__file__).resolve().parent,
        Path(os.path.realpath(sys.executable)).parent.parent,
    }
    binds = [("--ro-bind", path) for path in sorted(python)] + [("--bind", p) for p in writable]
    for bind, path in binds:
        # Parents the sandbox creates must be traversable by the unprivileged user (bwrap
        # makes them 0700).
        for parent in reversed(path.parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += [bind, str(path), str(path)]
    args += ["--chdir", str(home), "--clearenv"]
    for key, value in kernel_environment(home).items():
        args += ["--setenv", key, value]
    return args


@functools.cache
def _bwrap_sizes() -> bool:
    """Whether this bwrap sizes a tmpfs (``--size``, bubblewrap 0.7 and later)."""
    try:
        found = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in found.stdout + found.stderr


def sandbox_command(
    command: list[str],
    workdir: Path,
    limits: Limits,
    uid: int,
    shared: Path | None = None,
    cgroup: KernelCgroup | None = None,
) -> list[str]:
    """``command`` wrapped so that it runs isolated, with ``workdir`` its only writable folder.

    Args:
        uid: the user id to run as when the grader is root (see :func:`sandbox_uid`).
        shared: a folder of the grader's that the kernel sees too (the probes' folder: its
            permissions, not the sandbox, say what the kernel may write there).
        cgroup: the kernel's cgroup, entered before anything else starts.
    """
    limited = command
    if prlimit := shutil.which("prlimit"):
        values = rlimits(limits, own_uid=kernels_leave_root())
        limited = [prlimit, *(f"--{name}={value}" for name, value in values.items()), *command]
    enter = cgroup.enter_command if cgroup is not None else (lambda c: c)
    if isolation() != Isolation.BWRAP:
        if _unshare_ipc():
            # SysV objects and POSIX queues outlive their process: in an IPC namespace of
            # the kernel's own, they go with it (bwrap's --unshare-ipc does the same).
            limited = [shutil.which("unshare") or "unshare", "--ipc", "--", *limited]
        return enter(limited)
    writable = [workdir] + ([shared] if shared is not None else [])
    args = _bwrap(writable, workdir, limits.disk_mib)
    if os.geteuid() == 0:
        # bwrap drops every capability; keep the two setpriv needs to leave root.
        args += [*_caps("SETUID", "SETGID"), "--", "setpriv", f"--reuid={uid}", f"--regid={uid}"]
        args += ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    else:
        args.append("--")
    return enter(args + limited)


def zygote_command(command: list[str], slots: Path) -> list[str]:
    """``command`` (the kernel zygote, :mod:`.zygote`) in a sandbox like a kernel's, with
    ``slots`` its only writable folder, keeping the capabilities it needs to turn each forked
    child into a kernel of its own user id in an IPC namespace of its own (``CAP_SYS_ADMIN``,
    for ``unshare``: the zygote runs no student code, and its child drops every capability
    when it leaves root) and to end that user's processes."""
    caps = _caps("SETUID", "SETGID", "KILL", "SYS_ADMIN")
    return [*_bwrap([slots], slots, ZYGOTE_TMP_MIB), *caps, "--", *command]


def _caps(*names: str) -> list[str]:
    """bwrap's arguments that keep the capabilities ``names`` (bwrap drops all others)."""
    return [arg for name in names for arg in ("--cap-add", f"CAP_{name}")]


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
    def clock(self) -> Base | None:
        return next((base for base in self.bases if base.clock), None)

    def missing(self) -> list[str]:
        """What a kernel's cgroup does not isolate here, in words (empty: everything)."""
        found = self.controllers | {
            part for part in ("procs", "clock") for base in self.bases if getattr(base, part)
        }
        return [words for part, words in WHAT.items() if part not in found]

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


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _mounts(mountinfo: str | None = None, cgroup: str | None = None) -> list[_Mount]:
    """The mounted cgroup hierarchies (the first mount of each), with the grader's own
    cgroup in each, from ``/proc/self/mountinfo`` and ``/proc/self/cgroup`` (or the texts
    given)."""
    lines = (_read_text("/proc/self/mountinfo") if mountinfo is None else mountinfo).splitlines()
    # The grader's cgroup per hierarchy, keyed by its controllers ("cpu,cpuacct"; "" for v2).
    own = {}
    for line in (_read_text("/proc/self/cgroup") if cgroup is None else cgroup).splitlines():
        _, controllers, path = line.split(":", 2)
        own[",".join(sorted(controllers.split(","))) if controllers else ""] = path
    found, seen = [], set()
    for line in lines:
        fields, _, tail = line.partition(" - ")
        fstype, _, options = (tail.split() + ["", "", ""])[:3]
        if fstype not in ("cgroup", "cgroup2"):
            continue
        root, point = fields.split()[3:5]
        version = 2 if fstype == "cgroup2" else 1
        controllers = sorted(set(options.split(",")) & _V1_CONTROLLERS) if version == 1 else []
        if version == 1 and not controllers:
            continue  # a named hierarchy (name=systemd): no controller, not ours
        key = ",".join(controllers)
        path = own.get(key)
        if key in seen or path is None or not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        seen.add(key)
        relative = path[len(root.rstrip("/")) :].lstrip("/")
        found.append(_Mount(version, Path(point) / relative, frozenset(controllers)))
    return found


_V1_CONTROLLERS = {"cpu", "cpuacct", "memory", "pids"}


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
        available = set(_read_text(str(path / "cgroup.controllers")).split())
        for controller in set(CONTROLLERS) & available:
            with contextlib.suppress(OSError):
                (path / "cgroup.subtree_control").write_text(f"+{controller}")
    # A trial, with the command kernels are started with (KernelCgroup.enter_command).
    trial = path / "trial"
    try:
        trial.mkdir()
        moved = _succeeds(_enter_prefix([trial / "cgroup.procs"]) + ["true"])
    except OSError:
        moved = False
    _remove_folder(trial)
    if not moved:
        _remove_folder(path)
        return None
    return path


def _owner_ended(folder: Path) -> bool:
    """Whether ``folder``, named ``<word>-<pid>-<token>`` by a grading process, outlived it.
    A reused pid keeps the folder until that process ends too."""
    pid = folder.name.split("-")[1]
    return pid.isdigit() and not psutil.pid_exists(int(pid))


def _sweep(mount: _Mount) -> None:
    """Remove the folders of graders that have died without removing them (a Dask worker
    ended by its nanny runs no exit handler), ending whatever their kernels left running."""
    for base in mount.directory.glob("grade-*-*"):
        if _owner_ended(base):
            _remove_base(base)


def _remove_base(base: Path) -> None:
    """Remove ``base`` and the kernels' cgroups in it, ending what is left in them."""
    with contextlib.suppress(OSError):
        for folder in [p for p in base.iterdir() if p.is_dir()]:
            _kill_listed(folder)
            _remove_folder(folder)
    _remove_folder(base)


def _listed(folder: Path) -> set[int]:
    """The processes in the cgroup ``folder`` (none once it is gone)."""
    return {int(pid) for pid in _read_text(str(folder / "cgroup.procs")).split()}


def _kill_listed(folder: Path) -> None:
    """SIGKILL every process listed in ``folder``'s ``cgroup.procs`` until none is left
    (a process forked meanwhile is listed in the next round; the process limit bounds
    them)."""
    for _ in range(_KILL_ROUNDS):
        if not (left := _listed(folder)):
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _discover(mounts: list[_Mount] | None = None) -> Layout:
    """This process's layout: a folder in every hierarchy (of ``mounts``, default all) that
    can be used, each given what it does best: v2 its enabled controllers, the process
    list and the CPU time; v1 the controllers v2 lacks, and the list and time where v2
    cannot give them (none without /proc: no hierarchy is found)."""
    name = f"grade-{os.getpid()}-{secrets.token_hex(4)}"
    mounts = _mounts() if mounts is None else mounts
    for mount in mounts:
        _sweep(mount)
    usable = [(m, path) for m in mounts if (path := _usable_base(m, name)) is not None]
    bases: list[Base] = []
    wanted = set(CONTROLLERS)
    for mount, path in sorted(usable, key=lambda found: -found[0].version):
        if mount.version == 2:
            limits = wanted & set(_read_text(str(path / "cgroup.subtree_control")).split())
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
_LAYOUT_LOCK = threading.Lock()


def layout() -> Layout:
    """This process's layout, made on first use (a forked child makes its own)."""
    with _LAYOUT_LOCK:
        pid = os.getpid()
        if pid not in _LAYOUTS:
            _LAYOUTS[pid] = _discover()
        return _LAYOUTS[pid]


_WORK_FOLDERS: dict[int, Path] = {}


def work_folder() -> Path:
    """This process's folder for its kernels' folders (the zygote's slots; the working and
    probe folders of kernels started without it): ``kernels-<pid>-<pid namespace>-<token>``
    in the temporary folder, made on first use and removed when the process ends. A process
    that ends without its exit handlers (a Dask worker ended by its nanny, a killed grader)
    leaves it: the next one to start here removes it, as :func:`_sweep` does with cgroups."""
    with _LAYOUT_LOCK:
        pid = os.getpid()
        if pid not in _WORK_FOLDERS:
            top = Path(tempfile.gettempdir())
            _sweep_work_folders(top)
            prefix = f"kernels-{pid}-{_pid_namespace()}-"
            _WORK_FOLDERS[pid] = Path(tempfile.mkdtemp(prefix=prefix, dir=top))
        return _WORK_FOLDERS[pid]


def _pid_namespace() -> int:
    """This process's PID namespace (its inode): a pid means a process only within it."""
    return os.stat("/proc/self/ns/pid").st_ino


def _sweep_work_folders(top: Path) -> None:
    """Remove the work folders in ``top`` whose process has ended: only this user's (as root,
    /tmp holds every user's), of this PID namespace (a container that shares the folder has
    pids of its own), and never through a link."""
    for stale in top.glob(f"kernels-*-{_pid_namespace()}-*"):
        with contextlib.suppress(OSError):
            own = stale.lstat().st_uid == os.geteuid()
            if own and stale.is_dir() and not stale.is_symlink() and _owner_ended(stale):
                detach_under(stale)  # its kernels' bounded folders, its zygote's slots
                shutil.rmtree(stale, ignore_errors=True)


def _remove_work_folder() -> None:
    with _LAYOUT_LOCK:
        folder = _WORK_FOLDERS.pop(os.getpid(), None)
    if folder is not None:
        detach_under(folder)
        shutil.rmtree(folder, ignore_errors=True)


# After the zygote's own handlers (registered later, run first; exit priority 10).
atexit.register(_remove_work_folder)
multiprocessing.util.Finalize(None, _remove_work_folder, exitpriority=5)


@atexit.register
def _remove_bases() -> None:
    with _LAYOUT_LOCK:
        found = _LAYOUTS.pop(os.getpid(), None)
    for base in found.bases if found else ():
        _remove_base(base.path)


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
        return next((_listed(folder) for base, folder in self.folders if base.procs), set())

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
            if base.procs:
                if base.version == 2:
                    with contextlib.suppress(OSError):  # no cgroup.kill before Linux 5.14
                        (folder / "cgroup.kill").write_text("1")  # atomic, forks included
                _kill_listed(folder)  # what is left; on v1, the only way

    def close(self) -> None:
        """Kill what is left and remove the folders."""
        self.kill()
        for _, folder in self.folders:
            _remove_folder(folder)


def _write_limits(base: Base, folder: Path, memory_bytes: int, cores: float, tasks: int) -> None:
    quota, memory = max(int(cores * _PERIOD_US), 1000), str(memory_bytes)
    # Swap too, so that a kernel cannot trade its memory limit for swap.
    if base.version == 2:
        files = {"cpu.max": f"{quota} {_PERIOD_US}", "memory.max": memory, "memory.swap.max": "0"}
    else:
        files = {"cpu.cfs_period_us": str(_PERIOD_US), "cpu.cfs_quota_us": str(quota)}
        files |= {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory}
    files["pids.max"] = str(tasks)
    for name, value in files.items():
        if name.split(".")[0] not in base.controllers:
            continue
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


_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 100
"""Kill rounds at most: each round kills the children re-parented by the previous one."""


def children() -> set[int]:
    """The process ids whose parent is this process."""
    return {child.pid for child in psutil.Process().children()}


@contextlib.contextmanager
def reaped() -> Iterator[None]:
    """Run the block (one notebook's kernel, started and ended inside it); afterwards kill
    every child of this process that the block left, and every orphan they leave in turn."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no prctl: orphans go to init
        subreaper = False
    if not subreaper:
        yield
        return
    before = children()
    try:
        yield
    finally:
        for _ in range(_ROUNDS):
            left = [child for child in psutil.Process().children() if child.pid not in before]
            if not left:
                break
            for child in left:
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()
            psutil.wait_procs(left)  # reaped: their own orphans come to this process
