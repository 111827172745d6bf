"""The rubrics of the written answers, as data: items with points and a note for the student.

A written answer's solution cell (markdown, nbgrader ``solution`` and ``grade``) holds its
rubric in its metadata, next to nbgrader's::

    "metadata": {
      "nbgrader": {"grade_id": "written_saw_rows", "points": 2, ...},
      "rubric": {"items": [
        {"id": "same_embedding", "label": "same token, same row", "points": 1,
         "criterion": "what the grader checks (the prose rubric's line)",
         "note": "what the student reads in the feedback when the item is applied"},
        ...
      ]}
    }

An item's ``points`` are positive (credit) or negative (a deduction); the positive items add
up to the question's points (nbgrader's ``points``, and ``course.toml``'s for the course), a
deduction takes at most that much, every item has a note, and there are at most nine items
(keys 1 to 9 on the grading page). The reference answer is the cell's own text, before its
rubric: ``**Reference answer.** ...``. The prose rubric that follows it in the cell
(``**Rubric (2 points).**`` and one line per item) is generated from the items
(``python -m instructor.rubrics sync``; ``check`` lists what differs), so the rubric is
written once. :class:`StripRubrics` removes the metadata from the student version
(``autograder/nbgrader_config.py`` adds it to ``generate_assignment``): students never get
the criteria, and nbgrader already replaces the cell's text.

Every mistake is a :class:`RubricError` naming the notebook, the question and the item.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from instructor import anatomy

__all__ = [
    "MAX_ITEMS",
    "METADATA_KEY",
    "Rubric",
    "RubricError",
    "RubricItem",
    "StripRubrics",
    "course_rubrics",
    "notebook_rubrics",
    "prose",
    "sync_notebook",
]

METADATA_KEY = "rubric"
"""The key of a written answer cell's metadata that holds its rubric."""
MAX_ITEMS = 9
"""Items a rubric holds at most: the grading page applies them with the keys 1 to 9."""
REFERENCE_HEAD = "**Reference answer.**"
RUBRIC_HEAD = re.compile(r"\n\n\*\*Rubric \([^)]*\)\.\*\*\n")
ITEM_ID = re.compile(r"[a-z][a-z0-9_]{0,39}")
ITEM_KEYS = {"id", "label", "points", "note", "criterion"}
LABEL_CHARS = 40
PROSE_WIDTH = 96
"""The width the prose rubric is wrapped to (the course's markdown cells)."""


class RubricError(ValueError):
    """A rubric is missing or malformed; the message names the notebook, question and item."""


@dataclass(frozen=True)
class RubricItem:
    """One rubric item.

    Attributes:
        id: a stable name (``snake_case``): what the grading store records, so that a
            label, a note or points can change without losing where the item was applied.
        label: a few words for the grader's key (``same token, same row``).
        points: credit (positive) or a deduction (negative).
        note: what the student reads in the feedback when the item is applied.
        criterion: what the grader checks, for the prose rubric and the grading page;
            never shown to the student (default: the note).
    """

    id: str
    label: str
    points: float
    note: str
    criterion: str

    @property
    def deduction(self) -> bool:
        return self.points < 0


@dataclass(frozen=True)
class Rubric:
    """The rubric of one written answer (``question``: its ``grade_id``)."""

    notebook: str
    question: str
    points: float
    reference: str
    """The reference answer: the cell's text before its prose rubric (for the grader)."""
    items: tuple[RubricItem, ...]

    def item(self, item_id: str) -> RubricItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise RubricError(
            f"{self.notebook}, {self.question}: no rubric item {item_id!r} "
            f"(its items: {', '.join(i.id for i in self.items)})"
        )

    def score(self, item_ids: tuple[str, ...] | list[str], adjustment: float = 0) -> float:
        """The points of ``item_ids`` applied, plus ``adjustment``, kept between 0 and the
        question's points (rounded to 1/100)."""
        total = sum(self.item(i).points for i in item_ids) + adjustment
        return round(min(max(total, 0.0), self.points), 2)


