"""Reading LMS downloads (instructor.lms.intake), with zips named as each LMS names them."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from nbgrader.utils import parse_utc

from instructor.lms.intake import (
    Intake,
    IntakeError,
    SubmissionExists,
    UnknownLayout,
    read_download,
    slug,
    timestamp_text,
    write_submissions,
)
from instructor.lms.roster import ROSTER, LmsIdentity, read_roster

NB = "01_vector_sets"
NB2 = "02_soft_select"
NOTEBOOKS = [NB, NB2]
ENTRY_TIME = (2026, 11, 20, 9, 30, 0)


def notebook_bytes(tag: str) -> bytes:
    """A minimal notebook that says which file it was."""
    return json.dumps(
        {"cells": [], "metadata": {"tag": tag}, "nbformat": 4, "nbformat_minor": 5}
    ).encode()


def make_zip(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            info = zipfile.ZipInfo(name, date_time=ENTRY_TIME)
            data = b"receipt" if name.endswith(".txt") else notebook_bytes(name)
            archive.writestr(info, data if name.endswith(".ipynb") else b"other")
    return path


def members(intake: Intake, student: str) -> dict[str, str]:
    return {f.notebook: f.member for f in intake.student(student).files}


# ------------------------------------------------------------------------------- Canvas
CANVAS = [
    f"smithjane_123456_7891011_{NB}.ipynb",
    f"smithjane_123456_7891011_{NB2}.ipynb",
    # late, and handed in three times under the same name: -2 is the newest
    f"doejohn_LATE_222222_3333333_{NB}.ipynb",
    f"doejohn_LATE_222222_3333333_{NB}-1.ipynb",
    f"doejohn_LATE_222222_3333333_{NB}-2.ipynb",
    # a slug with an underscore (not what Canvas writes, but it must not break the parse)
    f"van_der_berg_444444_5555555_{NB}.ipynb",
    # stray files: another notebook, a non-notebook
    "smithjane_123456_7891011_scratch.ipynb",
    "smithjane_123456_7891011_notes.txt",
]


def test_canvas(tmp_path: Path) -> None:
    intake = read_download(make_zip(tmp_path / "c.zip", CANVAS), NOTEBOOKS)
    assert intake.layout == "canvas"
    assert [s.student for s in intake.students] == ["doejohn", "smithjane", "van_der_berg"]

    jane = intake.student("smithjane")
    assert jane.lms_user_id == "123456" and jane.late is False
    assert members(intake, "smithjane") == {
        NB: f"smithjane_123456_7891011_{NB}.ipynb",
        NB2: f"smithjane_123456_7891011_{NB2}.ipynb",
    }
    john = intake.student("doejohn")
    assert john.late is True and john.lms_user_id == "222222"
    assert members(intake, "doejohn") == {NB: f"doejohn_LATE_222222_3333333_{NB}-2.ipynb"}
    assert {f.member for f in john.superseded} == {
        f"doejohn_LATE_222222_3333333_{NB}.ipynb",
        f"doejohn_LATE_222222_3333333_{NB}-1.ipynb",
    }
    # Canvas names no time: the zip entry's is recorded, and said to be one.
    file = john.files[0]
    assert file.timestamp == datetime(*ENTRY_TIME, tzinfo=UTC)
    assert file.timestamp_source == "zip entry"
    assert members(intake, "van_der_berg") == {NB: f"van_der_berg_444444_5555555_{NB}.ipynb"}

    unmatched = {s.member: s.reason for s in intake.unmatched}
    assert set(unmatched) == {
        "smithjane_123456_7891011_scratch.ipynb",
        "smithjane_123456_7891011_notes.txt",
    }
    assert (
        "none of the assignment's notebooks" in unmatched["smithjane_123456_7891011_scratch.ipynb"]
    )
    assert "not a notebook" in unmatched["smithjane_123456_7891011_notes.txt"]


def test_canvas_students_sharing_a_slug_are_kept_apart(tmp_path: Path) -> None:
    names = [f"smithjane_1_10_{NB}.ipynb", f"smithjane_2_20_{NB}.ipynb"]
    intake = read_download(make_zip(tmp_path / "c.zip", names), NOTEBOOKS, "canvas")
    assert [s.student for s in intake.students] == ["smithjane_1", "smithjane_2"]


# ------------------------------------------------------------------------------- Moodle
MOODLE = [
    f"Jane Smith_4242_assignsubmission_file_/{NB}.ipynb",
    f"Jane Smith_4242_assignsubmission_file_/{NB2}.ipynb",
    f"Mary_Ann O'Neil_4343_assignsubmission_file_/{NB}.ipynb",
    "Mary_Ann O'Neil_4343_assignsubmission_onlinetext_/onlinetext.html",
    f"José Álvarez_4444_assignsubmission_file_/{NB}.ipynb",
    # stray: a notebook of another assignment
    "Jane Smith_4242_assignsubmission_file_/old_homework.ipynb",
    "__MACOSX/Jane Smith_4242_assignsubmission_file_/._01_vector_sets.ipynb",
]


def test_moodle(tmp_path: Path) -> None:
    intake = read_download(make_zip(tmp_path / "m.zip", MOODLE), NOTEBOOKS)
    assert intake.layout == "moodle"
    assert [s.student for s in intake.students] == [
        "jane_smith_4242",
        "jose_alvarez_4444",
        "mary_ann_o_neil_4343",
    ]
    jane = intake.student("jane_smith_4242")
    assert (jane.display_name, jane.lms_user_id, jane.late) == ("Jane Smith", "4242", None)
    assert set(members(intake, "jane_smith_4242")) == {NB, NB2}
    mary = intake.student("mary_ann_o_neil_4343")
    assert mary.display_name == "Mary_Ann O'Neil"
    assert members(intake, "mary_ann_o_neil_4343") == {
        NB: f"Mary_Ann O'Neil_4343_assignsubmission_file_/{NB}.ipynb"
    }
    assert {s.member for s in intake.unmatched} == {
        "Mary_Ann O'Neil_4343_assignsubmission_onlinetext_/onlinetext.html",
        "Jane Smith_4242_assignsubmission_file_/old_homework.ipynb",
    }
    assert [s.reason for s in intake.ignored] == ["operating system metadata"]


def test_moodle_without_folders(tmp_path: Path) -> None:
    names = [f"Jane Smith_4242_assignsubmission_file_{NB}.ipynb"]
    intake = read_download(make_zip(tmp_path / "m.zip", names), NOTEBOOKS)
    assert intake.layout == "moodle"
    assert members(intake, "jane_smith_4242") == {NB: names[0]}


# --------------------------------------------------------------------------- Blackboard
BLACKBOARD = [
    f"{NB}_jsmith_attempt_2026-11-20-10-15-02_{NB}.ipynb",
    f"{NB}_jsmith_attempt_2026-11-20-10-15-02.txt",
    # a second attempt, newer: wins
    f"{NB}_jsmith_attempt_2026-11-21-08-00-59_{NB}.ipynb",
    f"{NB}_jsmith_attempt_2026-11-21-08-00-59.txt",
    # usernames with an underscore and a dot
    f"{NB}_mary_ann_attempt_2026-11-19-23-59-59_{NB}.ipynb",
    f"{NB}_mary_ann_attempt_2026-11-19-23-59-59.txt",
    f"{NB}_j.doe_attempt_2026-11-22-12-00-00_{NB}.ipynb",
    f"{NB}_j.doe_attempt_2026-11-22-12-00-00_{NB2}.ipynb",
    # stray: a file of no notebook of the assignment
    f"{NB}_j.doe_attempt_2026-11-22-12-00-00_draft.ipynb",
]


def test_blackboard(tmp_path: Path) -> None:
    intake = read_download(make_zip(tmp_path / "b.zip", BLACKBOARD), NOTEBOOKS)
    assert intake.layout == "blackboard"
    assert [s.student for s in intake.students] == ["j.doe", "jsmith", "mary_ann"]

    jsmith = intake.student("jsmith")
    assert members(intake, "jsmith") == {NB: f"{NB}_jsmith_attempt_2026-11-21-08-00-59_{NB}.ipynb"}
    assert [f.member for f in jsmith.superseded] == [
        f"{NB}_jsmith_attempt_2026-11-20-10-15-02_{NB}.ipynb"
    ]
    assert jsmith.timestamp == datetime(2026, 11, 21, 8, 0, 59, tzinfo=UTC)
    assert jsmith.files[0].timestamp_source == "lms"
    assert set(members(intake, "j.doe")) == {NB, NB2}
    assert members(intake, "mary_ann") == {
        NB: f"{NB}_mary_ann_attempt_2026-11-19-23-59-59_{NB}.ipynb"
    }

    assert len(intake.ignored) == 3
    assert all(s.reason == "Blackboard submission receipt" for s in intake.ignored)
    assert [s.member for s in intake.unmatched] == [
        f"{NB}_j.doe_attempt_2026-11-22-12-00-00_draft.ipynb"
    ]


def test_blackboard_assignment_name_and_time_zone(tmp_path: Path) -> None:
    """An assignment name that is no notebook name, with a space; server times in UTC-5."""
    names = [
        f"Vector sets_jsmith_attempt_2026-11-20-10-15-02_{NB}.ipynb",
        f"Vector sets_a_b_attempt_2026-11-20-10-15-02_{NB}.ipynb",
    ]
    zip_path = make_zip(tmp_path / "b.zip", names)
    eastern = timezone(timedelta(hours=-5))
    intake = read_download(zip_path, NOTEBOOKS, "blackboard", tz=eastern)
    assert [s.student for s in intake.students] == ["a_b", "jsmith"]
    assert intake.student("jsmith").timestamp == datetime(2026, 11, 20, 15, 15, 2, tzinfo=UTC)
    # One student alone cannot show where the assignment name ends: it must be given.
    alone = make_zip(tmp_path / "one.zip", names[1:])
    with pytest.raises(IntakeError, match="assignment="):
        read_download(alone, NOTEBOOKS, "blackboard")
    intake = read_download(alone, NOTEBOOKS, "blackboard", assignment="Vector sets")
    assert [s.student for s in intake.students] == ["a_b"]


# -------------------------------------------------------------------------------- plain
def test_plain(tmp_path: Path) -> None:
    names = [
        f"jsmith_{NB}.ipynb",
        f"mary_ann_{NB}.ipynb",
        f"mary_ann_{NB2}.ipynb",
        f"jane.doe/{NB}.ipynb",
        "jane.doe/scratch.ipynb",
        f"Jane Doe/{NB}.ipynb",  # a space: no student id
        "README.md",
    ]
    intake = read_download(make_zip(tmp_path / "p.zip", names), NOTEBOOKS)
    assert intake.layout == "plain"
    assert [s.student for s in intake.students] == ["jane.doe", "jsmith", "mary_ann"]
    assert set(members(intake, "mary_ann")) == {NB, NB2}
    reasons = {s.member: s.reason for s in intake.unmatched}
    assert set(reasons) == {"jane.doe/scratch.ipynb", f"Jane Doe/{NB}.ipynb", "README.md"}
    assert reasons[f"Jane Doe/{NB}.ipynb"].startswith("student id 'Jane Doe' from the plain")


# A student id each layout reads from a name, of every kind that nbgrader's globs, a path,
# a shell, a spreadsheet or a page would read as more than text. Moodle's ids are slugs
# made by the grader (letters, digits, _): its names cannot carry one.
HOSTILE_NAMES = {
    "canvas": [
        f"*_1_2_{NB}.ipynb",
        f"[b]ob_3_4_{NB}.ipynb",
        f"alice _5_6_{NB}.ipynb",
        f"<img src=x onerror=alert(1)>_7_8_{NB}.ipynb",
        f"..._9_10_{NB}.ipynb",
    ],
    "blackboard": [
        f"{NB}_*_attempt_2026-11-20-10-15-02_{NB}.ipynb",
        f"{NB}_alice _attempt_2026-11-20-10-15-02_{NB}.ipynb",
        f"{NB}_$(id)_attempt_2026-11-20-10-15-02_{NB}.ipynb",
        f"{NB}_-rf_attempt_2026-11-20-10-15-02_{NB}.ipynb",
    ],
    "plain": [
        f"*_{NB}.ipynb",
        f"[b]ob/{NB}.ipynb",
        f"alice /{NB}.ipynb",
        f"=1+1_{NB}.ipynb",
        f"../{NB}.ipynb",
        f"a\u202eb/{NB}.ipynb",
    ],
    "pattern": [
        f"hw/{student}/{NB}.ipynb" for student in ("*", "[b]ob", " alice", "..", "a;b", "a/b")
    ],
}
HONEST_NAMES = {
    "canvas": f"smithjane_123456_7891011_{NB}.ipynb",
    "blackboard": f"{NB}_j.smith@uni-x.edu_attempt_2026-11-20-10-15-02_{NB}.ipynb",
    "plain": f"j.smith_2/{NB}.ipynb",
    "pattern": f"hw/j.smith_2/{NB}.ipynb",
}
HONEST_IDS = {
    "canvas": "smithjane",
    "blackboard": "j.smith@uni-x.edu",
    "plain": "j.smith_2",
    "pattern": "j.smith_2",
}


@pytest.mark.parametrize("layout", sorted(HOSTILE_NAMES))
def test_ids_outside_the_allow_list_are_refused_in_every_layout(
    tmp_path: Path, layout: str
) -> None:
    """Every file of a refused id is listed as not used, with a message naming the id and
    how to map it; the honest student of the same zip is read and written, and nothing is
    made for a refused id."""
    archive = tmp_path / "d.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name in [HONEST_NAMES[layout], *HOSTILE_NAMES[layout]]:
            handle.writestr(name, notebook_bytes(name))
    if layout == "pattern":
        intake = read_download(archive, [NB], pattern=r"hw/(?P<student>.+)/(?P<notebook>[^/]+)")
    else:
        intake = read_download(archive, [NB], layout)
    honest = HONEST_IDS[layout]
    assert [s.student for s in intake.students] == [honest]
    reasons = {s.member: s.reason for s in intake.unmatched}
    assert set(reasons) == set(HOSTILE_NAMES[layout]), reasons
    for reason in reasons.values():
        assert reason.startswith("student id ") and " refused: " in reason
        assert "--pattern" in reason and "lms_students.json" in reason
    course = tmp_path / "course"
    write_submissions(intake, archive, course / "submitted", NB)
    made = sorted(str(p.relative_to(course)) for p in course.rglob("*"))
    assert [m for m in made if m != ROSTER and not m.endswith("timestamp.txt")] == [
        "submitted",
        f"submitted/{honest}",
        f"submitted/{honest}/{NB}",
        f"submitted/{honest}/{NB}/{NB}.ipynb",
    ]


def test_an_intake_made_elsewhere_is_checked_before_writing(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "p.zip", [f"jsmith_{NB}.ipynb"])
    intake = read_download(archive, [NB])
    forged = replace(intake, students=(replace(intake.students[0], student="*"),))
    with pytest.raises(IntakeError, match=r"student id '\*' from the download refused"):
        write_submissions(forged, archive, tmp_path / "submitted", NB)
    assert not (tmp_path / "submitted").exists()


def test_plain_duplicates_are_conflicts_not_guesses(tmp_path: Path) -> None:
    names = [f"jsmith_{NB}.ipynb", f"jsmith/{NB}.ipynb", f"jsmith/{NB2}.ipynb"]
    intake = read_download(make_zip(tmp_path / "p.zip", names), NOTEBOOKS, "plain")
    assert members(intake, "jsmith") == {NB2: f"jsmith/{NB2}.ipynb"}
    assert {s.member for s in intake.unmatched} == {f"jsmith_{NB}.ipynb", f"jsmith/{NB}.ipynb"}
    assert all("nothing tells which is newer" in s.reason for s in intake.unmatched)


def test_pattern(tmp_path: Path) -> None:
    names = [
        f"hw1/jsmith--{NB}--2026-11-20T10:15:02.ipynb",
        f"hw1/jsmith--{NB}--2026-11-19T10:15:02.ipynb",
        "hw1/notes.txt",
        "hw1/other.ipynb",
    ]
    pattern = r"hw1/(?P<student>[^/]+?)--(?P<notebook>[^/]+?)--(?P<timestamp>[^/]+)\.ipynb"
    intake = read_download(make_zip(tmp_path / "x.zip", names), NOTEBOOKS, pattern=pattern)
    assert intake.layout == "pattern"
    assert members(intake, "jsmith") == {NB: names[0]}
    assert intake.student("jsmith").timestamp == datetime(2026, 11, 20, 10, 15, 2, tzinfo=UTC)
    assert {s.member for s in intake.unmatched} == {"hw1/notes.txt", "hw1/other.ipynb"}
    with pytest.raises(IntakeError, match="named groups"):
        read_download(tmp_path / "x.zip", NOTEBOOKS, pattern=r"(?P<student>.+)\.ipynb")


# ----------------------------------------------------------------------- unknown layouts
def test_unknown_layout_shows_names_and_how_to_name_it(tmp_path: Path) -> None:
    names = [f"submission-{i}.ipynb" for i in range(8)]
    with pytest.raises(UnknownLayout) as caught:
        read_download(make_zip(tmp_path / "u.zip", names), NOTEBOOKS)
    message = str(caught.value)
    assert "submission-0.ipynb" in message and "and 2 more" in message
    assert "--lms canvas" in message and "--pattern" in message
    assert "(?P<student>" in message


def test_a_stray_notebook_stops_detection_but_not_a_named_layout(tmp_path: Path) -> None:
    zip_path = make_zip(tmp_path / "c.zip", [*CANVAS, "notes.ipynb"])
    with pytest.raises(UnknownLayout, match="notes.ipynb"):
        read_download(zip_path, NOTEBOOKS)
    intake = read_download(zip_path, NOTEBOOKS, "canvas")
    assert (
        "not named as the canvas layout"
        in {s.member: s.reason for s in intake.unmatched}["notes.ipynb"]
    )


def test_no_notebook_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(UnknownLayout, match="no notebook"):
        read_download(make_zip(tmp_path / "e.zip", ["readme.txt"]), NOTEBOOKS)
    with pytest.raises(IntakeError, match="unknown LMS"):
        read_download(tmp_path / "e.zip", NOTEBOOKS, "sakai")
    (tmp_path / "bad.zip").write_text("not a zip")
    with pytest.raises(IntakeError, match="not a zip"):
        read_download(tmp_path / "bad.zip", NOTEBOOKS)


def test_slug() -> None:
    assert slug("Jane Smith") == "jane_smith"
    assert slug("José  O'Neil-Álvarez") == "jose_o_neil_alvarez"


# -------------------------------------------------------------------- write_submissions
def test_write_submissions(tmp_path: Path) -> None:
    zip_path = make_zip(tmp_path / "b.zip", BLACKBOARD)
    intake = read_download(zip_path, NOTEBOOKS)
    submitted = tmp_path / "submitted"

    written = write_submissions(intake, zip_path, submitted, NB)

    folder = submitted / "jsmith" / NB
    assert set(written) >= {folder / f"{NB}.ipynb", folder / "timestamp.txt"}
    notebook = json.loads((folder / f"{NB}.ipynb").read_text())
    assert notebook["metadata"]["tag"] == f"{NB}_jsmith_attempt_2026-11-21-08-00-59_{NB}.ipynb"
    # nbgrader reads the timestamp back as the submission time (naive UTC).
    stamp = (folder / "timestamp.txt").read_text()
    assert stamp == "2026-11-21 08:00:59.000000 UTC"
    assert parse_utc(stamp) == datetime(2026, 11, 21, 8, 0, 59)
    assert (submitted / "j.doe" / NB / f"{NB2}.ipynb").exists()

    # Again: nothing to do.
    assert write_submissions(intake, zip_path, submitted, NB) == []

    # A different file there: refused unless replace=True.
    (folder / f"{NB}.ipynb").write_text("{}")
    with pytest.raises(SubmissionExists, match="replace=True"):
        write_submissions(intake, zip_path, submitted, NB)
    assert (folder / f"{NB}.ipynb").read_text() == "{}"
    assert write_submissions(intake, zip_path, submitted, NB, replace=True) == [
        folder / f"{NB}.ipynb"
    ]


def test_the_lms_ids_are_kept_next_to_submitted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Canvas's user ids and Moodle's participant ids (which the exports need) go to
    lms_students.json next to submitted/, per assignment; other assignments' are kept; a
    Blackboard download (its ids are usernames) records none and removes those it replaces."""
    submitted = tmp_path / "submitted"
    canvas = make_zip(tmp_path / "c.zip", CANVAS)
    write_submissions(read_download(canvas, NOTEBOOKS), canvas, submitted, NB)
    moodle = make_zip(tmp_path / "m.zip", MOODLE)
    write_submissions(read_download(moodle, NOTEBOOKS), moodle, submitted, NB2)
    roster = read_roster(tmp_path / ROSTER)
    assert roster[("smithjane", NB)] == LmsIdentity("canvas", "123456")
    assert roster[("doejohn", NB)] == LmsIdentity("canvas", "222222")
    assert roster[("jane_smith_4242", NB2)] == LmsIdentity("moodle", "4242", "Jane Smith")
    assert len(roster) == 6
    # The same student id for another Canvas user in another assignment: logged.
    other = make_zip(tmp_path / "o.zip", [f"smithjane_999_1_{NB}.ipynb"])
    write_submissions(read_download(other, NOTEBOOKS), other, submitted, NB2)
    assert "smithjane is canvas user 999 in 02_soft_select but 123456 elsewhere" in caplog.text
    blackboard = make_zip(
        tmp_path / "b.zip", [f"{NB}_smithjane_attempt_2026-11-20-10-15-02_{NB}.ipynb"]
    )
    write_submissions(read_download(blackboard, NOTEBOOKS), blackboard, submitted, NB, replace=True)
    roster = read_roster(tmp_path / ROSTER)
    assert ("smithjane", NB) not in roster and ("doejohn", NB) in roster
    assert roster[("smithjane", NB2)] == LmsIdentity("canvas", "999")


def test_zip_entry_times_are_written_only_when_asked(tmp_path: Path) -> None:
    zip_path = make_zip(tmp_path / "c.zip", CANVAS)
    intake = read_download(zip_path, NOTEBOOKS)
    write_submissions(intake, zip_path, tmp_path / "a", NB)
    assert not (tmp_path / "a" / "doejohn" / NB / "timestamp.txt").exists()
    write_submissions(intake, zip_path, tmp_path / "b", NB, zip_times=True)
    stamp = (tmp_path / "b" / "doejohn" / NB / "timestamp.txt").read_text()
    assert parse_utc(stamp) == datetime(*ENTRY_TIME)


def test_timestamp_text_converts_to_utc() -> None:
    moment = datetime(2026, 11, 20, 10, 0, tzinfo=timezone(timedelta(hours=2)))
    assert timestamp_text(moment) == "2026-11-20 08:00:00.000000 UTC"
