"""``grade ASSIGNMENT --zip FILE``: LMS downloads graded end to end, each into an EMPTY
gradebook (the grader registers the assignment itself), with due dates and late penalties.

The zips are built here with the names Canvas, Moodle and Blackboard give their files (see
``instructor/lms/intake.py``): late submissions, resubmissions, several attempts, stray
files, students with an underscore or a space in their name. Three kinds of notebook 01:
solved (9 points), one function left undone (6 points), as released (0 points).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from instructor.classroom.__main__ import main
from instructor.scratch_course import ScratchCourse

pytestmark = pytest.mark.xdist_group("classroom-lms")

A = "01_vector_sets"
NB = f"{A}.ipynb"
UNDONE = {"one_hot": "def one_hot(tokens, vocab):\n    raise NotImplementedError"}


@pytest.fixture(scope="module")
def kinds(generated_course: ScratchCourse) -> dict[str, str]:
    return {
        "solved": nbformat.writes(generated_course.solved(demos=False)),
        "partial": nbformat.writes(generated_course.solved(UNDONE, demos=False)),
        "released": nbformat.writes(generated_course.released()),
    }


def _zip(path: Path, files: list[tuple[str, str, tuple[int, ...]]]) -> Path:
    """``files``: (name in the zip, content, the entry's date_time)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, content, when in files:
            archive.writestr(zipfile.ZipInfo(name, date_time=when), content)
    return path


def _configure(course: ScratchCourse, *lines: str) -> None:
    with (course.root / "nbgrader_config.py").open("a") as config:
        config.write("\n" + "\n".join(lines) + "\n")


def _grade(
    course: ScratchCourse, archive: Path, db_url: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    code = main(
        [
            "grade",
            A,
            "--root",
            str(course.root),
            "--zip",
            str(archive),
            "--db",
            db_url,
            "--workers",
            "2",
            "--no-feedback",
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _gradebook(db_url: str) -> dict[str, tuple[float, float]]:
    """student -> (score, late penalty) of notebook 01."""
    with Gradebook(db_url) as gradebook:
        return {
            submission.student.id: (
                submission.notebooks[0].score,
                submission.notebooks[0].late_submission_penalty or 0.0,
            )
            for submission in gradebook.find_assignment(A).submissions
        }


def test_canvas_download(
    course: ScratchCourse, kinds: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Canvas: a LATE mark (penalty "zero"), a resubmission (``-1`` wins), an underscore in
    a name, a stray file."""
    _configure(
        course,
        f"c.Deadlines.due_dates = {{{A!r}: '2026-11-20 12:00:00 UTC'}}",
        'c.LateSubmissionPlugin.penalty_method = "zero"',
    )
    before, after = (2026, 11, 20, 11, 0, 0), (2026, 11, 20, 13, 30, 0)
    archive = _zip(
        course.root.parent / "canvas.zip",
        [
            (f"smithjane_123456_7891011_{NB}", kinds["solved"], before),
            (f"doejohn_LATE_222222_3333333_{NB}", kinds["released"], after),
            (f"doejohn_LATE_222222_3333333_{A}-1.ipynb", kinds["solved"], after),
            (f"van_der_berg_444444_5555555_{NB}", kinds["partial"], before),
            ("smithjane_123456_7891011_notes.txt", "my notes", before),
        ],
    )
    db_url = f"sqlite:///{course.root.parent / 'canvas.db'}"
    code, out = _grade(course, archive, db_url, capsys)
    assert code == 0, out
    assert "canvas layout, 3 student(s)" in out, out
    assert "smithjane_123456_7891011_notes.txt: not a notebook" in out, out
    assert "3 submission(s) to grade, 0 already graded" in out, out
    assert _gradebook(db_url) == {
        "smithjane": (9, 0),
        "doejohn": (9, 9),
        "van_der_berg": (6, 0),
    }
    submitted = course.root / "submitted"
    assert (submitted / "doejohn" / A / "timestamp.txt").read_text().startswith("2026-11-20 13:30")
    assert not (submitted / "smithjane" / A / "timestamp.txt").exists()
    assert not (course.root / "downloaded").exists()


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_blackboard_download(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    database: str,
    request: pytest.FixtureRequest,
) -> None:
    """Blackboard: the newest of two attempts wins; its time makes it 2.5 h late, which the
    per-hour penalty (10 % per started hour) charges 30 % of its score; receipts ignored."""
    if database == "postgresql":
        db_url = request.getfixturevalue("postgres_url")
    else:
        db_url = f"sqlite:///{course.root.parent / 'blackboard.db'}"
    _configure(
        course,
        f"c.Deadlines.due_dates = {{{A!r}: '2026-11-20 00:00:00 UTC'}}",
        'c.AssignLatePenalties.plugin_class = "instructor.classroom.late.PerHourPenalty"',
        "c.PerHourPenalty.percent_per_hour = 10",
    )
    entry = (2026, 11, 25, 9, 0, 0)
    archive = _zip(
        course.root.parent / "blackboard.zip",
        [
            (f"{A}_mary_ann_attempt_2026-11-19-23-59-59_{NB}", kinds["solved"], entry),
            (f"{A}_mary_ann_attempt_2026-11-19-23-59-59.txt", "receipt", entry),
            (f"{A}_jsmith_attempt_2026-11-19-20-00-00_{NB}", kinds["solved"], entry),
            (f"{A}_jsmith_attempt_2026-11-19-20-00-00.txt", "receipt", entry),
            (f"{A}_jsmith_attempt_2026-11-20-02-30-00_{NB}", kinds["partial"], entry),
            (f"{A}_jsmith_attempt_2026-11-20-02-30-00_draft.ipynb", kinds["released"], entry),
            (f"{A}_jsmith_attempt_2026-11-20-02-30-00.txt", "receipt", entry),
        ],
    )
    code, out = _grade(course, archive, db_url, capsys)
    assert code == 0, out
    assert "blackboard layout, 2 student(s)" in out and "1 older attempt(s) left out" in out
    assert f"{A}_jsmith_attempt_2026-11-20-02-30-00_draft.ipynb: " in out, out
    scores = _gradebook(db_url)
    assert scores["mary_ann"] == (9, 0)
    assert scores["jsmith"] == (6, pytest.approx(1.8))
    stamp = course.root / "submitted" / "jsmith" / A / "timestamp.txt"
    assert stamp.read_text().startswith("2026-11-20 02:30:00")


def test_moodle_download_then_a_new_gradebook(
    course: ScratchCourse, kinds: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Moodle: names with a space, an underscore and an apostrophe; a stray notebook. Graded
    again into a second, empty gradebook; then nothing is left to grade."""
    entry = (2026, 11, 20, 9, 0, 0)
    archive = _zip(
        course.root.parent / "moodle.zip",
        [
            (f"Mary_Ann O'Neil_4343_assignsubmission_file_/{NB}", kinds["solved"], entry),
            (f"Jane Smith_4242_assignsubmission_file_/{NB}", kinds["partial"], entry),
            ("Jane Smith_4242_assignsubmission_file_/old_homework.ipynb", "{}", entry),
        ],
    )
    first = f"sqlite:///{course.root.parent / 'first.db'}"
    code, out = _grade(course, archive, first, capsys)
    assert code == 0, out
    assert "old_homework.ipynb: " in out and "NOT used" in out, out
    expected = {"mary_ann_o_neil_4343": (9, 0), "jane_smith_4242": (6, 0)}
    assert _gradebook(first) == expected
    second = f"sqlite:///{course.root.parent / 'second.db'}"
    code, out = _grade(course, archive, second, capsys)
    assert code == 0 and "2 submission(s) to grade, 0 already graded" in out, out
    assert _gradebook(second) == expected
    code, out = _grade(course, archive, second, capsys)
    assert code == 0 and "0 submission(s) to grade, 2 already graded" in out, out
