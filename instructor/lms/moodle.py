"""Moodle (assign module): its "Download all submissions" zip, its participant ids, its
gradebook import CSV and the assignment's grading worksheet.

The download, as Moodle names it (moodle/moodle ``mod/assign/locallib.php``,
``assign::download_submissions``): a folder per student and plugin,
``<full name>_<participant id>_assignsubmission_file_/NB`` (with "download submissions in
folders" off, the same name without the ``/``). The full name has each ``_`` replaced by a
space and goes through ``clean_filename`` (``PARAM_FILE``: ``&<>"`|':\\/`` and control
characters removed, so ``Mary_Ann O'Neil`` is written ``Mary Ann ONeil``); with blind
marking the name is ``Participant``. The participant id is ``get_uniqueid_for_user``: the
assignment's own number for the student (``assign_user_mapping``), not the Moodle user id.
No submission time is named.

Student id: the name as a filesystem-safe slug that keeps the letters of every script
(:func:`instructor.lms.base.slug`), then the participant id: ``Jane Smith`` 4242 ->
``jane_smith_4242``, ``王小明`` 4202 -> ``王小明_4202``, ``Søren`` -> ``søren_…``; a name cut
so that the id fits the id rule's 64 characters; the participant id alone (``4214``) when
the name has no letter or digit (:func:`instructor.lms.base.lms_student_id`). The display
name and participant id are kept (``lms_students.json``): only the assignment's grading
worksheet matches them.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from .base import Lms, Parsed, ReadContext, lms_student_id, slug
from .config import LmsConfig, MoodleStrings
from .csv_safety import write_rows
from .table import Finals, GradeItem, GradeTable, StudentTotal, format_points, score_cells

__all__ = [
    "MOODLE_PARTICIPANT",
    "MOODLE_WORKSHEET",
    "Moodle",
    "moodle_tables",
    "write_moodle",
    "write_moodle_worksheet",
]

log = logging.getLogger(__name__)

MoodleId = Literal["Username", "ID number", "Email address"]
_ENGLISH = MoodleStrings()
MOODLE_WORKSHEET = (
    _ENGLISH.identifier_column,
    _ENGLISH.full_name_column,
    _ENGLISH.grade_column,
    _ENGLISH.maximum_column,
    _ENGLISH.modified_column,
)
MOODLE_PARTICIPANT = _ENGLISH.participant
"""Moodle's ``hiddenuser`` string (English): the worksheet's ``Identifier`` is it and the
participant id."""
WORKSHEET = "moodle_worksheet_{assignment}.csv"

_MOODLE = re.compile(
    r"(?P<name>[^/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_"
    r"(?:/(?P<path>.+)|(?P<flat>[^/]+))"
)


class Moodle(Lms):
    name = "moodle"
    example = "Jane Smith_4242_assignsubmission_file_/{nb}.ipynb"
    exports = ("moodle.csv",)
    names_users = True

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        match = _MOODLE.fullmatch(name)
        if not match or match["plugin"] != "file":
            return None
        file_name = (match["path"] or match["flat"]).rsplit("/", 1)[-1]
        return Parsed(
            student=lms_student_id(slug(match["name"]), match["participant"]),
            file_name=file_name,
            display_name=unicodedata.normalize("NFC", match["name"]) or None,
            lms_user_id=match["participant"],
        )

    def export(self, finals: Finals, folder: Path, config: LmsConfig) -> list[Path]:
        items = finals.items(self.name, config)
        gradebook, worksheets, left_out = moodle_tables(finals, items)
        for stale in folder.glob(WORKSHEET.format(assignment="*")):
            stale.unlink()
        written = [write_moodle(gradebook, folder / "moodle.csv", identifier="Username")]
        for assignment, table in worksheets.items():
            written.append(
                write_moodle_worksheet(
                    table, folder / WORKSHEET.format(assignment=assignment), strings=config.moodle
                )
            )
        if left_out:
            log.warning(
                "moodle.csv: %d student(s) from a Moodle download left out (%s): the download "
                "names no username, ID number or email, which is all Moodle's grade import "
                "matches; upload %s to each Moodle assignment (Upload grading worksheet) instead",
                len(left_out),
                ", ".join(left_out[:5]) + (", ..." if len(left_out) > 5 else ""),
                ", ".join(WORKSHEET.format(assignment=a) for a in worksheets),
            )
        return written


def moodle_tables(
    finals: Finals, items: tuple[GradeItem, ...] | None = None
) -> tuple[GradeTable, dict[str, GradeTable], list[str]]:
    """What goes to Moodle: (the gradebook import's table, assignment -> its grading
    worksheet's table, the students left out of the gradebook import).

    A hand-in read from a Moodle download names no username, ID number or email, which is
    all Moodle's gradebook import maps (a row it cannot map stops the whole import): it goes
    to its assignment's worksheet, by participant id, and is left out of the gradebook
    table; a student with nothing left there is left out of it.
    """
    items = items if items is not None else finals.items()
    moodle = {
        key: identity
        for key, identity in finals.identities.items()
        if identity.lms == "moodle" and key in finals.points
    }
    worksheets: dict[str, GradeTable] = {}
    for item in items:
        rows = [
            StudentTotal(
                student,
                identity.display_name or finals.names.get(student),
                {item.name: finals.points[(student, assignment)]},
                lms_user_id=identity.user_id,
            )
            for (student, assignment), identity in sorted(moodle.items())
            if assignment == item.name
        ]
        if rows:
            worksheets[item.name] = GradeTable((item,), tuple(rows))
    from_moodle = {student for student, _ in moodle}
    kept, left_out = [], []
    for total in finals.table(items).students:
        scores = {a: p for a, p in total.scores.items() if (total.student, a) not in moodle}
        if total.student in from_moodle and not scores:
            left_out.append(total.student)
        else:
            kept.append(StudentTotal(total.student, total.name, scores))
    return GradeTable(items, tuple(kept)), worksheets, left_out


# Moodle. Checked against:
# - Moodle Docs, "Grade import", https://docs.moodle.org/311/en/Grade_import : CSV import,
#   "Map from" a column of the file "Map to" a user field (``useridnumber``, ``useremail``;
#   the importer also takes ``username`` and ``userid``), each grade column mapped to a grade
#   item or a new one.
# - Moodle's importer, gradeimport_csv_load_data (moodle/moodle,
#   grade/import/csv/classes/load_data.php): map_user_data_with_value matches ``username``,
#   ``useridnumber`` or ``useremail``; a row whose user is not found aborts the whole import;
#   update_grade_item takes a number (else "badgrade") and reads "" or "-" as no grade, which
#   replaces a grade already there.
def write_moodle(table: GradeTable, path: str | Path, *, identifier: MoodleId = "Username") -> Path:
    """The Moodle grade import CSV; ``StudentTotal.student`` goes under ``identifier``."""
    if identifier not in ("Username", "ID number", "Email address"):
        raise ValueError(
            f"Moodle identifies users by Username, ID number or Email address, not {identifier!r}"
        )
    rows = [[identifier, *(item.label for item in table.items)]]
    rows += [[student.student, *score_cells(table, student)] for student in table.students]
    return write_rows(Path(path), rows)


# Moodle's assignment grading worksheet. Checked against Moodle's source (moodle/moodle):
# - mod/assign/locallib.php, download_submissions: each file or folder of "Download all
#   submissions" is named "<full name>_<get_uniqueid_for_user(userid)>_...", the participant
#   id: the row id of assign_user_mapping for that assignment and user, not the user id.
# - mod/assign/gradingtable.php, col_recordid: the worksheet's Identifier is
#   get_string('hiddenuser', 'assign') ("Participant ") . that same participant id.
# - mod/assign/feedback/offline/importgradeslib.php, assignfeedback_offline_grade_importer:
#   needs the columns get_string('recordid', 'assign') ("Identifier"), the grade ("Grade")
#   and get_string('lastmodifiedgrade', 'assign') ("Last modified (grade)"), in the uploading
#   user's language; strips strlen("Participant ") characters off Identifier and looks the
#   rest up with get_user_id_for_uniqueid; rows of anyone else are skipped.
# - mod/assign/feedback/offline/locallib.php, process_import_grades: a grade is skipped when
#   it is empty or negative, equal to the grade there, above the assignment's maximum grade,
#   locked, or older (Last modified (grade), read by strtotime, plus 60 s) than the grade in
#   Moodle unless "ignore modified" is ticked on upload.
# Not checked against a document: no stored Moodle Docs page on the grading worksheet was
# found, so the columns and their English names are the source's.
def write_moodle_worksheet(
    table: GradeTable,
    path: str | Path,
    *,
    modified: datetime | None = None,
    strings: MoodleStrings = _ENGLISH,
) -> Path:
    """A Moodle assignment's grading worksheet for ``table``'s one item: each student's
    ``lms_user_id`` (the participant id) as ``Participant <id>``, ``name`` and points.

    ``strings``: the column names and the Identifier's prefix in the language of the user
    who uploads it (``lms.toml``'s ``[moodle]``; English by default): Moodle's importer
    cuts as many bytes off the Identifier as its ``hiddenuser`` string has in that language.

    ``modified`` (default now) is the worksheet's ``Last modified (grade)``: a grade changed
    in Moodle after it is left as it is on upload (unless the upload is told to ignore it).
    """
    if len(table.items) != 1:
        raise ValueError(
            f"a Moodle grading worksheet is one assignment's, not {len(table.items)} items"
        )
    (item,) = table.items
    lacking = [s.student for s in table.students if not s.lms_user_id]
    if lacking:
        raise ValueError(f"no Moodle participant id for {lacking}")
    stamp = (modified or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    rows = [
        [
            strings.identifier_column,
            strings.full_name_column,
            strings.grade_column,
            strings.maximum_column,
            strings.modified_column,
        ]
    ]
    for student in table.students:
        rows.append(
            [
                f"{strings.participant}{student.lms_user_id}",
                student.name or "",
                format_points(student.scores.get(item.name)),
                format_points(item.max_points),
                stamp,
            ]
        )
    return write_rows(Path(path), rows)
