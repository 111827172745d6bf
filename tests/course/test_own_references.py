"""Every expected value of every test cell comes from objects the test made, never from an
attribute of the student's object (``instructor.own_references``; issue 32, item 5).

A reference computed from ``block.attention`` or ``ffn.linear1.weight`` agrees with whatever
the student put there: a decoy sublayer, a layer renamed as torch's. The analysis and the
kinds it refuses are proven on cells of their own in tests/instructor/test_own_references.py.
"""

from __future__ import annotations

import pytest

from instructor import registry
from instructor.own_references import notebook_findings

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


def test_every_notebook_is_checked_in_its_hidden_and_visible_parts() -> None:
    """The check sees the hidden parts (nothing is skipped for being hidden): the unfixed
    notebook's findings are in both parts."""
    for assignment in KNOWN:
        parts = {f.hidden for f in notebook_findings(assignment)}
        assert parts == {True, False}, parts
