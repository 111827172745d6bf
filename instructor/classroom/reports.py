"""The class grader's reports, from the recorded summaries (:mod:`.resume`).

:func:`write_reports` writes them all; each job has its module: :mod:`.outcomes` (what a
cell and a hand-in came to), :mod:`.grade_tables` (the CSVs and LMS exports),
:mod:`.integrity_report`, :mod:`.copies` (near copies) and :mod:`.gradebook_reads`.

In ``reports/``:

``grades.csv``
    student x notebook x graded cell: ``score``, ``max_score`` and the cell's ``outcome``:
    ``passed`` (full marks), ``failed`` (it ran and raised: a wrong or missing answer),
    ``not run`` (the notebook was missing, unreadable or stopped before the cell, or the
    grader itself failed) or ``zeroed`` (the grader scored it 0 for what ``integrity.md``
    says: a replaced check, a hidden error...). A cell graded by hand (a written answer):
    ``awaiting manual grading`` (answered, no grader's score yet: the score is empty, not
    0), ``graded by hand`` (the grader's score) or ``unanswered`` (left as released:
    nbgrader's 0).
``totals.csv``
    one row per student and assignment, then one per student over the course (assignment
    ``TOTAL``): ``score``, ``max_score``, ``late_penalty`` (nbgrader's
    ``late_submission_penalty`` from the gradebook; empty when no gradebook was read) and
    ``final`` (score less the penalty, never below 0, as ``nbgrader export`` computes it).
    An assignment the student did not hand in has its max and empty score and final; it
    counts 0 in the total. ``awaiting_manual``: the points of answers that await a grader;
    while there are any, ``score`` is the points so far and ``final`` is empty (no grade
    yet, also in ``TOTAL`` and the LMS exports).
``canvas.csv``, ``moodle.csv``, ``blackboard.csv``, ``moodle_worksheet_<assignment>.csv``
    the ``final`` points of each assignment in each LMS's grade-import format
    (:mod:`instructor.lms.export`), keyed on what each LMS matches, with the ids an LMS
    download named (``lms_students.json``, :mod:`instructor.lms.roster`):
    :func:`.grade_tables.write_exports`.
``integrity.md`` and ``integrity.json``
    every hand-in an instructor should read, and why; the summaries themselves. Besides
    what the grader saw (changed test cells, suspicious code, replaced checks), it flags a
    failing imports cell, every notebook scored 0 for a reason other than wrong answers,
    and near copies of ``solutions/`` or between students (:func:`.copies.copy_report`),
    and lists the answers awaiting a grader (:func:`.integrity_report.awaiting_manual`).
    It ends with the best-effort checks of each notebook
    (:func:`.integrity_report.best_effort_checks`): rules measured inside the student's
    kernel, the same for every student, flagging no one.

Every CSV cell is written through :func:`instructor.lms.csv_safety.safe_cell`: a student id
or name a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage
return) gets a leading ``'``; scores stay plain numbers. Such a student id is logged.

Every score comes from nbgrader's gradebook, read again when the reports are written
(:func:`.gradebook_reads.from_gradebook`): a score a grader gives by hand in formgrader is
in the next reports without grading anything again.

Plus the lines the grader logs at the end of a run (:func:`run_lines`,
:func:`.integrity_report.awaiting_lines`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from instructor.lms.config import LMS_TOML, read_config
from instructor.lms.roster import LmsIdentity, read_roster, roster_path

from .copies import course_copies
from .grade_tables import write_exports, write_grades_csv, write_totals_csv
from .gradebook_reads import from_gradebook, late_penalties, student_names
from .integrity_report import integrity_markdown
from .outcomes import attention
from .records import (
    HandInSummary,
)
from .similarity import CopyPair

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse


__all__ = [
    "run_lines",
    "write_reports",
]


def write_reports(
    folder: Path,
    summaries: list[HandInSummary],
    present_students: set[str] | None = None,
    *,
    course: NbgraderCourse | None = None,
    copies: Mapping[str, list[CopyPair]] | None = None,
    scores_from_gradebook: bool = True,
) -> list[HandInSummary]:
    """Every report in ``folder`` (see the module docstring); return the summaries reported.

    Args:
        present_students: only these students are reported (a student whose submission
            folder was removed disappears); None: every summary.
        course: the nbgrader course: late penalties and names from its gradebook, the LMS
            ids of students from an LMS download (``lms_students.json`` next to its
            ``submitted/``), and the near copies among its autograded notebooks (unless
            ``copies`` is given), and the scores (:func:`from_gradebook`: hand-given
            ones included) unless ``scores_from_gradebook`` is False (already read). Without
            it the penalty column is empty, the exports carry student ids only and no copies
            are looked for.
        copies: assignment -> near copies, already found.
    """
    if present_students is not None:
        summaries = [s for s in summaries if s.student in present_students]
    folder.mkdir(parents=True, exist_ok=True)
    penalties = names = None
    identities: dict[tuple[str, str], LmsIdentity] = {}
    config = None
    if course is not None:
        if scores_from_gradebook:
            summaries = from_gradebook(course, summaries)
        penalties = late_penalties(course, summaries)
        names = student_names(course, {s.student for s in summaries})
        identities = read_roster(roster_path(course.submitted_folder()))
        config = read_config(course.submitted_folder().parent / LMS_TOML)
        if copies is None:
            assignments = list(dict.fromkeys(s.assignment for s in summaries))
            students = {s.student for s in summaries}
            copies = course_copies(course, assignments, students)
    write_grades_csv(folder / "grades.csv", summaries)
    write_totals_csv(folder / "totals.csv", summaries, penalties)
    write_exports(folder, summaries, penalties, names, identities, config)
    (folder / "integrity.json").write_text(json.dumps([s.to_json() for s in summaries], indent=1))
    (folder / "integrity.md").write_text(integrity_markdown(summaries, copies))
    return summaries


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
