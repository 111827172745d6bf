"""Near copies among a class's answers, from the autograded notebooks (:mod:`.similarity`
compares; this module gathers the answers of an assignment and of the whole course)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from nbformat import NotebookNode

from instructor import anatomy

from .gradebook_reads import submitted_students
from .integrity import read_submission_file
from .similarity import DEFAULT_THRESHOLD, REFERENCE_STUDENT, CopyPair, graded_answers, near_copies

if TYPE_CHECKING:
    from .nbgrader_setup import NbgraderCourse


__all__ = [
    "copy_report",
    "course_copies",
]


def copy_report(
    submissions: Mapping[str, Iterable[NotebookNode]],
    reference: Iterable[NotebookNode],
    released: Iterable[NotebookNode] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> list[CopyPair]:
    """The near copies among one assignment's hand-ins (``similarity.near_copies``).

    Args:
        submissions: student -> the student's notebooks of the assignment (submitted or
            autograded: their solution cells are the student's answers).
        reference: the instructor notebooks (``solutions/``), markers stripped here.
        released: the student versions: their stubs never count as copied code.
        threshold: 0 to 1 (see ``similarity.DEFAULT_THRESHOLD``).
    """
    answers: dict[str, dict[str, str]] = {}
    for student, notebooks in submissions.items():
        key = f"{student} (student)" if student == REFERENCE_STUDENT else student
        for notebook in notebooks:
            answers.setdefault(key, {}).update(graded_answers(notebook))
    solutions: dict[str, str] = {}
    for notebook in reference:
        solutions.update(anatomy.solution_sources(notebook))
    stubs: dict[str, str] = {}
    for notebook in released:
        stubs.update(graded_answers(notebook))
    return near_copies(answers, solutions, threshold, boilerplate=stubs)


def _read(path: Path) -> NotebookNode | None:
    """The notebook at ``path``, read as staging reads a hand-in (bounded, its nbgrader
    metadata checked: :func:`.integrity.read_submission_file`); None if it is unreadable
    (reported elsewhere) or missing."""
    if not path.is_file():
        return None
    return read_submission_file(path).notebook


def course_copies(
    course: NbgraderCourse, assignments: Iterable[str], students: Iterable[str] | None = None
) -> dict[str, list[CopyPair]]:
    """assignment -> near copies among its autograded notebooks (``autograded/``, else the
    submitted ones) of ``students`` (default: every one), against the course's source."""
    coursedir = course.coursedir
    found: dict[str, list[CopyPair]] = {}
    for assignment in assignments:
        source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
        release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
        reference = [nb for nb in map(_read, sorted(source.glob("*.ipynb"))) if nb]
        released = [nb for nb in map(_read, sorted(release.glob("*.ipynb"))) if nb]
        names = {path.name for path in release.glob("*.ipynb")}
        submissions: dict[str, list[NotebookNode]] = {}
        who = students if students is not None else submitted_students(course, assignment)
        for student in sorted(set(who)):
            folder = Path(
                coursedir.format_path(coursedir.autograded_directory, student, assignment)
            )
            if not folder.is_dir():
                folder = course.submitted_folder() / student / assignment
            notebooks = [_read(folder / name) for name in sorted(names)]
            submissions[student] = [nb for nb in notebooks if nb is not None]
        found[assignment] = copy_report(submissions, reference, released)
    return found
