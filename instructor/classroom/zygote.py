"""The kernel zygote: one sandboxed process that has imported what every notebook imports,
and forks a fresh kernel for each notebook.

``import torch`` alone costs a new kernel more CPU time than most notebooks' cells (see
benchmarks/grading.md). The zygote pays for the imports once per grading worker; each
notebook then gets a child of it, which runs nothing but the student's notebook:

- before any student code runs, the child leaves root for a user id of its own (as
  :func:`.sandbox.sandbox_command` does with ``setpriv``), with the notebook's resource
  limits, its own session, and its own working folder (mode 0700) as its environment's home;
- the zygote never runs student code, and a child cannot reach it: the zygote runs as root
  and is not dumpable (no ``ptrace``, no ``/proc/<pid>/mem``), and its socket is root's;
- when the notebook ends (the kernel exits, or the grader closes the connection), every
  process of the child's user id is killed and its SysV IPC objects removed, so nothing a
  student starts or leaves outlives their notebook or reaches the next one.

It runs in a sandbox of its own (:func:`.sandbox.zygote_command`), one per worker, whose only
writable folder holds the kernels' folders; the grader's side is :mod:`.forked_kernel`.

Protocol, one connection per kernel, JSON lines: the grader sends the request
``{"argv", "workdir", "uid", "env", "limits"}``; the zygote answers ``{"pid"}``, then
``{"exit"}`` when the kernel has ended. The grader may send ``{"signal": n}``; closing the
connection kills the kernel.
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
    "instructor.classroom.guard",
    "instructor.classroom.probe_kernel",
)
"""What every notebook's kernel imports (the grader's modules included)."""

_PR_SET_DUMPABLE = 4
_LIMITS = {
    "memory": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "processes": resource.RLIMIT_NPROC,
    "file": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
}


def _set_dumpable(flag: bool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, int(flag), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def _become_kernel(request: dict, keep_out: list[socket.socket]) -> None:
    """In the forked child: drop to the kernel's user and limits, then run the kernel.
    Never returns."""
    code = 1
    try:
        for sock in keep_out:
            sock.close()
        os.setsid()
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
    """Kill every process of ``uid`` at once (``kill(-1)`` sent as that user), then remove
    its SysV IPC objects: the kernels of one zygote share its IPC namespace, and a segment
    outlives its process. Done as that user, so nothing but that user's objects can go.
    (Files cannot be left: outside its own working folder a kernel can write nowhere.)"""
    helper = os.fork()
    if helper == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
            with contextlib.suppress(Exception):
                _remove_sysv_ipc(uid)
        finally:
            os._exit(0)
    os.waitpid(helper, 0)


_IPC_RMID = 0
_SYSV_IPC = {"shm": "shmctl", "sem": "semctl", "msg": "msgctl"}
"""``/proc/sysvipc/<kind>`` and the call that removes an object of that kind."""


def _remove_sysv_ipc(uid: int) -> None:
    """Remove every shared memory segment, semaphore set and message queue that ``uid`` owns
    or created, as listed in ``/proc/sysvipc`` (for this IPC namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, call in _SYSV_IPC.items():
        with open(f"/proc/sysvipc/{kind}") as table:
            header, *rows = table.read().splitlines()
        columns = header.split()
        for row in rows:
            fields = dict(zip(columns, row.split(), strict=False))
            if str(uid) in (fields.get("uid"), fields.get("cuid")):
                ident = int(fields[columns[1]])  # shmid, semid or msqid
                if kind == "sem":
                    libc.semctl(ident, 0, _IPC_RMID)
                else:
                    getattr(libc, call)(ident, _IPC_RMID, None)


def _send(conn: socket.socket, message: dict) -> None:
    with contextlib.suppress(OSError):
        conn.sendall((json.dumps(message) + "\n").encode())


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _exit_code(status: int) -> int:
    return os.waitstatus_to_exitcode(status)


def _watch(conn: socket.socket, pid: int) -> int:
    """Until the kernel ends: pass on the grader's signals; a closed connection kills it."""
    pending = b""
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
            request = json.loads(_read_line(conn) or b"null")
            if not isinstance(request, dict) or not int(request.get("uid", 0)) >= FIRST_UID:
                _send(conn, {"error": f"not a kernel request: {request!r}"[:500]})
                continue
            pid = os.fork()
            if pid == 0:
                _become_kernel(request, [listener, conn])
            _send(conn, {"pid": pid})
            started = time.monotonic()
            code = _watch(conn, pid)
            _kill_user(int(request["uid"]))
            _send(conn, {"exit": code, "seconds": round(time.monotonic() - started, 3)})
        finally:
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
