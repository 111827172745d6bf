"""Run one sanitised submission notebook in a sandboxed kernel and judge its test cells.

This is the heavy step, run by a worker (a local process or a Dask worker on another
machine): it needs the notebook only, never the gradebook. What comes back is the executed
notebook, cell for cell the one it was given, plus an account of what happened.

A test cell keeps its outputs (and nbgrader then scores it as usual) only with positive
evidence that it ran honestly: the guard ran before it, the kernel's own reply says the cell
finished without an exception, and the guard after it found nothing replaced while it ran.
Otherwise the grader adds an error output that says why, so nbgrader scores it 0. A cell
that never ran (time limit, kernel killed) therefore scores 0 too, where nbgrader alone would
read its empty output as a pass.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from instructor import anatomy
from instructor.paths import SOLUTIONS

from .guard import REPORT_PREFIX
from .records import ExecutionResult, ZeroedTest
from .sandbox import Limits, isolation, sandbox_command, sandbox_uid

__all__ = ["execute_notebook", "unexecuted"]


@dataclass(frozen=True)
class GuardedTest:
    """A test cell between its two guard cells in the guarded notebook."""

    test: str
    at: int
    """The test cell's index in the guarded notebook (its guards: ``at - 1``, ``at + 1``)."""
    pre_nonce: str
    post_nonce: str


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel starts in the sandbox and talks over Unix sockets.

    Unix sockets live in the submission's folder, so the grader outside reaches a kernel
    whose network namespace has no way out.
    """

    def __init__(self, workdir: Path, limits: Limits, uid: int, **kwargs: Any) -> None:
        super().__init__(kernel_name="python3", transport="ipc", **kwargs)
        self.uid = uid
        self.workdir = workdir
        self.limits = limits
        self.ip = str(workdir / "kernel")
        self.connection_file = str(workdir / "kernel.json")

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        return sandbox_command(command, self.workdir, self.limits, self.uid)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        # The kernel's own console chatter is not the grader's business.
        kw.update(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await super()._async_launch_kernel(kernel_cmd, **kw)

    def write_connection_file(self, **kwargs: Any) -> tuple[str, dict]:
        written = super().write_connection_file(**kwargs)
        if os.geteuid() == 0 and isolation() == "bwrap":
            os.chown(self.connection_file, self.uid, self.uid)
        return written


class GradingClient(NotebookClient):
    """nbclient with a cap on each cell's stored output."""

    def __init__(self, *args: Any, output_limit: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output_limit = output_limit
        self.output_sizes: dict[int, int] = {}
        self.truncated: set[int] = set()

    def output(self, outs, msg, display_id, cell_index):  # noqa: ANN001 - nbclient's signature
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


def _with_guards(nb: NotebookNode) -> tuple[NotebookNode, list[GuardedTest]]:
    """A copy of ``nb`` with a guard cell before and after every test cell."""
    guarded = nbformat.from_dict(json.loads(json.dumps(nb)))
    cells = []
    plan: list[GuardedTest] = []
    for index, cell in enumerate(guarded.cells):
        if anatomy.is_test_cell(cell):
            test = anatomy.grade_id(cell)
            nonces = (secrets.token_hex(8), secrets.token_hex(8))
            plan.append(GuardedTest(test, len(cells) + 1, *nonces))
            for phase, nonce in zip(("pre", "post"), nonces, strict=True):
                guard = nbformat.v4.new_code_cell(
                    f"__grader_guard__.check({phase!r}, {test!r}, {nonce!r})"
                )
                guard.metadata["grader_guard"] = {"phase": phase, "test": test, "index": index}
                if phase == "pre":
                    cells.append(guard)
                    cells.append(cell)
                else:
                    cells.append(guard)
        else:
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


def _error_output(reason: str) -> NotebookNode:
    return nbformat.v4.new_output(
        "error",
        ename="GraderIntegrityError",
        evalue=reason,
        traceback=[f"GraderIntegrityError: {reason}"],
    )


def _start_lines(workdir: Path) -> list[str]:
    forbidden = [str(SOLUTIONS)]
    return [
        "import instructor.classroom.guard as __grader_guard__; "
        f"__grader_guard__.install({str(workdir)!r}, {tuple(forbidden)!r})"
    ]


def _prepare_workdir(nb_name: str, uid: int) -> Path:
    workdir = Path(tempfile.mkdtemp(prefix=f"grade-{nb_name}-"))
    (workdir / ".matplotlib").mkdir()
    # The font cache, copied so that matplotlib does not rebuild it in every kernel (~1 s).
    for cache in glob.glob(os.path.expanduser("~/.cache/matplotlib/fontlist-*.json")):
        shutil.copy(cache, workdir / ".matplotlib")
    if os.geteuid() == 0 and isolation() == "bwrap":
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, uid, uid)
    os.chmod(workdir, 0o700)
    return workdir


