"""Grades in each LMS's import format: per-student totals to a CSV the LMS uploads.

``GradeTable`` holds the totals (one ``StudentTotal`` per student, one ``GradeItem`` per
assignment); one writer per LMS. Each follows the documents named in its comment; what no
document found says is marked "not in a document" (docs/instructors.md, "The reports").

``write_canvas``
    Canvas Gradebook "Import" CSV: ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
    ``Section``, then one column per assignment named ``Assignment Name (<canvas assignment
    id>)`` (the bare name when the id is unknown: Canvas matches it by title, else offers to
    create the assignment), and a second row ``Points Possible`` with each assignment's
    maximum under its column, empty under the identity columns. Canvas matches students by
    ``ID`` (the Canvas user id), else ``SIS User ID``, else ``SIS Login ID``, else the name
    in ``Student``: a ``StudentTotal.lms_user_id`` goes under ``ID``; otherwise
    ``id_column`` says which one ``StudentTotal.student`` is.
``write_moodle``
    Moodle gradebook "Import > CSV file": a header row, one identity column (named for the
    identifier: ``Username``, ``ID number`` or ``Email address``, the user fields "Map to"
    offers besides the internal id), then one column per grade item, mapped on import to an
    existing item or a new one; numbers only.
``write_moodle_worksheet``
    Moodle assignment "Upload grading worksheet" (the "Offline grading worksheet" feedback
    type): one assignment's grades by participant (``Identifier`` = ``Participant <id>``,
    the id a Moodle "Download all submissions" names), which is how a Moodle download's
    students can be matched: it names no username, ID number or email.
``write_blackboard``
    Blackboard Learn (Original) Grade Center "Work Offline > Upload": ``Last Name``,
    ``First Name``, ``Username``, ``Student ID``, ``Last Access``, ``Availability``, then
    ``<name> [Total Pts: <max> Score] |<column id>`` per item. Blackboard matches students
    by ``Username`` and columns by their column id; a header without one creates a new
    (text) column. A comma-delimited ``.csv`` must have every value in quotes, which is what
    this writes.

Every cell goes through :func:`instructor.lms.csv_safety.safe_cell` (OWASP's rule against
CSV injection): a name, an id or a header that starts with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return is written with a leading ``'``, so no spreadsheet runs it; a score is
a plain number and is written as it is. The ids each LMS matches never start so (they are
numbers, or usernames and SIS ids), so matching is unchanged.

Missing scores are written as empty cells, which no LMS reads as a grade. They are not
"leave as is" everywhere: Canvas's and Moodle's importers read an empty cell as "no grade"
and remove a grade already in the LMS for that student and column (see each writer).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from .csv_safety import write_rows

__all__ = [
    "BLACKBOARD_IDENTITY",
    "CANVAS_IDENTITY",
    "MOODLE_WORKSHEET",
    "GradeItem",
    "GradeTable",
    "StudentTotal",
    "blackboard_header",
    "canvas_header",
    "format_points",
    "write_blackboard",
    "write_canvas",
    "write_moodle",
    "write_moodle_worksheet",
]

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CanvasId = Literal["ID", "SIS User ID", "SIS Login ID"]
MoodleId = Literal["Username", "ID number", "Email address"]
MOODLE_WORKSHEET = (
    "Identifier",
    "Full name",
    "Grade",
    "Maximum grade",
    "Last modified (grade)",
)
MOODLE_PARTICIPANT = "Participant "
"""Moodle's ``hiddenuser`` string (English): the worksheet's ``Identifier`` is it and the
participant id."""
BLACKBOARD_IDENTITY = (
    "Last Name",
    "First Name",
    "Username",
    "Student ID",
    "Last Access",
    "Availability",
)


@dataclass(frozen=True)
class GradeItem:
    """One graded column: an assignment.

    Attributes:
        name: the assignment's name in the LMS.
        max_points: the points possible.
        lms_id: Canvas's assignment id or Blackboard's column id, when known (matches the
            existing column instead of creating one).
    """

    name: str
    max_points: float
    lms_id: str | None = None

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a grade item needs a name")
        if not math.isfinite(self.max_points) or self.max_points < 0:
            raise ValueError(f"{self.name}: points possible {self.max_points} is not a number >= 0")


@dataclass(frozen=True)
class StudentTotal:
    """One student's totals.

    Attributes:
        student: the id the LMS knows the student by (Canvas user id or SIS id, Moodle
            username, ID number or email, Blackboard username).
        name: the display name, if known ("Jane Smith" or "Smith, Jane").
        scores: item name -> points; an item left out is written as an empty cell.
        sis_id: the institution's student number, if known (Canvas ``SIS User ID`` when
            ``student`` is the Canvas id, Blackboard ``Student ID``).
        section: Canvas's section, if known.
        lms_user_id: the LMS's own number for the student where an LMS download named it:
            Canvas's user id (written under ``ID``, and then ``student`` is not written),
            or a Moodle participant id (the grading worksheet's ``Identifier``).
    """

    student: str
    name: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    sis_id: str | None = None
    section: str | None = None
    lms_user_id: str | None = None

    def __post_init__(self) -> None:
        if not self.student.strip():
            raise ValueError(f"a student without an id ({self.name or 'no name'})")
        for item, points in self.scores.items():
            if not math.isfinite(points):
                raise ValueError(f"{self.student}: {item} score {points} is not a number")
        object.__setattr__(self, "scores", MappingProxyType(dict(self.scores)))

    def __hash__(self) -> int:
        return hash((self.student, self.name, tuple(sorted(self.scores.items()))))

    def first_and_last(self) -> tuple[str, str]:
        """(first name, last name) from ``name``: "Smith, Jane" or "Jane Smith"."""
        if not self.name:
            return "", ""
        if "," in self.name:
            last, first = (part.strip() for part in self.name.split(",", 1))
            return first, last
        first, _, last = self.name.strip().rpartition(" ")
        return first, last


@dataclass(frozen=True)
class GradeTable:
    """Per-student totals of some assignments."""

    items: tuple[GradeItem, ...]
    students: tuple[StudentTotal, ...]

    def __post_init__(self) -> None:
        names = [item.name for item in self.items]
        if len(set(names)) != len(names):
            raise ValueError(f"grade items with the same name: {sorted(names)}")
        ids = [s.student for s in self.students]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"students listed twice: {duplicates}")
        for student in self.students:
            unknown = sorted(set(student.scores) - set(names))
            if unknown:
                raise ValueError(f"{student.student}: scores for unknown items {unknown}")


def format_points(points: float | None) -> str:
    """A score as the LMSs read it: ``7``, ``7.5``, ``7.3333`` (4 decimals at most)."""
    if points is None:
        return ""
    text = f"{points:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def canvas_header(item: GradeItem) -> str:
    return f"{item.name} ({item.lms_id})" if item.lms_id else item.name


def blackboard_header(item: GradeItem) -> str:
    header = f"{item.name} [Total Pts: {format_points(item.max_points)} Score]"
    return f"{header} |{item.lms_id}" if item.lms_id else header


def _scores(table: GradeTable, student: StudentTotal) -> list[str]:
    return [format_points(student.scores.get(item.name)) for item in table.items]


def _write(path: Path, rows: list[list[str]], *, quote_all: bool = False) -> Path:
    """``rows`` to ``path``, every cell made safe for a spreadsheet (:mod:`.csv_safety`)."""
    return write_rows(path, rows, quote_all=quote_all)


# Canvas. Checked against:
# - "Import CSV File for Carmen Grades", The Ohio State University (CarmenCanvas is its Canvas),
#   https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
#   : Student name, ID or SIS User ID (one needed), SIS Login ID, Section, then the assignments.
# - Canvas's importer, class GradebookImporter (instructure/canvas-lms,
#   app/models/gradebook_importer.rb): the header must start "Student", "ID", then "SIS User
#   ID", "SIS Login ID" (or "SIS Login ID" alone), its last identity column "Section"; a row
#   whose first cell holds "Points Possible" gives the points; "Name (id)" headers match by id,
#   else by title; students by ID, SIS User ID, SIS Login ID, then name. A blank cell against
#   an existing score counts as a change, and the upload page posts it as an empty grade
#   (ProcessGradebookUpload): it removes that score.
# Instructure's own guide, "How do I import grades in the Gradebook?"
# (https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807),
# was not found in a stored copy: not checked against it.
def write_canvas(table: GradeTable, path: str | Path, *, id_column: CanvasId = "ID") -> Path:
    """The Canvas Gradebook import CSV: ``StudentTotal.lms_user_id`` (the Canvas user id)
    under ``ID`` where there is one, else ``StudentTotal.student`` under ``id_column``."""
    if id_column not in CANVAS_IDENTITY[1:4]:
        raise ValueError(
            f"Canvas matches students by ID, SIS User ID or SIS Login ID, not {id_column!r}"
        )
    rows = [[*CANVAS_IDENTITY, *(canvas_header(item) for item in table.items)]]
    rows.append(
        ["Points Possible", "", "", "", "", *(format_points(i.max_points) for i in table.items)]
    )
    for student in table.students:
        identity = {
            "Student": student.name or "",
            "ID": "",
            "SIS User ID": student.sis_id or "",
            "SIS Login ID": "",
            "Section": student.section or "",
        }
        if student.lms_user_id:
            identity["ID"] = student.lms_user_id
        else:
            identity[id_column] = student.student
        rows.append([*identity.values(), *_scores(table, student)])
    return _write(Path(path), rows)


# Moodle. Checked against:
# - Moodle Docs, "Grade import", https://docs.moodle.org/311/en/Grade_import : CSV import,
#   "Map from" a column of the file "Map to" a user field (``useridnumber``, ``useremail``;
#   the importer also takes ``username`` and ``userid``), each grade column mapped to a grade
#   item or a new one.
# - Moodle's importer, gradeimport_csv_load_data (moodle/moodle,
#   grade/import/csv/classes/load_data.php): map_user_data_with_value matches ``username``,
#   ``useridnumber`` or ``useremail``; a row whose user is not found aborts the whole import;
#   update_grade_item takes a number (else "badgrade") and reads "" or "-" as no grade, which
#   replaces a grade already there.
def write_moodle(table: GradeTable, path: str | Path, *, identifier: MoodleId = "Username") -> Path:
    """The Moodle grade import CSV; ``StudentTotal.student`` goes under ``identifier``."""
    if identifier not in ("Username", "ID number", "Email address"):
        raise ValueError(
            f"Moodle identifies users by Username, ID number or Email address, not {identifier!r}"
        )
    rows = [[identifier, *(item.name for item in table.items)]]
    rows += [[student.student, *_scores(table, student)] for student in table.students]
    return _write(Path(path), rows)


# Moodle's assignment grading worksheet. Checked against Moodle's source (moodle/moodle):
# - mod/assign/locallib.php, download_submissions: each file or folder of "Download all
#   submissions" is named "<full name>_<get_uniqueid_for_user(userid)>_...", the participant
#   id: the row id of assign_user_mapping for that assignment and user, not the user id.
# - mod/assign/gradingtable.php, col_recordid: the worksheet's Identifier is
#   get_string('hiddenuser', 'assign') ("Participant ") . that same participant id.
# - mod/assign/feedback/offline/importgradeslib.php, assignfeedback_offline_grade_importer:
#   needs the columns get_string('recordid', 'assign') ("Identifier"), the grade ("Grade")
#   and get_string('lastmodifiedgrade', 'assign') ("Last modified (grade)"), in the uploading
#   user's language; strips strlen("Participant ") characters off Identifier and looks the
#   rest up with get_user_id_for_uniqueid; rows of anyone else are skipped.
# - mod/assign/feedback/offline/locallib.php, process_import_grades: a grade is skipped when
#   it is empty or negative, equal to the grade there, above the assignment's maximum grade,
#   locked, or older (Last modified (grade), read by strtotime, plus 60 s) than the grade in
#   Moodle unless "ignore modified" is ticked on upload.
# Not checked against a document: no stored Moodle Docs page on the grading worksheet was
# found, so the columns and their English names are the source's.
def write_moodle_worksheet(
    table: GradeTable, path: str | Path, *, modified: datetime | None = None
) -> Path:
    """A Moodle assignment's grading worksheet for ``table``'s one item: each student's
    ``lms_user_id`` (the participant id) as ``Participant <id>``, ``name`` and points.

    ``modified`` (default now) is the worksheet's ``Last modified (grade)``: a grade changed
    in Moodle after it is left as it is on upload (unless the upload is told to ignore it).
    """
    if len(table.items) != 1:
        raise ValueError(
            f"a Moodle grading worksheet is one assignment's, not {len(table.items)} items"
        )
    (item,) = table.items
    lacking = [s.student for s in table.students if not s.lms_user_id]
    if lacking:
        raise ValueError(f"no Moodle participant id for {lacking}")
    stamp = (modified or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    rows = [list(MOODLE_WORKSHEET)]
    for student in table.students:
        rows.append(
            [
                f"{MOODLE_PARTICIPANT}{student.lms_user_id}",
                student.name or "",
                format_points(student.scores.get(item.name)),
                format_points(item.max_points),
                stamp,
            ]
        )
    return _write(Path(path), rows)


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
        rows.append([*identity, *_scores(table, student)])
    return _write(Path(path), rows, quote_all=True)
