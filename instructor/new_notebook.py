"""A new notebook from the template (``make new NB=10_topic TITLE="Title"``).

    python -m instructor.new_notebook 10_topic --title "Title" [--minutes 30]

writes, in the course named by ``instructor.paths`` (``SELF_ATTENTION_COURSE`` or this
checkout):

- ``solutions/<id>/<id>.ipynb``: ``instructor/templates/notebook.ipynb`` (the skeleton of
  CONTRIBUTING.md with example exercises, ``mean_vector``, ``center`` and ``squared_norms``,
  and a "Check your understanding" section with two example concept questions and an example
  written answer: 10 points, a notebook's worth) with its badge cell (Colab badge,
  ``# NN · Title``, the time) and its Colab set-up cell filled in, and fresh cell ids;
- a ``[[notebook]]`` entry in ``course.toml`` with the template's example exercises and
  questions, inserted as text in id order (the file's comments stay as they are);
- ``tests/grading_cases/<id>.py``: wrong and right answers to the example exercises and
  concept questions, from ``instructor/templates/grading_cases.py``.

It refuses an id that is malformed, or that the course already has (in ``course.toml``,
``solutions/``, ``notebooks/`` or ``tests/grading_cases/``), or whose number another notebook
uses, or while another notebook still holds the template's example questions (a question's
name is unique in the course); nothing is written then. ``make new`` goes on to execute the
notebook, release the course and regenerate the README's table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from instructor import anatomy, registry
from instructor.colab import badge_markdown, colab_setup_source
from instructor.paths import COURSE_ROOT, released_path, solution_path

__all__ = [
    "ID_PATTERN",
    "TEMPLATES",
    "Created",
    "NewNotebookError",
    "cases_path",
    "check_new_id",
    "create",
    "example_exercises",
    "example_questions",
    "notebook_from_template",
    "registry_entry",
    "with_entry",
]

TEMPLATES = Path(__file__).resolve().parent / "templates"
NOTEBOOK_TEMPLATE = TEMPLATES / "notebook.ipynb"
CASES_TEMPLATE = TEMPLATES / "grading_cases.py"
ID_PATTERN = re.compile(r"(?P<number>\d{2})_[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
"""Two digits, an underscore, a topic in lower-case snake_case: ``10_transformer``."""
_ENTRY_ID = re.compile(r'\s*id\s*=\s*"(?P<id>[^"]*)"')


class NewNotebookError(ValueError):
    """The notebook cannot be created as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Created:
    """What ``create`` wrote."""

    notebook: Path
    cases: Path
    registry: Path


def cases_path(notebook_id: str, root: Path | None = None) -> Path:
    return (root or COURSE_ROOT) / "tests" / "grading_cases" / f"{notebook_id}.py"


def check_new_id(notebook_id: str, course: registry.Course, root: Path | None = None) -> None:
    """Raise ``NewNotebookError`` unless ``notebook_id`` is well formed and new."""
    match = ID_PATTERN.fullmatch(notebook_id)
    if not match:
        raise NewNotebookError(
            f"{notebook_id!r} is not a notebook id: write two digits, an underscore and the "
            "topic in lower-case snake_case, e.g. 10_transformer"
        )
    if notebook_id in course.ids:
        raise NewNotebookError(
            f"{notebook_id} exists already: course.toml lists it. Choose another id, or edit "
            f"solutions/{notebook_id}/{notebook_id}.ipynb"
        )
    taken = [n.id for n in course.notebooks if n.number == match["number"]]
    if taken:
        raise NewNotebookError(
            f"the number {match['number']} is taken by {taken[0]}: every notebook has its own "
            "number (its title reads '# NN · Title'); choose another"
        )
    root = root or COURSE_ROOT
    for path in (
        solution_path(notebook_id, root).parent,
        released_path(notebook_id, root).parent,
        cases_path(notebook_id, root),
    ):
        if path.exists():
            raise NewNotebookError(
                f"{notebook_id} exists already: {path.relative_to(root)} is there, although "
                "course.toml does not list it. Remove it, or register it by hand"
            )


def check_title(title: str) -> str:
    title = title.strip()
    if not title:
        raise NewNotebookError('give the notebook a title: make new NB=10_topic TITLE="Title"')
    if "\n" in title or "\r" in title:
        raise NewNotebookError("the title is one line")
    return title


def example_exercises(template: NotebookNode) -> list[registry.Exercise]:
    """The graded functions of the template, as ``course.toml`` describes them: the name
    of each solution cell, the points from its test cells."""
    tests = {anatomy.grade_id(cell): cell for cell in anatomy.test_cells(template)}
    exercises = []
    for cell in anatomy.function_cells(template):
        name = anatomy.grade_id(cell)
        cells = tuple(
            int(tests[cell_id].metadata.nbgrader["points"])
            for cell_id in anatomy.tests_of(name, list(tests))
        )
        exercises.append(registry.Exercise(name, cells))
    return exercises


