"""The self-study edition: ``self_study/<id>/<id>.ipynb``, for a learner without a grader.

``make release`` writes it (``python -m instructor.self_study``) after nbgrader has made the
class's ``notebooks/``; it is never edited by hand, and ``tests/instructor/test_self_study.py``
checks that making it again gives the committed files. Each notebook is the class's student
version (``notebooks/<id>/<id>.ipynb``: the same text, the same stubs, the same visible
tests), with:

- the badge opening this edition on Colab, and a cell saying what the edition adds;
- the set-up cell telling a learner on Colab, and only there, to save a copy in Drive
  (:func:`instructor.colab.self_study_setup_source`);
- a cell importing :mod:`helpers.self_study` after the imports cell;
- in each concept question's test cell, :func:`helpers.self_study.check_answer`: right or
  wrong and, for a wrong option, its explanation from ``course.toml``
  (``[notebook.question.wrong]``); the right answer and its reason are the hidden test's
  ``correct=`` and ``why=`` in ``solutions/``;
- after each exercise's test cells, :func:`helpers.self_study.further_tests`: the hidden
  tests of those cells (the grader's), and a cell with the call that reveals the reference
  solution, commented out: nothing is shown unless the learner asks;
- a last cell printing the learner's progress (:func:`helpers.self_study.progress_report`).

What these cells need travels encoded in them (:func:`helpers.self_study.encode`). The
class's ``notebooks/`` and what ``generate_assignment`` releases hold none of it
(``tests/course/test_self_study.py``). With ``self_study = false`` in ``course.toml`` (the
weeks of a term) the release removes ``self_study/`` instead.
"""

from __future__ import annotations

import argparse
import ast
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from helpers.self_study import encode
from instructor import anatomy, colab, registry
from instructor.paths import COURSE_ROOT, released_path, solution_path

__all__ = [
    "SelfStudyError",
    "build_edition",
    "edition",
    "exercise_payload",
    "question_payload",
    "self_study_path",
]

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
TAG = "self-study"
"""The tag of every cell this edition adds or replaces (with a second tag saying which)."""
LINE = 88
"""Characters of encoded data per source line."""


class SelfStudyError(ValueError):
    """The self-study edition cannot be made: the registry and the notebook disagree."""


def self_study_path(notebook_id: str, root: Path | None = None) -> Path:
    """``self_study/<id>/<id>.ipynb``."""
    return (root or COURSE_ROOT) / colab.SELF_STUDY_FOLDER / notebook_id / f"{notebook_id}.ipynb"


def _hidden_part(source: str) -> str:
    """A test cell's hidden tests, without their markers."""
    if HIDDEN_BEGIN not in source:
        return ""
    hidden = source.split(HIDDEN_BEGIN, 1)[1]
    return hidden.split(HIDDEN_END, 1)[0].strip("\n") + "\n"


def _hidden_check(source: str, name: str) -> dict[str, Any]:
    """The keywords of the ``check_choice`` or ``check_number`` call of a question's hidden
    tests, evaluated (``correct=6000**2``, ``2 * math.pi * 100``)."""
    for node in ast.walk(ast.parse(_hidden_part(source))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "check_choice",
            "check_number",
        ):
            found = {"kind": "choice" if node.func.id == "check_choice" else "number"}
            for keyword in node.keywords:
                expression = ast.Expression(keyword.value)
                found[keyword.arg] = eval(compile(expression, f"<{name}>", "eval"), {"math": math})
            return found
    raise SelfStudyError(f"test_{name} has no check_choice or check_number in its hidden tests")


