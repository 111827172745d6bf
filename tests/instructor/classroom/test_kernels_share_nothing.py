"""Kernels that share nothing (issue 32), with and without bubblewrap (the module fixture
``mode``): what one kernel leaves (SysV and POSIX IPC objects, a daemon, spinners) does not
reach the next one nor outlive its notebook; a kernel is limited as a whole (memory and
processes of all its children together); and a kernel that spins 16 threads, a daemon and
processes up to its limit while an honest notebook 08 is graded leaves its score at 11/11,
and then ends, while a loop over positions that forges the in-kernel count still fails the
timed rule, measured in the kernel's own CPU time.

The attacks are those of the hostile corpus (``tests/support/hostile.py``); every process
they start carries :data:`LEFTOVER` on its command line, so that this process can see any
that survived. Needs root (cgroups, as the grader has them in a container or CI machine).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import ExecutionResult, HandInSummary
from instructor.classroom.worker import isolation as cgroups
from instructor.classroom.worker import session as execute
from instructor.classroom.worker.isolation import Isolation, Limits
from instructor.scratch_course import ScratchCourse
from support.graded_class import generated, graded_with, isolation_params
from support.hostile import (
    ESCAPED_DAEMON,
    FIND_IPC,
    IPC_KEYS,
    LEAVE_IPC,
    LEFTOVER,
    LEFTOVER_GROUP,
    MEMORY_HOG_CHILD,
    POSIX_NAME,
    SPINNER_POOL,
    SPINNING_THREADS,
)

pytestmark = [
    pytest.mark.xdist_group(LEFTOVER_GROUP),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
]

NOTEBOOK_08 = "08_rnn_vs_attention"
NUL = bytes(1)


@pytest.fixture(scope="module", params=isolation_params(LEFTOVER_GROUP, apart=False))
def mode(request: pytest.FixtureRequest) -> Iterator[Isolation]:
    """The isolation the tests run with: bubblewrap (the zygote, as root), or none. Both in
    one xdist group (:data:`LEFTOVER_GROUP`): each looks for the other's leftovers."""
    try:
        with graded_with(request.param):
            if cgroups.layout().missing():
                pytest.skip(f"cgroups cannot isolate here: {cgroups.layout().missing()}")
            yield request.param
    finally:
        Path(f"/dev/shm{POSIX_NAME}").unlink(missing_ok=True)


def _leftovers() -> list[str]:
    """The processes still running that a hostile kernel started, seen from here."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if LEFTOVER.encode() in cmdline and state != "Z":
                found.append(f"{entry.name}: {cmdline.replace(NUL, b' ')!r}")
    return found


def _run(cells: list[str], limits: Limits) -> ExecutionResult:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    return execute.execute_notebook(dict(notebook), "kernel", limits)


def _printed(result: ExecutionResult, prefix: str) -> str:
    """The rest of the last line printed after ``prefix`` by any cell. A cell's printed text
    is the sum of its stream outputs: ``print("forked:", n)`` writes four times, and a kernel
    short of CPU may flush between them (seen: ``forked:`` in one output, `` 57`` in the next)."""
    lines = [
        line[len(prefix) :]
        for cell in result.notebook["cells"]
        for line in "".join(o.get("text", "") for o in cell.get("outputs", [])).splitlines()
        if line.startswith(prefix)
    ]
    assert lines, f"nothing printed after {prefix!r}: {result.notebook['cells']}"
    return lines[-1].strip()


def test_what_a_kernel_leaves_does_not_reach_the_next(mode: Isolation, limits: Limits) -> None:
    """SysV objects, POSIX queues and (with bubblewrap) POSIX shared memory outlive their
    process; the next kernel (from the same zygote, with bubblewrap) finds none of them."""
    left = _run([LEAVE_IPC], limits)
    assert left.outcome == "ok", left.detail
    limit = "import resource\nprint('msgqueue:', resource.getrlimit(resource.RLIMIT_MSGQUEUE))"
    after = _run([FIND_IPC, limit], limits)
    assert _printed(after, "msgqueue:") == "(0, 0)"  # where no namespace is: no queue at all
    found = json.loads(_printed(after, "found: "))
    keys = [str(key) for key in IPC_KEYS]
    assert not [k for kind in ("shm", "sem", "msg") for k in found[kind] if k in keys], found
    assert found["mqueue"] is False, found
    if mode is Isolation.BWRAP:
        # Without bubblewrap every file the grader can read is shared (docs/instructors.md),
        # /dev/shm included.
        assert found["posix_shm"] is False, found


def test_nothing_a_kernel_starts_outlives_it(mode: Isolation, limits: Limits) -> None:
    """A daemon (double fork, session of its own) and 50 spinners, each in a session of its
    own: all gone when the notebook ends."""
    # One cell, with time: each spinner started leaves the kernel less of its one core to
    # start the next (30 s were not always enough on a loaded machine).
    limits = replace(limits, wall_seconds=150, cell_seconds=90)
    result = _run([ESCAPED_DAEMON + SPINNER_POOL], limits)
    assert result.outcome == "ok", result.detail
    assert int(_printed(result, "spinners:")) > 10
    assert _leftovers() == []


FORKS = """\
import os, time
forked = 0
for _ in range(200):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        forked += 1
    except OSError:
        break
