"""``nbgrader collect`` with the course's configuration (``ExchangeFactory.collect`` is
instructor.exchange.CheckedCollect): submissions whose student id is no
id of one shape are left in the exchange, each named in the log; the others are collected."""

from __future__ import annotations

from pathlib import Path

from instructor.scratch_course import ScratchCourse

STAMP = "2026-11-20 12:00:00.000000 UTC"
HOSTILE = ["*", "[a]lice", "alice ", "<img src=x onerror=alert(1)>", "-rf", "$(id)"]


def test_collect_takes_only_student_ids(course: ScratchCourse, tmp_path: Path) -> None:
    exchange = tmp_path / "exchange"
    inbound = exchange / "self-attention" / "inbound"
    for student in ["alice", "j.smith@uni-x.edu", *HOSTILE]:
        # What nbgrader submit writes: <student>+<assignment>+<time>+<random>/ (a student
        # can write any name there: the inbound folder is everyone's).
        folder = inbound / f"{student}+{course.assignment}+{STAMP}+r4nd0m"
        folder.mkdir(parents=True)
        (folder / course.notebook_name).write_text(f'{{"who": "{student}"}}')
        (folder / "timestamp.txt").write_text(STAMP)
    result = course.nbgrader(
        "collect",
        course.assignment,
        f"--Exchange.root={exchange}",
        "--CollectApp.check_owner=False",
        "--update",
    )
    submitted = course.root / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["alice", "j.smith@uni-x.edu"]
    for student in HOSTILE:
        assert f"student id {student!r} from the exchange's file" in result.stderr, result.stderr
    assert (submitted / "alice" / course.assignment / course.notebook_name).is_file()
    assert len(list(inbound.iterdir())) == 2 + len(HOSTILE)  # nothing removed there
