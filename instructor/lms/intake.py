"""Reading an LMS's "download all submissions" zip into nbgrader's ``submitted/folder``.

``read_download`` names, for every student, the file chosen for each notebook of an
assignment, the older attempts it supersedes, when it was submitted and whether the LMS
called it late; every other file of the zip is listed with the reason it was not used.
``write_submissions`` then extracts the chosen files to
``submitted/<student>/<assignment>/<notebook>.ipynb`` with nbgrader's ``timestamp.txt``.

The layouts are the LMS modules' (:data:`instructor.lms.LMSS`: each module's docstring
says how that LMS names its files, from its source or documentation), or a ``pattern``
(:class:`instructor.lms.plain.Pattern`).

Timestamps: only times the LMS gave are written to ``timestamp.txt``: Blackboard's attempt
times, a pattern's ``timestamp`` group, or a times file exported from the LMS
(:mod:`.times`, applied with :func:`with_times`). Canvas and Moodle name no time: the zip
entry's modification time is recorded with ``timestamp_source="zip entry"`` (Canvas's zipper
stamps every entry with the time the zip was built) and written only when asked
(``zip_times=True``).
"""

from __future__ import annotations

import filecmp
import logging
import re
import shutil
import tempfile
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Protocol

from ..student_ids import id_problem, refusal
from . import LMSS, lms_named, lms_names
from .base import (
    Intake,
    IntakeError,
    Lms,
    Parsed,
    ReadContext,
    Skipped,
    StudentSubmission,
    SubmissionExists,
    SubmittedFile,
    TimeSource,
    UnknownLayout,
    slug,
)
from .plain import Pattern
from .roster import LmsIdentity, roster_path, update_roster

__all__ = [
    "LAYOUTS",
    "collect_zip",
    "DownloadLimits",
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
    "with_times",
    "write_submissions",
]

log = logging.getLogger(__name__)

LAYOUTS: tuple[str, ...] = lms_names()
EXAMPLES = {lms.name: lms.example for lms in LMSS}

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"
"""nbgrader's ``timestamp.txt`` format (``Exchange.timestamp_format``), read back by
``nbgrader.utils.parse_utc``."""

MIB = 2**20
CHUNK_BYTES = MIB
"""What is read from a zip member at a time: never a whole member in memory."""


@dataclass(frozen=True)
class DownloadLimits:
    """How much of a download is read: per file (member) and for the whole download.

    The defaults: 32 MiB per file (the course's executed notebooks, figures included, are
    under 0.5 MiB; staging reads no larger notebook either) and 1024 MiB per download (a
    class of 300 handing in 3 MiB each). ``--max-file-mib`` and ``--max-download-mib`` change
    them. Each is checked against the sizes the zip declares, then again on the bytes
    themselves while they are decompressed, ``CHUNK_BYTES`` at a time.
    """

    file_bytes: int = 32 * MIB
    download_bytes: int = 1024 * MIB

    def file_text(self) -> str:
        return f"{_mib(self.file_bytes)} per file (--max-file-mib)"

    def download_text(self) -> str:
        return f"{_mib(self.download_bytes)} per download (--max-download-mib)"


def _mib(size: int) -> str:
    return f"{size / MIB:g} MiB"


_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError)
"""What reading one member may raise: a bad CRC or stream, encryption (``RuntimeError``), a
compression zipfile does not know: that member is refused, the others are read."""


def _member_chunks(archive: zipfile.ZipFile, member: str, limit: int) -> Iterator[bytes]:
    """The bytes of ``member``, decompressed ``CHUNK_BYTES`` at a time; at most ``limit + 1``
    bytes come out (one more than allowed shows that there is more)."""
    left = limit + 1
    with archive.open(member) as stream:
        while left > 0 and (chunk := stream.read(min(CHUNK_BYTES, left))):
            left -= len(chunk)
            yield chunk


def _size_problem(
    archive: zipfile.ZipFile, member: str, total: int, limits: DownloadLimits
) -> tuple[str, int]:
    """Why ``member`` is refused (``""``: it is not), and its size, the download's files
    so far taking ``total`` bytes."""
    declared = archive.getinfo(member).file_size
    if declared > limits.file_bytes:
        return f"declares {declared:,} bytes, over the limit of {limits.file_text()}", 0
    if total + declared > limits.download_bytes:
        return f"its {declared:,} bytes would pass the limit of {limits.download_text()}", 0
    try:
        size = sum(len(chunk) for chunk in _member_chunks(archive, member, limits.file_bytes))
    except _ZIP_ERRORS as error:
        return f"cannot be read from the zip ({type(error).__name__}: {error})", 0
    if size > limits.file_bytes:
        return (
            f"declares {declared:,} bytes but holds more than the limit of {limits.file_text()}",
            0,
        )
    if total + size > limits.download_bytes:
        return f"its {size:,} bytes would pass the limit of {limits.download_text()}", 0
    return "", size


