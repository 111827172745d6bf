"""Grades in each LMS's import format: per-student totals to a CSV the LMS uploads.

``GradeTable`` holds the totals (one ``StudentTotal`` per student, one ``GradeItem`` per
assignment); one writer per LMS:

``write_canvas``
    Canvas Gradebook "Import" CSV (Canvas Instructor Guide, "How do I import grades in the
    Gradebook?"; the same columns as Canvas's Gradebook export): ``Student``, ``ID``,
    ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment named
    ``Assignment Name (<canvas assignment id>)`` (the bare name when the id is unknown: Canvas
    then offers to create the assignment), and a second row ``Points Possible`` with each
    assignment's maximum under its column, empty under the identity columns. Canvas matches
    students by ``ID`` (the Canvas user id), else the SIS ids: ``id_column`` says which one
    ``StudentTotal.student`` is.
``write_moodle``
    Moodle gradebook "Import > CSV file": a header row, one identity column named for the
    identifier used (``Username``, ``ID number`` or ``Email address``: the fields Moodle's
    "Identify user by / Map from" can match, gradeimport_csv ``map_user_data_with_value``),
    then one column per grade item, mapped to the items on import; numbers only.
``write_blackboard``
    Blackboard Learn (Original) Grade Center "Work Offline > Upload": the Full Grade Center
    download's columns ``Last Name``, ``First Name``, ``Username``, ``Student ID``,
    ``Last Access``, ``Availability``, then ``<name> [Total Pts: <max> Score] |<column id>``
    per item. Blackboard matches students by ``Username`` and columns by the id after ``|``;
    a header without ``|<id>`` creates a new (text) column. Its download is a tab-delimited
    UTF-16 ``.xls``; uploads also take a comma-delimited ``.csv`` with every value quoted,
    which is what this writes.

Missing scores are written as empty cells: none of the three changes a grade for an empty
cell.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

__all__ = [
    "BLACKBOARD_IDENTITY",
    "CANVAS_IDENTITY",
    "GradeItem",
    "GradeTable",
    "StudentTotal",
    "blackboard_header",
    "canvas_header",
    "format_points",
    "write_blackboard",
    "write_canvas",
    "write_moodle",
]

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CanvasId = Literal["ID", "SIS User ID", "SIS Login ID"]
MoodleId = Literal["Username", "ID number", "Email address"]
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
    """

    student: str
    name: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    sis_id: str | None = None
    section: str | None = None

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
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        writer.writerows(rows)
    return path


def write_canvas(table: GradeTable, path: str | Path, *, id_column: CanvasId = "ID") -> Path:
    """The Canvas Gradebook import CSV; ``StudentTotal.student`` goes under ``id_column``."""
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
        identity[id_column] = student.student
        rows.append([*identity.values(), *_scores(table, student)])
    return _write(Path(path), rows)


def write_moodle(table: GradeTable, path: str | Path, *, identifier: MoodleId = "Username") -> Path:
    """The Moodle grade import CSV; ``StudentTotal.student`` goes under ``identifier``."""
    if identifier not in ("Username", "ID number", "Email address"):
        raise ValueError(
            f"Moodle identifies users by Username, ID number or Email address, not {identifier!r}"
        )
    rows = [[identifier, *(item.name for item in table.items)]]
    rows += [[student.student, *_scores(table, student)] for student in table.students]
    return _write(Path(path), rows)


def write_blackboard(table: GradeTable, path: str | Path) -> Path:
    """The Blackboard Grade Center upload, comma-delimited with every value quoted."""
    rows = [[*BLACKBOARD_IDENTITY, *(blackboard_header(item) for item in table.items)]]
    for student in table.students:
        first, last = student.first_and_last()
        identity = [last, first, student.student, student.sis_id or "", "", "Yes"]
        rows.append([*identity, *_scores(table, student)])
    return _write(Path(path), rows, quote_all=True)
