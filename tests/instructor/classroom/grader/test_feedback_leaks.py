"""Feedback HTML never shows a hidden test or a line of the reference solution, and shows
each failing test's error message whole.

For every notebook of course.toml, the reference course of ``support.graded_class`` (graded
by ``nbgrader autograde``, read by ``tests/course/test_autograde.py`` too, in the same xdist
group) holds three students of interest here: the reference solution, the untouched student
version and one wrong answer of ``tests/grading_cases`` (one with a promised message where
there is one). Then the class grader's feedback step (``reports.feedback_for``:
nbgrader's ``generate_feedback`` with :class:`RedactFeedback`) writes their HTML, which is
searched for every hidden test line and every reference-solution line that the student did
not write themselves and the student version does not show. The wrong answer has its
ungraded demo cells emptied (``demos=False``): they never touch the tests; the reference
solution and the untouched student version are as they are.
"""

from __future__ import annotations

import html
import re

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.classroom.grader.reports import feedback_for
from instructor.feedback import HIDDEN_NOTE, REDACTED_LINE, redact_test_cell
from instructor.scratch_course import ScratchCourse
from support.graded_class import (
    SOLUTION,
    STUB,
    WRONG,
    reference_course,
    reference_group,
    wrong_case,
)

NOTEBOOKS = registry.load().ids
HIDDEN_MIN = 15
SOLUTION_MIN = 20


def _text(page: str) -> str:
    """What a reader of the page sees (tags dropped, entities decoded), styles excluded."""
    page = re.sub(r"<style.*?</style>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(
    scope="module", params=[pytest.param(n, marks=reference_group(n)) for n in NOTEBOOKS]
)
def graded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    notebook_id: str = request.param
    # The course test_autograde.py reads too (same xdist group: built once, on one worker).
    course = reference_course(tmp_path_factory, notebook_id)
    students = {"reference": SOLUTION, "untouched": STUB, "wrong": WRONG}
    folder = course.root / "submitted"
    class_ = {
        kind: nbformat.read(folder / student / notebook_id / course.notebook_name, 4)
        for kind, student in students.items()
    }
    pages = {}
    for kind, student in students.items():
        assert feedback_for(course.root, None, notebook_id, student), student
        page = course.root / "feedback" / student / notebook_id / f"{notebook_id}.html"
        pages[kind] = page.read_text(encoding="utf-8")
    return {
        "id": notebook_id,
        "course": course,
        "students": students,
        "class": class_,
        "pages": pages,
        "wrong": wrong_case(notebook_id),
        "released": course.released(),
    }


def _sources(notebook: nbformat.NotebookNode) -> str:
    return "\n".join(cell.source for cell in notebook.cells)


def _lines(source: str, longer_than: int) -> set[str]:
    return {line.strip() for line in source.splitlines() if len(line.strip()) > longer_than}


def test_no_hidden_test_or_solution_line_in_the_feedback(graded: dict) -> None:
    solution = anatomy.read_solution(graded["id"])
    shown = _sources(graded["released"])  # the student version's every line
    hidden: set[str] = set()
    for cell in anatomy.test_cells(solution):
        visible = anatomy.visible_part(cell.source)
        hidden |= _lines(cell.source[len(visible) :], HIDDEN_MIN) - _lines(visible, 0)
    hidden = {line for line in hidden if line not in shown}
    assert hidden, "every notebook has hidden tests"
    reference = set()
    for source in anatomy.solution_sources(solution).values():
        reference |= _lines(source, SOLUTION_MIN)
    reference = {line for line in reference if line not in shown}
    for student, page in graded["pages"].items():
        text = _text(page)
        # The student's own code is theirs to see (a hidden test may recompute the answer
        # with the reference code the student also wrote).
        own = _sources(graded["class"][student])
        leaked = sorted(line for line in hidden if line in text and line not in own)
        assert not leaked, f"{graded['id']} {student}: hidden test lines shown: {leaked[:5]}"
        leaked = sorted(line for line in reference if line in text and line not in own)
        assert not leaked, f"{graded['id']} {student}: solution lines shown: {leaked[:5]}"
        assert "BEGIN HIDDEN TESTS" not in text
        assert HIDDEN_NOTE in text
        assert "white-space: pre-wrap" in page


def test_every_error_message_is_shown_whole(graded: dict) -> None:
    course: ScratchCourse = graded["course"]
    for student in ("untouched", "wrong"):
        text = _text(graded["pages"][student])
        autograded = course.autograded(graded["students"][student])
        errors = [
            output
            for cell in anatomy.test_cells(autograded)
            for output in cell.outputs
            if output.output_type == "error"
        ]
        assert errors, f"{graded['id']} {student}: no test failed"
        for error in errors:
            assert f"{error.ename}: {error.evalue}" in text, (graded["id"], student, error.evalue)
    message = graded["wrong"].message
    if message:
        assert message in _text(graded["pages"]["wrong"])


def test_a_traceback_loses_the_hidden_lines_only() -> None:
    source = (
        "x = f(1)\ncheck(x, 'visible check')\n\n### BEGIN HIDDEN TESTS\n"
        "want = secret_reference(2)\nassert f(2) == want\n### END HIDDEN TESTS\n"
    )
    cell = nbformat.v4.new_code_cell(source, execution_count=7)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f", "points": 1}
    frame = (
        "\x1b[0;31mCell In[7], line 6\x1b[0m\n      4 ### BEGIN HIDDEN TESTS\n"
        "      5 want = secret_reference(2)\n\x1b[0;32m----> 6\x1b[0m assert f(2) == want\n"
        "        ^^^^^^^^^^^^^^^^^"
    )
    other = "File helpers/checks.py:3, in check(a, b)\n----> 3 raise AssertionError(b)"
    long_message = "f(2) is 3, expected 4: " + "a long explanation " * 20
    cell.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="AssertionError",
            evalue=long_message,
            traceback=["-----", frame, other, f"AssertionError: {long_message}"],
        )
    ]
    redact_test_cell(cell)
    assert cell.source == f"x = f(1)\ncheck(x, 'visible check')\n\n{HIDDEN_NOTE}"
    traceback = cell.outputs[0]["traceback"]
    assert "secret_reference" not in "\n".join(traceback)
    assert "assert f(2) == want" not in "\n".join(traceback)
    assert traceback[1] == f"\x1b[0;31mCell In[7], line 6\x1b[0m\n{REDACTED_LINE}"
    assert traceback[2:] == [other, f"AssertionError: {long_message}"]
