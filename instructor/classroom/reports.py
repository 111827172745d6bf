"""The class grader's reports, from the recorded summaries (:mod:`.resume`).

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
    :func:`write_exports`.
``integrity.md`` and ``integrity.json``
    every hand-in an instructor should read, and why; the summaries themselves. Besides
    what the grader saw (changed test cells, suspicious code, replaced checks), it flags a
    failing imports cell, every notebook scored 0 for a reason other than wrong answers,
    and near copies of ``solutions/`` or between students (:func:`copy_report`), and lists
    the answers awaiting a grader (:func:`awaiting_manual`). It ends
    with the best-effort checks of each notebook (:func:`best_effort_checks`): rules
    measured inside the student's kernel, the same for every student, flagging no one.

Every CSV cell is written through :func:`instructor.lms.csv_safety.safe_cell`: a student id
or name a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage
return) gets a leading ``'``; scores stay plain numbers. Such a student id is logged.

Every score comes from nbgrader's gradebook, read again when the reports are written
(:func:`from_gradebook`): a score a grader gives by hand in formgrader is in the next
reports without grading anything again.

Plus the lines the grader logs at the end of a run (:func:`run_lines`, :func:`awaiting_lines`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from nbformat import NotebookNode

from instructor import anatomy
from instructor.lms.config import LMS_TOML, LmsConfig, read_config
from instructor.lms.csv_safety import neutralised, write_rows
from instructor.lms.export import EXPORTS
from instructor.lms.export import write_exports as write_lms_exports
from instructor.lms.roster import LmsIdentity, read_roster, roster_path
from instructor.lms.table import Finals, GradeTable, format_points

from .records import (
    AWAITING,
    GRADED,
    NOT_RUN_OUTCOMES,
    UNANSWERED,
    ZERO_OUTCOMES,
    CellGrade,
    HandInSummary,
    NotebookSummary,
    Outcome,
    ZeroKind,
)
from .similarity import DEFAULT_THRESHOLD, REFERENCE_STUDENT, CopyPair, graded_answers, near_copies

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse

__all__ = [
    "COURSE_TOTAL",
    "EXPORTS",
    "GRADES_HEADER",
    "TOTALS_HEADER",
    "attention",
    "awaiting_lines",
    "awaiting_manual",
    "best_effort_checks",
    "cell_outcome",
    "copy_report",
    "course_copies",
    "from_gradebook",
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
TOTALS_HEADER = (
    "student",
    "assignment",
    "score",
    "max_score",
    "late_penalty",
    "final",
    "awaiting_manual",
)
COURSE_TOTAL = "TOTAL"
"""``totals.csv``'s assignment column on a student's row over the whole course."""

log = logging.getLogger(__name__)

AWAITING_OUTCOME = "awaiting manual grading"
MANUAL_OUTCOMES = {
    AWAITING: AWAITING_OUTCOME,
    GRADED: "graded by hand",
    UNANSWERED: "unanswered",
}
"""``grades.csv``'s outcome of a cell graded by hand, by ``CellGrade.manual``."""
FORMGRADER = "formgrader"


def cell_outcome(record: NotebookSummary, grade: CellGrade) -> str:
    """``passed``, ``failed``, ``not run`` or ``zeroed``, or for a cell graded by hand
    ``awaiting manual grading``, ``graded by hand`` or ``unanswered``: see the module
    docstring."""
    missing = grade.manual == UNANSWERED and record.outcome in NOT_RUN_OUTCOMES
    if grade.manual and not missing:  # a missing notebook's written answer: "not run"
        return MANUAL_OUTCOMES[grade.manual]
    if grade.score is not None and grade.max_score is not None and grade.score >= grade.max_score:
        return "passed"
    zeroed = {z.test: z.kind for z in record.zeroed}
    if record.outcome in NOT_RUN_OUTCOMES or zeroed.get(grade.cell) == ZeroKind.NOT_RUN:
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
    outcomes = {cell_outcome(record, grade) for grade in record.cells or () if not grade.manual}
    if outcomes == {"not run"}:
        return "no test cell ran"
    return ""


def attention(summary: HandInSummary) -> list[str]:
    """Everything about one hand-in that an instructor should read."""
    lines = list(summary.notes)
    if summary.error:
        lines.append(summary.error)
    for name, record in summary.notebooks.items():
        if record.outcome not in (Outcome.OK, ""):
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
    what = "the reference solution" if other == REFERENCE_STUDENT else other
    return f"{pair.function}: near copy of {what} (similarity {pair.similarity:.2f})"


def best_effort_checks(summaries: Iterable[HandInSummary]) -> dict[tuple[str, str], list[str]]:
    """(assignment, notebook) -> the rules its tests measured inside the student's kernel
    (``NotebookSummary.best_effort``), over every hand-in: the same tests ask them of every
    student, so they describe the notebook, not a student."""
    found: dict[tuple[str, str], set[str]] = {}
    for summary in summaries:
        for name, record in summary.notebooks.items():
            if record.best_effort:
                found.setdefault((summary.assignment, name), set()).update(record.best_effort)
    return {key: sorted(checks) for key, checks in found.items()}


