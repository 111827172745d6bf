"""A corpus of bad and hostile submissions of notebook 01, each with its expected outcome.

Every hostile submission starts from *wrong* answers (each graded function returns a
useless tensor), so that any point it gets was gained by the attack.
``tests/instructor/classroom/test_grade.py`` grades them all in one class next to honest
students and checks that none scores a point, that each gets the recorded outcome and
integrity note below, and that the honest students, the gradebook and every other
submission are untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
        "a loop that swallows the interrupt: the notebook's time limit stops it",
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
        # allocate afterwards depends on how close to the limit the last chunk left it.
        outcome=("ok", "kernel died"),
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
]


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
