"""One notebook run in a sandboxed kernel, cell by cell, its test cells judged outside it.

This is the heavy step, run by a worker (a local process or a Dask worker on another
machine): :func:`execute_notebook` needs the notebook only, never the gradebook, and
returns an :class:`~instructor.classroom.worker.ExecutionResult`: the executed notebook,
cell for cell the one it was given, and what happened.

- :class:`SandboxedKernelManager` starts the kernel in the sandbox (:mod:`.isolation`), or,
  as root with bubblewrap, forked from the worker's zygote (:mod:`.zygote`), which has
  imported torch once; where cgroups can be written, the kernel has one of its own (its
  limits as a whole, its CPU time, every process it started, ended with the notebook);
- :class:`GradingClient` (nbclient) runs the student's cells in the kernel, and only those;
  it runs the guard (:mod:`instructor.classroom.kernel.guard`, defence in depth: what it
  finds replaced goes to the integrity report) before each test cell, and a probe's line of
  code when a test asks;
- :class:`KernelSession` is the judge: after its :meth:`~KernelSession.handshake` (the kernel
  loaded the guard and the probe), each test cell, its source restored from the gradebook,
  runs in this process (:func:`.judge.run_test`), its calls of the graded functions probes
  into the kernel whose answers come back as plain data. A test cell passes when its code,
  run here, raises nothing; nbgrader then scores the outputs as usual. A test cell the
  notebook never reached (time limit, dead kernel) gets an error output, so that its empty
  output is not read as a pass.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

from instructor import anatomy
from instructor.classroom.kernel.guard import REPORT_PREFIX, student_cells
from instructor.classroom.worker import (
    STUDENT_VIEW,
    ExecutionResult,
    GraderEnvironmentError,
    KernelSeconds,
    Outcome,
    ZeroedTest,
    ZeroKind,
)
from instructor.classroom.worker.disk_bound import BoundedFolder
from instructor.classroom.worker.isolation import (
    KernelCgroup,
    Limits,
    copy_font_cache,
    kernel_cgroup,
    kernel_environment,
    kernels_leave_root,
    reaped,
    sandbox_command,
    sandbox_uid,
    work_folder,
)
from instructor.classroom.worker.judge import (
    BEST_EFFORT,
    Channel,
    KernelGone,
    ProbeError,
    ProbeTimeout,
    TestVerdict,
    error_output,
    run_test,
)
from instructor.classroom.worker.output_bound import (
    Charge,
    OutputBudget,
    output_size,
    update_growth,
)
from instructor.classroom.worker.zygote import (
    Zygote,
    ZygoteError,
    ZygoteProvisioner,
    zygote_available,
    zygote_for_worker,
)
from instructor.paths import SOLUTIONS

__all__ = ["check_kernel_environment", "execute_notebook", "unexecuted"]


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
        # Without bubblewrap the kernel inherits this environment, and the machine's /tmp:
        # its temporary files and its home are its working folder, as in the sandbox
        # (isolation.kernel_environment), where they are bounded with it.
        own = kernel_environment(self.workdir)
        homes = ("HOME", "TMPDIR", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR")
        kw["env"] = {**kw.get("env", os.environ), **{key: own[key] for key in homes}}
        await super()._async_launch_kernel(kernel_cmd, **kw)

    def write_connection_file(self, **kwargs: Any) -> tuple[str, dict]:
        written = super().write_connection_file(**kwargs)
        if kernels_leave_root():
            os.chown(self.connection_file, self.uid, self.uid)
        return written


@dataclass(frozen=True)
class TimeLimit:
    """A probe's time limit: ``wall`` seconds on the clock on the wall, and for a timed rule
    ``cpu`` seconds of the kernel's own CPU time, read by ``clock`` from outside the kernel
    (its cgroup's count, :meth:`.isolation.KernelCgroup.cpu_seconds`): how many other kernels
    run meanwhile, and how much CPU they take, does not change what the kernel used."""

    wall: float
    cpu: float | None = None
    clock: Callable[[], float | None] | None = None

    def describe(self) -> str:
        if self.cpu is not None:
            return f"used more than {self.cpu:g} s of the kernel's CPU time"
        return f"ran longer than {self.wall:g} s"


DISK_LOOK_SECONDS = 0.1
"""How often the grader looks at a kernel's bounded folders while its cells run."""


class GradingClient(NotebookClient):
    """nbclient with its outputs bounded per cell and per notebook, display updates included
    (:mod:`.output_bound`), and its kernel's bounded folders watched after every cell."""

    def __init__(self, *args: Any, budget: OutputBudget, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget = budget
        self.disks: list[BoundedFolder] = []
        self._at: tuple[int, NotebookNode] | None = None
        """The cell whose messages are processed now (an update names no cell)."""
        self.ready_at: float | None = None
        """``time.perf_counter()`` when the kernel had answered the handshake."""
        self.cell_seconds = 0.0
        self.test_seconds = 0.0

    @property
    def truncated(self) -> set[int]:
        return self.budget.truncated

    def _charge(self, outs: list, cell_index: int, size: int) -> bool:
        """Whether an output of ``size`` bytes may go into the notebook; if not, the note
        that says so (once) goes into the cell ``outs`` belongs to."""
        guard = "grader_guard" in self.nb.cells[cell_index].metadata
        charge = self.budget.charge(cell_index, size, stored=not guard)
        if charge is Charge.KEPT:
            return True
        if note := self.budget.refusal_note(cell_index, charge):
            outs.append(nbformat.v4.new_output("stream", name="stdout", text=note))
        return False

    def process_message(self, msg, cell, cell_index):  # nbclient's signature
        self._at = (cell_index, cell)
        return super().process_message(msg, cell, cell_index)

    def output(self, outs, msg, display_id, cell_index):  # nbclient's signature
        if not self._charge(outs, cell_index, output_size(msg.get("content", {}))):
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
        # An update rewrites every output shown under its id, in any cell: it costs what it
        # adds to each of them.
        if self._at is not None:
            content = msg.get("content", {})
            shown = [
                self.nb.cells[cell].outputs[at]
                for cell, places in self._display_id_map.get(display_id, {}).items()
                for at in places
            ]
            growth = update_growth(content, shown)
            index, cell = self._at
            if growth and not self._charge(cell.outputs, index, growth):
                return
        super()._update_display_id(display_id, msg)

    def watch_disks(self) -> None:
        """Look whether the kernel has filled a bounded folder (it may empty it later)."""
        for disk in self.disks:
            disk.check()

    async def async_execute_graded(self, judge: KernelSession, student_view: bool = False) -> None:
        """Execute the notebook's cells in the kernel, except test cells: for each of those,
        ``await judge.judge(index, cell)``, which decides it outside the kernel
        (after :meth:`KernelSession.handshake`, before the first cell).

        With ``student_view``, each test cell first runs in the kernel too, as in the
        student's notebook; its outputs are kept in the cell's metadata
        (``student_view_outputs``), never graded: the course's own tests check that both
        views of every grading case agree.
        """
        async with self.async_setup_kernel():
            assert self.kc is not None
            await self.async_wait_for_reply(await ensure_async(self.kc.kernel_info()))
            await judge.handshake()
            self.ready_at = time.perf_counter()
            watcher = asyncio.create_task(self._watch_disks())
            try:
                await self._execute_cells(judge, student_view)
            finally:
                watcher.cancel()

    async def _watch_disks(self) -> None:
        """While the cells run: a kernel that fills a bounded folder and empties it within
        one cell is still seen full (a look costs one statvfs)."""
        while self.disks:
            self.watch_disks()
            await asyncio.sleep(DISK_LOOK_SECONDS)

    async def _execute_cells(self, judge: KernelSession, student_view: bool) -> None:
        for index, cell in enumerate(self.nb.cells):
            began = time.perf_counter()
            if anatomy.is_test_cell(cell):
                if student_view:
                    await self.async_execute_cell(cell, index, execution_count=None)
                    cell.metadata[STUDENT_VIEW] = cell.outputs
                    cell.outputs = []
                await judge.judge(index, cell)
                self.test_seconds += time.perf_counter() - began
            else:
                await self.async_execute_cell(
                    cell, index, execution_count=self.code_cells_executed + 1
                )
                self.cell_seconds += time.perf_counter() - began
            self.watch_disks()

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
        budget=OutputBudget(limits.output_kib * 1024, limits.notebook_output_kib * 1024),
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
        # Widgets' states are never written into the graded notebook: not kept either, so
        # that a kernel's comm messages cannot fill the grader's memory.
        store_widget_state=False,
    )
    km.kernel_spec.interrupt_mode = "message"  # signals do not cross into the sandbox
    return client


class KernelSession:
    """The judge of one notebook's test cells: each runs (:func:`.judge.run_test`) on a
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

    async def handshake(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.loop.run_in_executor(self.tests, _handshake, self.channel)

    async def judge(self, index: int, cell: NotebookNode) -> None:
        """Judge the test cell ``cell``, the notebook's cell ``index``."""
        self.loop = asyncio.get_running_loop()
        verdict = await self.loop.run_in_executor(
            self.tests, run_test, cell.source, anatomy.grade_id(cell), self.channel
        )
        cell.outputs = verdict.outputs
        self.verdicts[index] = verdict
        if verdict.stopped == Outcome.KERNEL_DIED:
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


@dataclass(frozen=True)
class GuardedTest:
    """A test cell after its guard cell in the guarded notebook."""

    test: str
    at: int
    """The test cell's index in the guarded notebook (its guard: ``at - 1``)."""
    nonce: str


def _with_guards(nb: NotebookNode) -> tuple[NotebookNode, list[GuardedTest]]:
    """A copy of ``nb`` with a guard cell before every test cell."""
    guarded = nbformat.from_dict(json.loads(json.dumps(nb)))
    cells = []
    plan: list[GuardedTest] = []
    for index, cell in enumerate(guarded.cells):
        if anatomy.is_test_cell(cell):
            test = anatomy.grade_id(cell)
            nonce = secrets.token_hex(8)
            guard = nbformat.v4.new_code_cell(f"__grader_guard__.check('pre', {test!r}, {nonce!r})")
            guard.metadata["grader_guard"] = {"phase": "pre", "test": test, "index": index}
            cells.append(guard)
            plan.append(GuardedTest(test, len(cells), nonce))
        cells.append(cell)
    guarded.cells = cells
    return guarded, plan


def _guard_report(cell: NotebookNode, nonce: str) -> dict | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            for line in output.get("text", "").splitlines():
                if line.startswith(REPORT_PREFIX):
                    try:
                        report = json.loads(line[len(REPORT_PREFIX) :])
                    except ValueError:
                        continue
                    if report.get("nonce") == nonce:
                        return report
    return None


def _start_lines(
    workdir: Path, probes: Path, figures: bool = False, student: tuple[str, ...] | None = None
) -> list[str]:
    forbidden = [str(SOLUTIONS)]
    lines = [
        "import instructor.classroom.kernel.guard as __grader_guard__; "
        f"__grader_guard__.install({str(workdir)!r}, {tuple(forbidden)!r}, ({str(probes)!r},), "
        f"{student!r}); __grader_guarded__ = True",
        "import instructor.classroom.kernel.probe as __grader_probe__; __grader_ready__ = True",
    ]
    if not figures:
        # No grade depends on a drawn figure, and drawing them (Agg, then PNG) is a large
        # part of a notebook's time: figures are shown as their text, "<Figure size ...>".
        lines.append(
            "from matplotlib_inline.config import InlineBackend as __grader_inline__; "
            "__grader_inline__.instance().figure_formats = set(); del __grader_inline__"
        )
    return lines


def _bounded(
    folder: Path, zygote: Zygote | None, limits: Limits, uid: int | None = None
) -> BoundedFolder | None:
    """``folder`` (the working folder, or with ``uid`` None the probes') as a bounded one,
    where the grader can mount it and a zygote's sandbox would see it: None elsewhere."""
    if zygote is not None and not zygote.shared:
        return None
    if uid is None:
        return BoundedFolder.mount(
            folder, limits.probe_disk(), os.geteuid(), 0o755, "probes' folder"
        )
    owner = uid if kernels_leave_root() else os.geteuid()
    return BoundedFolder.mount(folder, limits.disk(), owner, 0o700, "working folder")


def _prepare_workdir(
    uid: int, zygote: Zygote | None, limits: Limits
) -> tuple[Path, BoundedFolder | None]:
    # A name of fixed length, whatever the notebook's: the kernel's Unix sockets are in this
    # folder, and a socket's path may not be longer than 107 bytes.
    workdir = Path(
        tempfile.mkdtemp(prefix="notebook-", dir=zygote.slots if zygote else work_folder())
    )
    disk = _bounded(workdir, zygote, limits, uid)
    (workdir / ".matplotlib").mkdir()
    if zygote is None:  # a forked kernel has matplotlib and its fonts loaded already
        copy_font_cache(workdir / ".matplotlib")
    if kernels_leave_root():
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, uid, uid)
    os.chmod(workdir, 0o700)
    return workdir, disk


