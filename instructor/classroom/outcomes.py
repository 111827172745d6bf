"""What each graded cell and each hand-in came to, for the reports and the run's log.

:func:`cell_outcome` is a cell's outcome in ``grades.csv`` (see :mod:`.reports`),
:func:`zero_reason` why a notebook scored 0 when wrong answers are not the reason, and
:func:`attention` every line an instructor should read about one hand-in (the integrity
report's entries). All are decided from the records (:mod:`.records`): outcomes and zero
kinds set where they happened, never from a message's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .records import (
    AWAITING,
    GRADED,
    NOT_RUN_OUTCOMES,
    UNANSWERED,
    ZERO_OUTCOMES,
    CellGrade,
    HandInSummary,
    NotebookSummary,
    Outcome,
    ZeroKind,
)

if TYPE_CHECKING:
    pass


__all__ = [
    "AWAITING_OUTCOME",
    "MANUAL_OUTCOMES",
    "attention",
    "cell_outcome",
    "zero_reason",
]

AWAITING_OUTCOME = "awaiting manual grading"
MANUAL_OUTCOMES = {
    AWAITING: AWAITING_OUTCOME,
    GRADED: "graded by hand",
    UNANSWERED: "unanswered",
}
"""``grades.csv``'s outcome of a cell graded by hand, by ``CellGrade.manual``."""


def cell_outcome(record: NotebookSummary, grade: CellGrade) -> str:
    """``passed``, ``failed``, ``not run`` or ``zeroed``, or for a cell graded by hand
    ``awaiting manual grading``, ``graded by hand`` or ``unanswered``: see
    :mod:`.reports`."""
    missing = grade.manual == UNANSWERED and record.outcome in NOT_RUN_OUTCOMES
    if grade.manual and not missing:  # a missing notebook's written answer: "not run"
        return MANUAL_OUTCOMES[grade.manual]
    if grade.score is not None and grade.max_score is not None and grade.score >= grade.max_score:
        return "passed"
    zeroed = {z.test: z.kind for z in record.zeroed}
    if record.outcome in NOT_RUN_OUTCOMES or zeroed.get(grade.cell) == ZeroKind.NOT_RUN:
        return "not run"
    if grade.score is None:
        return "not run"
    if grade.cell in zeroed:
        return "zeroed"
    return "failed"


def zero_reason(record: NotebookSummary) -> str:
    """Why a notebook scored 0 when wrong answers are not the reason; ``""`` otherwise
    (it scored points, or its tests ran and failed)."""
    if record.score:
        return ""
    if record.outcome in ZERO_OUTCOMES:
        return record.outcome
    if record.imports_error:
        return f"its imports cell failed ({record.imports_error})"
    outcomes = {cell_outcome(record, grade) for grade in record.cells or () if not grade.manual}
    if outcomes == {"not run"}:
        return "no test cell ran"
    return ""


def attention(summary: HandInSummary) -> list[str]:
    """Everything about one hand-in that an instructor should read."""
    lines = list(summary.notes)
    if summary.error:
        lines.append(summary.error)
    for name, record in summary.notebooks.items():
        if record.outcome not in (Outcome.OK, ""):
            lines.append(f"{name}: {record.outcome}")
        if record.imports_error:
            lines.append(
                f"{name}: the imports cell failed ({record.imports_error}): every later cell "
                "that needs its names fails"
            )
        reason = zero_reason(record)
        if reason:
            lines.append(f"{name}: scored 0, not for wrong answers: {reason}")
        lines += [f"{name}: {note}" for note in record.notes]
        lines += [f"{name}: {z.test} scored 0: {z.reason}" for z in record.zeroed]
        lines += [f"{name}: undone before a test: {item}" for item in record.restored or ()]
        lines += [f"{name}: the kernel {event}" for event in record.events or ()]
        lines += [f"{name}: suspicious code: {flag}" for flag in record.flags]
    return list(dict.fromkeys(lines))