def points_text(points: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``, ``-1 point``."""
    number = f"{points:g}"
    return f"{number} point{'' if abs(points) == 1 else 's'}"


def _where(notebook: str, question: str, index: int | None = None, item: Any = None) -> str:
    where = f"{notebook}, {question}"
    if index is not None:
        name = item.get("id") if isinstance(item, dict) else None
        where += f", rubric item {index + 1}" + (f" ({name!r})" if name else "")
    return where


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _item(notebook: str, question: str, points: float, index: int, raw: Any) -> RubricItem:
    where = _where(notebook, question, index, raw)
    if not isinstance(raw, dict):
        raise RubricError(f"{where}: an item is a table {{id, label, points, note}}, not {raw!r}")
    unknown = sorted(set(raw) - ITEM_KEYS)
    if unknown:
        raise RubricError(
            f"{where}: unknown keys {unknown}; an item has {', '.join(sorted(ITEM_KEYS))}"
        )
    missing = [key for key in ("id", "label", "points", "note") if key not in raw]
    if missing:
        raise RubricError(f"{where}: no {' and no '.join(missing)}")
    if not isinstance(raw["id"], str) or not ITEM_ID.fullmatch(raw["id"]):
        raise RubricError(
            f"{where}: id {raw['id']!r} is not snake_case (a lower-case letter, then "
            "letters, digits or _, at most 40)"
        )
    if not _is_text(raw["label"]) or len(raw["label"]) > LABEL_CHARS or "\n" in raw["label"]:
        raise RubricError(f"{where}: the label is a few words on one line (1 to 40 characters)")
    value = raw["points"]
    if not _is_finite_number(value) or value == 0 or round(value * 4) != value * 4:
        raise RubricError(
            f"{where}: points = {value!r}; an item gives or takes a non-zero number of points "
            "in quarters (1, 0.5, -0.25)"
        )
    if value < 0 and -value > points:
        raise RubricError(
            f"{where}: a deduction of {points_text(-value)} is more than the question's "
            f"{points_text(points)}"
        )
    if not _is_text(raw["note"]):
        raise RubricError(f"{where}: the note (what the student reads) is empty")
    criterion = raw.get("criterion", raw["note"])
    if not _is_text(criterion):
        raise RubricError(f"{where}: the criterion is empty (leave it out to use the note)")
    return RubricItem(
        id=raw["id"],
        label=raw["label"].strip(),
        points=float(value),
        note=raw["note"].strip(),
        criterion=" ".join(criterion.split()),
    )


def reference_answer(source: str) -> str:
    """The text of a written answer's solution cell before its prose rubric."""
    return RUBRIC_HEAD.split(source, maxsplit=1)[0].strip()


def parse_cell(cell: NotebookNode, notebook: str, points: float | None = None) -> Rubric:
    """The rubric of the written answer ``cell`` of ``notebook``, checked; ``points`` is what
    the question is worth where another source says it too (``course.toml``)."""
    meta = cell.metadata.get("nbgrader", {})
    question = meta.get("grade_id") or "?"
    worth = meta.get("points")
    if not anatomy.is_written_cell(cell) or not _is_finite_number(worth):
        raise RubricError(f"{notebook}, {question}: not a written answer (markdown, graded)")
    if points is not None and worth != points:
        raise RubricError(
            f"{notebook}, {question}: the cell is worth {points_text(worth)} (nbgrader's "
            f"points), course.toml says {points_text(points)}"
        )
    raw = cell.metadata.get(METADATA_KEY)
    if raw is None:
        raise RubricError(
            f'{notebook}, {question}: no rubric: add "{METADATA_KEY}": {{"items": [...]}} to '
            "the answer cell's metadata (see instructor/rubrics.py)"
        )
    if not isinstance(raw, dict) or set(raw) != {"items"} or not isinstance(raw["items"], list):
        raise RubricError(f'{notebook}, {question}: the rubric is {{"items": [...]}}, not {raw!r}')
    if not 1 <= len(raw["items"]) <= MAX_ITEMS:
        raise RubricError(
            f"{notebook}, {question}: the rubric has {len(raw['items'])} items; it has 1 to "
            f"{MAX_ITEMS} (the grading page's keys 1 to 9)"
        )
    items = tuple(_item(notebook, question, worth, i, x) for i, x in enumerate(raw["items"]))
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise RubricError(f"{notebook}, {question}: two rubric items have the id {item.id!r}")
        seen.add(item.id)
    credit = sum(item.points for item in items if not item.deduction)
    if not math.isclose(credit, worth):
        raise RubricError(
            f"{notebook}, {question}: the rubric's items give {points_text(credit)} "
            f"({', '.join(f'{i.id} {i.points:+g}' for i in items if not i.deduction)}); the "
            f"question is worth {points_text(worth)}: make its positive items add up to that"
        )
    return Rubric(notebook, question, float(worth), reference_answer(cell.source), items)


def notebook_rubrics(notebook: NotebookNode, name: str) -> dict[str, Rubric]:
    """grade_id -> rubric of every written answer of ``notebook`` (its id: ``name``)."""
    return {anatomy.grade_id(c): parse_cell(c, name) for c in anatomy.written_cells(notebook)}


def course_rubrics(solutions: Path | None = None) -> dict[str, Rubric]:
    """grade_id -> rubric of every written answer ``course.toml`` lists, read from
    ``solutions/`` and checked against the registry's points."""
    from instructor import registry
    from instructor.paths import SOLUTIONS

    folder = solutions or SOLUTIONS
    rubrics: dict[str, Rubric] = {}
    for entry in registry.load().notebooks:
        if not entry.written_answers:
            continue
        notebook = nbformat.read(folder / entry.id / f"{entry.id}.ipynb", as_version=4)
        cells = {anatomy.grade_id(c): c for c in anatomy.written_cells(notebook)}
        for question in entry.written_answers:
            if question.name not in cells:
                raise RubricError(f"{entry.id}, {question.name}: no written answer cell")
            rubrics[question.name] = parse_cell(cells[question.name], entry.id, question.points)
    return rubrics


def prose(rubric: Rubric) -> str:
    """The prose rubric of the solution cell: ``**Rubric (2 points).**``, then one line per
    item, ``- 1 point: <criterion>`` (wrapped as the course's markdown)."""
    lines = [f"**Rubric ({points_text(rubric.points)}).**"]
    for item in rubric.items:
        line = f"- {points_text(item.points)}: {item.criterion}"
        lines.append(
            textwrap.fill(
                line,
                PROSE_WIDTH,
                subsequent_indent="  ",
                break_on_hyphens=False,
                break_long_words=False,
            )
        )
    return "\n".join(lines)


def cell_source(cell: NotebookNode, rubric: Rubric) -> str:
    """The cell's text with its prose rubric generated from ``rubric``."""
    return f"{reference_answer(cell.source)}\n\n{prose(rubric)}"


def sync_notebook(notebook: NotebookNode, name: str, *, write: bool) -> list[str]:
    """The written answers of ``notebook`` whose prose rubric differs from their items;
    with ``write`` their text is rewritten (in place)."""
    differing = []
    for question, rubric in notebook_rubrics(notebook, name).items():
        cell = next(c for c in notebook.cells if anatomy.grade_id(c) == question)
        if not cell.source.startswith(REFERENCE_HEAD):
            raise RubricError(f"{name}, {question}: the cell starts with {REFERENCE_HEAD!r}")
        wanted = cell_source(cell, rubric)
        if cell.source != wanted:
            differing.append(f"{name}, {question}")
            if write:
                cell.source = wanted
    return differing


class StripRubrics(Preprocessor):
    """Removes every cell's rubric metadata: for nbgrader's ``generate_assignment``, so that
    the student version holds no criterion, note or reference."""

    enabled = Bool(True).tag(config=True)  # nbconvert skips a preprocessor not enabled

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int) -> Any:
        cell.metadata.pop(METADATA_KEY, None)
        return cell, resources