async def _run(
    client: GradingClient,
    km: SandboxedKernelManager,
    limits: Limits,
    session: KernelSession,
    student_view: bool,
) -> tuple[Outcome, str]:
    """How the notebook's execution ended, and the time limit that stopped it ("" if none)."""
    notebook_limit = asyncio.timeout(limits.wall_seconds)
    try:
        async with notebook_limit:
            await client.async_execute_graded(session, student_view)
    except (TimeoutError, DeadKernelError) as stop:
        # nbclient reads any cancellation of a cell as a dead kernel, the cancellation of
        # the notebook's limit too: the limit itself says whether it expired.
        if notebook_limit.expired():
            return Outcome.TIME_LIMIT, (
                f"the notebook ran longer than {limits.wall_seconds:g} s and the grader stopped it"
            )
        if isinstance(stop, CellTimeoutError):
            # Interrupted at its limit, the cell did not end (a loop that catches
            # KeyboardInterrupt, a main thread that never gets the GIL back).
            return Outcome.TIME_LIMIT, (
                f"a cell ran past its {limits.cell_seconds}-s limit and ignored the interrupt: "
                "the grader stopped it"
            )
        if isinstance(stop, DeadKernelError):
            return Outcome.KERNEL_DIED, ""
        raise
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
        # nbclient stops only the clients of kernel managers it made: this one's heartbeat
        # thread and zmq context would stay open in the worker, ten descriptors per kernel.
        if client.kc is not None:
            client.kc.stop_channels()
    return Outcome.OK, ""