async def _run(client: GradingClient, km: SandboxedKernelManager, limits: Limits) -> str:
    try:
        await asyncio.wait_for(client.async_execute(), timeout=limits.wall_seconds)
    except TimeoutError:
        return "time limit"
    except DeadKernelError:
        return "kernel died"
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
    return "ok"


def unexecuted(notebook: NotebookNode, outcome: str, reason: str) -> ExecutionResult:
    """The result of a notebook that could not be executed: every test cell scores 0."""
    nb = nbformat.from_dict(json.loads(json.dumps(notebook)))
    zeroed = []
    for cell in nb.cells:
        if anatomy.is_test_cell(cell):
            cell.outputs = [_error_output(reason)]
            zeroed.append(ZeroedTest(anatomy.grade_id(cell), reason))
    return ExecutionResult(dict(nb), outcome=outcome, detail=reason, zeroed=tuple(zeroed))


def execute_notebook(
    notebook: dict[str, Any], name: str, limits: Limits | None = None
) -> ExecutionResult:
    """Execute a sanitised notebook in a sandboxed kernel.

    A failure of the grader's own machinery (not of the student's code) is tried once more
    in a fresh sandbox before it is recorded.

    Args:
        notebook: the notebook (nbformat 4 dict) after nbgrader's sanitising steps.
        name: the notebook's name (for the temporary folder's name and messages).
        limits: time, memory, process and output limits (defaults: :class:`Limits`).
    """
    result = _execute_once(notebook, name, limits or Limits())
    if result.outcome == "grader error":
        first = result.detail
        result = _execute_once(notebook, name, limits or Limits())
        result = replace(result, detail=(result.detail + f" (run twice: first {first})").strip())
    return result


