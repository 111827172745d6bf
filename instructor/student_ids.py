"""One shape for a student id, checked wherever an id enters the course.

A student id becomes a folder name (``submitted/<id>/``), an argument nbgrader reads as a
file glob (``CourseDirectory.student_id``: ``*`` or ``[b]ob`` match other students, whose
outputs ``autograde --force`` then removes; nbgrader strips spaces, so ``alice `` is
``alice``), a gradebook key, a cell of every CSV and a line of pages the instructor opens.
So one allow-list decides, before any of these: :func:`id_problem`. An id is

- letters (any script's, with their accents and vowel signs, in Unicode's composed form
  NFC) and digits, and ``.``, ``_``, ``@`` and ``-``;
- starting with a letter or a digit (never ``.``, ``..``, ``-x`` or ``@x``);
- at most :data:`MAX_CHARS` characters and :data:`MAX_BYTES` bytes in UTF-8 (a file name).

None of these characters means anything to a glob, a shell or HTML. The LMSs' own ids pass:
Canvas and Moodle numbers, Canvas's name slugs (``álvarezjosé``, ``anon_x1y2``), Moodle's
(``jane_smith_4242``), Blackboard usernames (``j.smith_2@uni-x.edu``).

Where ids enter: each LMS layout and ``--pattern`` (:func:`instructor.lms.intake.read_download`),
the folders of ``submitted/`` (:meth:`instructor.classroom.grader.pipeline.ClassGrader.present`),
``--student``, and ``nbgrader collect`` (:mod:`instructor.exchange`). A
refused id is named with how to give the student an id that fits (:func:`refusal`).
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "MAX_BYTES",
    "MAX_CHARS",
    "PUNCTUATION",
    "StudentIdError",
    "check_student_id",
    "id_problem",
    "refusal",
    "shown",
]

MAX_CHARS = 64
"""Longer than any id an LMS makes (a Canvas slug of a long sortable name and a user id)."""
MAX_BYTES = 255
"""The longest file name Linux, macOS and Windows file systems take, in UTF-8 bytes."""
PUNCTUATION = frozenset("._@-")
_LETTER_OR_DIGIT = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")
_MARKS = ("Mn", "Mc")
"""Accents and vowel signs that follow a letter (Devanagari's ``ि``, a decomposed accent
is refused by the NFC rule instead)."""


class StudentIdError(ValueError):
    """A student id outside the allow-list; the message names it and how to map it."""


def shown(student: str) -> str:
    """``student`` as a message quotes it: every character visible (``repr``), bounded."""
    text = repr(student)
    return text if len(text) <= 80 else text[:77] + "...'"


def id_problem(student: str) -> str:
    """Why ``student`` is no student id (one phrase), or ``""`` when it is one."""
    if not student:
        return "it is empty"
    if len(student) > MAX_CHARS:
        return f"it is longer than {MAX_CHARS} characters"
    if len(student.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return f"it is longer than {MAX_BYTES} bytes in UTF-8"
    if unicodedata.category(student[0]) not in _LETTER_OR_DIGIT:
        return "it does not start with a letter or a digit"
    for char in student:
        kind = unicodedata.category(char)
        if kind not in _LETTER_OR_DIGIT and kind not in _MARKS and char not in PUNCTUATION:
            return f"it holds {char!r} (U+{ord(char):04X})"
    if not unicodedata.is_normalized("NFC", student):
        # Two spellings of one name would be two students: only the composed one is taken.
        return "it is not in Unicode's composed form (NFC)"
    return ""


def refusal(student: str, where: str, remedy: str = "") -> str:
    """The message for a refused id: which id, where it came from, why, and what to do."""
    return (
        f"student id {shown(student)} from {where} refused: {id_problem(student)}. A student "
        f"id is letters, digits and . _ @ - (starting with a letter or digit, at most "
        f"{MAX_CHARS} characters). "
        + (
            remedy
            or "Give the student an id that fits (their LMS login or number) as the folder's "
            "name in submitted/; lms_students.json next to submitted/ (instructor/lms/roster.py) "
            "keeps which LMS user each student id is for the grade exports."
        )
    )


def check_student_id(student: str, where: str, remedy: str = "") -> str:
    """``student`` if it is a student id; else :class:`StudentIdError` with :func:`refusal`."""
    if id_problem(student):
        raise StudentIdError(refusal(student, where, remedy))
    return student
