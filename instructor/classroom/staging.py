"""Staging one hand-in: read, check and sanitise its notebooks before anything runs.

Each expected notebook is read without trusting it (:mod:`.integrity`), compared with the
release, scanned for suspicious code and run through nbgrader's own sanitising
preprocessors (test cells come back from the gradebook). The readable ones are copied to
``.grading/staged/<student>/<assignment>/``, where the recording step's ``autograde`` reads
them; students' files in ``submitted/`` are only ever read. The class grader runs
:func:`stage` inside the hand-in's boundary (:mod:`.containment`): an exception here is
that hand-in's ``unreadable``, never the run's end.

Beside the notebooks, two files of nbgrader's exchange go along (:func:`exchange_files`):
``timestamp.txt`` (lateness) and ``submission_secret.txt``, from which ``release_feedback``
names the feedback a student's ``fetch_feedback`` looks for: nbgrader's ``autograde`` and
``generate_feedback`` copy them on to ``autograded/`` and ``feedback/``.
"""

from __future__ import annotations

import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from .integrity import (
    compare_with_release,
    normalise_notebook,
    read_student_file,
    read_submission_file,
    scan_code,
)
from .nbgrader_setup import STAGING_FOLDER, NbgraderCourse
from .records import HandIn, Outcome, Screening

__all__ = ["SECRET_FILE", "Staged", "exchange_files", "stage"]

SECRET_FILE = "submission_secret.txt"
"""What ``nbgrader submit`` writes beside the notebooks: ``secrets.token_hex(64)``."""
_SECRET = re.compile(r"[0-9a-f]{32,256}")
_TIMESTAMP_BYTES = 100
"""``timestamp.txt`` holds one date (``2026-11-20 12:00:00.000000 UTC``: 30 bytes)."""


def _small_regular_file(path: Path, limit: int) -> str | None:
    """The text of ``path`` if it is a regular file (never a link) of at most ``limit``
    bytes in ASCII; otherwise None."""
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
    """About the hand-in as a whole (an extra notebook)."""
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
        screenings[name] = Screening(name, "", changes, flags)
        notebooks[name] = dict(sanitised)
    return Staged(notes, screenings, notebooks)
