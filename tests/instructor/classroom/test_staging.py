"""Staging a hand-in: what reading it finds, and what is left to execute."""

from __future__ import annotations

import nbformat

from instructor import anatomy
from instructor.classroom.nbgrader_setup import STAGING_FOLDER, NbgraderCourse
from instructor.classroom.records import HandIn, Screening
from instructor.classroom.staging import stage
from instructor.scratch_course import ScratchCourse


def _hand_in(course: ScratchCourse, student: str) -> HandIn:
    folder = course.root / "submitted" / student / course.assignment
    return HandIn(student, course.assignment, folder)


def test_a_readable_notebook_is_staged_sanitised(course: ScratchCourse) -> None:
    notebook = course.released()
    anatomy.test_cells(notebook)[0].source = "pass"
    course.submit("alice", notebook)
    hand_in = _hand_in(course, "alice")
    nbformat.write(notebook, hand_in.folder / "scratch.ipynb")
    staged = stage(NbgraderCourse(course.root), hand_in)
    assert staged.notes == ("extra notebook scratch.ipynb (not graded)",)
    screening = staged.screenings[course.assignment]
    assert screening.outcome == "" and "edited test cell" in screening.notes[0]
    sanitised = nbformat.from_dict(staged.notebooks[course.assignment])
    assert anatomy.test_cells(sanitised)[0].source != "pass"
    copy = course.root / STAGING_FOLDER / "alice" / course.assignment / course.notebook_name
    assert copy.is_file()


def test_missing_and_unreadable_notebooks_are_not_executed(course: ScratchCourse) -> None:
    nbgrader = NbgraderCourse(course.root)
    empty = _hand_in(course, "bob")
    empty.folder.mkdir(parents=True)
    staged = stage(nbgrader, empty)
    assert staged.notebooks == {}
    assert staged.screenings[course.assignment] == Screening(
        course.assignment,
        "missing",
        (f"no {course.notebook_name} in the submission (scored 0)",),
    )
    broken = _hand_in(course, "carol")
    broken.folder.mkdir(parents=True)
    (broken.folder / course.notebook_name).write_text('{"cells": [')
    staged = stage(nbgrader, broken)
    assert staged.notebooks == {}
    assert staged.screenings[course.assignment].outcome == "unreadable"
