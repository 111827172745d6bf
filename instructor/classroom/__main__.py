"""``python -m instructor.classroom grade 01_vector_sets ...`` (``make grade A=...``);
``python -m instructor.classroom items 01_vector_sets ...`` writes the item analysis from
what is recorded (:mod:`.grader.items`), grading nothing.

Submissions are read from ``submitted/<student>/<assignment>/`` (what ``nbgrader collect``
or a copy leaves there), or first unpacked there from an LMS download with ``--zip``
(:mod:`instructor.lms.intake`: Canvas, Moodle, Blackboard or plain names, detected unless
``--lms`` or ``--pattern`` says).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from instructor.classroom.worker.isolation import Limits
from instructor.lms import lms_names
from instructor.lms.intake import MIB, DownloadLimits, collect_zip
from instructor.paths import AUTOGRADER


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
    grade.add_argument("--root", type=Path, default=AUTOGRADER, help="nbgrader course root")
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
    grade.add_argument(
        "--exclude-test",
        metavar="GRADE_ID",
        help="leave this test cell out of the totals, LMS exports and item analysis from now "
        "on (with --reason); kept in .grading/excluded.json until --include-test",
    )
    grade.add_argument("--reason", help="why --exclude-test leaves the cell out")
    grade.add_argument("--include-test", metavar="GRADE_ID", help="count a left-out cell again")
    items = commands.add_parser(
        "items",
        help="write the item analysis (reports/items.*) from the records, grading nothing",
    )
    items.add_argument("assignments", nargs="+", help="assignments graded already")
    items.add_argument("--root", type=Path, default=AUTOGRADER, help="nbgrader course root")
    items.add_argument("--db", help="gradebook SQLAlchemy URL (default: the course's SQLite)")
    args = parser.parse_args(argv)
    if args.command == "items":
        from instructor.classroom.grader.pipeline import ClassGrader

        grader = ClassGrader(args.root, db_url=args.db, feedback=False, progress=False)
        written = grader.write_item_analysis(args.assignments)
        hand_ins = sum(a.stats["n"] for a in written)
        report = args.root / "reports" / "items.html"
        print(f"item analysis of {hand_ins} recorded hand-in(s): {report}")
        return 0
    if args.zip and len(args.assignments) != 1:
        parser.error("--zip takes exactly one assignment")
    if not args.zip and (args.lms or args.pattern or args.replace or args.zip_times or args.times):
        parser.error("--lms, --pattern, --replace, --zip-times and --times go with --zip")
    if args.lms and args.pattern:
        parser.error("give --lms or --pattern, not both")
    if args.exclude_test and not (args.reason or "").strip():
        parser.error("--exclude-test needs --reason: why the cell is left out")
    if args.reason and not args.exclude_test:
        parser.error("--reason goes with --exclude-test")
    if args.exclude_test or args.include_test:
        from instructor.classroom.grader.excluded import exclude, put_back

        if args.exclude_test:
            exclude(args.root, args.assignments, args.exclude_test, args.reason)
        if args.include_test:
            put_back(args.root, args.assignments, args.include_test)

    from instructor.classroom.grader.cluster import ClusterError
    from instructor.classroom.grader.course import GradebookChanged, SetupError
    from instructor.classroom.grader.pipeline import ClassGrader
    from instructor.classroom.worker import GraderEnvironmentError
    from instructor.lms.intake import IntakeError

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
    except (IntakeError, ClusterError, SetupError, GraderEnvironmentError, GradebookChanged) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if any(s.error for s in summaries) else 0


if __name__ == "__main__":
    raise SystemExit(main())
