"""``gradebook_watch``: a score the grader did not write, changed during a run, stops it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from instructor.classroom.grader.course import (
    GradebookChanged,
    GradebookWatch,
    NbgraderCourse,
    ScoreKey,
)
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.worker.isolation import Limits
from instructor.scratch_course import ScratchCourse

ASSIGNMENT = "01_vector_sets"


def _autograded(course: ScratchCourse, *students: str) -> NbgraderCourse:
    for student in students:
        course.submit(student, course.solved())
    course.autograde()
    return NbgraderCourse(course.root)


def _set_auto_score(course: ScratchCourse, student: str, score: float) -> None:
    """What a process with the grader's rights can do: write the SQLite file directly."""
    with sqlite3.connect(course.root / "gradebook.db") as db:
        db.execute(
            "UPDATE grade SET auto_score = ? WHERE notebook_id IN (SELECT submitted_notebook.id "
            "FROM submitted_notebook JOIN submitted_assignment "
            "ON submitted_notebook.assignment_id = submitted_assignment.id "
            "WHERE submitted_assignment.student_id = ?)",
            (score, student),
        )


def test_an_unchanged_gradebook_passes_and_a_changed_one_is_named(course: ScratchCourse) -> None:
    nbgrader_course = _autograded(course, "alice", "bob")
    watch = GradebookWatch(nbgrader_course.gradebook, [ASSIGNMENT])
    assert {key.student for key in watch.expected} == {"alice", "bob"}
    watch.check("in the test")
    _set_auto_score(course, "bob", 0.0)
    with pytest.raises(GradebookChanged) as error:
        watch.check("while the kernels ran")
    message = str(error.value)
    assert "the gradebook changed while the kernels ran, and not by the grader" in message
    assert f"bob, {ASSIGNMENT}/{ASSIGNMENT}, test_one_hot" in message
    assert "-> auto 0.0, manual None, extra None" in message
    assert "alice" not in message


def test_what_the_grader_records_is_taken_in(course: ScratchCourse) -> None:
    nbgrader_course = _autograded(course, "alice")
    watch = GradebookWatch(nbgrader_course.gradebook, [ASSIGNMENT])
    _set_auto_score(course, "alice", 1.0)  # as the grader's own recording would
    watch.recorded(ASSIGNMENT, "alice")
    watch.check("after recording")
    key = next(k for k in watch.expected if k.cell == "test_one_hot")
    assert key == ScoreKey(ASSIGNMENT, "alice", ASSIGNMENT, "test_one_hot")
    assert watch.expected[key][0] == 1.0


def test_a_kernel_that_rewrites_the_gradebook_stops_the_run(
    course: ScratchCourse,
    limits: Limits,
    monkeypatch: pytest.MonkeyPatch,
    shared_scheduler: Callable[[], str],
) -> None:
    """Without bubblewrap: the first student is recorded, the second one's kernel zeroes
    every score in the gradebook (its path given, the strongest case). The run stops before
    recording it, and names the changes.

    The first student is recorded by an earlier run: within one run, the second kernel may
    run before the first student's scores are written, and then has nothing to change."""
    monkeypatch.setenv("COURSE_SANDBOX", "none")
    gradebook = course.root / "gradebook.db"
    course.submit("a_alice", course.solved())
    first = ClassGrader(
        course.root, scheduler=shared_scheduler(), limits=limits, progress=False, feedback=False
    )
    first.grade([ASSIGNMENT], log=lambda line: None)
    grades_csv = course.root / "reports" / "grades.csv"
    reported = grades_csv.read_text()
    attack = (
        "import sqlite3\n"
        f"with sqlite3.connect({str(gradebook)!r}) as db:\n"
        "    db.execute('UPDATE grade SET auto_score = 0, manual_score = 0')\n"
        "def one_hot(tokens, vocab):\n"
        "    raise NotImplementedError()\n"
    )
    course.submit("z_mallory", course.solved({"one_hot": attack}))
    grader = ClassGrader(
        course.root, scheduler=shared_scheduler(), limits=limits, progress=False, feedback=False
    )
    with pytest.raises(GradebookChanged) as error:
        grader.grade([ASSIGNMENT], log=lambda line: None)
    assert "a_alice" in str(error.value)
    assert "z_mallory" not in grades_csv.read_text()
    assert grades_csv.read_text() == reported


def test_the_gradebook_path_is_the_one_watched(course: ScratchCourse) -> None:
    assert Path(NbgraderCourse(course.root).coursedir.db_url.removeprefix("sqlite:///")) == (
        course.root / "gradebook.db"
    )
