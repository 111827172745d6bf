"""The kernel zygote: one sandboxed process that has imported what every notebook imports,
and forks a fresh kernel for each notebook.

``import torch`` alone costs a new kernel more CPU time than most notebooks' cells (see
benchmarks/grading.md). The zygote pays for the imports once per grading worker:

- before any student code runs, the child waits until the grader has put it in the kernel's
  cgroup (:mod:`.isolation`), enters an IPC namespace of its own, and leaves root for a user
  id of its own, with the notebook's resource limits, session and working folder (mode 0700);
- the zygote never runs student code, and a child cannot reach it: the zygote runs as root,
  is not dumpable (no ``ptrace``, no ``/proc/<pid>/mem``), and its socket is root's;
- when the notebook ends, every process of the child's user id is killed (and the grader ends
  what is left in its cgroup): nothing a student starts outlives their notebook.

It runs in a sandbox of its own (:func:`.isolation.zygote_command`), one per worker, whose only
writable folder holds the kernels' folders; only where the grader is root with bubblewrap
(:func:`zygote_available`) can each child leave for a user id of its own. Elsewhere each
kernel starts from scratch (:func:`.isolation.sandbox_command`).

Protocol, one connection per kernel, JSON lines: the grader sends the request
``{"argv", "workdir", "uid", "env", "limits"}``; the zygote answers ``{"pid"}`` (in its PID
namespace); the grader sends ``{"go": true}`` once it has placed the child in its cgroup, and
the child goes on; the zygote sends ``{"exit"}`` when the kernel has ended. The grader may
send ``{"signal": n}``; closing the connection kills the kernel.

The grader's side: :func:`zygote_for_worker` starts the zygote once per worker process;
:class:`ZygoteProvisioner` (jupyter_client) asks it for a kernel, and :class:`ForkedKernel`
stands for that kernel where jupyter_client expects a :class:`subprocess.Popen`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import json
import multiprocessing.util
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from jupyter_client.provisioning import LocalProvisioner

from instructor.classroom.worker.disk_bound import detach, share
from instructor.classroom.worker.isolation import (
    FIRST_UID,
    KernelCgroup,
    Limits,
    copy_font_cache,
    kernel_environment,
    kernels_leave_root,
    rlimits,
    work_folder,
    zygote_command,
)

__all__ = ["zygote_available"]


READY = "zygote ready"
"""The line the zygote prints once it listens (anything else on stdout is an error)."""

PRELOADED = (
    "numpy",
    "torch",
    "torch.nn.functional",
    "matplotlib.pyplot",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "helpers.checks",
    "helpers.data",
    "helpers.measure",
    "helpers.plotting",
    "helpers.setup",
    "instructor.classroom.kernel.guard",
    "instructor.classroom.kernel.probe",
)
"""What every notebook's kernel imports (the grader's modules included)."""

_PR_SET_DUMPABLE = 4
_CLONE_NEWIPC = 0x08000000
GO = {"go": True}
"""The grader's word that the child is in its cgroup and may become the kernel."""
CLOSED = {"exit": -signal.SIGKILL}
"""What a closed connection reads as: to the grader, the kernel's end (the zygote is gone)."""


