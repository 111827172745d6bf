"""No CSV the grader writes holds a formula (instructor.lms.csv_safety, OWASP's rule).

Student ids (the plain ``submitted/<student>/`` layout) and display names (a Moodle
download, the gradebook) a student chose as formulas go through every report and export;
read back with ``csv``, no cell starts a formula, the scores are still plain numbers, and
each LMS still matches its rows by the id it made.
"""

from __future__ import annotations

import csv
import logging
import re
from pathlib import Path

import pytest

from instructor.classroom.grader.reports import export_finals, write_reports
from instructor.lms.csv_safety import FORMULA_START, neutralised, safe_cell, write_rows
from instructor.lms.export import (
    EXPORTS,
    GradeItem,
    GradeTable,
    StudentTotal,
    write_blackboard,
    write_canvas,
    write_moodle,
    write_moodle_worksheet,
)
from instructor.lms.roster import LmsIdentity
from support.summaries import one_cell_summary

FORMULAS = (
    "=1+1",
    '=HYPERLINK("http://x","y")',
    "+SUM(A1)",
    "-2+3",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    "  =1+1",
    "=cmd|' /C calc'!A0",
)
NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _formula_cells(rows: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would read as a formula: a first character (or first after
    spaces) of OWASP's list, unless the cell is a plain number."""
    return [
        cell
        for row in rows
        for cell in row
        if not NUMBER.fullmatch(cell)
        and (cell.startswith(FORMULA_START) or cell.lstrip(" ").startswith(FORMULA_START))
    ]


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_formula_gets_a_quote(formula: str) -> None:
    assert safe_cell(formula) == "'" + formula
    assert neutralised(formula)


@pytest.mark.parametrize("cell", ["7", "7.5", "-0.25", "0", "", "alice", "Smith, Jane", "x-1"])
def test_numbers_and_text_stay_as_they_are(cell: str) -> None:
    assert safe_cell(cell) == cell
    assert safe_cell(None) == ""


def test_written_cells_read_back_quoted(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "x.csv", [["id", "score"], *[[f, 1.5] for f in FORMULAS]])
    rows = _rows(path)
    assert rows[1:] == [["'" + f, "1.5"] for f in FORMULAS]
    assert _formula_cells(rows) == []


def test_every_report_and_export_of_the_grader(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Formula student ids (plain layout), a formula Canvas name (the gradebook's name),
    formula Moodle display names (a Moodle download): every CSV of ``reports/``."""
    summaries = [one_cell_summary(f, "x", 4.5, 9.0) for f in FORMULAS]
    summaries += [
        one_cell_summary("canvas_student", "x", 9.0, 9.0),
        one_cell_summary("moodle_student", "x", 3.0, 9.0),
        one_cell_summary("-5", "x", 2.0, 9.0),  # a number is no formula: left as it is
    ]
    names = {"canvas_student": '=HYPERLINK("http://x","Jane")', FORMULAS[0]: "@SUM(A1)"}
    identities = {
        ("canvas_student", "x"): LmsIdentity("canvas", "123456"),
        ("moodle_student", "x"): LmsIdentity("moodle", "4242", '=HYPERLINK("http://x","y")'),
    }
    with caplog.at_level(logging.WARNING):
        write_reports(tmp_path, summaries, copies={})
        written = export_finals(tmp_path, summaries, None, names, identities)
    assert [p.name for p in written] == [*EXPORTS, "moodle_worksheet_x.csv"]
    for path in [tmp_path / "grades.csv", tmp_path / "totals.csv", *written]:
        rows = _rows(path)
        assert _formula_cells(rows) == [], path.name

    grades = _rows(tmp_path / "grades.csv")
    assert {row[0] for row in grades[1:]} == {
        *("'" + f for f in FORMULAS),
        "canvas_student",
        "moodle_student",
        "-5",
    }
    assert all(NUMBER.fullmatch(row[4]) for row in grades[1:])
    totals = _rows(tmp_path / "totals.csv")
    assert ["'=1+1", "x", "4.5", "9", "", "4.5", "0"] in totals

    # Canvas: matched by the Canvas user id under ID; the name is text.
    canvas = _rows(tmp_path / "canvas.csv")
    row = next(r for r in canvas if r[1] == "123456")
    assert row[0] == "'" + names["canvas_student"] and row[5] == "9"
    assert ["", "", "", "-5", "", "2"] in canvas
    # Moodle worksheet: Identifier is still "Participant <id>"; the grade a number.
    worksheet = _rows(tmp_path / "moodle_worksheet_x.csv")
    name = "'" + identities[("moodle_student", "x")].display_name  # type: ignore[operator]
    assert worksheet[1][:4] == ["Participant 4242", name, "3", "9"]
    assert re.fullmatch(r"Participant \d+", worksheet[1][0])
    # Moodle gradebook import and Blackboard: ids quoted (no LMS makes them), scores numbers.
    moodle = _rows(tmp_path / "moodle.csv")
    assert ["'=1+1", "4.5"] in moodle and ["-5", "2"] in moodle
    blackboard = _rows(tmp_path / "blackboard.csv")
    assert ["'@SUM(A1)", "", "'=1+1", "", "", "Yes", "4.5"] in blackboard  # a last name
    assert "student id(s) start with a character a spreadsheet reads as a formula" in caplog.text


def test_each_writer_of_the_lms_module(tmp_path: Path) -> None:
    items = (GradeItem("=1+1", 10), GradeItem("ok", 10))
    table = GradeTable(
        items,
        (
            StudentTotal("+SUM(A1)", "-2+3, @SUM(A1)", {"=1+1": 5}, sis_id="=1", section="\t=1"),
            StudentTotal("s2", "Ann Lee", {"ok": 7.5}, lms_user_id="77"),
        ),
    )
    paths = [
        write_canvas(table, tmp_path / "canvas.csv"),
        write_moodle(table, tmp_path / "moodle.csv"),
        write_blackboard(table, tmp_path / "blackboard.csv"),
        write_moodle_worksheet(
            GradeTable(items[1:], (table.students[1],)), tmp_path / "worksheet.csv"
        ),
    ]
    for path in paths:
        assert _formula_cells(_rows(path)) == [], path.name
    canvas = _rows(tmp_path / "canvas.csv")
    assert canvas[0][5] == "'=1+1"
    assert canvas[2] == ["'-2+3, @SUM(A1)", "'+SUM(A1)", "'=1", "", "'\t=1", "5", ""]
    assert canvas[3][1] == "77"
