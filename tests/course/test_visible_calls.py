"""No raw exception from a student's function, anywhere in a visible test (issue 30).

For every graded function and class of every notebook, the visible part of each of its
test cells runs (in this process) with the function replaced by a stand-in that calls the
solution and raises ``RuntimeError`` at its k-th call, for every k up to the number of
calls the cell makes (a class's constructions and its modules' ``forward`` calls counted
together). Each time the cell must fail with an ``AssertionError`` that names the call:
the function's name and the exception, as ``helpers.checks.checked_call`` writes it. A
call outside ``checked_call`` (or a check that wraps its calls the same way) lets the raw
``RuntimeError`` through and fails this test, naming the cell and the call.
"""

from __future__ import annotations

import pytest

from instructor import registry
from tests.support.visible import INJECTED, graded, run_cell, visible_tests

FUNCTIONS = [
    pytest.param(assignment, name, id=f"{assignment}-{name}")
    for assignment in registry.load().ids
    for name in graded(assignment)
]


def unnamed_calls(assignment: str, name: str) -> list[str]:
    """The calls of ``name`` in its visible tests whose failure the student does not read as
    an AssertionError naming the call: one line each, with the cell and the call's number."""
    cells = visible_tests(assignment, name)
    assert cells, f"{assignment}: {name} has no test cell"
    failures = []
    for test_id in cells:
        clean = run_cell(assignment, name, test_id)
        assert clean.error is None, (
            f"{test_id}: the visible tests fail with the solution behind the stand-in: "
            f"{clean.error!r}"
        )
        assert clean.calls, f"{test_id}: the visible tests never call {name}"
        for k, call in enumerate(clean.calls, start=1):
            error = run_cell(assignment, name, test_id, fail_at=k).error
            where = f"{test_id}, call {k} of {len(clean.calls)} ({call.method or name}"
            where += f" with {sorted(call.arguments)})"
            if not isinstance(error, AssertionError):
                failures.append(f"{where}: the student reads a raw {error!r}")
            elif INJECTED not in str(error) or name not in str(error):
                failures.append(f"{where}: the message does not name the call: {str(error)!r}")
    return failures


@pytest.mark.parametrize(("assignment", "name"), FUNCTIONS)
def test_every_visible_call_that_raises_gets_a_message_naming_it(
    assignment: str, name: str
) -> None:
    failures = unnamed_calls(assignment, name)
    assert not failures, (
        "calls of a graded function in visible tests must go through "
        "helpers.checks.checked_call:\n  " + "\n  ".join(failures)
    )


def test_a_call_outside_checked_call_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above can fail: of a cell's two calls, the one outside ``checked_call``
    lets the RuntimeError through and is named, the other is not."""
    import tests.support.visible as visible

    cell = (
        "from helpers.checks import checked_call\n"
        "checked_call(causal_mask, 3)\n"
        "causal_mask(4)\n"
        "print('causal_mask: visible tests passed')\n"
    )

    def one_cell(assignment: str, name: str) -> dict[str, str]:
        return {"test_causal_mask": cell}

    monkeypatch.setattr(visible, "visible_tests", one_cell)  # what run_cell reads
    monkeypatch.setitem(globals(), "visible_tests", one_cell)  # what unnamed_calls reads
    failures = unnamed_calls("03_matrix_form", "causal_mask")
    assert len(failures) == 1 and failures[0].startswith("test_causal_mask, call 2 of 2"), failures
    assert "raw RuntimeError" in failures[0]
