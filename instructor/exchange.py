"""nbgrader's exchange, contained per hand-in: student ids of one shape, a submission
collected only from its owner, and no hand-in that stops the collect or the release of
feedback for the others.

nbgrader's exchange inbound folder is writable by every student, and ``collect`` reads the
student id from each file name there (``<id>+<assignment>+<time>+<random>``): a name
``..+01_vector_sets+...`` is collected into ``submitted/../01_vector_sets``, and with
``--update`` nbgrader first removes whatever is there; an id ``*`` later reaches every
student through nbgrader's globs. :class:`CheckedCollect` is nbgrader's own
``ExchangeCollect`` with each submission's id checked first (:mod:`instructor.student_ids`):
a refused one is logged with why, and not collected. ``autograder/nbgrader_config.py`` makes
it the collect step::

    c.ExchangeFactory.collect = "instructor.exchange.CheckedCollect"

**Contained per hand-in.** nbgrader 0.9.6 stops the whole collect (exit 1, a traceback,
nobody after it collected) at a folder name whose time does not parse
(``alice+01_vector_sets+yesterday+x``), at a FIFO in a hand-in (``copytree`` blocks on it or
fails), at a file the student made unreadable, and at an earlier collected copy whose
``timestamp.txt`` does not parse; and it copies with the instructor's rights whatever a
link in the student's folder points to, checked (if at all) before the copy, so a link
put in place between the check and the copy is followed. Here every hand-in is first
copied out of the exchange into a folder of the instructor's (:func:`copy_hand_in`): the
student's folder is opened once, without following a link, and every file in it is opened
from that folder's descriptor with ``O_NOFOLLOW``, checked on the opened descriptor
(``fstat``: a regular file, one name, the student's where the owner is checked), and read
within nbgrader's size limits (``CourseDirectory.max_file_size``, ``max_dir_size``) and
:data:`MAX_ENTRIES` names; directories are walked by descriptor. There is no moment when
what was checked is not what is read. A link, a FIFO, a socket, a device, a file that
cannot be read or is too large leaves that hand-in out, with why in the log and in
:data:`RECORD` (``exchange_left_out.json`` in the course folder, :func:`read_records`),
and the student's next newest hand-in is tried; nbgrader's own copy then takes the copies.
A hand-in without a ``timestamp.txt`` that parses gets its folder name's time (noted).

:class:`ContainedReleaseFeedback` does the same for ``release_feedback``: a hand-in whose
feedback cannot be released (no ``submission_secret.txt``, a link) is left out and named;
one without ``timestamp.txt`` is released (the time is only logged). Set it with::

    c.ExchangeFactory.release_feedback = "instructor.exchange.ContainedReleaseFeedback"

nbgrader's default exchange trusts the name of a submission's folder in ``inbound/``
(``<student>+<assignment>+<timestamp>+<random>``): ``nbgrader submit --student bob`` run
by alice, or a folder alice makes there by hand, is collected as bob's. nbgrader 0.9.6's
``ExchangeCollect.check_owner`` only logs a warning and collects it anyway. On a hub where
students are system users (``make hub`` as root, The Littlest JupyterHub), the folder's
owner is the only thing a student cannot forge: :class:`OwnerCheckedCollect` leaves out
every folder whose owner is not the student its name claims (and every file in it that is
not the student's), says so in the log, and collects the newest of that student's own
submissions instead. ``instructor.hub`` sets it (``c.ExchangeFactory.collect``) where the
hub's students are real users.

**Fixed when made** (issue 43): on the course's hub, a student's folder in ``inbound/`` is
not where a hand-in is kept at all. :class:`HubSubmit` (the students' ``nbgrader submit``
and the Assignments tab's Submit) sends the files to the hub's hand-in service
(:mod:`instructor.handin`), which takes the student from the hub's token and the time from
its own clock, and keeps the hand-in in a store only the instructor's user can write;
:class:`HubCollect` collects from that store (with everything above: contained per
hand-in, ids checked, each file the instructor's own).
"""

from __future__ import annotations

import base64
import glob
import json
import os
import pwd
import re
import shutil
import stat
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib import error as urlerror
from urllib import request as urlrequest

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import check_mode, notebook_hash, parse_utc
from traitlets import Float, Unicode

