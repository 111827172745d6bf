"""Grader summaries for the report and export tests, without grading anything."""

from __future__ import annotations

from instructor.classroom.grader.records import CellGrade, HandInSummary, NotebookSummary


def one_cell_summary(
    student: str, assignment: str, score: float, max_score: float = 10.0
) -> HandInSummary:
    """``student``'s hand-in of ``assignment``: one notebook of the same name, run ``ok``,
    with one graded cell ``test_a`` scored ``score`` of ``max_score``."""
    record = NotebookSummary(
        outcome="ok",
        restored=(),
        events=(),
        seconds=1.0,
        score=score,
        max_score=max_score,
        cells=(CellGrade("test_a", score, max_score),),
    )
    return HandInSummary(student, assignment, notebooks={assignment: record})
