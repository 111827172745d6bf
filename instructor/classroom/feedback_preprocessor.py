"""Feedback that never shows a hidden test: a preprocessor for nbgrader's ``generate_feedback``.

nbgrader 0.9 writes the feedback HTML from the autograded notebook, whose test cells hold
their hidden tests again (``### BEGIN HIDDEN TESTS`` ... and the reference checks in them),
and whose tracebacks quote the lines that failed, hidden ones included. Its
``GenerateFeedback`` converter runs the preprocessors of its ``preprocessors`` trait on each
notebook before the HTML exporter renders it; :class:`RedactFeedback`, added last to that
list (:func:`feedback_config`), rewrites each test cell of the notebook it renders (never the
autograded file itself):

- the cell's source becomes its visible part (``anatomy.visible_part``) and a comment line
  saying that hidden tests ran;
- every traceback and printed output of the cell loses the lines that quote hidden code:
  numbered source lines of the test cell's own frame (``Cell In[n], line k``) past the
  visible part, and anywhere, a line whose code is a line of the hidden part (a ``...``
  line says where lines were taken out). The error's last line (``Error: message``) is
  kept whole;
- the page gets a style rule that wraps long output lines (``white-space: pre-wrap``), so
  the error message is read whole instead of cut off at the cell's right edge.

Then :class:`.sanitise.SanitiseNotebook` makes what the student wrote inert (no script, no
event handler, no active HTML: :mod:`.sanitise`), on a notebook autograded before the class
grader sanitised its autograded notebooks too.

Wiring: ``config.merge(feedback_config())`` on the nbgrader configuration the API is built
with (:mod:`.feedback` does it on the API it uses).
"""

from __future__ import annotations

import re
from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool
from traitlets.config import Config

from instructor import anatomy

__all__ = [
    "HIDDEN_NOTE",
    "REDACTED_LINE",
    "WRAP_CSS",
    "RedactFeedback",
    "feedback_config",
    "redact_test_cell",
]

HIDDEN_NOTE = "# (hidden tests ran here too; their code is not shown)"
REDACTED_LINE = "    ... (a line of a hidden test)"
WRAP_CSS = """
div.output_area pre, div.output_subarea pre, div.output_text pre, .output_error pre {
  white-space: pre-wrap !important;
  overflow-wrap: anywhere;
  word-break: break-word;
  overflow-x: visible !important;
}
"""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUMBERED = re.compile(r"^\s*(?:-*>)?\s*(?P<number>\d+)(?: (?P<code>.*))?$")
_CARETS = re.compile(r"^[\s^~]+$")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _code_lines(source: str) -> set[str]:
    return {line.strip() for line in source.splitlines() if line.strip()}


def _redact_text(text: str, hidden: set[str], own_frame: bool, visible_count: int) -> str:
    """``text`` (one traceback entry, or printed output) without the lines that quote hidden
    code; in the test cell's own frame (``own_frame``) also every numbered line past the
    visible part's ``visible_count`` lines."""
    kept: list[str] = []
    dropping = False
    for line in text.split("\n"):
        plain = _strip_ansi(line)
        match = _NUMBERED.match(plain)
        drop = False
        if match:
            code = (match.group("code") or "").strip()
            drop = code in hidden or (own_frame and int(match.group("number")) > visible_count)
        elif len(plain.strip()) >= 8 and plain.strip() in hidden:
            drop = True
        elif dropping and _CARETS.match(plain) and plain.strip():
            drop = True  # Python 3.11's markers under a line taken out
        if drop:
            if not dropping:
                kept.append(REDACTED_LINE)
            dropping = True
        else:
            dropping = False
            kept.append(line)
    return "\n".join(kept)


def redact_test_cell(cell: NotebookNode) -> NotebookNode:
    """A test cell as feedback may show it (changed in place, and returned)."""
    source = cell.source
    visible = anatomy.visible_part(source).rstrip()
    has_hidden = visible != source.rstrip()
    hidden = _code_lines(source) - _code_lines(visible)
    visible_count = len(visible.splitlines())
    if has_hidden:
        cell.source = f"{visible}\n\n{HIDDEN_NOTE}" if visible else HIDDEN_NOTE
    header = re.compile(rf"Cell In\[{cell.get('execution_count')}\]")
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "error":
            output["traceback"] = [
                _redact_text(
                    entry,
                    hidden,
                    bool(has_hidden and header.search(_strip_ansi(entry))),
                    visible_count,
                )
                for entry in output.get("traceback", [])
            ]
        elif kind == "stream" and hidden:
            output["text"] = _redact_text(output.get("text", ""), hidden, False, visible_count)
        elif kind in ("execute_result", "display_data") and hidden:
            data = output.get("data", {})
            for mime in ("text/plain", "text/html", "text/markdown"):
                if isinstance(data.get(mime), str):
                    data[mime] = _redact_text(data[mime], hidden, False, visible_count)
    return cell


class RedactFeedback(Preprocessor):
    """Test cells as students may see them, and wrapped output (see the module docstring)."""

    enabled = Bool(True, help="nbconvert skips a preprocessor whose enabled is False").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        for cell in nb.cells:
            if anatomy.is_test_cell(cell):
                redact_test_cell(cell)
        inlining = resources.setdefault("inlining", {})
        css = inlining.get("css") or []
        inlining["css"] = [*([css] if isinstance(css, str) else css), WRAP_CSS]
        return nb, resources


def feedback_config() -> Config:
    """nbgrader configuration whose ``generate_feedback`` redacts and sanitises: nbgrader
    0.9's own two preprocessors, then :class:`RedactFeedback` and
    :class:`.sanitise.SanitiseNotebook`."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    from .sanitise import SanitiseNotebook

    config = Config()
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        CSSHTMLHeaderPreprocessor,
        RedactFeedback,
        SanitiseNotebook,
    ]
    return config
