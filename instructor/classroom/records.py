"""The records the class grader's parts hand each other (plain, typed, picklable data).

- :class:`HandIn`: one student's submission folder of one assignment, as found;
- :class:`Screening`: what reading one submitted notebook found before anything ran;
- :class:`ExecutionResult` (with its :class:`ZeroedTest` verdicts): what one notebook's
  sandboxed run produced; it travels back from a Dask worker;
- :class:`NotebookSummary` (with its :class:`CellGrade` scores) and :class:`HandInSummary`:
  what the grader recorded, kept as the resume state and read back for the reports.

The summaries are stored as JSON (``.grading/state/`` and ``reports/integrity.json``):
:meth:`HandInSummary.to_json` and :meth:`HandInSummary.from_json` keep that format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from instructor.classroom.worker.session import (
    NOT_RUN_OUTCOMES,
    STUDENT_VIEW,
    ZERO_OUTCOMES,
    ExecutionResult,
    GraderEnvironmentError,
    Outcome,
    ZeroedTest,
    ZeroKind,
)

__all__ = [
    "NOT_RUN_OUTCOMES",
    "ZERO_OUTCOMES",
    "Outcome",
    "ZeroKind",
    "STUDENT_VIEW",
    "AWAITING",
    "GRADED",
    "UNANSWERED",
    "CellGrade",
    "ExecutionResult",
    "GraderEnvironmentError",
    "HandIn",
    "HandInSummary",
    "NotebookSummary",
    "Screening",
    "ZeroedTest",
]


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
    outcome: str = ""
    """``""`` (to be executed), ``missing`` or ``unreadable``."""
    notes: tuple[str, ...] = ()
    """What the student changed in the released notebook, or why it is not gradable."""
    flags: tuple[str, ...] = ()
    """Suspicious code outside the test cells."""


AWAITING = "awaiting"
"""``CellGrade.manual`` of an answer nbgrader left for a grader, not graded yet."""
GRADED = "graded"
"""``CellGrade.manual`` of a cell a grader scored by hand (formgrader's manual score)."""
UNANSWERED = "unanswered"
"""``CellGrade.manual`` of a written answer left as released: nbgrader's 0, no grader needed."""


@dataclass(frozen=True)
class CellGrade:
    """One graded cell's score in the gradebook."""

    cell: str
    score: float | None
    """None while the cell awaits a grader (not a 0)."""
    max_score: float | None
    manual: str = ""
    """``""`` (scored by the autograder), :data:`AWAITING`, :data:`GRADED` or
    :data:`UNANSWERED`: a cell graded by hand (a written answer), as it stands."""

    @property
    def awaiting(self) -> bool:
        return self.manual == AWAITING

    def to_json(self) -> list[Any]:
        return [self.score, self.max_score, *([self.manual] if self.manual else [])]

    @classmethod
    def from_json(cls, cell: str, data: list[Any]) -> CellGrade:
        return cls(cell, data[0], data[1], data[2] if len(data) > 2 else "")


@dataclass(frozen=True)
class NotebookSummary:
    """What happened to one notebook of a hand-in."""

    outcome: str = ""
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
        from .integrity import imports_failure

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
            outcome=data["outcome"],
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
