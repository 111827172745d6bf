"""The class grader's reports, from the recorded summaries; :func:`write_reports` writes them.

First nbgrader's feedback HTML of every hand-in lacking it (:func:`write_feedback`, with the
plugins of :mod:`instructor.feedback`: no hidden test shown, the notebook inert). Then, in
``reports/`` (every CSV cell through :mod:`instructor.lms.csv_safety`):

``grades.csv``
    student x notebook x graded cell: ``score``, ``max_score`` and the cell's outcome
    (:func:`.records.cell_outcome`; a written answer awaiting a grader has an empty score).
``totals.csv``
    one row per student and assignment, then one per student over the course (``TOTAL``):
    ``score``, ``max_score``, ``late_penalty`` (:func:`.course.late_penalties`), ``final``
    (score less the penalty, never below 0, as ``nbgrader export`` computes it) and
    ``awaiting_manual`` (points awaiting a grader: while there are any, ``final`` is empty,
    also in ``TOTAL`` and the LMS exports). An assignment not handed in counts 0.
``canvas.csv``, ``moodle.csv``, ``blackboard.csv``, ``moodle_worksheet_<assignment>.csv``
    each assignment's ``final`` points in each LMS's import format (:func:`export_finals`).
``integrity.md`` and ``integrity.json``
    every hand-in an instructor should read, and why (:func:`.records.attention`), near
    copies (:func:`copy_report`), the answers awaiting a grader and each notebook's
    best-effort checks; the summaries.
``items.csv``, ``items.html``, ``items_anonymous.html``, ``items_<assignment>.png``
    the item analysis: per assignment, test cell, concept question and written answer
    (:mod:`.items`; the anonymous page names no student).

Every score comes from nbgrader's gradebook, read again when the reports are written
(:func:`.course.from_gradebook`): a score given by hand in formgrader is in the next reports
without grading anything again.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from instructor import anatomy
from instructor.classroom.grader.course import (
    NbgraderCourse,
    ResumeState,
    from_gradebook,
    late_penalties,
    student_names,
)
from instructor.classroom.grader.excluded import Excluded, excluded_lines, read_excluded, without
from instructor.classroom.grader.integrity import read_submission_file
from instructor.classroom.grader.items import late_hand_ins, rubric_items
from instructor.classroom.grader.items_html import write_items
from instructor.classroom.grader.records import HandInSummary, attention, cell_outcome, contain
from instructor.exchange import ExchangeRecord, read_records
from instructor.feedback import feedback_config
from instructor.lms.config import LMS_TOML, LmsConfig, read_config
from instructor.lms.csv_safety import neutralised, write_rows
from instructor.lms.export import write_lms_exports
from instructor.lms.roster import LmsIdentity, read_roster, roster_path
from instructor.lms.table import Finals, format_points
from instructor.similarity import (
    DEFAULT_THRESHOLD,
    REFERENCE_STUDENT,
    CopyPair,
    graded_answers,
    near_copies,
)

log = logging.getLogger(__name__)


def lacking_feedback(
    root: Path, state: ResumeState, assignments: list[str], force: bool = False
) -> list[tuple[str, str]]:
    """(assignment, student) of every recorded hand-in without feedback (all, with force)."""
    missing = []
    for assignment in assignments:
        for student in state.students(assignment):
            folder = root / "feedback" / student / assignment
            if force or not folder.is_dir() or not any(folder.glob("*.html")):
                missing.append((assignment, student))
    return missing


def redacting(course: NbgraderCourse) -> NbgraderCourse:
    """``course``, its API's ``generate_feedback`` made to redact hidden tests and sanitise
    (idempotent)."""
    course.api.config.merge(feedback_config())
    return course


def feedback_for(root: Path, db_url: str | None, assignment: str, student: str) -> bool:
    """nbgrader's ``generate_feedback`` for one hand-in, hidden tests redacted; whether it
    worked. It reads what the student wrote, so inside :func:`.records.contain`: one
    failing does not stop the others."""
    done = contain(
        lambda: redacting(NbgraderCourse(root, db_url)).generate_feedback(assignment, student)
    )
    return done is True


def write_feedback(
    course: NbgraderCourse,
    missing: list[tuple[str, str]],
    client: Any | None,
    say: Callable[[str], None],
) -> None:
    """Feedback for each (assignment, student) of ``missing``: on ``client``'s workers, or
    here where ``client`` is None; ``say`` tells the instructor (the run's log)."""
    if not missing:
        return
    if client is None:
        results = [feedback_for(course.root, course.db_url, a, s) for a, s in missing]
    else:
        futures = [
            client.submit(feedback_for, course.root, course.db_url, a, s, pure=False)
            for a, s in missing
        ]
        results = client.gather(futures)
    failed = [f"{a}/{s}" for (a, s), ok in zip(missing, results, strict=True) if not ok]
    say(f"feedback written for {len(missing) - len(failed)} submission(s)")
    if failed:
        say("feedback failed for: " + ", ".join(failed))


def write_reports(
    folder: Path,
    summaries: list[HandInSummary],
    present_students: set[str] | None = None,
    *,
    course: NbgraderCourse | None = None,
    copies: Mapping[str, list[CopyPair]] | None = None,
    penalties: Mapping[tuple[str, str], float] | None = None,
    say: Callable[[str], None] | None = None,
    excluded: Excluded | None = None,
) -> list[HandInSummary]:
    """Every report in ``folder`` (see the module docstring) of ``present_students`` (None:
    everyone); return the summaries reported; ``say`` gets the integrity report's count, as
    the report states it. ``course`` gives the scores read again from
    its gradebook and the late penalties (unless the caller passes ``penalties``, made on
    scores it read already), the students' names and LMS ids, and the near copies (unless
    ``copies`` is given); without it the exports carry student ids only, no penalties.
    ``excluded``: the test cells left out of every report (:mod:`.excluded`; by default
    the course's ``.grading/excluded.json``)."""
    if present_students is not None:
        summaries = [s for s in summaries if s.student in present_students]
    folder.mkdir(parents=True, exist_ok=True)
    names = None
    identities: dict[tuple[str, str], LmsIdentity] = {}
    config = None
    if course is not None:
        if penalties is None:
            summaries = from_gradebook(course, summaries)
            penalties = late_penalties(course, summaries)
        names = student_names(course, {s.student for s in summaries})
        identities = read_roster(roster_path(course.submitted_folder()))
        config = read_config(course.submitted_folder().parent / LMS_TOML)
        if copies is None:
            assignments = list(dict.fromkeys(s.assignment for s in summaries))
            copies = course_copies(course, assignments, {s.student for s in summaries})
    if excluded is None:
        excluded = read_excluded(course.root) if course is not None else {}
    summaries = without(summaries, excluded)
    grades: list[list[object]] = [list(GRADES_HEADER)]
    for summary in summaries:
        for name, record in summary.notebooks.items():
            where = [summary.student, summary.assignment, name]
            for grade in sorted(record.cells or (), key=lambda g: g.cell):
                outcome = cell_outcome(record, grade)
                grades.append([*where, grade.cell, grade.score, grade.max_score, outcome])
    write_rows(folder / "grades.csv", grades)
    write_rows(
        folder / "totals.csv",
        [list(TOTALS_HEADER)]
        + [
            [
                row[k] if k in ("student", "assignment") else format_points(row[k])
                for k in TOTALS_HEADER
            ]  # type: ignore[arg-type]
            for row in totals(summaries, penalties)
        ],
    )
    export_finals(folder, summaries, penalties, names, identities, config)
    (folder / "integrity.json").write_text(json.dumps([s.to_json() for s in summaries], indent=1))
    assignments = {s.assignment for s in summaries}
    exchange = [
        r for r in (read_records(course.root) if course else []) if r.assignment in assignments
    ]
    integrity = integrity_markdown(summaries, copies, exchange)
    integrity += "".join(f"{line}\n" for line in excluded_lines(excluded, assignments))
    (folder / "integrity.md").write_text(integrity)
    # Late as the gradebook has it (a late hand-in may carry no penalty); without a course,
    # as the penalties say.
    late = (
        late_hand_ins(course, summaries)
        if course is not None
        else None
        if penalties is None
        else {key for key, penalty in penalties.items() if penalty > 0}
    )
    rubrics = rubric_items(course.root) if course is not None else None
    write_items(folder, summaries, late=late, rubrics=rubrics)
    if say is not None:
        flagged = flagged_hand_ins(summaries, copies or {})
        say(f"integrity report: {integrity_count(flagged, summaries)} ({folder / 'integrity.md'})")
    return summaries


def run_lines(graded: list[HandInSummary], skipped: int, seconds: float) -> list[str]:
    """What a run did, for the log."""
    outcomes = Counter(record.outcome for s in graded for record in s.notebooks.values())
    errors = [s for s in graded if s.error]
    lines = [
        f"graded {len(graded)} submission(s) in {seconds:.1f} s ({skipped} skipped); "
        "notebooks: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())),
        f"{len(errors)} grader error(s)",
    ]
    lines += [f"  {s.student}/{s.assignment}: {s.error[:300]}" for s in errors]
    return lines


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
    """The rows of ``totals.csv``: per student, each assignment (None where not handed in),
    then ``COURSE_TOTAL``. While ``awaiting_manual`` points await a grader, ``final`` is None:
    the score so far is no grade yet, and the LMS exports leave it empty."""
    maxima = _assignment_max(summaries)
    by_student: dict[str, dict[str, HandInSummary]] = {}
    for summary in summaries:
        by_student.setdefault(summary.student, {})[summary.assignment] = summary
    rows: list[dict[str, float | str | None]] = []
    for student in sorted(by_student):
        own: list[dict[str, float | str | None]] = []
        for assignment, maximum in maxima.items():
            summary = by_student[student].get(assignment)
            row: dict[str, float | str | None] = {
                **dict.fromkeys(TOTALS_HEADER),
                "student": student,
                "assignment": assignment,
                "max_score": maximum,
            }
            if summary is not None:
                penalty = None if penalties is None else penalties.get((student, assignment), 0.0)
                # A written answer awaiting its grader is no 0 (nbgrader's own sum counts it 0).
                final = None if summary.awaiting else max(0.0, summary.score - (penalty or 0.0))
                row.update(
                    score=summary.score,
                    late_penalty=penalty,
                    final=final,
                    awaiting_manual=summary.awaiting_points,
                )
            own.append(row)
        total = {key: sum(float(r[key] or 0.0) for r in own) for key in TOTALS_HEADER[2:]}
        rows += own
        rows.append(
            {
                "student": student,
                "assignment": COURSE_TOTAL,
                **total,
                "late_penalty": None if penalties is None else total["late_penalty"],
                "final": None if total["awaiting_manual"] else total["final"],
            }
        )
    return rows


def export_finals(
    folder: Path,
    summaries: list[HandInSummary],
    penalties: Mapping[tuple[str, str], float] | None = None,
    names: Mapping[str, str] | None = None,
    identities: Mapping[tuple[str, str], LmsIdentity] | None = None,
    config: LmsConfig | None = None,
) -> list[Path]:
    """Each student's final points per assignment in each LMS's import format, in
    ``folder`` (:func:`instructor.lms.export.write_lms_exports`), with the students' ``names``,
    their LMS ``identities`` and each assignment's title and id in ``config``."""
    points = {
        (str(row["student"]), str(row["assignment"])): float(row["final"])  # type: ignore[arg-type]
        for row in totals(summaries, penalties)
        if row["assignment"] != COURSE_TOTAL and row["final"] is not None
    }
    finals = Finals(
        tuple(_assignment_max(summaries).items()),
        tuple(sorted({s.student for s in summaries})),
        points,
        dict(names or {}),
        dict(identities or {}),
    )
    written = write_lms_exports(folder, finals, config)
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


def best_effort_checks(summaries: Iterable[HandInSummary]) -> dict[tuple[str, str], list[str]]:
    """(assignment, notebook) -> the rules its tests measured inside the student's kernel,
    over every hand-in: they describe the notebook, not a student."""
    found: dict[tuple[str, str], set[str]] = {}
    for summary in summaries:
        for name, record in summary.notebooks.items():
            if record.best_effort:
                found.setdefault((summary.assignment, name), set()).update(record.best_effort)
    return {key: sorted(checks) for key, checks in found.items()}


def awaiting_lines(summaries: list[HandInSummary]) -> list[str]:
    """For the run's log: how many answers await a grader, and where to grade them."""
    waiting = [s for s in summaries if s.awaiting]
    if not waiting:
        return []
    return [
        f"{sum(len(s.awaiting) for s in waiting)} written answer(s) of {len(waiting)} "
        "submission(s) await grading in formgrader (nbgrader's Manual Grading); until graded, "
        "their assignments have no final grade in totals.csv and are left empty in the LMS "
        "exports (integrity.md lists them). Run the grader again once they are graded: "
        "nothing is regraded, the reports take the scores from the gradebook."
    ]


def _awaiting_section(summaries: list[HandInSummary]) -> list[str]:
    found = [(s, name, grade) for s in summaries for name, grade in s.awaiting]
    if not found:
        return []
    lines = [
        "",
        "## Awaiting manual grading",
        "",
        f"{len(found)} answer(s) graded by hand (written answers) await a grader: grade them "
        "in formgrader (nbgrader's Manual Grading), then run the grader again. Until then "
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


def flagged_hand_ins(
    summaries: list[HandInSummary], copies: Mapping[str, list[CopyPair]]
) -> list[tuple[HandInSummary, list[str]]]:
    """The hand-ins the integrity report lists, each with its notes (near copies included)."""
    flagged = []
    for summary in summaries:
        notes = attention(summary)
        for pair in copies.get(summary.assignment, []):
            if summary.student in (pair.student_a, pair.student_b):
                other = pair.student_b if pair.student_a == summary.student else pair.student_a
                what = "the reference solution" if other == REFERENCE_STUDENT else other
                notes.append(
                    f"{pair.function}: near copy of {what} (similarity {pair.similarity:.2f})"
                )
        if notes:
            flagged.append((summary, notes))
    return flagged


def integrity_count(
    flagged: list[tuple[HandInSummary, list[str]]], summaries: list[HandInSummary]
) -> str:
    """The report's first line, which the run's log repeats: the two always agree."""
    return f"{len(flagged)} of {len(summaries)} submission(s) need a look"


def _exchange_section(records: list[ExchangeRecord]) -> list[str]:
    """The hand-ins the exchange left out (``nbgrader collect``, ``release_feedback``)."""
    if not records:
        return []
    lines = [
        "",
        "## Left out by the exchange",
        "",
        f"{len(records)} hand-in(s) the exchange did not take as they were "
        "(`instructor/exchange.py`); every other hand-in was collected and released.",
        "",
        "| step | assignment | student | what | why |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in records:
        cells = (r.step, r.assignment, r.student, r.outcome, r.reason)
        lines.append("| " + " | ".join(_table_text(v) for v in cells) + " |")
    return lines


def _table_text(text: str) -> str:
    """``text`` as one markdown table cell: a folder's name is the student's to choose."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")


def integrity_markdown(
    summaries: list[HandInSummary],
    copies: Mapping[str, list[CopyPair]] | None = None,
    exchange: list[ExchangeRecord] | None = None,
) -> str:
    """The integrity report; ``copies``: assignment -> its near copies (:func:`copy_report`);
    ``exchange``: what the exchange left out of the reported assignments. Answers awaiting a
    grader are listed apart: they are no integrity matter."""
    copies = copies or {}
    lines = ["# Integrity report", ""]
    flagged = flagged_hand_ins(summaries, copies)
    lines.append(integrity_count(flagged, summaries) + ".")
    lines += _exchange_section(exchange or [])
    for summary, notes in flagged:
        score = f"{summary.score:g}/{summary.max_score:g}"
        if summary.awaiting:
            score += f", {summary.awaiting_points:g} point(s) awaiting manual grading"
        lines += ["", f"## {summary.student} / {summary.assignment} ({score})"]
        lines += [f"- {note}" for note in notes]
    lines += _awaiting_section(summaries)
    pairs = [(assignment, pair) for assignment, found in copies.items() for pair in found]
    if copies:
        lines += [
            "",
            "## Near copies",
            "",
            f"{len(pairs)} pair(s) of graded answers at or above similarity "
            f"{DEFAULT_THRESHOLD:g} (instructor.similarity: layout, comments, names "
            "and the order of statements do not count). Read both answers before concluding "
            "anything.",
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
    return "\n".join(lines) + "\n"


def copy_report(
    submissions: Mapping[str, Iterable[NotebookNode]],
    reference: Iterable[NotebookNode],
    released: Iterable[NotebookNode] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> list[CopyPair]:
    """The near copies among one assignment's hand-ins (:func:`instructor.similarity.near_copies`).

    Args:
        submissions: student -> the student's notebooks of the assignment (submitted or
            autograded: their solution cells are the student's answers).
        reference: the instructor notebooks (``solutions/``), markers stripped here.
        released: the student versions: their stubs never count as copied code.
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


def course_copies(
    course: NbgraderCourse, assignments: Iterable[str], students: Iterable[str]
) -> dict[str, list[CopyPair]]:
    """assignment -> near copies among the autograded (else submitted) notebooks of
    ``students``, read as staging reads them; an unreadable or missing one is left out."""

    def notebooks(paths: Iterable[Path]) -> list[NotebookNode]:
        readings = [read_submission_file(path) for path in paths if path.is_file()]
        return [reading.notebook for reading in readings if reading.notebook is not None]

    coursedir = course.coursedir
    found: dict[str, list[CopyPair]] = {}
    for assignment in assignments:
        release = sorted(course.release_folder(assignment).glob("*.ipynb"))
        submissions: dict[str, list[NotebookNode]] = {}
        for student in sorted(set(students)):
            folder = Path(
                coursedir.format_path(coursedir.autograded_directory, student, assignment)
            )
            if not folder.is_dir():
                folder = course.submitted_folder() / student / assignment
            submissions[student] = notebooks(folder / path.name for path in release)
        reference = notebooks(sorted(course.source_folder(assignment).glob("*.ipynb")))
        found[assignment] = copy_report(submissions, reference, notebooks(release))
    return found
