"""Kernels forked from a zygote (:mod:`.zygote`): the grader's side.

:func:`zygote_for_worker` starts (once per worker process) the sandboxed zygote and returns
it; :class:`ZygoteProvisioner` is the jupyter_client provisioner that asks it for a kernel
instead of starting a process, and :class:`ForkedKernel` stands for that kernel where
jupyter_client expects a :class:`subprocess.Popen`.

Used where the grader is root with bubblewrap (:func:`zygote_available`): only then can each
child leave for a user id of its own, which is what keeps one student's processes from
seeing the next one's. Elsewhere each kernel is started from scratch by
:func:`.sandbox.sandbox_command`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import multiprocessing.util
import os
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

from .cgroups import KernelCgroup
from .sandbox import (
    Limits,
    copy_font_cache,
    isolation,
    kernel_environment,
    rlimits,
    zygote_command,
)
from .zygote import GO, READY

__all__ = [
    "ForkedKernel",
    "Zygote",
    "ZygoteError",
    "ZygoteProvisioner",
    "zygote_available",
    "zygote_for_worker",
]

START_SECONDS = 120.0


class ZygoteError(RuntimeError):
    """The zygote could not start (the sandbox cannot import the course), or stopped."""


def zygote_available() -> bool:
    """Whether kernels are forked from a zygote here: as root, with bubblewrap."""
    return os.geteuid() == 0 and isolation() == "bwrap"


@dataclass
class Zygote:
    """A running zygote: its process, and ``slots``, the folder its kernels' folders go in
    (the only one it can write)."""

    process: subprocess.Popen
    slots: Path
    owner: int = field(default_factory=os.getpid)

    @property
    def socket_path(self) -> Path:
        return self.slots / ".zygote"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        shutil.rmtree(self.slots, ignore_errors=True)

    @classmethod
    def start(cls) -> Zygote:
        slots = Path(tempfile.mkdtemp(prefix="grade-kernels-"))
        os.chmod(slots, 0o711)  # kernels reach their own folder in it, and nothing else
        (slots / ".matplotlib").mkdir()
        copy_font_cache(slots / ".matplotlib")
        command = [sys.executable, "-m", "instructor.classroom.zygote", str(slots / ".zygote")]
        process = subprocess.Popen(
            zygote_command(command, slots),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        zygote = cls(process, slots)
        ready, _, _ = select.select([process.stdout], [], [], START_SECONDS)
        line = process.stdout.readline().strip() if ready else ""
        if line != READY:
            zygote.stop()
            error = process.stderr.read()[-2000:] if process.stderr else ""
            raise ZygoteError(
                f"the kernel zygote did not start ({line or 'no answer'}): {error.strip()}"
            )
        # Its kernels inherit these pipes: they are emptied as they fill (a full pipe would
        # block the kernel) and what comes is dropped, never gathered in this process.
        threading.Thread(target=_discard, args=(process.stdout,), daemon=True).start()
        threading.Thread(target=_discard, args=(process.stderr,), daemon=True).start()
        return zygote


def _discard(stream: Any) -> None:
    """Read ``stream`` to its end, keeping nothing; as bytes, so that no decoding error
    (a kernel writes what it likes) can end the thread and leave the pipe to fill."""
    binary = getattr(stream, "buffer", stream)
    with contextlib.suppress(OSError, ValueError):
        while binary.read1(1 << 16):
            pass


_ZYGOTE: Zygote | None = None
_LOCK = threading.Lock()


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
    with _LOCK:
        if _ZYGOTE is None or not _ZYGOTE.alive():
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
        self._buffer = b""
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.connect(str(zygote.socket_path))
        request = {
            "argv": argv,
            "workdir": str(workdir),
            "uid": uid,
            "env": kernel_environment(workdir),
            "limits": rlimits(limits, own_uid=True),
        }
        self.conn.sendall((json.dumps(request) + "\n").encode())
        answer = self._message(START_SECONDS)
        if answer is None or "pid" not in answer:
            self.conn.close()
            raise ZygoteError(f"the kernel zygote refused a kernel: {answer}")
        self.pid = int(answer["pid"])
        try:
            if cgroup is not None:
                cgroup.add(host_pid(zygote, self.pid))
            self.conn.sendall((json.dumps(GO) + "\n").encode())
        except (OSError, psutil.Error, ZygoteError) as error:
            self.conn.close()  # the zygote kills the child, which never ran
            raise ZygoteError(f"the kernel could not be put in its cgroup: {error}") from None

    def _message(self, timeout: float | None) -> dict | None:
        """The zygote's next message; None if none came within ``timeout`` seconds.
        A closed connection (the zygote gone) reads as the kernel's end."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self.conn], [], [], timeout)
            if not ready:
                return None
            try:
                chunk = self.conn.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                return {"exit": -signal.SIGKILL}
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def poll(self) -> int | None:
        if self.returncode is None:
            message = self._message(0)
            if message is not None and "exit" in message:
                self.returncode = int(message["exit"])
                self.conn.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            message = self._message(timeout)
            if message is None:
                raise subprocess.TimeoutExpired("forked kernel", timeout or 0)
            self.returncode = int(message.get("exit", -signal.SIGKILL))
            self.conn.close()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is not None:
            return
        if signum == signal.SIGKILL:
            # Closing the connection is the zygote's cue to kill the kernel and its user.
            with contextlib.suppress(OSError):
                self.conn.shutdown(socket.SHUT_WR)
            return
        with contextlib.suppress(OSError):
            self.conn.sendall((json.dumps({"signal": int(signum)}) + "\n").encode())

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

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
