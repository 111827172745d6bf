"""The integrity report names what the student's code did, not what the course's own cells do
(issue 44): one class of notebook 01, graded once on this process's cluster.

An honest hand-in as a student's session leaves it (every demo cell kept: the first figure,
which builds matplotlib's font cache with ``fc-list`` where the grader's user has none) gets
no note but its near copies; each act hidden where a course cell sets it off, or in a cell
the student edited, is still named.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.scratch_course import ScratchCourse

ASSIGNMENT = "01_vector_sets"
# One worker grades the module's class once (a module fixture is built on each worker that
# runs one of its tests).
pytestmark = pytest.mark.xdist_group("integrity_attribution")

SUBPROCESS_IN_ANSWER = """import subprocess as _sp


def _quietly():
    _sp.run(["true"], check=False)


_solution_one_hot = one_hot


def one_hot(tokens, vocab):
    _quietly()
    return _solution_one_hot(tokens, vocab)
"""
"""Appended to the one_hot cell: the answer is right, and every call starts a process (the
demo cells call it, and the grader's probes)."""

SEED_WRAPPED_IN_ANSWER = """import functools as _ft
import torch as _t

_genuine_seed = _t.manual_seed
_t.manual_seed = _ft.wraps(_genuine_seed)(lambda seed: _genuine_seed(0))
"""
"""A student's own wrapper of torch.manual_seed, dressed as a library's (``__wrapped__``)."""


def _demo_cell(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The first code cell that is neither an answer, a test, nor locked: a demo."""
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and not meta.get("locked") and not meta.get("solution"):
            return cell
    raise AssertionError("notebook 01 has no demo cell")


def _with_answer_suffix(course: ScratchCourse, grade_id: str, suffix: str):
    notebook = course.solved()
    cell = next(c for c in notebook.cells if anatomy.grade_id(c) == grade_id)
    cell.source += "\n\n" + suffix
    return notebook


@pytest.fixture(scope="module")
def summaries(
    generated_course: ScratchCourse,
    tmp_path_factory: pytest.TempPathFactory,
    shared_scheduler,
) -> dict[str, HandInSummary]:
    course = generated_course.clone(tmp_path_factory.mktemp("attribution"))
    course.submit("honest_full", course.solved())
    course.submit("process_in_answer", _with_answer_suffix(course, "one_hot", SUBPROCESS_IN_ANSWER))
    edited = course.solved()
    _demo_cell(edited).source += "\nimport os as _os\n_os.system('true')\n"
    course.submit("process_in_edited_demo", edited)
    course.submit("seed_wrapped", _with_answer_suffix(course, "one_hot", SEED_WRAPPED_IN_ANSWER))
    grader = ClassGrader(course.root, scheduler=shared_scheduler(), feedback=False, progress=False)
    graded = grader.grade([ASSIGNMENT], log=LOGS[0].append)
    grader.grade([ASSIGNMENT], log=LOGS[1].append)  # nothing to grade again: all resumed
    REPORT.append((course.root / "reports" / "integrity.md").read_text())
    return {s.student: s for s in graded}


LOGS: tuple[list[str], list[str]] = ([], [])
REPORT: list[str] = []


def test_an_honest_hand_in_with_its_demo_cells_gets_no_note(summaries) -> None:
    honest = summaries["honest_full"]
    assert honest.score == honest.max_score, honest
    assert attention(honest) == [], attention(honest)


@pytest.mark.parametrize(
    ("student", "note"),
    [
        ("process_in_answer", "the kernel started a subprocess (true)"),
        ("process_in_edited_demo", "the kernel ran a shell command"),
        ("seed_wrapped", "torch.manual_seed was replaced"),
    ],
)
def test_the_student_s_own_acts_are_still_named(summaries, student: str, note: str) -> None:
    notes = "\n".join(attention(summaries[student]))
    assert note in notes, notes


def test_staging_marks_the_cells_the_student_wrote(generated_course: ScratchCourse) -> None:
    from instructor.classroom.grader.integrity import mark_student_cells
    from instructor.classroom.kernel.guard import STUDENT_CELL, student_cells

    released = generated_course.released()
    notebook = generated_course.solved()
    demo = _demo_cell(notebook)
    demo.metadata[STUDENT_CELL] = False  # the file's word counts for nothing
    demo.source += "\nprint('mine')"
    marked = mark_student_cells(notebook, released)
    sources = student_cells(marked.cells)
    assert sources is not None and demo.source in sources
    answers = [c.source for c in marked.cells if anatomy.is_solution_cell(c)]
    assert all(a in sources for a in answers if a.strip())
    untouched = [c for c in marked.cells if c.cell_type == "code" and c is not demo]
    assert any(not c.metadata[STUDENT_CELL] for c in untouched)
    assert student_cells(released.cells) is None


def test_the_scan_names_code_made_from_text(tmp_path: Path) -> None:
    from instructor.classroom.grader.integrity import scan_code

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import re\npattern = re.compile('a')\nmodel = m.eval()"),
        nbformat.v4.new_code_cell("exec(compile('x = 1', '/site-packages/torch/x.py', 'exec'))"),
    ]
    flags = scan_code(notebook)
    assert any("runs code made from text (exec)" in f for f in flags), flags
    assert any("compiles code from text (compile)" in f for f in flags), flags
    assert not any(f.startswith(notebook.cells[0].get("id", "?")) for f in flags), flags


def test_the_log_of_every_run_agrees_with_the_report(summaries) -> None:
    """The second run grades nobody and rewrites the report: both logs say its count (the
    honest hand-in is listed for its near copies of the reference solution only)."""
    count = REPORT[0].splitlines()[2].removesuffix(".")
    assert count == f"{len(summaries)} of {len(summaries)} submission(s) need a look"
    for log in LOGS:
        said = [line for line in log if line.startswith("integrity report: ")]
        assert len(said) == 1 and said[0].startswith(f"integrity report: {count} ("), log
