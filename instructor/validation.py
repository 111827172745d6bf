"""What nbgrader's Validate shows a student: each failing test's name and the course's message,
whole and first; the cell and the traceback after it, only where they help.

nbgrader 0.9's ``Validator`` prints each failing test cell's whole source (70 lines and more)
before its error, then the error's traceback (into ``helpers/checks.py``) with the course's
message last, each line cut at its ``width``; JupyterLab's Validate dialog shows the same
source and error. Neither the command (``nbgrader validate``) nor the server extension behind
the button lets a configuration choose the validator's class, so
:func:`use_course_validation`, called by the course's nbgrader configuration (and by the
students' configuration on the course's hub), gives nbgrader's ``Validator`` the course's
way of showing a failure; its templates and width stay nbgrader's configuration.

What a failing test shows, in the command's output and in the dialog alike:

- the test's name (its ``grade_id``) and the error's message, whole (wrapped, never cut);
- for an error that is not the course's message (``AssertionError``), the traceback, without
  the frames inside ``helpers/``, which the student did not write: the student's own
  ``NameError`` needs the line it came from;
- with ``CourseValidation.show_cell = True``, the test cell's source, then every traceback.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any

from nbconvert.filters import ansi2html, strip_ansi
from nbformat import NotebookNode
from traitlets import Bool
from traitlets.config import Configurable

COURSE_MESSAGE_ERRORS = ("AssertionError",)
"""The errors the course's tests raise with a message that names the mistake."""

_HELPERS_FRAME = re.compile(r"^\s*File\s+\S*[/\\]helpers[/\\]\S+\.py:\d+", re.MULTILINE)


class CourseValidation(Configurable):
    """How much of a failing test Validate shows after its message."""

    show_cell = Bool(
        False,
        help="Show each failing test cell's source and full traceback after its message.",
    ).tag(config=True)


def _frames_for_students(traceback: list[str]) -> list[str]:
    """IPython's traceback entries (one per frame) without the frames inside ``helpers/``
    and without the last entry (the message, which comes first)."""
    kept = []
    for entry in traceback[:-1]:
        if _HELPERS_FRAME.search(strip_ansi(entry)):
            continue
        kept.append(strip_ansi(entry))
    return kept


def failure_text(cell: NotebookNode, show_cell: bool = False) -> str:
    """What Validate shows for the failing (test) ``cell``: each error's message first."""
    messages: list[str] = []
    details: list[str] = []
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            message = f"{output.ename}: {output.evalue}".strip()
            messages.append(strip_ansi(message))
            if show_cell or output.ename not in COURSE_MESSAGE_ERRORS:
                frames = (
                    [strip_ansi(e) for e in output.traceback[:-1]]
                    if show_cell
                    else _frames_for_students(list(output.traceback))
                )
                details += [frame for frame in frames if frame.strip()]
        elif output.output_type == "stream" and output.name == "stderr":
            messages.append(strip_ansi(output.text).rstrip())
    if not messages:
        messages.append("Partial credit; passed some but not all of the tests")
    text = "\n\n".join(messages)
    if details:
        text += "\n\nWhere it happened:\n" + "\n".join(details)
    if show_cell:
        text += "\n\nThe test cell:\n" + cell.source.strip()
    return text


def wrap(text: str, width: int, indent: str) -> str:
    """``text`` indented, each line wrapped to ``width`` (nbgrader cuts them instead)."""
    lines = []
    for line in strip_ansi(text).split("\n"):
        if len(indent + line) <= width:
            lines.append(indent + line)
            continue
        lead = indent + " " * (len(line) - len(line.lstrip()))
        lines += textwrap.wrap(
            line.strip(),
            width=width,
            initial_indent=lead,
            subsequent_indent=lead + "  ",
            break_long_words=True,
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def _grade_id(cell: NotebookNode) -> str:
    return str(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "a test cell"))


def use_course_validation() -> None:
    """Give nbgrader's ``Validator`` the course's way of showing a failing test (once per
    process: every nbgrader command and server loads the configuration again)."""
    from nbgrader.validator import Validator

    if getattr(Validator, "_course_validation", False):
        return
    original_validate: Callable[..., dict[str, Any]] = Validator.validate

    def _show_cell(self: Validator) -> bool:
        return CourseValidation(parent=self).show_cell

    def _extract_error(self: Validator, cell: NotebookNode) -> str:
        if cell.cell_type != "code":
            return "You did not provide a response."
        if not any(
            o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")
            for o in cell.outputs
        ):
            from nbgrader import utils

            if not utils.is_grade(cell):
                return "You did not provide a response."
        text = failure_text(cell, _show_cell(self))
        # The dialog shows each failure's "source" above its error: the test's name there.
        self._course_names[cell.source.strip()] = _grade_id(cell)
        return text

    def validate(self: Validator, filename: str) -> dict[str, Any]:
        self._course_names = {}
        results = original_validate(self, filename)
        for failure in results.get("failed", []):
            name = self._course_names.get(failure["source"])
            if name is None:
                continue
            cell = failure["source"] if _show_cell(self) else ""
            failure["source"] = f"{name}" + (f"\n\n{cell}" if cell else "")
            failure["error"] = ansi2html(failure["raw_error"])
        return results

    def _print_error(self: Validator, source: str, error: str) -> None:
        self.stream.write("\n" + "=" * min(self.width, 90) + "\n")
        name, _, cell = source.partition("\n\n")
        self.stream.write(f"{name} failed:\n")
        self.stream.write(wrap(error, self.width, self.indent) + "\n")
        if cell:
            self.stream.write("\nThe test cell:\n" + wrap(cell, self.width, self.indent) + "\n")

    def _indent(self: Validator, val: str) -> str:
        return wrap(val, self.width, self.indent)

    Validator._extract_error = _extract_error
    Validator.validate = validate
    Validator._print_error = _print_error
    Validator._indent = _indent
    Validator._course_validation = True
