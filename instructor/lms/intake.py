"""Reading an LMS's "download all submissions" zip into nbgrader's ``submitted/`` folder.

``read_download`` names, for every student, the file chosen for each notebook of an
assignment, the older attempts it supersedes, when it was submitted and whether the LMS
called it late; every other file of the zip is listed with the reason it was not used.
``write_submissions`` then extracts the chosen files to
``submitted/<student>/<assignment>/<notebook>.ipynb`` with nbgrader's ``timestamp.txt``.

The layouts, as each LMS names the files of its download (``NB`` is the notebook's file
name, ``01_vector_sets.ipynb``):

``canvas``
    Canvas "Download Submissions": flat files ``<slug>_<user id>_<submission id>_NB``, with
    ``_LATE`` after the slug for a late submission: ``smithjane_123456_7891011_NB``,
    ``smithjane_LATE_123456_7891011_NB``. The slug is the student's sortable name, lower
    case, without separators. A file submitted again under the same name carries a ``-1``,
    ``-2`` suffix before ``.ipynb``: the highest suffix is the newest and wins. Student id:
    the slug (two students with the same slug become ``<slug>_<user id>``); the Canvas user
    id is kept (``lms_students.json``: Canvas's grade import matches it).
``moodle``
    Moodle "Download all submissions" (assign module, file submissions): a folder per student
    and plugin, ``<full name>_<participant id>_assignsubmission_file_/NB`` (with "download
    submissions in folders" off, the same name without the ``/``). Student id: the name as
    a filesystem-safe slug, then the participant id: ``Jane Smith`` 4242 ->
    ``jane_smith_4242``; the display name and participant id are kept
    (``lms_students.json``). The participant id is the assignment's own number for the
    student (Moodle's ``assign_user_mapping``), not the Moodle user id: only that
    assignment's grading worksheet upload matches it.
``blackboard``
    Blackboard Learn (Original) Grade Center "Download Assignment": flat files
    ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_NB`` and one receipt
    ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt`` per attempt (ignored). The
    same layout as nbgrader's documented ``zip_collect`` example. The username is read
    between the assignment name (a known prefix: ``assignment=``, else a notebook name, else
    the prefix all files share) and ``_attempt_``, so it may hold underscores and dots. The
    newest attempt per student and notebook wins.
``plain``
    ``<student>_NB`` or ``<student>/NB``.
a ``pattern``
    A regular expression matched against the whole name inside the zip, with named groups
    ``student`` and ``notebook`` (with or without ``.ipynb``), optionally ``timestamp``
    (``YYYY-MM-DD-HH-MM-SS`` or anything ``dateutil`` reads).

Timestamps: Blackboard's names carry the submission time, to the second, in the server's
time zone (``tz=``, UTC by default). Canvas and Moodle name no time: the best there is is
the zip entry's modification time (``ZipInfo.date_time``, which has no time zone either: read
in ``tz``), recorded with ``timestamp_source="zip entry"``; ``write_submissions`` writes it
to ``timestamp.txt`` only when asked (``zip_times=True``), since it may be the time of the
download rather than of the submission.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Literal

from .roster import LmsIdentity, roster_path, update_roster

__all__ = [
    "LAYOUTS",
    "Intake",
    "IntakeError",
    "Skipped",
    "StudentSubmission",
    "SubmissionExists",
    "SubmittedFile",
    "UnknownLayout",
    "lms_identities",
    "read_download",
    "slug",
    "timestamp_text",
    "write_submissions",
]

log = logging.getLogger(__name__)

Layout = Literal["canvas", "moodle", "blackboard", "plain"]
LAYOUTS: tuple[Layout, ...] = ("canvas", "moodle", "blackboard", "plain")
TimestampSource = Literal["lms", "zip entry"]

EXAMPLES = {
    "canvas": "smithjane_123456_7891011_{nb}.ipynb, smithjane_LATE_123456_7891011_{nb}-1.ipynb",
    "moodle": "Jane Smith_4242_assignsubmission_file_/{nb}.ipynb",
    "blackboard": "{nb}_jsmith_attempt_2026-11-20-10-15-02_{nb}.ipynb",
    "plain": "jsmith_{nb}.ipynb or jsmith/{nb}.ipynb",
}

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"
"""nbgrader's ``timestamp.txt`` format (``Exchange.timestamp_format``), read back by
``nbgrader.utils.parse_utc``."""

_BLACKBOARD_TIME = "%Y-%m-%d-%H-%M-%S"
_CANVAS = re.compile(
    r"(?P<slug>[^/]+?)(?P<late>_LATE)?_(?P<user_id>\d+)_(?P<submission_id>\d+)_(?P<file>[^/]+)"
)
_MOODLE = re.compile(
    r"(?P<name>[^/]+?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_"
    r"(?:/(?P<path>.+)|(?P<flat>[^/]+))"
)
_BLACKBOARD = re.compile(
    r"(?P<head>[^/]+)_attempt_(?P<time>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)(?:_(?P<file>[^/]+))?"
)
_RESUBMISSION = re.compile(r"(?P<stem>.+)-(?P<n>\d+)")
_JUNK_DIRS = ("__MACOSX/",)
_JUNK_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}


class IntakeError(ValueError):
    """An LMS download that cannot be read as asked."""


class UnknownLayout(IntakeError):
    """The zip's file names fit no layout, or several: pass ``lms`` or ``pattern``."""


