"""The anatomy of a course notebook, in one place.

A notebook's parts are found by their metadata, never by searching their text:

- the **badge cell** and the **set-up cell** are the first two cells (tags ``badge`` and
  ``colab-setup``);
- the **imports cell** carries the tag ``imports`` (it calls ``start_notebook()``);
- a **solution cell** has ``metadata.nbgrader.solution``. There are three kinds:

  - a **function cell** (code) defines a graded function; its ``grade_id`` is the
    function's name;
  - a **question cell** (code) answers a concept question of the "Check your understanding"
    section with one assignment, ``q_<what> = "b"``; its ``grade_id`` is ``q_<what>``;
  - a **written-answer cell** (markdown, also ``grade``: graded by hand) holds the reference
    answer and the rubric in ``solutions/`` and "YOUR ANSWER HERE" in the student version;
    its ``grade_id`` is ``written_<what>``;

- a **test cell** has ``metadata.nbgrader.grade`` (and is code, not a solution cell); its
  ``grade_id`` is ``test_<name>`` or ``test_<name>_<k>``, ``<name>`` a function or a
  question (``test_q_<what>``).

Everything that reads notebooks (the scratch course, the class grader, the benchmarks,
the tests) uses these functions.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import nbformat
from nbformat import NotebookNode

from instructor.paths import released_path, solution_path

__all__ = [
    "BADGE_TAG",
    "IMPORTS_TAG",
    "SETUP_TAG",
    "SOLUTION_MARKERS",
    "complete",
    "function_of_test",
    "grade_id",
    "has_tag",
    "function_cells",
    "imports_cell",
    "imports_source",
    "is_function_cell",
    "is_question_cell",
    "is_solution_cell",
    "is_test_cell",
    "is_written_cell",
    "question_cells",
    "read_released",
    "read_solution",
    "reference_functions",
    "solution_cells",
    "solution_sources",
    "strip_solution_markers",
    "test_cells",
    "tests_of",
    "visible_part",
    "written_cells",
]

BADGE_TAG = "badge"
SETUP_TAG = "colab-setup"
IMPORTS_TAG = "imports"

QUESTION_PREFIX = "q_"
WRITTEN_PREFIX = "written_"
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_TESTS_MARKER = "### BEGIN HIDDEN TESTS"
_TEST_ID = re.compile(r"test_(?P<function>.+?)(?:_(?P<part>\d+))?")


def read_solution(notebook_id: str) -> NotebookNode:
    """The instructor notebook ``solutions/<id>/<id>.ipynb``."""
    return nbformat.read(solution_path(notebook_id), as_version=4)


def read_released(notebook_id: str) -> NotebookNode:
    """The student version ``notebooks/<id>/<id>.ipynb``."""
    return nbformat.read(released_path(notebook_id), as_version=4)


def _nbgrader(cell: NotebookNode) -> dict[str, Any]:
    return cell.metadata.get("nbgrader", {})


def grade_id(cell: NotebookNode) -> str | None:
    return _nbgrader(cell).get("grade_id")


def has_tag(cell: NotebookNode, tag: str) -> bool:
    return tag in cell.metadata.get("tags", ())


def is_solution_cell(cell: NotebookNode) -> bool:
    """Any cell the student answers in: a function, a question or a written answer."""
    return bool(_nbgrader(cell).get("solution"))


def is_question_cell(cell: NotebookNode) -> bool:
    """A concept question's answer: a code solution cell whose ``grade_id`` is ``q_...``."""
    return (
        cell.cell_type == "code"
        and is_solution_cell(cell)
        and (grade_id(cell) or "").startswith(QUESTION_PREFIX)
    )


def is_written_cell(cell: NotebookNode) -> bool:
    """A written answer, graded by hand: a markdown cell that is a solution and graded."""
    meta = _nbgrader(cell)
    return cell.cell_type == "markdown" and bool(meta.get("solution")) and bool(meta.get("grade"))


def is_function_cell(cell: NotebookNode) -> bool:
    """A graded function's solution cell (code; not a concept question)."""
    return cell.cell_type == "code" and is_solution_cell(cell) and not is_question_cell(cell)


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test cell: graded code cell that is not a solution cell."""
    meta = _nbgrader(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def solution_cells(notebook: NotebookNode) -> list[NotebookNode]:
    """Every cell the student answers in: functions, questions and written answers."""
    return [cell for cell in notebook.cells if is_solution_cell(cell)]


def function_cells(notebook: NotebookNode) -> list[NotebookNode]:
    """The solution cells of the graded functions (questions and written answers left out)."""
    return [cell for cell in notebook.cells if is_function_cell(cell)]


def question_cells(notebook: NotebookNode) -> list[NotebookNode]:
    """The answer cells of the concept questions (``q_...``)."""
    return [cell for cell in notebook.cells if is_question_cell(cell)]


def written_cells(notebook: NotebookNode) -> list[NotebookNode]:
    """The written answers (markdown, graded by hand)."""
    return [cell for cell in notebook.cells if is_written_cell(cell)]


def test_cells(notebook: NotebookNode) -> list[NotebookNode]:
    return [cell for cell in notebook.cells if is_test_cell(cell)]


def function_of_test(test_id: str) -> str | None:
    """The graded function or question a test cell's ``grade_id`` names (``test_f_2`` ->
    ``f``, ``test_q_saw_rows`` -> ``q_saw_rows``)."""
    match = _TEST_ID.fullmatch(test_id)
    return match.group("function") if match else None


def tests_of(function: str, test_ids: list[str]) -> list[str]:
    """The ids among ``test_ids`` that grade ``function``: ``test_<function>`` and
    ``test_<function>_<k>`` (not ``test_<function>_other``)."""
    own = f"test_{function}"
    return [
        name
        for name in test_ids
        if name == own or (name.startswith(own + "_") and name[len(own) + 1 :].isdigit())
    ]


def visible_part(test_source: str) -> str:
    """A test cell's source up to its hidden tests."""
    return test_source.split(HIDDEN_TESTS_MARKER)[0]


