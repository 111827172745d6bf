"""Test cells left out of the totals: ``grade A --exclude-test GRADE_ID --reason TEXT``.

A test cell found broken (its hidden tests fail a right answer, the item analysis shows
nobody passing it) is left out of what the reports count until it is put back
(``--include-test GRADE_ID``): kept, with its reason, in ``.grading/excluded.json`` under the
course root (``{assignment: {cell: reason}}``), so that every later run and
``python -m instructor.classroom items`` keep it out too. :func:`without` takes the cell out of
the summaries that :func:`.reports.write_reports` reports, before anything is written:
``grades.csv``, ``totals.csv``, the LMS exports, ``integrity.json`` and the item analysis
count neither its score nor its points, and ``integrity.md`` lists it with its reason.
nbgrader's gradebook is left as it is: its own feedback HTML and ``nbgrader export`` still
count the cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from instructor.classroom.grader.course import WORK
from instructor.classroom.grader.records import HandInSummary

EXCLUDED_FILE = Path(WORK) / "excluded.json"

Excluded = Mapping[str, Mapping[str, str]]
"""assignment -> {test cell: why it is left out}."""


def read_excluded(root: Path) -> dict[str, dict[str, str]]:
    """What ``root``'s course leaves out (empty where nothing is)."""
    path = root / EXCLUDED_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return {str(a): {str(c): str(why) for c, why in cells.items()} for a, cells in data.items()}


def _write_excluded(root: Path, excluded: Excluded) -> None:
    path = root / EXCLUDED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = {a: dict(sorted(cells.items())) for a, cells in sorted(excluded.items()) if cells}
    path.write_text(json.dumps(kept, indent=1) + "\n")


def exclude(root: Path, assignments: list[str], cell: str, reason: str) -> None:
    """Leave ``cell`` of each of ``assignments`` out, for ``reason``, until put back."""
    if not reason.strip():
        raise ValueError("give the reason a test cell is left out (--reason)")
    excluded = read_excluded(root)
    for assignment in assignments:
        excluded.setdefault(assignment, {})[cell] = reason.strip()
    _write_excluded(root, excluded)


def put_back(root: Path, assignments: list[str], cell: str) -> None:
    """Count ``cell`` of each of ``assignments`` again."""
    excluded = read_excluded(root)
    for assignment in assignments:
        excluded.get(assignment, {}).pop(cell, None)
    _write_excluded(root, excluded)


def without(summaries: list[HandInSummary], excluded: Excluded) -> list[HandInSummary]:
    """``summaries`` with the excluded cells taken out of each notebook's cells, score and
    maximum."""
    result = []
    for summary in summaries:
        left_out = excluded.get(summary.assignment, {})
        notebooks = {}
        for name, record in summary.notebooks.items():
            out = [g for g in record.cells or () if g.cell in left_out]
            if out:
                record = replace(
                    record,
                    cells=tuple(g for g in record.cells or () if g.cell not in left_out),
                    score=None
                    if record.score is None
                    else record.score - sum(g.score or 0 for g in out),
                    max_score=None
                    if record.max_score is None
                    else record.max_score - sum(g.max_score or 0 for g in out),
                )
            notebooks[name] = record
        result.append(replace(summary, notebooks=notebooks))
    return result


def excluded_lines(excluded: Excluded, assignments: set[str]) -> list[str]:
    """``integrity.md``'s section on the cells left out of the reported assignments."""
    rows = [
        (a, cell, why)
        for a, cells in sorted(excluded.items())
        if a in assignments
        for cell, why in sorted(cells.items())
    ]
    if not rows:
        return []
    return [
        "",
        "## Test cells left out of the totals",
        "",
        "Not counted in grades.csv, totals.csv, the LMS exports or the item analysis, by "
        "`grade --exclude-test` (put one back with `--include-test`). nbgrader's gradebook, "
        "its feedback and `nbgrader export` still count them.",
        "",
        *(f"- {a} / {cell}: {why}" for a, cell, why in rows),
    ]
