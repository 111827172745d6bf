"""The LMS exports and totals from the grader's summaries, each read back with what its
LMS's documents require (named in instructor/lms/export.py); late penalties and names from
a real nbgrader gradebook."""

from __future__ import annotations

import csv
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from instructor.classroom.grader.course import (
    NbgraderCourse,
    PerHourPenalty,
    late_penalties,
    student_names,
)
from instructor.classroom.grader.reports import export_finals, write_reports
from instructor.lms.export import BLACKBOARD_IDENTITY, CANVAS_IDENTITY, EXPORTS, MOODLE_WORKSHEET
from instructor.lms.roster import LmsIdentity
from instructor.scratch_course import nbgrader_env
from support.summaries import one_cell_summary

SUMMARIES = [
    one_cell_summary("alice", "x", 9.0, 9.0),
    one_cell_summary("bob", "x", 4.5, 9.0),
    one_cell_summary("alice", "y", 6.0, 6.0),
]
PENALTIES = {("alice", "x"): 0.0, ("bob", "x"): 1.25, ("alice", "y"): 7.0}
NAMES = {"alice": "Alice Smith"}


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _scores(cells: list[str]) -> bool:
    """Plain numbers or empty: what Canvas and Moodle read as points or no grade."""
    return all(cell == "" or NUMBER.fullmatch(cell) for cell in cells)


