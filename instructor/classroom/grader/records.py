"""The records the class grader's parts hand each other (plain, typed, picklable data).

- :class:`HandIn`: one student's submission folder of one assignment, as found;
- :class:`Screening`: what reading one submitted notebook found before anything ran;
- :class:`ExecutionResult` (with its :class:`ZeroedTest` verdicts): what one notebook's
  sandboxed run produced; it travels back from a Dask worker;
- :class:`NotebookSummary` (with its :class:`CellGrade` scores) and :class:`HandInSummary`:
  what the grader recorded, kept as the resume state and read back for the reports.

The summaries are stored as JSON (``.grading/state/`` and ``reports/integrity.json``):
:meth:`HandInSummary.to_json` and :meth:`HandInSummary.from_json` keep that format.

What each graded cell and each hand-in came to, for the reports and the run's log.

:func:`cell_outcome` is a cell's outcome in ``grades.csv`` (see :mod:`.reports`),
:func:`zero_reason` why a notebook scored 0 when wrong answers are not the reason, and
:func:`attention` every line an instructor should read about one hand-in (the integrity
report's entries). All are decided from the records (:mod:`.records`): outcomes and zero
kinds set where they happened, never from a message's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from instructor.classroom.worker import (
    NOT_RUN_OUTCOMES,
    ZERO_OUTCOMES,
    ExecutionResult,
    Outcome,
    ZeroedTest,
    ZeroKind,
)

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class HandIn:
    """One student's submission of one assignment: ``submitted/<student>/<assignment>/``."""

    student: str
    assignment: str
    folder: Path
    fingerprint: str = ""
    """A digest of every file in the folder: the same files are not graded twice."""


@dataclass(frozen=True)
class Screening:
    """One expected notebook of a hand-in, read and checked before anything runs."""

    name: str
    outcome: Outcome = Outcome.PENDING
    """:attr:`~Outcome.PENDING` (to be executed), ``MISSING`` or ``UNREADABLE``."""
    notes: tuple[str, ...] = ()
    """What the student changed in the released notebook, or why it is not gradable."""
    flags: tuple[str, ...] = ()
    """Suspicious code outside the test cells."""


class Manual(StrEnum):
    """Where a cell graded by hand (a written answer) stands (``CellGrade.manual``)."""

    AWAITING = "awaiting"
    """An answer nbgrader left for a grader, not graded yet."""
    GRADED = "graded"
    """A grader scored it by hand (formgrader's manual score)."""
    UNANSWERED = "unanswered"
    """Left as released: nbgrader's 0, no grader needed."""


class CellOutcome(StrEnum):
    """A graded cell's outcome in ``grades.csv`` (:func:`cell_outcome`)."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not run"
    ZEROED = "zeroed"
    """Scored 0 by the grader itself (a broken protocol, a call stopped at its limit)."""
    AWAITING = "awaiting manual grading"
    GRADED = "graded by hand"
    UNANSWERED = "unanswered"


MANUAL_OUTCOMES = {
    Manual.AWAITING: CellOutcome.AWAITING,
    Manual.GRADED: CellOutcome.GRADED,
    Manual.UNANSWERED: CellOutcome.UNANSWERED,
}
"""The outcome of a cell graded by hand, by where it stands."""


@dataclass(frozen=True)
class CellGrade:
    """One graded cell's score in the gradebook."""

    cell: str
    score: float | None
    """None while the cell awaits a grader (not a 0)."""
    max_score: float | None
    manual: Manual | None = None
    """None for a cell the autograder scored; where a cell graded by hand stands."""

    @property
    def awaiting(self) -> bool:
        return self.manual == Manual.AWAITING

    def to_json(self) -> list[Any]:
        return [self.score, self.max_score, *([self.manual] if self.manual else [])]

    @classmethod
    def from_json(cls, cell: str, data: list[Any]) -> CellGrade:
        return cls(cell, data[0], data[1], Manual(data[2]) if len(data) > 2 else None)