def visible_pass_message(test_source: str) -> str:
    """What a test cell prints once its visible tests have passed: the text of the
    ``print("...")`` that ends its visible part. The hidden tests run after it, so a cell
    that printed it and then failed was failed by its hidden tests.

    Raises:
        ValueError: if the visible part does not end with a print of one string literal.
    """
    body = ast.parse(visible_part(test_source)).body
    last = body[-1].value if body and isinstance(body[-1], ast.Expr) else None
    if (
        isinstance(last, ast.Call)
        and isinstance(last.func, ast.Name)
        and last.func.id == "print"
        and len(last.args) == 1
        and not last.keywords
        and isinstance(last.args[0], ast.Constant)
        and isinstance(last.args[0].value, str)
    ):
        return last.args[0].value
    raise ValueError(
        'a test cell\'s visible part must end with print("<function>: visible tests passed"), '
        f"a string literal; this one ends with: {ast.unparse(body[-1]) if body else 'nothing'}"
    )


def imports_cell(notebook: NotebookNode) -> NotebookNode:
    """The cell tagged ``imports``: the notebook's imports and ``start_notebook()``."""
    tagged = [cell for cell in notebook.cells if has_tag(cell, IMPORTS_TAG)]
    if len(tagged) != 1:
        raise ValueError(
            f"a notebook needs exactly one code cell tagged {IMPORTS_TAG!r}; found {len(tagged)}"
        )
    return tagged[0]


def imports_source(notebook: NotebookNode) -> str:
    """The imports cell as plain Python (IPython magics such as ``%matplotlib`` dropped)."""
    return "\n".join(
        line
        for line in imports_cell(notebook).source.splitlines()
        if not line.lstrip().startswith("%")
    )


def strip_solution_markers(source: str) -> str:
    """A solution cell's source as a student who solved it would hand it in."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def solution_sources(notebook: NotebookNode) -> dict[str, str]:
    """grade_id -> source of every solution cell of an instructor notebook, without the
    solution markers (as a student who solved it hands it in): the graded functions'
    definitions, the questions' assignments (``q_saw_rows = "b"``) and the written answers'
    markdown (reference answer and rubric). ``function_cells`` picks the functions alone."""
    return {
        grade_id(cell): strip_solution_markers(cell.source) for cell in solution_cells(notebook)
    }


def complete(
    released: NotebookNode,
    answers: dict[str, str],
    *,
    demos: bool = True,
) -> NotebookNode:
    """A copy of a student notebook with its solution cells filled from ``answers``
    (grade_id -> source). Every graded function must have an answer; a question or a
    written answer without one stays as released (unanswered, as a student may leave it).

    With ``demos=False`` every ungraded, unlocked code cell except the imports cell is
    emptied: a student may edit them freely, the test cells never depend on them, and the
    submission is much faster to grade.
    """
    notebook = nbformat.from_dict(released)
    missing = sorted({grade_id(c) for c in function_cells(notebook)} - set(answers))
    if missing:
        raise KeyError(f"no answer for the solution cells {missing}")
    for cell in notebook.cells:
        meta = _nbgrader(cell)
        if meta.get("solution"):
            cell.source = answers.get(meta["grade_id"], cell.source)
        elif (
            not demos
            and cell.cell_type == "code"
            and not has_tag(cell, IMPORTS_TAG)
            and not meta.get("grade")
            and not meta.get("locked")
        ):
            cell.source = ""
    return notebook


def reference_functions(notebook_id: str, names: tuple[str, ...]) -> dict[str, Any]:
    """The instructor's solutions of ``names`` (graded functions), run from ``solutions/``
    (never copied): the imports cell first, so that the solutions see the names they
    expect."""
    notebook = read_solution(notebook_id)
    sources = {
        grade_id(cell): strip_solution_markers(cell.source) for cell in function_cells(notebook)
    }
    unknown = sorted(set(names) - set(sources))
    if unknown:
        raise KeyError(f"{notebook_id} has no graded function {unknown} (known: {sorted(sources)})")
    namespace: dict[str, Any] = {}
    exec(compile(imports_source(notebook), f"{notebook_id}:imports", "exec"), namespace)  # noqa: S102
    for name in names:
        exec(compile(sources[name], f"{notebook_id}:{name}", "exec"), namespace)  # noqa: S102
    return {name: namespace[name] for name in names}
