"""Run one sanitised submission notebook in a sandboxed kernel; judge its test cells outside.

This is the heavy step, run by a worker (a local process or a Dask worker on another
machine): it needs the notebook only, never the gradebook. What comes back is the executed
notebook, cell for cell the one it was given, plus an account of what happened.

The kernel runs the student's cells, and only those. Each test cell (its source restored from
the gradebook) runs here, in the worker's own process, when the notebook reaches it
(:mod:`.verdict`): calls of the graded functions are probes into the kernel
(:mod:`.probe`), whose answers come back as plain data. So the expected answers never enter
the kernel, and nothing the student's code does there can change a comparison or the verdict:
a test cell passes when its code, run here, raises nothing. nbgrader then scores the outputs
as usual. A test cell the notebook never reached (time limit, dead kernel) gets an error
output, so that its empty output is not read as a pass.

Where the grader is root with bubblewrap, the kernel is forked from the worker's zygote
(:mod:`.zygote`, :mod:`.forked_kernel`), which has imported torch and the rest once;
elsewhere each kernel starts from scratch in a sandbox of its own (:mod:`.sandbox`). Either
way, where cgroups can be written, the kernel has a cgroup of its own (:mod:`.cgroups`): its
limits as a whole, its CPU time for the timed rules, and every process it started, all
ended when the notebook ends.

The guard (:mod:`.guard`) still runs in the kernel before each test cell, as defence in
depth: what it finds replaced goes to the integrity report, and no grade depends on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from instructor import anatomy
from instructor.classroom.kernel.guard import REPORT_PREFIX
from instructor.paths import SOLUTIONS

from .forked_kernel import (
    Zygote,
    ZygoteError,
    zygote_available,
    zygote_for_worker,
)
from .kernel_session import (
    INSTALL_HINT,
    GradingClient,
    KernelSession,
    SandboxedKernelManager,
    grading_client,
)
from .reaper import reaped
from .records import (
    STUDENT_VIEW,
    ExecutionResult,
    GraderEnvironmentError,
    Outcome,
    ZeroedTest,
    ZeroKind,
)
from .sandbox import Limits, copy_font_cache, isolation, kernel_cgroup_for, sandbox_uid
from .verdict import BEST_EFFORT, TestVerdict

__all__ = [
    "STUDENT_VIEW",
    "GraderEnvironmentError",
    "check_kernel_environment",
    "execute_notebook",
    "unexecuted",
]


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


def _error_output(reason: str) -> NotebookNode:
    """The error output of a test cell the notebook never reached (nbgrader scores it 0)."""
    return nbformat.v4.new_output(
        "error",
        ename="TestNotRun",
        evalue=reason,
        traceback=[f"TestNotRun: {reason}"],
    )


def _start_lines(workdir: Path, probes: Path, figures: bool = False) -> list[str]:
    forbidden = [str(SOLUTIONS)]
    lines = [
        "import instructor.classroom.kernel.guard as __grader_guard__; "
        f"__grader_guard__.install({str(workdir)!r}, {tuple(forbidden)!r}, ({str(probes)!r},)); "
        "__grader_guarded__ = True",
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


def _prepare_probes(parent: Path | None) -> Path:
    """The grader's folder for the probes: the kernel may read it, and write only where
    :class:`.probe.Channel` lets it (never a name the grader writes to)."""
    probes = Path(tempfile.mkdtemp(prefix="probes-", dir=parent))
    os.chmod(probes, 0o755)
    return probes


def _prepare_workdir(nb_name: str, uid: int, zygote: Zygote | None) -> Path:
    workdir = Path(
        tempfile.mkdtemp(prefix=f"grade-{nb_name}-", dir=zygote.slots if zygote else None)
    )
    (workdir / ".matplotlib").mkdir()
    if zygote is None:  # a forked kernel has matplotlib and its fonts loaded already
        copy_font_cache(workdir / ".matplotlib")
    if os.geteuid() == 0 and isolation() == "bwrap":
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, uid, uid)
    os.chmod(workdir, 0o700)
    return workdir


async def _run(
    client: GradingClient,
    km: SandboxedKernelManager,
    limits: Limits,
    session: KernelSession,
    student_view: bool,
) -> Outcome:
    try:
        await asyncio.wait_for(
            client.async_execute_graded(session.judge, student_view),
            timeout=limits.wall_seconds,
        )
    except TimeoutError:
        return Outcome.TIME_LIMIT
    except DeadKernelError:
        return Outcome.KERNEL_DIED
    finally:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
    return Outcome.OK


def unexecuted(notebook: NotebookNode, outcome: Outcome, reason: str) -> ExecutionResult:
    """The result of a notebook that could not be executed: every test cell scores 0."""
    nb = nbformat.from_dict(json.loads(json.dumps(notebook)))
    zeroed = []
    for cell in nb.cells:
        if anatomy.is_test_cell(cell):
            cell.outputs = [_error_output(reason)]
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
    workdir = _prepare_workdir(name, uid, zygote)
    probes = _prepare_probes(zygote.slots if zygote else None)
    own_uid = os.geteuid() == 0 and isolation() == "bwrap"
    (workdir / f"{name}.ipynb").write_text(nbformat.writes(nb))
    cgroup = kernel_cgroup_for(limits)
    km = SandboxedKernelManager(workdir, probes, limits, uid, zygote, cgroup)
    client = grading_client(guarded, km, limits, _start_lines(workdir, probes, figures))
    clock = cgroup.cpu_seconds if cgroup is not None and cgroup.cpu_seconds() is not None else None
    session = KernelSession(
        client, probes, uid if own_uid else None, limits.cell_seconds, name, clock
    )

    detail = ""
    try:
        # Without a zygote, the kernel is this process's child: whatever it leaves running
        # is re-parented to this process and ended here (with a zygote, the zygote ends its
        # user's processes). The cgroup, where there is one, lists them all, whatever they
        # did to leave: they are ended first.
        with contextlib.nullcontext() if zygote else reaped():
            try:
                outcome = asyncio.run(_run(client, km, limits, session, student_view))
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
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(probes, ignore_errors=True)
    if outcome == Outcome.TIME_LIMIT:
        detail = f"the notebook ran longer than {limits.wall_seconds:g} s and the grader stopped it"
    elif outcome == Outcome.KERNEL_DIED:
        detail = "the kernel died (memory or process limit, or the code ended its own process)"
    judgement = _judge(guarded, plan, session.verdicts, outcome, detail)
    executed = [c for c in guarded.cells if "grader_guard" not in c.metadata]
    assert len(executed) == len(nb.cells)
    nb.cells = executed
    return ExecutionResult(
        notebook=dict(nb),
        outcome=outcome,
        detail=detail,
        zeroed=judgement.zeroed,
        restored=judgement.restored,
        events=judgement.events,
        truncated_cells=tuple(sorted(client.truncated)),
        seconds=time.perf_counter() - start,
        best_effort=judgement.best_effort,
        probes=sum(v.probes for v in session.verdicts.values()),
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
            cell.outputs = [_error_output(reason)]
            zeroed.append(ZeroedTest(test, reason, ZeroKind.NOT_RUN))
        elif verdict.broken_protocol:
            reason = f"{test}: the notebook broke the probe protocol ({verdict.broken_protocol})"
            zeroed.append(ZeroedTest(test, reason, ZeroKind.BROKEN_PROTOCOL))
        elif verdict.stopped == "time limit":
            reason = f"{test}: the grader stopped a call at its time limit"
            zeroed.append(ZeroedTest(test, reason, ZeroKind.STOPPED))
        if verdict is not None:
            best_effort += [f"{BEST_EFFORT[m]} in {test}" for m in verdict.best_effort]
    return Judgement(tuple(zeroed), tuple(restored), tuple(events), tuple(best_effort))
