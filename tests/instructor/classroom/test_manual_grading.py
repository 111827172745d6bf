"""Written answers graded by hand, through the class grader (issue 13), end to end.

A copy of notebook 01 gets a written-answer cell (markdown, nbgrader ``solution`` and
``grade``, 2 points, a reference answer and a rubric) in its source before nbgrader's
``generate_assignment``; the copy's concept questions are left out, so the class depends on
the exercises alone. Three students: one answers the written question, one leaves it as
released, one answers it but gets a function wrong. The class grader grades them: the
answered ones await a grader (no 0 in the reports, no final grade in the totals and the LMS
exports, listed in integrity.md and the run's log), the untouched one has nbgrader's 0. Then
a manual score is set in the gradebook, as formgrader does, and the grader runs again:
nothing is regraded, and the totals, exports and feedback have the hand-given score. Last,
the other answer is graded by question with rubric items (``instructor.question_grading``,
issue 47), and the grader's next run carries that score and the items' notes everywhere.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.worker.isolation import Limits
from instructor.question_grading import QuestionGrading
from instructor.rubrics import METADATA_KEY
from instructor.scratch_course import ScratchCourse
from support.cells import written_answer_cell

# One worker for the module, so that its class is graded once.
pytestmark = pytest.mark.xdist_group("manual_grading")

ASSIGNMENT = "01_vector_sets"
NOTEBOOK = ASSIGNMENT
WRITTEN = "written_sets"
PROMPT = (
    "**Written answer** (2 points, graded by hand) · Why can a set of vectors stand for a "
    "sentence, a recording and a graph alike? Answer in three to five sentences."
)
REFERENCE = "Each part becomes one vector of the same size: a word, a frame, a node."
RUBRIC = "1 point: names what one vector stands for in each of the three inputs"
SOLUTION = f"**Reference answer.** {REFERENCE}\n\n**Rubric (2 points).**\n- {RUBRIC}\n"
ANSWER = "Every item, a word or a frame or a node, is one vector: zebra-striped answer."
WRONG_ANSWER = "I do not know, but vectors are lists of numbers (my own words)."
MANUAL_SCORE = 1.5
ITEMS = [
    {"id": "names_each", "label": "one vector per part", "points": 1, "criterion": RUBRIC,
     "note": "Right: you named what one vector stands for in each input."},
    {"id": "same_size", "label": "same size", "points": 1,
     "criterion": "the vectors share one size",
     "note": "Right: the vectors all have the same size."},
    {"id": "off_topic", "label": "off topic", "points": -0.5,
     "criterion": "talks of something else",
     "note": "Part of your answer is about something else."},
]  # fmt: skip

STUDENTS = ("answered", "untouched", "wrong_function")


def _with_written_answer(source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The instructor notebook with a written-answer cell before its summary, concept
    questions (``q_*`` answer and test cells) taken out."""
    cells = [
        cell
        for cell in source.cells
        if not (anatomy.grade_id(cell) or "").startswith(("q_", "test_q_"))
    ]
    prompt = nbformat.v4.new_markdown_cell(PROMPT)
    answer = written_answer_cell(SOLUTION, WRITTEN)
    answer.metadata[METADATA_KEY] = {"items": ITEMS}
    summary = next(
        (i for i, c in enumerate(cells) if c.source.startswith("## Summary")), len(cells)
    )
    source.cells = [*cells[:summary], prompt, answer, *cells[summary:]]
    return source


