"""The *stage* step of a grading run: a hand-in (:class:`.records.HandIn`) read without trusting
it (:mod:`.integrity`), run through nbgrader's sanitising steps, and copied with nbgrader's
exchange files to ``.grading/staged/``: a :class:`Staged` hand-in, what the workers execute.

It runs in the grader's process, inside the hand-in's own boundary
(:func:`.records.contain`): a hand-in that cannot be staged is staged as unreadable
(:func:`unreadable_staging`), its notebooks scored 0 with the reason.
"""

from __future__ import annotations

import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from instructor.classroom.grader.course import STAGING_FOLDER, NbgraderCourse
from instructor.classroom.grader.integrity import (
    compare_with_release,
    mark_student_cells,
    normalise_notebook,
    read_student_file,
    read_submission_file,
    scan_code,
)
from instructor.classroom.grader.records import HandIn, Screening, Unreadable
from instructor.classroom.worker import Outcome

__all__ = ["SECRET_FILE", "Staged", "exchange_files", "stage", "unreadable_staging"]


SECRET_FILE = "submission_secret.txt"
"""What ``nbgrader submit`` writes beside the notebooks: ``secrets.token_hex(64)``."""


_SECRET = re.compile(r"[0-9a-f]{32,256}")


_TIMESTAMP_BYTES = 100  # one date: "2026-11-20 12:00:00.000000 UTC" is 30 bytes


def _small_regular_file(path: Path, limit: int) -> str | None:
    data, _ = read_student_file(path, limit)
    if data is None or not data.isascii():
        return None
    return data.decode("ascii")


def exchange_files(source: Path, staged: Path) -> tuple[str, ...]:
    """Copy nbgrader's exchange files of the hand-in in ``source`` to ``staged``; notes.

    A hand-in without a usable ``submission_secret.txt`` (an LMS download has none; a
    student may edit or delete theirs) gets a new random one: ``release_feedback`` opens
    every hand-in's secret and stops the whole release at the first one missing. Its
    feedback is then released under a name that student's ``fetch_feedback`` cannot find,
    which the note says.
    """
    notes: list[str] = []
    timestamp = source / "timestamp.txt"
    if timestamp.exists() or timestamp.is_symlink():
        text = _small_regular_file(timestamp, _TIMESTAMP_BYTES)
        if text is None:
            notes.append("timestamp.txt is not a short text file (ignored: graded as on time)")
        else:
            (staged / "timestamp.txt").write_text(text, encoding="ascii")
    secret_path = source / SECRET_FILE
    secret = None
    if secret_path.exists() or secret_path.is_symlink():
        secret = _small_regular_file(secret_path, 256)
        if secret is None or not _SECRET.fullmatch(secret):
            secret = None
            notes.append(
                f"{SECRET_FILE} is not what nbgrader submit writes: feedback released through "
                "the exchange cannot be fetched by this student (give it to them by hand)"
            )
    (staged / SECRET_FILE).write_text(secret or secrets.token_hex(64), encoding="ascii")
    return tuple(notes)


@dataclass(frozen=True)
class Staged:
    """A hand-in, staged: what reading it found, and what is to be executed."""

    notes: tuple[str, ...] = ()
    screenings: dict[str, Screening] = field(default_factory=dict)
    """Every expected notebook, in the gradebook's order."""
    notebooks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """name -> the sanitised notebook to execute (the readable ones only)."""


def stage(course: NbgraderCourse, hand_in: HandIn) -> Staged:
    """Read, check and sanitise ``hand_in``; stage its readable notebooks."""
    folder = course.root / STAGING_FOLDER / hand_in.student / hand_in.assignment
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    expected = course.notebook_names(hand_in.assignment)
    notes = exchange_files(hand_in.folder, folder) + tuple(
        f"extra notebook {path.name} (not graded)"
        for path in sorted(hand_in.folder.glob("*.ipynb"))
        if path.stem not in expected
    )
    screenings: dict[str, Screening] = {}
    notebooks: dict[str, dict[str, Any]] = {}
    for name in expected:
        path = hand_in.folder / f"{name}.ipynb"
        if not path.is_file():
            screenings[name] = Screening(
                name, Outcome.MISSING, (f"no {name}.ipynb in the submission (scored 0)",)
            )
            continue
        reading = read_submission_file(path)
        if reading.notebook is None:
            screenings[name] = Screening(
                name, Outcome.UNREADABLE, (f"{path.name}: {reading.problem} (scored 0)",)
            )
            continue
        released = course.released(hand_in.assignment, name)
        changes = tuple(compare_with_release(reading.notebook, released))
        flags = tuple(scan_code(reading.notebook))
        notebook = normalise_notebook(reading.notebook, released)
        try:
            sanitised = course.sanitise(
                nbformat.from_dict(notebook), hand_in.student, hand_in.assignment, name
            )
        except Exception as error:  # noqa: BLE001 - nbgrader could not make sense of it
            problem = f"nbgrader could not sanitise it ({error!r}; scored 0)"
            screenings[name] = Screening(name, Outcome.UNREADABLE, (*changes, problem), flags)
            continue
        nbformat.write(notebook, folder / f"{name}.ipynb")
        screenings[name] = Screening(name, Outcome.PENDING, changes, flags)
        notebooks[name] = dict(mark_student_cells(sanitised, released))
    return Staged(notes, screenings, notebooks)


def unreadable_staging(course: NbgraderCourse, hand_in: HandIn, failure: Unreadable) -> Staged:
    """``hand_in`` staged as unreadable: every expected notebook scores 0 with the note. The
    staging folder is emptied, so that recording finds no notebook of this hand-in to read."""
    shutil.rmtree(
        course.root / STAGING_FOLDER / hand_in.student / hand_in.assignment, ignore_errors=True
    )
    note = f"{failure.note} (scored 0)"
    return Staged(
        screenings={
            name: Screening(name, Outcome.UNREADABLE, (note,))
            for name in course.notebook_names(hand_in.assignment)
        }
    )
