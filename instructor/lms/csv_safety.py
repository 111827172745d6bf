"""CSV cells no spreadsheet runs: OWASP's rule against CSV (formula) injection.

A spreadsheet (Excel, LibreOffice Calc, Google Sheets) reads a cell that starts with ``=``,
``+``, ``-`` or ``@`` as a formula (``=HYPERLINK(...)``, ``=cmd|...``), and a tab or a
carriage return before one is skipped. A student controls some of what the grader writes:
a student id in the plain ``submitted/<student>/`` layout, a display name from a Moodle
download. OWASP's rule (https://owasp.org/www-community/attacks/CSV_Injection: a cell
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return; ASVS 5.0,
requirement 1.2.10, adds the null character): prefix every such cell with a single quote,
which a spreadsheet shows as text and does not keep. This module is the one place the rule
is written, and :func:`write_rows` is the one CSV writer of ``instructor`` (the reports,
the LMS exports, the benchmarks' results). ``defusedcsv`` (PyPI) does the same for
``=``, ``+``, ``-``, ``@``, ``|`` and ``%`` only: no tab, carriage return or leading
space, and it rewrites ``|`` inside a cell (docs/decisions.md, "Libraries").

:func:`safe_cell` applies it to every text cell the grader writes, whoever wrote the text:
a cell whose first character, or first after leading spaces, is one of
:data:`FORMULA_START` gets a leading ``'``. One kind of cell is left as it is: a plain
number (``7``, ``7.5``, ``-0.25``, :data:`PLAIN_NUMBER`), which is no formula in any
spreadsheet and is what every LMS importer reads as a grade (a ``'`` would make it text:
Moodle's importer rejects it as "badgrade", Canvas and Blackboard as not a score). A
student id that is a plain number stays that number.

An LMS never makes such an id (Canvas user ids and Moodle participant ids are numbers,
usernames and SIS ids start with a letter or a digit), so every id an LMS matches is
written unchanged. A student id that starts with one of them gets its ``'`` and is then
not matched by the LMS: its row must be fixed by hand (the grader logs it,
:func:`neutralised`).

:func:`write_rows` writes a CSV with every cell passed through :func:`safe_cell`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = [
    "FORMULA_START",
    "PLAIN_NUMBER",
    "neutralised",
    "safe_cell",
    "write_csv_records",
    "write_rows",
]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
"""OWASP's list (and ASVS's null character): what a spreadsheet may read as the start of
a formula."""

PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
"""A number as the grader writes a score (:func:`instructor.lms.export.format_points`)."""

_LEADING = " \n\x0b\x0c"


def neutralised(value: object) -> bool:
    """Whether :func:`safe_cell` changes ``value``."""
    text = "" if value is None else str(value)
    if PLAIN_NUMBER.fullmatch(text):
        return False
    return text.startswith(FORMULA_START) or text.lstrip(_LEADING).startswith(FORMULA_START)


def safe_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet reads as a formula (the module docstring);
    None is an empty cell."""
    text = "" if value is None else str(value)
    return f"'{text}" if neutralised(text) else text


def write_rows(path: Path, rows: Iterable[Iterable[object]], *, quote_all: bool = False) -> Path:
    """``rows`` as a UTF-8 CSV at ``path``, every cell through :func:`safe_cell`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return path


def write_csv_records(path: Path, records: Sequence[Mapping[str, object]]) -> Path:
    """``records`` (the same keys each, the first's order) as a CSV at ``path`` under a
    header row, through :func:`write_rows`."""
    columns = list(records[0])
    return write_rows(path, [columns, *([record[key] for key in columns] for record in records)])