print("forked:", forked)
"""


def test_a_kernel_is_limited_as_a_whole(mode: Isolation, limits: Limits) -> None:
    """Children that each stay within the per-process limits are stopped together: the
    memory of all of them (some are killed), and their number (as root without bubblewrap,
    RLIMIT_NPROC stops nothing: only the cgroup does)."""
    # Under its memory limit the kernel's files are read again and again: slow, not stopped.
    result = _run([MEMORY_HOG_CHILD, FORKS], replace(limits, wall_seconds=120, cell_seconds=60))
    assert result.outcome == "ok", result.detail
    hogs = json.loads(_printed(result, "hogs:"))
    assert -9 in hogs, f"no child was stopped for memory: {hogs}"
    assert int(_printed(result, "forked:")) < limits.processes


# The alarm first: the OS ends the kernel 25 s after its first cell starts (the others are
# graded by then: about 11 s on an idle machine), whatever its threads and processes do. (A
# main thread that slept and then called os._exit had to win the GIL from 16 threads first;
# the kernel ran to the 60-s cell limit.) Then the threads and the daemon: the pool forks up
# to the kernel's process limit, after which neither could start.
SPINNER_08 = (
    "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_DFL)\nsignal.alarm(25)\n"
    + SPINNING_THREADS
    + ESCAPED_DAEMON
    + SPINNER_POOL
    + "time.sleep(60)\n"
)
LOOP_08 = '''\
def causal_linear_attention(Q, K, V, eps=1e-6):
    """Right; a Python loop over the positions where the in-kernel count does not look."""
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    if Q.shape[-2] <= 256:
        S = (phi_k.unsqueeze(-1) * V.unsqueeze(-2)).cumsum(dim=-3)
        z = phi_k.cumsum(dim=-2)
        return (phi_q.unsqueeze(-1) * S).sum(-2) / ((phi_q * z).sum(-1, keepdim=True) + eps)
    S = torch.zeros(Q.shape[-1], V.shape[-1], dtype=Q.dtype)
    z = torch.zeros(Q.shape[-1], dtype=Q.dtype)
    rows = []
    for i in range(Q.shape[-2]):
        S = S + phi_k[i, :, None] * V[i, None, :]
        z = z + phi_k[i]
        rows.append((phi_q[i, :, None] * S).sum(-2) / ((phi_q[i] * z).sum(-1, keepdim=True) + eps))
    return torch.stack(rows)
'''


@pytest.fixture(scope="module")
def course08(tmp_path_factory: pytest.TempPathFactory) -> ScratchCourse:
    return generated(tmp_path_factory, NOTEBOOK_08)


def _submit(course: ScratchCourse, student: str, notebook: nbformat.NotebookNode) -> None:
    folder = course.root / "submitted" / student / NOTEBOOK_08
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
    nbformat.write(notebook, folder / f"{NOTEBOOK_08}.ipynb")


def test_a_spinning_kernel_leaves_the_others_scores_unchanged(
    mode: Isolation, course08: ScratchCourse, tmp_path: Path
) -> None:
    """Two workers: the spinner (first in order) is graded next to the honest student, then
    next to the looping one; the timed rule of 08 counts each kernel's own CPU time."""
    course = course08.clone(tmp_path / "class")
    spinner = course.released()
    first = anatomy.solution_cells(spinner)[0]
    first.source = SPINNER_08 + "\n" + first.source
    _submit(course, "a_spinner", spinner)
    _submit(course, "b_honest", course.solved(demos=False))
    _submit(course, "c_looping", course.solved({"causal_linear_attention": LOOP_08}, demos=False))
    # The cell limit is the wall-clock limit of every call, the timed rule's too: well above
    # the honest call's CPU time however many kernels share the CPU.
    limits = Limits(wall_seconds=240, cell_seconds=60, memory_mib=3072, output_kib=256)
    grader = ClassGrader(course.root, workers=2, limits=limits, progress=False, feedback=False)
    summaries: dict[str, HandInSummary] = {
        s.student: s for s in grader.grade([NOTEBOOK_08], log=lambda line: None)
    }
    honest = summaries["b_honest"].notebooks[NOTEBOOK_08]
    assert (honest.score, honest.outcome) == (honest.max_score, "ok"), honest
    looping = summaries["c_looping"].notebooks[NOTEBOOK_08]
    lost = {c.cell for c in looping.cells if c.score != c.max_score}
    assert lost == {"test_causal_linear_attention"}, looping
    autograded = course.root / "autograded" / "c_looping" / NOTEBOOK_08 / f"{NOTEBOOK_08}.ipynb"
    cell = next(
        c
        for c in nbformat.read(autograded, 4).cells
        if anatomy.grade_id(c) == "test_causal_linear_attention"
    )
    assert "did not end within 5 s" in json.dumps(cell.outputs), cell.outputs
    assert summaries["a_spinner"].score == 0
    assert _leftovers() == []


