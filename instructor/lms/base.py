"""The one interface every LMS module implements, and the records the intake makes.

An LMS is a :class:`Lms`: how its download names files (:meth:`Lms.parse`), which files of
the download are expected and not needed (:meth:`Lms.ignored`), who a student is in it
(:meth:`Lms.identity`, kept in ``lms_students.json`` by :mod:`.roster`) and how its grade
import file is written (:meth:`Lms.export`). The modules ``canvas``, ``moodle``,
``blackboard`` and ``plain`` each define one; :data:`instructor.lms.LMSS` lists them, and
the intake, the exports and the command line read that list (no other copy of the names).
Adding an LMS is one module with one :class:`Lms` subclass, added to ``LMSS``, and its
tests.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..student_ids import MAX_BYTES, MAX_CHARS, PUNCTUATION
from .errors import IntakeError, SubmissionExists, UnknownLayout
from .roster import LmsIdentity

if TYPE_CHECKING:
    from .config import LmsConfig
    from .table import Finals, GradeItem

__all__ = [
    "Intake",
    "IntakeError",
    "Lms",
    "Parsed",
    "ReadContext",
    "Skipped",
    "StudentSubmission",
    "SubmissionExists",
    "SubmittedFile",
    "TimeSource",
    "UnknownLayout",
    "id_part",
    "lms_student_id",
    "notebook_of",
    "slug",
]

log = logging.getLogger(__name__)


class TimeSource(StrEnum):
    """Where a submission time comes from."""

    LMS = "lms"
    """The LMS wrote it into the download (Blackboard's attempt time, a pattern's group)."""
    TIMES_FILE = "times file"
    """A CSV of submission times the instructor exported from the LMS (``--times``)."""
    ZIP_ENTRY = "zip entry"
    """The zip entry's modification time: often when the zip was built (Canvas: always).
    Used only when asked (``--zip-times``)."""


TRUSTED_TIMES = frozenset({TimeSource.LMS, TimeSource.TIMES_FILE})
"""The times written to ``timestamp.txt`` unless the zip entries' are asked for."""


@dataclass(frozen=True)
class SubmittedFile:
    """One notebook file of a student's submission.

    Attributes:
        member: the file's name inside the zip.
        notebook: the assignment's notebook it is (``01_vector_sets``, no ``.ipynb``).
        timestamp: when it was submitted (aware, UTC), or None; see ``timestamp_source``.
        timestamp_source: a :class:`TimeSource` (compares equal to ``"lms"``, ``"times
            file"``, ``"zip entry"``), None without a timestamp.
        late: Canvas's ``LATE`` mark (True or False); None where the LMS does not say.
        resubmission: the re-upload suffix (Canvas's ``-N``; 8 for its uuid suffix, made only
            once ``-1`` to ``-7`` are taken); 0 without one: the highest wins.
        order: what orders files of one resubmission number (Canvas's attachment id: a
            later upload has a larger one); 0 where the LMS names none.
    """

    member: str
    notebook: str
    timestamp: datetime | None = None
    timestamp_source: TimeSource | None = None
    late: bool | None = None
    resubmission: int = 0
    order: int = 0


@dataclass(frozen=True)
class StudentSubmission:
    """What one student handed in.

    Attributes:
        student: the nbgrader student id (a folder name under ``submitted/``).
        display_name: the name the LMS shows (Moodle), or None.
        lms_user_id: Canvas's user id, Moodle's participant id, or None.
        files: the chosen file of each notebook the student handed in, in notebook order.
        superseded: older attempts and resubmissions that lost to ``files``.
    """

    student: str
    display_name: str | None
    lms_user_id: str | None
    files: tuple[SubmittedFile, ...]
    superseded: tuple[SubmittedFile, ...] = ()

    @property
    def late(self) -> bool | None:
        """True if the LMS called any chosen file late, None if it says nothing."""
        flags = [f.late for f in self.files if f.late is not None]
        return any(flags) if flags else None

    @property
    def timestamp(self) -> datetime | None:
        """The newest timestamp of the chosen files, whatever its source."""
        times = [f.timestamp for f in self.files if f.timestamp is not None]
        return max(times) if times else None

    def trusted_timestamp(self, zip_times: bool = False) -> datetime | None:
        """The newest time the LMS gave (or a times file), or also a zip entry's time when
        ``zip_times``; None without one."""
        sources = TRUSTED_TIMES | ({TimeSource.ZIP_ENTRY} if zip_times else set())
        times = [f.timestamp for f in self.files if f.timestamp and f.timestamp_source in sources]
        return max(times) if times else None

    def file(self, notebook: str) -> SubmittedFile | None:
        return next((f for f in self.files if f.notebook == notebook), None)


