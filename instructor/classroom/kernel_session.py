"""One notebook's kernel as the grader drives it: sandboxed, cell by cell, tests judged outside.

- :class:`SandboxedKernelManager` starts the kernel in the sandbox (:mod:`.sandbox`), or
  forked from the worker's zygote (:mod:`.forked_kernel`), and talks to it over Unix sockets;
- :class:`GradingClient` (nbclient) runs the notebook's cells in the kernel and hands each
  test cell to a judge instead; it also runs a probe's line of code in the kernel;
- :class:`KernelSession` is that judge: the probe channel into the kernel (:mod:`.probe`),
  the one thread the test cells run on (:mod:`.verdict`), and their verdicts.

:mod:`.execute` builds these for one notebook and turns what happened into an
``ExecutionResult``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from instructor import anatomy

from .cgroups import KernelCgroup
from .forked_kernel import Zygote, ZygoteProvisioner
from .probe import Channel, KernelGone, ProbeError, ProbeTimeout
from .records import STUDENT_VIEW, GraderEnvironmentError
from .sandbox import Limits, isolation, sandbox_command
from .verdict import TestVerdict, run_test

__all__ = [
    "INSTALL_HINT",
    "GradingClient",
    "KernelSession",
    "SandboxedKernelManager",
    "TimeLimit",
    "grading_client",
]

INSTALL_HINT = (
    "Install the course package (pip install -e '.[instructor]') in the environment the "
    "kernel runs in."
)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel starts in the sandbox and talks over Unix sockets.

    Unix sockets live in the submission's folder, so the grader outside reaches a kernel
    whose network namespace has no way out.
    """

    def __init__(
        self,
        workdir: Path,
        probes: Path,
        limits: Limits,
        uid: int,
        zygote: Zygote | None = None,
        cgroup: KernelCgroup | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(kernel_name="python3", transport="ipc", **kwargs)
        self.uid = uid
        self.workdir = workdir
        self.probes = probes
        self.limits = limits
        self.zygote = zygote
        self.cgroup = cgroup
        self.ip = str(workdir / "kernel")
        self.connection_file = str(workdir / "kernel.json")

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        if self.zygote is not None:
            return command  # the zygote's sandbox, user id and limits apply to its child
        return sandbox_command(
            command, self.workdir, self.limits, self.uid, self.probes, self.cgroup
        )

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.zygote is not None and self.provisioner is None:
            self.kernel_id = self.kernel_id or str(uuid.uuid4())
            provisioner = ZygoteProvisioner(
                kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
            )
            provisioner.zygote, provisioner.workdir = self.zygote, self.workdir
            provisioner.uid, provisioner.limits = self.uid, self.limits
            provisioner.cgroup = self.cgroup
            self.provisioner = provisioner
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        # The kernel's own console chatter is not the grader's business.
        kw.update(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await super()._async_launch_kernel(kernel_cmd, **kw)

    def write_connection_file(self, **kwargs: Any) -> tuple[str, dict]:
        written = super().write_connection_file(**kwargs)
        if os.geteuid() == 0 and isolation() == "bwrap":
            os.chown(self.connection_file, self.uid, self.uid)
        return written


@dataclass(frozen=True)
class TimeLimit:
    """A probe's time limit: ``wall`` seconds on the clock on the wall, and for a timed rule
    ``cpu`` seconds of the kernel's own CPU time, read by ``clock`` from outside the kernel
    (its cgroup's count, :meth:`.cgroups.KernelCgroup.cpu_seconds`): how many other kernels
    run meanwhile, and how much CPU they take, does not change what the kernel used."""

    wall: float
    cpu: float | None = None
    clock: Callable[[], float | None] | None = None

    def describe(self) -> str:
        if self.cpu is not None:
            return f"used more than {self.cpu:g} s of the kernel's CPU time"
        return f"ran longer than {self.wall:g} s"


class GradingClient(NotebookClient):
    """nbclient with a cap on each cell's stored output."""

    def __init__(self, *args: Any, output_limit: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output_limit = output_limit
        self.output_sizes: dict[int, int] = {}
        self.truncated: set[int] = set()

    def output(self, outs, msg, display_id, cell_index):  # nbclient's signature
        size = len(json.dumps(msg.get("content", {})))
        used = self.output_sizes.get(cell_index, 0) + size
        self.output_sizes[cell_index] = used
        if used > self.output_limit:
            if cell_index not in self.truncated:
                self.truncated.add(cell_index)
                note = f"[output beyond {self.output_limit // 1024} KiB dropped by the grader]\n"
                outs.append(nbformat.v4.new_output("stream", name="stdout", text=note))
            return None
        return super().output(outs, msg, display_id, cell_index)

    async def async_execute_graded(self, judge: Any, student_view: bool = False) -> None:
        """Execute the notebook's cells in the kernel, except test cells: for each of those,
        ``await judge(index, cell)``, which decides it outside the kernel.

        With ``student_view``, each test cell first runs in the kernel too, as in the
        student's notebook; its outputs are kept in the cell's metadata
        (``student_view_outputs``), never graded: the course's own tests check that both
        views of every grading case agree.
        """
        async with self.async_setup_kernel():
            assert self.kc is not None
            await self.async_wait_for_reply(await ensure_async(self.kc.kernel_info()))
            await judge(None, None)
            for index, cell in enumerate(self.nb.cells):
                if anatomy.is_test_cell(cell):
                    if student_view:
                        await self.async_execute_cell(cell, index, execution_count=None)
                        cell.metadata[STUDENT_VIEW] = cell.outputs
                        cell.outputs = []
                    await judge(index, cell)
                else:
                    await self.async_execute_cell(
                        cell, index, execution_count=self.code_cells_executed + 1
                    )

    async def probe(self, code: str, limit: TimeLimit) -> None:
        """Execute ``code`` silently in the kernel; return when it has replied.

        Raises :class:`ProbeTimeout` once past ``limit`` (the kernel is interrupted first)
        and :class:`KernelGone` when the kernel dies meanwhile.
        """
        assert self.kc is not None and self.km is not None
        clock = limit.clock if limit.cpu is not None else None
        cpu_start = clock() if clock is not None else None
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit.wall
        interrupted = False
        over = ""
        while True:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=0.05))
            except Empty:
                try:
                    await self._async_check_alive()
                except DeadKernelError:
                    raise KernelGone("the kernel stopped answering") from None
                if interrupted:
                    if loop.time() > deadline:
                        raise ProbeTimeout(
                            f"the call {over} (the grader's time limit) and ignored the interrupt"
                        ) from None
                    continue
                used = clock() if clock is not None else None
                if used is not None and cpu_start is not None and limit.cpu is not None:
                    over = limit.describe() if used - cpu_start > limit.cpu else ""
                if not over and loop.time() > deadline:
                    over = TimeLimit(limit.wall).describe()
                if over:
                    await ensure_async(self.km.interrupt_kernel())
                    interrupted, deadline = True, loop.time() + 5
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                if interrupted:
                    raise ProbeTimeout(f"the call {over}, the grader's time limit")
                return


def _note_reply(cell: NotebookNode, cell_index: int, execute_reply: dict) -> None:
    """Give a cell that failed without an error output of its own (a time-out) one, as
    nbgrader does, so that it is not read as a pass."""
    content = execute_reply.get("content", {})
    if content.get("status") == "error":
        enames = {o.get("ename") for o in cell.outputs if o.get("output_type") == "error"}
        if content.get("ename") not in enames:
            cell.outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename=content.get("ename", "Error"),
                    evalue=content.get("evalue", ""),
                    traceback=content.get("traceback") or [content.get("ename", "Error")],
                )
            )


