"""Feedback HTML for the recorded hand-ins: nbgrader's own ``generate_feedback``.

The HTML never shows a hidden test, and nothing the student wrote runs in it:
:func:`feedback_for` adds :class:`.feedback_preprocessor.RedactFeedback` and
:class:`.sanitise.SanitiseNotebook` to nbgrader's ``GenerateFeedback`` preprocessors
(:func:`.feedback_preprocessor.feedback_config`) on the API it uses.

Feedback only reads the gradebook and the autograded notebooks, so with the embedded
cluster (this machine) the Dask workers write it in parallel; with a remote scheduler
(whose workers may not see the course folder) it is written here, one after another.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .containment import contain
from .feedback_preprocessor import feedback_config
from .nbgrader_setup import NbgraderCourse
from .resume import ResumeState

__all__ = ["feedback_for", "lacking_feedback", "redacting", "write_feedback"]


def lacking_feedback(
    root: Path, state: ResumeState, assignments: list[str], force: bool = False
) -> list[tuple[str, str]]:
    """(assignment, student) of every recorded hand-in without feedback (all, with force)."""
    missing = []
    for assignment in assignments:
        for student in state.students(assignment):
            folder = root / "feedback" / student / assignment
            if force or not folder.is_dir() or not any(folder.glob("*.html")):
                missing.append((assignment, student))
    return missing


def redacting(course: NbgraderCourse) -> NbgraderCourse:
    """``course``, its API's ``generate_feedback`` made to redact hidden tests and sanitise
    (idempotent)."""
    course.api.config.merge(feedback_config())
    return course


def feedback_for(root: Path, db_url: str | None, assignment: str, student: str) -> bool:
    """nbgrader's ``generate_feedback`` for one hand-in (in a worker), hidden tests
    redacted; whether it worked. It reads what the student wrote: inside the hand-in's
    boundary (:func:`.containment.contain`), so one notebook's feedback failing is named
    in the log ("feedback failed for ...") and the others are still written."""
    done = contain(
        lambda: redacting(NbgraderCourse(root, db_url)).generate_feedback(assignment, student)
    )
    return done is True


def write_feedback(
    course: NbgraderCourse,
    missing: list[tuple[str, str]],
    client: Any | None,
    log: Callable[[str], None],
) -> None:
    """Feedback for each (assignment, student) of ``missing``: on ``client``'s workers, or
    here where ``client`` is None."""
    if not missing:
        return
    if client is None:
        results = [feedback_for(course.root, course.db_url, a, s) for a, s in missing]
    else:
        futures = client.map(
            feedback_for,
            [course.root] * len(missing),
            [course.db_url] * len(missing),
            [a for a, _ in missing],
            [s for _, s in missing],
            pure=False,
        )
        results = client.gather(futures)
    failed = [f"{a}/{s}" for (a, s), ok in zip(missing, results, strict=True) if not ok]
    log(f"feedback written for {len(missing) - len(failed)} submission(s)")
    if failed:
        log("feedback failed for: " + ", ".join(failed))