def _within_limits(
    zip_path: str | Path, students: list[StudentSubmission], limits: DownloadLimits
) -> tuple[list[StudentSubmission], list[Skipped]]:
    """``students`` with only the chosen files that fit ``limits``, and the refused ones.

    Each chosen file is checked against the size the zip declares, then decompressed (in
    chunks, never past the limit, never kept) and counted: a member that declares little
    and holds more is refused too. Files count against the download's limit in the order of
    the students' ids and the notebooks; one that would pass it is refused, and the files
    after it are still read.
    """
    refused: list[Skipped] = []
    kept: list[StudentSubmission] = []
    total = 0
    with zipfile.ZipFile(zip_path) as archive:
        for entry in students:
            files = []
            for file in entry.files:
                problem, size = _size_problem(archive, file.member, total, limits)
                if problem:
                    refused.append(Skipped(file.member, f"refused: {problem}"))
                else:
                    total += size
                    files.append(file)
            if files:
                kept.append(replace(entry, files=tuple(files)))
    return kept, refused


ID_REMEDY = (
    "Its files are not used: rename them in the zip, or pass --pattern with "
    "(?P<student>...) around a part of the names that fits (such as the LMS's user id); "
    "lms_students.json next to submitted/ (instructor/lms/roster.py) keeps which LMS user "
    "each student id is for the grade exports."
)
"""What to do about a refused id from a download (:func:`instructor.student_ids.refusal`)."""

_JUNK_DIRS = ("__MACOSX/",)
_JUNK_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}


def timestamp_text(moment: datetime) -> str:
    """``moment`` as nbgrader's ``timestamp.txt`` holds it: UTC, ``%Y-%m-%d %H:%M:%S.%f %Z``."""
    return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def _folder_name(name: str) -> bool:
    """Whether ``name`` (an assignment's) is one folder name: no path, no control character."""
    return bool(name.strip()) and name not in {".", ".."} and not re.search(r"[/\\\x00-\x1f]", name)


def _is_junk(name: str) -> bool:
    return name.startswith(_JUNK_DIRS) or name.rsplit("/", 1)[-1] in _JUNK_FILES


def _unknown_layout(names: Sequence[str], why: str, notebook: str) -> UnknownLayout:
    shown = "\n".join(f"  {name}" for name in names[:6])
    more = f"\n  ... and {len(names) - 6} more" if len(names) > 6 else ""
    layouts = "\n".join(f"  --lms {lms.name}: {lms.example.format(nb=notebook)}" for lms in LMSS)
    return UnknownLayout(
        f"{why}. Notebooks in the zip:\n{shown}{more}\n"
        f"Name the layout:\n{layouts}\n"
        "or pass --pattern with a regular expression for the whole name inside the zip, "
        "with named groups 'student' and 'notebook' and optionally 'timestamp', e.g. "
        r"--pattern '(?P<student>[^/]+)/(?P<notebook>[^/]+)\.ipynb'"
    )


def _fits(lms: Lms, name: str, context: ReadContext) -> bool:
    try:
        return lms.parse(name, context) is not None
    except (ValueError, OverflowError):
        return False