def question_payload(question: registry.Question, test_source: str) -> dict[str, Any]:
    """What :func:`helpers.self_study.check_answer` needs: the hidden test's right answer
    and reason, the registry's explanations of the wrong answers.

    Raises:
        SelfStudyError: the registry and the hidden test disagree (another right letter,
            other options, a "wrong" number that the test accepts, a wrong option without
            an explanation).
    """
    check = _hidden_check(test_source, question.name)
    where = f"{question.name}: course.toml and the hidden test of solutions/"
    if check["kind"] != question.kind:
        raise SelfStudyError(f"{where} disagree on the kind ({question.kind} or {check['kind']})")
    missing = question.unexplained()
    if missing:
        raise SelfStudyError(
            f"{question.name}: course.toml explains no {', '.join(missing)} "
            "([notebook.question.wrong])"
        )
    why = check.get("why", "")
    if question.kind == "choice":
        correct = str(check.get("correct", "")).strip().lower()
        if (question.options, question.answer) != (check.get("options"), correct):
            raise SelfStudyError(
                f"{where} disagree: options {question.options!r} / {check.get('options')!r}, "
                f"answer {question.answer!r} / {correct!r}"
            )
        return {
            "kind": "choice",
            "options": question.options,
            "correct": correct,
            "why": why,
            "wrong": dict(question.wrong),
        }
    correct = check["correct"]
    tolerance = float(check.get("relative_tolerance", 0.0))
    for value in question.wrong:
        if math.isclose(float(value), correct, rel_tol=max(tolerance, 1e-3)):
            raise SelfStudyError(
                f"{question.name}: course.toml explains {value} as a wrong answer, but the "
                f"hidden test's correct={correct!r} accepts it"
            )
    return {
        "kind": "number",
        "correct": correct,
        "tolerance": tolerance,
        "why": why,
        "wrong": dict(question.wrong),
    }


def exercise_payload(solution: NotebookNode, name: str) -> dict[str, Any]:
    """What :func:`helpers.self_study.further_tests` and ``reveal`` need: each test cell of
    the exercise ``name`` as its visible and its hidden part (the hidden part is the further
    tests; the visible part runs first, as in the cell), and the reference solution."""
    tests = [
        {
            "id": anatomy.grade_id(cell),
            "visible": anatomy.visible_part(cell.source),
            "further": _hidden_part(cell.source),
        }
        for cell in anatomy.test_cells(solution)
        if anatomy.grade_id(cell) in anatomy.tests_of(name, [anatomy.grade_id(cell)])
    ]
    if not tests:
        raise SelfStudyError(f"{name} has no test cell test_{name}")
    sources = {anatomy.grade_id(c): c.source for c in anatomy.function_cells(solution)}
    return {"tests": tests, "solution": anatomy.strip_solution_markers(sources[name])}


def _call_source(function: str, name: str, payload: dict[str, Any]) -> str:
    """``function("name", "<data>")`` with the encoded data over several lines."""
    data = encode(payload)
    lines = [f'    "{data[i : i + LINE]}"' for i in range(0, len(data), LINE)]
    lines[-1] += ","
    return "\n".join([f"{function}(", f'    "{name}",', *lines, ")"])


def _new_cell(kind: str, what: str, source: str, cell_id: str) -> NotebookNode:
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = make(source=source, id=cell_id[:64])
    cell.metadata["tags"] = [TAG, f"{TAG}-{what}"]
    return cell


def _edition_note(notebook: registry.Notebook) -> str:
    return (
        "**Self-study edition.** This is the notebook for learning on your own, without a "
        "grader: the same text and exercises as the class's, and\n"
        "- each question's cell says whether your answer is right and, if not, why the "
        "option you chose is wrong;\n"
        "- after each exercise's visible tests, a cell runs its **further tests**: the hidden "
        "tests a grader runs (other sizes, dtypes, edge cases), with their messages;\n"
        '- stuck after trying? `reveal("name")` prints the reference solution of an exercise '
        "(nothing is shown unless you call it);\n"
        "- the last cell prints your progress: the exercises passing their visible and their "
        "further tests, the questions answered right."
    )