from instructor.student_ids import id_problem, refusal

__all__ = [
    "MAX_FOLDER_DEPTH",
    "MAX_ENTRIES",
    "RECORD",
    "CheckedCollect",
    "ContainedReleaseFeedback",
    "CopyLimits",
    "ExchangeRecord",
    "HandInRefused",
    "HubCollect",
    "HubSubmit",
    "OwnerCheckedCollect",
    "copy_hand_in",
    "owner_name",
    "read_records",
]

REMEDY = (
    "Its files in the exchange's inbound folder are left there, not collected; the hub's "
    "user names are the student ids, so such a name was not written by nbgrader submit."
)
RECORD = "exchange_left_out.json"
"""In the course folder: every hand-in the last collect or release of feedback of an
assignment left out, and why (:func:`read_records`), for the integrity report."""
MAX_ENTRIES = 1000
"""Names (files and folders) one hand-in may hold: nbgrader submit copies a released
assignment's few files; a student writing into their inbound folder by hand could make
millions."""
MAX_FOLDER_DEPTH = 16
"""Folders within folders one hand-in may hold."""
CHUNK = 1 << 20
FEEDBACK_MAX_BYTES = 64 << 20
"""A feedback page larger than this is not released (the class grader's are < 1 MiB)."""
TIMESTAMP_MAX_BYTES = 100  # one date, "2026-11-20 12:00:00.000000 UTC", is 30 bytes
SECRET_MAX_BYTES = 256  # nbgrader submit's secret is 128 hex digits

_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
# O_NONBLOCK: a FIFO put in place of a checked file opens at once (and is refused by the
# fstat after), instead of blocking the collect until some writer opens it.
_OPEN_FILE = _NO_FOLLOW | os.O_NONBLOCK
_OPEN_DIR = _NO_FOLLOW | os.O_DIRECTORY


class HandInRefused(Exception):
    """A hand-in that cannot be read, parsed or copied; the message says why."""


@dataclass(frozen=True)
class CopyLimits:
    """What one hand-in may hold: bytes per file and in all (nbgrader's
    ``max_file_size`` and ``max_dir_size``, in kB of 1000 bytes), names, depth."""

    file_bytes: int
    total_bytes: int
    entries: int = MAX_ENTRIES
    depth: int = MAX_FOLDER_DEPTH

    @classmethod
    def of(cls, coursedir: Any) -> CopyLimits:
        return cls(1000 * coursedir.max_file_size, 1000 * coursedir.max_dir_size)


@dataclass
class _Copying:
    """What a copy has taken so far, against its limits."""

    limits: CopyLimits
    owner_uid: int | None
    entries: int = 0
    total: int = 0


def _file_kind(mode: int) -> str:
    """What a file that is no regular file or folder is, in words."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a special file"


def _check_opened(fd: int, where: str, copying: _Copying, *, folder: bool) -> os.stat_result:
    """The opened ``fd``'s status, refused unless it is what is expected: a regular file of
    one name (a hard link could name a file the student may not read) or a folder, the
    student's where owners are checked."""
    status = os.fstat(fd)
    expected = stat.S_ISDIR if folder else stat.S_ISREG
    if not expected(status.st_mode):
        raise HandInRefused(f"{where} is {_file_kind(status.st_mode)}")
    if not folder and status.st_nlink != 1:
        raise HandInRefused(f"{where} is a hard link ({status.st_nlink} names)")
    if copying.owner_uid is not None and status.st_uid != copying.owner_uid:
        raise HandInRefused(f"{where} is not the student's own (owned by {_user(status.st_uid)})")
    return status


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def _open_at(dir_fd: int, name: str, where: str, *, folder: bool) -> int:
    """``name`` in the folder ``dir_fd``, opened without following a link."""
    try:
        return os.open(name, _OPEN_DIR if folder else _OPEN_FILE, dir_fd=dir_fd)
    except OSError as error:
        raise HandInRefused(f"{where} cannot be opened ({error.strerror})") from None


