"""Grades in each LMS's import format: :func:`write_lms_exports` has every LMS module of
:data:`instructor.lms.LMSS` write its files (:meth:`instructor.lms.base.Lms.export`).

Each writer follows the LMS's documents and importer source named in its module's
comments (``canvas.py``, ``moodle.py``, ``blackboard.py``); what no document found says is
marked "not in a document" (docs/instructors.md, "The reports"):

- ``canvas.csv``: Canvas Gradebook "Import": ``Student``, ``ID``, ``SIS User ID``, ``SIS
  Login ID``, ``Section``, one column per assignment named ``Title (<canvas assignment
  id>)`` (the title alone when ``lms.toml`` gives no id: Canvas matches it by title, else
  creates the assignment), and a ``Points Possible`` row;
- ``moodle.csv``: Moodle gradebook "Import > CSV file", one identity column then one per
  grade item; and ``moodle_worksheet_<assignment>.csv``, the assignment's "Upload grading
  worksheet" by participant id, in the uploader's language (``lms.toml`` ``[moodle]``);
- ``blackboard.csv``: Blackboard Grade Center "Work Offline > Upload", ``<title> [Total
  Pts: <max> Score] |<column id>`` per item (without an id: a new text column), every value
  quoted.

Every cell goes through :func:`instructor.lms.csv_safety.safe_cell` (OWASP's rule against
CSV injection); a score is a plain number and is written as it is. Missing scores are
written as empty cells, which no LMS reads as a grade; Canvas's and Moodle's importers read
an empty cell as "no grade" and remove a grade already there.

The names below are re-exported from the LMS modules and :mod:`.table`.
"""

from __future__ import annotations

from pathlib import Path

from . import LMSS
from .blackboard import BLACKBOARD_IDENTITY, blackboard_header, write_blackboard
from .canvas import CANVAS_IDENTITY, canvas_header, write_canvas
from .config import LmsConfig
from .moodle import MOODLE_PARTICIPANT, MOODLE_WORKSHEET, write_moodle, write_moodle_worksheet
from .table import Finals, GradeItem, GradeTable, StudentTotal, format_points

__all__ = [
    "BLACKBOARD_IDENTITY",
    "CANVAS_IDENTITY",
    "EXPORTS",
    "MOODLE_PARTICIPANT",
    "MOODLE_WORKSHEET",
    "Finals",
    "GradeItem",
    "GradeTable",
    "StudentTotal",
    "blackboard_header",
    "canvas_header",
    "format_points",
    "write_blackboard",
    "write_canvas",
    "write_lms_exports",
    "write_moodle",
    "write_moodle_worksheet",
]

EXPORTS = tuple(name for lms in LMSS for name in lms.exports)
"""Written on every run (``canvas.csv``, ``moodle.csv``, ``blackboard.csv``); Moodle's
worksheets besides, one per assignment read from a Moodle download."""


def write_lms_exports(folder: Path, finals: Finals, config: LmsConfig | None = None) -> list[Path]:
    """Every LMS's import files for ``finals`` in ``folder``, in :data:`LMSS`'s order."""
    folder.mkdir(parents=True, exist_ok=True)
    config = config or LmsConfig()
    written: list[Path] = []
    for lms in LMSS:
        written += lms.export(finals, folder, config)
    # the files of every run first, in EXPORTS' order, then the per-assignment ones
    return sorted(written, key=lambda p: EXPORTS.index(p.name) if p.name in EXPORTS else 99)