class SubmissionExists(IntakeError):
    """``write_submissions`` would overwrite a different submission (pass ``replace=True``)."""


@dataclass(frozen=True)
class SubmittedFile:
    """One notebook file of a student's submission.

    Attributes:
        member: the file's name inside the zip.
        notebook: the assignment's notebook it is (``01_vector_sets``, no ``.ipynb``).
        timestamp: when it was submitted (aware, UTC), or None; see ``timestamp_source``.
        timestamp_source: ``"lms"`` when the LMS names the time (Blackboard, a pattern's
            ``timestamp`` group), ``"zip entry"`` for the zip entry's modification time
            (Canvas, Moodle, plain), None without a timestamp.
        late: Canvas's ``LATE`` mark (True or False); None where the LMS does not say.
        resubmission: Canvas's ``-N`` suffix (0 without one): the highest wins.
    """

    member: str
    notebook: str
    timestamp: datetime | None = None
    timestamp_source: TimestampSource | None = None
    late: bool | None = None
    resubmission: int = 0


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
        layout: ``canvas``, ``moodle``, ``blackboard``, ``plain`` or ``pattern``.
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
class _Parsed:
    """A file name read by a layout: who handed in which file, before choosing."""

    student: str
    file_name: str
    display_name: str | None = None
    lms_user_id: str | None = None
    timestamp: datetime | None = None
    late: bool | None = None


def slug(name: str) -> str:
    """A filesystem-safe lower-case id: accents dropped, every run of other characters than
    letters and digits an underscore (``Jane  O'Neil-Smith`` -> ``jane_o_neil_smith``)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", ascii_name.lower()).strip("_")


def timestamp_text(moment: datetime) -> str:
    """``moment`` as nbgrader's ``timestamp.txt`` holds it: UTC, ``%Y-%m-%d %H:%M:%S.%f %Z``."""
    return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def _safe_id(student: str) -> bool:
    return (
        bool(student.strip())
        and student not in {".", ".."}
        and not re.search(r"[/\\\x00-\x1f]", student)
    )


def _notebook_of(
    file_name: str, notebooks: Sequence[str], *, suffixes: bool
) -> tuple[str, int] | None:
    """(notebook, resubmission) for a file name; None if it is no expected notebook."""
    if not file_name.endswith(".ipynb"):
        return None
    stem = file_name[: -len(".ipynb")]
    if stem in notebooks:
        return stem, 0
    if suffixes and (match := _RESUBMISSION.fullmatch(stem)) and match["stem"] in notebooks:
        return match["stem"], int(match["n"])
    return None