def _best_effort_lines(summaries: list[HandInSummary]) -> list[str]:
    lines = []
    for (assignment, notebook), checks in best_effort_checks(summaries).items():
        lines += [
            "",
            f"## Best-effort checks: {assignment} / {notebook}",
            "",
            "These rules were measured inside the student's own kernel (the process that "
            "runs the student's code) while the student's function ran, not in the grader: a "
            "student who sets out to can forge these measurements, so passing them proves "
            "less than passing the other tests. They are the same for every student of this "
            "notebook, and no student is listed above because of them.",
            "",
        ]
        lines += [f"- {check}" for check in checks]
    return lines


def _score_text(summary: HandInSummary) -> str:
    text = f"{summary.score:g}/{summary.max_score:g}"
    if summary.awaiting:
        text += f", {summary.awaiting_points:g} point(s) awaiting manual grading"
    return text


def awaiting_manual(
    summaries: Iterable[HandInSummary],
) -> list[tuple[HandInSummary, str, CellGrade]]:
    """(hand-in, notebook, cell) of every cell that awaits a grader, in order."""
    return [(summary, name, grade) for summary in summaries for name, grade in summary.awaiting]


def awaiting_lines(summaries: list[HandInSummary]) -> list[str]:
    """For the run's log: how many answers await a grader, and where to grade them."""
    found = awaiting_manual(summaries)
    if not found:
        return []
    hand_ins = {(s.student, s.assignment) for s, _, _ in found}
    return [
        f"{len(found)} written answer(s) of {len(hand_ins)} submission(s) await grading in "
        f"{FORMGRADER} (nbgrader's Manual Grading); until graded, their assignments have no "
        "final grade in totals.csv and are left empty in the LMS exports (integrity.md lists "
        "them). Run the grader again once they are graded: nothing is regraded, the reports "
        "take the scores from the gradebook."
    ]


def _awaiting_section(summaries: list[HandInSummary]) -> list[str]:
    found = awaiting_manual(summaries)
    if not found:
        return []
    lines = [
        "",
        "## Awaiting manual grading",
        "",
        f"{len(found)} answer(s) graded by hand (written answers) await a grader: grade them "
        f"in {FORMGRADER} (nbgrader's Manual Grading), then run the grader again. Until then "
        "these submissions have no final grade (totals.csv, the LMS exports); their score so "
        "far is not a grade.",
        "",
        "| student | assignment | cell | points |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {summary.student} | {summary.assignment} | {name}: {grade.cell} | "
        f"{format_points(grade.max_score)} |"
        for summary, name, grade in found
    ]
    return lines


def integrity_markdown(
    summaries: list[HandInSummary], copies: Mapping[str, list[CopyPair]] | None = None
) -> str:
    """The integrity report; ``copies``: assignment -> its near copies (:func:`copy_report`).
    The answers awaiting a grader are listed after the hand-ins to read (they are no
    integrity matter: no hand-in is flagged for them). It ends with each notebook's
    best-effort checks (:func:`best_effort_checks`)."""
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
        lines += ["", f"## {summary.student} / {summary.assignment} ({_score_text(summary)})"]
        lines += [f"- {note}" for note in notes]
    lines += _awaiting_section(summaries)
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
                f"{'solutions/' if p.student_b == REFERENCE_STUDENT else p.student_b} | "
                f"{p.similarity:.2f} |"
                for assignment, p in pairs
            ]
    lines += _best_effort_lines(summaries)
    return "\n".join(lines) + "\n"


