"""The mutants of every graded function and class, generated from its reference solution.

``mutants(assignment)`` reads ``solutions/<assignment>`` (the solution cells of the graded
functions the registry lists), runs every operator of :mod:`instructor.mutation.operators`
and the forbidden-call answers of :mod:`instructor.mutation.forbidden` over each, and keeps
each distinct program once: a change that parses to the reference, or to a mutant already
made, is dropped. The result is deterministic: the same solutions give the same mutants,
with the same keys, in the same order.

A mutant's :attr:`Mutant.key` names it without line numbers (``attention: dim=-1 -> dim=-2``),
so that the registry of equivalent mutants (``mutants.toml``) survives edits elsewhere in
the solution.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache

from instructor import anatomy, registry
from instructor.mutation.forbidden import FORBIDDEN
from instructor.mutation.habits import HABITS
from instructor.mutation.mistakes import Mistake
from instructor.mutation.operators import STRUCTURE
from instructor.mutation.rewrites import VALUES
from instructor.mutation.slips import SLIPS
from instructor.mutation.source import Edit, Solution

__all__ = ["Mutant", "mutants", "solutions"]

OPERATORS = VALUES[:1] + STRUCTURE + VALUES[1:] + SLIPS + HABITS
"""Every operator, in the order mutants are made (dtypes first; the slips and the habits
last, so that the keys of the mutants made before them stay as they were)."""
MAX_SHOWN = 70
"""The most characters of a change's old or new text a key shows."""


@dataclass(frozen=True)
class Mutant:
    """A wrong answer made from the reference solution by one change.

    Attributes:
        assignment: the notebook.
        function: the graded function or class (its solution cell's ``grade_id``).
        mistake: the mistake it stands for.
        old: the text of the solution it changes (empty for an inserted statement).
        new: what that text becomes.
        line: the line of the change in the solution cell (markers taken out), for reports.
        source: the whole solution cell, changed.
        key: ``function: old -> new`` (one line; ``#2``... where a change repeats).
    """

    assignment: str
    function: str
    mistake: Mistake
    old: str
    new: str
    line: int
    source: str
    key: str


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= MAX_SHOWN else one_line[: MAX_SHOWN - 3] + "..."


def _in_context(before: str, after: str, edit: Edit) -> str:
    """The lines a change touches, before and after it (a window around the change where
    they are long), for a key a reviewer can read without the line number."""
    first = before.rfind("\n", 0, edit.start) + 1
    last = before.find("\n", edit.end)
    old = before[first:last]
    new = after[first : last + len(after) - len(before)]
    if not edit.end > edit.start:
        old = "(new line)"
        new = edit.new
    column = edit.start - first
    if len(old) > MAX_SHOWN or len(new) > MAX_SHOWN:
        skip = max(0, min(column - 20, len(old) - MAX_SHOWN))
        old, new = old[skip:], new[skip:]
    return f"{_short(old)} -> {_short(new)}"


@cache
def solutions(assignment: str) -> dict[str, Solution]:
    """grade_id -> the solution of each graded function or class, in the registry's order
    (read once per process: the analysis and its test share the parsed notebooks)."""
    cells = {
        anatomy.grade_id(cell): cell.source
        for cell in anatomy.function_cells(anatomy.read_solution(assignment))
    }
    names = [exercise.name for exercise in registry.load().notebook(assignment).exercises]
    return {name: Solution.from_cell(name, cells[name]) for name in names}


def _forbidden_edits(solution: Solution) -> list[tuple[Mistake, Edit]]:
    """The forbidden answers: the student's lines of the function replaced as a whole."""
    function = solution.functions()[-1]
    body = [statement for statement in function.body if solution.is_student(statement)]
    if not body:
        return []
    start, _ = solution.span(body[0])
    _, end = solution.span(body[-1])
    indent = " " * body[0].col_offset
    edits = []
    for mistake, _what, text in FORBIDDEN.get(solution.name, []):
        new = textwrap.indent(text, indent).strip() + "\n"
        edits.append((mistake, Edit(start, end, new.rstrip("\n"))))
    return edits


@cache
def mutants(assignment: str) -> tuple[Mutant, ...]:
    """Every distinct mutant of every graded function and class of ``assignment``."""
    made: list[Mutant] = []
    for name, solution in solutions(assignment).items():
        seen = {ast.dump(solution.tree)}
        keys: dict[str, int] = {}
        changes = [change for operator in OPERATORS for change in operator(solution)]
        for mistake, edit in changes + _forbidden_edits(solution):
            source = solution.apply(edit)
            try:
                dumped = ast.dump(ast.parse(source))
            except SyntaxError:
                continue  # an operator's text that does not parse is no student's answer
            if dumped in seen:
                continue
            seen.add(dumped)
            old = solution.text[edit.start : edit.end]
            shown = f"{name}: {_in_context(solution.text, source, edit)}"
            keys[shown] = keys.get(shown, 0) + 1
            key = shown if keys[shown] == 1 else f"{shown} #{keys[shown]}"
            line = solution.text.count("\n", 0, edit.start) + 1
            made.append(Mutant(assignment, name, mistake, old, edit.new, line, source, key))
    return tuple(made)