@dataclass(frozen=True)
class NotebookSummary:
    """What happened to one notebook of a hand-in."""

    outcome: Outcome = Outcome.PENDING
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    zeroed: tuple[ZeroedTest, ...] = ()
    restored: tuple[str, ...] | None = None
    """From here to ``seconds``: None where the notebook was not executed."""
    events: tuple[str, ...] | None = None
    seconds: float | None = None
    score: float | None = None
    """From here on: None where the gradebook has nothing for the notebook. A cell that
    awaits a grader adds nothing to ``score`` (nbgrader's sum): see :attr:`awaiting`."""
    max_score: float | None = None
    cells: tuple[CellGrade, ...] | None = None
    imports_error: str = ""
    """The error the imports cell raised (``ModuleNotFoundError: ...``), ``""`` if none: then
    every later cell that needs its names fails. Absent from older state files."""
    best_effort: tuple[str, ...] = ()
    """See :attr:`ExecutionResult.best_effort`."""

    @property
    def awaiting(self) -> tuple[CellGrade, ...]:
        """The cells that await a grader (written answers not graded by hand yet)."""
        return tuple(g for g in self.cells or () if g.awaiting)

    @classmethod
    def screened(cls, screening: Screening) -> NotebookSummary:
        return cls(outcome=screening.outcome, notes=screening.notes, flags=screening.flags)

    def executed(self, result: ExecutionResult) -> NotebookSummary:
        """This summary with the outcome of the notebook's execution (the imports cell's
        error read from the executed notebook's outputs)."""
        from instructor.classroom.grader.integrity import imports_failure

        notes = list(self.notes)
        if result.detail:
            notes.append(result.detail)
        if result.truncated_cells:
            notes.append(f"output truncated in {len(result.truncated_cells)} cell(s)")
        return NotebookSummary(
            outcome=result.outcome,
            notes=tuple(notes),
            flags=self.flags,
            zeroed=result.zeroed,
            restored=result.restored,
            events=result.events,
            seconds=round(result.seconds, 2),
            imports_error=imports_failure(result.notebook),
            best_effort=result.best_effort,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "outcome": self.outcome,
            "notes": list(self.notes),
            "flags": list(self.flags),
            "zeroed": {z.test: [str(z.kind), z.reason] for z in self.zeroed},
        }
        if self.seconds is not None:
            data["restored"] = list(self.restored or ())
            data["events"] = list(self.events or ())
            data["seconds"] = self.seconds
        if self.cells is not None:
            data["score"] = self.score
            data["max_score"] = self.max_score
            data["cells"] = {g.cell: g.to_json() for g in self.cells}
        if self.imports_error:
            data["imports_error"] = self.imports_error
        if self.best_effort:
            data["best_effort"] = list(self.best_effort)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NotebookSummary:
        executed = "seconds" in data
        cells = data.get("cells")
        return cls(
            outcome=Outcome(data["outcome"]),
            notes=tuple(data.get("notes", ())),
            flags=tuple(data.get("flags", ())),
            zeroed=tuple(_zeroed(t, v) for t, v in data.get("zeroed", {}).items()),
            restored=tuple(data.get("restored", ())) if executed else None,
            events=tuple(data.get("events", ())) if executed else None,
            seconds=data.get("seconds"),
            score=data.get("score"),
            max_score=data.get("max_score"),
            cells=None
            if cells is None
            else tuple(CellGrade.from_json(c, data) for c, data in cells.items()),
            imports_error=data.get("imports_error", ""),
            best_effort=tuple(data.get("best_effort", ())),
        )