def edition(
    notebook: registry.Notebook,
    course: registry.Course,
    solution: NotebookNode,
    released: NotebookNode,
) -> NotebookNode:
    """The self-study edition of one notebook, from its instructor version ``solution`` and
    its class release ``released`` (what ``generate_assignment`` made of it)."""
    tests = {anatomy.grade_id(c): c.source for c in anatomy.test_cells(solution)}
    test_ids = list(tests)
    last_test = {
        anatomy.tests_of(exercise.name, test_ids)[-1]: exercise.name
        for exercise in notebook.exercises
        if anatomy.tests_of(exercise.name, test_ids)
    }
    questions = {f"test_{q.name}": q for q in notebook.concept_questions}
    first_question = (
        min(
            (i for i, c in enumerate(released.cells) if anatomy.grade_id(c) in questions),
            default=None,
        )
        if questions
        else None
    )
    cells: list[NotebookNode] = []
    for index, original in enumerate(released.cells):
        cell = nbformat.from_dict(original)
        test_id = anatomy.grade_id(cell) if anatomy.is_test_cell(cell) else None
        if anatomy.has_tag(cell, anatomy.BADGE_TAG):
            url = colab.colab_url(notebook.id, course)
            if url not in cell.source:
                raise SelfStudyError(f"notebooks/{notebook.id}: its badge does not open {url}")
            cell.source = cell.source.replace(url, colab.self_study_url(notebook.id, course))
            cells += [
                cell,
                _new_cell("markdown", "note", _edition_note(notebook), "self-study-note"),
            ]
            continue
        if anatomy.has_tag(cell, anatomy.SETUP_TAG):
            cell.source = colab.self_study_setup_source(notebook.colab_packages, course)
        if first_question is not None and index == first_question - 2:
            # before the first question's markdown cell (question, answer cell, test cell)
            cells.append(
                _new_cell(
                    "markdown",
                    "questions",
                    "**In this edition** the cell after each answer checks it: right, or why "
                    "the option you chose is wrong. Change your answer and run both cells "
                    "again as often as you like.",
                    "self-study-questions",
                )
            )
        if test_id in questions:
            question = questions[test_id]
            source = (
                "# Checks your answer: right, or why it is not (the answer is stored encoded, "
                "so that\n# you do not read it by accident).\n"
                + _call_source(
                    "check_answer", question.name, question_payload(question, tests[test_id])
                )
            )
            cells.append(_new_cell("code", "check", source, f"self-study-check-{question.name}"))
            continue
        cells.append(cell)
        if anatomy.has_tag(cell, anatomy.IMPORTS_TAG):
            source = (
                "# The self-study edition's checks: questions, further tests, reveal, "
                "progress.\n"
                "from helpers.self_study import (\n"
                "    check_answer, further_tests, progress_report, reveal\n"
                ")"
            )
            cells.append(_new_cell("code", "imports", source, "self-study-imports"))
        if test_id in last_test:
            name = last_test[test_id]
            further = (
                f"# Further tests of `{name}`: the hidden tests a grader runs after the "
                "visible ones,\n# stored encoded so that they do not give the exercise away.\n"
                + _call_source("further_tests", name, exercise_payload(solution, name))
            )
            reveal = (
                "# Stuck after trying? Delete the # of the next line and run this cell: it "
                f"prints the\n# reference solution of `{name}`.\n"
                f'# reveal("{name}")'
            )
            cells.append(_new_cell("code", "further", further, f"self-study-further-{name}"))
            cells.append(_new_cell("code", "reveal", reveal, f"self-study-reveal-{name}"))
    exercises = [exercise.name for exercise in notebook.exercises]
    asked = [question.name for question in notebook.concept_questions]
    cells.append(
        _new_cell(
            "markdown",
            "progress-heading",
            "## Your progress\n\nRun the cell below at any time: it runs every check again, "
            "on your current answers.",
            "self-study-progress-heading",
        )
    )
    cells.append(
        _new_cell(
            "code",
            "progress",
            f"progress_report(\n    {notebook.heading[2:]!r},\n    {exercises!r},\n"
            f"    {asked!r},\n)",
            "self-study-progress",
        )
    )
    made = nbformat.from_dict(released)
    made.cells = cells
    nbformat.validate(made)
    return made


def build_edition(root: Path | None = None, ids: list[str] | None = None) -> list[Path]:
    """Write the self-study edition of every notebook (or of ``ids``) and return the files
    written. With ``self_study = false`` in ``course.toml``, remove ``self_study/`` instead
    and return nothing."""
    root = root or COURSE_ROOT
    course = registry.load(root)
    folder = root / colab.SELF_STUDY_FOLDER
    if not course.self_study:
        if folder.exists():
            shutil.rmtree(folder)
        return []
    written = []
    for notebook in course.notebooks:
        if ids is not None and notebook.id not in ids:
            continue
        solution = nbformat.read(solution_path(notebook.id, root), as_version=4)
        released = nbformat.read(released_path(notebook.id, root), as_version=4)
        made = edition(notebook, course, solution, released)
        path = self_study_path(notebook.id, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(made, path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m instructor.self_study [ID ...]``: write the self-study edition (all
    notebooks by default)."""
    parser = argparse.ArgumentParser(prog="python -m instructor.self_study")
    parser.add_argument("ids", nargs="*", help="notebook ids (default: all)")
    args = parser.parse_args(argv)
    written = build_edition(ids=args.ids or None)
    if not written and not registry.load().self_study:
        print("self_study = false in course.toml: no self-study edition (self_study/ removed)")
    for path in written:
        print(f"wrote {path.relative_to(COURSE_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
