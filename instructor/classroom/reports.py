"""The class grader's reports, from the recorded summaries (:mod:`.resume`).

In ``reports/``:

``grades.csv``
    student x notebook x graded cell: ``score``, ``max_score`` and the cell's ``outcome``:
    ``passed`` (full marks), ``failed`` (it ran and raised: a wrong or missing answer),
    ``not run`` (the notebook was missing, unreadable or stopped before the cell, or the
    grader itself failed) or ``zeroed`` (the grader scored it 0 for what ``integrity.md``
    says: a replaced check, a hidden error...).
``totals.csv``
    one row per student and assignment, then one per student over the course (assignment
    ``TOTAL``): ``score``, ``max_score``, ``late_penalty`` (nbgrader's
    ``late_submission_penalty`` from the gradebook; empty when no gradebook was read) and
    ``final`` (score less the penalty, never below 0, as ``nbgrader export`` computes it).
    An assignment the student did not hand in has its max and empty score and final; it
    counts 0 in the total.
``canvas.csv``, ``moodle.csv``, ``blackboard.csv``
    the ``final`` points of each assignment in each LMS's grade-import format
    (:mod:`instructor.lms.export`): :func:`write_exports`.
``integrity.md`` and ``integrity.json``
    every hand-in an instructor should read, and why; the summaries themselves. Besides
    what the grader saw (changed test cells, suspicious code, replaced checks), it flags a
    failing imports cell, every notebook scored 0 for a reason other than wrong answers,
    and near copies of ``solutions/`` or between students (:func:`copy_report`).

Plus the lines the grader logs at the end of a run (:func:`run_lines`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from nbformat import NotebookNode

from instructor import anatomy
from instructor.lms.export import (
    GradeItem,
    GradeTable,
    StudentTotal,
    format_points,
    write_blackboard,
    write_canvas,
    write_moodle,
)

from .records import CellGrade, HandInSummary, NotebookSummary
from .similarity import DEFAULT_THRESHOLD, SOLUTIONS, CopyPair, graded_answers, near_copies

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse

__all__ = [
    "COURSE_TOTAL",
    "EXPORTS",
    "GRADES_HEADER",
    "NOT_RUN_OUTCOMES",
    "TOTALS_HEADER",
    "attention",
    "cell_outcome",
    "copy_report",
    "course_copies",
    "grade_table",
    "integrity_markdown",
    "late_penalties",
    "run_lines",
    "student_names",
    "totals",
    "write_exports",
    "write_reports",
    "zero_reason",
]

GRADES_HEADER = ("student", "assignment", "notebook", "cell", "score", "max_score", "outcome")
TOTALS_HEADER = ("student", "assignment", "score", "max_score", "late_penalty", "final")
COURSE_TOTAL = "TOTAL"
"""``totals.csv``'s assignment column on a student's row over the whole course."""
EXPORTS = ("canvas.csv", "moodle.csv", "blackboard.csv")

NOT_RUN_OUTCOMES = ("missing", "unreadable", "grader error")
"""Notebook outcomes where no test cell ran (a time limit or a dead kernel stops part way:
their cells that did not run are named in ``zeroed``)."""
ZERO_OUTCOMES = ("missing", "unreadable", "grader error", "time limit", "kernel died")


def cell_outcome(record: NotebookSummary, grade: CellGrade) -> str:
    """``passed``, ``failed``, ``not run`` or ``zeroed``: see the module docstring."""
    if grade.score is not None and grade.max_score is not None and grade.score >= grade.max_score:
        return "passed"
    zeroed = {z.test: z.reason for z in record.zeroed}
    if record.outcome in NOT_RUN_OUTCOMES or "did not run" in zeroed.get(grade.cell, ""):
        return "not run"
    if grade.score is None:
        return "not run"
    if grade.cell in zeroed:
        return "zeroed"
    return "failed"


def zero_reason(record: NotebookSummary) -> str:
    """Why a notebook scored 0 when wrong answers are not the reason; ``""`` otherwise
    (it scored points, or its tests ran and failed)."""
    if record.score:
        return ""
    if record.outcome in ZERO_OUTCOMES:
        return record.outcome
    if record.imports_error:
        return f"its imports cell failed ({record.imports_error})"
    outcomes = {cell_outcome(record, grade) for grade in record.cells or ()}
    if outcomes == {"not run"}:
        return "no test cell ran"
    return ""


def attention(summary: HandInSummary) -> list[str]:
    """Everything about one hand-in that an instructor should read."""
    lines = list(summary.notes)
    if summary.error:
        lines.append(summary.error)
    for name, record in summary.notebooks.items():
        if record.outcome not in ("ok", ""):
            lines.append(f"{name}: {record.outcome}")
        if record.imports_error:
            lines.append(
                f"{name}: the imports cell failed ({record.imports_error}): every later cell "
                "that needs its names fails"
            )
        reason = zero_reason(record)
        if reason:
            lines.append(f"{name}: scored 0, not for wrong answers: {reason}")
        lines += [f"{name}: {note}" for note in record.notes]
        lines += [f"{name}: {z.test} scored 0: {z.reason}" for z in record.zeroed]
        lines += [f"{name}: undone before a test: {item}" for item in record.restored or ()]
        lines += [f"{name}: the kernel {event}" for event in record.events or ()]
        lines += [f"{name}: suspicious code: {flag}" for flag in record.flags]
    return list(dict.fromkeys(lines))


def _copy_line(pair: CopyPair, student: str) -> str:
    other = pair.student_b if pair.student_a == student else pair.student_a
    what = "the reference solution" if other == SOLUTIONS else other
    return f"{pair.function}: near copy of {what} (similarity {pair.similarity:.2f})"


def integrity_markdown(
    summaries: list[HandInSummary], copies: Mapping[str, list[CopyPair]] | None = None
) -> str:
    """The integrity report; ``copies``: assignment -> its near copies (:func:`copy_report`)."""
    copies = copies or {}
    lines = ["# Integrity report", ""]
    flagged = []
    for summary in summaries:
        notes = attention(summary)
        notes += [
            _copy_line(pair, summary.student)
            for pair in copies.get(summary.assignment, [])
            if summary.student in (pair.student_a, pair.student_b)
        ]
        if notes:
            flagged.append((summary, notes))
    lines.append(f"{len(flagged)} of {len(summaries)} submission(s) need a look.")
    for summary, notes in flagged:
        lines += [
            "",
            f"## {summary.student} / {summary.assignment} "
            f"({summary.score:g}/{summary.max_score:g})",
        ]
        lines += [f"- {note}" for note in notes]
    pairs = [(assignment, pair) for assignment, found in copies.items() for pair in found]
    if copies:
        lines += [
            "",
            "## Near copies",
            "",
            f"{len(pairs)} pair(s) of graded answers at or above similarity "
            f"{DEFAULT_THRESHOLD:g} (instructor.classroom.similarity: layout, comments and "
            "names do not count). Read both answers before concluding anything.",
        ]
        if pairs:
            lines += [
                "",
                "| assignment | function | student | copy of | similarity |",
                "| --- | --- | --- | --- | --- |",
            ]
            lines += [
                f"| {assignment} | {p.function} | {p.student_a} | "
                f"{'solutions/' if p.student_b == SOLUTIONS else p.student_b} | "
                f"{p.similarity:.2f} |"
                for assignment, p in pairs
            ]
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
                            cell_outcome(record, grade),
                        ]
                    )


def _assignment_max(summaries: list[HandInSummary]) -> dict[str, float]:
    """assignment -> its max score (the largest any hand-in of it recorded), in order."""
    maxima: dict[str, float] = {}
    for summary in summaries:
        maxima[summary.assignment] = max(maxima.get(summary.assignment, 0.0), summary.max_score)
    return maxima


def totals(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
) -> list[dict[str, float | str | None]]:
    """The rows of ``totals.csv`` (``TOTALS_HEADER`` keys): per student, each assignment
    (None where not handed in; ``late_penalty`` None where ``penalties`` is None), then
    ``COURSE_TOTAL``. ``penalties``: (student, assignment) -> nbgrader's late penalty."""
    maxima = _assignment_max(summaries)
    by_student: dict[str, dict[str, HandInSummary]] = {}
    for summary in summaries:
        by_student.setdefault(summary.student, {})[summary.assignment] = summary
    rows: list[dict[str, float | str | None]] = []
    for student in sorted(by_student):
        course = {"score": 0.0, "max_score": 0.0, "late_penalty": 0.0, "final": 0.0}
        for assignment, maximum in maxima.items():
            summary = by_student[student].get(assignment)
            row: dict[str, float | str | None] = {
                "student": student,
                "assignment": assignment,
                "score": None,
                "max_score": maximum,
                "late_penalty": None,
                "final": None,
            }
            course["max_score"] += maximum
            if summary is not None:
                penalty = None if penalties is None else penalties.get((student, assignment), 0.0)
                final = max(0.0, summary.score - (penalty or 0.0))
                row.update(score=summary.score, late_penalty=penalty, final=final)
                course["score"] += summary.score
                course["late_penalty"] += penalty or 0.0
                course["final"] += final
            rows.append(row)
        rows.append(
            {
                "student": student,
                "assignment": COURSE_TOTAL,
                **course,
                "late_penalty": None if penalties is None else course["late_penalty"],
            }
        )
    return rows