def unexecuted(notebook: NotebookNode, outcome: Outcome, reason: str) -> ExecutionResult:
    """The result of a notebook that could not be executed: every test cell scores 0."""
    nb = nbformat.from_dict(json.loads(json.dumps(notebook)))
    zeroed = []
    for cell in nb.cells:
        if anatomy.is_test_cell(cell):
            cell.outputs = [error_output("TestNotRun", reason)]
            zeroed.append(ZeroedTest(anatomy.grade_id(cell), reason, ZeroKind.NOT_RUN))
    return ExecutionResult(dict(nb), outcome=outcome, detail=reason, zeroed=tuple(zeroed))


def execute_notebook(
    notebook: dict[str, Any],
    name: str,
    limits: Limits | None = None,
    student_view: bool = False,
    figures: bool = False,
) -> ExecutionResult:
    """Execute a sanitised notebook in a sandboxed kernel.

    A failure of the grader's own machinery (not of the student's code) is tried once more
    in a fresh sandbox before it is recorded.

    Args:
        notebook: the notebook (nbformat 4 dict) after nbgrader's sanitising steps.
        name: the notebook's name (for the temporary folder's name and messages).
        limits: time, memory, process and output limits (defaults: :class:`Limits`).
        student_view: also run each test cell in the kernel (see
            :meth:`GradingClient.async_execute_graded`); for the course's own tests.
        figures: draw the notebook's figures (PNG outputs); by default they are left as
            their text, ``<Figure size ...>``: no grade depends on them.
    """
    result = _execute_once(notebook, name, limits or Limits(), student_view, figures)
    if result.outcome == Outcome.GRADER_ERROR:
        first = result.detail
        result = _execute_once(notebook, name, limits or Limits(), student_view, figures)
        result = replace(result, detail=(result.detail + f" (run twice: first {first})").strip())
    return result


