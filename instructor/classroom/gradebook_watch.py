"""The gradebook, watched while a run grades: a change the grader did not make is an error.

Without bubblewrap a kernel runs as the grader's user and can reach the gradebook (the
guide says so); :mod:`.reaper` ends what a kernel leaves running, and this module checks
the result. :class:`GradebookWatch` reads every score of the run's assignments before
grading (``auto_score``, ``manual_score``, ``extra_credit`` per student, notebook and
cell), takes in what the grader records itself, and compares the gradebook with it before
each recording and once all kernels have ended: a difference raises
:class:`GradebookChanged`, which names every changed score, before anything is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["GradebookChanged", "GradebookWatch", "ScoreKey", "read_scores"]


class GradebookChanged(RuntimeError):
    """Scores changed in the gradebook during a run, and the grader did not change them."""


@dataclass(frozen=True, order=True)
class ScoreKey:
    """One graded cell of one student's notebook."""

    assignment: str
    student: str
    notebook: str
    cell: str


Score = tuple[float | None, float | None, float | None]
"""``(auto_score, manual_score, extra_credit)``."""


def read_scores(gradebook: Any, assignments: list[str]) -> dict[ScoreKey, Score]:
    """Every score of ``assignments`` in ``gradebook`` (an open nbgrader ``Gradebook``),
    in one query."""
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Grade,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    rows = (
        gradebook.db.query(
            Assignment.name,
            SubmittedAssignment.student_id,
            Notebook.name,
            BaseCell.name,
            Grade.auto_score,
            Grade.manual_score,
            Grade.extra_credit,
        )
        .select_from(Grade)
        .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
        .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .join(BaseCell, Grade.cell_id == BaseCell.id)
        .filter(Assignment.name.in_(assignments))
        .all()
    )
    return {
        ScoreKey(assignment, student, notebook, cell): (auto, manual, extra)
        for assignment, student, notebook, cell, auto, manual, extra in rows
    }


def _differences(expected: dict[ScoreKey, Score], found: dict[ScoreKey, Score]) -> list[str]:
    lines = []
    for key in sorted(expected.keys() | found.keys()):
        before, after = expected.get(key), found.get(key)
        if before != after:
            where = f"{key.student}, {key.assignment}/{key.notebook}, {key.cell}"
            lines.append(f"  {where}: {_shown(before)} -> {_shown(after)}")
    return lines


def _shown(score: Score | None) -> str:
    if score is None:
        return "absent"
    auto, manual, extra = score
    return f"auto {auto}, manual {manual}, extra {extra}"


class GradebookWatch:
    """The scores the gradebook must hold, kept up to date with what the grader records.

    Args:
        open_gradebook: opens the course's gradebook (a context manager).
        assignments: the run's assignments; scores of others are not watched.
    """

    def __init__(self, open_gradebook: Any, assignments: list[str]) -> None:
        self.open_gradebook = open_gradebook
        self.assignments = list(assignments)
        self.expected = self._read()

    def _read(self) -> dict[ScoreKey, Score]:
        with self.open_gradebook() as gradebook:
            return read_scores(gradebook, self.assignments)

    def check(self, when: str) -> None:
        """Raise :class:`GradebookChanged` if the gradebook differs from what is expected."""
        differences = _differences(self.expected, self._read())
        if differences:
            shown = "\n".join(differences[:20])
            more = f"\n  ... and {len(differences) - 20} more" if len(differences) > 20 else ""
            raise GradebookChanged(
                f"the gradebook changed {when}, and not by the grader:\n{shown}{more}\n"
                "Without bubblewrap a student's kernel can write it (see docs/instructors.md); "
                "a grader working in formgrader meanwhile would too. Restore the gradebook "
                "from a copy, or grade again with --force after checking those scores."
            )

    def recorded(self, assignment: str, student: str) -> None:
        """Take in the scores the grader has just recorded for one hand-in."""
        found = self._read()
        for key in [k for k in self.expected if (k.assignment, k.student) == (assignment, student)]:
            del self.expected[key]
        self.expected.update(
            {k: v for k, v in found.items() if (k.assignment, k.student) == (assignment, student)}
        )
