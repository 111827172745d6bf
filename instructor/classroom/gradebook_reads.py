"""What the reports read from nbgrader's gradebook: scores (a grader's manual score
included), late penalties and student names."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from instructor.student_ids import id_problem

from .records import (
    HandInSummary,
)

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse


__all__ = [
    "from_gradebook",
    "late_penalties",
    "student_names",
    "submitted_students",
]


def submitted_students(course: NbgraderCourse, assignment: str) -> list[str]:
    """The students with a folder for ``assignment`` in ``submitted/`` whose name is a
    student id (:mod:`instructor.student_ids`; the others are never graded)."""
    return [
        p.parent.name
        for p in course.submitted_folder().glob(f"*/{assignment}")
        if p.is_dir() and not id_problem(p.parent.name)
    ]


def late_penalties(
    course: NbgraderCourse, summaries: list[HandInSummary]
) -> dict[tuple[str, str], float]:
    """(student, assignment) -> nbgrader's ``late_submission_penalty`` of the submission
    in the gradebook (0 where it has none)."""
    penalties = {}
    with course.gradebook() as gb:
        for summary in summaries:
            try:
                submission = gb.find_submission(summary.assignment, summary.student)
            except Exception:  # noqa: BLE001 - not in the gradebook: no penalty known
                continue
            penalties[(summary.student, summary.assignment)] = float(
                submission.late_submission_penalty or 0.0
            )
    return penalties


def from_gradebook(course: NbgraderCourse, summaries: list[HandInSummary]) -> list[HandInSummary]:
    """``summaries`` with each recorded notebook's scores read again from the gradebook,
    which stays the record: a score a grader set by hand since (formgrader, or nbgrader's
    API) is in them, and a written answer graded is no longer awaiting
    (:func:`.nbgrader_setup.cell_grade`). A notebook the gradebook has no grades of keeps
    its recorded scores."""
    from .nbgrader_setup import cell_grade

    refreshed = []
    with course.gradebook() as gb:
        for summary in summaries:
            notebooks = dict(summary.notebooks)
            for name, record in summary.notebooks.items():
                if record.cells is None:
                    continue
                try:
                    notebook = gb.find_submission_notebook(
                        name, summary.assignment, summary.student
                    )
                except Exception:  # noqa: BLE001 - not in the gradebook: keep what was recorded
                    continue
                if not notebook.grades:
                    continue
                notebooks[name] = replace(
                    record,
                    score=notebook.score,
                    max_score=notebook.max_score,
                    cells=tuple(cell_grade(g) for g in notebook.grades),
                )
            refreshed.append(replace(summary, notebooks=notebooks))
    return refreshed


def student_names(course: NbgraderCourse, students: Iterable[str]) -> dict[str, str]:
    """student -> "First Last" from the gradebook, for the students it names."""
    names = {}
    with course.gradebook() as gb:
        for student in students:
            try:
                record = gb.find_student(student)
            except Exception:  # noqa: BLE001 - unknown student: no name
                continue
            name = " ".join(part for part in (record.first_name, record.last_name) if part)
            if name:
                names[student] = name
    return names
