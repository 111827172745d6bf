"""Canvas: its "Download Submissions" zip, its user ids, its Gradebook import CSV.

The download, as Canvas's zipper names it (instructure/canvas-lms ``lib/content_zipper.rb``,
``ContentZipper#add_submission``, ``#get_filename``, ``#add_upload_submission``):

- ``<name>[_LATE]_<user id>_<attachment id>_<file>``: ``<name>`` is the student's sortable
  name downcased with every character that is no word character removed
  (``sanitize_file_name``: ``gsub(/[^[[:word:]]]/, "")``, so letters with accents stay and
  ``O'Neil, Mary`` becomes ``oneilmary``); ``LATE`` when Canvas marks the submission late;
  ``<file>`` the name the file was uploaded as, with ``\\x00/\\:*?"<>|`` runs made ``_``.
- anonymous grading: ``[LATE_]anon_<anonymous id>_<attachment id>_<file>`` (no name, no
  user id: ``id = "anon_#{submission.anonymous_id}"``).
- a file uploaded again under one name is renamed by ``Attachment.make_unique_filename``
  (``app/models/attachment.rb``): ``name-1.ipynb`` to ``name-7.ipynb``, then
  ``name-<uuid>.ipynb``. The highest suffix wins; a uuid (made only once ``-1`` to ``-7`` are
  taken) beats them; among equals, the larger attachment id (the later upload).
- no submission time: every zip entry gets the time the zip was built. A ``LATE`` file's
  time must come from elsewhere (a times file, :mod:`.times`).

Student id: the name, composed (NFC), in whatever script it is written (two students with
one name become ``<name>_<user id>``; an anonymous one is ``anon_<anonymous id>``; a name
the id rule refuses, too long, or of no word character at all, ``<what fits>_<user id>``
or the user id alone: :func:`canvas_student_id`). The Canvas user id is kept
(``lms_students.json``): the Gradebook import matches it first.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ..student_ids import id_problem
from .base import Lms, Parsed, ReadContext, SubmittedFile, lms_student_id, notebook_of
from .config import LmsConfig
from .csv_safety import write_rows
from .table import Finals, GradeItem, GradeTable, StudentTotal, format_points, score_cells

__all__ = [
    "CANVAS_IDENTITY",
    "Canvas",
    "canvas_header",
    "canvas_student_id",
    "canvas_table",
    "write_canvas",
]

log = logging.getLogger(__name__)

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CanvasId = Literal["ID", "SIS User ID", "SIS Login ID"]

_NAMED = re.compile(
    r"(?P<slug>[^/]*?)(?P<late>_LATE)?_(?P<user_id>\d+)_(?P<attachment>\d+)_(?P<file>[^/]+)"
)
_ANONYMOUS = re.compile(
    r"(?P<late>LATE_)?anon_(?P<anonymous_id>[A-Za-z0-9]+)_(?P<attachment>\d+)_(?P<file>[^/]+)"
)
_UUID_SUFFIX = re.compile(
    r"(?P<stem>.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE
)
UUID_RESUBMISSION = 8
"""The resubmission number of a ``name-<uuid>`` file: after ``-1`` to ``-7``."""


def canvas_student_id(name: str, user_id: str) -> str:
    """The student id of a Canvas name: the name as the zipper wrote it, composed (NFC: a
    name typed decomposed on a Mac is the same name), where that is a student id; else
    ``<name>_<user id>`` with what the id rule refuses taken out (a name that starts with a
    connector or a mark, holds another connector than ``_``, or is longer than an id), or
    the user id alone for a name of no word character at all (``★``: the zipper writes
    ``_<user id>_...``). A name holding what the zipper never writes (``*``, a space) is
    returned as it is, and refused."""
    composed = unicodedata.normalize("NFC", name)
    if not id_problem(composed) or not all(_ruby_word(char) for char in composed):
        # a name of other characters was not written by Canvas's zipper: refused as it is
        return composed
    return lms_student_id(composed, user_id)


def _ruby_word(char: str) -> bool:
    """Onigmo's ``[[:word:]]``, what Canvas's ``sanitize_file_name`` keeps: a letter, a
    mark, a decimal digit or a connector (``_``, ``‿``)."""
    kind = unicodedata.category(char)
    return kind[0] in "LM" or kind in ("Nd", "Pc")


class Canvas(Lms):
    name = "canvas"
    example = "smithjane_123456_7891011_{nb}.ipynb, smithjane_LATE_123456_7891011_{nb}-1.ipynb"
    resubmission_suffixes = True
    order_by_time = False
    exports = ("canvas.csv",)
    names_users = True

    def parse(self, name: str, context: ReadContext) -> Parsed | None:
        if match := _ANONYMOUS.fullmatch(name):
            return Parsed(
                student=f"anon_{match['anonymous_id']}",
                file_name=match["file"],
                late=bool(match["late"]),
                order=int(match["attachment"]),
            )
        if match := _NAMED.fullmatch(name):
            return Parsed(
                student=canvas_student_id(match["slug"], match["user_id"]),
                file_name=match["file"],
                lms_user_id=match["user_id"],
                late=bool(match["late"]),
                order=int(match["attachment"]),
            )
        return None

    def notebook(self, file_name: str, notebooks: Sequence[str]) -> tuple[str, int] | None:
        found = notebook_of(file_name, notebooks, suffixes=True)
        if found is None and file_name.endswith(".ipynb"):
            match = _UUID_SUFFIX.fullmatch(file_name[: -len(".ipynb")])
            if match and match["stem"] in notebooks:
                return match["stem"], UUID_RESUBMISSION
        return found

    def regroup(
        self, found: Mapping[str, list[tuple[Parsed, SubmittedFile]]]
    ) -> Mapping[str, list[tuple[Parsed, SubmittedFile]]]:
        """Two Canvas students with one name (two Jane Smiths) become ``<name>_<user id>``."""
        result: dict[str, list[tuple[Parsed, SubmittedFile]]] = defaultdict(list)
        for student, files in found.items():
            users = {parsed.lms_user_id for parsed, _ in files}
            for parsed, file in files:
                key = (
                    lms_student_id(student, parsed.lms_user_id or "") if len(users) > 1 else student
                )
                result[key].append((replace(parsed, student=key), file))
        return result

    def export(self, finals: Finals, folder: Path, config: LmsConfig) -> list[Path]:
        items = finals.items(self.name, config)
        self.say_unmapped(
            items,
            config,
            "canvas_id",
            "Canvas's import matches such a column by its exact title, else creates a new "
            "assignment",
        )
        anonymous = sorted({s for s in finals.students if s.startswith("anon_")})
        if anonymous:
            log.warning(
                "canvas.csv: %d student(s) from an anonymous Canvas download (%s...): it names "
                "no user, so their rows match no Canvas student; grade them in SpeedGrader",
                len(anonymous),
                anonymous[0],
            )
        table = canvas_table(finals, items)
        return [write_canvas(table, folder / "canvas.csv", id_column="SIS Login ID")]


def canvas_table(finals: Finals, items: tuple[GradeItem, ...] | None = None) -> GradeTable:
    """``finals`` with one row per Canvas user where a Canvas download named one
    (``lms_user_id``: Canvas matches its ``ID`` first); the others keep their student id.

    A student's assignments from a Canvas download go to the Canvas user it named; the
    student's other assignments too when that is one user. Two student ids of one Canvas
    user (a name split in a later download) share its row; both scored for one assignment:
    the higher is kept, with a warning.
    """
    students = set(finals.students)
    canvas = {
        key: identity.user_id
        for key, identity in finals.identities.items()
        if identity.lms == "canvas" and key[0] in students
    }
    rows: dict[tuple[str, str], dict[str, float]] = {}
    who: dict[tuple[str, str], str] = {}
    for student in finals.students:
        own = {uid for (s, _), uid in canvas.items() if s == student}
        for uid in sorted(own):
            rows.setdefault(("ID", uid), {})
            who.setdefault(("ID", uid), student)
        if not own:
            rows.setdefault(("student", student), {})
            who[("student", student)] = student
        for (s, assignment), points in sorted(finals.points.items()):
            if s != student:
                continue
            uid = canvas.get((student, assignment)) or (min(own) if len(own) == 1 else None)
            key = ("ID", uid) if uid else ("student", student)
            row = rows.setdefault(key, {})
            who.setdefault(key, student)
            if assignment in row:
                log.warning(
                    "canvas.csv: Canvas user %s handed in %s under two student ids (%s, %s); "
                    "the higher score is written",
                    uid,
                    assignment,
                    who[key],
                    student,
                )
            row[assignment] = max(points, row.get(assignment, points))
    return GradeTable(
        items if items is not None else finals.items(),
        tuple(
            StudentTotal(
                ident,
                finals.names.get(who[(kind, ident)]),
                scores,
                lms_user_id=ident if kind == "ID" else None,
            )
            for (kind, ident), scores in sorted(rows.items())
        ),
    )


def canvas_header(item: GradeItem) -> str:
    """``Title (id)``, which Canvas's importer matches by id (``Assignment.title_and_id``:
    ``/\\A(.*)\\s\\((\\d+)\\)\\z/``); the title alone without an id."""
    return f"{item.label} ({item.lms_id})" if item.lms_id else item.label


# Canvas. Checked against:
# - "Import CSV File for Carmen Grades", The Ohio State University (CarmenCanvas is its Canvas),
#   https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
#   : Student name, ID or SIS User ID (one needed), SIS Login ID, Section, then the assignments.
# - Canvas's importer, class GradebookImporter (instructure/canvas-lms,
#   lib/gradebook_importer.rb; Assignment.title_and_id in app/models/assignment.rb): the
#   header must start "Student", "ID", then "SIS User ID", "SIS Login ID" (or "SIS Login
#   ID" alone), its last identity column "Section"; a row
#   whose first cell holds "Points Possible" gives the points; "Name (id)" headers match by id,
#   else by title; students by ID, SIS User ID, SIS Login ID, then name. A blank cell against
#   an existing score counts as a change, and the upload page posts it as an empty grade
#   (ProcessGradebookUpload): it removes that score.
# Instructure's own guide, "How do I import grades in the Gradebook?"
# (https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807),
# was not found in a stored copy: not checked against it.
def write_canvas(table: GradeTable, path: str | Path, *, id_column: CanvasId = "ID") -> Path:
    """The Canvas Gradebook import CSV: ``StudentTotal.lms_user_id`` (the Canvas user id)
    under ``ID`` where there is one, else ``StudentTotal.student`` under ``id_column``."""
    if id_column not in CANVAS_IDENTITY[1:4]:
        raise ValueError(
            f"Canvas matches students by ID, SIS User ID or SIS Login ID, not {id_column!r}"
        )
    rows = [[*CANVAS_IDENTITY, *(canvas_header(item) for item in table.items)]]
    rows.append(
        ["Points Possible", "", "", "", "", *(format_points(i.max_points) for i in table.items)]
    )
    for student in table.students:
        identity = {
            "Student": student.name or "",
            "ID": "",
            "SIS User ID": student.sis_id or "",
            "SIS Login ID": "",
            "Section": student.section or "",
        }
        if student.lms_user_id:
            identity["ID"] = student.lms_user_id
        else:
            identity[id_column] = student.student
        rows.append([*identity.values(), *score_cells(table, student)])
    return write_rows(Path(path), rows)