def main(argv: list[str] | None = None) -> int:
    """``python -m instructor.rubrics check|sync [NB ...]``: check every rubric of
    ``solutions/`` (course.toml's points), and list (``check``) or rewrite (``sync``) the
    prose rubrics that differ from their items."""
    from instructor import registry
    from instructor.paths import solution_path

    parser = argparse.ArgumentParser(prog="python -m instructor.rubrics")
    parser.add_argument("what", choices=["check", "sync"])
    parser.add_argument("notebooks", nargs="*", help="notebook ids (default: all)")
    args = parser.parse_args(argv)
    try:
        course_rubrics()
        differing = []
        for notebook_id in args.notebooks or registry.load().ids:
            path = solution_path(notebook_id)
            notebook = nbformat.read(path, as_version=4)
            changed = sync_notebook(notebook, notebook_id, write=args.what == "sync")
            if changed and args.what == "sync":
                nbformat.write(notebook, path)
            differing += changed
    except RubricError as error:
        print(f"rubric error: {error}", file=sys.stderr)
        return 1
    verb = "rewritten" if args.what == "sync" else "differ from their items (run sync)"
    for name in differing:
        print(f"prose rubric {verb}: {name}")
    return 1 if differing and args.what == "check" else 0


if __name__ == "__main__":
    sys.exit(main())
