"""Wrong and right answers (``Case``) and where to find them.

The tests prove the grading by running nbgrader itself (``helpers.grading.Course``:
``generate_assignment`` and ``autograde``) and reading its gradebook; nothing here
re-implements scoring.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from helpers.grading import Course, assignments

__all__ = ["Case", "Course", "assignments", "cells_of", "load_cases"]

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
