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
the grader with a message naming the file, the table and the key (the tables are pydantic
models, :mod:`instructor.toml_schema`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from instructor.toml_schema import Table, mistakes, refused

from .errors import IntakeError

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


def _canvas_id(value: str) -> str:
    # Canvas's importer reads "Title (id)" with /\A(.*)\s\((\d+)\)\z/: digits only.
    if not re.fullmatch(r"[0-9]+", value):
        raise refused(f"canvas_id {value!r} is no number")
    return value


def _blackboard_id(value: str) -> str:
    # Blackboard's column header ends "|<id>": the id holds no space and no bar.
    if not re.fullmatch(r"[^\s|]+", value):
        raise refused(f"blackboard_id {value!r}: no spaces, no |")
    return value


class LmsAssignment(Table):
    """One ``[assignments.<id>]`` table of ``lms.toml``: non-empty strings (a number is
    read as one)."""

    canvas_title: str | None = None
    canvas_id: Annotated[str, AfterValidator(_canvas_id)] | None = None
    blackboard_title: str | None = None
    blackboard_id: Annotated[str, AfterValidator(_blackboard_id)] | None = None
    moodle_title: str | None = None

    @field_validator("*")
    @classmethod
    def _not_blank(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.strip():
            raise refused(f"{info.field_name} must be a non-empty string, not {value!r}")
        return value


class MoodleStrings(Table):
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


class _MoodleTable(MoodleStrings):
    """``[moodle]``: ``language`` gives every string; a string set beside it wins."""

    language: str = "en"

    @model_validator(mode="before")
    @classmethod
    def _language_first(cls, table: Any) -> Any:
        if not isinstance(table, Mapping):
            return table
        language = table.get("language", "en")
        if not isinstance(language, str) or language not in MOODLE_LANGUAGES:
            raise refused(
                f"language {language!r} is not one of {sorted(MOODLE_LANGUAGES)}; set "
                "participant, identifier_column, grade_column and modified_column instead"
            )
        return {**MOODLE_LANGUAGES[language].model_dump(), **table}


class _LmsToml(Table):
    """The whole file."""

    assignments: dict[str, LmsAssignment] = Field(default_factory=dict)
    moodle: _MoodleTable = Field(default_factory=_MoodleTable)


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


def read_config(path: str | Path) -> LmsConfig:
    """Read ``lms.toml`` at ``path``; an empty configuration if there is no such file."""
    path = Path(path)
    if not path.exists():
        return LmsConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise LmsConfigError(f"{path}: not TOML: {error}") from None
    try:
        toml = _LmsToml.model_validate(data)
    except ValidationError as error:
        raise LmsConfigError("\n".join(mistakes(error, _LmsToml, data, str(path)))) from None
    moodle = MoodleStrings(**toml.moodle.model_dump(exclude={"language"}))
    return LmsConfig(toml.assignments, moodle, path)
