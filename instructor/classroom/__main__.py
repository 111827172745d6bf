"""``python -m instructor.classroom grade 01_vector_sets ...`` (``make grade A=...``)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from instructor.paths import AUTOGRADER

from .sandbox import Limits

DEFAULT_ROOT = AUTOGRADER


def collect_zip(root: Path, assignment: str, archive: Path) -> None:
    """Unpack an LMS download into ``submitted/`` with ``nbgrader zip_collect``.

    Files in the zip are named ``<student>_<notebook>.ipynb`` (the course's
    ``FileNameCollector.named_regexp`` in ``autograder/nbgrader_config.py``).
    """
    target = root / "downloaded" / assignment / "archive"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(archive, target / archive.name)
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--force"],
        cwd=root,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instructor.classroom", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of the assignments")
    grade.add_argument("assignments", nargs="+", help="e.g. 01_vector_sets 02_soft_select")
    grade.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="nbgrader course root")
    grade.add_argument("--zip", type=Path, help="an LMS zip of submissions (one assignment)")
    grade.add_argument("--db", help="gradebook SQLAlchemy URL (default: the course's SQLite)")
    grade.add_argument("--workers", type=int, help="local Dask workers (default: cores + 1)")
    grade.add_argument("--scheduler", help="address of a Dask scheduler, e.g. tcp://host:8786")
    grade.add_argument("--force", action="store_true", help="grade again what is recorded")
    grade.add_argument("--no-feedback", action="store_true", help="skip the feedback HTML")
    grade.add_argument("--timeout", type=float, default=Limits.wall_seconds, help="s/notebook")
    grade.add_argument("--cell-timeout", type=int, default=Limits.cell_seconds, help="s/cell")
    grade.add_argument("--memory", type=int, default=Limits.memory_mib, help="MiB/process")
    args = parser.parse_args(argv)

    from .grade import ClassGrader

    if args.zip:
        if len(args.assignments) != 1:
            parser.error("--zip takes exactly one assignment")
        collect_zip(args.root, args.assignments[0], args.zip)
    grader = ClassGrader(
        args.root,
        db_url=args.db,
        workers=args.workers,
        scheduler=args.scheduler,
        limits=Limits(
            wall_seconds=args.timeout, cell_seconds=args.cell_timeout, memory_mib=args.memory
        ),
        force=args.force,
        feedback=not args.no_feedback,
    )
    summaries = grader.grade(args.assignments)
    return 1 if any(s.error for s in summaries) else 0


if __name__ == "__main__":
    raise SystemExit(main())