def _copy_file(fd: int, dest_dir_fd: int, name: str, where: str, copying: _Copying) -> None:
    """The regular file ``fd`` into ``name`` in ``dest_dir_fd``, within the limits."""
    out = os.open(
        name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=dest_dir_fd
    )
    size = 0
    try:
        while chunk := _read_bytes(fd, where, min(CHUNK, copying.limits.file_bytes + 1 - size)):
            size += len(chunk)
            copying.total += len(chunk)
            if size > copying.limits.file_bytes:
                raise HandInRefused(f"{where} is over {copying.limits.file_bytes:,} bytes")
            if copying.total > copying.limits.total_bytes:
                raise HandInRefused(f"the hand-in is over {copying.limits.total_bytes:,} bytes")
            os.write(out, chunk)
    finally:
        os.close(out)


def _read_bytes(fd: int, where: str, size: int) -> bytes:
    if size <= 0:
        return b""
    try:
        return os.read(fd, size)
    except OSError as error:
        raise HandInRefused(f"{where} cannot be read ({error.strerror})") from None


def _copy_folder(src_fd: int, dest_fd: int, where: str, copying: _Copying, depth: int = 0) -> None:
    """Every name in the opened folder ``src_fd`` into ``dest_fd``, each opened from it."""
    if depth > copying.limits.depth:
        raise HandInRefused(f"{where} is more than {copying.limits.depth} folders deep")
    try:
        names = sorted(os.listdir(src_fd))
    except OSError as error:
        raise HandInRefused(f"{where} cannot be listed ({error.strerror})") from None
    for name in names:
        copying.entries += 1
        if copying.entries > copying.limits.entries:
            raise HandInRefused(f"the hand-in holds more than {copying.limits.entries} names")
        inner = f"{where}/{name}"
        # Looked at without opening first, so that a device is never opened; what is read is
        # then checked again on the opened descriptor (it may have been swapped meanwhile).
        try:
            mode = os.stat(name, dir_fd=src_fd, follow_symlinks=False).st_mode
        except OSError as error:
            raise HandInRefused(f"{inner} cannot be looked at ({error.strerror})") from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise HandInRefused(f"{inner} is {_file_kind(mode)}")
        folder = stat.S_ISDIR(mode)
        fd = _open_at(src_fd, name, inner, folder=folder)
        try:
            _check_opened(fd, inner, copying, folder=folder)
            if folder:
                os.mkdir(name, 0o755, dir_fd=dest_fd)
                inner_dest = os.open(name, _OPEN_DIR, dir_fd=dest_fd)
                try:
                    _copy_folder(fd, inner_dest, inner, copying, depth + 1)
                finally:
                    os.close(inner_dest)
            else:
                _copy_file(fd, dest_fd, name, inner, copying)
        finally:
            os.close(fd)


def copy_hand_in(
    parent_fd: int,
    name: str,
    dest: Path,
    limits: CopyLimits,
    owner_uid: int | None = None,
) -> None:
    """Copy the hand-in folder ``name`` of the folder ``parent_fd`` to ``dest`` (made here),
    opening every file and folder from its parent's descriptor without following a link and
    checking what was opened: regular files and folders only, each file of one name,
    everything owned by ``owner_uid`` when given, within ``limits``.

    Raises:
        HandInRefused: with why; ``dest`` is then removed.
    """
    copying = _Copying(limits, owner_uid)
    fd = _open_at(parent_fd, name, "the hand-in's folder", folder=True)
    try:
        _check_opened(fd, "the hand-in's folder", copying, folder=True)
        dest.mkdir(mode=0o755)
        dest_fd = os.open(dest, _OPEN_DIR)
        try:
            _copy_folder(fd, dest_fd, ".", copying)
        finally:
            os.close(dest_fd)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        os.close(fd)


def _read_small(path: Path, limit: int) -> str | None:
    """A small regular text file's text (not following a link), None if it is none."""
    try:
        fd = os.open(path, _OPEN_FILE)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class ExchangeRecord:
    """A hand-in an exchange step left out (``outcome`` ``left out``) or took with a note
    (``note``), and why.

    Attributes:
        step: ``collect`` or ``release_feedback``.
        assignment: the assignment.
        student: the student the hand-in names (its folder name's, or ``submitted/``'s).
        source: the folder in the exchange's ``inbound/`` (collect) or of ``feedback/``.
        reason: why, in words.
        outcome: ``left out`` or ``note``.
        at: when, UTC, ISO 8601.
    """

    step: str
    assignment: str
    student: str
    source: str
    reason: str
    outcome: str = "left out"
    at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def read_records(course_root: str | Path) -> list[ExchangeRecord]:
    """What :data:`RECORD` in ``course_root`` holds; empty without one."""
    path = Path(course_root) / RECORD
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [ExchangeRecord(**entry) for entry in data.get("records", [])]


