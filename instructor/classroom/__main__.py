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

from instructor.paths import AUTOGRADER

from .records import GraderEnvironmentError
from .sandbox import Limits

DEFAULT_ROOT = AUTOGRADER
LMS_CHOICES = ("canvas", "moodle", "blackboard", "plain")


def collect_zip(
    course: Any,
    assignment: str,
    archive: Path,
    *,
    lms: str | None = None,
    pattern: str | None = None,
    replace: bool = False,
    zip_times: bool = False,
    log: Callable[[str], None] = print,
) -> Any:
    """Unpack an LMS download of ``assignment`` into ``course``'s ``submitted/``.

    ``course`` is an :class:`.NbgraderCourse`. The chosen file of each notebook goes to
    ``submitted/<student>/<assignment>/`` with nbgrader's ``timestamp.txt`` where the LMS
    names a time (Blackboard; the zip entries' times with ``zip_times``). A submission the LMS
    marks late without naming a time (Canvas's ``LATE``) is stamped with its zip entry's
    time, or one second after the due date if that time is not after it. Every file not used
    is logged. Returns the :class:`~instructor.lms.intake.Intake`; raises its errors
    (``UnknownLayout``, ``SubmissionExists``: nothing is written then).
    """
    from instructor.lms.intake import read_download, timestamp_text, write_submissions

    from .nbgrader_setup import SetupError

    names = course.source_notebook_names(assignment)
    if not names:
        raise SetupError(
            f"no notebook in {course.source_folder(assignment)}: is {assignment!r} one of the "
            "course's assignments?"
        )
    intake = read_download(archive, names, lms, pattern, assignment=assignment)
    submitted = course.submitted_folder()
    written = write_submissions(
        intake, archive, submitted, assignment, replace=replace, zip_times=zip_times
    )
    due = course.deadlines.due(assignment)
    due = due.replace(tzinfo=UTC) if due is not None else None
    changed = {path.parent for path in written}
    for entry in intake.students:
        folder = submitted / entry.student / assignment
        stamp = folder / "timestamp.txt"
        sources = {"lms", "zip entry"} if zip_times else {"lms"}
        if any(f.timestamp_source in sources for f in entry.files):
            continue
        if entry.late:
            moment = entry.timestamp
            if due is not None and (moment is None or moment <= due):
                moment = due + timedelta(seconds=1)
            if moment is not None:
                stamp.write_text(timestamp_text(moment))
                log(
                    f"{entry.student}: marked late by {intake.layout}, no submission time given: "
                    f"recorded as submitted at {timestamp_text(moment)}"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instructor.classroom", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of the assignments")
    grade.add_argument("assignments", nargs="+", help="e.g. 01_vector_sets 02_soft_select")
    grade.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="nbgrader course root")
    grade.add_argument("--zip", type=Path, help="an LMS download of submissions (one assignment)")
    grade.add_argument(
        "--lms", choices=LMS_CHOICES, help="the zip's layout (default: detected from its names)"
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
    grade.add_argument("--db", help="gradebook SQLAlchemy URL (default: the course's SQLite)")
    grade.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    grade.add_argument("--scheduler", help="address of a Dask scheduler, e.g. tcp://host:8786")
    grade.add_argument("--force", action="store_true", help="grade again what is recorded")
    grade.add_argument(
        "--student",
        action="append",
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
    if not args.zip and (args.lms or args.pattern or args.replace or args.zip_times):
        parser.error("--lms, --pattern, --replace and --zip-times go with --zip")
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