def grading_client(
    guarded: NotebookNode, km: SandboxedKernelManager, limits: Limits, start_lines: list[str]
) -> GradingClient:
    """The nbclient client of one guarded notebook, with the grader's limits."""
    client = GradingClient(
        guarded,
        km=km,
        output_limit=limits.output_kib * 1024,
        timeout=limits.cell_seconds,
        startup_timeout=120,
        allow_errors=True,
        interrupt_on_timeout=True,
        raise_on_iopub_timeout=True,
        record_timing=False,
        error_on_timeout={
            "ename": "CellTimeoutError",
            "evalue": f"the grader stopped the cell at its time limit of {limits.cell_seconds} s",
            "traceback": [
                f"CellTimeoutError: the grader stopped the cell at its time limit of "
                f"{limits.cell_seconds} s"
            ],
        },
        extra_arguments=[
            "--HistoryManager.hist_file=:memory:",
            *[f"--IPKernelApp.exec_lines={line}" for line in start_lines],
        ],
        resources={"metadata": {"path": str(km.workdir)}},
        on_cell_executed=_note_reply,
    )
    km.kernel_spec.interrupt_mode = "message"  # signals do not cross into the sandbox
    return client


class KernelSession:
    """The judge of one notebook's test cells: each runs (:func:`.verdict.run_test`) on a
    thread of its own, its probes reach the kernel through :attr:`channel`, and its verdict
    is kept by the test cell's index.

    The thread is never waited for, so a test stuck on a stopped kernel cannot hold the
    worker (its probes fail once the kernel is gone).
    """

    def __init__(
        self,
        client: GradingClient,
        probes: Path,
        uid: int | None,
        cell_seconds: float,
        name: str,
        cpu_clock: Callable[[], float | None] | None = None,
    ) -> None:
        self.client = client
        self.seconds = float(cell_seconds)
        self.cpu_clock = cpu_clock
        """The kernel's CPU time (its cgroup's), for timed rules; None: they use the wall
        clock."""
        self.tests = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"tests-{name}")
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop nbclient runs in: probes from the test thread are scheduled on it."""
        self.channel = Channel(probes, self.run_in_kernel, uid)
        self.verdicts: dict[int, TestVerdict] = {}

    def time_limit(self, seconds: float | None) -> TimeLimit:
        """A probe's limit: the cell's time limit, and for a timed rule (``seconds``, as
        ``check_without_loop_over_positions`` asks) that many seconds of the kernel's CPU
        time where its cgroup counts it, else of the clock on the wall (never more than the
        cell's time limit)."""
        if seconds is None:
            return TimeLimit(self.seconds)
        if self.cpu_clock is not None:
            return TimeLimit(self.seconds, float(seconds), self.cpu_clock)
        return TimeLimit(min(seconds, self.seconds))

    def run_in_kernel(self, code: str, seconds: float | None = None) -> None:
        """Run a probe's line in the kernel, from the test thread (:attr:`Channel.run`),
        within :meth:`time_limit`."""
        assert self.loop is not None, "no test cell is being judged"
        limit = self.time_limit(seconds)
        future = asyncio.run_coroutine_threadsafe(self.client.probe(code, limit), self.loop)
        try:
            future.result(timeout=limit.wall + 30)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise KernelGone("the grader lost the kernel") from None

    async def judge(self, index: int | None, cell: NotebookNode | None) -> None:
        """Judge the test cell ``cell`` (``None``: the handshake before the first cell)."""
        self.loop = asyncio.get_running_loop()
        if cell is None:
            await self.loop.run_in_executor(self.tests, _handshake, self.channel)
            return
        verdict = await self.loop.run_in_executor(
            self.tests, run_test, cell.source, anatomy.grade_id(cell), self.channel, self.seconds
        )
        cell.outputs = verdict.outputs
        self.verdicts[index] = verdict
        if verdict.stopped == "kernel died":
            raise DeadKernelError("the kernel died during a test")

    def close(self) -> None:
        self.tests.shutdown(wait=False, cancel_futures=True)


def _handshake(channel: Channel) -> None:
    """Before the first cell: the kernel must have loaded the grader's guard and probe."""
    try:
        for flag in ("__grader_guarded__", "__grader_ready__"):
            if channel.lookup(flag) is not True:
                raise ProbeError(f"{flag} is not set")
    except (NameError, ProbeError, ProbeTimeout, KernelGone) as error:
        raise GraderEnvironmentError(
            "the kernel cannot load the grader's code (instructor.classroom.kernel.guard and "
            f"kernel.probe): {type(error).__name__}: {error}. {INSTALL_HINT}"
        ) from None
