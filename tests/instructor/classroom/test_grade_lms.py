"""``grade ASSIGNMENT --zip FILE``: LMS downloads graded end to end, each into an EMPTY
gradebook (the grader registers the assignment itself), with due dates and late penalties.
Each LMS's download is graded into SQLite and into PostgreSQL (an empty database of its own
on the one server ``conftest.postgres_server`` starts; skipped where there is none).

The zips are built here with the names Canvas, Moodle and Blackboard give their files (see
``instructor/lms/canvas.py``, ``moodle.py``, ``blackboard.py``): late submissions,
resubmissions, several attempts, stray files, students with an underscore or a space in
their name. Three kinds of notebook 01: solved (all of its points: functions and concept
questions), ``one_hot`` left undone (its points fewer), as released (0 points). The points
come from the registry, ``course.toml``.
"""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from instructor import registry
from instructor.classroom.__main__ import main
from instructor.lms.export import BLACKBOARD_IDENTITY, format_points
from instructor.scratch_course import ScratchCourse

# Each test grades a download of its own: no group, but the PostgreSQL ones share one
# worker, so that one server is started (conftest.postgres_server is per worker).
ON_THE_SERVER = pytest.mark.xdist_group("classroom-lms-postgresql")
DATABASES = ["sqlite", pytest.param("postgresql", marks=ON_THE_SERVER)]