def test_canvas_import_csv(tmp_path: Path) -> None:
    """Canvas (GradebookImporter; OSU's "Import CSV File for Carmen Grades"): Student, ID,
    SIS User ID, SIS Login ID, Section, the assignments; a "Points Possible" row; students
    matched by SIS Login ID here, which every row has."""
    export_finals(tmp_path, SUMMARIES, PENALTIES, NAMES)
    rows = _rows(tmp_path / "canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "x", "y"]
    assert rows[0][:5] == list(CANVAS_IDENTITY)
    assert rows[1] == ["Points Possible", "", "", "", "", "9", "6"]
    for row in rows[2:]:
        assert len(row) == len(rows[0]) and row[3] and _scores(row[5:]), row
    by_login = {row[3]: row for row in rows[2:]}
    assert by_login["alice"] == ["Alice Smith", "", "", "alice", "", "9", "0"]
    assert by_login["bob"] == ["", "", "", "bob", "", "3.25", ""]


def test_moodle_import_csv(tmp_path: Path) -> None:
    """Moodle (Docs "Grade import"; gradeimport_csv): a header row, a column to map to the
    username (a row without its user aborts the import), numbers under the grade items."""
    export_finals(tmp_path, SUMMARIES, PENALTIES)
    header, *rows = _rows(tmp_path / "moodle.csv")
    assert all(len(row) == len(header) and row[0] and _scores(row[1:]) for row in rows)
    with (tmp_path / "moodle.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["Username", "x", "y"]
        assert list(reader) == [
            {"Username": "alice", "x": "9", "y": "0"},
            {"Username": "bob", "x": "3.25", "y": ""},
        ]


def test_blackboard_upload_csv(tmp_path: Path) -> None:
    """Blackboard (Help, "Uploading or Downloading Grade Center Items for Working Offline"):
    a header row, one record per line, students by Username, every value of a .csv in
    quotes; a column without "|<column id>" becomes a new column."""
    export_finals(tmp_path, SUMMARIES, PENALTIES, NAMES)
    text = (tmp_path / "blackboard.csv").read_text(encoding="utf-8")
    assert text.startswith('"Last Name","First Name","Username"')
    quoted = re.compile(r'"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*')
    assert all(quoted.fullmatch(line) for line in text.splitlines()), "every value quoted"
    rows = _rows(tmp_path / "blackboard.csv")
    assert all(row[2] for row in rows[1:]), "every row has its Username"
    assert rows[0] == [*BLACKBOARD_IDENTITY, "x [Total Pts: 9 Score]", "y [Total Pts: 6 Score]"]
    assert rows[1] == ["Smith", "Alice", "alice", "", "", "Yes", "9", "0"]
    assert rows[2] == ["", "", "bob", "", "", "Yes", "3.25", ""]


def test_lms_download_ids_key_the_canvas_and_moodle_exports(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Students read from a Canvas download are matched by their Canvas user id (``ID``);
    one from a Moodle download, who has no username Moodle's gradebook import could map,
    is left out of moodle.csv (logged) and graded in the assignment's worksheet by
    participant id; the others keep their student id."""
    summaries = [
        one_cell_summary("smithjane", "x", 9.0, 9.0),
        one_cell_summary("smithjane", "y", 6.0, 6.0),  # collected otherwise: the same Canvas user
        one_cell_summary(
            "smithjane_7", "y", 3.0, 6.0
        ),  # a second Jane Smith, split in y's download
        one_cell_summary("jane_smith_4242", "x", 4.5, 9.0),
        one_cell_summary("bob", "x", 2.0, 9.0),
    ]
    identities = {
        ("smithjane", "x"): LmsIdentity("canvas", "123456"),
        ("smithjane_7", "y"): LmsIdentity("canvas", "7"),
        ("jane_smith_4242", "x"): LmsIdentity("moodle", "4242", "Jane Smith"),
    }
    written = export_finals(tmp_path, summaries, None, {"bob": "Bob Jones"}, identities)
    assert [p.name for p in written] == [*EXPORTS, "moodle_worksheet_x.csv"]
    canvas = _rows(tmp_path / "canvas.csv")
    assert canvas[2:] == [
        ["", "123456", "", "", "", "9", "6"],
        ["", "7", "", "", "", "", "3"],
        ["Bob Jones", "", "", "bob", "", "2", ""],
        ["", "", "", "jane_smith_4242", "", "4.5", ""],
    ]
    assert _rows(tmp_path / "moodle.csv") == [
        ["Username", "x", "y"],
        ["bob", "2", ""],
        ["smithjane", "9", "6"],
        ["smithjane_7", "", "3"],
    ]
    worksheet = _rows(tmp_path / "moodle_worksheet_x.csv")
    assert worksheet[0] == list(MOODLE_WORKSHEET)
    assert worksheet[1][:4] == ["Participant 4242", "Jane Smith", "4.5", "9"]
    assert len(worksheet) == 2
    assert "moodle.csv: 1 student(s) from a Moodle download left out (jane_smith_4242)" in (
        caplog.text
    )
    assert "upload moodle_worksheet_x.csv" in caplog.text
    # Without a Moodle download the worksheet goes (it would be stale).
    export_finals(tmp_path, summaries)
    assert not (tmp_path / "moodle_worksheet_x.csv").exists()


DUE = datetime(2026, 11, 20, 12, 0, 0)


def _gradebook(tmp_path: Path) -> str:
    """Assignment x, due at DUE, one code test (9 points): alice on time with 9, bob half
    an hour late with 4.5. nbgrader's recorded penalty of bob is stale (2.0)."""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("x", duedate=DUE)
        gb.add_notebook("x", "x")
        gb.add_grade_cell("test_a", "x", "x", max_score=9, cell_type="code")
        gb.add_student("alice", first_name="Alice", last_name="Smith")
        gb.add_student("bob")
        for student, late, score in (("alice", -60, 9.0), ("bob", 30, 4.5)):
            gb.add_submission("x", student, timestamp=DUE + timedelta(minutes=late))
            gb.find_grade("test_a", "x", "x", student).auto_score = score
        gb.find_submission_notebook("x", "x", "bob").late_submission_penalty = 2.0
        gb.db.commit()
    return url


class _Course:
    """What the reports read of an ``NbgraderCourse``: its folder (the exchange's records),
    gradebook and late plugin (20 % per started hour)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.root = Path(url.removeprefix("sqlite:///")).parent

    def gradebook(self) -> Gradebook:
        return Gradebook(self.url)

    def late_plugin(self) -> PerHourPenalty:
        return PerHourPenalty(percent_per_hour=20)

    def submitted_folder(self) -> Path:
        return Path(self.url.removeprefix("sqlite:///")).parent / "submitted"


def test_late_penalties_and_names_come_from_the_gradebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # nbgrader runs alembic by name
    course = _Course(_gradebook(tmp_path))
    summaries = [one_cell_summary("alice", "x", 9.0, 9.0), one_cell_summary("bob", "x", 4.5, 9.0)]
    # bob: one started hour late, 20 % of 4.5; the stale 2.0 nbgrader recorded is replaced.
    assert late_penalties(course, summaries) == {("alice", "x"): 0.0, ("bob", "x"): 0.9}  # type: ignore[arg-type]
    assert student_names(course, ["alice", "bob", "nobody"]) == {"alice": "Alice Smith"}  # type: ignore[arg-type]
    write_reports(tmp_path / "reports", summaries, course=course, copies={})  # type: ignore[arg-type]
    with (tmp_path / "reports" / "totals.csv").open() as handle:
        totals = {(r["student"], r["assignment"]): r for r in csv.DictReader(handle)}
    assert totals[("bob", "x")] == {
        "student": "bob",
        "assignment": "x",
        "score": "4.5",
        "max_score": "9",
        "late_penalty": "0.9",
        "final": "3.6",
        "awaiting_manual": "0",
    }
    assert totals[("bob", "TOTAL")]["final"] == "3.6"
    assert totals[("alice", "TOTAL")]["late_penalty"] == "0"
    for name in EXPORTS:
        assert (tmp_path / "reports" / name).exists()
    assert _rows(tmp_path / "reports" / "canvas.csv")[1][0] == "Points Possible"
    assert _rows(tmp_path / "reports" / "moodle.csv")[1:] == [["alice", "9"], ["bob", "3.6"]]
    with Gradebook(course.url) as gb:  # what nbgrader export and formgrader read
        assert gb.find_submission("x", "bob").late_submission_penalty == pytest.approx(0.9)


LATE_COURSE_CONFIG = """c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "late"
c.AssignLatePenalties.plugin_class = "instructor.classroom.grader.course.PerHourPenalty"
c.PerHourPenalty.percent_per_hour = 10
"""


def _cat_row(folder: Path) -> dict[str, str]:
    with (folder / "totals.csv").open() as handle:
        return next(r for r in csv.DictReader(handle) if r["assignment"] == "x")


def test_the_late_penalty_follows_a_grade_given_by_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A late hand-in recorded with its autograded points, a written answer graded by hand
    afterwards (nbgrader's API, as formgrader saves it): the reports' penalty is the
    course's plugin (10 % per started hour) on the score with the hand-given points, the
    gradebook holds the same, and writing the reports again changes nothing."""
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # nbgrader runs alembic by name
    (tmp_path / "nbgrader_config.py").write_text(LATE_COURSE_CONFIG)
    course = NbgraderCourse(tmp_path)
    with course.gradebook() as gb:
        gb.add_assignment("x", duedate=DUE)
        gb.add_notebook("x", "x")
        gb.add_grade_cell("test_a", "x", "x", max_score=10, cell_type="code")
        gb.add_grade_cell("written", "x", "x", max_score=2, cell_type="markdown")
        gb.add_student("cat")
        gb.add_submission("x", "cat", timestamp=DUE + timedelta(minutes=20))
        gb.find_grade("test_a", "x", "x", "cat").auto_score = 8.0
        gb.db.commit()
    summaries = [one_cell_summary("cat", "x", 8.0, 12.0)]
    write_reports(tmp_path / "reports", summaries, course=course, copies={})
    assert float(_cat_row(tmp_path / "reports")["late_penalty"]) == pytest.approx(0.8)

    with course.gradebook() as gb:
        gb.find_grade("written", "x", "x", "cat").manual_score = 1.5
        gb.db.commit()
    rows = []
    for run in ("first", "second"):
        write_reports(tmp_path / run, summaries, course=course, copies={})
        rows.append(_cat_row(tmp_path / run))
        with course.gradebook() as gb:
            recorded = gb.find_submission("x", "cat").late_submission_penalty
        assert recorded == pytest.approx(0.95), run  # 10 % of 8 + 1.5
    assert rows[0] == rows[1]
    assert float(rows[0]["score"]) == pytest.approx(9.5)
    assert float(rows[0]["late_penalty"]) == pytest.approx(0.95)
    assert float(rows[0]["final"]) == pytest.approx(8.55)
