"""The LMS exports and totals from the grader's summaries, each read back with its format's
documented columns; late penalties and names from a real nbgrader gradebook."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from instructor.classroom.records import CellGrade, HandInSummary, NotebookSummary
from instructor.classroom.reports import (
    EXPORTS,
    late_penalties,
    student_names,
    write_exports,
    write_reports,
)
from instructor.lms.export import BLACKBOARD_IDENTITY, CANVAS_IDENTITY
from instructor.scratch_course import nbgrader_env


def _summary(student: str, assignment: str, score: float, max_score: float) -> HandInSummary:
    record = NotebookSummary(
        outcome="ok",
        restored=(),
        events=(),
        seconds=1.0,
        score=score,
        max_score=max_score,
        cells=(CellGrade("test_a", score, max_score),),
    )
    return HandInSummary(student, assignment, notebooks={assignment: record})


SUMMARIES = [
    _summary("alice", "x", 9.0, 9.0),
    _summary("bob", "x", 4.5, 9.0),
    _summary("alice", "y", 6.0, 6.0),
]
PENALTIES = {("alice", "x"): 0.0, ("bob", "x"): 1.25, ("alice", "y"): 7.0}
NAMES = {"alice": "Alice Smith"}


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_canvas_import_csv(tmp_path: Path) -> None:
    write_exports(tmp_path, SUMMARIES, PENALTIES, NAMES)
    rows = _rows(tmp_path / "canvas.csv")
    assert rows[0] == [*CANVAS_IDENTITY, "x", "y"]
    assert rows[1] == ["Points Possible", "", "", "", "", "9", "6"]
    by_login = {row[3]: row for row in rows[2:]}
    assert by_login["alice"] == ["Alice Smith", "", "", "alice", "", "9", "0"]
    assert by_login["bob"] == ["", "", "", "bob", "", "3.25", ""]


def test_moodle_import_csv(tmp_path: Path) -> None:
    write_exports(tmp_path, SUMMARIES, PENALTIES)
    with (tmp_path / "moodle.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["Username", "x", "y"]
        assert list(reader) == [
            {"Username": "alice", "x": "9", "y": "0"},
            {"Username": "bob", "x": "3.25", "y": ""},
        ]


def test_blackboard_upload_csv(tmp_path: Path) -> None:
    write_exports(tmp_path, SUMMARIES, PENALTIES, NAMES)
    text = (tmp_path / "blackboard.csv").read_text(encoding="utf-8")
    assert text.startswith('"Last Name","First Name","Username"'), "every value quoted"
    rows = _rows(tmp_path / "blackboard.csv")
    assert rows[0] == [*BLACKBOARD_IDENTITY, "x [Total Pts: 9 Score]", "y [Total Pts: 6 Score]"]
    assert rows[1] == ["Smith", "Alice", "alice", "", "", "Yes", "9", "0"]
    assert rows[2] == ["", "", "bob", "", "", "Yes", "3.25", ""]


def _gradebook(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("x")
        gb.add_notebook("x", "x")
        gb.add_student("alice", first_name="Alice", last_name="Smith")
        gb.add_student("bob")
        for student in ("alice", "bob"):
            gb.add_submission("x", student)
        gb.find_submission_notebook("x", "x", "bob").late_submission_penalty = 2.0
        gb.db.commit()
    return url


class _Course:
    """What the reports read of an ``NbgraderCourse``: its gradebook."""

    def __init__(self, url: str) -> None:
        self.url = url

    def gradebook(self) -> Gradebook:
        return Gradebook(self.url)


def test_late_penalties_and_names_come_from_the_gradebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # nbgrader runs alembic by name
    course = _Course(_gradebook(tmp_path))
    summaries = [_summary("alice", "x", 9.0, 9.0), _summary("bob", "x", 4.5, 9.0)]
    assert late_penalties(course, summaries) == {("alice", "x"): 0.0, ("bob", "x"): 2.0}  # type: ignore[arg-type]
    assert student_names(course, ["alice", "bob", "nobody"]) == {"alice": "Alice Smith"}  # type: ignore[arg-type]
    write_reports(tmp_path / "reports", summaries, course=course, copies={})  # type: ignore[arg-type]
    with (tmp_path / "reports" / "totals.csv").open() as handle:
        totals = {(r["student"], r["assignment"]): r for r in csv.DictReader(handle)}
    assert totals[("bob", "x")] == {
        "student": "bob",
        "assignment": "x",
        "score": "4.5",
        "max_score": "9",
        "late_penalty": "2",
        "final": "2.5",
    }
    assert totals[("bob", "TOTAL")]["final"] == "2.5"
    assert totals[("alice", "TOTAL")]["late_penalty"] == "0"
    for name in EXPORTS:
        assert (tmp_path / "reports" / name).exists()
    assert _rows(tmp_path / "reports" / "moodle.csv")[1:] == [["alice", "9"], ["bob", "2.5"]]
