"""Each LMS's download and import, built and checked by that LMS's own rules.

The download fixtures name their files with a small re-implementation of the LMS's own
naming code, and the import checks apply the LMS importer's own matching rule (re-written
here, small) to what the project writes. Each cites its source; the Blackboard sources are
not public, so its rules come from Blackboard's help pages and nbgrader's documentation
(said where used).
"""

from __future__ import annotations

import csv
import re
import uuid
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from instructor.classroom.grader.reports import export_finals
from instructor.lms.config import LMS_TOML, LmsConfigError, read_config
from instructor.lms.intake import IntakeError, read_download
from instructor.lms.roster import LmsIdentity
from support.summaries import one_cell_summary

NB = "01_vector_sets"
NOTEBOOKS = [NB]


def _zip(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "{}")
    return path


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


# ----------------------------------------------------------------------------- Canvas
# instructure/canvas-lms lib/content_zipper.rb (ContentZipper#get_filename,
# #sanitize_user_name, #sanitize_file_name, #sanitize_attachment_filename,
# #add_upload_submission) and app/models/attachment.rb (Attachment.make_unique_filename).
def canvas_user_name(sortable_name: str) -> str:
    """``sanitize_user_name``: ``gsub(/_(\\d+)_/, '\\1')`` then ``downcase``."""
    return re.sub(r"_(\d+)_", r"\1", sortable_name).lower()


def canvas_entry(
    sortable_name: str | None,
    user_id: int,
    attachment_id: int,
    display_name: str,
    *,
    late: bool = False,
    anonymous_id: str | None = None,
) -> str:
    """``"#{filename}_#{file.id}_#{sanitize_attachment_filename(file.display_name)}"``
    with ``filename = sanitize_file_name([users_name, LATE, id].compact.join("_"))``."""
    users_name = None if anonymous_id else canvas_user_name(sortable_name or "")
    ident = f"anon_{anonymous_id}" if anonymous_id else str(user_id)
    parts = [p for p in (users_name, "LATE" if late else None, ident) if p is not None]
    filename = re.sub(r"[^\w]", "", "_".join(parts))  # gsub(/[^[[:word:]]]/, "")
    shown = re.sub(r'[\x00/\\:*?"<>|]+', "_", display_name)
    return f"{filename}_{attachment_id}_{shown}"


def canvas_unique_name(filename: str, existing: set[str]) -> str:
    """``Attachment.make_unique_filename``: ``name-1`` .. ``name-7``, then ``name-<uuid>``."""
    if filename not in existing:
        return filename
    stem, ext = filename.rsplit(".", 1)
    for addition in range(1, 8):
        candidate = f"{stem}-{addition}.{ext}"
        if candidate not in existing:
            return candidate
    return f"{stem}-{uuid.uuid4()}.{ext}"


def test_canvas_download_as_the_zipper_names_it(tmp_path: Path) -> None:
    uploads: set[str] = set()
    # A student who uploaded the notebook nine times: -1..-7, then a uuid; the last wins.
    many = []
    for _ in range(9):
        name = canvas_unique_name(f"{NB}.ipynb", uploads)
        uploads.add(name)
        many.append(name)
    assert re.fullmatch(rf"{NB}-[0-9a-f-]{{36}}\.ipynb", many[-1])
    names = [
        canvas_entry("Álvarez, José", 11, 101, f"{NB}.ipynb"),
        canvas_entry("O'Neil, Mary Ann", 12, 102, f"{NB}.ipynb", late=True),
        # namesakes: one name, two users
        canvas_entry("Smith, Jane", 13, 103, f"{NB}.ipynb"),
        canvas_entry("Smith, Jane", 14, 104, f"{NB}.ipynb"),
        # anonymous grading: no name, no user id
        canvas_entry(None, 0, 105, f"{NB}.ipynb", anonymous_id="aB3x9"),
        canvas_entry(None, 0, 106, f"{NB}.ipynb", anonymous_id="Zq7Kp", late=True),
        # the ninth upload (attachment ids grow with each upload)
        *(canvas_entry("Doe, John", 15, 200 + i, n) for i, n in enumerate(many)),
    ]
    assert names[0] == f"álvarez josé_11_101_{NB}.ipynb".replace(" ", "")
    assert names[1].startswith("oneilmary ann_LATE_12_".replace(" ", ""))
    assert names[4] == f"anon_aB3x9_105_{NB}.ipynb"
    assert names[5] == f"LATE_anon_Zq7Kp_106_{NB}.ipynb"
    intake = read_download(_zip(tmp_path / "c.zip", names), NOTEBOOKS)
    assert intake.layout == "canvas"
    assert intake.unmatched == ()
    ids = {s.student: (s.lms_user_id, s.late) for s in intake.students}
    assert ids == {
        "álvarezjosé": ("11", False),
        "oneilmaryann": ("12", True),
        "smithjane_13": ("13", False),
        "smithjane_14": ("14", False),
        "anon_aB3x9": (None, False),
        "anon_Zq7Kp": (None, True),
        "doejohn": ("15", False),
    }
    assert intake.student("doejohn").files[0].member == names[-1]
    assert len(intake.student("doejohn").superseded) == 8


