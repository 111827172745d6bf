"""``notebooks/`` is exactly what ``nbgrader generate_assignment`` makes of ``solutions/`` today.

The release compared is the one the grading tests grade: ``support.graded_class.generated``
runs ``generate_assignment`` once per assignment and test run, in a scratch course whose
source is a copy of ``solutions/``.
"""

from __future__ import annotations

import json

import pytest

from instructor import registry
from instructor.paths import NOTEBOOKS as RELEASED
from instructor.paths import SOLUTIONS
from support.graded_class import generated

ASSIGNMENTS = registry.load().ids


def test_every_solution_has_a_student_version_and_vice_versa() -> None:
    released = sorted(p.parent.name for p in RELEASED.glob("*/*.ipynb"))
    assert released == ASSIGNMENTS, (
        "notebooks/ and the registry (course.toml) hold different notebooks: run `make release`"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_version_is_current(assignment: str, tmp_path_factory) -> None:
    made = generated(tmp_path_factory, assignment).root / "release" / assignment
    committed = RELEASED / assignment / f"{assignment}.ipynb"
    assert json.loads(committed.read_text()) == json.loads(
        (made / f"{assignment}.ipynb").read_text()
    ), (
        f"notebooks/{assignment} differs from what generate_assignment makes of "
        f"solutions/{assignment}: run `make release` and commit the result"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_version_leaks_no_solution(assignment: str) -> None:
    text = (RELEASED / assignment / f"{assignment}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text, f"notebooks/{assignment} contains {marker!r}"
    assert (SOLUTIONS / assignment).is_dir()
