"""Each mutant run against its function's test cells, in this process (no kernel per mutant).

The notebook's imports cell and its reference solutions run once (:func:`_base`); each mutant
then runs in a copy of that namespace, with its solution cell in place of the reference,
and each test cell of its function runs as the student's kernel would run it: first its
visible part, then its hidden part, in that namespace. What the student sees is the first
failure of a visible part; what the grade sees is any failure at all.

* **killed**: some part of a test cell fails (the mutant loses points): a real mistake.
* **named**: a visible part fails with an ``AssertionError`` (the checks' message);
  **raw**: it fails with another exception (or runs past :data:`TIME_LIMIT`), which the
  student reads as a crash of the test; **silent**: every visible part passes.
* the **cause** of a named mutant: its message guesses none, the mutant's own, or another
  (:func:`instructor.mutation.mistakes.guess_is_right`).

:func:`classify_isolated` runs the notebooks in a child process with a memory limit: the
hidden tests of 06, 08 and 09 call answers on inputs so long that an (n, n) tensor cannot
fit, and a mutant that builds one must fail to allocate it here too, not take the machine.
"""

from __future__ import annotations

import _thread
import contextlib
import io
import multiprocessing
import resource
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from enum import Enum
from functools import cache
from types import CodeType
from typing import Any

from instructor import anatomy
from instructor.mutation.engine import Mutant, mutants, solutions
from instructor.mutation.mistakes import guess_is_right

__all__ = ["Cause", "MutantOutcome", "Sighting", "classify", "classify_isolated"]

TIME_LIMIT = 30.0
"""Seconds one mutant's test cells may run; the checks' own limits are shorter (5 s)."""
MEMORY_LIMIT = 6 * 2**30
"""Bytes of address space the child process may use: torch's own is about 1 GiB, and the
(n, n) float64 tensor of the hidden tests' n = 32,768 needs 8 GiB."""


class Sighting(Enum):
    """What the student sees of a mutant in the visible tests."""

    NAMED = "named"
    RAW = "raw exception"
    SILENT = "passes the visible tests"


class Cause(Enum):
    """The likely cause a named mutant's message gives."""

    NONE = "no guess"
    RIGHT = "right"
    WRONG = "wrong"


@dataclass(frozen=True)
class MutantOutcome:
    """One mutant's classification.

    Attributes:
        mutant: the mutant.
        killed: some test cell of its function fails.
        seen: what the visible tests show.
        cause: the likely cause of a named mutant's message (NONE otherwise).
        message: the first visible failure (``Type: message``), or the failure that killed it.
        where: the test cell (and part) of that failure.
    """

    mutant: Mutant
    killed: bool
    seen: Sighting
    cause: Cause
    message: str
    where: str


class _OverTime(BaseException):
    """A mutant's test cells ran past :data:`TIME_LIMIT` (never caught by a test's except)."""


@cache
def _base(assignment: str) -> dict[str, Any]:
    """The imports cell and every reference solution of ``assignment``, run once."""
    notebook = anatomy.read_solution(assignment)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(anatomy.imports_source(notebook), f"{assignment}:imports", "exec"), namespace)  # noqa: S102
    for name, solution in solutions(assignment).items():
        exec(compile(solution.text, f"{assignment}:{name}", "exec"), namespace)  # noqa: S102
    return namespace


@cache
def _tests(assignment: str, name: str) -> tuple[tuple[str, CodeType, CodeType], ...]:
    """``(test_id, visible part, hidden part)`` of each test cell of ``name``, compiled."""
    cells = {
        anatomy.grade_id(cell): cell.source
        for cell in anatomy.test_cells(anatomy.read_solution(assignment))
    }
    parts = []
    for test_id in anatomy.tests_of(name, list(cells)):
        visible = anatomy.visible_part(cells[test_id])
        hidden = cells[test_id][len(visible) :]
        # The hidden part keeps its line numbers, as in the cell.
        hidden = "\n" * visible.count("\n") + hidden
        parts.append(
            (
                test_id,
                compile(visible, f"<{test_id}>", "exec"),
                compile(hidden, f"<{test_id} hidden>", "exec"),
            )
        )
    return tuple(parts)


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the main thread after ``seconds`` (raised there as KeyboardInterrupt)."""
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    try:
        yield
    except KeyboardInterrupt:
        raise _OverTime from None
    finally:
        timer.cancel()


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())}"[:1000]


def run_mutant(mutant: Mutant) -> MutantOutcome:
    """Run ``mutant`` against its function's test cells and classify it."""
    namespace = dict(_base(mutant.assignment))
    killed, seen, message, where = False, Sighting.SILENT, "", ""
    with (
        contextlib.redirect_stdout(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        try:
            with _time_limit(TIME_LIMIT):
                exec(compile(mutant.source, f"<{mutant.function}>", "exec"), namespace)  # noqa: S102
                for test_id, visible, hidden in _tests(mutant.assignment, mutant.function):
                    for part, code in (("visible", visible), ("hidden", hidden)):
                        try:
                            exec(code, namespace)  # noqa: S102
                        except Exception as error:  # noqa: BLE001 - the outcome under test
                            if not killed:
                                message, where = _error_text(error), f"{test_id} ({part})"
                            killed = True
                            if part == "visible":
                                named = isinstance(error, AssertionError)
                                seen = Sighting.NAMED if named else Sighting.RAW
                                message, where = _error_text(error), f"{test_id} ({part})"
                            break
                    if seen is not Sighting.SILENT:
                        break
        except _OverTime:
            killed, seen = True, Sighting.RAW if seen is Sighting.SILENT else seen
            message = message or f"ran past the time limit of {TIME_LIMIT:g} s"
        except Exception as error:  # noqa: BLE001 - the mutant's own cell failed to run
            killed, seen, message, where = True, Sighting.RAW, _error_text(error), "solution cell"
    cause = Cause.NONE
    if seen is Sighting.NAMED:
        right = guess_is_right(mutant.mistake, message.removeprefix("AssertionError: "))
        cause = Cause.NONE if right is None else Cause.RIGHT if right else Cause.WRONG
    return MutantOutcome(mutant, killed, seen, cause, message, where)


def classify(assignment: str) -> list[MutantOutcome]:
    """Every mutant of ``assignment``, classified, in the engine's order."""
    return [run_mutant(mutant) for mutant in mutants(assignment)]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def classify_isolated(assignments: list[str]) -> dict[str, list[MutantOutcome]]:
    """:func:`classify` for each notebook, in one child process under a memory limit."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context, initializer=_limit_memory) as pool:
        return dict(zip(assignments, pool.map(classify, assignments), strict=True))