def _execute_once(notebook: dict[str, Any], name: str, limits: Limits) -> ExecutionResult:
    start = time.perf_counter()
    nb = nbformat.from_dict(notebook)
    guarded, plan = _with_guards(nb)
    uid = sandbox_uid()
    workdir = _prepare_workdir(name, uid)
    (workdir / f"{name}.ipynb").write_text(nbformat.writes(nb))
    statuses: dict[int, str] = {}
    hidden: set[int] = set()
    first_code: dict[str, float] = {}

    def note_reply(cell: NotebookNode, cell_index: int, execute_reply: dict) -> None:
        content = execute_reply.get("content", {})
        statuses[cell_index] = content.get("status", "")
        if content.get("status") == "error":
            enames = {o.get("ename") for o in cell.outputs if o.get("output_type") == "error"}
            if content.get("ename") not in enames:
                # A time-out has no error output of its own (nbgrader adds one the same way);
                # any other exception without one was hidden by the submission.
                if content.get("ename") != "CellTimeoutError":
                    hidden.add(cell_index)
                cell.outputs.append(
                    nbformat.v4.new_output(
                        "error",
                        ename=content.get("ename", "Error"),
                        evalue=content.get("evalue", ""),
                        traceback=content.get("traceback") or [content.get("ename", "Error")],
                    )
                )
        if anatomy.has_tag(cell, anatomy.IMPORTS_TAG) and "seconds" not in first_code:
            first_code["seconds"] = time.perf_counter() - start

    km = SandboxedKernelManager(workdir, limits, uid)
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
            "evalue": f"the cell ran longer than {limits.cell_seconds} s",
            "traceback": [f"CellTimeoutError: the cell ran longer than {limits.cell_seconds} s"],
        },
        extra_arguments=[
            "--HistoryManager.hist_file=:memory:",
            *[f"--IPKernelApp.exec_lines={line}" for line in _start_lines(workdir)],
        ],
        resources={"metadata": {"path": str(workdir)}},
        on_cell_executed=note_reply,
    )
    km.kernel_spec.interrupt_mode = "message"  # signals do not cross into the sandbox
    detail = ""
    try:
        outcome = asyncio.run(_run(client, km, limits))
    except Exception as error:  # noqa: BLE001 - any failure is a recorded outcome, not a crash
        outcome = "grader error"
        detail = f"{type(error).__name__}: {error}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if outcome == "time limit":
        detail = f"the notebook ran longer than {limits.wall_seconds:g} s and was stopped"
    elif outcome == "kernel died":
        detail = "the kernel died (memory or process limit, or the code ended its own process)"
    judgement = _judge(guarded, plan, statuses, hidden, outcome, detail)
    executed = [c for c in guarded.cells if "grader_guard" not in c.metadata]
    assert len(executed) == len(nb.cells)
    nb.cells = executed
    return ExecutionResult(
        notebook=dict(nb),
        outcome=outcome,
        detail=detail,
        isolation=isolation(),
        zeroed=judgement.zeroed,
        restored=judgement.restored,
        events=judgement.events,
        truncated_cells=tuple(sorted(client.truncated)),
        seconds=time.perf_counter() - start,
        kernel_seconds=first_code.get("seconds", 0.0),
    )


@dataclass(frozen=True)
class Judgement:
    """What the guards' reports and the kernel's replies say about the test cells."""

    zeroed: tuple[ZeroedTest, ...]
    restored: tuple[str, ...]
    events: tuple[str, ...]


def _judge(
    guarded: NotebookNode,
    plan: list[GuardedTest],
    statuses: dict[int, str],
    hidden: set[int],
    outcome: str,
    detail: str,
) -> Judgement:
    """Add an error output to every test cell without evidence that it passed honestly."""
    zeroed: list[ZeroedTest] = []
    restored: list[str] = []
    events: list[str] = []
    for entry in plan:
        at, test = entry.at, entry.test
        pre = _guard_report(guarded.cells[at - 1], entry.pre_nonce)
        post = _guard_report(guarded.cells[at + 1], entry.post_nonce)
        cell = guarded.cells[at]
        for report in (pre, post):
            if report:
                events += [e for e in report["events"] if e not in events]
        if pre:
            restored += [f"{item} (before {test})" for item in pre["found"]]
        if post and post["found"]:
            restored += [f"{item} (while {test} ran)" for item in post["found"]]
        reason = None
        if at not in statuses:
            reason = f"{test} did not run ({outcome}: {detail})".rstrip(": )") + ")"
            if outcome == "ok":
                reason = f"{test} did not run"
        elif pre is None:
            reason = f"the grader's check before {test} did not run: its result cannot be trusted"
        elif at in hidden:
            reason = f"{test} failed, but its error was hidden from the output"
        elif statuses[at] != "ok":
            pass  # an ordinary failure: its error output already scores it 0
        elif post is None:
            reason = f"the grader's check after {test} did not run: its result cannot be trusted"
        elif post["found"]:
            reason = f"while {test} ran: " + "; ".join(post["found"])
        elif any("background thread" in item for item in pre["found"]):
            reason = f"a background thread was running during {test}"
        if reason:
            zeroed.append(ZeroedTest(test, reason))
            cell.outputs.append(_error_output(reason))
    return Judgement(tuple(zeroed), tuple(restored), tuple(events))
