"""``python -m instructor.classroom grade 01_vector_sets ...`` (``make grade A=...``).

Submissions are read from ``submitted/<student>/<assignment>/`` (what ``nbgrader collect``
or a copy leaves there), or first unpacked there from an LMS download with ``--zip``
(:mod:`instructor.lms.intake`: Canvas, Moodle, Blackboard or plain names, detected unless
``--lms`` or ``--pattern`` says).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from instructor.classroom.worker.isolation import Limits
from instructor.lms import lms_names
from instructor.lms.intake import MIB, DownloadLimits
from instructor.paths import AUTOGRADER

from .records import GraderEnvironmentError

DEFAULT_ROOT = AUTOGRADER
PLAIN_PENALTIES = (
    "nbgrader.plugins.LateSubmissionPlugin",
    "nbgrader.plugins.latesubmission.LateSubmissionPlugin",
)
"""nbgrader's own late plugin: ``none`` or ``zero``, which need no more than "late"."""


class TimesNeeded(Exception):
    """A late mark without a time, and a penalty that needs the time."""


def _penalty_needs_time(course: Any) -> bool:
    """Whether the course's late penalty depends on how late (any plugin but nbgrader's
    own ``none``/``zero`` one, e.g. ``PerHourPenalty``)."""
    config = course.api.config
    section = config.get("AssignLatePenalties", {})
    plugin = section.get("plugin_class", PLAIN_PENALTIES[0]) if section else PLAIN_PENALTIES[0]
    if not isinstance(plugin, str):
        plugin = f"{plugin.__module__}.{plugin.__qualname__}"
    return plugin not in PLAIN_PENALTIES


def collect_zip(
    course: Any,
    assignment: str,
    archive: Path,
    *,
    lms: str | None = None,
    pattern: str | None = None,
    replace: bool = False,
    zip_times: bool = False,
    times: Path | None = None,
    limits: Any = None,
    log: Callable[[str], None] = print,
) -> Any:
    """Unpack an LMS download of ``assignment`` into ``course``'s ``submitted/``.

    ``course`` is an :class:`.NbgraderCourse`. The chosen file of each notebook goes to
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
    from instructor.lms.base import IntakeError
    from instructor.lms.config import LMS_TOML, read_config
    from instructor.lms.intake import (
        DownloadLimits,
        read_download,
        timestamp_text,
        with_times,
        write_submissions,
    )
    from instructor.lms.times import read_times

    from .nbgrader_setup import SetupError

    names = course.source_notebook_names(assignment)
    if not names:
        raise SetupError(
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


def _positive_mib(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no number of MiB") from None
    if not 0 < value < 2**40:
        raise argparse.ArgumentTypeError(f"{text!r}: give a positive number of MiB")
    return value


def _student_id(text: str) -> str:
    """``--student``'s argument, refused unless it is a student id (argparse says why)."""
    from instructor.student_ids import check_student_id

    try:
        return check_student_id(text, "--student", remedy="Name the student by their folder.")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instructor.classroom", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of the assignments")
    grade.add_argument("assignments", nargs="+", help="e.g. 01_vector_sets 02_soft_select")
    grade.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="nbgrader course root")
    grade.add_argument("--zip", type=Path, help="an LMS download of submissions (one assignment)")
    grade.add_argument(
        "--lms", choices=lms_names(), help="the zip's layout (default: detected from its names)"
    )
    grade.add_argument(
        "--pattern",
        help="instead of --lms: a regex for the names in the zip, with (?P<student>...) and "
        "(?P<notebook>...), optionally (?P<timestamp>...)",
    )
    grade.add_argument(
        "--replace", action="store_true", help="--zip may overwrite different submitted files"
    )
    grade.add_argument(
        "--zip-times",
        action="store_true",
        help="take the zip entries' times as submission times (Canvas, Moodle, plain)",
    )
    grade.add_argument(
        "--times",
        type=Path,
        help="a CSV of submission times exported from the LMS: columns student, time",
    )
    grade.add_argument(
        "--max-file-mib",
        type=_positive_mib,
        default=DownloadLimits.file_bytes / MIB,
        help="--zip: refuse a file of the download larger than this "
        f"(MiB, default {DownloadLimits.file_bytes / MIB:g})",
    )
    grade.add_argument(
        "--max-download-mib",
        type=_positive_mib,
        default=DownloadLimits.download_bytes / MIB,
        help="--zip: read at most this much of the download in all "
        f"(MiB, default {DownloadLimits.download_bytes / MIB:g})",
    )
    grade.add_argument("--db", help="gradebook SQLAlchemy URL (default: the course's SQLite)")
    grade.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    grade.add_argument("--scheduler", help="address of a Dask scheduler, e.g. tcp://host:8786")
    grade.add_argument("--force", action="store_true", help="grade again what is recorded")
    grade.add_argument(
        "--student",
        action="append",
        type=_student_id,
        metavar="ID",
        help="grade (again) only this student; repeat for several",
    )
    grade.add_argument("--no-feedback", action="store_true", help="skip the feedback HTML")
    grade.add_argument(
        "--figures",
        action="store_true",
        help="draw the figures into the autograded notebooks (default: their text only)",
    )
    grade.add_argument("--timeout", type=float, default=Limits.wall_seconds, help="s/notebook")
    grade.add_argument("--cell-timeout", type=int, default=Limits.cell_seconds, help="s/cell")
    grade.add_argument("--memory", type=int, default=Limits.memory_mib, help="MiB/process")
    args = parser.parse_args(argv)
    if args.zip and len(args.assignments) != 1:
        parser.error("--zip takes exactly one assignment")
    if not args.zip and (args.lms or args.pattern or args.replace or args.zip_times or args.times):
        parser.error("--lms, --pattern, --replace, --zip-times and --times go with --zip")
    if args.lms and args.pattern:
        parser.error("give --lms or --pattern, not both")

    from instructor.lms.intake import IntakeError

    from .cluster import ClusterError
    from .grade import ClassGrader
    from .gradebook_watch import GradebookChanged
    from .nbgrader_setup import SetupError

    grader = ClassGrader(
        args.root,
        db_url=args.db,
        workers=args.workers,
        scheduler=args.scheduler,
        limits=Limits(
            wall_seconds=args.timeout, cell_seconds=args.cell_timeout, memory_mib=args.memory
        ),
        force=args.force,
        students=args.student,
        feedback=not args.no_feedback,
        figures=args.figures,
    )
    try:
        if args.zip:
            collect_zip(
                grader.course,
                args.assignments[0],
                args.zip,
                lms=args.lms,
                pattern=args.pattern,
                replace=args.replace,
                zip_times=args.zip_times,
                times=args.times,
                limits=DownloadLimits(
                    file_bytes=int(args.max_file_mib * MIB),
                    download_bytes=int(args.max_download_mib * MIB),
                ),
            )
        summaries = grader.grade(args.assignments)
    except (
        IntakeError,
        ClusterError,
        SetupError,
        GraderEnvironmentError,
        GradebookChanged,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 1 if any(s.error for s in summaries) else 0


if __name__ == "__main__":
    raise SystemExit(main())
