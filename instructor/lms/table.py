"""Grades as the LMS exports take them: one :class:`GradeItem` per assignment, one
:class:`StudentTotal` per student, in a :class:`GradeTable`; and :class:`Finals`, what the
class grader hands every LMS module (:meth:`instructor.lms.base.Lms.export`): each
student's final points per assignment and who the student is in the LMS."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import LmsConfig
    from .roster import LmsIdentity

__all__ = ["Finals", "GradeItem", "GradeTable", "StudentTotal", "format_points", "score_cells"]


@dataclass(frozen=True)
class GradeItem:
    """One graded column: an assignment.

    Attributes:
        name: the assignment's name in the LMS.
        max_points: the points possible.
        lms_id: Canvas's assignment id or Blackboard's column id, when known (matches the
            existing column instead of creating one).
        title: the assignment's title in the LMS (``lms.toml``), when it is not ``name``:
            the column header then names it, the scores stay keyed by ``name``.
    """

    name: str
    max_points: float
    lms_id: str | None = None
    title: str | None = None

    @property
    def label(self) -> str:
        """What the column header calls the item: its LMS title, else its name."""
        return self.title or self.name

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


def score_cells(table: GradeTable, student: StudentTotal) -> list[str]:
    """``student``'s points under each of ``table``'s items (empty where none)."""
    return [format_points(student.scores.get(item.name)) for item in table.items]


@dataclass(frozen=True)
class Finals:
    """What every LMS export is written from.

    Attributes:
        assignments: (assignment id, points possible) in the course's order.
        students: every student id graded, sorted.
        points: (student, assignment) -> final points, for what is graded (not handed in,
            or awaiting a grader: absent).
        names: student -> display name, where known.
        identities: (student, assignment) -> who an LMS download said the student is.
    """

    assignments: tuple[tuple[str, float], ...]
    students: tuple[str, ...]
    points: Mapping[tuple[str, str], float]
    names: Mapping[str, str] = field(default_factory=dict)
    identities: Mapping[tuple[str, str], LmsIdentity] = field(default_factory=dict)

    def items(
        self, lms: str | None = None, config: LmsConfig | None = None
    ) -> tuple[GradeItem, ...]:
        """One item per assignment, named by its id; with ``lms`` and ``config``, titled and
        numbered as ``lms.toml`` maps it to that LMS's assignment."""
        items = []
        for assignment, maximum in self.assignments:
            column = config.column(assignment, lms) if config and lms else None
            items.append(
                GradeItem(
                    assignment,
                    maximum,
                    lms_id=column.id if column else None,
                    title=column.title if column else None,
                )
            )
        return tuple(items)

    def table(self, items: tuple[GradeItem, ...] | None = None) -> GradeTable:
        """Each student's points per assignment, keyed by student id (not handed in: no
        score, an empty cell)."""
        scores: dict[str, dict[str, float]] = {}
        for (student, assignment), points in self.points.items():
            scores.setdefault(student, {})[assignment] = points
        return GradeTable(
            items if items is not None else self.items(),
            tuple(
                StudentTotal(student, self.names.get(student), scores.get(student, {}))
                for student in self.students
            ),
        )
