"""Submission times the instructor exported from the LMS: ``--times times.csv``.

An LMS download does not always name when each file was submitted (Canvas's does not: its
zipper stamps every entry with the time the zip was built). Where a late penalty needs the
time (per hour late), the times come from the LMS another way: a CSV with a header row and
the columns

``student``
    the nbgrader student id the download gives (``smithjane``), or the LMS's user id
    (Canvas's user id, Moodle's participant id);
``time``
    when the LMS says the student submitted: ISO 8601 (``2026-11-20T12:01:00+01:00``) or
    anything ``dateutil`` reads; a time without a zone is UTC.

For example from Canvas: the submissions API's ``submitted_at`` per user
(``GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions``), or the time
SpeedGrader shows, written down.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

from .base import IntakeError

__all__ = ["TIMES_COLUMNS", "read_times"]

TIMES_COLUMNS = ("student", "time")


def read_times(path: str | Path) -> dict[str, datetime]:
    """student (or LMS user id) -> submission time (aware, UTC)."""
    import dateutil.parser

    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            header = tuple(rows[0].keys()) if rows else ()
    except OSError as error:
        raise IntakeError(f"--times {path}: {error}") from None
    if rows and not set(TIMES_COLUMNS) <= set(header):
        raise IntakeError(
            f"--times {path}: the header must name the columns 'student' and 'time', not {header}"
        )
    times: dict[str, datetime] = {}
    for number, row in enumerate(rows, start=2):
        student, text = (row.get("student") or "").strip(), (row.get("time") or "").strip()
        if not student or not text:
            raise IntakeError(f"--times {path}, line {number}: a student and a time are needed")
        try:
            moment = dateutil.parser.isoparse(text)
        except ValueError:
            try:
                moment = dateutil.parser.parse(text)
            except (ValueError, OverflowError):
                raise IntakeError(f"--times {path}, line {number}: {text!r} is no time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        if student in times and times[student] != moment:
            raise IntakeError(f"--times {path}: {student} has two times")
        times[student] = moment.astimezone(UTC)
    return times
