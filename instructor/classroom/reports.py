"""The class grader's reports, from the recorded summaries (:mod:`.resume`).

``reports/grades.csv`` (student x notebook x graded cell), ``reports/integrity.md`` (every
hand-in an instructor should read, and why) and ``reports/integrity.json`` (the summaries
themselves), plus the lines the grader logs at the end of a run.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .records import HandInSummary

__all__ = ["GRADES_HEADER", "attention", "integrity_markdown", "run_lines", "write_reports"]

GRADES_HEADER = ("student", "assignment", "notebook", "cell", "score", "max_score", "outcome")


def attention(summary: HandInSummary) -> list[str]:
    """Everything about one hand-in that an instructor should read."""
    lines = list(summary.notes)
    if summary.error:
        lines.append(summary.error)
    for name, record in summary.notebooks.items():
        if record.outcome not in ("ok", ""):
            lines.append(f"{name}: {record.outcome}")
        lines += [f"{name}: {note}" for note in record.notes]
        lines += [f"{name}: {z.test} scored 0: {z.reason}" for z in record.zeroed]
        lines += [f"{name}: undone before a test: {item}" for item in record.restored or ()]
        lines += [f"{name}: the kernel {event}" for event in record.events or ()]
        lines += [f"{name}: suspicious code: {flag}" for flag in record.flags]
    return list(dict.fromkeys(lines))


def integrity_markdown(summaries: list[HandInSummary]) -> str:
    lines = ["# Integrity report", ""]
    flagged = [(s, attention(s)) for s in summaries]
    flagged = [(s, notes) for s, notes in flagged if notes]
    lines.append(f"{len(flagged)} of {len(summaries)} submission(s) need a look.")
    for summary, notes in flagged:
        lines += [
            "",
            f"## {summary.student} / {summary.assignment} "
            f"({summary.score:g}/{summary.max_score:g})",
        ]
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_grades_csv(path: Path, summaries: list[HandInSummary]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(GRADES_HEADER)
        for summary in summaries:
            for name, record in summary.notebooks.items():
                for grade in sorted(record.cells or (), key=lambda g: g.cell):
                    writer.writerow(
                        [
                            summary.student,
                            summary.assignment,
                            name,
                            grade.cell,
                            grade.score,
                            grade.max_score,
                            record.outcome,
                        ]
                    )


def write_reports(folder: Path, summaries: list[HandInSummary]) -> None:
    """``grades.csv``, ``integrity.json`` and ``integrity.md`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_grades_csv(folder / "grades.csv", summaries)
    (folder / "integrity.json").write_text(json.dumps([s.to_json() for s in summaries], indent=1))
    (folder / "integrity.md").write_text(integrity_markdown(summaries))


def run_lines(graded: list[HandInSummary], skipped: int, seconds: float) -> list[str]:
    """What a run did, for the log: outcomes, the integrity report's count, grader errors."""
    outcomes: dict[str, int] = {}
    for summary in graded:
        for record in summary.notebooks.values():
            outcomes[record.outcome] = outcomes.get(record.outcome, 0) + 1
    flagged = sum(1 for summary in graded if attention(summary))
    errors = [s for s in graded if s.error]
    lines = [
        f"graded {len(graded)} submission(s) in {seconds:.1f} s ({skipped} skipped); "
        "notebooks: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())),
        f"{flagged} submission(s) in the integrity report; {len(errors)} grader error(s)",
    ]
    lines += [f"  {s.student}/{s.assignment}: {s.error[:300]}" for s in errors]
    return lines
