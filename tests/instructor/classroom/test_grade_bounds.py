"""The bounds of a whole notebook (issue 43), tried as a student would, graded with and
without bubblewrap: every case of ``support.hostile.BOUNDS`` beside two honest students.

Outputs: the autograded notebook and the feedback of each output case stay within the
bound per notebook (display updates included: before it, one update wrote 40 MB, 40 cells
under the cap per cell 8 MB). Disk: what each disk case got through (it prints it after
``MEASURED``) stays within the bound of its working folder (before it, it wrote 256 MiB).
Each case scores 0 with its note, its outcome ``ok`` (a bound makes the kernel's writes
fail, and drops outputs: it stops nothing else), and the honest students score as usual.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.classroom.worker.disk_bound import mounts_available
from instructor.classroom.worker.isolation import Isolation, Limits
from instructor.scratch_course import ScratchCourse
from support.graded_class import graded_with, isolation_params
from support.hostile import ASSIGNMENT, BOUNDS, MEASURED, NOTEBOOK, Hostile, wrong_answers

BOUND_LIMITS = Limits(
    wall_seconds=120,
    cell_seconds=30,
    memory_mib=3072,
    output_kib=256,
    notebook_output_kib=1024,
    disk_mib=64,
    disk_files=2_000,
)
"""Bounds small enough to be reached quickly: 1 MiB of output, 64 MiB and 2,000 files."""
SLACK = 256 * 1024
"""What a notebook's file holds beyond its outputs' bound: its cells, the notes, the JSON."""

DISK_CASES = {"many_files", "many_inodes", "sparse_files", "link_farm", "tmp_and_home"}


@pytest.fixture(scope="module", params=isolation_params("grade_bounds"))
def graded(
    request: pytest.FixtureRequest,
    generated_course: ScratchCourse,
    tmp_path_factory: pytest.TempPathFactory,
    shared_scheduler: Callable[[], str],
) -> dict:
    mode: Isolation = request.param
    with graded_with(mode):
        course = generated_course.clone(tmp_path_factory.mktemp(f"bounds-{mode.value}"))
        course.submit("alice", course.solved(demos=False))
        course.submit("carol", course.released())
        for case in BOUNDS:
            course.submit(case.student, case.build(wrong_answers(course.released())))
        grader = ClassGrader(
            course.root, scheduler=shared_scheduler(), limits=BOUND_LIMITS, progress=False
        )
        summaries = grader.grade([ASSIGNMENT], log=lambda line: None)
    return {"mode": mode, "root": course.root, "summaries": {s.student: s for s in summaries}}


def _autograded(root: Path, student: str) -> Path:
    return root / "autograded" / student / ASSIGNMENT / NOTEBOOK


def _measured(root: Path, student: str) -> dict:
    """What the case printed after MEASURED, in its autograded notebook."""
    for cell in nbformat.read(_autograded(root, student), as_version=4).cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(MEASURED):
                    return ast.literal_eval(line[len(MEASURED) :].strip())
    raise AssertionError(f"{student} printed no {MEASURED} line")


def test_honest_students_are_graded_as_usual(graded: dict) -> None:
    alice, carol = graded["summaries"]["alice"], graded["summaries"]["carol"]
    record = alice.notebooks[ASSIGNMENT]
    assert (record.score, record.outcome) == (record.max_score, "ok"), record
    assert carol.score == 0 and carol.notebooks[ASSIGNMENT].outcome == "ok"
    for summary in (alice, carol):
        notes = "\n".join(attention(summary))
        assert "bound" not in notes and "truncated" not in notes, notes


@pytest.mark.parametrize("case", BOUNDS, ids=[c.student for c in BOUNDS])
def test_a_bound_stops_the_case_with_a_note(graded: dict, case: Hostile) -> None:
    summary: HandInSummary = graded["summaries"][case.student]
    record = summary.notebooks[ASSIGNMENT]
    assert summary.score == 0 and not summary.error, record
    assert record.outcome == "ok", record
    if case.student in DISK_CASES and not mounts_available():
        pytest.skip("a bounded working folder needs root here (isolation_note says so)")
    notes = "\n".join(attention(summary))
    assert case.note in notes, f"{case.description}: expected {case.note!r} in\n{notes}"


@pytest.mark.parametrize("case", BOUNDS, ids=[c.student for c in BOUNDS])
def test_the_graded_notebook_and_its_feedback_stay_within_the_bound(
    graded: dict, case: Hostile
) -> None:
    root = graded["root"]
    honest = _autograded(root, "alice").stat().st_size
    bound = BOUND_LIMITS.notebook_output_kib * 1024
    size = _autograded(root, case.student).stat().st_size
    assert size <= honest + bound + SLACK, f"{case.description}: {size:,} bytes"
    feedback = root / "feedback" / case.student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    honest_feedback = root / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    # HTML escapes and wraps the outputs: twice the bound is still far below the 8-40 MB
    # these cases made before it.
    limit = honest_feedback.stat().st_size + 2 * bound + SLACK
    assert feedback.stat().st_size <= limit, f"{case.description}: {feedback.stat().st_size:,}"


@pytest.mark.parametrize("student", sorted(DISK_CASES))
def test_what_a_kernel_writes_stays_within_its_disk_bound(graded: dict, student: str) -> None:
    if not mounts_available():
        pytest.skip("a bounded working folder needs root here (isolation_note says so)")
    got = _measured(graded["root"], student)
    mib, files = BOUND_LIMITS.disk_mib, BOUND_LIMITS.disk_files
    checks = {
        "mib": mib,
        "allocated_mib": mib,
        "files": files,
        "links": files,
        "home": mib,
    }
    if graded["mode"] is Isolation.BWRAP:
        checks["tmp"] = 0  # the sandbox's /tmp is root's: the kernel writes nothing there
    for key, limit in checks.items():
        if key in got:
            assert got[key] <= limit, f"{student}: {key} {got[key]} beyond {limit} ({got})"
    assert set(got) & set(checks), got
