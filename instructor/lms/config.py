"""``autograder/lms.toml``: which LMS assignment each of the course's assignments is, and
the language of the Moodle that takes the grading worksheets. Optional: without it every
export still works, with the columns named by the nbgrader assignment ids (what each LMS
then does is in docs/instructors.md, "Submissions from an LMS").

::

    # autograder/lms.toml
    [assignments.01_vector_sets]        # the nbgrader assignment id
    canvas_title = "Homework 1: vector sets"
    canvas_id = "4711"                  # Canvas assignment id (.../assignments/4711)
    blackboard_title = "Homework 1"     # as Blackboard names the download's files
    blackboard_id = "123456"            # Grade Center column id ("... |123456")
    moodle_title = "Homework 1"         # the Moodle assignment's name

    [moodle]
    language = "de"                     # the uploader's language: "en" (default) or "de"
    # or each string as that Moodle writes it:
    # participant = "Teilnehmer/in"     # the Identifier's prefix (hiddenuser)
    # identifier_column = "ID"          # recordid
    # grade_column = "Bewertung"        # gradenoun (grade before Moodle 4.1)
    # modified_column = "Zuletzt geändert (Bewertung)"   # lastmodifiedgrade

Every key is optional. An unknown key, or an id that the LMS would not read as one, stops
the grader with a message naming it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from .base import IntakeError

__all__ = [
    "LMS_TOML",
    "MOODLE_LANGUAGES",
    "Column",
    "LmsAssignment",
    "LmsConfig",
    "LmsConfigError",
    "MoodleStrings",
    "read_config",
]

LMS_TOML = "lms.toml"


class LmsConfigError(IntakeError):
    """``lms.toml`` is not as documented."""


@dataclass(frozen=True)
class Column:
    """One course assignment in one LMS: its title and id there (either may be None)."""

    title: str | None = None
    id: str | None = None


@dataclass(frozen=True)
class LmsAssignment:
    """One ``[assignments.<id>]`` table of ``lms.toml``."""

    canvas_title: str | None = None
    canvas_id: str | None = None
    blackboard_title: str | None = None
    blackboard_id: str | None = None
    moodle_title: str | None = None


@dataclass(frozen=True)
class MoodleStrings:
    """The strings of Moodle's grading worksheet in the uploader's language.

    Moodle's importer (mod/assign/feedback/offline/importgradeslib.php) finds the columns
    by ``get_string('recordid', 'assign')``, ``get_string('gradenoun')`` and
    ``get_string('lastmodifiedgrade', 'assign')`` and cuts ``strlen(get_string(
    'hiddenuser', 'assign'))`` bytes off each Identifier, all in the language of the user
    who uploads: the worksheet must be written in that language.
    """

    participant: str = "Participant "
    identifier_column: str = "Identifier"
    full_name_column: str = "Full name"
    grade_column: str = "Grade"
    maximum_column: str = "Maximum grade"
    modified_column: str = "Last modified (grade)"


MOODLE_LANGUAGES: Mapping[str, MoodleStrings] = {
    # moodle/moodle mod/assign/lang/en/assign.php: hiddenuser 'Participant ', recordid
    # 'Identifier', lastmodifiedgrade 'Last modified (grade)'; lang/en/moodle.php gradenoun
    # 'Grade'.
    "en": MoodleStrings(),
    # Moodle's German language pack (AMOS, lang/de/assign.php) as found by code search:
    # hiddenuser 'Teilnehmer/in' (no trailing space), recordid 'ID', lastmodifiedgrade
    # 'Zuletzt geändert (Bewertung)'; gradenoun 'Bewertung'.
    "de": MoodleStrings(
        participant="Teilnehmer/in",
        identifier_column="ID",
        grade_column="Bewertung",
        modified_column="Zuletzt geändert (Bewertung)",
    ),
}


@dataclass(frozen=True)
class LmsConfig:
    """``lms.toml`` read: the assignments' LMS columns and the Moodle worksheet's strings."""

    assignments: Mapping[str, LmsAssignment] = field(default_factory=dict)
    moodle: MoodleStrings = field(default_factory=MoodleStrings)
    path: Path | None = None

    def column(self, assignment: str, lms: str) -> Column | None:
        """``assignment``'s title and id in ``lms`` (``canvas``, ``blackboard``,
        ``moodle``), or None when ``lms.toml`` gives neither."""
        entry = self.assignments.get(assignment)
        if entry is None:
            return None
        title = getattr(entry, f"{lms}_title", None)
        ident = getattr(entry, f"{lms}_id", None)
        return Column(title, ident) if title or ident else None

    def where(self) -> str:
        return str(self.path) if self.path else LMS_TOML


_ASSIGNMENT_KEYS = {f.name for f in fields(LmsAssignment)}
_MOODLE_KEYS = {"language"} | {f.name for f in fields(MoodleStrings)}
_DIGITS = re.compile(r"[0-9]+")


def _text(where: str, key: str, value: object) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        raise LmsConfigError(f"{where}: {key} must be a non-empty string, not {value!r}")
    return str(value)


def read_config(path: str | Path) -> LmsConfig:
    """Read ``lms.toml`` at ``path``; an empty configuration if there is no such file."""
    path = Path(path)
    if not path.exists():
        return LmsConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise LmsConfigError(f"{path}: not TOML: {error}") from None
    unknown = sorted(set(data) - {"assignments", "moodle"})
    if unknown:
        raise LmsConfigError(f"{path}: unknown tables {unknown}: use [assignments.<id>], [moodle]")
    assignments = {}
    for assignment, entry in (data.get("assignments") or {}).items():
        where = f"{path} [assignments.{assignment}]"
        if not isinstance(entry, dict):
            raise LmsConfigError(f"{where}: must be a table")
        bad = sorted(set(entry) - _ASSIGNMENT_KEYS)
        if bad:
            raise LmsConfigError(f"{where}: unknown keys {bad}: use {sorted(_ASSIGNMENT_KEYS)}")
        values = {key: _text(where, key, value) for key, value in entry.items()}
        # Canvas's importer reads "Title (id)" with /\A(.*)\s\((\d+)\)\z/: digits only.
        if "canvas_id" in values and not _DIGITS.fullmatch(values["canvas_id"]):
            raise LmsConfigError(f"{where}: canvas_id {values['canvas_id']!r} is no number")
        if "blackboard_id" in values and not re.fullmatch(r"[^\s|]+", values["blackboard_id"]):
            raise LmsConfigError(
                f"{where}: blackboard_id {values['blackboard_id']!r}: no spaces, no |"
            )
        assignments[str(assignment)] = LmsAssignment(**values)
    moodle_table = data.get("moodle") or {}
    bad = sorted(set(moodle_table) - _MOODLE_KEYS)
    if bad:
        raise LmsConfigError(f"{path} [moodle]: unknown keys {bad}: use {sorted(_MOODLE_KEYS)}")
    language = moodle_table.get("language", "en")
    if language not in MOODLE_LANGUAGES:
        raise LmsConfigError(
            f"{path} [moodle]: language {language!r} is not one of {sorted(MOODLE_LANGUAGES)}; "
            "set participant, identifier_column, grade_column and modified_column instead"
        )
    strings = {
        key: str(value)
        for key, value in moodle_table.items()
        if key != "language" and isinstance(value, str)
    }
    moodle = replace(MOODLE_LANGUAGES[language], **strings)
    return LmsConfig(assignments, moodle, path)