EXAMPLE_WRONG = {
    "q_example_mean_order": {
        "a": "Shuffling the rows reorders the vectors, not the entries within each vector: "
        "the mean adds the same vectors, only in another order, so each entry stays where "
        "it was.",
        "c": "A sum does not depend on the order of its terms, so the mean of a set is the "
        "same whatever the order of its vectors; sorting them first changes nothing either.",
    },
    "q_example_mean_size": {
        "64": "64 is the mean of one set. The batch holds 32 sets, and the mean is taken "
        "over each set's vectors, not over the batch: one vector of 64 per set.",
    },
}
"""What the self-study edition says to the template's example questions' wrong answers
(``course.toml``'s ``[notebook.question.wrong]``): a new notebook's entry carries them
until its own questions replace the examples."""


def example_questions(template: NotebookNode) -> list[registry.Question]:
    """The questions of the template's "Check your understanding" section, as
    ``course.toml`` describes them, in the notebook's order: a written answer from its
    markdown answer cell, a concept question from its answer cell and its test cell
    (``check_number`` for a number question, else a choice question, with its options and
    right letter), its wrong answers explained (:data:`EXAMPLE_WRONG`)."""
    from instructor import questions as choice

    tests = {anatomy.grade_id(cell): cell for cell in anatomy.test_cells(template)}
    letters = {q.name: q for q in choice.choice_questions("template", template)}
    questions = []
    for cell in template.cells:
        name = anatomy.grade_id(cell)
        if anatomy.is_written_cell(cell):
            kind = "written"
        elif anatomy.is_question_cell(cell):
            kind = "number" if "check_number(" in tests[f"test_{name}"].source else "choice"
        else:
            continue
        options = "".join(letters[name].options) if name in letters else None
        answer = letters[name].correct if name in letters else None
        questions.append(
            registry.Question(
                name,
                kind,
                registry.QUESTION_RULES[kind][1],
                options,
                answer,
                EXAMPLE_WRONG.get(name, {}),
            )
        )
    return questions


def registry_entry(
    notebook_id: str,
    title: str,
    minutes: int,
    exercises: list[registry.Exercise],
    questions: list[registry.Question] = (),
) -> str:
    """The ``[[notebook]]`` entry of ``course.toml``, as text."""

    def string(value: str) -> str:  # a TOML basic string (JSON's escapes are TOML's)
        return json.dumps(value, ensure_ascii=False)

    lines = [
        "[[notebook]]",
        f"id = {string(notebook_id)}",
        f"title = {string(title)}",
        f"minutes = {minutes}",
    ]
    for exercise in exercises:
        lines += [
            "",
            "[[notebook.exercise]]",
            f"name = {string(exercise.name)}",
            f"points = {_points(exercise)}",
            f"visible_cases = {_visible_cases(exercise)}",
        ]
    for question in questions:
        lines += [
            "",
            "[[notebook.question]]",
            f"name = {string(question.name)}",
            f"kind = {string(question.kind)}",
            f"points = {question.points}",
        ]
        if question.options is not None:
            lines.append(f"options = {string(question.options)}")
        if question.answer is not None:
            lines.append(f"answer = {string(question.answer)}")
        if question.wrong:
            lines += ["", "[notebook.question.wrong]"]
            lines += [f"{string(key)} = {string(text)}" for key, text in question.wrong.items()]
    return "\n".join(lines) + "\n"


def _visible_cases(exercise: registry.Exercise) -> str:
    """``visible_cases`` of course.toml: inline tables, ``[]`` for none (a new exercise
    declares them, even as none: ``tests/course/test_visible_cases.py`` refuses a missing
    list)."""
    cases = [
        f"{{ case = {json.dumps(c.case, ensure_ascii=False)}, "
        f"when = {json.dumps(c.when, ensure_ascii=False)} }}"
        for c in exercise.visible_cases or ()
    ]
    return "[" + ", ".join(cases) + "]"


def _points(exercise: registry.Exercise) -> str:
    """``points`` of course.toml: a number for one test cell, else one per test cell."""
    cells = exercise.cell_points
    return str(cells[0]) if len(cells) == 1 else f"[{', '.join(map(str, cells))}]"