def _execute_once(
    notebook: dict[str, Any],
    name: str,
    limits: Limits,
    student_view: bool = False,
    figures: bool = False,
) -> ExecutionResult:
    start = time.perf_counter()
    nb = nbformat.from_dict(notebook)
    guarded, plan = _with_guards(nb)
    uid = sandbox_uid()
    zygote = None
    if zygote_available():
        try:
            zygote = zygote_for_worker()
        except ZygoteError as error:
            raise GraderEnvironmentError(
                f"the kernel cannot load the grader's code: {error}. {INSTALL_HINT}"
            ) from None
    workdir, disk = _prepare_workdir(uid, zygote, limits)
    # The kernel may read the probes' folder, and write only where Channel lets it.
    probes = Path(tempfile.mkdtemp(prefix="probes-", dir=zygote.slots if zygote else work_folder()))
    disks = [d for d in (disk, _bounded(probes, zygote, limits)) if d is not None]
    os.chmod(probes, 0o755)
    (workdir / f"{name}.ipynb").write_text(nbformat.writes(nb))
    cgroup = kernel_cgroup(limits.memory_mib * 1024 * 1024, limits.cores, limits.processes)
    km = SandboxedKernelManager(workdir, probes, limits, uid, zygote, cgroup)
    client = grading_client(
        guarded, km, limits, _start_lines(workdir, probes, figures, student_cells(nb.cells))
    )
    client.disks = disks
    clock = cgroup.cpu_seconds if cgroup is not None and cgroup.cpu_seconds() is not None else None
    session = KernelSession(
        client, probes, uid if kernels_leave_root() else None, limits.cell_seconds, name, clock
    )

    detail = ""
    try:
        # Without a zygote, the kernel is this process's child: whatever it leaves running
        # is re-parented to this process and ended here (with a zygote, the zygote ends its
        # user's processes). The cgroup, where there is one, lists them all, whatever they
        # did to leave: they are ended first.
        with contextlib.nullcontext() if zygote else reaped():
            try:
                outcome, detail = asyncio.run(_run(client, km, limits, session, student_view))
            finally:
                if cgroup is not None:
                    cgroup.kill()
    except GraderEnvironmentError as error:
        outcome, detail = Outcome.GRADER_ERROR, str(error)
    except Exception as error:  # noqa: BLE001 - any failure is a recorded outcome, not a crash
        outcome = Outcome.GRADER_ERROR
        detail = f"{type(error).__name__}: {error}"
    finally:
        session.close()
        if cgroup is not None:
            cgroup.close()
        bounds = [client.budget.note(), *(d.note() for d in disks)]
        for bounded in disks:
            bounded.release()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(probes, ignore_errors=True)
    if outcome == Outcome.KERNEL_DIED:
        detail = "the kernel died (memory or process limit, or the code ended its own process)"
    judgement = _judge(guarded, plan, session.verdicts, outcome, detail)
    executed = [c for c in guarded.cells if "grader_guard" not in c.metadata]
    assert len(executed) == len(nb.cells)
    nb.cells = executed
    seconds = time.perf_counter() - start
    ready = (client.ready_at - start) if client.ready_at is not None else seconds
    running = client.cell_seconds + client.test_seconds
    return ExecutionResult(
        notebook=dict(nb),
        outcome=outcome,
        detail=detail,
        zeroed=judgement.zeroed,
        restored=judgement.restored,
        events=judgement.events,
        truncated_cells=tuple(sorted(client.truncated)),
        bounds=tuple(note for note in bounds if note),
        seconds=seconds,
        best_effort=judgement.best_effort,
        probes=sum(v.probes for v in session.verdicts.values()),
        seen=tuple(v.seen for _, v in sorted(session.verdicts.items()) if v.seen is not None),
        spent=KernelSeconds(
            start=ready,
            cells=client.cell_seconds,
            tests=client.test_seconds,
            finish=max(0.0, seconds - ready - running),
        ),
    )


