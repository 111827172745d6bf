"""The kernel zygote: one sandboxed process that has imported what every notebook imports,
and forks a fresh kernel for each notebook.

``import torch`` alone costs a new kernel more CPU time than most notebooks' cells (see
benchmarks/grading.md). The zygote pays for the imports once per grading worker; each
notebook then gets a child of it, which runs nothing but the student's notebook:

- before any student code runs, the child waits until the grader has put it in the kernel's
  cgroup (:mod:`.cgroups`), enters an IPC namespace of its own (SysV objects and POSIX
  message queues go with it, never to the next kernel), and leaves root for a user id of its
  own (as :func:`.sandbox.sandbox_command` does with ``setpriv``), with the notebook's
  resource limits, its own session, and its own working folder (mode 0700) as its
  environment's home;
- the zygote never runs student code, and a child cannot reach it: the zygote runs as root
  and is not dumpable (no ``ptrace``, no ``/proc/<pid>/mem``), and its socket is root's;
- when the notebook ends (the kernel exits, or the grader closes the connection), every
  process of the child's user id is killed (and the grader ends what is left in its cgroup),
  so nothing a student starts or leaves outlives their notebook or reaches the next one.

It runs in a sandbox of its own (:func:`.sandbox.zygote_command`), one per worker, whose only
writable folder holds the kernels' folders; the grader's side is :mod:`.forked_kernel`.

Protocol, one connection per kernel, JSON lines: the grader sends the request
``{"argv", "workdir", "uid", "env", "limits"}``; the zygote answers ``{"pid"}`` (in its PID
namespace); the grader sends ``{"go": true}`` once it has placed the child in its cgroup, and
the child goes on; the zygote sends ``{"exit"}`` when the kernel has ended. The grader may
send ``{"signal": n}``; closing the connection kills the kernel.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
import time

from instructor.classroom.sandbox import FIRST_UID

__all__ = ["PRELOADED", "READY", "serve"]

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
_LIMITS = {
    "memory": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "processes": resource.RLIMIT_NPROC,
    "file": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
    "msgqueue": resource.RLIMIT_MSGQUEUE,
}
GO = {"go": True}
"""The grader's word that the child is in its cgroup and may become the kernel."""


def _set_dumpable(flag: bool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, int(flag), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def _new_ipc_namespace() -> None:
    """Enter an IPC namespace of this process's own (``os.unshare`` is Python 3.12+)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWIPC)")


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
        _new_ipc_namespace()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        os.chdir(request["workdir"])
        os.environ.clear()
        os.environ.update(request["env"])
        for name, value in request["limits"].items():
            resource.setrlimit(_LIMITS[name], (value, value))
        uid = int(request["uid"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # from root to another user: every capability is dropped
        if os.getuid() == 0 or os.geteuid() == 0:
            raise RuntimeError("the kernel would run as root")
        _set_dumpable(True)  # as a kernel started by exec is
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


def _send(conn: socket.socket, message: dict) -> None:
    with contextlib.suppress(OSError):
        conn.sendall((json.dumps(message) + "\n").encode())


def _read_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """The next line from ``conn`` (b"" once it is closed), and what came after it."""
    data = b""
    while b"\n" not in data:
        chunk = b""
        with contextlib.suppress(OSError):
            chunk = conn.recv(65536)
        if not chunk:
            return b"", b""
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest


def _exit_code(status: int) -> int:
    return os.waitstatus_to_exitcode(status)


def _watch(conn: socket.socket, pid: int, pending: bytes = b"") -> int:
    """Until the kernel ends: pass on the grader's signals; a closed connection kills it."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return _exit_code(status)
        readable, _, _ = select.select([conn], [], [], 0.05)
        if not readable:
            continue
        chunk = b""
        with contextlib.suppress(OSError):
            chunk = conn.recv(4096)
        if not chunk:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return _exit_code(os.waitpid(pid, 0)[1])
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            with contextlib.suppress(ValueError, TypeError, ProcessLookupError):
                os.kill(pid, int(json.loads(line)["signal"]))


def serve(path: str) -> None:
    """Listen on the Unix socket ``path``; fork a kernel for each connection, one at a time."""
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    for module in PRELOADED:
        __import__(module)
    _set_dumpable(False)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(8)
    print(READY, flush=True)
    while True:
        conn, _ = listener.accept()
        try:
            request = json.loads(_read_line(conn)[0] or b"null")
            if not isinstance(request, dict) or not int(request.get("uid", 0)) >= FIRST_UID:
                _send(conn, {"error": f"not a kernel request: {request!r}"[:500]})
                continue
            gate, opener = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(opener)
                _become_kernel(request, [listener, conn], gate)
            os.close(gate)
            _send(conn, {"pid": pid})
            started = time.monotonic()
            line, pending = _read_line(conn)
            with contextlib.suppress(ValueError):
                if json.loads(line or b"null") == GO:
                    os.write(opener, b"g")
            os.close(opener)  # without the grader's word, the child ends here
            code = _watch(conn, pid, pending)
            _kill_user(int(request["uid"]))
            _send(conn, {"exit": code, "seconds": round(time.monotonic() - started, 3)})
        finally:
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
