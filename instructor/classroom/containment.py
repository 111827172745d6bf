"""One boundary per hand-in: whatever a hand-in holds, the worst it can do is score 0.

Every step of :class:`.grade.ClassGrader` that reads or stages a hand-in (its fingerprint,
:func:`.staging.stage`, the recording through nbgrader) runs through :func:`contain`. An
exception there, of any kind (a ``TypeError`` from metadata of an unexpected shape, a
``RecursionError`` from a file nested too deep, an ``OSError`` from a file that cannot be
read), becomes an :class:`Unreadable` for that hand-in alone: each of its notebooks scores
0 with the note ``unreadable: <why>``, and the run goes on with the other students.

What is not contained is what no hand-in causes: ``KeyboardInterrupt`` and ``SystemExit``
(not :class:`Exception`), and the checks the grader makes between steps (the gradebook
watch, the kernel environment), which run outside the boundary.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .nbgrader_setup import STAGING_FOLDER, NbgraderCourse
from .records import HandIn, Outcome, Screening
from .staging import Staged

__all__ = ["Unreadable", "contain", "unreadable_staging"]

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


def unreadable_staging(course: NbgraderCourse, hand_in: HandIn, failure: Unreadable) -> Staged:
    """``hand_in`` staged as unreadable: every expected notebook scores 0 with the note, and
    nothing is executed. What the failed step left in the staging folder is removed, so the
    recording step finds no notebook of this hand-in to read."""
    shutil.rmtree(
        course.root / STAGING_FOLDER / hand_in.student / hand_in.assignment, ignore_errors=True
    )
    note = f"{failure.note} (scored 0)"
    return Staged(
        screenings={
            name: Screening(name, Outcome.UNREADABLE, (note,))
            for name in course.notebook_names(hand_in.assignment)
        }
    )