def _detect(names: Sequence[str], context: ReadContext) -> Lms:
    """The one LMS whose names fit every notebook of the zip (the LMSs first; a fallback
    such as ``plain`` only if none of them fits, since their names also read as plain)."""
    notebook = context.notebooks[0]
    if not names:
        raise _unknown_layout([], "the zip holds no notebook (.ipynb)", notebook)
    misfits = {lms.name: [n for n in names if not _fits(lms, n, context)] for lms in LMSS}
    fitting = [lms for lms in LMSS if lms.detected and not misfits[lms.name]]
    if len(fitting) > 1:
        raise _unknown_layout(
            names,
            f"the file names fit several layouts ({', '.join(lms.name for lms in fitting)})",
            notebook,
        )
    if fitting:
        return fitting[0]
    fallback = [lms for lms in LMSS if not lms.detected and not misfits[lms.name]]
    if fallback:
        return fallback[0]
    closest = min(LMSS, key=lambda lms: len(misfits[lms.name]))
    odd = misfits[closest.name]
    raise _unknown_layout(
        odd + [name for name in names if name not in odd],
        f"the file names fit no layout (the closest, {closest.name}, cannot read {len(odd)} of "
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
    limits: DownloadLimits = DownloadLimits(),
) -> Intake:
    """Read an LMS download: who handed in which notebook, and what was left out.

    Args:
        zip_path: the zip the LMS gave.
        notebook_names: the assignment's notebooks, with or without ``.ipynb``.
        lms: an LMS's name (:data:`LAYOUTS`); None to detect the layout (each is tried;
            the one that reads every notebook's name is used).
        pattern: instead of ``lms``, a regular expression for the whole name inside the zip
            with named groups ``student`` and ``notebook``, optionally ``timestamp``.
        assignment: the LMS assignment's title where its names carry it (Blackboard:
            ``lms.toml``'s ``blackboard_title``), when it is none of the notebook names.
        tz: the time zone of times without one (Blackboard's names, zip entries).
        limits: the most read per file and per download (:class:`DownloadLimits`); a chosen
            file past them is listed in ``unmatched`` with why, and the others are read.

    Raises:
        UnknownLayout: the names fit no layout, or several (the message shows some names
            and how to pass ``--lms`` or ``--pattern``).
        IntakeError: not a zip, a bad ``lms`` or ``pattern``, no Blackboard title.
    """
    notebooks = tuple(n.removesuffix(".ipynb") for n in notebook_names)
    if not notebooks:
        raise IntakeError("no notebook names given: which notebooks does the assignment have?")
    if lms is not None and pattern is not None:
        raise IntakeError("pass either an LMS layout or a pattern, not both")
    if lms is not None and lms not in LAYOUTS:
        raise IntakeError(f"unknown LMS {lms!r}: use one of {', '.join(LAYOUTS)}")
    chosen_pattern = Pattern(pattern) if pattern is not None else None
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
    context = ReadContext(notebooks, tz, assignment)
    reader: Lms
    if chosen_pattern is not None:
        reader = chosen_pattern
    elif lms is not None:
        reader = lms_named(lms)
    else:
        reader = _detect(ipynb, context)
    context = reader.prepare([info.filename for info in entries], context)

    found: dict[str, list[tuple[Parsed, SubmittedFile]]] = defaultdict(list)
    for info in entries:
        name = info.filename
        if reason := reader.ignored(name):
            ignored.append(Skipped(name, reason))
            continue
        if not name.endswith(".ipynb"):
            unmatched.append(Skipped(name, "not a notebook (.ipynb)"))
            continue
        try:
            parsed = reader.parse(name, context)
        except (ValueError, OverflowError) as error:
            unmatched.append(Skipped(name, f"unreadable timestamp: {error}"))
            continue
        if parsed is None:
            how = reader.example.format(nb=notebooks[0])
            unmatched.append(
                Skipped(name, f"not named as the {reader.name} layout names files ({how})")
            )
            continue
        notebook = reader.notebook(parsed.file_name, notebooks)
        if notebook is None:
            unmatched.append(
                Skipped(
                    name,
                    f"{parsed.file_name!r} is none of the assignment's notebooks "
                    f"({', '.join(n + '.ipynb' for n in notebooks)})",
                )
            )
            continue
        if parsed.timestamp is not None:
            stamp, source = parsed.timestamp, TimeSource.LMS
        else:
            stamp = datetime(*info.date_time, tzinfo=tz).astimezone(UTC)
            source = TimeSource.ZIP_ENTRY
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
                    order=parsed.order,
                ),
            )
        )

    students = []
    for student, files in sorted(reader.regroup(found).items()):
        # The final id (after an LMS's rule for namesakes) is the one that must fit: every
        # layout and --pattern alike.
        if id_problem(student):
            why = refusal(student, f"the {reader.name} names of the zip", ID_REMEDY)
            unmatched.extend(Skipped(file.member, why) for _, file in files)
            continue
        chosen, superseded, conflicts = _choose(files, notebooks, by_time=reader.order_by_time)
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
    students, too_large = _within_limits(zip_path, students, limits)
    unmatched.extend(too_large)
    return Intake(
        layout=reader.name,
        notebooks=notebooks,
        students=tuple(students),
        unmatched=tuple(sorted(unmatched, key=lambda s: s.member)),
        ignored=tuple(sorted(ignored, key=lambda s: s.member)),
    )


