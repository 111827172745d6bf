"""Wrong and right answers (``Case``) and where to find them.

The tests prove the grading by running nbgrader itself (``helpers.grading.Course``:
``generate_assignment`` and ``autograde``) and reading its gradebook; nothing here
re-implements scoring.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import nbformat

from helpers.grading import SOLUTIONS, Course, assignments, solution_sources

__all__ = [
    "Case",
    "Course",
    "Submission",
    "assignments",
    "cells_of",
    "load_cases",
    "pack",
    "reference_solutions",
]

CASES_DIR = Path(__file__).resolve().parent / "grading_cases"


@dataclass(frozen=True)
class Case:
    """An answer to one graded function, and what grading must make of it.

    Attributes:
        function: the ``grade_id`` of the solution cell the answer replaces.
        kind: ``"wrong"`` must lose points on that function's tests; ``"right"`` must
            score full marks.
        name: what the answer does, in a few words (becomes the student id and test id).
        source: the whole new source of the solution cell.
    """

    function: str
    kind: Literal["wrong", "right"]
    name: str
    source: str

    @property
    def student(self) -> str:
        slug = "".join(ch if ch.isalnum() else "_" for ch in self.name.lower()).strip("_")
        return f"{self.kind}__{self.function}__{slug}"[:120]


def load_cases(assignment: str) -> list[Case]:
    """The ``CASES`` of ``tests/grading_cases/<assignment>.py`` (empty if there is none)."""
    path = CASES_DIR / f"{assignment}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"grading_cases_{assignment}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CASES)


def cells_of(
    function: str, scores: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The test cells that grade ``function``: ``test_<function>`` and ``test_<function>_<k>``."""
    own = f"test_{function}"
    return {
        name: value
        for name, value in scores.items()
        if name == own or (name.startswith(own + "_") and name[len(own) + 1 :].isdigit())
    }


def reference_solutions(assignment: str) -> dict[str, str]:
    """grade_id -> reference source of every solution cell of ``solutions/<assignment>``."""
    return solution_sources(nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", 4))


@dataclass(frozen=True)
class Submission:
    """One student notebook carrying several cases, at most one per graded function."""

    student: str
    cases: tuple[Case, ...]

    def replacements(self) -> dict[str, str]:
        return {case.function: case.source for case in self.cases}


def _defined_names(case: Case) -> set[str]:
    """The function's name and every other top-level name the answer defines (imports
    excepted: they rebind the same modules)."""
    names = {case.function}
    for node in ast.parse(case.source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _used_names(*sources: str) -> set[str]:
    """Every identifier the code uses (docstrings and comments do not count)."""
    return {
        node.id for source in sources for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Name)
    }  # fmt: skip


def pack(cases: list[Case], prefix: str) -> list[Submission]:
    """Put the cases into as few submissions as possible, keeping each grade attributable.

    A submission never holds two cases of one function, nor two answers where one uses a
    name the other defines (a ``soft_select`` answer calling ``softmax``, two answers with a
    helper of the same name). A case replaces its function's reference solution, so only
    the answers' own code matters here; reference solutions of functions left in place
    that call a wrong answer are allowed to lose points with it. Test cells are
    self-contained, so one answer cannot change another function's grade otherwise;
    ``tests/test_autograde.py`` checks that every cell without a wrong answer still
    scores full marks.
    """

    def independent(a: Case, b: Case) -> bool:
        return (
            a.function != b.function
            and not _defined_names(b) & _used_names(a.source)
            and not _defined_names(a) & _used_names(b.source)
        )

    groups: list[list[Case]] = []
    for case in cases:
        group = next((g for g in groups if all(independent(case, other) for other in g)), None)
        if group is None:
            groups.append([case])
        else:
            group.append(case)
    return [Submission(f"{prefix}{i:02d}", tuple(group)) for i, group in enumerate(groups)]