def write_totals_csv(
    path: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(TOTALS_HEADER)
        for row in totals(summaries, penalties):
            writer.writerow(
                [
                    value if key in ("student", "assignment") else format_points(value)  # type: ignore[arg-type]
                    for key, value in ((k, row[k]) for k in TOTALS_HEADER)
                ]
            )


def grade_table(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
) -> GradeTable:
    """Each student's ``final`` points per assignment (one ``GradeItem`` per assignment,
    named by its id; not handed in: no score, an empty cell); ``names``: student -> name."""
    maxima = _assignment_max(summaries)
    items = tuple(GradeItem(assignment, maximum) for assignment, maximum in maxima.items())
    scores: dict[str, dict[str, float]] = {}
    for row in totals(summaries, penalties):
        if row["assignment"] != COURSE_TOTAL and row["final"] is not None:
            scores.setdefault(str(row["student"]), {})[str(row["assignment"])] = float(
                row["final"]  # type: ignore[arg-type]
            )
    students = sorted({s.student for s in summaries})
    return GradeTable(
        items,
        tuple(
            StudentTotal(student, (names or {}).get(student), scores.get(student, {}))
            for student in students
        ),
    )


def write_exports(
    folder: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[Path]:
    """``canvas.csv``, ``moodle.csv`` and ``blackboard.csv`` in ``folder``: each student's
    final points per assignment in each LMS's import format. The student id is the
    nbgrader one: Canvas's ``SIS Login ID``, Moodle's ``Username``, Blackboard's
    ``Username``; ``names`` (student -> "First Last") fills the name columns."""
    folder.mkdir(parents=True, exist_ok=True)
    table = grade_table(summaries, penalties, names)
    return [
        write_canvas(table, folder / "canvas.csv", id_column="SIS Login ID"),
        write_moodle(table, folder / "moodle.csv", identifier="Username"),
        write_blackboard(table, folder / "blackboard.csv"),
    ]


def copy_report(
    submissions: Mapping[str, Iterable[NotebookNode]],
    reference: Iterable[NotebookNode],
    released: Iterable[NotebookNode] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> list[CopyPair]:
    """The near copies among one assignment's hand-ins (``similarity.near_copies``).

    Args:
        submissions: student -> the student's notebooks of the assignment (submitted or
            autograded: their solution cells are the student's answers).
        reference: the instructor notebooks (``solutions/``), markers stripped here.
        released: the student versions: their stubs never count as copied code.
        threshold: 0 to 1 (see ``similarity.DEFAULT_THRESHOLD``).
    """
    answers: dict[str, dict[str, str]] = {}
    for student, notebooks in submissions.items():
        key = f"{student} (student)" if student == SOLUTIONS else student
        for notebook in notebooks:
            answers.setdefault(key, {}).update(graded_answers(notebook))
    solutions: dict[str, str] = {}
    for notebook in reference:
        solutions.update(anatomy.solution_sources(notebook))
    stubs: dict[str, str] = {}
    for notebook in released:
        stubs.update(graded_answers(notebook))
    return near_copies(answers, solutions, threshold, boilerplate=stubs)


def _read(path: Path) -> NotebookNode | None:
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable hand-in is reported elsewhere
        return None


def course_copies(
    course: NbgraderCourse, assignments: Iterable[str], students: Iterable[str] | None = None
) -> dict[str, list[CopyPair]]:
    """assignment -> near copies among its autograded notebooks (``autograded/``, else the
    submitted ones) of ``students`` (default: every one), against the course's source."""
    coursedir = course.coursedir
    found: dict[str, list[CopyPair]] = {}
    for assignment in assignments:
        source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
        release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
        reference = [nb for nb in map(_read, sorted(source.glob("*.ipynb"))) if nb]
        released = [nb for nb in map(_read, sorted(release.glob("*.ipynb"))) if nb]
        names = {path.name for path in release.glob("*.ipynb")}
        submissions: dict[str, list[NotebookNode]] = {}
        who = students if students is not None else _students_of(course, assignment)
        for student in sorted(set(who)):
            folder = Path(
                coursedir.format_path(coursedir.autograded_directory, student, assignment)
            )
            if not folder.is_dir():
                folder = course.submitted_folder() / student / assignment
            notebooks = [_read(folder / name) for name in sorted(names)]
            submissions[student] = [nb for nb in notebooks if nb is not None]
        found[assignment] = copy_report(submissions, reference, released)
    return found


def _students_of(course: NbgraderCourse, assignment: str) -> list[str]:
    return [p.parent.name for p in course.submitted_folder().glob(f"*/{assignment}") if p.is_dir()]


def late_penalties(
    course: NbgraderCourse, summaries: list[HandInSummary]
) -> dict[tuple[str, str], float]:
    """(student, assignment) -> nbgrader's ``late_submission_penalty`` of the submission
    in the gradebook (0 where it has none)."""
    penalties = {}
    with course.gradebook() as gb:
        for summary in summaries:
            try:
                submission = gb.find_submission(summary.assignment, summary.student)
            except Exception:  # noqa: BLE001 - not in the gradebook: no penalty known
                continue
            penalties[(summary.student, summary.assignment)] = float(
                submission.late_submission_penalty or 0.0
            )
    return penalties


def student_names(course: NbgraderCourse, students: Iterable[str]) -> dict[str, str]:
    """student -> "First Last" from the gradebook, for the students it names."""
    names = {}
    with course.gradebook() as gb:
        for student in students:
            try:
                record = gb.find_student(student)
            except Exception:  # noqa: BLE001 - unknown student: no name
                continue
            name = " ".join(part for part in (record.first_name, record.last_name) if part)
            if name:
                names[student] = name
    return names


def write_reports(
    folder: Path,
    summaries: list[HandInSummary],
    present_students: set[str] | None = None,
    *,
    course: NbgraderCourse | None = None,
    copies: Mapping[str, list[CopyPair]] | None = None,
) -> None:
    """Every report in ``folder`` (see the module docstring).

    Args:
        present_students: only these students are reported (a student whose submission
            folder was removed disappears); None: every summary.
        course: the nbgrader course: late penalties and names from its gradebook, and the
            near copies among its autograded notebooks (unless ``copies`` is given).
            Without it the penalty column is empty and no copies are looked for.
        copies: assignment -> near copies, already found.
    """
    if present_students is not None:
        summaries = [s for s in summaries if s.student in present_students]
    folder.mkdir(parents=True, exist_ok=True)
    penalties = names = None
    if course is not None:
        penalties = late_penalties(course, summaries)
        names = student_names(course, {s.student for s in summaries})
        if copies is None:
            assignments = list(dict.fromkeys(s.assignment for s in summaries))
            students = {s.student for s in summaries}
            copies = course_copies(course, assignments, students)
    write_grades_csv(folder / "grades.csv", summaries)
    write_totals_csv(folder / "totals.csv", summaries, penalties)
    write_exports(folder, summaries, penalties, names)
    (folder / "integrity.json").write_text(json.dumps([s.to_json() for s in summaries], indent=1))
    (folder / "integrity.md").write_text(integrity_markdown(summaries, copies))


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
