"""Recording a hand-in with nbgrader's own ``autograde``, its execution replayed.

:func:`record_hand_in` records one staged and executed hand-in and returns its summary.

nbgrader's ``autograde`` converter runs ``Execute`` and then scores the outputs. The class
grader's recording API (:attr:`.NbgraderCourse.recording_api`) puts
:class:`.replay_execute.ReplayExecute` in its place: the outputs are those of the sandboxed
run (:mod:`.execute`), handed to the preprocessor through its ``executed`` trait
(nbgrader-style configuration) for one ``autograde`` call. So the gradebook, the
autograded notebooks and the feedback are nbgrader's own.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

from .nbgrader_setup import NbgraderCourse
from .records import ExecutionResult, HandIn, HandInSummary, NotebookSummary
from .staging import Staged

__all__ = ["record_hand_in", "replay_hand_in"]


def replay_hand_in(
    course: NbgraderCourse, hand_in: HandIn, executed: dict[str, ExecutionResult]
) -> str:
    """Autograde the staged copy of ``hand_in`` with the outputs of ``executed``.

    Returns nbgrader's error ("" when it succeeded). Notebooks without a result (missing,
    unreadable) are left to nbgrader, which scores them 0.
    """
    api: Any = course.recording_api
    api.config.ReplayExecute.executed = {name: r.notebook for name, r in executed.items()}
    try:
        with warnings.catch_warnings():
            # nbgrader 0.9's own SQLAlchemy autoflush warnings: harmless, its CLI logs them.
            warnings.simplefilter("ignore")
            outcome = api.autograde(hand_in.assignment, hand_in.student, force=True)
    finally:
        api.config.ReplayExecute.executed = {}
    if outcome["success"]:
        return ""
    return "nbgrader autograde failed: " + outcome.get("error", "")[-2000:]


def record_hand_in(
    course: NbgraderCourse,
    hand_in: HandIn,
    staged: Staged,
    executed: dict[str, ExecutionResult],
) -> HandInSummary:
    """Record ``hand_in``: its grades into the gradebook (zeros where nothing could run),
    and what happened to each notebook, with its scores, into the summary returned."""
    notebooks = {
        name: NotebookSummary.screened(screening) for name, screening in staged.screenings.items()
    }
    for name, result in executed.items():
        notebooks[name] = notebooks[name].executed(result)
    error = ""
    if executed:
        error = replay_hand_in(course, hand_in, executed)
    else:
        course.record_zeros(hand_in.student, hand_in.assignment, list(notebooks))
    for name, (score, max_score, cells) in course.scores(
        hand_in.student, hand_in.assignment, list(notebooks)
    ).items():
        notebooks[name] = replace(notebooks[name], score=score, max_score=max_score, cells=cells)
    return HandInSummary(
        hand_in.student, hand_in.assignment, hand_in.fingerprint, staged.notes, error, notebooks
    )
