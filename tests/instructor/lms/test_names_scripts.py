"""Every student of an LMS download is matched and exported, whatever script their name is in.

Each LMS's download is built as that LMS names it (the helpers of ``test_lms_rules.py``'s
kind, re-stated here with the Unicode each LMS keeps), with names in Chinese, Arabic,
Cyrillic, Greek, accented Latin, Devanagari, Korean and Vietnamese, names typed in
decomposed form (NFD, as macOS writes them), with apostrophes and hyphens, a name of
symbols only and a name longer than a file name. Every student must come out of the intake
with an id the course's rule takes (:func:`instructor.student_ids.id_problem`), none left
unmatched, be written to ``submitted/`` and appear in the LMS's grade import under the id
that import matches (Canvas's user id, Moodle's participant id, Blackboard's username, the
plain layout's student id).

Before the fix the Moodle reader dropped every letter outside ASCII (``王小明_4202`` gave
``_4202``, refused) and Canvas's names in NFD or of symbols only were refused.
"""

from __future__ import annotations

import csv
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from instructor.lms.export import write_lms_exports
from instructor.lms.intake import Intake, read_download, write_submissions
from instructor.lms.roster import read_roster, roster_path
from instructor.lms.table import Finals
from instructor.student_ids import MAX_BYTES, MAX_CHARS, id_problem

NB = "01_vector_sets"
NB2 = "02_soft_select"
NOTEBOOKS = [NB]


@dataclass(frozen=True)
class Person:
    """A student as the LMS knows them: first and last name, and the LMS's number."""

    first: str
    last: str
    number: int

    @property
    def full_name(self) -> str:
        """Moodle's ``fullname()``: first then last."""
        return f"{self.first} {self.last}".strip()

    @property
    def sortable_name(self) -> str:
        """Canvas's ``sortable_name``: ``Last, First``."""
        return f"{self.last}, {self.first}" if self.first else self.last


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


PEOPLE = (
    Person("小明", "王", 4202),  # Chinese (Moodle's fullname order is configurable)
    Person("محمد", "علي", 4203),  # Arabic
    Person("Иван", "Петров", 4204),  # Cyrillic
    Person("Γιώργος", "Παπαδόπουλος", 4205),  # Greek, with tonos
    Person("José", "Álvarez", 4206),  # accented Latin, composed
    Person("Søren", "Ødegård", 4207),  # Latin letters with no ASCII decomposition
    Person("Jürgen", "Weiß", 4208),
    Person("अनुराग", "शर्मा", 4209),  # Devanagari: vowel signs (marks) and a virama
    Person("민준", "김", 4210),  # Korean Hangul syllables (NFD splits them into jamo)
    Person(nfd("Zoë"), nfd("Brontë"), 4211),  # typed decomposed, as macOS does
    Person("Mary-Ann", "O'Neil", 4212),  # a hyphen and an apostrophe
    Person("Nguyễn", "Văn An", 4213),  # Vietnamese: stacked diacritics
    Person("", "★☆", 4214),  # symbols only: no letter to keep
    Person("Łukasz", "Wysoki-" + "Brzęczyszczykiewicz" * 4, 4215),  # past 64 characters
    Person(nfd("Ἀλέξανδρος"), "Ξ", 4216),  # Greek with breathing and accent, decomposed
)


