"""Feedback HTML for the recorded hand-ins: nbgrader's own ``generate_feedback``.

The HTML never shows a hidden test, and nothing the student wrote runs in it:
:func:`feedback_for` adds :class:`.feedback.RedactFeedback` and
:class:`.sanitise.SanitiseNotebook` to nbgrader's ``GenerateFeedback`` preprocessors
(:func:`.feedback.feedback_config`) on the API it uses.

Feedback only reads the gradebook and the autograded notebooks, so with the embedded
cluster (this machine) the Dask workers write it in parallel; with a remote scheduler
(whose workers may not see the course folder) it is written here, one after another.

Feedback that never shows a hidden test: a preprocessor for nbgrader's ``generate_feedback``.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool
from traitlets.config import Config

from instructor import anatomy
from instructor.classroom.grader.course import NbgraderCourse, ResumeState
from instructor.classroom.grader.records import contain

__all__ = [
    "HIDDEN_NOTE",
    "REDACTED_LINE",
    "RedactFeedback",
    "WRAP_CSS",
    "feedback_config",
    "feedback_for",
    "lacking_feedback",
    "redact_test_cell",
    "redacting",
    "write_feedback",
]


def lacking_feedback(
    root: Path, state: ResumeState, assignments: list[str], force: bool = False
) -> list[tuple[str, str]]:
    """(assignment, student) of every recorded hand-in without feedback (all, with force)."""
    missing = []
    for assignment in assignments:
        for student in state.students(assignment):
            folder = root / "feedback" / student / assignment
            if force or not folder.is_dir() or not any(folder.glob("*.html")):
                missing.append((assignment, student))
    return missing


def redacting(course: NbgraderCourse) -> NbgraderCourse:
    """``course``, its API's ``generate_feedback`` made to redact hidden tests and sanitise
    (idempotent)."""
    course.api.config.merge(feedback_config())
    return course


def feedback_for(root: Path, db_url: str | None, assignment: str, student: str) -> bool:
    """nbgrader's ``generate_feedback`` for one hand-in (in a worker), hidden tests
    redacted; whether it worked. It reads what the student wrote: inside the hand-in's
    boundary (:func:`.pipeline.contain`), so one notebook's feedback failing is named
    in the log ("feedback failed for ...") and the others are still written."""
    done = contain(
        lambda: redacting(NbgraderCourse(root, db_url)).generate_feedback(assignment, student)
    )
    return done is True


def write_feedback(
    course: NbgraderCourse,
    missing: list[tuple[str, str]],
    client: Any | None,
    log: Callable[[str], None],
) -> None:
    """Feedback for each (assignment, student) of ``missing``: on ``client``'s workers, or
    here where ``client`` is None."""
    if not missing:
        return
    if client is None:
        results = [feedback_for(course.root, course.db_url, a, s) for a, s in missing]
    else:
        futures = client.map(
            feedback_for,
            [course.root] * len(missing),
            [course.db_url] * len(missing),
            [a for a, _ in missing],
            [s for _, s in missing],
            pure=False,
        )
        results = client.gather(futures)
    failed = [f"{a}/{s}" for (a, s), ok in zip(missing, results, strict=True) if not ok]
    log(f"feedback written for {len(missing) - len(failed)} submission(s)")
    if failed:
        log("feedback failed for: " + ", ".join(failed))


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

    from instructor.classroom.sanitise import SanitiseNotebook

    config = Config()
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        CSSHTMLHeaderPreprocessor,
        RedactFeedback,
        SanitiseNotebook,
    ]
    return config
