"""A corpus of bad and hostile submissions of notebook 01, each with its expected outcome.

Every hostile submission starts from *wrong* answers (each graded function returns a
useless tensor), so that any point it gets was gained by the attack.
``tests/instructor/classroom/test_grade.py`` grades them all in one class next to honest
students and checks that none scores a point, that each gets the recorded outcome and
integrity note below, and that the honest students, the gradebook and every other
submission are untouched.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat

from instructor import anatomy
from instructor.paths import SOLUTIONS

ASSIGNMENT = "01_vector_sets"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
FUNCTIONS = ("one_hot", "frame_signal", "context_window")
USELESS = "import torch\n\n\ndef {name}(*args, **kwargs):\n    return torch.zeros(1)\n"


@dataclass(frozen=True)
class Hostile:
    """One kind of bad submission."""

    student: str
    description: str
    build: Callable[[nbformat.NotebookNode], nbformat.NotebookNode | str | None]
    """Turns the wrong-answers notebook into what is submitted (text: the file's content;
    None: no notebook file at all)."""
    outcome: str | tuple[str, ...] = "ok"
    """The notebook's recorded outcome: ok, time limit, kernel died, missing, unreadable; a
    tuple where more than one may happen, "*" where any may."""
    note: str = ""
    """A phrase the integrity report must show for this student ("" for none required)."""
    file_name: str = NOTEBOOK


def wrong_answers(released: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The released notebook with every graded function answered uselessly."""
    return anatomy.complete(released, {name: USELESS.format(name=name) for name in FUNCTIONS})


def _cell(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if anatomy.grade_id(c) == grade_id)


