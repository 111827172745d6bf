"""A test cell left out of the totals (``grade --exclude-test GRADE_ID --reason ...``): the
totals and the three LMS exports are written again without it, ``integrity.md`` says so,
the course keeps it out until it is put back, and putting it back restores every file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from instructor.classroom.__main__ import main
from instructor.classroom.grader.excluded import exclude, put_back, read_excluded
from instructor.classroom.grader.records import CellGrade, HandInSummary, NotebookSummary
from instructor.classroom.grader.reports import write_reports

A = "01_tiny"
REASON = "its hidden test fails the reference solution on float64"
# Per student: test_ok (of 3) and test_broken (of 2).
CLASS = {"ann": (3, 2), "bob": (1, 0), "cem": (0, 2)}


def _summary(student: str, points: tuple[int, int]) -> HandInSummary:
    cells = (
        CellGrade("test_ok", float(points[0]), 3.0),
        CellGrade("test_broken", float(points[1]), 2.0),
    )
    record = NotebookSummary(outcome="ok", score=float(sum(points)), max_score=5.0, cells=cells)
    return HandInSummary(student, A, notebooks={A: record})


SUMMARIES = [_summary(s, p) for s, p in CLASS.items()]


def _reports(folder: Path, root: Path) -> dict[str, bytes]:
    write_reports(folder, SUMMARIES, excluded=read_excluded(root))
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _totals(folder: Path) -> dict[str, tuple[str, str]]:
    rows = csv.DictReader((folder / "totals.csv").open())
    return {r["student"]: (r["score"], r["max_score"]) for r in rows if r["assignment"] == A}


def test_a_cell_left_out_is_out_of_every_total_until_put_back(tmp_path: Path) -> None:
    root = tmp_path / "course"
    before = _reports(tmp_path / "before", root)
    exports = [name for name in before if name not in ("totals.csv", "grades.csv")]
    exports = [n for n in exports if n.endswith(".csv") and not n.startswith("items")]
    assert len(exports) >= 3, sorted(before)  # one import file per LMS

    exclude(root, [A], "test_broken", REASON)
    assert read_excluded(root) == {A: {"test_broken": REASON}}
    left_out = _reports(tmp_path / "left_out", root)
    assert _totals(tmp_path / "left_out") == {s: (f"{p[0]:g}", "3") for s, p in CLASS.items()}
    for name in exports:  # ann and cem lose the broken cell's 2 points
        assert left_out[name] != before[name], name
    integrity = left_out["integrity.md"].decode()
    assert "left out of the totals" in integrity and f"{A} / test_broken: {REASON}" in integrity
    grades = left_out["grades.csv"].decode()
    assert "test_broken" not in grades and "test_ok" in grades

    put_back(root, [A], "test_broken")
    assert read_excluded(root) == {}
    assert _reports(tmp_path / "put_back", root) == before


def test_a_cell_is_left_out_only_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["grade", A, "--root", str(tmp_path), "--exclude-test", "test_broken"])
    with pytest.raises(ValueError, match="reason"):
        exclude(tmp_path, [A], "test_broken", "  ")
    assert read_excluded(tmp_path) == {}
