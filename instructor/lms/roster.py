"""Who each student is in the LMS their submissions came from: ``lms_students.json``.

A Canvas or Moodle download names its students by nothing that LMS's grade import matches
on its own: the nbgrader ids the intake makes (``smithjane``, ``jane_smith_4242``) are no
logins or usernames. What the download does name is kept here, per student and assignment,
so that the exports (:mod:`instructor.lms.export`, written by the class grader's reports)
can key each row on it, in this run or any later one:

``canvas``
    the Canvas user id (``smithjane_123456_...``: 123456), which Canvas's gradebook import
    matches first (its ``ID`` column);
``blackboard``
    the username as the download spells it, where the student id is not it (a decomposed
    username, composed for the id);
``moodle``
    the participant id (``Jane Smith_4242_assignsubmission_file_``: 4242) and the name.
    The participant id is no Moodle user id: it is the assignment's own number for the
    student (``assign_user_mapping``), which only that assignment's grading worksheet
    upload matches.

``write_submissions`` (:mod:`.intake`) writes the file next to ``submitted/``
(``autograder/lms_students.json``, git-ignored: it names students), updating the entries
of the assignment it unpacks; other assignments' entries are kept.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ROSTER", "LmsIdentity", "read_roster", "roster_path", "update_roster"]

log = logging.getLogger(__name__)

ROSTER = "lms_students.json"
ABOUT = (
    "Written by instructor.lms.intake from LMS downloads: student -> assignment -> who the "
    "student is in that LMS. Read by the grader's LMS exports (reports/canvas.csv, "
    "reports/moodle_worksheet_<assignment>.csv)."
)


@dataclass(frozen=True)
class LmsIdentity:
    """One student's identity in the LMS of one assignment's download.

    Attributes:
        lms: ``canvas``, ``moodle`` or ``blackboard``.
        user_id: Canvas's user id, Moodle's participant id (of that assignment), or the
            Blackboard username as spelled.
        display_name: the name the LMS shows (Moodle), or None.
    """

    lms: str
    user_id: str
    display_name: str | None = None

    def to_json(self) -> dict[str, str]:
        data = {"lms": self.lms, "user_id": self.user_id}
        if self.display_name:
            data["display_name"] = self.display_name
        return data


def roster_path(submitted_dir: str | Path) -> Path:
    """``lms_students.json`` next to ``submitted_dir``."""
    return Path(submitted_dir).parent / ROSTER


def _load(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("students", {})


def read_roster(path: str | Path) -> dict[tuple[str, str], LmsIdentity]:
    """(student, assignment) -> the student's LMS identity; empty without the file."""
    return {
        (student, assignment): LmsIdentity(
            entry["lms"], str(entry["user_id"]), entry.get("display_name")
        )
        for student, assignments in _load(Path(path)).items()
        for assignment, entry in assignments.items()
    }


def update_roster(
    path: str | Path,
    assignment: str,
    identities: Mapping[str, LmsIdentity | None],
) -> bool:
    """Record ``identities`` (student -> identity; None: none known) for ``assignment``.

    Entries of other assignments are kept. A student whose id stands for another LMS user
    in another assignment (two Jane Smiths, one per download) is logged: each assignment's
    grade still goes to its own user. Returns whether the file changed.
    """
    path = Path(path)
    roster = _load(path)
    before = json.dumps(roster, sort_keys=True)
    for student in sorted(identities):
        identity = identities.get(student)
        entries = roster.setdefault(student, {})
        if identity is None:
            entries.pop(assignment, None)
        else:
            others = {
                (e["lms"], str(e["user_id"]))
                for a, e in entries.items()
                if a != assignment and e["lms"] == identity.lms
            }
            if others and others != {(identity.lms, identity.user_id)}:
                log.warning(
                    "%s is %s user %s in %s but %s elsewhere: two students share this id; "
                    "each assignment's grade is exported to its own user, totals.csv adds "
                    "them up",
                    student,
                    identity.lms,
                    identity.user_id,
                    assignment,
                    ", ".join(sorted(uid for _, uid in others)),
                )
            entries[assignment] = identity.to_json()
        if not entries:
            roster.pop(student)
    if json.dumps(roster, sort_keys=True) == before and path.exists():
        return False
    if not roster and not path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"about": ABOUT, "students": roster}, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    return True
