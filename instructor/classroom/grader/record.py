"""The *record* step of a grading run: an executed hand-in into nbgrader's gradebook.

nbgrader's own ``autograde`` does it (:class:`ReplayAutograde`), on the staged copy, with its
``Execute`` step replaced by :class:`ReplayExecute`, which pastes in the outputs of the
sandboxed run (handed to it directly, for this hand-in only): the gradebook, the autograded
notebooks and the feedback are nbgrader's own. A hand-in with nothing executed (every
notebook missing or unreadable) gets zeros.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import nbformat
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import capture_log, temp_attrs
from traitlets import Dict

from instructor.classroom.grader.course import NbgraderCourse
from instructor.classroom.grader.records import HandIn, HandInSummary, NotebookSummary
from instructor.classroom.grader.stage import Staged
from instructor.classroom.worker import STUDENT_VIEW, ExecutionResult
from instructor.feedback import SanitiseNotebook

__all__ = ["ReplayAutograde", "ReplayExecute", "autograde", "record_hand_in", "replay_steps"]


def record_hand_in(
    course: NbgraderCourse,
    hand_in: HandIn,
    staged: Staged,
    executed: dict[str, ExecutionResult],
) -> HandInSummary:
    """Record ``hand_in``'s grades into the gradebook (zeros where nothing could run)."""
    notebooks = {
        name: NotebookSummary.screened(screening) for name, screening in staged.screenings.items()
    }
    for name, result in executed.items():
        notebooks[name] = notebooks[name].executed(result)
    error = ""
    if executed:
        # nbgrader's autograde on the staged copy, with the outputs of ``executed``;
        # notebooks without a result (missing, unreadable) are left to it: it scores them 0.
        outcome = autograde(course, hand_in, executed)
        if not outcome["success"]:
            error = "nbgrader autograde failed: " + outcome.get("error", "")[-2000:]
    else:
        course.record_zeros(hand_in.student, hand_in.assignment, list(notebooks))
    for name, (score, max_score, cells) in course.scores(
        hand_in.student, hand_in.assignment, list(notebooks)
    ).items():
        notebooks[name] = replace(notebooks[name], score=score, max_score=max_score, cells=cells)
    return HandInSummary(
        hand_in.student, hand_in.assignment, hand_in.fingerprint, staged.notes, error, notebooks
    )


class ReplayExecute(NbGraderPreprocessor):
    """nbgrader's ``Execute`` step, replaced: outputs come from the sandboxed run."""

    executed = Dict(
        help="notebook name -> the executed notebook (nbformat dict) of the sandboxed run"
    ).tag(config=True)

    def preprocess(self, nb, resources):  # nbconvert's signature
        info = resources["nbgrader"]
        name = info["notebook"]
        where = (info["student"], info["assignment"], name)
        if name not in self.executed:
            raise RuntimeError(f"{where}: no executed notebook to replay")
        executed = nbformat.from_dict(self.executed[name])
        if [c.source for c in executed.cells] != [c.source for c in nb.cells]:
            raise RuntimeError(f"{where}: the executed notebook is not the one sanitised")
        for cell, ran in zip(nb.cells, executed.cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = ran.get("outputs", [])
                cell.execution_count = ran.get("execution_count")
                if STUDENT_VIEW in ran.get("metadata", {}):
                    cell.metadata[STUDENT_VIEW] = ran.metadata[STUDENT_VIEW]
        return nb, resources


def replay_steps() -> list[Any]:
    """nbgrader's autograde steps with :class:`ReplayExecute` for its ``Execute`` (which would
    run the student's code here, unsandboxed), and ``SanitiseNotebook`` last, after the scores
    are saved: the autograded notebook formgrader shows holds nothing that runs in the
    instructor's browser."""
    defaults = Autograde.class_traits()["autograde_preprocessors"].default()
    if Execute not in defaults:
        raise RuntimeError(f"nbgrader's autograde steps have no Execute: {defaults}")
    return [*(ReplayExecute if step is Execute else step for step in defaults), SanitiseNotebook]


class ReplayAutograde(Autograde):
    """nbgrader's ``autograde`` of one hand-in, replaying ``executed`` (notebook name -> the
    executed notebook) in place of its ``Execute`` step."""

    def __init__(self, executed: dict[str, dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.autograde_preprocessors = replay_steps()
        self.executed = executed

    def _init_preprocessors(self) -> None:  # nbgrader's hook, called before each pass
        super()._init_preprocessors()
        if not self._sanitizing:
            for step in self.exporter._preprocessors:
                if isinstance(step, ReplayExecute):
                    step.executed = self.executed


def autograde(
    course: NbgraderCourse, hand_in: HandIn, executed: dict[str, ExecutionResult]
) -> dict[str, Any]:
    """nbgrader's autograde of ``hand_in``'s staged copy with ``executed``'s outputs, as
    ``NbGraderAPI.autograde`` runs it: ``{"success", "error", "log"}``."""
    api = course.recording_api
    with temp_attrs(api.coursedir, assignment_id=hand_in.assignment, student_id=hand_in.student):
        app = ReplayAutograde(
            {name: result.notebook for name, result in executed.items()},
            coursedir=api.coursedir,
            parent=api,
        )
        app.force = True
        app.create_student = True
        with warnings.catch_warnings():
            # nbgrader 0.9's own SQLAlchemy autoflush warnings: its CLI logs them too.
            warnings.simplefilter("ignore")
            return capture_log(app)