def _libc_call(function: str, *args: int) -> None:
    """Call libc's ``function`` (``prctl``; ``unshare``, which ``os`` has from Python 3.12)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, function)(*args) != 0:
        raise OSError(ctypes.get_errno(), f"{function}{args}")


def send_message(conn: socket.socket, message: dict) -> None:
    """Send ``message`` as one JSON line (the other side reads a closed connection as such)."""
    with contextlib.suppress(OSError):
        conn.sendall((json.dumps(message) + "\n").encode())


def read_request(conn: socket.socket, buffer: bytearray, timeout: float | None = None) -> Any:
    """The next JSON line from ``conn`` (``buffer`` keeps what came after it): None if none
    came within ``timeout`` seconds (None: wait), :data:`CLOSED` once the connection is
    closed. Raises ValueError for a line that is not JSON."""
    while b"\n" not in buffer:
        if not _readable(conn, timeout):
            return None
        try:
            chunk = conn.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            return CLOSED
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line)


def _become_kernel(request: dict, keep_out: list[socket.socket], gate: int) -> None:
    """In the forked child: once the zygote opens ``gate`` (the grader has put this process in
    the kernel's cgroup), drop to the kernel's user, limits and IPC namespace, then run the
    kernel. Never returns."""
    code = 1
    try:
        for sock in keep_out:
            sock.close()
        if os.read(gate, 1) != b"g":
            raise RuntimeError("the grader did not place the kernel in its cgroup")
        os.close(gate)
        os.setsid()
        _libc_call("unshare", _CLONE_NEWIPC)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        os.chdir(request["workdir"])
        os.environ.clear()
        os.environ.update(request["env"])
        for name, value in request["limits"].items():
            resource.setrlimit(getattr(resource, f"RLIMIT_{name.upper()}"), (value, value))
        uid = int(request["uid"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # from root to another user: every capability is dropped
        if os.getuid() == 0 or os.geteuid() == 0:
            raise RuntimeError("the kernel would run as root")
        _libc_call("prctl", _PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a kernel started by exec is
        import numpy as np

        np.random.seed()  # a fresh process draws its own seed; a forked one would share ours
        from ipykernel import kernelapp

        sys.argv = ["ipykernel_launcher", *request["argv"]]
        kernelapp.launch_new_instance(argv=request["argv"])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException as error:  # noqa: BLE001 - reported, then the child ends
        with contextlib.suppress(Exception):
            sys.stderr.write(f"zygote child: {type(error).__name__}: {error}\n")
    finally:
        os._exit(code)


def _kill_user(uid: int) -> None:
    """Kill every process of ``uid`` at once (``kill(-1)`` sent as that user, so nothing but
    that user's processes can go). Its SysV objects and POSIX queues went with its IPC
    namespace; files cannot be left: outside its own working folder a kernel can write
    nowhere."""
    helper = os.fork()
    if helper == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(helper, 0)


def _watch(conn: socket.socket, pid: int, buffer: bytearray) -> int:
    """Until the kernel ends: pass on the grader's signals; a closed connection kills it."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        with contextlib.suppress(ValueError, TypeError, KeyError, ProcessLookupError):
            message = read_request(conn, buffer, 0.05)
            if message is CLOSED:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            if message is not None:
                os.kill(pid, int(message["signal"]))


def serve(path: str) -> None:
    """Listen on the Unix socket ``path``; fork a kernel for each connection, one at a time."""
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    for module in PRELOADED:
        __import__(module)
    _libc_call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(8)
    print(READY, flush=True)
    while True:
        conn, _ = listener.accept()
        buffer = bytearray()
        try:
            request = read_request(conn, buffer)
            if not isinstance(request, dict) or not int(request.get("uid", 0)) >= FIRST_UID:
                send_message(conn, {"error": f"not a kernel request: {request!r}"[:500]})
                continue
            gate, opener = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(opener)
                _become_kernel(request, [listener, conn], gate)
            os.close(gate)
            send_message(conn, {"pid": pid})
            with contextlib.suppress(ValueError):
                if read_request(conn, buffer) == GO:
                    os.write(opener, b"g")
            os.close(opener)  # without the grader's word, the child ends here
            code = _watch(conn, pid, buffer)
            _kill_user(int(request["uid"]))
            send_message(conn, {"exit": code})
        finally:
            conn.close()


START_SECONDS = 120.0


class ZygoteError(RuntimeError):
    """The zygote could not start (the sandbox cannot import the course), or stopped."""


def zygote_available() -> bool:
    """Whether kernels are forked from a zygote here: as root, with bubblewrap."""
    return kernels_leave_root()


@dataclass
class Zygote:
    """A running zygote: its process, and ``slots``, the folder its kernels' folders go in
    (the only one it can write)."""

    process: subprocess.Popen
    slots: Path
    shared: bool = False
    """Whether ``slots`` is a shared mount: a kernel's bounded folder, mounted there by the
    grader, then appears in the zygote's sandbox too (:mod:`.disk_bound`)."""
    owner: int = field(default_factory=os.getpid)

    @property
    def socket_path(self) -> Path:
        return self.slots / ".zygote"

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.shared:
            detach(self.slots)  # with every kernel's folder still mounted under it
        shutil.rmtree(self.slots, ignore_errors=True)

    @classmethod
    def start(cls) -> Zygote:
        slots = Path(tempfile.mkdtemp(prefix="zygote-", dir=work_folder()))
        os.chmod(slots, 0o711)  # kernels reach their own folder in it, and nothing else
        (slots / ".matplotlib").mkdir()
        copy_font_cache(slots / ".matplotlib")
        shared = share(slots)  # before the sandbox binds it
        command = [sys.executable, "-m", __name__, str(slots / ".zygote")]
        process = subprocess.Popen(
            zygote_command(command, slots),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        zygote = cls(process, slots, shared)
        ready = _readable(process.stdout, START_SECONDS)
        line = process.stdout.readline().strip() if ready else ""
        if line != READY:
            zygote.stop()
            error = process.stderr.read()[-2000:] if process.stderr else ""
            raise ZygoteError(
                f"the kernel zygote did not start ({line or 'no answer'}): {error.strip()}"
            )
        # Its kernels inherit these pipes: they are emptied as they fill (a full pipe would
        # block the kernel) and what comes is dropped, never gathered in this process.
        for stream in (process.stdout, process.stderr):
            threading.Thread(target=_discard, args=(stream,), daemon=True).start()
        return zygote


def _discard(stream: Any) -> None:
    """Read ``stream`` to its end, keeping nothing; as bytes, so that no decoding error
    (a kernel writes what it likes) can end the thread and leave the pipe to fill."""
    binary = getattr(stream, "buffer", stream)
    with contextlib.suppress(OSError, ValueError):
        while binary.read1(1 << 16):
            pass


_ZYGOTE: Zygote | None = None
_ZYGOTE_LOCK = threading.Lock()


@atexit.register
def _stop_zygote() -> None:
    # Only the process that started it: a forked copy of this one must not stop it.
    if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid():
        _ZYGOTE.stop()


# A Dask worker is a multiprocessing child, which ends without running atexit handlers.
multiprocessing.util.Finalize(None, _stop_zygote, exitpriority=10)


def zygote_for_worker() -> Zygote:
    """This process's zygote, started on first use and again if it has stopped."""
    global _ZYGOTE
    with _ZYGOTE_LOCK:
        if _ZYGOTE is None or _ZYGOTE.process.poll() is not None:
            if _ZYGOTE is not None:
                _ZYGOTE.stop()
            _ZYGOTE = Zygote.start()
        return _ZYGOTE


def host_pid(zygote: Zygote, pid: int) -> int:
    """The process id, in this process's PID namespace, of the zygote's child ``pid`` (in the
    zygote's namespace): the descendant of the zygote's sandbox whose innermost id it is."""
    for child in psutil.Process(zygote.process.pid).children(recursive=True):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == pid:
                    return child.pid
    raise ZygoteError(f"the zygote's child {pid} is not among its processes")


def _readable(stream: Any, timeout: float | None) -> bool:
    """Whether ``stream`` has something to read within ``timeout`` seconds (None: wait).
    ``poll``, not ``select``: a worker that has graded many kernels may hold descriptors
    past 1024, which ``select`` refuses."""
    poller = select.poll()
    poller.register(stream, select.POLLIN)
    return bool(poller.poll(None if timeout is None else timeout * 1000))


class ForkedKernel:
    """A kernel forked by the zygote, with the part of :class:`subprocess.Popen` that
    jupyter_client uses (poll, wait, send_signal, kill, terminate).

    The child waits, before it runs anything, until it is in ``cgroup`` (when there is one):
    whatever it starts is then in the kernel's cgroup too."""

    stdin = stdout = stderr = None

    def __init__(
        self,
        zygote: Zygote,
        argv: list[str],
        workdir: Path,
        uid: int,
        limits: Limits,
        cgroup: KernelCgroup | None = None,
    ):
        self.returncode: int | None = None
        self._buffer = bytearray()
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.connect(str(zygote.socket_path))
        request = {
            "argv": argv,
            "workdir": str(workdir),
            "uid": uid,
            "env": kernel_environment(workdir),
            "limits": rlimits(limits, own_uid=True),
        }
        send_message(self.conn, request)
        answer = read_request(self.conn, self._buffer, START_SECONDS)
        if not isinstance(answer, dict) or "pid" not in answer:
            self.conn.close()
            raise ZygoteError(f"the kernel zygote refused a kernel: {answer}")
        self.pid = int(answer["pid"])
        try:
            if cgroup is not None:
                cgroup.add(host_pid(zygote, self.pid))
            send_message(self.conn, GO)
        except (OSError, psutil.Error, ZygoteError) as error:
            self.conn.close()  # the zygote kills the child, which never ran
            raise ZygoteError(f"the kernel could not be put in its cgroup: {error}") from None

    def poll(self, timeout: float | None = 0) -> int | None:
        if self.returncode is None:
            message = read_request(self.conn, self._buffer, timeout)
            if message is not None:
                self.returncode = int(message.get("exit", -signal.SIGKILL))
                self.conn.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.poll(timeout) is None:
            raise subprocess.TimeoutExpired("forked kernel", timeout or 0)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is not None:
            return
        if signum == signal.SIGKILL:
            # Closing the connection is the zygote's cue to kill the kernel and its user.
            with contextlib.suppress(OSError):
                self.conn.shutdown(socket.SHUT_WR)
            return
        send_message(self.conn, {"signal": int(signum)})

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self) -> None:
        """Close the connection to the zygote (which then ends the kernel, if it still runs):
        from here on the kernel counts as killed, and ``poll``/``wait`` read nothing more."""
        if self.returncode is None:
            self.returncode = -signal.SIGKILL
        self.conn.close()

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ZygoteProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, with the kernel forked by the zygote."""

    zygote: Zygote | None = None
    workdir: Path | None = None
    uid: int = 0
    limits: Limits | None = None
    cgroup: KernelCgroup | None = None

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        assert self.zygote is not None and self.workdir is not None and self.limits
        if cmd[1:3] != ["-m", "ipykernel_launcher"]:
            raise ZygoteError(f"not an ipykernel command: {cmd}")
        self.process = await asyncio.to_thread(
            ForkedKernel, self.zygote, cmd[3:], self.workdir, self.uid, self.limits, self.cgroup
        )
        self.pid, self.pgid = self.process.pid, None
        self.cwd = self.workdir
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        # The connection is otherwise closed only when the kernel's end is read: a worker
        # that grades class after class would keep one descriptor per kernel.
        if isinstance(self.process, ForkedKernel):
            self.process.close()
        await super().cleanup(restart)


if __name__ == "__main__":
    serve(sys.argv[1])
