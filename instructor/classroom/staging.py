"""Staging one hand-in: read, check and sanitise its notebooks before anything runs.

Each expected notebook is read without trusting it (:mod:`.integrity`), compared with the
release, scanned for suspicious code and run through nbgrader's own sanitising
preprocessors (test cells come back from the gradebook). The readable ones are copied to
``.grading/staged/<student>/<assignment>/``, where the recording step's ``autograde`` reads
them; students' files in ``submitted/`` are only ever read.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any

import nbformat

from .integrity import compare_with_release, normalise_notebook, read_submission, scan_code
from .nbgrader_setup import STAGING_FOLDER, NbgraderCourse
from .records import HandIn, Outcome, Screening

__all__ = ["Staged", "stage"]


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
    timestamp = hand_in.folder / "timestamp.txt"
    if timestamp.is_file():
        shutil.copy(timestamp, folder / "timestamp.txt")
    expected = course.notebook_names(hand_in.assignment)
    notes = tuple(
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
        reading = read_submission(path.read_text(errors="replace"))
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