def _prepend(grade_id: str, code: str) -> Callable:
    def build(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        cell = _cell(nb, grade_id)
        cell.source = code + "\n" + cell.source
        return nb

    return build


def _replace(grade_id: str, code: str) -> Callable:
    def build(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        _cell(nb, grade_id).source = code
        return nb

    return build


def _delete_test(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.cells = [c for c in nb.cells if anatomy.grade_id(c) != "test_one_hot"]
    return nb


def _duplicate_test(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    test = _cell(nb, "test_one_hot")
    copy = nbformat.from_dict(test)
    copy.id = "test-one-hot-copy"
    copy.source = "pass"
    nb.cells.insert(nb.cells.index(test), copy)
    return nb


def _retype_test(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    test = _cell(nb, "test_one_hot")
    markdown = nbformat.v4.new_markdown_cell(test.source, id=test.id, metadata=test.metadata)
    nb.cells[nb.cells.index(test)] = markdown
    return nb


def _move_test(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    test = _cell(nb, "test_one_hot")
    nb.cells.remove(test)
    nb.cells.insert(nb.cells.index(_cell(nb, "one_hot")), test)
    return nb


def _with_text(text: str) -> Callable:
    return lambda nb: text


def _forge_points(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    # Claim that a solution cell is worth points, and add a "test" worth 100 that passes.
    cell = _cell(nb, "one_hot")
    cell.metadata.nbgrader.update({"grade": True, "points": 100})
    extra = nbformat.v4.new_code_cell("pass", id="free-points")
    extra.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": "free_points",
        "points": 100,
        "schema_version": 3,
    }
    nb.cells.append(extra)
    return nb


# Script for the instructor's browser: a written answer and outputs that try to run code
# where the feedback HTML or formgrader's view of the autograded notebook is opened. Every
# payload names MARKER where it would act; READABLE_* must still be read there.
MARKER = "XSS"
READABLE_ANSWER = "READABLE-ANSWER attention weights sum to one"
READABLE_OUTPUT = "READABLE-OUTPUT"
EDITED_INSTRUCTIONS = "EDITED-INSTRUCTIONS"
FORMULA_STUDENT = "=1+1"
"""A student id a spreadsheet would run: refused as a folder of ``submitted/`` (no student id),
so it reaches no CSV (names that do are quoted: ``instructor/lms/csv_safety.py``)."""

SCRIPT_MARKDOWN: tuple[str, ...] = (
    "<script>alert('XSS')</script>",
    "<img src=x onerror=alert(XSS)>",
    "<svg onload=alert(XSS)>",
    "<a href=\"javascript:alert('XSS')\">x</a>",
    "<iframe srcdoc=\"<script>alert('XSS')</script>\"></iframe>",
    "<ScRiPt>alert('XSS')</sCrIpT>",
    "<IMG SRC=x OnErRoR=alert(XSS)>",
    "<img src=x onerror=&#97;lert(XSS)>",
    "<object data=\"javascript:alert('XSS')\"></object>",
    "<embed src=\"javascript:alert('XSS')\">",
    "<math><mtext><img src=x onerror=alert(XSS)></mtext></math>",
    "<details open ontoggle=alert(XSS)>x</details>",
    "<style>body { background: url('https://evil.example/XSS') }</style>",
    "<img src=x onerror=alert(XSS)//",
    "&lt;script&gt;alert('XSS')&lt;/script&gt;",
    "[x](javascript:alert('XSS'))",
    "[x](JaVaScRiPt:alert('XSS'))",
    "[x](java&#x73;cript:alert('XSS'))",
    "[x](java&#9;script:alert('XSS'))",
    "[x][r]\n\n[r]: javascript:alert('XSS')",
    "<javascript:alert('XSS')>",
    "![x](javascript:alert('XSS'))",
    "```mermaid\n<img src=x onerror=alert('XSS')>\n```",
    "$\\href{javascript:alert('XSS')}{click}$",
    "$&#92;href{javascript:alert('XSS')}{click}$",
)
"""Markdown a student may write (a written answer, or any markdown cell)."""

SCRIPT_OUTPUTS = f"""\
from IPython.display import HTML, SVG, Javascript, Latex, Markdown, display

display(HTML("<b>{READABLE_OUTPUT}-HTML</b><script>alert('XSS')</script>"
             "<img src=x onerror=alert('XSS')><a href='javascript:alert(1)'>XSS</a>"))
display(Javascript("alert('XSS')"))
display(Markdown("{READABLE_OUTPUT}-MD <img src=x onerror=alert('XSS')> [y](javascript:XSS)"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(\\'XSS\\')">'
            '<circle r="1"/></svg>'))
display(Latex(r"$\\href{{javascript:alert('XSS')}}{{x}}$"))
display({{"image/png": "x\\" onerror=\\"alert('XSS')", "text/plain": "{READABLE_OUTPUT}-PNG"}},
        raw=True)
display({{"image/png": "iVBORw0KGgo=", "text/plain": "{READABLE_OUTPUT}-WIDTH"}},
        metadata={{"image/png": {{"width": "1 onerror=alert('XSS')"}}}}, raw=True)
display({{"text/html": "<div>{READABLE_OUTPUT}-ISOLATED</div><script>alert('XSS')</script>"}},
        metadata={{"text/html": {{"isolated": True}}}}, raw=True)
"""
"""A code cell whose outputs try the same (``display`` of HTML, Javascript, markdown, SVG,
LaTeX, a forged image and image metadata)."""


def _script_for_the_instructor(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    answer = nbformat.v4.new_markdown_cell(
        READABLE_ANSWER + "\n\n" + "\n\n".join(SCRIPT_MARKDOWN), id="script-answer"
    )
    outputs = nbformat.v4.new_code_cell(SCRIPT_OUTPUTS, id="script-outputs")
    nb.cells[1:1] = [answer, outputs]
    # An instructions cell, edited: its text is the student's too.
    first = next(c for c in nb.cells if c.cell_type == "markdown")
    first.source += f"\n\n<details open ontoggle=alert(XSS)>{EDITED_INSTRUCTIONS}</details>"
    return nb


_CODE_TAGS = ("pre", "code")
_ACTIVE_TAGS = {"script", "iframe", "object", "embed", "frame", "frameset", "applet", "base"}
_TEX_LINK = re.compile(r"\\(?:href|url|class|style|cssId|require|bbox)\b")


class _Active(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        described = f"<{tag} {attrs}>"
        if MARKER in described and (tag in _ACTIVE_TAGS or tag in ("svg", "math", "style")):
            self.found.append(described)
        for name, value in attrs:
            value = value or ""
            if MARKER not in value:
                continue
            if name.startswith("on") or name in ("srcdoc", "style", "formaction", "data"):
                self.found.append(f"{name}= in {described}")
            if name in ("href", "src", "action", "xlink:href") and re.match(
                r"\s*(?:javascript|vbscript|data)\s*:", re.sub(r"[\t\n\r]", "", value), re.I
            ):
                self.found.append(f"{name}= in {described}")
        if tag not in ("img", "br", "hr", "input", "meta", "link", "wbr", "source"):
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        inside = set(self.stack)
        if MARKER not in data:
            return
        if inside & {"script", "style"}:
            self.found.append(f"in <{self.stack[-1]}>: {data.strip()[:80]!r}")
        elif not inside & set(_CODE_TAGS) and _TEX_LINK.search(data):
            self.found.append(f"a MathJax link: {data.strip()[:80]!r}")


def active_content(page: str) -> list[str]:
    """Whatever in ``page`` (HTML) would run the payloads above in a browser: MARKER in a
    script or style, an event handler, a ``javascript:`` URL, an active tag, or a MathJax
    link command outside code."""
    parser = _Active()
    parser.feed(page)
    parser.close()
    return parser.found


def visible_text(page: str) -> str:
    """``page``'s text (tags removed, references read), to check what stays readable."""
    return html.unescape(re.sub(r"<[^>]*>", "", page))


def _nbgrader_metadata(grade_id: str, value: object) -> Callable:
    """A cell's whole ``metadata.nbgrader`` replaced by ``value``."""

    def build(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        _cell(nb, grade_id).metadata["nbgrader"] = value
        return nb

    return build


def _nbgrader_key(grade_id: str, key: str, value: object) -> Callable:
    def build(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        _cell(nb, grade_id).metadata["nbgrader"][key] = value
        return nb

    return build


def _nested(depth: int, where: str) -> Callable:
    """Valid JSON nested ``depth`` deep in a cell's metadata or an output's data; the file's
    text, written without recursion (json.dumps itself would fail at 100,000)."""

    def build(nb: nbformat.NotebookNode) -> str:
        cell = _cell(nb, "one_hot")
        if where == "metadata":
            cell.metadata["deep"] = "DEEP"
        else:
            cell.outputs = [
                nbformat.v4.new_output(
                    "display_data", data={"application/json": {"deep": "DEEP"}, "text/plain": "x"}
                )
            ]
        return json.dumps(nb).replace('"DEEP"', "[" * depth + "]" * depth, 1)

    return build


def _as_json_text(change: Callable[[dict], None]) -> Callable:
    """The notebook as JSON text after ``change`` (what nbformat would refuse to write)."""

    def build(nb: nbformat.NotebookNode) -> str:
        data = json.loads(json.dumps(nb))
        change(data)
        return json.dumps(data)  # ensure_ascii: a lone surrogate is written as \\ud800

    return build


def _lone_surrogate(data: dict) -> None:
    data["cells"][0]["source"] = "A lone surrogate: \ud800"


def _number_beyond_python(data: dict) -> None:
    data["cells"][0]["metadata"]["big"] = "BIG"


PATCH_COMPARISONS = """\
import torch
import numpy as np
import helpers.checks
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
np.allclose = lambda *a, **k: True
for _name in dir(helpers.checks):
    if _name.startswith("check_"):
        setattr(helpers.checks, _name, lambda *a, **k: None)
"""

CORPUS: list[Hostile] = [
    Hostile(
        "infinite_loop",
        "a cell that never ends (interrupted after the cell time limit)",
        _prepend("one_hot", "while True:\n    pass\n"),
        note="",
    ),
    Hostile(
        "unstoppable_loop",
        "a loop that swallows the interrupt: the grader stops the notebook",
        _prepend(
            "one_hot",
            "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n"
            "    except KeyboardInterrupt:\n        pass\n",
        ),
        outcome="time limit",
        note="did not run",
    ),
    Hostile(
        "memory_bomb",
        "allocates until the memory limit",
        _prepend("one_hot", "hog = []\nwhile True:\n    hog.append(bytearray(2**28))\n"),
        # The hog is still held after the MemoryError: whether the kernel itself can
        # allocate afterwards depends on how close to the limit the last chunk left it, and
        # on a loaded machine the rest of the notebook may then run past its time limit
        # (seen once in CI-like runs, 2026-11-26). Whatever stops it, it scores 0.
        outcome=("ok", "kernel died", "time limit"),
    ),
    Hostile(
        "fork_bomb",
        "forks without end",
        _prepend("one_hot", "import os\nwhile True:\n    os.fork()\n"),
        outcome="*",  # the forked copies of the kernel may hang it (time limit) or not
        note="fork",  # "forked the kernel" (audit hook) or "forks the process" (code scan)
    ),
    Hostile(
        "kernel_suicide",
        "ends its own kernel when a test calls it",
        _replace("one_hot", "import os\n\n\ndef one_hot(*args, **kwargs):\n    os._exit(0)\n"),
        outcome="kernel died",
        note="did not run",
    ),
    Hostile(
        "exception_at_import",
        "an import that fails in the first cell",
        _prepend("one_hot", "import a_module_that_does_not_exist\n"),
    ),
    Hostile("deleted_test", "deletes a test cell", _delete_test, note="deleted test cell"),
    Hostile("duplicated_test", "duplicates a test cell", _duplicate_test, note="duplicated"),
    Hostile(
        "retyped_test",
        "turns a test cell into markdown",
        _retype_test,
        note="from code to markdown",
    ),
    Hostile("moved_test", "moves a test above its function", _move_test, note="moved cells"),
    Hostile(
        "edited_test",
        "replaces a test cell's code with pass",
        _replace("test_one_hot", "pass"),
        note="edited test cell",
    ),
    Hostile(
        "forged_points",
        "marks its own cells as graded and worth 100 points",
        _forge_points,
        note="nbgrader",
    ),
    Hostile(
        "renamed_notebook",
        "hands the notebook in under another name",
        lambda nb: nb,
        outcome="missing",
        note="extra notebook",
        file_name="my_solution.ipynb",
    ),
    Hostile(
        "extra_notebook",
        "hands in a second notebook next to the graded one (the test adds scratch.ipynb)",
        lambda nb: nb,
        note="extra notebook scratch.ipynb",
    ),
    Hostile(
        "missing_notebook", "hands in no notebook", lambda nb: None, outcome="missing", note="no "
    ),
    Hostile(
        "invalid_json",
        "a truncated file",
        _with_text('{"cells": [{"cell_type": "code", '),
        outcome="unreadable",
        note="not valid JSON",
    ),
    Hostile("empty_file", "an empty file", _with_text(""), outcome="unreadable", note="empty file"),
    Hostile(
        "not_a_notebook",
        "JSON that is not a notebook",
        _with_text('{"hello": "world"}'),
        outcome="unreadable",
        note="not a notebook",
    ),
    Hostile(
        "huge_output",
        "prints 50 MB",
        _prepend("one_hot", "print('x' * 50_000_000)\n"),
        note="output truncated",
    ),
    Hostile(
        "stderr_noise",
        "writes to stderr in a solution cell",
        _prepend("one_hot", "import sys\nprint('noise ' * 100, file=sys.stderr)\n"),
    ),
    Hostile(
        "prints_passed",
        "prints what the tests print",
        _prepend("one_hot", "print('one_hot: all visible tests passed')\n"),
    ),
    Hostile(
        "patched_comparisons",
        "replaces torch/numpy comparisons and the helpers checks with always-true versions",
        _prepend("one_hot", PATCH_COMPARISONS),
        note="torch.allclose was replaced",
    ),
    Hostile(
        "patch_during_test",
        "its function replaces torch.allclose when the test calls it",
        _replace(
            "one_hot",
            "import torch\n\n\ndef one_hot(*args, **kwargs):\n"
            "    torch.allclose = lambda *a, **k: True\n    return torch.zeros(1)\n",
        ),
        note="torch.allclose was replaced (before test_one_hot_2)",
    ),
    Hostile(
        "hidden_tracebacks",
        "stops IPython from showing errors",
        _prepend(
            "one_hot",
            "ip = get_ipython()\nip.showtraceback = lambda *a, **k: None\n"
            "ip._showtraceback = lambda *a, **k: None\n"
            "ip.set_custom_exc((Exception,), lambda *a, **k: None)\n",
        ),
        note="IPython's showtraceback was replaced",
    ),
    Hostile(
        "blanked_test_cells",
        "an input transformer that replaces every later cell with pass",
        _prepend(
            "one_hot",
            "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
        ),
        note="kept the grader's guard from reporting before test_one_hot",
    ),
    Hostile(
        "patched_builtins",
        "replaces isinstance and len",
        _prepend(
            "one_hot",
            "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.len = lambda x: 3\n",
        ),
        outcome="*",  # the kernel itself relies on them: it may hang or fail
        note="scored 0",
    ),
    Hostile(
        "reads_solutions",
        "reads the instructor's notebook (hidden tests and solutions) from disk",
        _prepend(
            "one_hot",
            f"import glob\nfound = glob.glob('{SOLUTIONS}/**/*.ipynb', recursive=True)\n"
            "print(len(found), 'files')\n"
            f"open('{SOLUTIONS / ASSIGNMENT / NOTEBOOK}').read()\n",
        ),
        note="solutions",
    ),
    Hostile(
        "writes_gradebook",
        "writes into the gradebook and another student's submission",
        lambda nb: nb,  # the code is added by the test, which knows the course's paths
        note="for writing",
    ),
    Hostile(
        "network",
        "opens a network connection",
        _prepend(
            "one_hot",
            "import socket\ntry:\n    socket.create_connection(('93.184.216.34', 80), timeout=2)\n"
            "except OSError as error:\n    print('no network:', error)\n",
        ),
        note="network connection",
    ),
    Hostile(
        "script_for_the_instructor",
        "a markdown answer and outputs with script for the instructor's browser",
        _script_for_the_instructor,
    ),
    # One hand-in's file must never stop the class (issue 32): each scores 0 with a note.
    Hostile(
        "nbgrader_metadata_string",
        "a test cell's metadata.nbgrader is a string (TypeError once ended the run)",
        _nbgrader_metadata("test_one_hot", "test_one_hot"),
        outcome="unreadable",
        note="nbgrader metadata not of nbgrader's schema",
    ),
    Hostile(
        "grade_id_list",
        "a test cell's grade_id is a list (unhashable: TypeError once ended the run)",
        _nbgrader_key("test_one_hot", "grade_id", ["test_one_hot"]),
        outcome="unreadable",
        note="nbgrader metadata not of nbgrader's schema",
    ),
    Hostile(
        "nbgrader_metadata_null",
        "a solution cell's metadata.nbgrader is null",
        _nbgrader_metadata("one_hot", None),
        outcome="unreadable",
        note="nbgrader metadata not of nbgrader's schema",
    ),
    Hostile(
        "points_as_text",
        "a test cell's points are a string, its schema version from the future",
        lambda nb: _nbgrader_key("test_one_hot", "schema_version", 99)(
            _nbgrader_key("test_one_hot", "points", "100")(nb)
        ),
        outcome="unreadable",
        note="nbgrader metadata not of nbgrader's schema",
    ),
    Hostile(
        "grade_id_path",
        "a test cell's grade_id is a path",
        _nbgrader_key("test_one_hot", "grade_id", "../../gradebook"),
        outcome="unreadable",
        note="nbgrader metadata not of nbgrader's schema",
    ),
    Hostile(
        "nested_100000",
        "200 KB of valid JSON nested 100,000 deep (RecursionError once ended the run)",
        _nested(100_000, "metadata"),
        outcome="unreadable",
        note="nested deeper than",
    ),
    Hostile(
        "nested_just_too_deep",
        "an output nested 200 deep: below Python's recursion limit, above the bound",
        _nested(200, "output"),
        outcome="unreadable",
        note="nested deeper than",
    ),
    Hostile(
        "lone_surrogate",
        "a cell with a lone UTF-16 surrogate: valid JSON, read, then no UTF-8 file can hold it",
        _as_json_text(_lone_surrogate),
        outcome="unreadable",
        note="unreadable: UnicodeEncodeError",
    ),
    Hostile(
        "number_beyond_python",
        "a number of 5,000 digits (more than Python converts)",
        lambda nb: _as_json_text(_number_beyond_python)(nb).replace('"BIG"', "9" * 5000, 1),
        outcome="unreadable",
        note="not valid JSON",
    ),
    Hostile(
        "outputs_of_another_shape",
        "a code cell whose outputs are a string",
        _as_json_text(
            lambda data: next(c for c in data["cells"] if c["cell_type"] == "code").update(
                outputs="none"
            )
        ),
        outcome="unreadable",
        note="not a valid notebook",
    ),
]

REFUSED_IDS: tuple[str, ...] = (
    "*",  # nbgrader globs the id it is given: every student's outputs, removed by --force
    "[a]lice",  # alice's
    "alice ",  # nbgrader strips it: alice's
    "alice\u00a0",  # a no-break space, which str.strip() strips too
    "e\u0301lise",  # a decomposed accent: a second spelling of one name
    FORMULA_STUDENT,  # a spreadsheet's formula
    "<img src=x onerror=alert(1)>",  # formgrader prints ids unescaped
    "-rf",  # an option
    "$(touch pwned)",  # a shell's substitution
    "a\nb",  # a line of its own in every log and report
)
"""Folders of ``submitted/`` whose name is no student id (``instructor/student_ids.py``):
each holds the reference solution, and none may be graded, nor touch alice's outputs.
``test_grade.py`` submits them next to the corpus."""


def write_gradebook_attack(course_root: Path, victim: str) -> str:
    """The code of ``writes_gradebook``: it needs the absolute paths of this course."""
    gradebook = course_root / "gradebook.db"
    other = course_root / "submitted" / victim / ASSIGNMENT / NOTEBOOK
    return (
        "for target in [" + repr(str(gradebook)) + ", " + repr(str(other)) + "]:\n"
        "    try:\n"
        "        with open(target, 'w') as handle:\n"
        "            handle.write('overwritten')\n"
        "    except OSError as error:\n"
        "        print('refused:', error)\n"
    )


# Kernels that share nothing (issue 32): what one kernel starts or leaves must not reach
# another kernel, nor outlive its own notebook. Every process these start runs a command
# line ending with LEFTOVER, so that the tests find any that survived
# (tests/instructor/classroom/test_kernels_share_nothing.py grades them with and without
# bubblewrap, next to an honest notebook 08).
LEFTOVER = "hostile-kernel-leftover"
LEFTOVER_GROUP = "hostile-kernels"
"""The xdist group of every test whose kernels start processes carrying LEFTOVER (the
class of test_grade.py, test_kernels_share_nothing.py): the search for survivors sees every
process of the machine, so no two of them run at once."""
IPC_KEYS = (0x5A1, 0x5A3, 0x5A4)
"""The SysV keys of LEAVE_IPC's shared memory segment, semaphore set and message queue."""
POSIX_NAME = "/hostile-leftover"
"""LEAVE_IPC's POSIX message queue and shared memory object (``/dev/shm``)."""

LEAVE_IPC = f"""\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget({IPC_KEYS[0]}, 1 << 20, 0o1666)  # IPC_CREAT, anyone may read
if shmid >= 0:
    ctypes.memmove(libc.shmat(shmid, None, 0), b"LEFT BY the last kernel", 23)
libc.semget({IPC_KEYS[1]}, 1, 0o1666)
libc.msgget({IPC_KEYS[2]}, 0o1666)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
queue = rt.mq_open(b"{POSIX_NAME}", os.O_CREAT | os.O_RDWR, 0o666, None)
if queue >= 0:
    rt.mq_send(queue, b"LEFT BY the last kernel", 23, 0)
try:
    with open("/dev/shm{POSIX_NAME}", "w") as handle:  # POSIX shared memory: a file
        handle.write("LEFT BY the last kernel")
except OSError:
    pass
"""
"""SysV shared memory, semaphores and a message queue, a POSIX message queue and a POSIX
shared memory object: each outlives the process that made it."""

FIND_IPC = f"""\
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
found = {{}}
for kind in ("shm", "sem", "msg"):
    rows = open(f"/proc/sysvipc/{{kind}}").read().splitlines()[1:]
    found[kind] = [row.split()[0] for row in rows]
found["mqueue"] = rt.mq_open(b"{POSIX_NAME}", os.O_RDONLY) >= 0
found["posix_shm"] = os.path.exists("/dev/shm{POSIX_NAME}")
print("found: " + json.dumps(found))
"""
"""What the next kernel finds of LEAVE_IPC (printed after ``found: ``)."""

ESCAPED_DAEMON = f"""\
import os, sys
if os.fork() == 0:  # a daemon: double fork, a session of its own, its parent gone
    os.setsid()
    if os.fork() == 0:
        code = "import time\\nwhile True: time.sleep(0.5)"
        os.execl(sys.executable, "python", "-c", code, "{LEFTOVER}")
    os._exit(0)
os.wait()
"""

SPINNER_POOL = f"""\
import os, sys
spinners = 0
for _ in range(50):  # 50 CPU spinners, each in a session of its own
    try:
        if os.fork() == 0:
            os.setsid()
            os.execl(sys.executable, "python", "-c", "while True: pass", "{LEFTOVER}")
        spinners += 1
    except OSError:  # the kernel's process limit
        break
print("spinners:", spinners)
"""

SPINNING_THREADS = """\
import threading
import numpy as np

def _spin():
    a = np.random.rand(300, 300)
    for _ in range(100_000):
        a = np.tanh(a @ a)  # numpy lets go of the GIL: every thread takes a core

for _ in range(16):
    threading.Thread(target=_spin, daemon=True).start()
"""

MEMORY_HOG_CHILD = """\
import os, time
hogs = []
for _ in range(5):  # 5 x 768 MiB: each within the per-process limit, together beyond the kernel's
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            hog = bytearray(768 << 20)  # zero-filled: every page touched
            time.sleep(5)
            code = 0
        finally:
            os._exit(code)
    hogs.append(pid)
print("hogs:", [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in hogs])
"""
"""Children that hold memory, each within the per-process limit, together beyond the
kernel's; it prints their exit codes after ``hogs:`` (-9: killed)."""

CORPUS.extend(
    [
        Hostile(
            "ipc_leftovers",
            "leaves SysV shared memory, semaphores and a message queue, a POSIX message queue "
            "and POSIX shared memory for the next kernel",
            _prepend("one_hot", LEAVE_IPC),
        ),
        Hostile(
            "escaped_daemon",
            "starts a daemon that double-forks and leaves its session",
            _prepend("one_hot", ESCAPED_DAEMON),
            note="fork",
        ),
        Hostile(
            "spinner_pool",
            "starts 50 CPU spinners, each in a session of its own",
            _prepend("one_hot", SPINNER_POOL),
            outcome=("ok", "time limit"),  # its own cells share its CPU with its spinners
            note="fork",
        ),
        Hostile(
            "spinning_threads",
            "16 threads of numpy work, which let go of the GIL",
            _prepend("one_hot", SPINNING_THREADS),
            outcome=("ok", "time limit"),
        ),
        Hostile(
            "memory_hog_child",
            "children that together hold more memory than the kernel may",
            _prepend("one_hot", MEMORY_HOG_CHILD),
            outcome=("ok", "kernel died", "time limit"),
            note="fork",
        ),
    ]
)


# Bounds per notebook (issue 43): the outputs of a whole notebook, display updates included,
# and everything a kernel writes to disk. Each case prints what it got through after
# MEASURED, so that tests/instructor/classroom/test_grade_bounds.py can hold it to the bound
# of the limits it grades with (BOUND_LIMITS there); it goes on, whatever fails, so that its
# wrong answers are still defined.
MEASURED = "BOUND-MEASURED"
ATTEMPT_MIB = 256
"""What each disk case tries to write: four times the test's bound (64 MiB)."""


def _many_cells(code: str, count: int = 40) -> Callable:
    """``count`` cells of ``code`` after the imports cell, each under the cap per cell."""

    def build(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        at = nb.cells.index(_cell(nb, "one_hot"))
        nb.cells[at:at] = [nbformat.v4.new_code_cell(code, id=f"bound-{i}") for i in range(count)]
        return nb

    return build


def _disk(body: str) -> str:
    """Code that runs ``body`` (which counts into ``got``) and prints what it got through."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    return (
        "import os\n"
        f"got = {{}}\ntry:\n{indented}\nexcept OSError as error:\n"
        "    print('stopped:', error)\n"
        f"print('{MEASURED}', got)\n"
    )


MANY_FILES = _disk(f"""
got['mib'] = 0
for i in range({ATTEMPT_MIB // 16}):  # 16 MiB each: far below the 64 MiB of one file
    with open(f'part-{{i}}.bin', 'wb') as handle:
        handle.write(b'x' * (16 << 20))
    got['mib'] += 16
""")

MANY_INODES = _disk("""
got['files'] = 0
os.mkdir('inodes')
for i in range(50_000):  # empty files: no byte, one inode each
    open(f'inodes/{i}', 'w').close()
    got['files'] += 1
""")

SPARSE_FILES = _disk(f"""
got['allocated_mib'] = 0
for i in range({ATTEMPT_MIB // 32}):
    with open(f'sparse-{{i}}.bin', 'wb') as handle:
        handle.truncate(60 << 20)  # 60 MiB of hole: nothing allocated yet
        handle.seek(1 << 20)
        handle.write(b'x')
        for start in range(0, 32 << 20, 4 << 20):  # then blocks, never written
            try:
                os.posix_fallocate(handle.fileno(), start, 4 << 20)
            finally:
                got['allocated_mib'] = sum(
                    os.stat(f'sparse-{{j}}.bin').st_blocks * 512 >> 20 for j in range(i + 1)
                )
""")

LINK_FARM = _disk("""
got['links'] = 0
with open('target.bin', 'wb') as handle:
    handle.write(b'x' * (1 << 20))
os.mkdir('links')
for i in range(50_000):  # hard links: no new byte, a name each
    os.link('target.bin', f'links/{i}')
    got['links'] += 1
""")

TMP_AND_HOME = _disk(f"""
import tempfile
mine = []
for key, folder in (('tmp', '/tmp'), ('home', os.path.expanduser('~'))):
    got[key] = 0
    try:
        for i in range({ATTEMPT_MIB // 16}):
            path = os.path.join(folder, f'bound-hog-{{os.getpid()}}-{{i}}')
            with open(path, 'wb') as handle:
                mine.append(path)
                handle.write(b'x' * (16 << 20))
            got[key] += 16
    except OSError as error:
        print(key, 'stopped:', error)
for path in mine:  # without a sandbox /tmp is the machine's: leave nothing there
    if os.path.dirname(path) == '/tmp':
        os.remove(path)
""")

DISPLAY_AMPLIFIED = f"""\
from IPython.display import display
handle = display('small', display_id='shown-often')
for _ in range(399):  # the same display id shown 400 times, 5 bytes each
    display('small', display_id='shown-often')
handle.update('y' * 100_000)  # one update rewrites all 400: 40 MB
print('{MEASURED}', 'updated')
"""

RAW_UPDATE = f"""\
from IPython.display import publish_display_data
for _ in range(300):
    publish_display_data({{'text/plain': 's'}}, transient={{'display_id': 'raw'}})
publish_display_data(
    {{'text/plain': 'y' * 100_000}}, transient={{'display_id': 'raw'}}, update=True
)
print('{MEASURED}', 'published')
"""

CLEAR_LOOP = """\
from IPython.display import clear_output
for _ in range(30):
    clear_output(wait=True)
    print('c' * 100_000)
"""

SMALL_WRITES = """\
import sys
for _ in range(4_000):  # 50-byte writes: many small stream messages
    sys.stdout.write('s' * 49 + '\\n')
"""

BOUNDS: list[Hostile] = [
    Hostile(
        "display_update",
        "shows one display id 400 times, then updates it once with 100 KB (40 MB stored)",
        _prepend("one_hot", DISPLAY_AMPLIFIED),
        note="output truncated",
    ),
    Hostile(
        "raw_display_update",
        "the same through IPython's publish_display_data, a transient display_id",
        _prepend("one_hot", RAW_UPDATE),
        note="output truncated",
    ),
    Hostile(
        "many_cells_under_cap",
        "40 cells of 200 KB each, each under the cap per cell",
        _many_cells("print('m' * 200_000)"),
        note="output bound",
    ),
    Hostile(
        "clear_output_loops",
        "40 cells that clear their output and print 100 KB again, 30 times",
        _many_cells(CLEAR_LOOP),
        note="output bound",
    ),
    Hostile(
        "small_stream_writes",
        "40 cells of 4,000 writes of 50 bytes",
        _many_cells(SMALL_WRITES),
        note="output bound",
    ),
    Hostile(
        "many_files",
        f"writes {ATTEMPT_MIB} MiB in files of 16 MiB into its working folder",
        _prepend("one_hot", MANY_FILES),
        note="disk bound",
    ),
    Hostile(
        "many_inodes",
        "makes 50,000 empty files",
        _prepend("one_hot", MANY_INODES),
        note="disk bound",
    ),
    Hostile(
        "sparse_files",
        "sparse files of 60 MiB, then their blocks allocated with fallocate",
        _prepend("one_hot", SPARSE_FILES),
        note="disk bound",
    ),
    Hostile(
        "link_farm",
        "50,000 hard links to one file",
        _prepend("one_hot", LINK_FARM),
        note="disk bound",
    ),
    Hostile(
        "tmp_and_home",
        f"writes {ATTEMPT_MIB} MiB into /tmp and into $HOME",
        _prepend("one_hot", TMP_AND_HOME),
        note="disk bound",
    ),
]
"""The bounds of a whole notebook, tried (graded with both isolations by test_grade_bounds.py)."""