@dataclass(frozen=True)
class HandInSummary:
    """What the grader recorded for one hand-in (its resume state and report entry)."""

    student: str
    assignment: str
    fingerprint: str = ""
    notes: tuple[str, ...] = ()
    """About the hand-in as a whole (an extra notebook)."""
    error: str = ""
    """The grader's own failure (nbgrader's autograde), if any."""
    notebooks: dict[str, NotebookSummary] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return sum(n.score or 0 for n in self.notebooks.values())

    @property
    def max_score(self) -> float:
        return sum(n.max_score or 0 for n in self.notebooks.values())

    @property
    def awaiting(self) -> list[tuple[str, CellGrade]]:
        """(notebook, cell) of every cell that awaits a grader: until none does, ``score``
        is the points so far, not the hand-in's grade."""
        return [(name, g) for name, nb in self.notebooks.items() for g in nb.awaiting]

    @property
    def awaiting_points(self) -> float:
        """The points of the cells that await a grader."""
        return sum(g.max_score or 0 for _, g in self.awaiting)

    def to_json(self) -> dict[str, Any]:
        return {
            "student": self.student,
            "assignment": self.assignment,
            "fingerprint": self.fingerprint,
            "notes": list(self.notes),
            "error": self.error,
            "notebooks": {name: nb.to_json() for name, nb in self.notebooks.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HandInSummary:
        return cls(
            student=data["student"],
            assignment=data["assignment"],
            fingerprint=data.get("fingerprint", ""),
            notes=tuple(data.get("notes", ())),
            error=data.get("error", ""),
            notebooks={
                name: NotebookSummary.from_json(nb) for name, nb in data["notebooks"].items()
            },
        )


def _zeroed(test: str, value: Any) -> ZeroedTest:
    """A ``zeroed`` entry of the state: ``[kind, reason]`` (a bare reason: written before
    kinds were recorded)."""
    if isinstance(value, list) and len(value) == 2:
        return ZeroedTest(test, str(value[1]), ZeroKind(value[0]))
    return ZeroedTest(test, str(value))


def cell_outcome(record: NotebookSummary, grade: CellGrade) -> CellOutcome:
    """``passed``, ``failed``, ``not run`` or ``zeroed``, or for a cell graded by hand
    ``awaiting manual grading``, ``graded by hand`` or ``unanswered``: see
    :mod:`.reports`."""
    missing = grade.manual == Manual.UNANSWERED and record.outcome in NOT_RUN_OUTCOMES
    if grade.manual and not missing:  # a missing notebook's written answer: "not run"
        return MANUAL_OUTCOMES[grade.manual]
    if grade.score is not None and grade.max_score is not None and grade.score >= grade.max_score:
        return CellOutcome.PASSED
    zeroed = {z.test: z.kind for z in record.zeroed}
    if record.outcome in NOT_RUN_OUTCOMES or zeroed.get(grade.cell) == ZeroKind.NOT_RUN:
        return CellOutcome.NOT_RUN
    if grade.score is None:
        return CellOutcome.NOT_RUN
    if grade.cell in zeroed:
        return CellOutcome.ZEROED
    return CellOutcome.FAILED


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
    if outcomes == {CellOutcome.NOT_RUN}:
        return "no test cell ran"
    return ""


def attention(summary: HandInSummary) -> list[str]:
    """Everything about one hand-in that an instructor should read."""
    lines = list(summary.notes)
    if summary.error:
        lines.append(summary.error)
    for name, record in summary.notebooks.items():
        if record.outcome not in (Outcome.OK, Outcome.PENDING):
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


T = TypeVar("T")


_WHY_CHARS = 300
"""How much of an exception's message a note keeps: a message may quote the whole file."""


@dataclass(frozen=True)
class Unreadable:
    """A step that failed on one hand-in, and why (one line)."""

    why: str

    @property
    def note(self) -> str:
        return f"unreadable: {self.why}"

    @classmethod
    def of(cls, error: BaseException) -> Unreadable:
        lines = str(error).strip().splitlines()
        message = lines[0][:_WHY_CHARS] if lines else ""
        return cls(f"{type(error).__name__}: {message}" if message else type(error).__name__)


def contain(step: Callable[[], T]) -> T | Unreadable:
    """``step()``, or why it failed: any :class:`Exception` it raises is the hand-in's."""
    try:
        return step()
    except Exception as error:  # noqa: BLE001 - whatever a hand-in holds ends in its own 0
        return Unreadable.of(error)