def _blackboard_prefix(
    heads: Iterable[str], notebooks: Sequence[str], assignment: str | None
) -> str:
    """The assignment name Blackboard puts before every username."""
    heads = sorted(set(heads))
    candidates = [assignment] if assignment else sorted(notebooks, key=len, reverse=True)
    for candidate in candidates:
        if all(h.startswith(candidate + "_") and len(h) > len(candidate) + 1 for h in heads):
            return candidate
    if assignment is None and len(heads) > 1:
        common = os.path.commonprefix([heads[0], heads[-1]])
        if "_" in common:
            return common[: common.rindex("_")]
    raise IntakeError(
        "cannot tell the Blackboard assignment name from the usernames in "
        f"{heads[:3]}: pass the assignment name as Blackboard spells it (assignment=...)"
    )


def _parse_time(text: str, tz: tzinfo) -> datetime:
    try:
        moment = datetime.strptime(text, _BLACKBOARD_TIME)
    except ValueError:
        import dateutil.parser

        moment = dateutil.parser.parse(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


class _Reader:
    """The file-name rules of one layout."""

    def __init__(
        self,
        layout: str,
        notebooks: Sequence[str],
        tz: tzinfo,
        pattern: re.Pattern[str] | None = None,
        blackboard_prefix: str | None = None,
    ) -> None:
        self.layout = layout
        self.notebooks = notebooks
        self.tz = tz
        self.pattern = pattern
        self.blackboard_prefix = blackboard_prefix

    def parse(self, name: str) -> _Parsed | None:
        """Who handed the file in, or None if the name does not fit the layout."""
        return getattr(self, f"_{self.layout}")(name)

    def _canvas(self, name: str) -> _Parsed | None:
        match = _CANVAS.fullmatch(name)
        if not match:
            return None
        return _Parsed(
            student=match["slug"],
            file_name=match["file"],
            lms_user_id=match["user_id"],
            late=bool(match["late"]),
        )

    def _moodle(self, name: str) -> _Parsed | None:
        match = _MOODLE.fullmatch(name)
        if not match or match["plugin"] != "file":
            return None
        file_name = (match["path"] or match["flat"]).rsplit("/", 1)[-1]
        return _Parsed(
            student=f"{slug(match['name'])}_{match['participant']}",
            file_name=file_name,
            display_name=match["name"],
            lms_user_id=match["participant"],
        )

    def _blackboard(self, name: str) -> _Parsed | None:
        match = _BLACKBOARD.fullmatch(name)
        if not match or not match["file"]:
            return None
        prefix = self.blackboard_prefix or ""
        head = match["head"]
        username = head[len(prefix) + 1 :] if head.startswith(prefix + "_") else head
        return _Parsed(
            student=username,
            file_name=match["file"],
            timestamp=_parse_time(match["time"], self.tz),
        )

    def _plain(self, name: str) -> _Parsed | None:
        parts = name.split("/")
        if len(parts) == 2:
            return _Parsed(student=parts[0], file_name=parts[1])
        if len(parts) != 1:
            return None
        for notebook in sorted(self.notebooks, key=len, reverse=True):
            suffix = f"_{notebook}.ipynb"
            if name.endswith(suffix) and len(name) > len(suffix):
                return _Parsed(student=name[: -len(suffix)], file_name=f"{notebook}.ipynb")
        return None

    def _pattern(self, name: str) -> _Parsed | None:
        assert self.pattern is not None
        match = self.pattern.fullmatch(name)
        if not match:
            return None
        notebook = match["notebook"]
        if not notebook.endswith(".ipynb"):
            notebook += ".ipynb"
        stamp = match.groupdict().get("timestamp")
        return _Parsed(
            student=match["student"],
            file_name=notebook,
            timestamp=_parse_time(stamp, self.tz) if stamp else None,
        )


def _is_junk(name: str) -> bool:
    return name.startswith(_JUNK_DIRS) or name.rsplit("/", 1)[-1] in _JUNK_FILES


def _is_receipt(name: str) -> bool:
    match = _BLACKBOARD.fullmatch(name[: -len(".txt")]) if name.endswith(".txt") else None
    return bool(match and not match["file"])


def _unknown_layout(names: Sequence[str], why: str, notebook: str) -> UnknownLayout:
    shown = "\n".join(f"  {name}" for name in names[:6])
    more = f"\n  ... and {len(names) - 6} more" if len(names) > 6 else ""
    layouts = "\n".join(
        f"  --lms {layout}: {EXAMPLES[layout].format(nb=notebook)}" for layout in LAYOUTS
    )
    return UnknownLayout(
        f"{why}. Notebooks in the zip:\n{shown}{more}\n"
        f"Name the layout:\n{layouts}\n"
        "or pass --pattern with a regular expression for the whole name inside the zip, "
        "with named groups 'student' and 'notebook' and optionally 'timestamp', e.g. "
        r"--pattern '(?P<student>[^/]+)/(?P<notebook>[^/]+)\.ipynb'"
    )


def _detect(names: Sequence[str], readers: dict[str, _Reader], notebook: str) -> str:
    """The one layout whose names fit every notebook of the zip (the LMS layouts first;
    ``plain`` only if none of them fits, since their names also read as plain ones)."""
    if not names:
        raise _unknown_layout([], "the zip holds no notebook (.ipynb)", notebook)
    misfits = {
        layout: [name for name in names if not readers[layout].parse(name)] for layout in LAYOUTS
    }
    fitting = [layout for layout in ("canvas", "moodle", "blackboard") if not misfits[layout]]
    if len(fitting) > 1:
        raise _unknown_layout(
            names, f"the file names fit several layouts ({', '.join(fitting)})", notebook
        )
    if fitting:
        return fitting[0]
    if not misfits["plain"]:
        return "plain"
    closest = min(LAYOUTS, key=lambda layout: len(misfits[layout]))
    odd = misfits[closest]
    raise _unknown_layout(
        odd + [name for name in names if name not in odd],
        f"the file names fit no layout (the closest, {closest}, cannot read {len(odd)} of "
        f"{len(names)}, listed first)",
        notebook,
    )


def read_download(
    zip_path: str | Path,
    notebook_names: list[str],
    lms: str | None = None,
    pattern: str | None = None,
    *,
    assignment: str | None = None,
    tz: tzinfo = UTC,
) -> Intake:
    """Read an LMS download: who handed in which notebook, and what was left out.

    Args:
        zip_path: the zip the LMS gave.
        notebook_names: the assignment's notebooks, with or without ``.ipynb``.
        lms: ``canvas``, ``moodle``, ``blackboard`` or ``plain``; None to detect the layout
            (each is tried; the one that reads every notebook's name is used).
        pattern: instead of ``lms``, a regular expression for the whole name inside the zip
            with named groups ``student`` and ``notebook``, optionally ``timestamp``.
        assignment: Blackboard only: the assignment name its file names start with, when it
            is none of the notebook names and cannot be told from the usernames.
        tz: the time zone of times without one (Blackboard's names, zip entries).

    Raises:
        UnknownLayout: the names fit no layout, or several (the message shows some names
            and how to pass ``--lms`` or ``--pattern``).
        IntakeError: not a zip, a bad ``lms`` or ``pattern``, no Blackboard prefix.
    """
    notebooks = tuple(n.removesuffix(".ipynb") for n in notebook_names)
    if not notebooks:
        raise IntakeError("no notebook names given: which notebooks does the assignment have?")
    if lms is not None and pattern is not None:
        raise IntakeError("pass either an LMS layout or a pattern, not both")
    if lms is not None and lms not in LAYOUTS:
        raise IntakeError(f"unknown LMS {lms!r}: use one of {', '.join(LAYOUTS)}")
    compiled = None
    if pattern is not None:
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            raise IntakeError(
                f"--pattern {pattern!r} is not a regular expression: {error}"
            ) from None
        missing = {"student", "notebook"} - set(compiled.groupindex)
        if missing:
            raise IntakeError(
                f"--pattern {pattern!r} lacks the named groups {sorted(missing)}: write them "
                "as (?P<student>...) and (?P<notebook>...)"
            )
    try:
        with zipfile.ZipFile(zip_path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
    except zipfile.BadZipFile as error:
        raise IntakeError(f"{zip_path} is not a zip file: {error}") from None

    ignored: list[Skipped] = []
    unmatched: list[Skipped] = []
    entries: list[zipfile.ZipInfo] = []
    for info in infos:
        if _is_junk(info.filename):
            ignored.append(Skipped(info.filename, "operating system metadata"))
        else:
            entries.append(info)
    ipynb = [info.filename for info in entries if info.filename.endswith(".ipynb")]

    heads = [
        match["head"]
        for info in entries
        if (match := _BLACKBOARD.fullmatch(info.filename.removesuffix(".txt")))
    ]
    readers = {layout: _Reader(layout, notebooks, tz) for layout in LAYOUTS}
    layout = "pattern" if compiled else lms or _detect(ipynb, readers, notebooks[0])
    reader = _Reader(layout, notebooks, tz, pattern=compiled)
    if layout == "blackboard":
        reader.blackboard_prefix = _blackboard_prefix(heads, notebooks, assignment)

    found: dict[str, list[tuple[_Parsed, SubmittedFile]]] = defaultdict(list)
    for info in entries:
        name = info.filename
        if layout == "blackboard" and _is_receipt(name):
            ignored.append(Skipped(name, "Blackboard submission receipt"))
            continue
        if not name.endswith(".ipynb"):
            unmatched.append(Skipped(name, "not a notebook (.ipynb)"))
            continue
        try:
            parsed = reader.parse(name)
        except (ValueError, OverflowError) as error:
            unmatched.append(Skipped(name, f"unreadable timestamp: {error}"))
            continue
        if parsed is None:
            how = f"--pattern {pattern}" if compiled else EXAMPLES[layout].format(nb=notebooks[0])
            unmatched.append(Skipped(name, f"not named as the {layout} layout names files ({how})"))
            continue
        notebook = _notebook_of(parsed.file_name, notebooks, suffixes=layout == "canvas")
        if notebook is None:
            unmatched.append(
                Skipped(
                    name,
                    f"{parsed.file_name!r} is none of the assignment's notebooks "
                    f"({', '.join(n + '.ipynb' for n in notebooks)})",
                )
            )
            continue
        if not _safe_id(parsed.student):
            unmatched.append(Skipped(name, f"student id {parsed.student!r} is no folder name"))
            continue
        if parsed.timestamp is not None:
            stamp, source = parsed.timestamp, "lms"
        else:
            stamp = datetime(*info.date_time, tzinfo=tz).astimezone(UTC)
            source = "zip entry"
        found[parsed.student].append(
            (
                parsed,
                SubmittedFile(
                    member=name,
                    notebook=notebook[0],
                    timestamp=stamp,
                    timestamp_source=source,
                    late=parsed.late,
                    resubmission=notebook[1],
                ),
            )
        )

    if layout == "canvas":
        found = _split_shared_slugs(found)
    students = []
    for student, files in sorted(found.items()):
        chosen, superseded, conflicts = _choose(files, notebooks, by_time=layout != "canvas")
        unmatched.extend(conflicts)
        if chosen:
            first = files[0][0]
            students.append(
                StudentSubmission(
                    student=student,
                    display_name=first.display_name,
                    lms_user_id=first.lms_user_id,
                    files=chosen,
                    superseded=superseded,
                )
            )
    return Intake(
        layout=layout,
        notebooks=notebooks,
        students=tuple(students),
        unmatched=tuple(sorted(unmatched, key=lambda s: s.member)),
        ignored=tuple(sorted(ignored, key=lambda s: s.member)),
    )


def _split_shared_slugs(
    found: dict[str, list[tuple[_Parsed, SubmittedFile]]],
) -> dict[str, list[tuple[_Parsed, SubmittedFile]]]:
    """Two Canvas students with one slug (two Jane Smiths) become ``<slug>_<user id>``."""
    result: dict[str, list[tuple[_Parsed, SubmittedFile]]] = defaultdict(list)
    for student, files in found.items():
        users = {parsed.lms_user_id for parsed, _ in files}
        for parsed, file in files:
            key = f"{student}_{parsed.lms_user_id}" if len(users) > 1 else student
            result[key].append((replace(parsed, student=key), file))
    return result


def _choose(
    files: list[tuple[_Parsed, SubmittedFile]], notebooks: Sequence[str], *, by_time: bool
) -> tuple[tuple[SubmittedFile, ...], tuple[SubmittedFile, ...], list[Skipped]]:
    """The newest file per notebook: the highest Canvas suffix, else the latest time the LMS
    names. Files that nothing orders are conflicts, all left out."""
    chosen: list[SubmittedFile] = []
    superseded: list[SubmittedFile] = []
    conflicts: list[Skipped] = []
    for notebook in notebooks:
        candidates = [file for _, file in files if file.notebook == notebook]
        if not candidates:
            continue

        def key(file: SubmittedFile) -> tuple[int, datetime]:
            lms_time = file.timestamp if by_time and file.timestamp_source == "lms" else None
            return file.resubmission, lms_time or datetime.min.replace(tzinfo=UTC)

        candidates.sort(key=key)
        newest = candidates[-1]
        ties = [file for file in candidates if key(file) == key(newest)]
        if len(ties) > 1:
            conflicts.extend(
                Skipped(
                    file.member,
                    f"{len(ties)} files for notebook {notebook} of one student and nothing "
                    "tells which is newer: " + ", ".join(t.member for t in ties),
                )
                for file in ties
            )
            continue
        chosen.append(newest)
        superseded.extend(candidates[:-1])
    return tuple(chosen), tuple(superseded), conflicts


def write_submissions(
    intake: Intake,
    zip_path: str | Path,
    submitted_dir: str | Path,
    assignment: str,
    *,
    replace: bool = False,
    zip_times: bool = False,
) -> list[Path]:
    """Extract the chosen files to ``submitted/<student>/<assignment>/<notebook>.ipynb``.

    Each student's ``timestamp.txt`` (nbgrader's format, UTC: ``timestamp_text``) holds the
    newest time the LMS names for the chosen files (Blackboard, a pattern's ``timestamp``);
    with ``zip_times=True`` also the zip entries' times (Canvas, Moodle, plain). nbgrader's
    autograde reads it (``CourseDirectory.get_existing_timestamp``) to compute lateness.

    Nothing is written if a file already there differs, unless ``replace=True``
    (``SubmissionExists`` lists them all). What is done is logged file by file.

    Who each student is in the LMS (Canvas's user id, Moodle's participant id: the ids the
    grade exports need, which the student ids are not) goes to ``lms_students.json`` next
    to ``submitted_dir`` (:mod:`.roster`), for this assignment.

    Returns:
        The files written (new or replaced); files already identical are left as they are.
    """
    if not _safe_id(assignment):
        raise IntakeError(f"assignment {assignment!r} is no folder name")
    root = Path(submitted_dir)
    planned: list[tuple[Path, bytes]] = []
    with zipfile.ZipFile(zip_path) as archive:
        for entry in intake.students:
            folder = root / entry.student / assignment
            for file in entry.files:
                planned.append((folder / f"{file.notebook}.ipynb", archive.read(file.member)))
            sources = {"lms", "zip entry"} if zip_times else {"lms"}
            times = [f.timestamp for f in entry.files if f.timestamp_source in sources]
            if times:
                planned.append((folder / "timestamp.txt", timestamp_text(max(times)).encode()))
    different = [path for path, data in planned if path.exists() and path.read_bytes() != data]
    if different and not replace:
        shown = "\n".join(f"  {path}" for path in different[:10])
        more = f"\n  ... and {len(different) - 10} more" if len(different) > 10 else ""
        raise SubmissionExists(
            f"{len(different)} submitted files differ from this download:\n{shown}{more}\n"
            "nothing was written; pass replace=True (--replace) to overwrite them"
        )
    written = []
    for path, data in planned:
        if path.exists() and path.read_bytes() == data:
            log.info("unchanged %s", path)
            continue
        action = "replaced" if path.exists() else "wrote"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        log.info("%s %s", action, path)
        written.append(path)
    if update_roster(roster_path(root), assignment, lms_identities(intake)):
        log.info("updated %s", roster_path(root))
    return written


def lms_identities(intake: Intake) -> dict[str, LmsIdentity | None]:
    """student -> who the student is in the LMS (Canvas's user id, Moodle's participant
    id and name); None for layouts that name no such id (their student id is all there is)."""
    if intake.layout not in ("canvas", "moodle"):
        return {entry.student: None for entry in intake.students}
    return {
        entry.student: LmsIdentity(intake.layout, entry.lms_user_id, entry.display_name)
        if entry.lms_user_id
        else None
        for entry in intake.students
    }
