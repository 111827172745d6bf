"""Grades in each LMS's import format (instructor.lms.export), read back with ``csv`` and
checked against what each LMS's documents require (named in each LMS's module:
instructor/lms/canvas.py, moodle.py, blackboard.py)."""

from __future__ import annotations

import csv
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from instructor.lms.export import (
    BLACKBOARD_IDENTITY,
    CANVAS_IDENTITY,
    MOODLE_WORKSHEET,
    GradeItem,
    GradeTable,
    StudentTotal,
    format_points,
    write_blackboard,
    write_canvas,
    write_moodle,
    write_moodle_worksheet,
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


# -------------------------------------------------- what the documents require (test side)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
QUOTED_LINE = re.compile(r'"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*')


def score_cells(cells: list[str]) -> bool:
    """Every cell a plain number (Canvas and Moodle read it as points) or empty."""
    return all(cell == "" or NUMBER.fullmatch(cell) for cell in cells)


def check_canvas(rows: list[list[str]]) -> None:
    """Canvas's GradebookImporter and OSU's "Import CSV File for Carmen Grades": the
    header starts Student, ID, SIS User ID, SIS Login ID, and Section ends the identity
    columns; the row starting "Points Possible" holds each assignment's points; every
    student has a name, ID, SIS User ID or SIS Login ID to be matched by."""
    header, points, *students = rows
    assert header[:2] == ["Student", "ID"]
    assert header[2:4] == ["SIS User ID", "SIS Login ID"] and header[4] == "Section"
    assert points[0] == "Points Possible" and points[1:5] == ["", "", "", ""]
    assert len(points) == len(header) and all(NUMBER.fullmatch(p) for p in points[5:])
    for row in students:
        assert len(row) == len(header) and any(row[:4]), row
        assert score_cells(row[5:]), row


def check_moodle(rows: list[list[str]], identifier: str) -> None:
    """Moodle Docs "Grade import" and gradeimport_csv: a header row whose identity column
    maps to username, ID number or email; a row whose user is missing aborts the import;
    grades are numbers (else "badgrade")."""
    header, *students = rows
    assert header[0] == identifier in ("Username", "ID number", "Email address")
    assert len(set(header)) == len(header), "each column mapped once"
    for row in students:
        assert len(row) == len(header) and row[0], row
        assert score_cells(row[1:]), row


def check_moodle_worksheet(rows: list[list[str]], maximum: float) -> None:
    """Moodle's assignment worksheet upload (assignfeedback_offline's importer): columns
    "Identifier", "Grade" and "Last modified (grade)"; Identifier is "Participant " and the
    participant id; a grade is a number from 0 to the assignment's maximum (else skipped);
    the time is one PHP's strtotime reads (ISO 8601 here)."""
    header, *students = rows
    assert {"Identifier", "Grade", "Last modified (grade)"} <= set(header), header
    column = {name: header.index(name) for name in header}
    for row in students:
        assert len(row) == len(header), row
        assert re.fullmatch(r"Participant \d+", row[column["Identifier"]]), row
        assert NUMBER.fullmatch(row[column["Grade"]]), row
        assert 0 <= float(row[column["Grade"]]) <= maximum, row
        datetime.fromisoformat(row[column["Last modified (grade)"]])


def check_blackboard(path: Path) -> None:
    """Blackboard Help, "Uploading or Downloading Grade Center Items for Working Offline":
    a header row, one record per line, students by username, every value of a .csv in
    quotes. (The "[Total Pts: N Score] |id" header is the Grade Center download's.)"""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all(QUOTED_LINE.fullmatch(line) for line in lines), "every value in quotes"
    header, *students = read_rows(path)
    username = header.index("Username")
    for row in students:
        assert len(row) == len(header) and row[username], row
    for title in header[len(BLACKBOARD_IDENTITY) :]:
        assert re.fullmatch(r".+ \[Total Pts: [\d.]+ Score\](?: \|\d+)?", title), title


# ------------------------------------------------------------------- readers (test side)
def read_canvas(path: Path, id_column: str = "ID") -> GradeTable:
    check_canvas(read_rows(path))
    header, points, *rows = read_rows(path)
    assert header[:5] == list(CANVAS_IDENTITY)
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
    check_moodle(read_rows(path), identifier)
    header, *rows = read_rows(path)
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
    check_blackboard(path)
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
    check_canvas(rows)
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


def test_canvas_user_ids_go_under_id(tmp_path: Path) -> None:
    """A Canvas download's students carry their Canvas user id (``lms_user_id``): it goes
    under ID, which Canvas matches first; the others keep their id under ``id_column``."""
    table = GradeTable(
        ITEMS,
        (
            StudentTotal("123456", None, {"01 Vector sets": 9}, lms_user_id="123456"),
            StudentTotal("jsmith", "Jane Smith", {"02 Soft select": 3}),
        ),
    )
    rows = read_rows(write_canvas(table, tmp_path / "canvas.csv", id_column="SIS Login ID"))
    check_canvas(rows)
    assert rows[2] == ["", "123456", "", "", "", "9", ""]
    assert rows[3] == ["Jane Smith", "", "", "jsmith", "", "", "3"]


# -------------------------------------------------------------------------------- Moodle
def test_moodle_worksheet(tmp_path: Path) -> None:
    """One assignment's grading worksheet, by participant id (what a Moodle download
    names): Moodle's own columns, the time a grade was last changed here."""
    item = GradeItem("01_vector_sets", 9)
    table = GradeTable(
        (item,),
        (
            StudentTotal("jane_smith_4242", "Jane Smith", {item.name: 6}, lms_user_id="4242"),
            StudentTotal("p_17", None, {item.name: 20 / 3}, lms_user_id="17"),
        ),
    )
    when = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
    rows = read_rows(write_moodle_worksheet(table, tmp_path / "w.csv", modified=when))
    check_moodle_worksheet(rows, item.max_points)
    assert rows == [
        list(MOODLE_WORKSHEET),
        ["Participant 4242", "Jane Smith", "6", "9", "2026-11-20T09:30:00+00:00"],
        ["Participant 17", "", "6.6667", "9", "2026-11-20T09:30:00+00:00"],
    ]
    with pytest.raises(ValueError, match="one assignment"):
        write_moodle_worksheet(TABLE, tmp_path / "x.csv")
    no_id = GradeTable((item,), (StudentTotal("jsmith", scores={item.name: 1}),))
    with pytest.raises(ValueError, match="no Moodle participant id"):
        write_moodle_worksheet(no_id, tmp_path / "x.csv")


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
    check_blackboard(path)
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


# ------------------------------------------------------------------- the checks themselves
def test_the_checks_refuse_what_the_documents_refuse(tmp_path: Path) -> None:
    rows = read_rows(write_canvas(TABLE, tmp_path / "canvas.csv"))
    with pytest.raises(AssertionError):  # no "Points Possible" row
        check_canvas([rows[0], *rows[2:]])
    with pytest.raises(AssertionError):  # Section is not the last identity column
        check_canvas([[*rows[0][:4], "Group", *rows[0][5:]], *rows[1:]])
    with pytest.raises(AssertionError):  # a student Canvas cannot match
        check_canvas([*rows, ["", "", "", "", "A", "1", "2"]])
    with pytest.raises(AssertionError):  # a grade that is not a number
        check_moodle([["Username", "x"], ["jane", "9/10"]], "Username")
    with pytest.raises(AssertionError):  # a row without its user
        check_moodle([["Username", "x"], ["", "9"]], "Username")
    unquoted = tmp_path / "unquoted.csv"
    with unquoted.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(read_rows(write_blackboard(TABLE, tmp_path / "bb.csv")))
    with pytest.raises(AssertionError, match="every value in quotes"):
        check_blackboard(unquoted)


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


def test_an_assignment_without_its_lms_id_is_named_with_what_the_lms_then_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Without lms.toml a note (the documented default); with one that lacks an id, a
    warning naming the assignment, the key and what the LMS's import does with the column."""
    import logging

    from instructor.classroom.grader.reports import export_finals
    from instructor.lms.config import read_config
    from support.summaries import one_cell_summary

    summaries = [one_cell_summary("jsmith", "01_vector_sets", 7.0)]
    with caplog.at_level(logging.INFO, logger="instructor.lms"):
        export_finals(tmp_path / "none", summaries)
    notes = {r.getMessage() for r in caplog.records if r.levelno == logging.INFO}
    assert any(
        m.startswith("canvas.csv: no canvas_id for 01_vector_sets in lms.toml: Canvas's import")
        for m in notes
    ), notes
    assert any("blackboard.csv: no blackboard_id for 01_vector_sets" in m for m in notes), notes

    toml = tmp_path / "lms.toml"
    toml.write_text('[assignments.01_vector_sets]\ncanvas_id = "4711"\n')
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="instructor.lms"):
        export_finals(tmp_path / "mapped", summaries, config=read_config(toml))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"blackboard.csv: no blackboard_id for 01_vector_sets in {toml}: Blackboard's upload "
        "makes each such column a new text column"
    ]