@dataclass(frozen=True)
class Skipped:
    """A file of the zip that is not used, and why."""

    member: str
    reason: str


@dataclass(frozen=True)
class Intake:
    """An LMS download, read.

    Attributes:
        layout: an LMS name (``canvas``, ``moodle``, ``blackboard``, ``plain``) or
            ``pattern``.
        notebooks: the assignment's notebooks that were looked for.
        students: one entry per student with at least one notebook, sorted by id.
        unmatched: files that match no student or no expected notebook, with the reason.
        ignored: files that are expected and not needed (Blackboard receipts, macOS
            metadata).
    """

    layout: str
    notebooks: tuple[str, ...]
    students: tuple[StudentSubmission, ...]
    unmatched: tuple[Skipped, ...] = ()
    ignored: tuple[Skipped, ...] = ()

    def student(self, student: str) -> StudentSubmission:
        for entry in self.students:
            if entry.student == student:
                return entry
        raise KeyError(f"no submission from {student!r} in this download")


@dataclass(frozen=True)
class Parsed:
    """A file name read by a layout: who handed in which file, before choosing."""

    student: str
    file_name: str
    display_name: str | None = None
    lms_user_id: str | None = None
    timestamp: datetime | None = None
    late: bool | None = None
    order: int = 0


@dataclass(frozen=True)
class ReadContext:
    """What a layout needs besides a name: the notebooks looked for, the time zone of times
    without one, and the LMS assignment's title where its names carry it (Blackboard)."""

    notebooks: tuple[str, ...]
    tz: tzinfo = UTC
    title: str | None = None


_RESUBMISSION = re.compile(r"(?P<stem>.+)-(?P<n>\d+)")


def notebook_of(
    file_name: str, notebooks: Sequence[str], *, suffixes: bool = False
) -> tuple[str, int] | None:
    """(notebook, resubmission) for a file name; None if it is no expected notebook.
    ``suffixes``: a ``-N`` before ``.ipynb`` is a re-upload of the notebook."""
    if not file_name.endswith(".ipynb"):
        return None
    stem = file_name[: -len(".ipynb")]
    if stem in notebooks:
        return stem, 0
    if suffixes and (match := _RESUBMISSION.fullmatch(stem)) and match["stem"] in notebooks:
        return match["stem"], int(match["n"])
    return None


def slug(name: str) -> str:
    """A filesystem-safe lower-case id that keeps the letters of every script: a Latin
    letter whose decomposition starts with an ASCII letter is written as that letter (its
    accents dropped, as this slug always did: ``José`` -> ``jose``), every other letter and
    digit as it is, with its marks (``ß``, ``ø``, ``王``, ``γιώργος``, Devanagari's vowel
    signs), composed (NFC: a name typed decomposed gives the same slug); every run of ASCII
    characters that are no letter or digit is one underscore (``Jane  O'Neil-Smith`` ->
    ``jane_o_neil_smith``), other symbols are dropped. Empty when no letter or digit is
    left (``★``)."""
    out: list[str] = []
    mark_follows_kept = False
    for char in unicodedata.normalize("NFKD", name):
        kind = unicodedata.category(char)
        if char.isascii():
            mark_follows_kept = False
            out.append(char.lower() if char.isalnum() else "_")
        elif kind in _MARK_KINDS:
            # a mark of a letter kept as it is (γ + ́), not of one folded to ASCII (e + ́)
            if mark_follows_kept:
                out.append(char)
        elif kind in _LETTER_KINDS:
            mark_follows_kept = True
            out.append(char.lower())
        else:
            mark_follows_kept = False
    text = unicodedata.normalize("NFC", "".join(out))
    return re.sub(r"_+", "_", text).strip("_")


_LETTER_KINDS = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")
_MARK_KINDS = ("Mn", "Mc")


