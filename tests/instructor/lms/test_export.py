"""Grades in each LMS's import format (instructor.lms.export), read back with ``csv``."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from instructor.lms.export import (
    BLACKBOARD_IDENTITY,
    CANVAS_IDENTITY,
    GradeItem,
    GradeTable,
    StudentTotal,
    format_points,
    write_blackboard,
    write_canvas,
    write_moodle,
)

ITEMS = (
    GradeItem("01 Vector sets", 10, lms_id="4711"),
    GradeItem("02 Soft select", 12.5),
)
TABLE = GradeTable(
    ITEMS,
    (
        StudentTotal("1001", "Jane Smith", {"01 Vector sets": 9.5, "02 Soft select": 12.5}),
        StudentTotal("1002", "O'Neil, Mary Ann", {"01 Vector sets": 7}, sis_id="S-77"),
        StudentTotal("1003", None, {"01 Vector sets": 20 / 3, "02 Soft select": 0}),
    ),
)


def read_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def number(cell: str) -> float | None:
    return float(cell) if cell else None


# ------------------------------------------------------------------- readers (test side)
def read_canvas(path: Path, id_column: str = "ID") -> GradeTable:
    header, points, *rows = read_rows(path)
    assert header[:5] == list(CANVAS_IDENTITY)
    assert points[0] == "Points Possible" and points[1:5] == ["", "", "", ""]
    items = []
    for title, maximum in zip(header[5:], points[5:], strict=True):
        match = re.fullmatch(r"(?P<name>.+?)(?: \((?P<id>\d+)\))?", title)
        assert match
        items.append(GradeItem(match["name"], float(maximum), match["id"]))
    students = []
    for row in rows:
        identity = dict(zip(CANVAS_IDENTITY, row[:5], strict=True))
        scores = {item.name: float(cell) for item, cell in zip(items, row[5:], strict=True) if cell}
        students.append(
            StudentTotal(
                identity[id_column],
                identity["Student"] or None,
                scores,
                sis_id=identity["SIS User ID"] or None,
                section=identity["Section"] or None,
            )
        )
    return GradeTable(tuple(items), tuple(students))


def read_moodle(path: Path, identifier: str, maxima: dict[str, float]) -> GradeTable:
    header, *rows = read_rows(path)
    assert header[0] == identifier
    items = tuple(GradeItem(name, maxima[name]) for name in header[1:])
    students = tuple(
        StudentTotal(
            row[0],
            scores={i.name: float(c) for i, c in zip(items, row[1:], strict=True) if c},
        )
        for row in rows
    )
    return GradeTable(items, students)


def read_blackboard(path: Path) -> GradeTable:
    header, *rows = read_rows(path)
    assert header[:6] == list(BLACKBOARD_IDENTITY)
    items = []
    for title in header[6:]:
        match = re.fullmatch(
            r"(?P<name>.+) \[Total Pts: (?P<max>[\d.]+) Score\](?: \|(?P<id>\d+))?", title
        )
        assert match, title
        items.append(GradeItem(match["name"], float(match["max"]), match["id"]))
    students = []
    for row in rows:
        identity = dict(zip(BLACKBOARD_IDENTITY, row[:6], strict=True))
        assert identity["Availability"] == "Yes" and identity["Last Access"] == ""
        first, last = identity["First Name"], identity["Last Name"]
        name = f"{last}, {first}" if first and last else (last or None)
        scores = {i.name: float(c) for i, c in zip(items, row[6:], strict=True) if c}
        students.append(
            StudentTotal(identity["Username"], name, scores, sis_id=identity["Student ID"] or None)
        )
    return GradeTable(tuple(items), tuple(students))


def rounded(table: GradeTable) -> GradeTable:
    """The table as it reads back: scores to 4 decimals, names as the reader writes them."""
    return GradeTable(
        table.items,
        tuple(
            StudentTotal(
                s.student,
                s.name,
                {k: float(format_points(v)) for k, v in s.scores.items()},
                sis_id=s.sis_id,
                section=s.section,
            )
            for s in table.students
        ),
    )


# -------------------------------------------------------------------------------- Canvas
def test_canvas_columns(tmp_path: Path) -> None:
    rows = read_rows(write_canvas(TABLE, tmp_path / "canvas.csv"))
    assert rows[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "01 Vector sets (4711)",
        "02 Soft select",
    ]
    assert rows[1] == ["Points Possible", "", "", "", "", "10", "12.5"]
    assert rows[2] == ["Jane Smith", "1001", "", "", "", "9.5", "12.5"]
    assert rows[3] == ["O'Neil, Mary Ann", "1002", "S-77", "", "", "7", ""]
    assert rows[4] == ["", "1003", "", "", "", "6.6667", "0"]


def test_canvas_round_trip(tmp_path: Path) -> None:
    path = write_canvas(TABLE, tmp_path / "canvas.csv")
    assert read_canvas(path) == rounded(TABLE)
    by_login = GradeTable(ITEMS, (StudentTotal("jsmith", "Jane Smith", {"02 Soft select": 3}),))
    path = write_canvas(by_login, tmp_path / "login.csv", id_column="SIS Login ID")
    assert read_rows(path)[2][:5] == ["Jane Smith", "", "", "jsmith", ""]
    assert read_canvas(path, "SIS Login ID") == by_login


# -------------------------------------------------------------------------------- Moodle
def test_moodle_columns_and_round_trip(tmp_path: Path) -> None:
    table = GradeTable(
        ITEMS,
        (
            StudentTotal("jane@example.org", scores={"01 Vector sets": 9.5}),
            StudentTotal("mary.ann@example.org", scores={"02 Soft select": 12.5}),
        ),
    )
    path = write_moodle(table, tmp_path / "moodle.csv", identifier="Email address")
    assert read_rows(path) == [
        ["Email address", "01 Vector sets", "02 Soft select"],
        ["jane@example.org", "9.5", ""],
        ["mary.ann@example.org", "", "12.5"],
    ]
    maxima = {item.name: item.max_points for item in ITEMS}
    back = read_moodle(path, "Email address", maxima)
    assert back.students == table.students
    assert [i.name for i in back.items] == [i.name for i in ITEMS]
    with pytest.raises(ValueError, match="Username, ID number or Email address"):
        write_moodle(table, tmp_path / "x.csv", identifier="Email")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- Blackboard
def test_blackboard_columns(tmp_path: Path) -> None:
    path = write_blackboard(TABLE, tmp_path / "blackboard.csv")
    rows = read_rows(path)
    assert rows[0] == [
        "Last Name",
        "First Name",
        "Username",
        "Student ID",
        "Last Access",
        "Availability",
        "01 Vector sets [Total Pts: 10 Score] |4711",
        "02 Soft select [Total Pts: 12.5 Score]",
    ]
    assert rows[1] == ["Smith", "Jane", "1001", "", "", "Yes", "9.5", "12.5"]
    assert rows[2] == ["O'Neil", "Mary Ann", "1002", "S-77", "", "Yes", "7", ""]
    # Comma-delimited with every value quoted, as Blackboard's upload asks.
    assert path.read_text(encoding="utf-8").splitlines()[1].startswith('"Smith","Jane","1001"')


def test_blackboard_round_trip(tmp_path: Path) -> None:
    table = GradeTable(
        ITEMS,
        (
            StudentTotal("jsmith", "Smith, Jane", {"01 Vector sets": 9.25}, sis_id="S-1"),
            StudentTotal("mary_ann", None, {"02 Soft select": 11}),
        ),
    )
    assert read_blackboard(write_blackboard(table, tmp_path / "bb.csv")) == table


# ------------------------------------------------------------------------------ the table
def test_the_table_refuses_what_no_lms_would_take() -> None:
    with pytest.raises(ValueError, match="unknown items"):
        GradeTable(ITEMS, (StudentTotal("1", scores={"03 Matrix form": 1}),))
    with pytest.raises(ValueError, match="twice"):
        GradeTable(ITEMS, (StudentTotal("1"), StudentTotal("1")))
    with pytest.raises(ValueError, match="not a number"):
        StudentTotal("1", scores={"01 Vector sets": float("nan")})
    with pytest.raises(ValueError, match="points possible"):
        GradeItem("x", -1)


def test_format_points() -> None:
    assert [format_points(v) for v in (7, 7.5, 20 / 3, 0, -0.0, None)] == [
        "7",
        "7.5",
        "6.6667",
        "0",
        "0",
        "",
    ]