# lib/gradebook_importer.rb (GradebookImporter#parse_assignments, #process_student,
# #check_for_non_student_row, #row_has_student_headers?, #update_column_count) and
# Assignment.title_and_id (app/models/assignment.rb: /\A(.*)\s\((\d+)\)\z/).
def canvas_import(
    rows: list[list[str]], assignments: dict[int, str], students: dict[int, str]
) -> tuple[dict[str, int | None], dict[int, dict[int | None, str]]]:
    """What Canvas's importer makes of ``rows``: header -> the existing assignment id it
    fills (None: a new assignment), and Canvas user id -> {assignment id: grade}."""
    header = rows[0]
    assert "Student" in header[0] and "ID" in header[1]
    assert header[2:5] == ["SIS User ID", "SIS Login ID", "Section"]
    columns: dict[str, int | None] = {}
    for name in header[5:]:
        match = re.fullmatch(r"(.*)\s\((\d+)\)", name, re.DOTALL)
        found = int(match[2]) if match and int(match[2]) in assignments else None
        if found is None:  # backward compat: the exact title
            found = next((i for i, t in assignments.items() if t == name), None)
        columns[name] = found
    grades: dict[int, dict[int | None, str]] = {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            continue
        user = int(row[1]) if row[1] else None
        assert user in students, f"row {row} matches no Canvas user by ID"
        grades[user] = {columns[h]: row[5 + i] for i, h in enumerate(header[5:])}
    return columns, grades


SUMMARIES = [one_cell_summary("smithjane", NB, 9.0), one_cell_summary("doejohn", NB, 6.5)]
CANVAS_IDS = {
    ("smithjane", NB): LmsIdentity("canvas", "13"),
    ("doejohn", NB): LmsIdentity("canvas", "15"),
}


def test_canvas_csv_fills_the_mapped_assignment(tmp_path: Path) -> None:
    (tmp_path / LMS_TOML).write_text(
        f'[assignments.{NB}]\ncanvas_title = "Homework 1"\ncanvas_id = "4711"\n'
    )
    config = read_config(tmp_path / LMS_TOML)
    export_finals(tmp_path / "r", SUMMARIES, None, None, CANVAS_IDS, config)
    rows = _rows(tmp_path / "r" / "canvas.csv")
    assert rows[0][5] == "Homework 1 (4711)"
    columns, grades = canvas_import(rows, {4711: "Homework 1"}, {13: "Jane", 15: "John"})
    assert columns == {"Homework 1 (4711)": 4711}
    assert grades == {13: {4711: "9"}, 15: {4711: "6.5"}}


def test_canvas_csv_without_a_mapping_makes_a_new_assignment(tmp_path: Path) -> None:
    """What the guide says: the column is named by the assignment id; Canvas matches no
    assignment titled otherwise, and creates one."""
    export_finals(tmp_path, SUMMARIES, None, None, CANVAS_IDS)
    columns, _ = canvas_import(
        _rows(tmp_path / "canvas.csv"), {4711: "Homework 1"}, {13: "", 15: ""}
    )
    assert columns == {NB: None}


# ------------------------------------------------------------------------- Blackboard
# Blackboard Learn's source is not public. The download's names: Blackboard Help
# "Download Assignments" and nbgrader's docs ("Importing submissions from an LMS", the
# zip_collect example): <title>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>, a receipt
# <title>_<username>_attempt_<time>.txt; the title as the instructor typed it.
def test_blackboard_titles_with_spaces_and_usernames_with_a_shared_prefix(tmp_path: Path) -> None:
    names = [
        f"Homework 1_st_jsmith_attempt_2026-11-20-10-15-02_{NB}.ipynb",
        "Homework 1_st_jsmith_attempt_2026-11-20-10-15-02.txt",
        f"Homework 1_st_mdoe_attempt_2026-11-20-11-00-00_{NB}.ipynb",
    ]
    path = _zip(tmp_path / "b.zip", names)
    with pytest.raises(IntakeError, match="blackboard_title"):
        read_download(path, NOTEBOOKS, "blackboard")  # "Homework 1" or "Homework 1_st"?
    intake = read_download(path, NOTEBOOKS, "blackboard", assignment="Homework 1")
    assert [s.student for s in intake.students] == ["st_jsmith", "st_mdoe"]
    assert [s.reason for s in intake.ignored] == ["Blackboard submission receipt"]


# Blackboard Help, "Work Offline with Grade Data" / "Uploading or Downloading Grade Center
# Items for Working Offline": users by username, columns by the column id after "|"
# (none: a new text column), a comma-delimited .csv with every value in quotes.
def blackboard_upload(path: Path, columns: set[str]) -> dict[str, str | None]:
    text = path.read_text(encoding="utf-8")
    quoted = re.compile(r'"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*')
    assert all(quoted.fullmatch(line) for line in text.splitlines()), "every value in quotes"
    header = _rows(path)[0]
    assert header[2] == "Username"
    result: dict[str, str | None] = {}
    for name in header[6:]:
        match = re.search(r"\|(\S+)$", name)
        result[name] = match[1] if match and match[1] in columns else None
    return result


def test_blackboard_csv_fills_the_mapped_column(tmp_path: Path) -> None:
    (tmp_path / LMS_TOML).write_text(
        f'[assignments.{NB}]\nblackboard_title = "Homework 1"\nblackboard_id = "123456"\n'
    )
    config = read_config(tmp_path / LMS_TOML)
    export_finals(tmp_path / "r", SUMMARIES, None, None, None, config)
    upload = blackboard_upload(tmp_path / "r" / "blackboard.csv", {"123456"})
    assert upload == {"Homework 1 [Total Pts: 10 Score] |123456": "123456"}
    export_finals(tmp_path / "n", SUMMARIES)
    assert blackboard_upload(tmp_path / "n" / "blackboard.csv", {"123456"}) == {
        f"{NB} [Total Pts: 10 Score]": None  # a new column, as the guide says
    }


# ----------------------------------------------------------------------------- Moodle
# moodle/moodle mod/assign/locallib.php, assign::download_submissions:
#   $prefix = str_replace('_', ' ', $groupname . fullname($student));
#   $prefix = clean_filename($prefix . '_' . $this->get_uniqueid_for_user($userid));
#   ... $prefix . '_' . $subtype . '_' . $type . '_' (a folder per student and plugin);
# blind marking: get_string('participant', 'assign') instead of the full name.
# clean_filename is clean_param(PARAM_FILE) (lib/moodlelib.php):
#   preg_replace('~[[:cntrl:]]|[&<>"`\|\':\\\\/]~u', '', $param)
def moodle_folder(full_name: str, participant: int) -> str:
    prefix = full_name.replace("_", " ")
    cleaned = re.sub(r"[\x00-\x1f\x7f&<>\"`|':\\/]", "", f"{prefix}_{participant}")
    return f"{cleaned}_assignsubmission_file_"


def test_moodle_download_as_locallib_names_it(tmp_path: Path) -> None:
    names = [
        moodle_folder("Mary_Ann O'Neil", 4343) + f"/{NB}.ipynb",
        f"{moodle_folder('José Álvarez', 4444)}/{NB}.ipynb",
        f"{moodle_folder('Participant', 17)}/{NB}.ipynb",
    ]
    assert names[0] == f"Mary Ann ONeil_4343_assignsubmission_file_/{NB}.ipynb"
    intake = read_download(_zip(tmp_path / "m.zip", names), NOTEBOOKS)
    assert intake.layout == "moodle"
    assert {s.student: s.lms_user_id for s in intake.students} == {
        "mary_ann_oneil_4343": "4343",
        "jose_alvarez_4444": "4444",
        "participant_17": "17",
    }


# mod/assign/feedback/offline/importgradeslib.php, assignfeedback_offline_grade_importer:
# init() finds the columns get_string('recordid', 'assign'), get_string('gradenoun') and
# get_string('lastmodifiedgrade', 'assign') in the uploader's language; next() cuts
# substr($idstr, strlen(get_string('hiddenuser', 'assign'))) (bytes) and looks the rest up
# as a participant id; the modified time is read with strtotime.
def moodle_worksheet_import(
    path: Path, hiddenuser: str, recordid: str, grade: str, modified: str
) -> dict[str, str]:
    header, *rows = _rows(path)
    assert recordid in header and grade in header and modified in header, header
    ident, points, when = header.index(recordid), header.index(grade), header.index(modified)
    result = {}
    for row in rows:
        participant = row[ident].encode()[len(hiddenuser.encode()) :].decode(errors="replace")
        datetime.fromisoformat(row[when])  # strtotime reads ISO 8601
        result[participant] = row[points]
    return result


MOODLE_IDS = {("jane_smith_4242", NB): LmsIdentity("moodle", "4242", "Jane Smith")}
GERMAN = ("Teilnehmer/in", "ID", "Bewertung", "Zuletzt geändert (Bewertung)")


def test_moodle_worksheet_in_the_uploaders_language(tmp_path: Path) -> None:
    summaries = [one_cell_summary("jane_smith_4242", NB, 7.0)]
    export_finals(tmp_path / "en", summaries, None, None, MOODLE_IDS)
    english = tmp_path / "en" / f"moodle_worksheet_{NB}.csv"
    assert moodle_worksheet_import(
        english, "Participant ", "Identifier", "Grade", "Last modified (grade)"
    ) == {"4242": "7"}
    # The English worksheet read by a German Moodle: the header is not found, and the
    # Identifier would be cut after 13 bytes ("Participant 4242" -> "242").
    with pytest.raises(AssertionError):
        moodle_worksheet_import(english, *GERMAN)
    (tmp_path / LMS_TOML).write_text('[moodle]\nlanguage = "de"\n')
    config = read_config(tmp_path / LMS_TOML)
    export_finals(tmp_path / "de", summaries, None, None, MOODLE_IDS, config)
    german = tmp_path / "de" / f"moodle_worksheet_{NB}.csv"
    assert _rows(german)[1][0] == "Teilnehmer/in4242"
    assert moodle_worksheet_import(german, *GERMAN) == {"4242": "7"}


# ------------------------------------------------------------------------ lms.toml
def test_lms_toml_names_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / LMS_TOML
    assert read_config(path).assignments == {}  # optional
    path.write_text(f'[assignments.{NB}]\ncanvas_id = "Homework 1"\n')
    with pytest.raises(LmsConfigError, match="canvas_id 'Homework 1' is no number"):
        read_config(path)
    path.write_text(f'[assignments.{NB}]\ncanvas_name = "x"\n')
    with pytest.raises(LmsConfigError, match="unknown keys"):
        read_config(path)
    path.write_text('[moodle]\nlanguage = "xx"\n')
    with pytest.raises(LmsConfigError, match="participant"):
        read_config(path)
    path.write_text('[moodle]\nparticipant = "Deelnemer"\n')
    assert read_config(path).moodle.participant == "Deelnemer"
    assert datetime.now(UTC)  # keep UTC imported for the worksheet's times


# ------------------------------------------------------------- one module per LMS
def test_a_new_lms_is_one_class_in_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The intake reads every layout through ``instructor.lms.LMSS``: an LMS added there
    (here a made-up one naming files ``<student>--NB``) is detected and read, and named in
    the message for names no layout reads."""
    import instructor.lms as lms_package
    import instructor.lms.intake as intake_module
    from instructor.lms.base import Lms, Parsed, ReadContext

    class Dashes(Lms):
        name = "dashes"
        example = "jsmith--{nb}.ipynb"

        def parse(self, name: str, context: ReadContext) -> Parsed | None:
            student, sep, file_name = name.partition("--")
            return Parsed(student, file_name) if sep and "/" not in name else None

    registry = (*lms_package.LMSS, Dashes())
    monkeypatch.setattr(lms_package, "LMSS", registry)
    monkeypatch.setattr(intake_module, "LMSS", registry)
    intake = read_download(_zip(tmp_path / "d.zip", [f"jsmith--{NB}.ipynb"]), NOTEBOOKS)
    assert intake.layout == "dashes"
    assert [s.student for s in intake.students] == ["jsmith"]
    with pytest.raises(IntakeError, match="--lms dashes: jsmith--"):
        read_download(_zip(tmp_path / "u.zip", ["odd.ipynb"]), NOTEBOOKS)
