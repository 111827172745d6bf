"""A test cell run in the grader's process: the verdict comes from code the student cannot reach.

:func:`run_test` executes one test cell's source (restored from the gradebook) in a fresh
namespace of the grader's process. The names the cell reads and does not define itself (the
graded functions, concept answers) are looked up in the student's kernel through a
:class:`.probe.Channel`: functions and classes become stand-ins whose calls are probes,
values come back as plain data. The test's own code, its expected answers, the
``helpers.checks`` comparisons and their messages run here, where no student code ever ran.

Two checks of :mod:`helpers.checks` measure the student's function while it runs (the
largest tensor it makes, the number of torch calls): those measurements can only be taken in
the kernel, so they are asked for there and are a best-effort check (:data:`BEST_EFFORT`);
the integrity report names them. The cell's checks take them through the hook
:mod:`helpers.checks` declares for this (:class:`helpers.checks.Measurements`, installed
with ``measured_by`` for the cell's run): a stand-in's call is measured in its kernel. A
test cell that also decides the rule from outside (:data:`DECIDED_OUTSIDE`:
``check_without_n_by_n``, inputs too large for an ``(n, n)`` tensor in the kernel's memory;
``check_without_loop_over_positions``, so many positions that a loop cannot end within a
time limit the grader keeps) uses the measurement as a diagnostic only: a forged one cannot
win that test, and the report does not name it.

A graded function that changes its inputs in place changes the kernel's copies only
(:class:`.probe.ChangedInput`): the test's expected answers come from the grader's own
inputs. The change fails the test, by the rule the notebooks state ("graded functions must
not change their inputs"): where the cell checks that input with ``check_unchanged``, with
that check's message, as in the student's kernel; else, once the cell has run, with the same
message naming the function.

The cell's result is what nbgrader scores: the text it printed, and an error output when it
raised.
"""

from __future__ import annotations

import ast
import builtins
import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from nbformat import NotebookNode
from nbformat.v4 import new_output

from helpers import checks
from instructor import anatomy
from instructor.classroom.kernel.probe import Measure

from .probe import Channel, KernelGone, ProbeError, ProbeTimeout, RemoteFunction

__all__ = [
    "BEST_EFFORT",
    "DECIDED_OUTSIDE",
    "TestVerdict",
    "free_names",
    "run_test",
    "sendable_classes",
]

BEST_EFFORT = {
    Measure.LARGEST_TENSOR: "check_largest_tensor (the largest tensor made)",
    Measure.TORCH_CALLS: "check_no_loop_over_positions (torch calls counted)",
}
"""In-kernel measurements, by name, and how the integrity report calls them."""
DECIDED_OUTSIDE = {
    Measure.LARGEST_TENSOR: "check_without_n_by_n(",
    Measure.TORCH_CALLS: "check_without_loop_over_positions(",
}
"""Measurements a test cell decides from outside too, when its source makes this call."""


@dataclass
class TestVerdict:
    """What running one test cell in the grader gave."""

    outputs: list[NotebookNode]
    passed: bool
    probes: int = 0
    best_effort: list[str] = field(default_factory=list)
    broken_protocol: str = ""
    """Why the kernel's answers were refused ("" when they were not)."""
    stopped: str = ""
    """"time limit" or "kernel died" when the grader stopped the test."""