A = "01_vector_sets"
NB = f"{A}.ipynb"
UNDONE = {"one_hot": "def one_hot(tokens, vocab):\n    raise NotImplementedError"}
ENTRY = registry.load().notebook(A)
SOLVED = ENTRY.points
PARTIAL = SOLVED - ENTRY.exercise("one_hot").points


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
    course: ScratchCourse,
    archive: Path,
    db_url: str,
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    *more: str,
) -> tuple[int, str]:
    # On the test process's cluster (tests/conftest.py): the LMS intake is what these
    # tests prove; test_main.py grades with the embedded cluster.
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
            "--scheduler",
            scheduler,
            "--no-feedback",
            *more,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _report(course: ScratchCourse, name: str) -> list[list[str]]:
    with (course.root / "reports" / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _db_url(database: str, name: str, course: ScratchCourse, request: pytest.FixtureRequest) -> str:
    """An empty gradebook: a new SQLite file ``name.db``, or the test's own database on the
    PostgreSQL server (``conftest.postgres_url``)."""
    if database == "postgresql":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{course.root.parent / f'{name}.db'}"


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


@pytest.mark.parametrize("database", DATABASES)
def test_canvas_download(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    database: str,
    request: pytest.FixtureRequest,
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
    db_url = _db_url(database, "canvas", course, request)
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 0, out
    assert "canvas layout, 3 student(s)" in out, out
    assert "smithjane_123456_7891011_notes.txt: not a notebook" in out, out
    assert "3 submission(s) to grade, 0 already graded" in out, out
    assert _gradebook(db_url) == {
        "smithjane": (SOLVED, 0),
        "doejohn": (SOLVED, SOLVED),
        "van_der_berg": (PARTIAL, 0),
    }
    submitted = course.root / "submitted"
    # Canvas names no time (its zip entries carry the time the zip was built): LATE is
    # recorded as late by 1 s, enough for the "zero" penalty; the entry's 13:30 is not used.
    stamp = (submitted / "doejohn" / A / "timestamp.txt").read_text()
    assert stamp.startswith("2026-11-20 12:00:01"), stamp
    assert not (submitted / "smithjane" / A / "timestamp.txt").exists()
    assert not (course.root / "downloaded").exists()
    # canvas.csv: each row keyed on the Canvas user id the file names carry (the ID column,
    # which Canvas matches first), not on the slug; final points, late penalty subtracted.
    canvas = _report(course, "canvas.csv")
    assert canvas[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert {row[1]: (row[3], row[5]) for row in canvas[2:]} == {
        "123456": ("", str(SOLVED)),
        "222222": ("", "0"),
        "444444": ("", str(PARTIAL)),
    }


@pytest.mark.parametrize("database", DATABASES)
def test_blackboard_download(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    database: str,
    request: pytest.FixtureRequest,
) -> None:
    """Blackboard: the newest of two attempts wins; its time makes it 2.5 h late, which the
    per-hour penalty (10 % per started hour) charges 30 % of its score; receipts ignored."""
    db_url = _db_url(database, "blackboard", course, request)
    _configure(
        course,
        f"c.Deadlines.due_dates = {{{A!r}: '2026-11-20 00:00:00 UTC'}}",
        'c.AssignLatePenalties.plugin_class = "instructor.classroom.grader.course.PerHourPenalty"',
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
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 0, out
    assert "blackboard layout, 2 student(s)" in out and "1 older attempt(s) left out" in out
    assert f"{A}_jsmith_attempt_2026-11-20-02-30-00_draft.ipynb: " in out, out
    scores = _gradebook(db_url)
    assert scores["mary_ann"] == (SOLVED, 0)
    assert scores["jsmith"] == (PARTIAL, pytest.approx(0.3 * PARTIAL))
    stamp = course.root / "submitted" / "jsmith" / A / "timestamp.txt"
    assert stamp.read_text().startswith("2026-11-20 02:30:00")
    # blackboard.csv, read back by its documented columns: one row per username, the
    # assignment's "[Total Pts: N Score]" column holding the points after the penalty.
    header, *rows = _report(course, "blackboard.csv")
    assert header[:6] == list(BLACKBOARD_IDENTITY)
    column = next(i for i, title in enumerate(header) if title.endswith(" Score]"))
    assert f"[Total Pts: {format_points(SOLVED)} Score]" in header[column]
    totals = {row[header.index("Username")]: float(row[column]) for row in rows}
    assert totals == {"mary_ann": SOLVED, "jsmith": pytest.approx(0.7 * PARTIAL, abs=0.01)}


@pytest.mark.parametrize(
    "gradebooks",
    [
        pytest.param(("sqlite", "sqlite"), id="sqlite"),
        pytest.param(("postgresql",), id="postgresql", marks=ON_THE_SERVER),
    ],
)
def test_moodle_download_then_a_new_gradebook(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    gradebooks: tuple[str, ...],
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Moodle: names with a space, an underscore and an apostrophe; a stray notebook. Graded
    into each of ``gradebooks`` in turn, each empty (SQLite: a second one, with the students'
    files already in ``submitted/``); then nothing is left to grade."""
    entry = (2026, 11, 20, 9, 0, 0)
    archive = _zip(
        course.root.parent / "moodle.zip",
        [
            (f"Mary_Ann O'Neil_4343_assignsubmission_file_/{NB}", kinds["solved"], entry),
            (f"Jane Smith_4242_assignsubmission_file_/{NB}", kinds["partial"], entry),
            ("Jane Smith_4242_assignsubmission_file_/old_homework.ipynb", "{}", entry),
        ],
    )
    expected = {"mary_ann_o_neil_4343": (SOLVED, 0), "jane_smith_4242": (PARTIAL, 0)}
    for number, database in enumerate(gradebooks):
        db_url = _db_url(database, f"moodle{number}", course, request)
        code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
        assert code == 0 and "2 submission(s) to grade, 0 already graded" in out, out
        assert "old_homework.ipynb: " in out and "NOT used" in out, out
        assert _gradebook(db_url) == expected
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 0 and "0 submission(s) to grade, 2 already graded" in out, out
    # Moodle's download names no username, ID number or email (all its gradebook import
    # maps): the students are left out of moodle.csv, with a warning (logged), and graded in
    # the assignment's worksheet by the participant id the folder names carry.
    assert _report(course, "moodle.csv") == [["Username", A]]
    assert "left out (jane_smith_4242, mary_ann_o_neil_4343)" in caplog.text, caplog.text
    worksheet = _report(course, f"moodle_worksheet_{A}.csv")
    assert [row[:4] for row in worksheet[1:]] == [
        ["Participant 4242", "Jane Smith", str(PARTIAL), str(ENTRY.points)],
        ["Participant 4343", "Mary_Ann O'Neil", str(SOLVED), str(ENTRY.points)],
    ]


def test_a_minute_late_canvas_file_with_a_per_hour_penalty(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    request: pytest.FixtureRequest,
) -> None:
    """Canvas marks the file LATE and names no time (its zipper stamps every entry with the
    time the zip was built: here 2 days later). A per-hour penalty is not charged for hours
    the LMS did not give: the grader stops; with the time from a times file (1 minute late)
    it charges 1 started hour."""
    _configure(
        course,
        f"c.Deadlines.due_dates = {{{A!r}: '2026-11-20 12:00:00 UTC'}}",
        'c.AssignLatePenalties.plugin_class = "instructor.classroom.grader.course.PerHourPenalty"',
        "c.PerHourPenalty.percent_per_hour = 10",
    )
    archive = _zip(
        course.root.parent / "canvas.zip",
        [(f"doejohn_LATE_222222_3333333_{NB}", kinds["solved"], (2026, 11, 22, 12, 0, 0))],
    )
    db_url = _db_url("sqlite", "late", course, request)
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 2 and "--times times.csv" in out, out
    assert not (course.root / "submitted").exists()
    times = course.root.parent / "times.csv"
    times.write_text("student,time\ndoejohn,2026-11-20 12:01:00 UTC\n")
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler(), "--times", str(times))
    assert code == 0, out
    assert _gradebook(db_url) == {"doejohn": (SOLVED, pytest.approx(0.1 * SOLVED))}


def test_blackboard_assignment_titled_otherwise_with_shared_username_prefixes(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    request: pytest.FixtureRequest,
) -> None:
    """Blackboard names the files by the assignment's title ("Homework 1", with a space),
    and two usernames share the prefix "st_": lms.toml gives the title, so both stay whole,
    and the column id, so blackboard.csv fills the existing column ("... |123456")."""
    (course.root / "lms.toml").write_text(
        f'[assignments.{A}]\nblackboard_title = "Homework 1"\nblackboard_id = "123456"\n'
    )
    entry = (2026, 11, 25, 9, 0, 0)
    archive = _zip(
        course.root.parent / "homework1.zip",
        [
            (f"Homework 1_st_jsmith_attempt_2026-11-19-20-00-00_{NB}", kinds["solved"], entry),
            ("Homework 1_st_jsmith_attempt_2026-11-19-20-00-00.txt", "receipt", entry),
            (f"Homework 1_st_mdoe_attempt_2026-11-19-21-00-00_{NB}", kinds["partial"], entry),
            ("Homework 1_st_mdoe_attempt_2026-11-19-21-00-00.txt", "receipt", entry),
        ],
    )
    db_url = _db_url("sqlite", "homework1", course, request)
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler(), "--lms", "blackboard")
    assert code == 0, out
    assert _gradebook(db_url) == {"st_jsmith": (SOLVED, 0), "st_mdoe": (PARTIAL, 0)}
    header, *rows = _report(course, "blackboard.csv")
    column = next(i for i, title in enumerate(header) if title.endswith("|123456"))
    assert header[column].startswith("Homework 1 [Total Pts: ")
    totals = {row[header.index("Username")]: float(row[column]) for row in rows}
    assert totals == {"st_jsmith": SOLVED, "st_mdoe": PARTIAL}


def test_a_german_moodle_worksheet_names_the_right_participants(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    request: pytest.FixtureRequest,
) -> None:
    """A worksheet for a Moodle whose uploader reads German: its Identifier is cut by the
    length of "Teilnehmer/in" (mod/assign/feedback/offline/importgradeslib.php), so each
    row must start with it to name participant 4242, not 242."""
    (course.root / "lms.toml").write_text('[moodle]\nlanguage = "de"\n')
    entry = (2026, 11, 20, 9, 0, 0)
    archive = _zip(
        course.root.parent / "moodle_de.zip",
        [
            (f"Jürgen Weiß_4242_assignsubmission_file_/{NB}", kinds["solved"], entry),
            (f"Anna Schmidt_4343_assignsubmission_file_/{NB}", kinds["partial"], entry),
        ],
    )
    db_url = _db_url("sqlite", "moodle_de", course, request)
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 0, out
    # "ü" is written "u" (its decomposition starts with an ASCII letter); "ß" has none and
    # is kept as it is (it was dropped before: instructor.lms.base.slug).
    assert _gradebook(db_url) == {
        "jurgen_weiß_4242": (SOLVED, 0),
        "anna_schmidt_4343": (PARTIAL, 0),
    }
    header, *rows = _report(course, f"moodle_worksheet_{A}.csv")
    assert header[0] == "ID", header
    grade = header.index("Bewertung")
    cut = len(b"Teilnehmer/in")
    assert {row[0].encode()[cut:].decode(): float(row[grade]) for row in rows} == {
        "4242": SOLVED,
        "4343": PARTIAL,
    }


def test_canvas_anonymous_and_uuid_suffixed_files(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    shared_scheduler: Callable[[], str],
    request: pytest.FixtureRequest,
) -> None:
    """Anonymous grading names files anon_<anonymous id>_<attachment id>_<file>; a ninth
    upload of one name carries a uuid (Attachment.make_unique_filename). Each is graded
    into its own student, the newest upload winning."""
    entry = (2026, 11, 20, 9, 0, 0)
    uploads = [f"{A}.ipynb", *(f"{A}-{n}.ipynb" for n in range(1, 8))]
    uploads.append(f"{A}-0b4f2d0e-8a1c-4c5e-9f3a-1d2e3f4a5b6c.ipynb")
    files = [(f"anon_aB3x9_105_{NB}", kinds["solved"], entry)]
    files += [
        (f"doejohn_15_{200 + i}_{name}", kinds["partial" if i < 8 else "solved"], entry)
        for i, name in enumerate(uploads)
    ]
    archive = _zip(course.root.parent / "canvas_anon.zip", files)
    db_url = _db_url("sqlite", "canvas_anon", course, request)
    code, out = _grade(course, archive, db_url, capsys, shared_scheduler())
    assert code == 0, out
    assert "8 older attempt(s) left out" in out, out
    assert _gradebook(db_url) == {"anon_aB3x9": (SOLVED, 0), "doejohn": (SOLVED, 0)}


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_download_with_a_zip_bomb_and_hostile_ids_grades_the_rest(
    course: ScratchCourse,
    kinds: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    sandbox: str,
    monkeypatch: pytest.MonkeyPatch,
    shared_scheduler: Callable[[], str],
) -> None:
    """A Canvas download with a 100 MiB bomb in a zip under 1 MiB, a file over the limit
    set with --max-file-mib, and names whose ids are a glob or a tag: each is refused and
    named, and the honest students of the same download are graded in full."""
    import shutil

    from instructor.classroom.worker.isolation import isolation

    if sandbox == "none":
        monkeypatch.setenv("COURSE_SANDBOX", "none")
    else:
        monkeypatch.delenv("COURSE_SANDBOX", raising=False)
    isolation.cache_clear()
    if sandbox == "bwrap" and (shutil.which("bwrap") is None or isolation() != "bwrap"):
        pytest.skip("bubblewrap does not work here (make system-packages installs it)")
    when = (2026, 11, 20, 11, 0, 0)
    bomb = f"bombjoe_16_103_{NB}"
    padded = f"padded_17_104_{NB}"
    archive = course.root.parent / "bomb.zip"
    members = {
        f"smithjane_13_101_{NB}": kinds["solved"].encode(),
        f"doejohn_15_102_{NB}": kinds["partial"].encode(),
        bomb: b" " * (100 * 2**20),
        padded: kinds["solved"].encode() + b" " * (9 * 2**20),
        f"*_18_105_{NB}": kinds["solved"].encode(),
        f"<img src=x onerror=alert(1)>_19_106_{NB}": kinds["solved"].encode(),
    }
    with zipfile.ZipFile(archive, "w") as handle:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=when)
            handle.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    assert archive.stat().st_size < 2**20
    db_url = f"sqlite:///{course.root.parent / 'bomb.db'}"
    try:
        # The cluster of the isolation just set (a worker reads COURSE_SANDBOX at start).
        code, out = _grade(
            course,
            archive,
            db_url,
            capsys,
            shared_scheduler(),
            "--lms",
            "canvas",
            "--max-file-mib",
            "8",
        )
    finally:
        isolation.cache_clear()
    assert code == 0, out
    assert f"{bomb}: refused: declares 104,857,600 bytes, over the limit of 8 MiB per file" in out
    assert f"{padded}: refused: declares" in out
    assert "student id '*' from the canvas names of the zip refused" in out, out
    assert "student id '<img src=x onerror=alert(1)>' from the canvas names" in out, out
    assert _gradebook(db_url) == {"smithjane": (SOLVED, 0), "doejohn": (PARTIAL, 0)}
    assert sorted(p.name for p in (course.root / "submitted").iterdir()) == ["doejohn", "smithjane"]