def id_part(text: str) -> str:
    """``text`` with what the student id rule refuses taken out: composed (NFC), each run of
    other characters than letters, digits, marks and ``. _ @ -`` one underscore, and nothing
    before its first letter or digit (``_ő`` of a Canvas name that starts with a connector)."""
    text = unicodedata.normalize("NFC", text)
    kept = []
    for char in text:
        kind = unicodedata.category(char)
        allowed = kind in _LETTER_KINDS or kind in _MARK_KINDS or char in PUNCTUATION
        kept.append(char if allowed else "_")
    cleaned = re.sub(r"_+", "_", "".join(kept))
    start = next(
        (i for i, char in enumerate(cleaned) if unicodedata.category(char) in _LETTER_KINDS),
        len(cleaned),
    )
    return cleaned[start:].rstrip("_")


def lms_student_id(name: str, own_id: str) -> str:
    """The student id ``<name>_<own id>`` (``own_id``: the LMS's own number for the student,
    which keeps namesakes apart), with ``name`` cut so that the id fits the id rule's
    length (:data:`instructor.student_ids.MAX_CHARS` characters, ``MAX_BYTES`` bytes); the
    LMS's own id alone when no letter or digit of the name is left."""
    suffix = f"_{own_id}"
    name = id_part(name)[: max(0, MAX_CHARS - len(suffix))]
    while name and len((name + suffix).encode("utf-8")) > MAX_BYTES:
        name = name[:-1]
    name = name.rstrip("_.@-")
    return f"{name}{suffix}" if name else own_id


class Lms:
    """One LMS: its download's names, its students' identities, its grade import files.

    Subclasses set the class attributes and override what differs from the defaults.
    """

    name: ClassVar[str]
    """The layout's name (``--lms``)."""
    example: str
    """One or two names as its download writes them, ``{nb}`` for a notebook's name."""
    detected: ClassVar[bool] = True
    """Tried when the layout is detected; False for a fallback tried only when none fits."""
    resubmission_suffixes: ClassVar[bool] = False
    """Whether a ``-N`` before ``.ipynb`` is a re-upload (Canvas)."""
    order_by_time: ClassVar[bool] = True
    """Whether the newest LMS time picks among a student's files of one notebook."""
    exports: ClassVar[tuple[str, ...]] = ()
    """The file names :meth:`export` writes on every run (more may follow per assignment)."""
    names_users: ClassVar[bool] = False
    """Whether its download names each student's own id in the LMS (Canvas's user id,
    Moodle's participant id), which its import matches (:meth:`identity`)."""

    def prepare(self, heads: Sequence[str], context: ReadContext) -> ReadContext:
        """Called once with every name of the zip before parsing; returns the context the
        names are read in (Blackboard finds its title here)."""
        return context

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        """Who handed the file ``name`` in; None if the name does not fit the layout."""
        raise NotImplementedError

    def ignored(self, name: str) -> str | None:
        """Why a file of the download is expected and not needed, or None."""
        return None

    def notebook(self, file_name: str, notebooks: Sequence[str]) -> tuple[str, int] | None:
        """(notebook, resubmission) of a submitted file's own name."""
        return notebook_of(file_name, notebooks, suffixes=self.resubmission_suffixes)

    def regroup(
        self, found: Mapping[str, list[tuple[Parsed, SubmittedFile]]]
    ) -> Mapping[str, list[tuple[Parsed, SubmittedFile]]]:
        """The files per student id, after the LMS's own rule for namesakes."""
        return found

    def identity(self, submission: StudentSubmission) -> LmsIdentity | None:
        """Who the student is in this LMS, beyond the student id (None: the id is all)."""
        if not self.names_users or not submission.lms_user_id:
            return None
        return LmsIdentity(self.name, submission.lms_user_id, submission.display_name)

    def say_unmapped(
        self, items: Sequence[GradeItem], config: LmsConfig, key: str, then: str
    ) -> None:
        """Log the assignments ``config`` gives no id (``key`` in ``lms.toml``) and what this
        LMS's import ``then`` does with their columns: a warning when ``lms.toml`` exists,
        else a note (without it, that is the documented default)."""
        unmapped = [item.name for item in items if not item.lms_id]
        if unmapped:
            (log.warning if config.path else log.info)(
                "%s: no %s for %s in %s: %s",
                self.exports[0],
                key,
                ", ".join(unmapped),
                config.where(),
                then,
            )

    def export(self, finals: Finals, folder: Path, config: LmsConfig) -> list[Path]:
        """Write this LMS's grade import files into ``folder``; returns them."""
        return []
