"""Feedback HTML for the recorded hand-ins: nbgrader's own ``generate_feedback``.

Feedback only reads the gradebook and the autograded notebooks, so with the embedded
cluster (this machine) the Dask workers write it in parallel; with a remote scheduler
(whose workers may not see the course folder) it is written here, one after another.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .nbgrader_setup import NbgraderCourse
from .resume import ResumeState

__all__ = ["lacking_feedback", "write_feedback"]


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


def feedback_for(root: Path, db_url: str | None, assignment: str, student: str) -> bool:
    """nbgrader's ``generate_feedback`` for one hand-in (in a worker); whether it worked."""
    return NbgraderCourse(root, db_url).generate_feedback(assignment, student)


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
