"""The grades CSV, the integrity report and the run's log lines, from summaries."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from instructor.classroom.records import (
    CellGrade,
    HandInSummary,
    NotebookSummary,
    ZeroedTest,
)
from instructor.classroom.reports import GRADES_HEADER, attention, run_lines, write_reports

HONEST = HandInSummary(
    "alice",
    "x",
    notebooks={
        "x": NotebookSummary(
            outcome="ok",
            restored=(),
            events=(),
            seconds=1.0,
            score=3.0,
            max_score=3.0,
            cells=(CellGrade("test_b", 1.0, 1.0), CellGrade("test_a", 2.0, 2.0)),
        )
    },
)
HOSTILE = HandInSummary(
    "mallory",
    "x",
    notes=("extra notebook y.ipynb (not graded)",),
    error="nbgrader autograde failed: boom",
    notebooks={
        "x": NotebookSummary(
            outcome="time limit",
            notes=("edited test cell test_a (restored from the gradebook)",),
            flags=("a: imports ctypes",),
            zeroed=(ZeroedTest("test_a", "test_a did not run"),),
            restored=("torch.allclose was replaced (before test_a)",),
            events=("started a subprocess",),
            seconds=30.0,
            score=0.0,
            max_score=3.0,
            cells=(CellGrade("test_a", 0.0, 2.0),),
        ),
        "z": NotebookSummary(outcome="missing", notes=("no z.ipynb in the submission",)),
    },
)


def test_an_honest_hand_in_needs_no_look() -> None:
    assert attention(HONEST) == []


def test_everything_about_a_hostile_hand_in_is_listed() -> None:
    assert attention(HOSTILE) == [
        "extra notebook y.ipynb (not graded)",
        "nbgrader autograde failed: boom",
        "x: time limit",
        "x: edited test cell test_a (restored from the gradebook)",
        "x: test_a scored 0: test_a did not run",
        "x: undone before a test: torch.allclose was replaced (before test_a)",
        "x: the kernel started a subprocess",
        "x: suspicious code: a: imports ctypes",
        "z: missing",
        "z: no z.ipynb in the submission",
    ]


def test_the_reports_are_written(tmp_path: Path) -> None:
    write_reports(tmp_path / "reports", [HONEST, HOSTILE])
    rows = list(csv.reader((tmp_path / "reports" / "grades.csv").open()))
    assert rows == [
        list(GRADES_HEADER),
        ["alice", "x", "x", "test_a", "2.0", "2.0", "ok"],
        ["alice", "x", "x", "test_b", "1.0", "1.0", "ok"],
        ["mallory", "x", "x", "test_a", "0.0", "2.0", "time limit"],
    ]
    markdown = (tmp_path / "reports" / "integrity.md").read_text()
    assert markdown.startswith("# Integrity report\n\n1 of 2 submission(s) need a look.\n")
    assert "## mallory / x (0/3)\n- extra notebook" in markdown
    assert "alice" not in markdown
    data = json.loads((tmp_path / "reports" / "integrity.json").read_text())
    assert [HandInSummary.from_json(d) for d in data] == [HONEST, HOSTILE]


def test_the_run_lines_count_outcomes_and_errors() -> None:
    lines = run_lines([HONEST, HOSTILE], skipped=4, seconds=12.34)
    assert lines == [
        "graded 2 submission(s) in 12.3 s (4 skipped); notebooks: 1 missing, 1 ok, 1 time limit",
        "1 submission(s) in the integrity report; 1 grader error(s)",
        "  mallory/x: nbgrader autograde failed: boom",
    ]