def _submission(course: ScratchCourse, written: str | None, wrong: bool) -> nbformat.NotebookNode:
    answers = course.solutions()
    if wrong:
        answers["one_hot"] = answers["one_hot"].replace("return encoded", "return encoded.T")
        assert answers["one_hot"] != course.solutions()["one_hot"], "the mutation found nothing"
    notebook = course.solved(answers, demos=False)
    released = {anatomy.grade_id(c): c.source for c in course.released().cells}
    for cell in notebook.cells:
        if anatomy.grade_id(cell) == WRITTEN:
            cell.source = written if written is not None else released[WRITTEN]
    return notebook


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _reports(root: Path) -> dict:
    folder = root / "reports"
    grades = {
        (r["student"], r["cell"]): r for r in _csv(folder / "grades.csv") if r["cell"] == WRITTEN
    }
    totals = {(r["student"], r["assignment"]): r for r in _csv(folder / "totals.csv")}
    with (folder / "canvas.csv").open(newline="", encoding="utf-8") as handle:
        canvas = list(csv.reader(handle))
    column = canvas[0].index(ASSIGNMENT)
    login = canvas[0].index("SIS Login ID")
    return {
        "grades": grades,
        "totals": totals,
        "canvas": {row[login]: row[column] for row in canvas[2:]},
        "moodle": {r["Username"]: r[ASSIGNMENT] for r in _csv(folder / "moodle.csv")},
        "integrity": (folder / "integrity.md").read_text(encoding="utf-8"),
    }


def _awaiting_section(integrity: str) -> str:
    return integrity.split("## Awaiting manual grading", 1)[1].split("\n## ", 1)[0]