def free_names(source: str) -> list[str]:
    """Names ``source`` reads but never binds (imports, assignments, definitions,
    parameters), builtins excluded, sorted."""
    tree = ast.parse(source)
    bound: set[str] = set()
    read: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read.append(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({name for name in read if name not in bound and not hasattr(builtins, name)})


def _measured_through(channel: Channel) -> checks.Measurements:
    """How :mod:`helpers.checks` measures a call in a test cell run against ``channel``: a
    stand-in's call in its kernel, where the student's function runs; any other callable
    (the test's own) here, as in the student's kernel. Installed with
    :func:`helpers.checks.measured_by` for the cell's run: nothing of the module is replaced."""
    here = checks.IN_PROCESS

    def largest_tensor(function: Any, args: Any) -> tuple[Any, int, tuple[int, ...], str]:
        if not isinstance(function, RemoteFunction):
            return here.largest_tensor(function, args)
        result, measured = function.measure(Measure.LARGEST_TENSOR, tuple(args))
        numel, shape, call = measured.get("numel"), measured.get("shape"), measured.get("call")
        if type(numel) is not int or not isinstance(shape, list) or not isinstance(call, str):
            raise ProbeError("the kernel's measurement of the largest tensor is malformed")
        return result, numel, tuple(shape), call[:200]

    def torch_calls(function: Any, args: Any) -> int:
        if not isinstance(function, RemoteFunction):
            return here.torch_calls(function, args)
        _, measured = function.measure(Measure.TORCH_CALLS, tuple(args))
        count = measured.get("count")
        if type(count) is not int:
            raise ProbeError("the kernel's count of torch calls is malformed")
        return count

    def call_within(function: Any, args: Any, seconds: float) -> Any:
        if not isinstance(function, RemoteFunction):
            return here.call_within(function, args, seconds)
        try:
            return function.call_within(tuple(args), seconds)
        except ProbeTimeout:
            raise checks.OverTimeLimit from None

    def changed_elsewhere(value: Any) -> bool:
        # The grader's object never changes: the kernel changed its copy (ChangedInput).
        return any(change.original is value for change in channel.changed)

    return checks.Measurements(
        largest_tensor=largest_tensor,
        torch_calls=torch_calls,
        call_within=call_within,
        changed_elsewhere=changed_elsewhere,
    )


def sendable_classes(source: str) -> dict[str, str]:
    """The classes the visible part of the test cell ``source`` defines, by name, with their
    source: the only test code the grader ever sends into the kernel (a module of such a
    class, passed to the student's code, is rebuilt there from it). A class of the hidden
    part is never sent: the kernel would hold hidden test code, which a later cell could
    print into the student's own feedback."""
    visible = anatomy.visible_part(source)
    try:
        body = ast.parse(visible).body
    except SyntaxError:
        return {}
    return {
        node.name: ast.get_source_segment(visible, node) or ""
        for node in body
        if isinstance(node, ast.ClassDef)
    }


def _error(ename: str, evalue: str) -> NotebookNode:
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def run_test(source: str, test_id: str, channel: Channel, probe_seconds: float) -> TestVerdict:
    """Run the test cell ``source`` against the kernel behind ``channel``.

    Args:
        source: the test cell's source, as restored from the gradebook.
        test_id: its ``grade_id`` (for messages).
        channel: the probes to the student's kernel.
        probe_seconds: the time limit of each probe (the cell's time limit).
    """
    # The worker's own torch keeps to one thread, as the kernels do: with one thread per
    # core, several workers' idle threads spin against the kernels on a 2-core machine.
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    classes = sendable_classes(source)
    channel.sources = lambda cls: (
        classes.get(cls.__name__) if cls.__module__ == "__grader_test__" else None
    )
    printed = io.StringIO()
    namespace: dict[str, Any] = {
        "__name__": "__grader_test__",
        "__builtins__": builtins,
        "print": lambda *args, **kwargs: builtins.print(
            *args, **{**kwargs, "file": kwargs.get("file") or printed}
        ),
    }
    # Seeded here, so that a test that draws from the global generators draws the same
    # inputs for every student, whatever their notebook drew before.
    torch.manual_seed(0)
    np.random.seed(0)
    first_probe, first_measure = channel.calls, len(channel.measured)
    channel.changed.clear()
    error: NotebookNode | None = None
    verdict = TestVerdict([], passed=False)
    try:
        for name in free_names(source):
            try:
                namespace[name] = channel.lookup(name)
            except NameError:
                pass  # the test raises NameError where it reads the name, as in the notebook
        with checks.measured_by(_measured_through(channel)):
            exec(compile(source, f"<{test_id}>", "exec"), namespace)  # noqa: S102 - gradebook
        if channel.changed:
            raise checks.modified_in_place(channel.changed[0].describe())
    except ProbeTimeout as stopped:
        verdict.stopped = "time limit"
        error = _error("GraderTimeLimit", f"the grader stopped {test_id}: {stopped}")
    except KernelGone as gone:
        verdict.stopped = "kernel died"
        error = _error("KernelDied", f"the kernel died during {test_id}: {gone}")
    except ProbeError as broken:
        verdict.broken_protocol = str(broken)
        error = _error(
            "GraderProtocolError",
            f"the notebook's answer to the grader's call broke the probe protocol: {broken}",
        )
    except Exception as failure:  # noqa: BLE001 - a failing test is a verdict, not a crash
        error = _error(type(failure).__name__, str(failure))
    text = printed.getvalue()
    if text:
        verdict.outputs.append(new_output("stream", name="stdout", text=text))
    if error is not None:
        verdict.outputs.append(error)
    verdict.passed = error is None
    verdict.probes = channel.calls - first_probe
    verdict.best_effort = sorted(
        measure
        for measure in set(channel.measured[first_measure:])
        if DECIDED_OUTSIDE.get(measure, "\0") not in source
    )
    return verdict