def write_grades_csv(path: Path, summaries: list[HandInSummary]) -> None:
    """``grades.csv``; every cell made safe for a spreadsheet (:mod:`instructor.lms.csv_safety`)."""
    rows: list[list[object]] = [list(GRADES_HEADER)]
    for summary in summaries:
        for name, record in summary.notebooks.items():
            for grade in sorted(record.cells or (), key=lambda g: g.cell):
                rows.append(
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
    write_rows(path, rows)


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
    ``COURSE_TOTAL``. ``penalties``: (student, assignment) -> nbgrader's late penalty.

    ``awaiting_manual``: the points of cells that await a grader (written answers). Until
    they are graded, ``score`` is the points so far and ``final`` is None (of the
    assignment and of ``COURSE_TOTAL``): it is no grade yet, and the LMS exports leave it
    empty."""
    maxima = _assignment_max(summaries)
    by_student: dict[str, dict[str, HandInSummary]] = {}
    for summary in summaries:
        by_student.setdefault(summary.student, {})[summary.assignment] = summary
    rows: list[dict[str, float | str | None]] = []
    for student in sorted(by_student):
        course = {
            "score": 0.0,
            "max_score": 0.0,
            "late_penalty": 0.0,
            "final": 0.0,
            "awaiting_manual": 0.0,
        }
        for assignment, maximum in maxima.items():
            summary = by_student[student].get(assignment)
            row: dict[str, float | str | None] = {
                "student": student,
                "assignment": assignment,
                "score": None,
                "max_score": maximum,
                "late_penalty": None,
                "final": None,
                "awaiting_manual": None,
            }
            course["max_score"] += maximum
            if summary is not None:
                penalty = None if penalties is None else penalties.get((student, assignment), 0.0)
                awaiting = summary.awaiting_points
                # Not graded yet, no final grade: a written answer awaiting its grader is
                # no 0 (nbgrader's own sum counts it 0).
                final = None if summary.awaiting else max(0.0, summary.score - (penalty or 0.0))
                row.update(
                    score=summary.score, late_penalty=penalty, final=final, awaiting_manual=awaiting
                )
                course["score"] += summary.score
                course["late_penalty"] += penalty or 0.0
                course["final"] += final or 0.0
                course["awaiting_manual"] += awaiting
            rows.append(row)
        rows.append(
            {
                "student": student,
                "assignment": COURSE_TOTAL,
                **course,
                "late_penalty": None if penalties is None else course["late_penalty"],
                "final": None if course["awaiting_manual"] else course["final"],
            }
        )
    return rows


def write_totals_csv(
    path: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
) -> None:
    """``totals.csv``; every cell made safe for a spreadsheet (:mod:`instructor.lms.csv_safety`)."""
    rows: list[list[object]] = [list(TOTALS_HEADER)]
    for row in totals(summaries, penalties):
        rows.append(
            [
                value if key in ("student", "assignment") else format_points(value)  # type: ignore[arg-type]
                for key, value in ((k, row[k]) for k in TOTALS_HEADER)
            ]
        )
    write_rows(path, rows)


def _finals(
    summaries: list[HandInSummary], penalties: Mapping[tuple[str, str], float] | None
) -> dict[tuple[str, str], float]:
    """(student, assignment) -> ``final`` points, for what was handed in and is graded (not
    awaiting a grader)."""
    return {
        (str(row["student"]), str(row["assignment"])): float(row["final"])  # type: ignore[arg-type]
        for row in totals(summaries, penalties)
        if row["assignment"] != COURSE_TOTAL and row["final"] is not None
    }


def finals(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
    identities: Mapping[tuple[str, str], LmsIdentity] | None = None,
) -> Finals:
    """What the LMS exports are written from (:class:`instructor.lms.table.Finals`)."""
    return Finals(
        tuple(_assignment_max(summaries).items()),
        tuple(sorted({s.student for s in summaries})),
        _finals(summaries, penalties),
        dict(names or {}),
        dict(identities or {}),
    )


def grade_table(
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
) -> GradeTable:
    """Each student's ``final`` points per assignment (one ``GradeItem`` per assignment,
    named by its id; not handed in: no score, an empty cell); ``names``: student -> name."""
    return finals(summaries, penalties, names).table()


def write_exports(
    folder: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
    identities: Mapping[tuple[str, str], LmsIdentity] | None = None,
    config: LmsConfig | None = None,
) -> list[Path]:
    """Each student's final points per assignment in each LMS's import format, in
    ``folder`` (:func:`instructor.lms.export.write_exports`: every LMS module writes its
    own); ``names`` (student -> "First Last") fills the name columns, ``identities``
    ((student, assignment) -> who an LMS download said the student is,
    :func:`instructor.lms.roster.read_roster`) the LMS's own ids, ``config``
    (``lms.toml``) each assignment's title and id in each LMS.
    """
    written = write_lms_exports(folder, finals(summaries, penalties, names, identities), config)
    unmatched = sorted({s.student for s in summaries if neutralised(s.student)})
    if unmatched:
        log.warning(
            "%d student id(s) start with a character a spreadsheet reads as a formula (%s): "
            "the reports and LMS exports write them with a leading ' (OWASP's rule against CSV "
            "injection), so no LMS matches them; no LMS makes such an id: check those folders",
            len(unmatched),
            ", ".join(repr(s) for s in unmatched[:5]) + (", ..." if len(unmatched) > 5 else ""),
        )
    return written


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
        key = f"{student} (student)" if student == REFERENCE_STUDENT else student
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


def from_gradebook(course: NbgraderCourse, summaries: list[HandInSummary]) -> list[HandInSummary]:
    """``summaries`` with each recorded notebook's scores read again from the gradebook,
    which stays the record: a score a grader set by hand since (formgrader, or nbgrader's
    API) is in them, and a written answer graded is no longer awaiting
    (:func:`.nbgrader_setup.cell_grade`). A notebook the gradebook has no grades of keeps
    its recorded scores."""
    from .nbgrader_setup import cell_grade

    refreshed = []
    with course.gradebook() as gb:
        for summary in summaries:
            notebooks = dict(summary.notebooks)
            for name, record in summary.notebooks.items():
                if record.cells is None:
                    continue
                try:
                    notebook = gb.find_submission_notebook(
                        name, summary.assignment, summary.student
                    )
                except Exception:  # noqa: BLE001 - not in the gradebook: keep what was recorded
                    continue
                if not notebook.grades:
                    continue
                notebooks[name] = replace(
                    record,
                    score=notebook.score,
                    max_score=notebook.max_score,
                    cells=tuple(cell_grade(g) for g in notebook.grades),
                )
            refreshed.append(replace(summary, notebooks=notebooks))
    return refreshed


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