def _feedback(root: Path, student: str) -> str:
    return (root / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text("utf-8")


@pytest.fixture(scope="module")
def graded(
    tmp_path_factory: pytest.TempPathFactory,
    limits: Limits,
    shared_scheduler: Callable[[], str],
) -> dict:
    root = tmp_path_factory.mktemp("manual") / "course"
    course = ScratchCourse(root, ASSIGNMENT)
    source = root / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    nbformat.write(_with_written_answer(nbformat.read(source, 4)), source)
    course.generate()
    course.submit("answered", _submission(course, ANSWER, wrong=False))
    course.submit("untouched", _submission(course, None, wrong=False))
    course.submit("wrong_function", _submission(course, WRONG_ANSWER, wrong=True))
    log: list[str] = []
    grader = ClassGrader(root, scheduler=shared_scheduler(), limits=limits, progress=False)
    summaries = {s.student: s for s in grader.grade([ASSIGNMENT], log=log.append)}
    return {
        "root": root,
        "course": course,
        "limits": limits,
        "scheduler": shared_scheduler(),
        "summaries": summaries,
        "log": log,
        "reports": _reports(root),
        "feedback": {s: _feedback(root, s) for s in STUDENTS},
    }


@pytest.fixture(scope="module")
def hand_graded(graded: dict) -> dict:
    """The class after a grader gave ``answered`` a manual score (nbgrader's API, as
    formgrader does) and the class grader ran again."""
    with Gradebook(graded["course"].db_url) as gb:
        grade = gb.find_grade(WRITTEN, NOTEBOOK, ASSIGNMENT, "answered")
        grade.manual_score = MANUAL_SCORE
        gb.db.commit()
    return _graded_again(graded, "answered")


def _graded_again(graded: dict, student: str) -> dict:
    """The class grader's run after a score given by hand: its summaries, log, reports and
    ``student``'s feedback."""
    root = graded["root"]
    log: list[str] = []
    grader = ClassGrader(
        root, scheduler=graded["scheduler"], limits=graded["limits"], progress=False
    )
    summaries = {s.student: s for s in grader.grade([ASSIGNMENT], log=log.append)}
    return {
        "summaries": summaries,
        "log": log,
        "reports": _reports(root),
        "feedback": _feedback(root, student),
    }


def test_the_student_version_has_no_reference_answer(graded: dict) -> None:
    released = graded["course"].released()
    cell = next(c for c in released.cells if anatomy.grade_id(c) == WRITTEN)
    assert cell.cell_type == "markdown"
    text = nbformat.writes(released)
    assert REFERENCE not in text and RUBRIC not in text
    assert METADATA_KEY not in cell.metadata and ITEMS[0]["note"] not in text


def test_the_answered_written_question_awaits_a_grader(graded: dict) -> None:
    summaries = graded["summaries"]
    assert not [s.error for s in summaries.values() if s.error]
    assert {s: summaries[s].notebooks[NOTEBOOK].outcome for s in STUDENTS} == dict.fromkeys(
        STUDENTS, "ok"
    )
    assert [(n, g.cell) for n, g in summaries["answered"].awaiting] == [(NOTEBOOK, WRITTEN)]
    assert [(n, g.cell) for n, g in summaries["wrong_function"].awaiting] == [(NOTEBOOK, WRITTEN)]
    assert summaries["untouched"].awaiting == []
    grades = graded["reports"]["grades"]
    assert (grades[("answered", WRITTEN)]["score"], grades[("answered", WRITTEN)]["outcome"]) == (
        "",
        "awaiting manual grading",
    )
    assert grades[("wrong_function", WRITTEN)]["outcome"] == "awaiting manual grading"
    # Left as released: nbgrader's own 0, nothing for a grader to do.
    assert (grades[("untouched", WRITTEN)]["score"], grades[("untouched", WRITTEN)]["outcome"]) == (
        "0.0",
        "unanswered",
    )


def test_the_totals_and_exports_leave_it_pending_not_zero(graded: dict) -> None:
    summaries, reports = graded["summaries"], graded["reports"]
    maximum = summaries["answered"].max_score
    assert maximum == summaries["untouched"].max_score
    totals = reports["totals"]
    answered = totals[("answered", ASSIGNMENT)]
    # Every test passed; the 2 points of the written answer are neither counted nor lost.
    assert float(answered["score"]) == maximum - 2
    assert (answered["final"], answered["awaiting_manual"]) == ("", "2")
    assert (
        totals[("answered", "TOTAL")]["final"],
        totals[("answered", "TOTAL")]["awaiting_manual"],
    ) == ("", "2")
    untouched = totals[("untouched", ASSIGNMENT)]
    assert float(untouched["final"]) == maximum - 2
    assert untouched["awaiting_manual"] == "0"
    wrong = totals[("wrong_function", ASSIGNMENT)]
    assert float(wrong["score"]) < maximum - 2
    assert (wrong["final"], wrong["awaiting_manual"]) == ("", "2")
    for export in ("canvas", "moodle"):
        assert reports[export]["answered"] == "", export
        assert reports[export]["wrong_function"] == "", export
        assert float(reports[export]["untouched"]) == maximum - 2, export


def test_integrity_report_and_log_say_what_awaits_grading(graded: dict) -> None:
    integrity = graded["reports"]["integrity"]
    section = _awaiting_section(integrity)
    assert f"| answered | {ASSIGNMENT} | {NOTEBOOK}: {WRITTEN} | 2 |" in section
    assert f"| wrong_function | {ASSIGNMENT} | {NOTEBOOK}: {WRITTEN} | 2 |" in section
    assert "untouched" not in section
    # Awaiting a grader is no integrity matter: no hand-in is flagged for it.
    flagged = integrity.split("## Awaiting manual grading", 1)[0]
    assert not [line for line in flagged.splitlines() if WRITTEN in line]
    log = "\n".join(graded["log"])
    assert "2 written answer(s) of 2 submission(s) await grading in formgrader" in log


def test_feedback_shows_the_students_answer_never_the_reference(graded: dict) -> None:
    autograded = graded["course"].autograded("answered")
    cell = next(c for c in autograded.cells if anatomy.grade_id(c) == WRITTEN)
    assert cell.source == ANSWER
    assert REFERENCE not in nbformat.writes(autograded)
    assert ANSWER in graded["feedback"]["answered"]
    for student, html in graded["feedback"].items():
        assert REFERENCE not in html and RUBRIC not in html, student
        assert "Reference answer" not in html, student


def test_a_manual_score_goes_into_totals_and_exports_without_regrading(
    graded: dict, hand_graded: dict
) -> None:
    log = "\n".join(hand_graded["log"])
    assert "0 submission(s) to grade, 3 already graded" in log
    assert "1 submission(s) with scores given by hand since the last run" in log
    assert "1 written answer(s) of 1 submission(s) await grading in formgrader" in log
    maximum = graded["summaries"]["answered"].max_score
    reports = hand_graded["reports"]
    assert reports["grades"][("answered", WRITTEN)]["score"] == str(MANUAL_SCORE)
    assert reports["grades"][("answered", WRITTEN)]["outcome"] == "graded by hand"
    answered = reports["totals"][("answered", ASSIGNMENT)]
    expected = maximum - 2 + MANUAL_SCORE
    assert (float(answered["score"]), float(answered["final"])) == (expected, expected)
    assert answered["awaiting_manual"] == "0"
    assert float(reports["totals"][("answered", "TOTAL")]["final"]) == expected
    for export in ("canvas", "moodle"):
        assert float(reports[export]["answered"]) == expected, export
        assert reports[export]["wrong_function"] == "", export  # still awaiting its grader
    assert reports["totals"][("wrong_function", ASSIGNMENT)]["awaiting_manual"] == "2"
    section = _awaiting_section(reports["integrity"])
    assert "| answered |" not in section and "| wrong_function |" in section
    summary = hand_graded["summaries"]["answered"]
    assert (summary.score, summary.awaiting) == (expected, [])
    # The feedback is written again with the grader's score, still without the reference.
    assert ANSWER in hand_graded["feedback"] and REFERENCE not in hand_graded["feedback"]
    assert hand_graded["feedback"] != graded["feedback"]["answered"]


@pytest.fixture(scope="module")
def rubric_graded(graded: dict, hand_graded: dict) -> dict:
    """The class after a TA graded the other answer by question with rubric items, and the
    class grader ran again."""
    grading = QuestionGrading(graded["root"])
    answer = grading.next_waiting(ASSIGNMENT, WRITTEN)
    assert answer is not None and answer.key.student == "wrong_function"
    assert answer.text == WRONG_ANSWER
    grading.save(ASSIGNMENT, WRITTEN, "wrong_function", items=["names_each", "off_topic"],
                 comment="See section 1.", etag=answer.etag, grader="ta1")  # fmt: skip
    assert grading.next_waiting(ASSIGNMENT, WRITTEN) is None
    return _graded_again(graded, "wrong_function")


def test_a_score_by_rubric_items_reaches_reports_exports_and_feedback(
    graded: dict, hand_graded: dict, rubric_graded: dict
) -> None:
    log = "\n".join(rubric_graded["log"])
    assert "1 submission(s) with scores given by hand since the last run" in log
    assert "await grading" not in log
    reports = rubric_graded["reports"]
    assert reports["grades"][("wrong_function", WRITTEN)]["score"] == "0.5"
    assert reports["grades"][("wrong_function", WRITTEN)]["outcome"] == "graded by hand"
    before = hand_graded["reports"]["totals"][("wrong_function", ASSIGNMENT)]
    totals = reports["totals"][("wrong_function", ASSIGNMENT)]
    expected = float(before["score"]) + 0.5
    assert (float(totals["score"]), float(totals["final"])) == (expected, expected)
    assert totals["awaiting_manual"] == "0"
    for export in ("canvas", "moodle"):
        assert float(reports[export]["wrong_function"]) == expected, export
    assert "## Awaiting manual grading" not in reports["integrity"]  # none left
    feedback = rubric_graded["feedback"]
    assert ITEMS[0]["note"] in feedback and ITEMS[2]["note"] in feedback
    assert "See section 1." in feedback and ITEMS[1]["note"] not in feedback
    for secret in (REFERENCE, RUBRIC, ITEMS[1]["criterion"], ITEMS[2]["criterion"]):
        assert secret not in feedback