def letters(text: str) -> str:
    """The letters and digits of ``text`` (NFC, lower case): what an id must keep of it."""
    text = unicodedata.normalize("NFC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def folded(text: str) -> str:
    """``text`` with each letter whose decomposition starts with an ASCII letter written as
    that letter (``é`` -> ``e``), every other letter as it is (``ß``, ``ø``, ``王``)."""
    out = []
    for char in unicodedata.normalize("NFC", text):
        base = unicodedata.normalize("NFKD", char)[0]
        out.append(base if base.isascii() else char)
    return "".join(out)


REFUSED = re.compile(r"[' ]")
"""What the id rule refuses in a username or a plain name (an apostrophe, a space): the
LMS's own id, or the instructor's, is refused as it is, with how to map it; never rewritten."""


def _zip(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, '{"cells": [], "metadata": {}, "nbformat": 4}')
    return path


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


# moodle/moodle mod/assign/locallib.php, assign::download_submissions (as in
# test_lms_rules.py): str_replace('_', ' ', fullname), then clean_filename (PARAM_FILE:
# '~[[:cntrl:]]|[&<>"`\|\':\\\\/]~u' removed; every other character, any script, kept).
def moodle_entry(person: Person) -> str:
    prefix = person.full_name.replace("_", " ")
    cleaned = re.sub(r"[\x00-\x1f\x7f&<>\"`|':\\/]", "", f"{prefix}_{person.number}")
    return f"{cleaned}_assignsubmission_file_/{NB}.ipynb"


def ruby_word(char: str) -> bool:
    """Onigmo's ``[[:word:]]`` on a UTF-8 string: a letter, a mark, a decimal digit or a
    connector (Python's ``\\w`` leaves out the marks, which Canvas keeps)."""
    kind = unicodedata.category(char)
    return kind[0] in "LM" or kind in ("Nd", "Pc")


# instructure/canvas-lms lib/content_zipper.rb: sanitize_user_name (gsub(/_(\d+)_/, '\1'),
# downcase), [name, id].join("_") through sanitize_file_name (gsub(/[^[[:word:]]]/, "")),
# then "_#{attachment id}_#{file name}".
def canvas_entry(person: Person, attachment: int) -> str:
    users_name = re.sub(r"_(\d+)_", r"\1", person.sortable_name).lower()
    filename = "".join(c for c in f"{users_name}_{person.number}" if ruby_word(c))
    return f"{filename}_{attachment}_{NB}.ipynb"


def blackboard_username(person: Person) -> str:
    """A login as an institution may make it from a name: letters of any script, a dot."""
    return ".".join(part for part in (person.first, person.last) if part).lower()


# Blackboard Help, "Download Assignments" (blackboard.py): <title>_<username>_attempt_<time>_NB
def blackboard_entry(username: str) -> str:
    return f"{NB}_{username}_attempt_2026-11-20-10-15-02_{NB}.ipynb"


def _read_and_export(
    tmp_path: Path, names: list[str], lms: str, notebooks: list[str] = NOTEBOOKS
) -> tuple[Intake, Path]:
    """Read the download, write it into ``submitted/`` and export a grade for everyone."""
    intake = read_download(_zip(tmp_path / f"{lms}.zip", names), notebooks, lms)
    assert intake.unmatched == (), intake.unmatched
    submitted = tmp_path / "course" / "submitted"
    write_submissions(intake, tmp_path / f"{lms}.zip", submitted, NB)
    graded = sorted(p.name for p in submitted.iterdir())
    # What the class grader grades: each folder of submitted/ whose name is a student id
    # (ClassGrader.present).
    assert [s for s in graded if not id_problem(s)] == graded
    finals = Finals(
        assignments=((NB, 10.0),),
        students=tuple(graded),
        points={(student, NB): 7.0 for student in graded},
        identities=read_roster(roster_path(submitted)),
    )
    write_lms_exports(tmp_path / "reports", finals)
    return intake, tmp_path / "reports"


def _ids_fit(intake: Intake) -> None:
    for entry in intake.students:
        assert not id_problem(entry.student), (entry.student, id_problem(entry.student))
        assert len(entry.student) <= MAX_CHARS
        assert len(entry.student.encode()) <= MAX_BYTES


def test_moodle_students_of_every_script_are_matched_and_in_the_worksheet(
    tmp_path: Path,
) -> None:
    names = [moodle_entry(person) for person in PEOPLE]
    assert names[0] == f"小明 王_4202_assignsubmission_file_/{NB}.ipynb"
    intake, reports = _read_and_export(tmp_path, names, "moodle")
    _ids_fit(intake)
    by_participant = {entry.lms_user_id: entry.student for entry in intake.students}
    assert sorted(by_participant) == sorted(str(p.number) for p in PEOPLE)
    for person in PEOPLE:
        name_part = by_participant[str(person.number)].removesuffix(f"_{person.number}")
        if letters(person.full_name) and len(person.full_name) < 40:
            # Every letter of the name is in the id: a Latin letter that decomposes to an
            # ASCII one without its accent, as before (José -> jose), every other as it is.
            assert letters(name_part) == letters(folded(person.full_name)), person
    assert by_participant["4202"] == "小明_王_4202"
    assert by_participant["4214"] == "4214"  # no letter: the participant id itself
    assert by_participant["4207"] == "søren_ødegard_4207"
    header, *rows = _rows(reports / f"moodle_worksheet_{NB}.csv")
    assert sorted(row[0] for row in rows) == sorted(f"Participant {p.number}" for p in PEOPLE)
    assert {row[header.index("Grade")] for row in rows} == {"7"}


def test_canvas_students_of_every_script_are_matched_and_exported_by_user_id(
    tmp_path: Path,
) -> None:
    names = [canvas_entry(person, 9000 + i) for i, person in enumerate(PEOPLE)]
    assert names[4] == f"álvarez josé_4206_9004_{NB}.ipynb".replace(" ", "")
    assert names[12].startswith("_4214_")  # the symbols are no word characters
    intake, reports = _read_and_export(tmp_path, names, "canvas")
    _ids_fit(intake)
    by_user = {entry.lms_user_id: entry.student for entry in intake.students}
    assert sorted(by_user) == sorted(str(p.number) for p in PEOPLE)
    assert by_user["4206"] == "álvarezjosé"  # as before: Canvas's own slug, accents kept
    assert by_user["4211"] == "brontëzoë"  # the NFD name, composed
    assert by_user["4214"] == "4214"
    assert by_user["4202"] == "王小明"
    header, _points, *rows = _rows(reports / "canvas.csv")
    assert sorted(row[header.index("ID")] for row in rows) == sorted(str(p.number) for p in PEOPLE)


def test_blackboard_usernames_of_every_script_are_graded_under_the_username(
    tmp_path: Path,
) -> None:
    usernames = [blackboard_username(p) for p in PEOPLE if letters(p.full_name)]
    usernames = [u for u in usernames if len(u) <= MAX_CHARS and not REFUSED.search(u)]
    names = [blackboard_entry(username) for username in usernames]
    intake, reports = _read_and_export(tmp_path, names, "blackboard")
    _ids_fit(intake)
    composed = sorted(unicodedata.normalize("NFC", u) for u in usernames)
    assert sorted(entry.student for entry in intake.students) == composed
    # The upload matches the username as Blackboard spelled it (decomposed or not).
    header, *rows = _rows(reports / "blackboard.csv")
    assert sorted(row[header.index("Username")] for row in rows) == sorted(usernames)


def test_plain_names_of_every_script_are_graded_under_their_name(tmp_path: Path) -> None:
    folders = [blackboard_username(p) for p in PEOPLE if letters(p.full_name)]
    folders = [f for f in folders if len(f) <= MAX_CHARS and not REFUSED.search(f)]
    # one student's files in both spellings of her name (a Mac wrote one of them)
    names = [f"{f}/{NB}.ipynb" for f in folders] + [f"{nfd('zoë')}/{NB}.ipynb", f"zoë/{NB2}.ipynb"]
    intake, reports = _read_and_export(tmp_path, names, "plain", [NB, NB2])
    _ids_fit(intake)
    composed = sorted({unicodedata.normalize("NFC", f) for f in [*folders, "zoë"]})
    assert sorted(entry.student for entry in intake.students) == composed
    assert len(intake.student("zoë").files) == 2
    header, *rows = _rows(reports / "moodle.csv")
    assert sorted(row[0] for row in rows) == composed


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Jane Smith", "jane_smith"),
        ("José  O'Neil-Álvarez", "jose_o_neil_alvarez"),  # unchanged: accents folded
        ("王小明", "王小明"),
        ("Иван Петров", "иван_петров"),
        ("Γιώργος", "γιώργος"),
        (nfd("Γιώργος"), "γιώργος"),
        ("अनुराग शर्मा", "अनुराग_शर्मा"),
        ("김민준", "김민준"),
        ("Weiß", "weiß"),
        ("★☆", ""),
    ],
)
def test_slug_keeps_letters_of_every_script(name: str, expected: str) -> None:
    from instructor.lms.base import slug

    assert slug(name) == expected
