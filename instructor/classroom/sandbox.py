"""Where a submission's kernel runs: a bubblewrap sandbox with resource limits.

The kernel (the only process that runs student code) starts inside ``bwrap`` with new
network, PID, IPC and UTS namespaces and a file system made of read-only binds of the
operating system and the Python environment, plus one writable folder: the submission's
temporary copy. ``solutions/``, the gradebook, the autograder folder and other students'
work are simply not there. As root, the kernel also drops to an unprivileged user id, so
that the process limit (``RLIMIT_NPROC``, which root ignores) stops fork bombs. ``prlimit``
sets the memory (address space), CPU-time, process, file-size and POSIX message queue (none)
limits of each process; a cgroup of its own (:mod:`.cgroups`), where one can be made, limits
the kernel as a whole (CPU share, memory, processes) and lists every process it started.

Without bwrap (macOS, Windows, a Linux without it) the kernel runs as a plain process with
the same ``prlimit`` limits where ``prlimit`` exists (as root, in an IPC namespace of its own
and its cgroup), and the grader says so (:func:`isolation_note`): see the table of what is
isolated where in ``docs/instructors.md``.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .cgroups import KernelCgroup, kernel_cgroup, layout

__all__ = [
    "Limits",
    "copy_font_cache",
    "isolation",
    "isolation_note",
    "kernel_cgroup_for",
    "kernel_environment",
    "rlimits",
    "sandbox_command",
    "sandbox_uid",
    "zygote_command",
]

FIRST_UID = 61000
"""Kernels started by root run as an unprivileged user id from here on: one per kernel, since
the process limit counts every process of a user id, and one student's fork bomb must not
use up another's."""


def sandbox_uid() -> int:
    """A fresh unprivileged user id for one kernel (as root with bubblewrap)."""
    return FIRST_UID + secrets.randbelow(30000)


def _user_tasks() -> int:
    """Processes and threads of this user id now (they count against RLIMIT_NPROC)."""
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                continue
    return count


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


@functools.cache
def isolation() -> str:
    """``"bwrap"`` when bubblewrap works here, else ``"none"``.

    ``COURSE_SANDBOX=none`` in the environment turns bubblewrap off (the tests grade the
    hostile corpus both ways; an instructor on a machine without user namespaces too).
    """
    if os.environ.get("COURSE_SANDBOX", "") == "none":
        return "none"
    bwrap = shutil.which("bwrap")
    if bwrap is None or not sys.platform.startswith("linux"):
        return "none"
    trial = [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "true"]
    try:
        ok = subprocess.run(trial, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return "bwrap" if ok else "none"


@functools.cache
def _unshare_ipc() -> bool:
    """Whether a kernel can have an IPC namespace of its own without bubblewrap (as root,
    with util-linux's ``unshare``): a trial run, once."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    try:
        trial = subprocess.run(["unshare", "--ipc", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return trial.returncode == 0


def isolation_note() -> str:
    """What the grader says of its isolation when it starts: the sandbox and the kernels'
    cgroups, and in capitals what is NOT isolated here (see docs/instructors.md)."""
    found = layout()
    missing = [] if isolation() == "bwrap" else ["no bubblewrap sandbox"]
    if isolation() != "bwrap" and not _unshare_ipc():
        missing.append("IPC namespace per kernel (SysV objects are shared)")
    missing += found.missing()
    note = f"{isolation()}, {found.describe()}"
    if missing:
        note += f" (NOT isolated: {'; '.join(missing)}; see docs/instructors.md)"
    return note


def kernel_cgroup_for(limits: Limits) -> KernelCgroup | None:
    """A new cgroup with ``limits`` for one kernel; None where none can be made here."""
    return kernel_cgroup(limits.memory_mib * 1024 * 1024, limits.cores, limits.processes)


def _python_paths() -> list[Path]:
    """Folders the kernel needs to read: the interpreter, the environment, the
    student and instructor packages."""
    import helpers
    import instructor

    paths = {
        Path(sys.base_prefix),
        Path(sys.prefix),
        Path(helpers.__file__).resolve().parent,
        Path(instructor.__file__).resolve().parent,
    }
    paths.add(Path(os.path.realpath(sys.executable)).parent.parent)
    return sorted(paths)


def rlimits(limits: Limits, own_uid: bool) -> dict[str, int]:
    """A kernel's resource limits by name (memory, cpu, processes, file, core, msgqueue), in
    bytes, seconds and counts. No POSIX message queue at all: a queue outlives its process
    and, without an IPC namespace of the kernel's own, the next kernel could read it."""
    mib = 1024 * 1024
    # Without a user id of its own, the kernel shares the count with the grader's processes.
    processes = limits.processes if own_uid else _user_tasks() + limits.processes
    return {
        "memory": limits.memory_mib * mib,
        "cpu": limits.cpu_seconds,
        "processes": processes,
        "file": limits.file_mib * mib,
        "core": 0,
        "msgqueue": 0,
    }


_PRLIMIT_OPTIONS = {
    "memory": "as",
    "cpu": "cpu",
    "processes": "nproc",
    "file": "fsize",
    "core": "core",
    "msgqueue": "msgqueue",
}


def _limits_command(limits: Limits, own_uid: bool) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    limited = rlimits(limits, own_uid)
    return [prlimit, *(f"--{_PRLIMIT_OPTIONS[name]}={limited[name]}" for name in limited)]


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
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }


def _bwrap(writable: list[Path], home: Path) -> list[str]:
    """bwrap's arguments up to the command: new namespaces, the system and the Python
    environment read-only, ``writable`` the only folders it may write, ``home`` its working
    folder and the root of its environment (:func:`kernel_environment`)."""
    args = [
        "bwrap",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for path in _python_paths():
        # Parents the sandbox creates must be traversable by the unprivileged user.
        for parent in reversed(path.parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(home), "--clearenv"]
    for key, value in kernel_environment(home).items():
        args += ["--setenv", key, value]
    return args


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
    own_uid = os.geteuid() == 0 and isolation() == "bwrap"
    limited = _limits_command(limits, own_uid) + command
    enter = cgroup.enter_command if cgroup is not None else (lambda c: c)
    if isolation() != "bwrap":
        if _unshare_ipc():
            # SysV objects and POSIX queues outlive their process: in an IPC namespace of
            # the kernel's own, they go with it (bwrap's --unshare-ipc does the same).
            limited = [shutil.which("unshare") or "unshare", "--ipc", "--", *limited]
        return enter(limited)
    args = _bwrap([workdir] + ([shared] if shared is not None else []), workdir)
    if os.geteuid() == 0:
        # bwrap drops every capability; keep the two setpriv needs to leave root.
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
        args += [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ]
    else:
        args += ["--"]
    return enter(args + limited)


def zygote_command(command: list[str], slots: Path) -> list[str]:
    """``command`` (the kernel zygote, :mod:`.zygote`) in a sandbox like a kernel's, with
    ``slots`` its only writable folder, keeping the capabilities it needs to turn each forked
    child into a kernel of its own user id in an IPC namespace of its own (``CAP_SYS_ADMIN``,
    for ``unshare``: the zygote runs no student code, and its child drops every capability
    when it leaves root) and to end that user's processes."""
    caps = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    caps += ["--cap-add", "CAP_SYS_ADMIN"]
    return [*_bwrap([slots], slots), *caps, "--", *command]
