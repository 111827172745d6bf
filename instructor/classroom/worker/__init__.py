"""What the grading worker runs: the kernels' isolation, the zygote, one notebook's run, the judge.

It imports :mod:`instructor.classroom.kernel` (the start lines it gives each kernel, the
probe's messages) and nothing of :mod:`instructor.classroom.grader`: the types it hands back
(:class:`ExecutionResult` and the kinds it names) are defined here, in this module of
the standard library only, so that the grader and its command line read them without
starting what a kernel needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "ANSWER_CHARS",
    "ExecutionResult",
    "FailedPart",
    "GraderEnvironmentError",
    "KernelSeconds",
    "NOT_RUN_OUTCOMES",
    "Outcome",
    "STUDENT_VIEW",
    "CellSeen",
    "ZERO_OUTCOMES",
    "ZeroKind",
    "ZeroedTest",
]


STUDENT_VIEW = "student_view_outputs"
"""Cell metadata: a test cell's outputs when it ran in the kernel (``student_view``), kept
by :mod:`.session` and carried into the autograded notebook by :mod:`.pipeline`."""


class GraderEnvironmentError(RuntimeError):
    """The kernel cannot load the grader's code: no submission can be graded here (defined
    here, so that the command line can name it without importing torch)."""


class Outcome(StrEnum):
    """How one notebook's grading ended (``NotebookSummary.outcome``), and how a kernel
    stopped during a test (``TestVerdict.stopped``: :attr:`TIME_LIMIT` or :attr:`KERNEL_DIED`)."""

    PENDING = ""
    """Not decided yet: a notebook staged, not executed. Its value is the empty text that
    state files and reports written before this member existed hold."""
    OK = "ok"
    TIME_LIMIT = "time limit"  # of the notebook, or of a call in a test: the rest did not run
    KERNEL_DIED = "kernel died"
    GRADER_ERROR = "grader error"  # the grader's own machinery failed (twice): no cell counts
    MISSING = "missing"  # the hand-in has no such notebook
    UNREADABLE = "unreadable"  # the file is not a notebook


NOT_RUN_OUTCOMES = (Outcome.MISSING, Outcome.UNREADABLE, Outcome.GRADER_ERROR)
"""Notebook outcomes where no test cell ran (a time limit or a dead kernel stops part way:
their cells that did not run are :attr:`ZeroKind.NOT_RUN` in ``zeroed``)."""
ZERO_OUTCOMES = (*NOT_RUN_OUTCOMES, Outcome.TIME_LIMIT, Outcome.KERNEL_DIED)
"""Notebook outcomes that explain a score of 0 by themselves."""


class ZeroKind(StrEnum):
    """Why the grader scored a test cell 0 itself (not a failing test)."""

    NOT_RUN = "not run"  # the notebook stopped (or never started) before this cell
    BROKEN_PROTOCOL = "broken protocol"  # a probe's answer was not data in the protocol
    STOPPED = "stopped"  # the grader stopped a call of the student's code at its time limit
    OTHER = "other"  # read from a state written before kinds were recorded


@dataclass(frozen=True)
class ZeroedTest:
    """A test cell the grader scored 0, and why."""

    test: str
    reason: str
    kind: ZeroKind = ZeroKind.OTHER


class FailedPart(StrEnum):
    """Which part of a failed test cell failed (``CellSeen.failed``)."""

    VISIBLE = "visible"
    HIDDEN = "hidden"
    """It printed its visible part's closing line (``anatomy.visible_pass_message``), which
    only the grader's own run of the cell prints, then failed."""


@dataclass(frozen=True)
class CellSeen:
    """What the grader saw of one test cell that it ran: for the item analysis."""

    test: str
    tags: tuple[str, ...] = ()
    """The tags of the known mistakes its failure's message named
    (``instructor.mistake_tags.tags_seen``)."""
    failed: FailedPart | None = None
    """None where it passed, or where the cell does not say where its visible part ends."""
    answer: str | None = None
    """A concept question's answer as read from the kernel: a string stripped and lower case,
    a number's ``repr``, otherwise ``<type>`` (at most :data:`ANSWER_CHARS` characters);
    None for a graded function's test."""


ANSWER_CHARS = 40


@dataclass(frozen=True)
class KernelSeconds:
    """Where one notebook's time on its grading worker went (seconds of the worker's clock):
    for the grading run's step times (``grader.timing``), never for a grade."""

    start: float = 0.0
    """Sandbox, kernel (forked from the zygote or started) and handshake: before the first cell."""
    cells: float = 0.0
    """The notebook's own cells (every cell but the test cells)."""
    tests: float = 0.0
    """The test cells: judged outside the kernel (and with ``student_view`` run inside too)."""
    finish: float = 0.0
    """The kernel stopped, its folders removed, the verdicts judged."""


@dataclass(frozen=True)
class ExecutionResult:
    """What one notebook's execution produced (plain data: it travels back from a worker)."""

    notebook: dict[str, Any]
    """The executed notebook, cell for cell the sanitised one it was given."""
    outcome: Outcome = Outcome.OK
    detail: str = ""
    zeroed: tuple[ZeroedTest, ...] = ()
    restored: tuple[str, ...] = ()
    """Replacements found (and undone) before a test."""
    events: tuple[str, ...] = ()
    """What the kernel's audit hook saw (connections, subprocesses, writes outside its copy)."""
    truncated_cells: tuple[int, ...] = ()
    bounds: tuple[str, ...] = ()
    """What a bound of the whole notebook stopped (its outputs, its disk), in the integrity
    report's words: ``"output bound: ..."``, ``"disk bound: ..."``."""
    seconds: float = 0.0
    best_effort: tuple[str, ...] = ()
    """Rules measured inside the student's kernel (a determined student could forge them),
    each with the test that asked: ``"check_largest_tensor (...) in test_x"``."""
    probes: int = 0
    """Calls of the student's code made by the grader's test cells."""
    seen: tuple[CellSeen, ...] = ()
    """Per test cell that ran, in order: what :class:`CellSeen` records."""
    spent: KernelSeconds = KernelSeconds()
    """Where :attr:`seconds` went (the grading run's step times)."""
