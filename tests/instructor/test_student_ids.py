"""One shape for a student id (instructor.student_ids): the LMSs' ids pass, nothing that a
glob, a shell, a path or a page reads as more than text does."""

from __future__ import annotations

import glob
import html
import unicodedata
from pathlib import PurePosixPath, PureWindowsPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from instructor.student_ids import (
    MAX_BYTES,
    MAX_CHARS,
    StudentIdError,
    check_student_id,
    id_problem,
    refusal,
)

LMS_IDS = [
    "123456",  # a Canvas user id, a Moodle participant id
    "álvarezjosé",  # a Canvas sortable-name slug keeps accents
    "oneilmaryann",
    "smithjane_13",  # Canvas namesakes
    "anon_aB3x9",  # Canvas anonymous grading
    "jane_smith_4242",  # Moodle
    "participant_17",
    "jsmith",  # Blackboard usernames
    "j.smith",
    "st_jsmith",
    "j.smith-2@uni-x.edu",
    "प्रिया",  # a Devanagari name: letters and vowel signs (marks)
    "Ελένη",
    "王小明",
    "x" * MAX_CHARS,
]

HOSTILE_IDS = [
    "*",  # nbgrader's globs: every student
    "[b]ob",
    "bo?",
    "{alice,bob}",
    "alice ",  # nbgrader strips it: alice's outputs
    " alice",
    "",
    ".",
    "..",
    "../alice",
    "a/b",
    "a\\b",
    "-rf",  # an option to a command
    "@SUM(A1)",  # a spreadsheet formula
    "=1+1",
    "+1",
    "<img src=x onerror=alert(1)>",  # formgrader prints ids unescaped
    "a&amp;b",
    "alice'",
    'alice"',
    "$(id)",
    "`id`",
    "a;b",
    "a|b",
    "a\x00b",
    "a\nb",
    "a\tb",
    "a\u00a0b",  # no-break space
    "a\u200bb",  # zero-width space
    "ali\u202ecE",  # right-to-left override
    "e\u0301",  # a decomposed accent: not NFC
    "\u0301a",  # a mark first
    "a\ud800",  # a lone surrogate
    "a+b",  # nbgrader's exchange separator
    "a%2fb",
    "~alice",
    "x" * (MAX_CHARS + 1),
    "𠀀" * MAX_CHARS,  # 64 characters of 4 bytes: too long a file name
]


@pytest.mark.parametrize("student", LMS_IDS)
def test_the_lms_ids_pass(student: str) -> None:
    assert id_problem(student) == ""
    assert check_student_id(student, "a test") == student


@pytest.mark.parametrize("student", HOSTILE_IDS)
def test_hostile_ids_are_refused_with_a_message_naming_them(student: str) -> None:
    assert id_problem(student)
    with pytest.raises(StudentIdError) as caught:
        check_student_id(student, "a test")
    message = str(caught.value)
    assert repr(student)[:40] in message and "a test" in message
    assert "lms_students.json" in message  # how to map it
    assert "\n" not in message and "\x00" not in message  # quoted, every character visible


def test_the_message_names_the_remedy_given() -> None:
    assert refusal("*", "here", "Do this.").endswith("Do this.")


@given(st.text(max_size=MAX_CHARS + 8))
def test_an_accepted_id_is_plain_text_everywhere(student: str) -> None:
    """Any text the allow-list takes reaches no glob, path, shell option or page as more
    than itself."""
    if id_problem(student):
        return
    assert not glob.has_magic(student) and glob.escape(student) == student
    assert html.escape(student) == student
    assert student.strip() == student and student == unicodedata.normalize("NFC", student)
    assert PurePosixPath(student).name == student and PureWindowsPath(student).name == student
    assert student not in (".", "..") and not student.startswith(("-", ".", "@"))
    assert len(student) <= MAX_CHARS and len(student.encode()) <= MAX_BYTES
    assert "+" not in student  # nbgrader's exchange file names split on it


@given(st.text(alphabet=st.characters(categories=["L", "Nd"]), min_size=1, max_size=MAX_CHARS))
def test_letters_and_digits_pass_in_composed_form(student: str) -> None:
    student = unicodedata.normalize("NFC", student)
    if len(student.encode()) <= MAX_BYTES and unicodedata.category(student[0])[0] in "LN":
        assert id_problem(student) == "", student


def test_the_command_line_refuses_a_student_option_that_is_no_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from instructor.classroom.__main__ import main

    with pytest.raises(SystemExit) as stopped:
        main(["grade", "01_vector_sets", "--student", "[a]lice"])
    assert stopped.value.code == 2
    assert "student id '[a]lice' from --student refused" in capsys.readouterr().err