def _choose(
    files: list[tuple[Parsed, SubmittedFile]], notebooks: Sequence[str], *, by_time: bool
) -> tuple[tuple[SubmittedFile, ...], tuple[SubmittedFile, ...], list[Skipped]]:
    """The newest file per notebook: the highest re-upload suffix, then the LMS's own order
    (Canvas's attachment id), else the latest time the LMS names. Files that nothing orders
    are conflicts, all left out."""
    chosen: list[SubmittedFile] = []
    superseded: list[SubmittedFile] = []
    conflicts: list[Skipped] = []
    for notebook in notebooks:
        candidates = [file for _, file in files if file.notebook == notebook]
        if not candidates:
            continue

        def key(file: SubmittedFile) -> tuple[int, int, datetime]:
            lms_time = file.timestamp if by_time and file.timestamp_source == "lms" else None
            return file.resubmission, file.order, lms_time or datetime.min.replace(tzinfo=UTC)

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


def with_times(intake: Intake, times: Mapping[str, datetime]) -> tuple[Intake, list[str]]:
    """``intake`` with the submission times of a times file (:mod:`.times`): ``times`` maps
    a student id or LMS user id to when the LMS says the student submitted. Returns the
    intake and the keys of ``times`` that name no student of it."""
    used: set[str] = set()
    students = []
    for entry in intake.students:
        key = next((k for k in (entry.student, entry.lms_user_id) if k and k in times), None)
        if key is None:
            students.append(entry)
            continue
        used.add(key)
        files = tuple(
            replace(f, timestamp=times[key], timestamp_source=TimeSource.TIMES_FILE)
            for f in entry.files
        )
        students.append(replace(entry, files=files))
    return replace(intake, students=tuple(students)), sorted(set(times) - used)


def write_submissions(
    intake: Intake,
    zip_path: str | Path,
    submitted_dir: str | Path,
    assignment: str,
    *,
    replace: bool = False,
    zip_times: bool = False,
    limits: DownloadLimits = DownloadLimits(),
) -> list[Path]:
    """Extract the chosen files to ``submitted/<student>/<assignment>/<notebook>.ipynb``.

    Each student's ``timestamp.txt`` (nbgrader's format, UTC: ``timestamp_text``) holds the
    newest time the LMS gave for the chosen files (Blackboard, a pattern's ``timestamp``, a
    times file: :func:`with_times`); with ``zip_times=True`` also the zip entries' times. nbgrader's
    autograde reads it (``CourseDirectory.get_existing_timestamp``) to compute lateness.

    Every file is first copied out of the zip into a scratch folder next to
    ``submitted_dir``, ``CHUNK_BYTES`` at a time and within ``limits`` (:func:`read_download`
    refused what passes them; a zip changed since, or an intake made otherwise, stops here
    with an :class:`IntakeError` naming the member, and nothing is written). Nothing is
    written either if a file already there differs, unless ``replace=True``
    (``SubmissionExists`` lists them all). What is done is logged file by file.

    Who each student is in the LMS (Canvas's user id, Moodle's participant id: the ids the
    grade exports need, which the student ids are not) goes to ``lms_students.json`` next
    to ``submitted_dir`` (:mod:`.roster`), for this assignment.

    Returns:
        The files written (new or replaced); files already identical are left as they are.
    """
    if not _folder_name(assignment):
        raise IntakeError(f"assignment {assignment!r} is no folder name")
    for entry in intake.students:
        # read_download left such ids out; an Intake made otherwise is checked here too.
        if id_problem(entry.student):
            raise IntakeError(refusal(entry.student, "the download", ID_REMEDY))
    root = Path(submitted_dir)
    root.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root.parent, prefix=".download-") as scratch:
        planned = _extract(intake, zip_path, root, assignment, Path(scratch), limits, zip_times)
        different = [path for path, copy in planned if path.exists() and not _same(path, copy)]
        if different and not replace:
            shown = "\n".join(f"  {path}" for path in different[:10])
            more = f"\n  ... and {len(different) - 10} more" if len(different) > 10 else ""
            raise SubmissionExists(
                f"{len(different)} submitted files differ from this download:\n{shown}{more}\n"
                "nothing was written; pass replace=True (--replace) to overwrite them"
            )
        written = []
        for path, copy in planned:
            if path.exists() and _same(path, copy):
                log.info("unchanged %s", path)
                continue
            action = "replaced" if path.exists() else "wrote"
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(copy, path)
            log.info("%s %s", action, path)
            written.append(path)
    if update_roster(roster_path(root), assignment, lms_identities(intake)):
        log.info("updated %s", roster_path(root))
    return written