def write_records(
    course_root: str | Path,
    step: str,
    assignment: str,
    records: Iterable[ExchangeRecord],
    students: set[str] | None = None,
) -> Path:
    """Replace the records of ``step`` and ``assignment`` (of ``students`` only, when one
    run looked at those only) with ``records``; written whole, then renamed into place."""
    path = Path(course_root) / RECORD
    kept = [
        r
        for r in read_records(course_root)
        if not (
            r.step == step
            and r.assignment == assignment
            and (students is None or r.student in students)
        )
    ]
    data = {
        "about": "Hand-ins nbgrader's collect or release_feedback left out, or took with a "
        "note, and why (instructor/exchange.py). Replaced per step and assignment.",
        "records": [asdict(r) for r in [*kept, *records]],
    }
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=".exchange-", delete=False, encoding="utf-8"
    ) as handle:
        json.dump(data, handle, indent=1, ensure_ascii=False)
    os.replace(handle.name, path)
    return path


# --------------------------------------------------------------------------- collect
class CheckedCollect(ExchangeCollect):
    """nbgrader's collect, contained per hand-in: the submissions whose student id fits
    the allow-list, each copied out of the exchange by :func:`copy_hand_in` before
    nbgrader's copy; a hand-in that cannot be parsed, read or copied is left out with why,
    and the student's next newest one is tried."""

    owner_checked = False
    """Whether each hand-in, and everything in it, must be owned by the student it names."""

    def init_src(self) -> None:
        # nbgrader's init_src, with every folder name parsed on its own (a name whose time
        # does not parse stopped the collect for everyone) and the checks made before the
        # newest hand-in is chosen (a refused newer one must not hide the student's own).
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.left_out: list[ExchangeRecord] = []
        student_id = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        by_student: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for path in sorted(glob.glob(pattern)):
            try:
                record = self._path_to_record(path)
            except (ExchangeError, ValueError, OverflowError) as error:
                self._leave_out(os.path.basename(path), "?", f"its name does not parse ({error})")
                continue
            if id_problem(record["username"]):
                where = f"the exchange's file {record['filename']!r}"
                self.log.error(refusal(record["username"], where, REMEDY))
                continue
            if why := self.claim_problem(path, record):
                self._leave_out(record["filename"], record["username"], why)
                continue
            by_student[record["username"]].append(record)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        # Each student's hand-ins in the order they are tried: nbgrader's choice first.
        self.candidates: dict[str, list[dict[str, Any]]] = {}
        for student, own in by_student.items():
            newest_first = self._sort_by_timestamp(own)
            if self.duedate is not None and self.before_duedate:
                on_time = [r for r in newest_first if r["timestamp"] <= self.duedate]
                newest_first = on_time + [r for r in newest_first if r not in on_time]
            self.candidates[student] = newest_first
        self.src_records = [own[0] for own in self.candidates.values()]

    def claim_problem(self, path: str, record: dict[str, Any]) -> str:
        """Why the hand-in at ``path`` is not the student's it names (``""``: it may be)."""
        return ""

    def _leave_out(self, folder: str, student: str, why: str, outcome: str = "left out") -> None:
        source = os.path.join(self.inbound_path, folder)
        if outcome == "left out":
            self.log.error("Not collected: %s %s", source, why)
        else:
            self.log.warning("Collected with a note: %s %s", source, why)
        self.left_out.append(
            ExchangeRecord("collect", self.coursedir.assignment_id, student, folder, why, outcome)
        )

    def _owner_uid(self, student: str) -> int | None:
        if not self.owner_checked:
            return None
        try:
            return pwd.getpwnam(student).pw_uid
        except KeyError:
            return -1  # no such user: nothing can be theirs

    def copy_files(self) -> None:
        """Every student's first hand-in that copies out of the exchange, then nbgrader's
        copy of those copies (which it can neither fail on nor be fooled by)."""
        limits = CopyLimits.of(self.coursedir)
        root = Path(self.coursedir.root)
        staging = Path(tempfile.mkdtemp(prefix=".collecting-", dir=root))
        inbound_fd = os.open(self.inbound_path, _OPEN_DIR & ~os.O_NOFOLLOW)
        inbound_path = self.inbound_path
        try:
            chosen = []
            for student, own in self.candidates.items():
                for record in own:
                    if self._take(inbound_fd, record, staging, limits, student):
                        chosen.append(record)
                        break
            self.src_records = [r for r in chosen if self._updatable(r)]
            # nbgrader's copy_files, from the copies: the owner was checked on the folder
            # itself (the copies are the instructor's).
            self.inbound_path = str(staging)
            self.check_owner = False
            super().copy_files()
        finally:
            self.inbound_path = inbound_path
            os.close(inbound_fd)
            shutil.rmtree(staging, ignore_errors=True)
            write_records(
                root,
                "collect",
                self.coursedir.assignment_id,
                self.left_out,
                {self.coursedir.student_id} if self.coursedir.student_id else None,
            )

    def _take(
        self,
        inbound_fd: int,
        record: dict[str, Any],
        staging: Path,
        limits: CopyLimits,
        student: str,
    ) -> bool:
        """Copy one hand-in into ``staging``; False (and left out, with why) if it cannot."""
        copy = staging / record["filename"]
        try:
            copy_hand_in(inbound_fd, record["filename"], copy, limits, self._owner_uid(student))
        except HandInRefused as error:
            self._leave_out(record["filename"], student, str(error))
            return False
        except OSError as error:  # this side's disk: full, or unwritable
            self._leave_out(record["filename"], student, f"could not be copied ({error})")
            shutil.rmtree(copy, ignore_errors=True)
            return False
        stamp = copy / "timestamp.txt"
        text = _read_small(stamp, TIMESTAMP_MAX_BYTES)
        try:
            parse_utc((text or "").strip())
        except (ValueError, OverflowError, TypeError):
            # nbgrader submit writes one; without it the collect and the release of feedback
            # fail later. The time of the folder's name (which chose this hand-in) stands in.
            moment = record["timestamp"].strftime("%Y-%m-%d %H:%M:%S.%f UTC")
            stamp.unlink(missing_ok=True)
            stamp.write_text(moment, encoding="ascii")
            self._leave_out(
                record["filename"],
                student,
                f"timestamp.txt is missing or does not parse: the folder name's time {moment} "
                "is used",
                outcome="note",
            )
        return True

    def _updatable(self, record: dict[str, Any]) -> bool:
        """Whether nbgrader may look at the collected copy of ``record``'s student: an
        earlier collected ``timestamp.txt`` that does not parse stops nbgrader's collect."""
        dest = self.coursedir.format_path(
            self.coursedir.submitted_directory, record["username"], self.coursedir.assignment_id
        )
        stamp = Path(dest) / "timestamp.txt"
        if not os.path.lexists(stamp):
            return True
        text = _read_small(stamp, TIMESTAMP_MAX_BYTES)
        try:
            if text is not None and text.strip():
                parse_utc(text.strip())
            return text is not None
        except (ValueError, OverflowError):
            pass
        self._leave_out(
            record["filename"],
            record["username"],
            f"the collected copy's {stamp} does not parse (or is no small file): remove that "
            "folder to collect again",
        )
        return False


