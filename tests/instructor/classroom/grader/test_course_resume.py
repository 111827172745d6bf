"""The resume state: what is recorded, with which files."""

from __future__ import annotations

from pathlib import Path

import nbformat

from instructor.classroom.grader.course import (
    NbgraderCourse,
    ResumeState,
    fingerprint,
    grading_context,
)
from instructor.classroom.grader.records import HandIn, HandInSummary
from instructor.scratch_course import ScratchCourse


def _hand_in(tmp_path: Path, student: str, text: str) -> HandIn:
    folder = tmp_path / "submitted" / student / "x"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.ipynb").write_text(text)
    return HandIn(student, "x", folder, fingerprint(folder))


def test_the_fingerprint_follows_names_and_contents(tmp_path: Path) -> None:
    first = _hand_in(tmp_path, "a", "one")
    assert _hand_in(tmp_path, "b", "one").fingerprint == first.fingerprint
    assert _hand_in(tmp_path, "c", "two").fingerprint != first.fingerprint
    (first.folder / "x.ipynb").rename(first.folder / "y.ipynb")
    assert fingerprint(first.folder) != first.fingerprint


def test_a_hand_in_is_recorded_with_the_files_it_had(tmp_path: Path) -> None:
    state = ResumeState(tmp_path / "state")
    hand_in = _hand_in(tmp_path, "a", "one")
    assert not state.is_recorded(hand_in)
    state.save(HandInSummary("a", "x", hand_in.fingerprint))
    assert state.is_recorded(hand_in)
    assert state.path("a", "x") == tmp_path / "state" / "x" / "a.json"
    assert not state.is_recorded(_hand_in(tmp_path, "a", "changed"))


def test_the_summaries_load_by_assignment_then_student(tmp_path: Path) -> None:
    state = ResumeState(tmp_path / "state")
    for student, assignment in (("b", "x"), ("a", "x"), ("a", "y")):
        state.save(HandInSummary(student, assignment, notes=(f"{student}/{assignment}",)))
    assert state.students("x") == ["a", "b"]
    loaded = state.load(["y", "x", "z"])
    assert [(s.student, s.assignment) for s in loaded] == [("a", "y"), ("a", "x"), ("b", "x")]
    assert loaded[0].notes == ("a/y",)


def test_the_fingerprint_follows_what_grades_the_hand_in(tmp_path: Path) -> None:
    """The grading context (release, tests, points, gradebook...) is part of the key."""
    hand_in = _hand_in(tmp_path, "a", "one")
    assert fingerprint(hand_in.folder, "") == hand_in.fingerprint
    with_context = fingerprint(hand_in.folder, "points: 2")
    assert with_context != hand_in.fingerprint
    assert fingerprint(hand_in.folder, "points: 3") != with_context


def test_the_grading_context_follows_points_gradebook_and_due_date(course: ScratchCourse) -> None:
    first = grading_context(NbgraderCourse(course.root), course.assignment)
    assert grading_context(NbgraderCourse(course.root), course.assignment) == first
    other_db = NbgraderCourse(course.root, db_url=f"sqlite:///{course.root / 'other.db'}")
    assert grading_context(other_db, course.assignment) != first
    source = course.root / "source" / course.assignment / course.notebook_name
    notebook = nbformat.read(source, 4)
    test = next(
        c
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_one_hot"
    )
    test.metadata.nbgrader.points = 5
    nbformat.write(notebook, source)
    changed = grading_context(NbgraderCourse(course.root), course.assignment)
    assert changed != first
    with (course.root / "nbgrader_config.py").open("a") as config:
        config.write(
            f"\nc.Deadlines.due_dates = {{{course.assignment!r}: '2026-11-20 12:00:00'}}\n"
        )
    assert grading_context(NbgraderCourse(course.root), course.assignment) != changed