def _same(path: Path, copy: Path) -> bool:
    """Whether two files hold the same bytes (compared in chunks, never read whole)."""
    return path.is_file() and filecmp.cmp(path, copy, shallow=False)


def _extract(
    intake: Intake,
    zip_path: str | Path,
    root: Path,
    assignment: str,
    scratch: Path,
    limits: DownloadLimits,
    zip_times: bool,
) -> list[tuple[Path, Path]]:
    """(where each file goes, its copy in ``scratch``), copied out of the zip in chunks
    within ``limits``; raises :class:`IntakeError` naming the first member past them."""
    planned: list[tuple[Path, Path]] = []
    total = 0
    with zipfile.ZipFile(zip_path) as archive:
        for number, entry in enumerate(intake.students):
            folder = root / entry.student / assignment
            for file in entry.files:
                copy = scratch / f"{number}-{file.notebook}.ipynb"
                size = 0
                with copy.open("wb") as out:
                    try:
                        for chunk in _member_chunks(archive, file.member, limits.file_bytes):
                            size += len(chunk)
                            if size > limits.file_bytes or total + size > limits.download_bytes:
                                raise IntakeError(
                                    f"{file.member}: more bytes than read before, past the "
                                    f"limit of {limits.file_text()} or "
                                    f"{limits.download_text()} (the zip changed?); nothing "
                                    "was written"
                                )
                            out.write(chunk)
                    except _ZIP_ERRORS as error:
                        raise IntakeError(
                            f"{file.member}: cannot be read from the zip any more "
                            f"({type(error).__name__}: {error}); nothing was written"
                        ) from None
                total += size
                planned.append((folder / f"{file.notebook}.ipynb", copy))
            moment = entry.trusted_timestamp(zip_times)
            if moment is not None:
                stamp = scratch / f"{number}-timestamp.txt"
                stamp.write_text(timestamp_text(moment))
                planned.append((folder / "timestamp.txt", stamp))
    return planned


def lms_identities(intake: Intake) -> dict[str, LmsIdentity | None]:
    """student -> who the student is in the LMS (Canvas's user id, Moodle's participant
    id and name); None for layouts that name no such id (their student id is all there is)."""
    reader = lms_named(intake.layout) if intake.layout in LAYOUTS else None
    return {entry.student: reader.identity(entry) if reader else None for entry in intake.students}


class IntakeCourse(Protocol):
    """What :func:`collect_zip` reads of an nbgrader course
    (:class:`instructor.classroom.grader.course.NbgraderCourse`)."""

    api: Any
    deadlines: Any

    def source_notebook_names(self, assignment: str) -> list[str]: ...

    def source_folder(self, assignment: str) -> Path: ...

    def submitted_folder(self) -> Path: ...


PLAIN_PENALTIES = (
    "nbgrader.plugins.LateSubmissionPlugin",
    "nbgrader.plugins.latesubmission.LateSubmissionPlugin",
)
"""nbgrader's own late plugin: ``none`` or ``zero``, which need no more than "late"."""


def _penalty_needs_time(course: IntakeCourse) -> bool:
    """Whether the course's late penalty depends on how late (any plugin but nbgrader's
    own ``none``/``zero`` one, e.g. ``PerHourPenalty``)."""
    config = course.api.config
    section = config.get("AssignLatePenalties", {})
    plugin = section.get("plugin_class", PLAIN_PENALTIES[0]) if section else PLAIN_PENALTIES[0]
    if not isinstance(plugin, str):
        plugin = f"{plugin.__module__}.{plugin.__qualname__}"
    return plugin not in PLAIN_PENALTIES


