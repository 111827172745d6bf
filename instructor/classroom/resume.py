"""The class grader's resume state: one JSON summary per recorded hand-in.

``.grading/state/<assignment>/<student>.json`` is written once a hand-in is recorded in the
gradebook. A hand-in whose files have the same fingerprint as its state is not graded again
(unless forced), so an interrupted run picks up where it stopped; the reports are written
from these summaries.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .records import HandIn, HandInSummary

__all__ = ["ResumeState", "fingerprint"]


def fingerprint(folder: Path) -> str:
    """A digest of every file under ``folder``: names and contents."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class ResumeState:
    """The summaries of recorded hand-ins, under ``folder`` (``.grading/state``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, student: str, assignment: str) -> Path:
        return self.folder / assignment / f"{student}.json"

    def is_recorded(self, hand_in: HandIn) -> bool:
        """Whether ``hand_in`` was recorded with the same files."""
        state = self.path(hand_in.student, hand_in.assignment)
        if not state.exists():
            return False
        return json.loads(state.read_text()).get("fingerprint") == hand_in.fingerprint

    def save(self, summary: HandInSummary) -> None:
        state = self.path(summary.student, summary.assignment)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps(summary.to_json(), indent=1))

    def students(self, assignment: str) -> list[str]:
        """Every student with a recorded hand-in of ``assignment``, sorted."""
        return [state.stem for state in sorted((self.folder / assignment).glob("*.json"))]

    def load(self, assignments: list[str]) -> list[HandInSummary]:
        """Every recorded summary of ``assignments``, by assignment then student."""
        return [
            HandInSummary.from_json(json.loads(self.path(student, assignment).read_text()))
            for assignment in assignments
            for student in self.students(assignment)
        ]