def owner_name(path: str) -> str | None:
    """The user name owning ``path`` (not following a link), or None for an unknown uid."""
    try:
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except KeyError:
        return None


class OwnerCheckedCollect(CheckedCollect):
    """The course's collect (:class:`.CheckedCollect`) of the hand-ins owned by the student
    they name, every file in them included."""

    owner_checked = True

    def claim_problem(self, path: str, record: dict[str, Any]) -> str:
        owner = owner_name(path)
        if owner != record["username"]:
            return f"claims to be submitted by {record['username']} but is owned by " + (
                owner or "an unknown user id"
            )
        return ""


# ------------------------------------------------------------------- release feedback
@dataclass(frozen=True)
class _Feedback:
    student: str
    notebook: str
    page: Path


class ContainedReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback, each page on its own: a hand-in whose secret cannot be
    read (missing, a link, not one line) is left out with why; one without
    ``timestamp.txt`` is released (nbgrader only logs the time). Files are read without
    following links."""

    def copy_files(self) -> None:
        excluded = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        left_out: list[ExchangeRecord] = []
        for feedback in self._pages():
            if feedback.student in excluded:
                self.log.debug("Skipping student '%s'", feedback.student)
                continue
            try:
                self._release(feedback)
            except HandInRefused as error:
                where = str(feedback.page.parent)
                self.log.error("Feedback not released: %s %s", where, error)
                left_out.append(
                    ExchangeRecord(
                        "release_feedback",
                        self.coursedir.assignment_id,
                        feedback.student,
                        where,
                        str(error),
                    )
                )
        write_records(
            self.coursedir.root,
            "release_feedback",
            self.coursedir.assignment_id,
            left_out,
            {self.coursedir.student_id} if self.coursedir.student_id else None,
        )

    def _pages(self) -> Iterator[_Feedback]:
        """Each feedback page of ``src_path``, as nbgrader 0.9.6's copy_files finds them."""
        pattern = re.escape(os.path.sep).join(
            [
                self.coursedir.format_path(
                    self.coursedir.feedback_directory,
                    "(?P<student_id>.*)",
                    self.coursedir.assignment_id,
                    escape=True,
                ),
                "(?P<notebook_id>.*).html",
            ]
        )
        for page in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            if match := re.match(pattern, page):
                yield _Feedback(match["student_id"], match["notebook_id"], Path(page))
            else:
                self.log.error("Could not match '%s' with regexp '%s'", page, pattern)

    def _release(self, feedback: _Feedback) -> None:
        folder = feedback.page.parent
        secret = _read_small(folder / "submission_secret.txt", SECRET_MAX_BYTES)
        if secret is None or not secret.strip():
            raise HandInRefused("submission_secret.txt is missing, empty or no small text file")
        timestamp = _read_small(folder / "timestamp.txt", TIMESTAMP_MAX_BYTES)
        checksum = notebook_hash(secret=secret, notebook_id=feedback.notebook)
        self.log.info(
            "Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)",
            feedback.student,
            self.coursedir.course_id,
            self.coursedir.assignment_id,
            feedback.notebook,
            timestamp.strip() if timestamp else "no timestamp.txt",
        )
        page = self._page_bytes(feedback.page)
        temporary = os.path.join(self.dest_path, f"{checksum}-tmp.html")
        with open(temporary, "wb") as out:
            out.write(page)
        os.chmod(temporary, 0o644)
        # Written beside, then moved: a student fetching meanwhile gets the old or the new.
        released = os.path.join(self.dest_path, f"{checksum}.html")
        os.replace(temporary, released)
        self.log.info("Feedback released to: %s", released)

    @staticmethod
    def _page_bytes(page: Path) -> bytes:
        try:
            fd = os.open(page, _OPEN_FILE)
        except OSError as error:
            raise HandInRefused(f"{page.name} cannot be opened ({error.strerror})") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise HandInRefused(f"{page.name} is {_file_kind(os.fstat(fd).st_mode)}")
            chunks, size = [], 0
            while chunk := os.read(fd, CHUNK):
                size += len(chunk)
                if size > FEEDBACK_MAX_BYTES:
                    raise HandInRefused(f"{page.name} is over {FEEDBACK_MAX_BYTES:,} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)


# ------------------------------------------------------------ the hub's hand-in service
class HubSubmit(ExchangeSubmit):
    """``nbgrader submit`` through the hub's hand-in service (:mod:`instructor.handin`).

    nbgrader's own checks first (the released notebooks present with ``strict``, the size
    limits, its ignore patterns), then the files go to the service with the student's
    JupyterHub token (``JUPYTERHUB_API_TOKEN``, which the hub gives every server and its
    terminals). The service says who handed in and when; the copy nbgrader keeps in the
    student's cache (what the Assignments tab lists and Fetch Feedback reads) gets the
    service's time and secret. Nothing is written into the exchange's ``inbound/``.
    """

    service_url = Unicode(
        "", help="The hand-in service's URL, ending in /services/handin/ (instructor.hub)."
    ).tag(config=True)
    request_timeout = Float(120.0, help="Seconds to wait for the service.").tag(config=True)

    def init_dest(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        if self.coursedir.student_id != "*":
            self.fail(
                "On the course's hub, the hub says who hands in: run nbgrader submit "
                "without --student"
            )
        if not self.authenticator.has_access(self.coursedir.student_id, self.coursedir.course_id):
            self.fail("You do not have access to this course.")
        if not self.service_url:
            self.fail("No hand-in service is configured (HubSubmit.service_url).")
        if not os.environ.get("JUPYTERHUB_API_TOKEN"):
            self.fail(
                "No JupyterHub token (JUPYTERHUB_API_TOKEN): submit from your server on the "
                "hub (the Assignments tab, or a terminal of your JupyterLab)."
            )
        self.cache_path = os.path.join(self.cache, self.coursedir.course_id)

    def _send(self, files: list[dict[str, str]]) -> dict[str, str]:
        """POST the hand-in; the service's answer (student, timestamp, secret)."""
        body = json.dumps(
            {
                "course": self.coursedir.course_id,
                "assignment": self.coursedir.assignment_id,
                "files": files,
            }
        ).encode()
        request = urlrequest.Request(
            self.service_url.rstrip("/") + "/submit",
            data=body,
            method="POST",
            headers={
                "Authorization": f"token {os.environ['JUPYTERHUB_API_TOKEN']}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urlrequest.urlopen(request, timeout=self.request_timeout) as response:
                return json.load(response)
        except urlerror.HTTPError as error:
            try:
                message = json.load(error).get("message", "")
            except (ValueError, AttributeError):
                message = ""
            self.fail(
                f"The hand-in service refused {self.coursedir.assignment_id} "
                f"({error.code}): {message or error.reason}"
            )
        except (urlerror.URLError, OSError) as error:
            self.fail(f"The hand-in service cannot be reached at {self.service_url}: {error}")
        raise AssertionError("unreachable")

    def copy_files(self) -> None:
        self.init_release()
        self.log.info("Source: %s", self.src_path)
        self.log.info("Destination: the hub's hand-in service, %s", self.service_url)
        self.check_filename_diff()
        assignment = self.coursedir.assignment_id
        with tempfile.TemporaryDirectory(prefix="nbgrader-submit-") as folder:
            staged = os.path.join(folder, assignment)
            self.do_copy(self.src_path, staged)  # nbgrader's size limits and ignore patterns
            files = []
            for dirpath, dirnames, filenames in os.walk(staged):
                dirnames.sort()
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    with open(full, "rb") as handle:
                        content = base64.b64encode(handle.read()).decode("ascii")
                    relative = os.path.relpath(full, staged).replace(os.sep, "/")
                    files.append({"path": relative, "content": content})
            kept = self._send(files)
            self.timestamp = kept["timestamp"]
            cache_path = os.path.join(
                self.cache_path, f"{kept['student']}+{assignment}+{kept['timestamp']}"
            )
            os.makedirs(self.cache_path, exist_ok=True)
            shutil.copytree(staged, cache_path)
        with open(os.path.join(cache_path, "timestamp.txt"), "w") as handle:
            handle.write(kept["timestamp"])
        with open(os.path.join(cache_path, "submission_secret.txt"), "w") as handle:
            handle.write(kept["secret"])
        self.log.info(
            "Submitted as: %s %s %s", self.coursedir.course_id, assignment, kept["timestamp"]
        )


class HubCollect(CheckedCollect):
    """The course's collect (:class:`CheckedCollect`) from the hand-in service's store
    (``HubCollect.store``) instead of the exchange's ``inbound/``: every hand-in there was
    written by the service, as the user who collects; a folder or file of anyone else is
    left out (none can be: the store is that user's alone)."""

    store = Unicode(
        "", help="The hand-in service's store: <store>/<course>/inbound/ (instructor.hub)."
    ).tag(config=True)

    def init_src(self) -> None:
        if not self.store:
            self.fail("HubCollect.store is not set: the hand-in service's store folder")
        self.root = self.store
        super().init_src()

    def claim_problem(self, path: str, record: dict[str, Any]) -> str:
        try:
            owner = os.lstat(path).st_uid
        except OSError as error:
            return f"cannot be looked at ({error.strerror})"
        if owner != os.geteuid():
            return f"was not written by the hand-in service (owned by {_user(owner)})"
        return ""

    def _owner_uid(self, student: str) -> int | None:
        return os.geteuid()
