"""The records the class grader's parts hand each other (plain, typed, picklable data).

- :class:`HandIn`: one student's submission folder of one assignment, as found;
- :class:`Screening`: what reading one submitted notebook found before anything ran;
- :class:`ExecutionResult` (with its :class:`ZeroedTest` verdicts): what one notebook's
  sandboxed run produced; it travels back from a Dask worker;
- :class:`NotebookSummary` (with its :class:`CellGrade` scores) and :class:`HandInSummary`:
  what the grader recorded, kept as the resume state and read back for the reports.

The summaries are stored as JSON (``.grading/state/``, ``reports/integrity.json``) by a
pydantic ``TypeAdapter`` over these dataclasses, unknown keys refused
(:meth:`HandInSummary.to_json`, :meth:`HandInSummary.from_json`): a cell's grade is
``[score, max_score, manual?]``, a zeroed test ``[kind, reason]``; what is None (and an empty
``imports_error``, ``best_effort`` or ``seen``) is left out; what the grader saw of each test
cell (:class:`CellSeen`) is ``{test: {"tags": [...], "failed": ..., "answer": ...}}``.
:func:`cell_outcome`, :func:`zero_reason` and :func:`attention` decide from the records,
never from a message's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar

from pydantic import ConfigDict, PlainSerializer, PlainValidator, TypeAdapter, model_serializer

from instructor.classroom.grader.integrity import imports_failure
from instructor.classroom.worker import (
    NOT_RUN_OUTCOMES,
    ZERO_OUTCOMES,
    CellSeen,
    ExecutionResult,
    FailedPart,
    Outcome,
    ZeroedTest,
    ZeroKind,
)

_STRICT = ConfigDict(extra="forbid")
"""The state's records refuse keys they do not know."""


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
    """A graded cell's outcome in ``grades.csv`` (:func:`cell_outcome`); a cell graded by
    hand has the member named as its :class:`Manual`."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not run"
    ZEROED = "zeroed"
    """Scored 0 by the grader itself (a broken protocol, a call stopped at its limit)."""
    AWAITING = "awaiting manual grading"
    GRADED = "graded by hand"
    UNANSWERED = "unanswered"


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


def _cells(data: Any) -> tuple[CellGrade, ...] | None:
    if data is None:
        return None
    return tuple(
        CellGrade(c, s[0], s[1], Manual(s[2]) if len(s) > 2 else None) for c, s in data.items()
    )


def _zeroed(data: Any) -> tuple[ZeroedTest, ...]:
    """``{test: [kind, reason]}`` (a bare reason: written before kinds were recorded)."""
    return tuple(
        ZeroedTest(test, str(v[1]), ZeroKind(v[0]))
        if isinstance(v, list) and len(v) == 2
        else ZeroedTest(test, str(v))
        for test, v in data.items()
    )


Cells = Annotated[
    tuple[CellGrade, ...] | None,
    PlainValidator(_cells),
    PlainSerializer(
        lambda cells: {
            g.cell: [g.score, g.max_score, *([g.manual] if g.manual else [])] for g in cells
        }
    ),
]


def _seen(data: Any) -> tuple[CellSeen, ...]:
    """``{test: {"tags": [...], "failed": "hidden", "answer": "b"}}``, each key optional."""
    return tuple(
        CellSeen(
            test,
            tuple(str(t) for t in v.get("tags", ())),
            FailedPart(v["failed"]) if v.get("failed") else None,
            None if v.get("answer") is None else str(v["answer"]),
        )
        for test, v in data.items()
    )


def _seen_json(seen: tuple[CellSeen, ...]) -> dict[str, dict[str, Any]]:
    return {
        s.test: {
            k: v
            for k, v in (("tags", list(s.tags)), ("failed", s.failed), ("answer", s.answer))
            if v or (k == "answer" and v is not None)
        }
        for s in seen
    }


Seen = Annotated[tuple[CellSeen, ...], PlainValidator(_seen), PlainSerializer(_seen_json)]
Zeroed = Annotated[
    tuple[ZeroedTest, ...],
    PlainValidator(_zeroed),
    PlainSerializer(lambda zeroed: {z.test: [z.kind, z.reason] for z in zeroed}),
]


class _Stored:
    """The state's JSON form of a summary (a pydantic ``TypeAdapter`` each)."""

    def to_json(self) -> dict[str, Any]:
        # warnings=False: a record made with an outcome as text (tests do) dumps the same.
        return _ADAPTERS[type(self)].dump_python(
            self, mode="json", exclude_none=True, warnings=False
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return _ADAPTERS[cls].validate_python(data)


@dataclass(frozen=True)
class NotebookSummary(_Stored):
    """What happened to one notebook of a hand-in."""

    __pydantic_config__ = _STRICT

    outcome: Outcome = Outcome.PENDING
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    zeroed: Zeroed = ()
    restored: tuple[str, ...] | None = None
    """From here to ``seconds``: None where the notebook was not executed."""
    events: tuple[str, ...] | None = None
    seconds: float | None = None
    score: float | None = None
    """From here on: None where the gradebook has nothing for the notebook. A cell that
    awaits a grader adds nothing to ``score`` (nbgrader's sum): see :attr:`awaiting`."""
    max_score: float | None = None
    cells: Cells = None
    imports_error: str = ""
    """The error the imports cell raised (``ModuleNotFoundError: ...``), ``""`` if none: then
    every later cell that needs its names fails. Absent from older state files."""
    best_effort: tuple[str, ...] = ()
    """See :attr:`ExecutionResult.best_effort`."""
    seen: Seen = ()
    """See :attr:`ExecutionResult.seen`: per test cell that ran, the tags of the known
    mistakes its failure named, the part that failed, a concept question's answer. Absent
    from older state files (and left out where empty)."""

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
        notes = list(self.notes)
        if result.detail:
            notes.append(result.detail)
        if result.truncated_cells:
            notes.append(f"output truncated in {len(result.truncated_cells)} cell(s)")
        notes.extend(result.bounds)
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
            seen=result.seen,
        )

    @model_serializer(mode="wrap")
    def _without_empty(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        data = handler(self)
        for key in ("imports_error", "best_effort", "seen"):
            if not data.get(key):
                data.pop(key, None)
        return data


@dataclass(frozen=True)
class HandInSummary(_Stored):
    """What the grader recorded for one hand-in (its resume state and report entry)."""

    __pydantic_config__ = _STRICT

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


_ADAPTERS: dict[type, TypeAdapter[Any]] = {
    cls: TypeAdapter(cls) for cls in (NotebookSummary, HandInSummary)
}


def cell_outcome(record: NotebookSummary, grade: CellGrade) -> CellOutcome:
    """``passed``, ``failed``, ``not run`` or ``zeroed``, or for a cell graded by hand
    ``awaiting manual grading``, ``graded by hand`` or ``unanswered``: see
    :mod:`.reports`."""
    missing = grade.manual == Manual.UNANSWERED and record.outcome in NOT_RUN_OUTCOMES
    if grade.manual and not missing:  # a missing notebook's written answer: "not run"
        return CellOutcome[grade.manual.name]
    if grade.score is not None and grade.max_score is not None and grade.score >= grade.max_score:
        return CellOutcome.PASSED
    zeroed = {z.test: z.kind for z in record.zeroed}
    not_run = record.outcome in NOT_RUN_OUTCOMES or zeroed.get(grade.cell) == ZeroKind.NOT_RUN
    if not_run or grade.score is None:
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


def contain(step: Callable[[], T]) -> T | Unreadable:
    """``step()``, or why it failed: any :class:`Exception` it raises is the hand-in's."""
    try:
        return step()
    except Exception as error:  # noqa: BLE001 - whatever a hand-in holds ends in its own 0
        lines = str(error).strip().splitlines()
        message = lines[0][:_WHY_CHARS] if lines else ""
        return Unreadable(f"{type(error).__name__}: {message}" if message else type(error).__name__)
