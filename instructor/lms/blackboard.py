"""Blackboard Learn (Original): its Grade Center "Download Assignment" zip and its Grade
Center upload CSV.

The download: flat files ``<assignment title>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_NB``
and one receipt ``<title>_<username>_attempt_<time>.txt`` per attempt (ignored). The
layout of nbgrader's documented ``zip_collect`` example (nbgrader docs, "Importing
submissions from an LMS"), which follows Blackboard Help, "Download Assignments"; no
Blackboard source is public. The title is the assignment's title as is, spaces included
(``Homework 1_jsmith_attempt_...``). The username is read between the title and
``_attempt_``, so it may hold underscores and dots; it is the student id, in any script,
composed (NFC); where that is not the username as the download spells it (decomposed, NFD),
the username is kept (``lms_students.json``) and the export writes it. A username the id
rule refuses is refused. The title: ``lms.toml``'s
``blackboard_title`` (or ``assignment=``), else a notebook name all names start with,
else the one prefix all names share up to an underscore (refused when it could end at two
underscores: ``Homework 1_st_jsmith`` and ``Homework 1_st_mdoe`` may be usernames
``st_jsmith``, ``st_mdoe``). The time is the attempt's, to the second, in the server's time
zone (``tz``, UTC by default). The newest attempt per student and notebook wins.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from .base import (
    IntakeError,
    Lms,
    Parsed,
    ReadContext,
    StudentSubmission,
)
from .config import LmsConfig
from .csv_safety import write_rows
from .roster import LmsIdentity
from .table import Finals, GradeItem, GradeTable, format_points, score_cells

__all__ = [
    "BLACKBOARD_IDENTITY",
    "Blackboard",
    "blackboard_header",
    "blackboard_prefix",
    "parse_time",
    "write_blackboard",
]

log = logging.getLogger(__name__)

BLACKBOARD_IDENTITY = (
    "Last Name",
    "First Name",
    "Username",
    "Student ID",
    "Last Access",
    "Availability",
)
BLACKBOARD_TIME = "%Y-%m-%d-%H-%M-%S"
_BLACKBOARD = re.compile(
    r"(?P<head>[^/]+)_attempt_(?P<time>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)(?:_(?P<file>[^/]+))?"
)


def parse_time(text: str, tz: tzinfo) -> datetime:
    """A time as Blackboard names it (or anything ``dateutil`` reads), aware, in UTC."""
    try:
        moment = datetime.strptime(text, BLACKBOARD_TIME)
    except ValueError:
        import dateutil.parser

        moment = dateutil.parser.parse(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def head_of(name: str) -> str | None:
    """``<title>_<username>`` of a Blackboard name (a notebook or a receipt), or None."""
    match = _BLACKBOARD.fullmatch(name.removesuffix(".txt"))
    return match["head"] if match else None


def blackboard_prefix(heads: Sequence[str], notebooks: Sequence[str], title: str | None) -> str:
    """The assignment title Blackboard puts before every username."""
    heads = sorted(set(heads))
    candidates = [title] if title else sorted(notebooks, key=len, reverse=True)
    for candidate in candidates:
        if all(h.startswith(candidate + "_") and len(h) > len(candidate) + 1 for h in heads):
            return candidate
    if title is None and len(heads) > 1:
        common = os.path.commonprefix([heads[0], heads[-1]])
        ends = [i for i, char in enumerate(common) if char == "_"]
        if len(ends) == 1:
            return common[: ends[0]]
        if ends:
            options = ", ".join(repr(common[:i]) for i in ends)
            raise IntakeError(
                f"the Blackboard assignment title may be any of {options} (usernames that "
                f"share a prefix, e.g. {heads[0]!r}): give the title as Blackboard spells it, "
                "blackboard_title in autograder/lms.toml (assignment=... in Python)"
            )
    raise IntakeError(
        "cannot tell the Blackboard assignment title from the usernames in "
        f"{heads[:3]}: give the title as Blackboard spells it, blackboard_title in "
        "autograder/lms.toml (assignment=... in Python)"
    )


class Blackboard(Lms):
    name = "blackboard"
    example = "{nb}_jsmith_attempt_2026-11-20-10-15-02_{nb}.ipynb"
    exports = ("blackboard.csv",)

    def prepare(self, heads: Sequence[str], context: ReadContext) -> ReadContext:
        heads = [h for name in heads if (h := head_of(name))]
        title = blackboard_prefix(heads, context.notebooks, context.title)
        return ReadContext(context.notebooks, context.tz, title)

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        match = _BLACKBOARD.fullmatch(name)
        if not match or not match["file"]:
            return None
        prefix = context.title or ""
        head = match["head"]
        username = head[len(prefix) + 1 :] if head.startswith(prefix + "_") else head
        student = unicodedata.normalize("NFC", username)
        # The upload matches the username as Blackboard spells it: kept where the id is not
        # it (lms_students.json), and written by the export instead of the id.
        return Parsed(
            student=student,
            file_name=match["file"],
            lms_user_id=username if student != username else None,
            timestamp=parse_time(match["time"], context.tz),
        )

    def identity(self, submission: StudentSubmission) -> LmsIdentity | None:
        """The username, where the student id is not it (a decomposed or refused one)."""
        if not submission.lms_user_id:
            return None
        return LmsIdentity(self.name, submission.lms_user_id)

    def ignored(self, name: str) -> str | None:
        match = _BLACKBOARD.fullmatch(name[: -len(".txt")]) if name.endswith(".txt") else None
        return "Blackboard submission receipt" if match and not match["file"] else None

    def export(self, finals: Finals, folder: Path, config: LmsConfig) -> list[Path]:
        items = finals.items(self.name, config)
        self.say_unmapped(
            items,
            config,
            "blackboard_id",
            "Blackboard's upload makes each such column a new text column",
        )
        return [write_blackboard(blackboard_table(finals, items), folder / "blackboard.csv")]


def blackboard_table(finals: Finals, items: tuple[GradeItem, ...]) -> GradeTable:
    """``finals`` keyed by Blackboard username: the student id, or the username a Blackboard
    download named where the id is not it (``lms_students.json``)."""
    usernames = {
        student: identity.user_id
        for (student, _), identity in sorted(finals.identities.items())
        if identity.lms == "blackboard"
    }
    table = finals.table(items)
    return GradeTable(
        table.items,
        tuple(replace(t, student=usernames.get(t.student, t.student)) for t in table.students),
    )


def blackboard_header(item: GradeItem) -> str:
    header = f"{item.label} [Total Pts: {format_points(item.max_points)} Score]"
    return f"{header} |{item.lms_id}" if item.lms_id else header


# Blackboard. Checked against:
# - Blackboard Help for Instructors, "Uploading or Downloading Grade Center Items for Working
#   Offline", http://library.blackboard.com/ref/3ea64795-6ecc-4abd-b595-0a9a8dfdec94/Content/_instructor_grade_center/grade_center_upload_download.htm
#   and its successor "Work Offline with Grade Data",
#   https://help.blackboard.com/ca-es/Learn/Instructor/Original/Grade/Grading_Tasks/Work_Offline_With_Grade_Data
#   : students identified by username, columns by column ID number (none: a new text column
#   with 0 points possible), a header row then one record per line, a comma-delimited .csv
#   with every value in a quote character.
# Not in a document: the header text "<name> [Total Pts: <max> Score] |<id>" and the columns
# Last Access and Availability are those of Blackboard's own Grade Center download; what an
# upload does with an empty cell.
def write_blackboard(table: GradeTable, path: str | Path) -> Path:
    """The Blackboard Grade Center upload, comma-delimited with every value quoted."""
    rows = [[*BLACKBOARD_IDENTITY, *(blackboard_header(item) for item in table.items)]]
    for student in table.students:
        first, last = student.first_and_last()
        identity = [last, first, student.student, student.sis_id or "", "", "Yes"]
        rows.append([*identity, *score_cells(table, student)])
    return write_rows(Path(path), rows, quote_all=True)
