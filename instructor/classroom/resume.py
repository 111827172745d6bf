"""The class grader's resume state: one JSON summary per recorded hand-in.

``.grading/state/<assignment>/<student>.json`` is written once a hand-in is recorded in the
gradebook. A hand-in whose fingerprint is the one of its state is not graded again (unless
forced), so an interrupted run picks up where it stopped; the reports are written from
these summaries.

The fingerprint covers the submission (every file of its folder) *and* what grades it
(:func:`grading_context`): the released notebooks, the graded cells of the source (tests
and points), the gradebook's URL, the due date and the late-penalty configuration. Change
any of these and the assignment's hand-ins are graded again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .records import HandIn, HandInSummary

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse

__all__ = ["ResumeState", "fingerprint", "grading_context"]


def grading_context(course: NbgraderCourse, assignment: str) -> str:
    """A digest of what grades ``assignment``'s hand-ins: its released notebooks, the graded
    cells of its source (tests and points), the gradebook URL, its due date and the late
    policy."""
    digest = hashlib.sha256()
    release = course.release_folder(assignment)
    for path in sorted(release.glob("*.ipynb")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    due = course.deadlines.due(assignment)
    context = {
        "spec": course.grading_spec(assignment),
        "db_url": course.coursedir.db_url,
        "due": due.isoformat() if due else None,
        "late": course.late_policy(),
    }
    digest.update(json.dumps(context, sort_keys=True).encode())
    return digest.hexdigest()


def fingerprint(folder: Path, context: str = "") -> str:
    """A digest of every file under ``folder`` (names and contents), and of ``context``
    (:func:`grading_context`)."""
    digest = hashlib.sha256(context.encode())
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
