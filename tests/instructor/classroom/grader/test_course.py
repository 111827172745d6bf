"""The course's nbgrader configuration, API and gradebook, as the grader sets them up."""

from __future__ import annotations

import shutil
from datetime import datetime

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.plugins import LateSubmissionPlugin

from instructor import anatomy, registry
from instructor.classroom.grader.course import NbgraderCourse, PerHourPenalty
from instructor.scratch_course import ScratchCourse


def test_the_course_is_read_from_its_config(course: ScratchCourse) -> None:
    nbgrader = NbgraderCourse(course.root)
    assert nbgrader.notebook_names(course.assignment) == [course.assignment]
    assert nbgrader.submitted_folder() == course.root / "submitted"
    released = nbgrader.released(course.assignment, course.assignment)
    assert anatomy.test_cells(released)
    assert nbgrader.scores("nobody", course.assignment, [course.assignment]) == {}


def test_sanitising_restores_the_test_cells(course: ScratchCourse) -> None:
    notebook = course.released()
    test = anatomy.test_cells(notebook)[0]
    original = test.source
    test.source = "pass"
    test.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok")]
    sanitised = NbgraderCourse(course.root).sanitise(
        notebook, "alice", course.assignment, course.assignment
    )
    restored = anatomy.test_cells(sanitised)[0]
    assert restored.outputs == []
    # The gradebook's version: the released one, with its hidden tests.
    assert restored.source.startswith(anatomy.visible_part(original).rstrip())
    assert anatomy.HIDDEN_TESTS_MARKER in restored.source


def test_an_empty_gradebook_is_set_up_from_the_source(course: ScratchCourse) -> None:
    """No ``generate_assignment`` beforehand: the grader registers the assignment itself
    (notebooks, graded cells, points, due date) without writing a release folder."""
    shutil.rmtree(course.root / "release")
    with (course.root / "nbgrader_config.py").open("a") as config:
        due = "2026-11-20 13:00:00 Europe/Paris"  # 12:00 UTC
        config.write(f"\nc.Deadlines.due_dates = {{{course.assignment!r}: {due!r}}}\n")
    db_url = f"sqlite:///{course.root / 'empty.db'}"
    nbgrader = NbgraderCourse(course.root, db_url=db_url)
    done = nbgrader.register(course.assignment)
    assert done == [
        f"{course.assignment}: registered in the gradebook from "
        f"{course.root / 'source' / course.assignment}",
        f"{course.assignment}: due 2026-11-20 12:00:00 UTC",
    ]
    assert not (course.root / "release").exists()
    assert nbgrader.notebook_names(course.assignment) == [course.assignment]
    with Gradebook(db_url) as gradebook:
        assignment = gradebook.find_assignment(course.assignment)
        assert assignment.duedate == datetime(2026, 11, 20, 12, 0)
        assert assignment.max_score == registry.load().notebook(course.assignment).points
    assert nbgrader.register(course.assignment) == []


def test_the_gradebook_follows_the_source_points(course: ScratchCourse) -> None:
    nbgrader = NbgraderCourse(course.root)
    assert nbgrader.register(course.assignment) == []  # generated: nothing to do
    source = course.root / "source" / course.assignment / course.notebook_name
    notebook = nbformat.read(source, 4)
    test = next(
        c for c in anatomy.test_cells(notebook) if c.metadata.nbgrader.grade_id == "test_one_hot"
    )
    raised_by = 4 - test.metadata.nbgrader.points
    test.metadata.nbgrader.points = 4
    nbformat.write(notebook, source)
    assert nbgrader.register(course.assignment)
    with Gradebook(course.db_url) as gradebook:
        points = registry.load().notebook(course.assignment).points
        assert gradebook.find_assignment(course.assignment).max_score == points + raised_by


def test_the_per_hour_penalty() -> None:
    plugin = PerHourPenalty(percent_per_hour=10, grace_minutes=15)
    assert plugin.late_submission_penalty("a", 9.0, 10 * 60) is None
    assert plugin.late_submission_penalty("a", 9.0, 15 * 60 + 1) == pytest.approx(0.9)
    assert plugin.late_submission_penalty("a", 9.0, 15 * 60 + 2.5 * 3600) == pytest.approx(2.7)
    assert plugin.late_submission_penalty("a", 9.0, 30 * 3600) == 9.0
    assert plugin.late_submission_penalty("a", 0.0, 3600) is None
    assert isinstance(plugin, LateSubmissionPlugin)
