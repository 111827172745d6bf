"""The multiple-choice concept questions of a notebook, read from its instructor version.

A question is the markdown cell just before its answer cell (the nbgrader solution cell whose
``grade_id`` is the question's name, ``q_<what>``). Its options are the lines ``- (a) ...``,
each with its continuation lines (indented lines up to the next option or a blank line). The
right letter is the ``correct=`` of the ``check_choice(...)`` call in the hidden part of the
question's test cell ``test_q_<what>``, read with :mod:`ast` (never by executing the cell).

Used by ``tests/course/test_questions.py``; cells are found by their nbgrader metadata
(:mod:`instructor.anatomy`), never by their text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from nbformat import NotebookNode

from . import anatomy

__all__ = ["ChoiceQuestion", "choice_questions", "normalised_words", "right_letter"]

OPTION = re.compile(r"^\s*-\s+\(([a-z])\)\s+(.*)$")


@dataclass(frozen=True)
class ChoiceQuestion:
    """One multiple-choice question: its name, its text, its options and the right letter."""

    notebook: str
    name: str
    text: str
    """The question cell's markdown, options included."""
    options: dict[str, str]
    """letter -> the option's text, continuation lines joined with single spaces."""
    correct: str
    question_cell: int
    """The index of the question's markdown cell in the notebook."""


def parse_options(markdown: str) -> dict[str, str]:
    """``{letter: text}`` of the option lines ``- (a) ...`` of a question cell, each with the
    indented lines that continue it."""
    options: dict[str, str] = {}
    current: str | None = None
    for line in markdown.splitlines():
        match = OPTION.match(line)
        if match:
            current = match.group(1)
            options[current] = match.group(2).strip()
        elif current is not None and line.strip() and line[:1].isspace():
            options[current] += " " + line.strip()
        else:
            current = None
    return options


def right_letter(test_source: str) -> str | None:
    """The ``correct=`` of the ``check_choice`` call of a test cell (``None`` if there is
    none: a number question)."""
    for node in ast.walk(ast.parse(test_source)):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "check_choice"
        ):
            for keyword in node.keywords:
                if keyword.arg == "correct" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value).strip().lower()
    return None


def choice_questions(
    notebook_id: str, notebook: NotebookNode | None = None
) -> list[ChoiceQuestion]:
    """The multiple-choice questions of a notebook, in its order."""
    notebook = notebook if notebook is not None else anatomy.read_solution(notebook_id)
    tests = {anatomy.grade_id(cell): cell.source for cell in anatomy.test_cells(notebook)}
    questions = []
    for index, cell in enumerate(notebook.cells):
        if not anatomy.is_question_cell(cell):
            continue
        name = anatomy.grade_id(cell)
        correct = right_letter(tests.get(f"test_{name}", ""))
        if correct is None:
            continue
        before = index - 1
        while before >= 0 and notebook.cells[before].cell_type != "markdown":
            before -= 1
        text = notebook.cells[before].source
        questions.append(
            ChoiceQuestion(notebook_id, name, text, parse_options(text), correct, before)
        )
    return questions


def normalised_words(text: str) -> list[str]:
    """Lower-case words of ``text``, markdown, code marks and punctuation left out."""
    return re.findall(r"[a-z0-9]+", text.lower())