def collect_zip(
    course: IntakeCourse,
    assignment: str,
    archive: Path,
    *,
    lms: str | None = None,
    pattern: str | None = None,
    replace: bool = False,
    zip_times: bool = False,
    times: Path | None = None,
    limits: DownloadLimits | None = None,
    log: Callable[[str], None] = print,
) -> Intake:
    """Unpack an LMS download of ``assignment`` into ``course``'s ``submitted/``.

    ``course`` is an :class:`instructor.classroom.grader.course.NbgraderCourse`. The chosen
    file of each notebook goes to
    ``submitted/<student>/<assignment>/`` with nbgrader's ``timestamp.txt`` where the LMS
    gave a time: in its names (Blackboard), or in ``times`` (a CSV the instructor exported
    from the LMS, :mod:`instructor.lms.times`); the zip entries' times only with
    ``zip_times``. Files past ``limits`` (an :class:`instructor.lms.intake.DownloadLimits`;
    default 32 MiB per file, 1024 MiB per download) are refused and listed; the others are
    written. ``autograder/lms.toml`` (:mod:`instructor.lms.config`) gives the LMS
    assignment's title where the names carry it (Blackboard).

    A submission the LMS marks late without a time (Canvas's ``LATE``): with a penalty
    that needs no time (nbgrader's ``none`` or ``zero``) it is recorded one second after
    the due date (late, by no amount the LMS did not give); with one that does (per hour)
    nothing is written and :class:`instructor.lms.base.IntakeError` says how to give the
    times (``--times``). Every file not used is logged. Returns the
    :class:`~instructor.lms.base.Intake`; raises its errors (``UnknownLayout``,
    ``SubmissionExists``: nothing is written then).
    """
    # config imports base, as this module does: imported here, no cycle through them.
    from .config import LMS_TOML, read_config
    from .times import read_times

    names = course.source_notebook_names(assignment)
    if not names:
        raise IntakeError(
            f"no notebook in {course.source_folder(assignment)}: is {assignment!r} one of the "
            "course's assignments?"
        )
    submitted = course.submitted_folder()
    config = read_config(submitted.parent / LMS_TOML)
    column = config.column(assignment, "blackboard")
    title = column.title if column and (lms or "blackboard") == "blackboard" else None
    limits = limits or DownloadLimits()
    intake = read_download(archive, names, lms, pattern, assignment=title, limits=limits)
    if times is not None:
        intake, unknown = with_times(intake, read_times(times))
        if unknown:
            log(f"{times.name}: {len(unknown)} student(s) not in this download: {unknown[:5]}")
    due = course.deadlines.due(assignment)
    due = due.replace(tzinfo=UTC) if due is not None else None
    untimed = [e for e in intake.students if e.late and e.trusted_timestamp(zip_times) is None]
    if untimed and due is not None and _penalty_needs_time(course):
        shown = ", ".join(e.student for e in untimed[:5]) + (", ..." if len(untimed) > 5 else "")
        raise IntakeError(
            f"{len(untimed)} submission(s) marked late by {intake.layout} without a submission "
            f"time ({shown}), and the late penalty depends on how late: the download names "
            "no time, and the grader does not guess one. Export the submission times from "
            "the LMS to a CSV with the columns 'student' (student id or LMS user id) and "
            "'time' (e.g. 2026-11-20T12:01:00+01:00) and pass --times times.csv. Nothing "
            "was written."
        )
    written = write_submissions(
        intake,
        archive,
        submitted,
        assignment,
        replace=replace,
        zip_times=zip_times,
        limits=limits,
    )
    changed = {path.parent for path in written}
    for entry in intake.students:
        folder = submitted / entry.student / assignment
        stamp = folder / "timestamp.txt"
        if entry.trusted_timestamp(zip_times) is not None:
            continue
        if entry.late and due is not None:
            moment = due + timedelta(seconds=1)
            stamp.write_text(timestamp_text(moment))
            log(
                f"{entry.student}: marked late by {intake.layout}, which gives no time: "
                f"recorded as late ({timestamp_text(moment)}, 1 s after the due date)"
            )
        elif folder in changed and stamp.exists():
            stamp.unlink()  # the time of an earlier download, not of this submission
    superseded = sum(len(entry.superseded) for entry in intake.students)
    log(
        f"{archive.name}: {intake.layout} layout, {len(intake.students)} student(s), "
        f"{len(written)} file(s) written to {submitted}"
        + (f", {superseded} older attempt(s) left out" if superseded else "")
        + (
            f", {len(intake.ignored)} file(s) ignored (receipts, metadata)"
            if intake.ignored
            else ""
        )
    )
    if intake.unmatched:
        log(f"{len(intake.unmatched)} file(s) of the zip NOT used:")
        for skipped in intake.unmatched:
            log(f"  {skipped.member}: {skipped.reason}")
    return intake
