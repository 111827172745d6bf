"""What Validate shows a student (instructor/validation.py, issue 44): for a mistake of each
notebook's grading cases, the failing test's name and the course's message, whole, within the
first 40 lines; no frame inside helpers/; no line cut.

Each notebook is validated by nbgrader's own ``Validator`` with the course's configuration
loaded as the Validate button's server extension loads it (``NbGrader.load_config_file``
from the course folder); notebook 01 also by the ``nbgrader validate`` command itself.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.grading_cases import Case, load_cases
from instructor.paths import AUTOGRADER
from instructor.validation import failure_text, wrap

ASSIGNMENTS = registry.load().ids
FIRST_LINES = 40


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _mistake(assignment: str) -> Case:
    """The first wrong answer of the notebook's grading cases whose message the visible
    tests promise (a message named in the failing test's own error)."""
    return next(c for c in load_cases(assignment) if c.kind == "wrong" and c.message)


def _student_notebook(tmp_path: Path, assignment: str, case: Case) -> Path:
    released = anatomy.read_released(assignment)
    answers = anatomy.solution_sources(anatomy.read_solution(assignment))
    answers[case.function] = case.source
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(anatomy.complete(released, answers, demos=False), path)
    return path


def _course_validator():
    """nbgrader's Validator, configured as the Validate button's handler configures it."""
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    here = os.getcwd()
    os.chdir(AUTOGRADER)
    try:
        app = NbGrader()
        app.config_file_paths.append([str(AUTOGRADER)])
        app.load_config_file()
    finally:
        os.chdir(here)
    return Validator(config=app.config)


def _check_output(output: str, case: Case) -> None:
    head = output.splitlines()[:FIRST_LINES]
    assert _words(case.message) in _words("\n".join(head)), (
        f"{case.message!r} not in the first {FIRST_LINES} lines:\n" + "\n".join(head)
    )
    assert "helpers/" not in output and "helpers\\" not in output, output
    assert not [line for line in output.splitlines() if line.endswith("...")], output
    failed = [line for line in head if line.endswith(" failed:")]
    assert failed and failed[0].startswith("test_"), head


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_validate_shows_the_course_s_message_first_and_whole(tmp_path, assignment) -> None:
    case = _mistake(assignment)
    path = _student_notebook(tmp_path, assignment, case)
    validator = _course_validator()
    validator.stream = io.StringIO()
    validator.validate_and_print(str(path))
    _check_output(validator.stream.getvalue(), case)


def test_the_validate_command_and_the_button_s_reply(tmp_path) -> None:
    """``nbgrader validate`` run in the course folder, and the reply the Validate button
    renders (its "source" above its "error"): the test's name, then the message."""
    case = _mistake("01_vector_sets")
    path = _student_notebook(tmp_path, "01_vector_sets", case)
    command = [sys.executable, "-m", "nbgrader", "validate", str(path)]
    result = subprocess.run(
        command, cwd=AUTOGRADER, capture_output=True, text=True, timeout=300, check=False
    )
    _check_output(result.stdout, case)
    reply = _course_validator().validate(str(path))
    failed = reply["failed"]
    assert failed and all(re.fullmatch(r"test_\w+", f["source"]) for f in failed), failed
    one_hot = next(f for f in failed if _words(case.message) in _words(f["raw_error"]))
    assert one_hot["raw_error"].startswith("AssertionError: "), one_hot["raw_error"][:200]


def _error_cell(ename: str, evalue: str, frames: list[str]) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("check_close(result, expected, 'f(x)')")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f", "points": 1}
    cell.outputs = [
        nbformat.v4.new_output(
            "error", ename=ename, evalue=evalue, traceback=[*frames, f"{ename}: {evalue}"]
        )
    ]
    return cell


CELL_FRAME = "Cell In[7], line 3\n----> 3 answer = f(x)"
HELPERS_FRAME = "File ~/course/helpers/checks.py:212, in check_close(actual, expected)\n  raise"
STUDENT_FRAME = "Cell In[4], line 2, in f(x)\n----> 2     return x @ w"


def test_a_long_message_comes_first_whole_and_without_helpers_frames() -> None:
    message = "f(x) is not right: " + "the softmax runs along axis 0 instead of 1; " * 6
    text = failure_text(_error_cell("AssertionError", message, [CELL_FRAME, HELPERS_FRAME]))
    assert text == f"AssertionError: {message}".strip()
    shown = wrap(text, 90, "    ")
    assert all(len(line) <= 90 for line in shown.splitlines())
    assert _words(shown) == _words(text)


def test_the_student_s_own_error_keeps_its_frames_but_helpers() -> None:
    cell = _error_cell("NameError", "name 'w' is not defined", [STUDENT_FRAME, HELPERS_FRAME])
    text = failure_text(cell)
    assert text.startswith("NameError: name 'w' is not defined\n\nWhere it happened:\n")
    assert "return x @ w" in text and "helpers/checks.py" not in text
    everything = failure_text(cell, show_cell=True)
    assert "helpers/checks.py" in everything and everything.endswith(cell.source)
