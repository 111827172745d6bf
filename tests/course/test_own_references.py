"""Every expected value of every test cell comes from objects the test made, never from an
attribute of the student's object (``instructor.own_references``; issue 32, item 5).

A reference computed from ``block.attention`` or ``ffn.linear1.weight`` agrees with whatever
the student put there: a decoy sublayer, a layer renamed as torch's. The analysis and the
kinds it refuses are proven on cells of their own in tests/instructor/test_own_references.py.
"""

from __future__ import annotations

import pytest

from instructor import anatomy, registry
from instructor.own_references import cell_findings, graded_names, notebook_findings

ASSIGNMENTS = registry.load().ids

KNOWN: dict[str, str] = {}
"""Notebooks whose test cells still read the student's object; each must fail (strict)."""


@pytest.mark.parametrize(
    "assignment",
    [
        pytest.param(a, marks=pytest.mark.xfail(strict=True, reason=KNOWN[a])) if a in KNOWN else a
        for a in ASSIGNMENTS
    ],
)
def test_every_expected_value_comes_from_the_test_s_own_objects(assignment: str) -> None:
    findings = notebook_findings(assignment)
    assert not findings, f"{assignment}: " + "; ".join(str(f) for f in findings)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_cell_is_checked_in_its_hidden_and_visible_parts(assignment: str) -> None:
    """Nothing is skipped for being hidden, nor for its cell: a reference read off a graded
    name, planted in every test cell just before and just after its hidden-tests marker, is
    found in both parts."""
    notebook = anatomy.read_solution(assignment)
    functions, classes = graded_names(notebook)
    graded = sorted(functions | classes)[0]
    planted = f"check_close(0.0, {graded}.__doc__, 'planted')"
    cells = [c for c in anatomy.test_cells(notebook) if anatomy.HIDDEN_TESTS_MARKER in c.source]
    assert cells, f"{assignment} has no test cell with hidden tests"
    for cell in cells:
        lines = cell.source.splitlines()
        marker = next(n for n, line in enumerate(lines) if anatomy.HIDDEN_TESTS_MARKER in line)
        source = "\n".join([*lines[:marker], planted, lines[marker], planted, *lines[marker + 1 :]])
        found = cell_findings(source, functions, classes, str(anatomy.grade_id(cell)))
        parts = {f.hidden for f in found if f.expression == f"{graded}.__doc__"}
        assert parts == {True, False}, (anatomy.grade_id(cell), found)
