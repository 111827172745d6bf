"""A written answer (graded by hand) that carries script, through the class grader.

A copy of notebook 01 gets a written-answer cell (as in ``test_manual_grading.py``). Two
students solve every function; one writes a plain answer, the other the same answer
followed by every payload of ``tests/support/hostile.py``. Both score the same and both
await a grader; the hostile one's answer reaches formgrader (the autograded notebook) and
its feedback as text the instructor reads, with nothing that runs.
"""

from __future__ import annotations

from collections.abc import Callable

import nbformat
import pytest
from nbconvert import HTMLExporter

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import Manual
from instructor.classroom.worker.isolation import Limits
from instructor.feedback import inert_markdown
from instructor.scratch_course import ScratchCourse
from support.cells import written_answer_cell
from support.hostile import SCRIPT_MARKDOWN, active_content, visible_text

# One worker for the module, so that its class is graded once.
pytestmark = pytest.mark.xdist_group("written_answer_script")

ASSIGNMENT = "01_vector_sets"
WRITTEN = "written_sets"
ANSWER = "Every item, a word or a frame or a node, is one vector: zebra-striped answer."
HOSTILE_ANSWER = ANSWER + "\n\n" + "\n\n".join(SCRIPT_MARKDOWN)


def _with_written_answer(source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    answer = written_answer_cell("**Reference answer.** One vector per part.", WRITTEN)
    source.cells.append(answer)
    return source


@pytest.fixture(scope="module")
def graded(
    tmp_path_factory: pytest.TempPathFactory,
    limits: Limits,
    shared_scheduler: Callable[[], str],
) -> dict:
    root = tmp_path_factory.mktemp("written_script") / "course"
    course = ScratchCourse(root, ASSIGNMENT)
    source = root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.write(_with_written_answer(nbformat.read(source, 4)), source)
    course.generate()
    for student, written in (("plain", ANSWER), ("scripted", HOSTILE_ANSWER)):
        notebook = course.solved(demos=False)
        next(c for c in notebook.cells if anatomy.grade_id(c) == WRITTEN).source = written
        course.submit(student, notebook)
    grader = ClassGrader(root, scheduler=shared_scheduler(), limits=limits, progress=False)
    summaries = {s.student: s for s in grader.grade([ASSIGNMENT], log=lambda _: None)}
    return {"root": root, "course": course, "summaries": summaries}


def test_the_script_gains_nothing_and_still_awaits_a_grader(graded: dict) -> None:
    plain, scripted = graded["summaries"]["plain"], graded["summaries"]["scripted"]
    assert scripted.score == plain.score > 0
    for summary in (plain, scripted):
        (cell,) = [c for c in summary.notebooks[ASSIGNMENT].cells if c.cell == WRITTEN]
        assert cell.manual == Manual.AWAITING, summary


def test_formgrader_and_the_feedback_show_the_answer_as_text(graded: dict) -> None:
    root, course = graded["root"], graded["course"]
    autograded = course.autograded("scripted")
    cell = next(c for c in autograded.cells if anatomy.grade_id(c) == WRITTEN)
    assert cell.source == inert_markdown(HOSTILE_ANSWER)
    plain = next(c for c in course.autograded("plain").cells if anatomy.grade_id(c) == WRITTEN)
    assert plain.source == ANSWER  # a plain answer is left as written
    feedback = root / "feedback" / "scripted" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    pages = {
        "formgrader": HTMLExporter(template_name="classic").from_notebook_node(autograded)[0],
        "feedback": feedback.read_text(encoding="utf-8"),
    }
    for name, page in pages.items():
        assert active_content(page) == [], name
        text = visible_text(page)
        assert ANSWER in text, name
        assert "<script>alert('XSS')</script>" in text, name  # read as written
