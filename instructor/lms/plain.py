"""Plain names, and names read by a regular expression: no LMS's own rules.

``plain``: ``<student>_NB`` or ``<student>/NB`` (``NB`` the notebook's file name). Tried
last when the layout is detected, since every LMS's names also read as plain ones. The
student is the id, in any script, composed (NFC: a zip made on a Mac names its files in
NFD, and both spellings are one student); a name the id rule refuses is refused.

A ``pattern`` (``--pattern``): a regular expression matched against the whole name inside
the zip, with named groups ``student`` and ``notebook`` (with or without ``.ipynb``),
optionally ``timestamp`` (``YYYY-MM-DD-HH-MM-SS`` or anything ``dateutil`` reads).
"""

from __future__ import annotations

import re
import unicodedata

from .base import IntakeError, Lms, Parsed, ReadContext
from .blackboard import parse_time

__all__ = ["Pattern", "Plain"]


class Plain(Lms):
    name = "plain"
    example = "jsmith_{nb}.ipynb or jsmith/{nb}.ipynb"
    detected = False

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        parts = name.split("/")
        if len(parts) == 2:
            return _named(parts[0], parts[1])
        if len(parts) != 1:
            return None
        for notebook in sorted(context.notebooks, key=len, reverse=True):
            suffix = f"_{notebook}.ipynb"
            if name.endswith(suffix) and len(name) > len(suffix):
                return _named(name[: -len(suffix)], f"{notebook}.ipynb")
        return None


def _named(student: str, file_name: str) -> Parsed:
    """A plain name's student: the name as it is, composed (NFC)."""
    return Parsed(student=unicodedata.normalize("NFC", student), file_name=file_name)


class Pattern(Lms):
    """Names read by an instructor's regular expression."""

    name = "pattern"
    example = "--pattern"
    detected = False

    def __init__(self, pattern: str) -> None:
        try:
            self.pattern = re.compile(pattern)
        except re.error as error:
            raise IntakeError(
                f"--pattern {pattern!r} is not a regular expression: {error}"
            ) from None
        missing = {"student", "notebook"} - set(self.pattern.groupindex)
        if missing:
            raise IntakeError(
                f"--pattern {pattern!r} lacks the named groups {sorted(missing)}: write them "
                "as (?P<student>...) and (?P<notebook>...)"
            )
        self.example = f"--pattern {pattern}"

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        match = self.pattern.fullmatch(name)
        if not match:
            return None
        notebook = match["notebook"]
        if not notebook.endswith(".ipynb"):
            notebook += ".ipynb"
        stamp = match.groupdict().get("timestamp")
        return Parsed(
            student=match["student"],
            file_name=notebook,
            timestamp=parse_time(stamp, context.tz) if stamp else None,
        )
