"""The course's nbgrader configuration, API and gradebook, as the grader sets them up."""

from __future__ import annotations

import nbformat

from instructor import anatomy
from instructor.classroom.nbgrader_setup import STAGED, NbgraderCourse
from instructor.classroom.replay import ReplayExecute
from instructor.scratch_course import ScratchCourse


def test_the_course_is_read_from_its_config(course: ScratchCourse) -> None:
    nbgrader = NbgraderCourse(course.root)
    assert nbgrader.notebook_names(course.assignment) == [course.assignment]
    assert nbgrader.submitted_folder() == course.root / "submitted"
    released = nbgrader.released(course.assignment, course.assignment)
    assert anatomy.test_cells(released)
    assert nbgrader.scores("nobody", course.assignment, [course.assignment]) == {}


def test_the_recording_api_replays_on_the_staged_copies(course: ScratchCourse) -> None:
    api = NbgraderCourse(course.root, db_url="sqlite:///elsewhere.db").recording_api
    assert api.config.Autograde.autograde_preprocessors[0] is ReplayExecute
    assert api.coursedir.submitted_directory == STAGED
    assert api.coursedir.db_url == "sqlite:///elsewhere.db"


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
