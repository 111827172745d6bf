"""Staging a hand-in: what reading it finds, and what is left to execute."""

from __future__ import annotations

import secrets
from pathlib import Path

import nbformat

from instructor import anatomy
from instructor.classroom.grader.course import STAGING_FOLDER, NbgraderCourse
from instructor.classroom.grader.records import HandIn, Screening
from instructor.classroom.grader.stage import SECRET_FILE, exchange_files, stage
from instructor.scratch_course import ScratchCourse


def _hand_in(course: ScratchCourse, student: str) -> HandIn:
    folder = course.root / "submitted" / student / course.assignment
    return HandIn(student, course.assignment, folder)


def test_a_readable_notebook_is_staged_sanitised(course: ScratchCourse) -> None:
    notebook = course.released()
    anatomy.test_cells(notebook)[0].source = "pass"
    course.submit("alice", notebook)
    hand_in = _hand_in(course, "alice")
    nbformat.write(notebook, hand_in.folder / "scratch.ipynb")
    staged = stage(NbgraderCourse(course.root), hand_in)
    assert staged.notes == ("extra notebook scratch.ipynb (not graded)",)
    screening = staged.screenings[course.assignment]
    assert screening.outcome == "" and "edited test cell" in screening.notes[0]
    sanitised = nbformat.from_dict(staged.notebooks[course.assignment])
    assert anatomy.test_cells(sanitised)[0].source != "pass"
    copy = course.root / STAGING_FOLDER / "alice" / course.assignment / course.notebook_name
    assert copy.is_file()


def test_missing_and_unreadable_notebooks_are_not_executed(course: ScratchCourse) -> None:
    nbgrader = NbgraderCourse(course.root)
    empty = _hand_in(course, "bob")
    empty.folder.mkdir(parents=True)
    staged = stage(nbgrader, empty)
    assert staged.notebooks == {}
    assert staged.screenings[course.assignment] == Screening(
        course.assignment,
        "missing",
        (f"no {course.notebook_name} in the submission (scored 0)",),
    )
    broken = _hand_in(course, "carol")
    broken.folder.mkdir(parents=True)
    (broken.folder / course.notebook_name).write_text('{"cells": [')
    staged = stage(nbgrader, broken)
    assert staged.notebooks == {}
    assert staged.screenings[course.assignment].outcome == "unreadable"


def test_nbgrader_s_exchange_files_go_along_checked(tmp_path: Path) -> None:
    """The secret nbgrader's submit wrote is kept (``release_feedback`` names the feedback
    after it); one that is missing, edited, a link or too long is replaced by a new one, so
    the release never stops, and an unusable one is named. Nothing is read through a link."""
    staged = tmp_path / "staged"
    staged.mkdir()
    secret = secrets.token_hex(64)

    def hand_in(files: dict[str, str | Path]) -> Path:
        folder = tmp_path / f"hand_in_{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        for name, content in files.items():
            if isinstance(content, Path):
                (folder / name).symlink_to(content)
            else:
                (folder / name).write_text(content)
        return folder

    stamp = "2026-11-20 12:00:00.000000 UTC"
    assert exchange_files(hand_in({"timestamp.txt": stamp, SECRET_FILE: secret}), staged) == ()
    assert (staged / SECRET_FILE).read_text() == secret
    assert (staged / "timestamp.txt").read_text() == stamp

    assert exchange_files(hand_in({}), staged) == ()
    fresh = (staged / SECRET_FILE).read_text()
    assert len(fresh) == 128 and fresh != secret

    private = tmp_path / "instructor_secret.txt"
    private.write_text(secrets.token_hex(64))
    for unusable in (Path(private), "../../etc/passwd", "a" * 300, secret.upper(), "é" * 40):
        notes = exchange_files(hand_in({SECRET_FILE: unusable}), staged)
        assert len(notes) == 1 and SECRET_FILE in notes[0], (unusable, notes)
        assert (staged / SECRET_FILE).read_text() not in (private.read_text(), unusable)

    (staged / "timestamp.txt").unlink()
    for unusable in (Path(private), "9" * 5000):
        notes = exchange_files(hand_in({"timestamp.txt": unusable}), staged)
        assert notes == ("timestamp.txt is not a short text file (ignored: graded as on time)",)
        assert not (staged / "timestamp.txt").exists()