def check_kernel_environment(limits: Limits | None = None) -> None:
    """Start one sandboxed kernel on an empty notebook and raise
    :class:`GraderEnvironmentError` if it cannot load the grader's code (run once, before a
    class is graded, so that no student is scored in a broken environment)."""
    result = _execute_once(nbformat.v4.new_notebook(), "environment-check", limits or Limits())
    if result.outcome != Outcome.OK:
        raise GraderEnvironmentError(result.detail or result.outcome)


@dataclass(frozen=True)
class Judgement:
    """What the verdicts and the guard's reports say about the test cells."""

    zeroed: tuple[ZeroedTest, ...]
    restored: tuple[str, ...]
    events: tuple[str, ...]
    best_effort: tuple[str, ...]


def _judge(
    guarded: NotebookNode,
    plan: list[GuardedTest],
    verdicts: dict[int, TestVerdict],
    outcome: str,
    detail: str,
) -> Judgement:
    """Notes for the integrity report; an error output for every test cell not reached."""
    zeroed: list[ZeroedTest] = []
    restored: list[str] = []
    events: list[str] = []
    best_effort: list[str] = []
    for entry in plan:
        at, test = entry.at, entry.test
        report = _guard_report(guarded.cells[at - 1], entry.nonce)
        verdict = verdicts.get(at)
        if report:
            events += [e for e in report["events"] if e not in events]
            restored += [f"{item} (before {test})" for item in report["found"]]
        elif verdict is not None:
            events.append(f"kept the grader's guard from reporting before {test}")
        cell = guarded.cells[at]
        if verdict is None:
            reason = f"{test} did not run ({outcome}: {detail})".rstrip(": )") + ")"
            if outcome == Outcome.OK:
                reason = f"{test} did not run"
            cell.outputs = [error_output("TestNotRun", reason)]
            zeroed.append(ZeroedTest(test, reason, ZeroKind.NOT_RUN))
        elif verdict.broken_protocol:
            reason = f"{test}: the notebook broke the probe protocol ({verdict.broken_protocol})"
            zeroed.append(ZeroedTest(test, reason, ZeroKind.BROKEN_PROTOCOL))
        elif verdict.stopped == Outcome.TIME_LIMIT:
            reason = f"{test}: the grader stopped a call at its time limit"
            zeroed.append(ZeroedTest(test, reason, ZeroKind.STOPPED))
        if verdict is not None:
            best_effort += [f"{BEST_EFFORT[m]} in {test}" for m in verdict.best_effort]
    return Judgement(tuple(zeroed), tuple(restored), tuple(events), tuple(best_effort))
