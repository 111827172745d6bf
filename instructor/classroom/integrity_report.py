"""``integrity.md``: every hand-in an instructor should read and why, near copies, answers
awaiting a grader, and each notebook's best-effort checks (see :mod:`.reports`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from instructor.lms.table import format_points

from .outcomes import attention
from .records import (
    CellGrade,
    HandInSummary,
)
from .similarity import DEFAULT_THRESHOLD, REFERENCE_STUDENT, CopyPair

if TYPE_CHECKING:
    pass


__all__ = [
    "FORMGRADER",
    "awaiting_lines",
    "awaiting_manual",
    "best_effort_checks",
    "integrity_markdown",
]

FORMGRADER = "formgrader"


def _copy_line(pair: CopyPair, student: str) -> str:
    other = pair.student_b if pair.student_a == student else pair.student_a
    what = "the reference solution" if other == REFERENCE_STUDENT else other
    return f"{pair.function}: near copy of {what} (similarity {pair.similarity:.2f})"


def best_effort_checks(summaries: Iterable[HandInSummary]) -> dict[tuple[str, str], list[str]]:
    """(assignment, notebook) -> the rules its tests measured inside the student's kernel
    (``NotebookSummary.best_effort``), over every hand-in: the same tests ask them of every
    student, so they describe the notebook, not a student."""
    found: dict[tuple[str, str], set[str]] = {}
    for summary in summaries:
        for name, record in summary.notebooks.items():
            if record.best_effort:
                found.setdefault((summary.assignment, name), set()).update(record.best_effort)
    return {key: sorted(checks) for key, checks in found.items()}


def _best_effort_lines(summaries: list[HandInSummary]) -> list[str]:
    lines = []
    for (assignment, notebook), checks in best_effort_checks(summaries).items():
        lines += [
            "",
            f"## Best-effort checks: {assignment} / {notebook}",
            "",
            "These rules were measured inside the student's own kernel (the process that "
            "runs the student's code) while the student's function ran, not in the grader: a "
            "student who sets out to can forge these measurements, so passing them proves "
            "less than passing the other tests. They are the same for every student of this "
            "notebook, and no student is listed above because of them.",
            "",
        ]
        lines += [f"- {check}" for check in checks]
    return lines


def _score_text(summary: HandInSummary) -> str:
    text = f"{summary.score:g}/{summary.max_score:g}"
    if summary.awaiting:
        text += f", {summary.awaiting_points:g} point(s) awaiting manual grading"
    return text


def awaiting_manual(
    summaries: Iterable[HandInSummary],
) -> list[tuple[HandInSummary, str, CellGrade]]:
    """(hand-in, notebook, cell) of every cell that awaits a grader, in order."""
    return [(summary, name, grade) for summary in summaries for name, grade in summary.awaiting]


def awaiting_lines(summaries: list[HandInSummary]) -> list[str]:
    """For the run's log: how many answers await a grader, and where to grade them."""
    found = awaiting_manual(summaries)
    if not found:
        return []
    hand_ins = {(s.student, s.assignment) for s, _, _ in found}
    return [
        f"{len(found)} written answer(s) of {len(hand_ins)} submission(s) await grading in "
        f"{FORMGRADER} (nbgrader's Manual Grading); until graded, their assignments have no "
        "final grade in totals.csv and are left empty in the LMS exports (integrity.md lists "
        "them). Run the grader again once they are graded: nothing is regraded, the reports "
        "take the scores from the gradebook."
    ]


def _awaiting_section(summaries: list[HandInSummary]) -> list[str]:
    found = awaiting_manual(summaries)
    if not found:
        return []
    lines = [
        "",
        "## Awaiting manual grading",
        "",
        f"{len(found)} answer(s) graded by hand (written answers) await a grader: grade them "
        f"in {FORMGRADER} (nbgrader's Manual Grading), then run the grader again. Until then "
        "these submissions have no final grade (totals.csv, the LMS exports); their score so "
        "far is not a grade.",
        "",
        "| student | assignment | cell | points |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {summary.student} | {summary.assignment} | {name}: {grade.cell} | "
        f"{format_points(grade.max_score)} |"
        for summary, name, grade in found
    ]
    return lines


def integrity_markdown(
    summaries: list[HandInSummary], copies: Mapping[str, list[CopyPair]] | None = None
) -> str:
    """The integrity report; ``copies``: assignment -> its near copies (:func:`copy_report`).
    The answers awaiting a grader are listed after the hand-ins to read (they are no
    integrity matter: no hand-in is flagged for them). It ends with each notebook's
    best-effort checks (:func:`best_effort_checks`)."""
    copies = copies or {}
    lines = ["# Integrity report", ""]
    flagged = []
    for summary in summaries:
        notes = attention(summary)
        notes += [
            _copy_line(pair, summary.student)
            for pair in copies.get(summary.assignment, [])
            if summary.student in (pair.student_a, pair.student_b)
        ]
        if notes:
            flagged.append((summary, notes))
    lines.append(f"{len(flagged)} of {len(summaries)} submission(s) need a look.")
    for summary, notes in flagged:
        lines += ["", f"## {summary.student} / {summary.assignment} ({_score_text(summary)})"]
        lines += [f"- {note}" for note in notes]
    lines += _awaiting_section(summaries)
    pairs = [(assignment, pair) for assignment, found in copies.items() for pair in found]
    if copies:
        lines += [
            "",
            "## Near copies",
            "",
            f"{len(pairs)} pair(s) of graded answers at or above similarity "
            f"{DEFAULT_THRESHOLD:g} (instructor.classroom.similarity: layout, comments, names "
            "and the order of statements do not count). Read both answers before concluding "
            "anything.",
        ]
        if pairs:
            lines += [
                "",
                "| assignment | function | student | copy of | similarity |",
                "| --- | --- | --- | --- | --- |",
            ]
            lines += [
                f"| {assignment} | {p.function} | {p.student_a} | "
                f"{'solutions/' if p.student_b == REFERENCE_STUDENT else p.student_b} | "
                f"{p.similarity:.2f} |"
                for assignment, p in pairs
            ]
    lines += _best_effort_lines(summaries)
    return "\n".join(lines) + "\n"
