"""Visible tests run in this process with a graded function replaced by a stand-in.

The stand-in calls the instructor's solution and records every call (its arguments bound
to the solution's parameters); it can also raise at its k-th call, as a student's code that
fails there would. ``test_visible_calls.py`` uses it to prove that every call a visible
test makes gives a message, ``test_visible_cases.py`` to prove what the visible tests try.
A graded class is replaced by a subclass whose construction and ``forward`` are the calls.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from instructor import anatomy, registry

INJECTED = "injected failure of the stand-in"
"""The message of the RuntimeError a stand-in raises at the call it is told to fail."""


@dataclass(frozen=True)
class Call:
    """One call of a graded function, or of a graded class (``method`` ``"__init__"``, its
    construction) or one of its modules (``method`` ``"forward"``)."""

    method: str
    arguments: dict[str, Any]
    """The arguments passed, by the solution's parameter names (defaults not filled in)."""


@dataclass
class CellRun:
    """What one test cell's visible part did with the stand-in."""

    test_id: str
    calls: list[Call] = field(default_factory=list)
    error: BaseException | None = None
    printed: str = ""


def graded(assignment: str) -> list[str]:
    """The graded functions and classes of ``assignment``, in the registry's order."""
    return [exercise.name for exercise in registry.load().notebook(assignment).exercises]


@functools.cache
def _base(assignment: str) -> dict[str, Any]:
    """The notebook's imports cell and every solution of its graded functions, run."""
    notebook = anatomy.read_solution(assignment)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(anatomy.imports_source(notebook), f"{assignment}:imports", "exec"), namespace)  # noqa: S102
    for cell in anatomy.function_cells(notebook):
        source = anatomy.strip_solution_markers(cell.source)
        exec(compile(source, f"{assignment}:{anatomy.grade_id(cell)}", "exec"), namespace)  # noqa: S102
    return namespace


def solution(assignment: str, name: str) -> Any:
    """The instructor's solution of ``name`` (a function or a class)."""
    return _base(assignment)[name]


def visible_tests(assignment: str, name: str) -> dict[str, str]:
    """test_id -> visible part of each test cell of ``name``."""
    cells = {
        anatomy.grade_id(cell): cell.source
        for cell in anatomy.test_cells(anatomy.read_solution(assignment))
    }
    return {
        test_id: anatomy.visible_part(cells[test_id])
        for test_id in anatomy.tests_of(name, list(cells))
    }


def _bound(function: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    try:
        return dict(inspect.signature(function).bind(*args, **kwargs).arguments)
    except TypeError:  # a call the test makes wrong on purpose: keep what can be named
        return {f"#{i}": a for i, a in enumerate(args)} | kwargs


def stand_in(reference: Any, calls: list[Call], fail_at: int | None) -> Any:
    """A stand-in for ``reference`` (a function or an ``nn.Module`` class) that records
    each call in ``calls`` and raises ``RuntimeError(INJECTED)`` at call number ``fail_at``
    (1-based; never when None)."""

    def record(method: str, signature_of: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        calls.append(Call(method, _bound(signature_of, args, kwargs)))
        if len(calls) == fail_at:
            raise RuntimeError(INJECTED)

    if isinstance(reference, type):

        class StandIn(reference):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                record("__init__", reference.__init__, (None, *args), kwargs)
                super().__init__(*args, **kwargs)

            def forward(self, *args: Any, **kwargs: Any) -> Any:
                record("forward", reference.forward, (self, *args), kwargs)
                return super().forward(*args, **kwargs)

        StandIn.__name__ = StandIn.__qualname__ = reference.__name__
        return StandIn

    @functools.wraps(reference)
    def function(*args: Any, **kwargs: Any) -> Any:
        record("", reference, args, kwargs)
        return reference(*args, **kwargs)

    return function


def run_cell(assignment: str, name: str, test_id: str, fail_at: int | None = None) -> CellRun:
    """Run the visible part of test cell ``test_id`` with ``name`` replaced by a stand-in
    that fails at call ``fail_at`` (never when None)."""
    run = CellRun(test_id)
    namespace = dict(_base(assignment))
    namespace[name] = stand_in(_base(assignment)[name], run.calls, fail_at)
    printed = io.StringIO()
    source = visible_tests(assignment, name)[test_id]
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(source, f"<{test_id}>", "exec"), namespace)  # noqa: S102
        except Exception as error:  # noqa: BLE001 - the outcome under test
            run.error = error
    run.printed = printed.getvalue()
    for call in run.calls:  # the instance a method was called on is not an argument
        call.arguments.pop("self", None)
    return run