def with_entry(text: str, notebook_id: str, entry: str) -> str:
    """``course.toml``'s ``text`` with ``entry`` inserted before the first notebook whose id
    sorts after ``notebook_id`` (and the comment lines right above it), or at the end."""
    lines = text.splitlines(keepends=True)
    headers = [i for i, line in enumerate(lines) if line.strip() == "[[notebook]]"]
    for header, following in zip(headers, [*headers[1:], len(lines)], strict=True):
        found = [_ENTRY_ID.match(line) for line in lines[header:following]]
        ids = [match["id"] for match in found if match]
        if ids and ids[0] > notebook_id:
            start = header
            while start > 0 and lines[start - 1].lstrip().startswith("#"):
                start -= 1
            return "".join(lines[:start]) + entry + "\n" + "".join(lines[start:])
    if text and not text.endswith("\n"):
        text += "\n"
    return text + "\n" + entry


def notebook_from_template(
    notebook_id: str, title: str, minutes: int, template: NotebookNode
) -> NotebookNode:
    """The template with its badge cell and set-up cell filled in and fresh cell ids."""
    notebook = nbformat.from_dict(template)
    number = ID_PATTERN.fullmatch(notebook_id)["number"]
    badge, setup = notebook.cells[0], notebook.cells[1]
    assert anatomy.has_tag(badge, anatomy.BADGE_TAG) and anatomy.has_tag(setup, anatomy.SETUP_TAG)
    badge.source = (
        badge.source.replace("{{BADGE}}", badge_markdown(notebook_id))
        .replace("{{HEADING}}", f"# {number} · {title}")
        .replace("{{MINUTES}}", str(minutes))
    )
    setup.source = colab_setup_source(())
    for cell in notebook.cells:
        cell.id = uuid.uuid4().hex[:8]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.validate(notebook)
    return notebook


def create(notebook_id: str, title: str, minutes: int = 30) -> Created:
    """Write the new notebook, its registry entry and its grading cases into the course
    (``instructor.paths.COURSE_ROOT``; see the module's docstring); raise
    ``NewNotebookError``, having written nothing, if it cannot."""
    root = COURSE_ROOT
    title = check_title(title)
    if not 1 <= minutes <= 240:
        raise NewNotebookError(f"--minutes {minutes}: a notebook takes 1 to 240 minutes")
    toml_path = registry.registry_path(root)
    text = toml_path.read_text(encoding="utf-8")
    course = registry.parse(text)
    check_new_id(notebook_id, course, root)

    template = nbformat.read(NOTEBOOK_TEMPLATE, as_version=4)
    notebook = notebook_from_template(notebook_id, title, minutes, template)
    questions = example_questions(template)
    holders = sorted(
        {
            n.id
            for n in course.notebooks
            for q in n.questions
            if q.name in {e.name for e in questions}
        }
    )
    if holders:
        raise NewNotebookError(
            f"{', '.join(holders)} still holds the template's example questions "
            f"({', '.join(q.name for q in questions)}), and a question's name is unique in the "
            "course: replace them with that notebook's own questions first"
        )
    entry = registry_entry(notebook_id, title, minutes, example_exercises(template), questions)
    new_text = with_entry(text, notebook_id, entry)
    registry.parse(new_text).notebook(notebook_id)  # still a valid registry, in order
    cases = CASES_TEMPLATE.read_text(encoding="utf-8").replace("__NOTEBOOK__", notebook_id)

    notebook_path = solution_path(notebook_id, root)
    notebook_path.parent.mkdir(parents=True)
    nbformat.write(notebook, notebook_path)
    cases_file = cases_path(notebook_id, root)
    cases_file.parent.mkdir(parents=True, exist_ok=True)
    cases_file.write_text(cases, encoding="utf-8")
    toml_path.write_text(new_text, encoding="utf-8")
    return Created(notebook_path, cases_file, toml_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m instructor.new_notebook",
        description="A new notebook from the template: solution notebook, course.toml entry "
        "and grading-cases stub (`make new` also executes, releases and updates the README).",
    )
    parser.add_argument("id", help="the notebook id, NN_topic (e.g. 10_transformer)")
    parser.add_argument("--title", required=True, help="the title, as in '# NN · Title'")
    parser.add_argument("--minutes", type=int, default=30, help="estimated time (default 30)")
    args = parser.parse_args(argv)
    try:
        created = create(args.id, args.title, args.minutes)
    except NewNotebookError as error:
        print(f"make new: {error}", file=sys.stderr)
        return 2
    root = COURSE_ROOT
    for what, path in (
        ("the notebook", created.notebook),
        ("its grading cases", created.cases),
        ("its [[notebook]] entry", created.registry),
    ):
        print(f"wrote {what}: {path.relative_to(root)}")
    print(
        f"next: make execute NB={args.id}, make release, make readme (`make new` runs them); "
        "then replace the example exercises and questions with the notebook's own"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