def test_the_grader_says_what_is_not_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no cgroup can be written, the grader's first line names what is not isolated."""
    from instructor.classroom.worker import isolation as sandbox

    monkeypatch.setattr(sandbox, "layout", lambda: cgroups.Layout())
    note = sandbox.isolation_note()
    assert "no cgroups" in note and "NOT isolated" in note
    for part in cgroups.WHAT.values():
        assert part in note
    monkeypatch.setattr(sandbox, "isolation", lambda: "none")
    monkeypatch.setattr(sandbox, "_unshare_ipc", lambda: False)
    note = sandbox.isolation_note()
    assert "no bubblewrap sandbox" in note and "IPC namespace per kernel" in note


def test_a_timed_rule_counts_the_kernel_s_cpu_time_where_it_has_a_cgroup(tmp_path: Path) -> None:
    """A probe with a time of its own (``check_without_loop_over_positions``) is limited in
    the kernel's CPU time where there is a clock, and the cell's limit on the clock stays;
    without one, both are on the clock, as before."""
    from instructor.classroom.worker.session import KernelSession, TimeLimit

    def clock() -> float:
        return 1.0

    timed = KernelSession(None, tmp_path, None, 60, "timed", clock)  # type: ignore[arg-type]
    plain = KernelSession(None, tmp_path, None, 3, "plain")  # type: ignore[arg-type]
    try:
        assert timed.time_limit(5.0) == TimeLimit(60.0, 5.0, clock)
        assert timed.time_limit(None) == TimeLimit(60.0)
        assert plain.time_limit(5.0) == TimeLimit(3.0)
        assert TimeLimit(60.0, 5.0, clock).describe() == (
            "used more than 5 s of the kernel's CPU time"
        )
    finally:
        timed.close()
        plain.close()
