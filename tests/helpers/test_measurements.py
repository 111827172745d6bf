"""The hook through which a grader measures a call from outside: ``helpers.checks``'
``Measurements``, installed with ``measured_by`` for a block, in one thread only."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from helpers import checks
from helpers.checks import (
    IN_PROCESS,
    Measurements,
    OverTimeLimit,
    check_largest_tensor,
    check_no_loop_over_positions,
    check_unchanged,
    check_without_loop_over_positions,
    measured_by,
)


def _outer(x: torch.Tensor) -> torch.Tensor:
    return x[:, None] * x[None, :]  # an (n, n) tensor


def _elsewhere(seen: list[str]) -> Measurements:
    """Measurements that say what a grader's would, and note each call they measure."""

    def largest_tensor(function: Callable[..., Any], args: Sequence[Any]) -> tuple:
        seen.append("largest_tensor")
        return "result", 10**6, (1000, 1000), "mul"

    def torch_calls(function: Callable[..., Any], args: Sequence[Any]) -> int:
        seen.append("torch_calls")
        return len(args[0])  # a loop: one call per position

    def call_within(function: Callable[..., Any], args: Sequence[Any], seconds: float) -> Any:
        seen.append(f"call_within {seconds:g}")
        raise OverTimeLimit

    def changed_elsewhere(value: Any) -> bool:
        seen.append("changed_elsewhere")
        return True

    return Measurements(
        largest_tensor=largest_tensor,
        torch_calls=torch_calls,
        call_within=call_within,
        changed_elsewhere=changed_elsewhere,
    )


def test_by_default_the_checks_measure_in_this_process() -> None:
    x = torch.arange(4.0)
    assert check_largest_tensor(lambda t: t + 1, (x,), max_numel=4, name="f").tolist() == [
        1,
        2,
        3,
        4,
    ]
    with pytest.raises(AssertionError, match=r"tensor of shape \(4, 4\) \(in `mul`\)"):
        check_largest_tensor(_outer, (x,), max_numel=4, name="outer")
    assert check_no_loop_over_positions(torch.cumsum, lambda n: (torch.ones(n), 0)) == {8: 1, 64: 1}
    check_unchanged(x.clone(), x, "x")
    assert IN_PROCESS == Measurements()


def test_inside_measured_by_every_watching_check_asks_the_measurements_installed() -> None:
    seen: list[str] = []
    x = torch.arange(4.0)
    with measured_by(_elsewhere(seen)) as installed:
        assert isinstance(installed, Measurements)
        with pytest.raises(AssertionError, match=r"shape \(1000, 1000\) \(in `mul`\)"):
            check_largest_tensor(lambda t: t + 1, (x,), max_numel=100, name="f")
        with pytest.raises(AssertionError, match="makes 8 torch calls for n = 8 but 64"):
            check_no_loop_over_positions(torch.cumsum, lambda n: (torch.ones(n), 0), name="f")
        with pytest.raises(AssertionError, match="f did not end within 3 s"):
            check_without_loop_over_positions(torch.cumsum, (x, 0), 4, "f", seconds=3)
        with pytest.raises(AssertionError, match="The input x was modified in place"):
            check_unchanged(x.clone(), x, "x")  # unchanged here, changed where it ran
    assert seen == [
        "largest_tensor",
        "torch_calls",
        "torch_calls",
        "call_within 3",
        "changed_elsewhere",
    ]
    seen.clear()  # left: the measurements before are back
    check_largest_tensor(lambda t: t + 1, (x,), max_numel=4, name="f")
    check_unchanged(x.clone(), x, "x")
    assert seen == []


def test_measured_by_nests_and_puts_the_outer_ones_back_after_an_error() -> None:
    outer: list[str] = []
    inner: list[str] = []
    x = torch.arange(4.0)
    with measured_by(_elsewhere(outer)):
        with pytest.raises(RuntimeError), measured_by(_elsewhere(inner)):
            raise RuntimeError("a test cell that failed")
        with pytest.raises(AssertionError):
            check_unchanged(x.clone(), x, "x")
    assert (outer, inner) == (["changed_elsewhere"], [])


def test_measured_by_holds_in_its_own_thread_only() -> None:
    """The class grader runs test cells on threads of one process: one cell's measurements
    are never another's."""
    seen: list[str] = []
    inside, outside = threading.Event(), threading.Event()
    other: list[bool] = []

    def other_thread() -> None:
        inside.wait(10)
        x = torch.arange(4.0)
        try:
            check_unchanged(x.clone(), x, "x")
            other.append(True)
        finally:
            outside.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with measured_by(_elsewhere(seen)):
        inside.set()
        outside.wait(10)
    thread.join(10)
    assert other == [True] and seen == []


def test_the_declared_hook_is_public_and_frozen() -> None:
    for name in ("IN_PROCESS", "Measurements", "OverTimeLimit", "measured_by"):
        assert name in checks.__all__
    with pytest.raises(AttributeError):
        IN_PROCESS.largest_tensor = print  # type: ignore[misc]
