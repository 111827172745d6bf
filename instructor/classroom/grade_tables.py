"""``grades.csv``, ``totals.csv`` and the LMS exports: the grade tables (see :mod:`.reports`).

Every CSV cell is written through :func:`instructor.lms.csv_safety.write_rows`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from instructor.lms.config import LmsConfig
from instructor.lms.csv_safety import neutralised, write_rows
from instructor.lms.export import write_exports as write_lms_exports
from instructor.lms.roster import LmsIdentity
from instructor.lms.table import Finals, GradeTable, format_points

from .outcomes import cell_outcome
from .records import (
    HandInSummary,
)

if TYPE_CHECKING:
    pass


__all__ = [
    "COURSE_TOTAL",
    "GRADES_HEADER",
    "TOTALS_HEADER",
    "finals",
    "grade_table",
    "totals",
    "write_exports",
    "write_grades_csv",
    "write_totals_csv",
]

GRADES_HEADER = ("student", "assignment", "notebook", "cell", "score", "max_score", "outcome")
TOTALS_HEADER = (
    "student",
    "assignment",
    "score",
    "max_score",
    "late_penalty",
    "final",
    "awaiting_manual",
)
COURSE_TOTAL = "TOTAL"
"""``totals.csv``'s assignment column on a student's row over the whole course."""

log = logging.getLogger(__name__)


def write_grades_csv(path: Path, summaries: list[HandInSummary]) -> None:
    """``grades.csv``; every cell made safe for a spreadsheet (:mod:`instructor.lms.csv_safety`)."""
    rows: list[list[object]] = [list(GRADES_HEADER)]
    for summary in summaries:
        for name, record in summary.notebooks.items():
            for grade in sorted(record.cells or (), key=lambda g: g.cell):
                rows.append(
                    [
                        summary.student,
                        summary.assignment,
                        name,
                        grade.cell,
                        grade.score,
                        grade.max_score,
                        cell_outcome(record, grade),
                    ]
                )
    write_rows(path, rows)


def _assignment_max(summaries: list[HandInSummary]) -> dict[str, float]:
    """assignment -> its max score (the largest any hand-in of it recorded), in order."""
    maxima: dict[str, float] = {}
    for summary in summaries:
        maxima[summary.assignment] = max(maxima.get(summary.assignment, 0.0), summary.max_score)
    return maxima


def totals(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
) -> list[dict[str, float | str | None]]:
    """The rows of ``totals.csv`` (``TOTALS_HEADER`` keys): per student, each assignment
    (None where not handed in; ``late_penalty`` None where ``penalties`` is None), then
    ``COURSE_TOTAL``. ``penalties``: (student, assignment) -> nbgrader's late penalty.

    ``awaiting_manual``: the points of cells that await a grader (written answers). Until
    they are graded, ``score`` is the points so far and ``final`` is None (of the
    assignment and of ``COURSE_TOTAL``): it is no grade yet, and the LMS exports leave it
    empty."""
    maxima = _assignment_max(summaries)
    by_student: dict[str, dict[str, HandInSummary]] = {}
    for summary in summaries:
        by_student.setdefault(summary.student, {})[summary.assignment] = summary
    rows: list[dict[str, float | str | None]] = []
    for student in sorted(by_student):
        course = {
            "score": 0.0,
            "max_score": 0.0,
            "late_penalty": 0.0,
            "final": 0.0,
            "awaiting_manual": 0.0,
        }
        for assignment, maximum in maxima.items():
            summary = by_student[student].get(assignment)
            row: dict[str, float | str | None] = {
                "student": student,
                "assignment": assignment,
                "score": None,
                "max_score": maximum,
                "late_penalty": None,
                "final": None,
                "awaiting_manual": None,
            }
            course["max_score"] += maximum
            if summary is not None:
                penalty = None if penalties is None else penalties.get((student, assignment), 0.0)
                awaiting = summary.awaiting_points
                # Not graded yet, no final grade: a written answer awaiting its grader is
                # no 0 (nbgrader's own sum counts it 0).
                final = None if summary.awaiting else max(0.0, summary.score - (penalty or 0.0))
                row.update(
                    score=summary.score, late_penalty=penalty, final=final, awaiting_manual=awaiting
                )
                course["score"] += summary.score
                course["late_penalty"] += penalty or 0.0
                course["final"] += final or 0.0
                course["awaiting_manual"] += awaiting
            rows.append(row)
        rows.append(
            {
                "student": student,
                "assignment": COURSE_TOTAL,
                **course,
                "late_penalty": None if penalties is None else course["late_penalty"],
                "final": None if course["awaiting_manual"] else course["final"],
            }
        )
    return rows


def write_totals_csv(
    path: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
) -> None:
    """``totals.csv``; every cell made safe for a spreadsheet (:mod:`instructor.lms.csv_safety`)."""
    rows: list[list[object]] = [list(TOTALS_HEADER)]
    for row in totals(summaries, penalties):
        rows.append(
            [
                value if key in ("student", "assignment") else format_points(value)  # type: ignore[arg-type]
                for key, value in ((k, row[k]) for k in TOTALS_HEADER)
            ]
        )
    write_rows(path, rows)


def _finals(
    summaries: list[HandInSummary], penalties: Mapping[tuple[str, str], float] | None
) -> dict[tuple[str, str], float]:
    """(student, assignment) -> ``final`` points, for what was handed in and is graded (not
    awaiting a grader)."""
    return {
        (str(row["student"]), str(row["assignment"])): float(row["final"])  # type: ignore[arg-type]
        for row in totals(summaries, penalties)
        if row["assignment"] != COURSE_TOTAL and row["final"] is not None
    }


def finals(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
    identities: Mapping[tuple[str, str], LmsIdentity] | None = None,
) -> Finals:
    """What the LMS exports are written from (:class:`instructor.lms.table.Finals`)."""
    return Finals(
        tuple(_assignment_max(summaries).items()),
        tuple(sorted({s.student for s in summaries})),
        _finals(summaries, penalties),
        dict(names or {}),
        dict(identities or {}),
    )


def grade_table(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
) -> GradeTable:
    """Each student's ``final`` points per assignment (one ``GradeItem`` per assignment,
    named by its id; not handed in: no score, an empty cell); ``names``: student -> name."""
    return finals(summaries, penalties, names).table()


def write_exports(
    folder: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
    identities: Mapping[tuple[str, str], LmsIdentity] | None = None,
    config: LmsConfig | None = None,
) -> list[Path]:
    """Each student's final points per assignment in each LMS's import format, in
    ``folder`` (:func:`instructor.lms.export.write_exports`: every LMS module writes its
    own); ``names`` (student -> "First Last") fills the name columns, ``identities``
    ((student, assignment) -> who an LMS download said the student is,
    :func:`instructor.lms.roster.read_roster`) the LMS's own ids, ``config``
    (``lms.toml``) each assignment's title and id in each LMS.
    """
    written = write_lms_exports(folder, finals(summaries, penalties, names, identities), config)
    unmatched = sorted({s.student for s in summaries if neutralised(s.student)})
    if unmatched:
        log.warning(
            "%d student id(s) start with a character a spreadsheet reads as a formula (%s): "
            "the reports and LMS exports write them with a leading ' (OWASP's rule against CSV "
            "injection), so no LMS matches them; no LMS makes such an id: check those folders",
            len(unmatched),
            ", ".join(repr(s) for s in unmatched[:5]) + (", ..." if len(unmatched) > 5 else ""),
        )
    return written
