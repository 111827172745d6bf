"""No line of a hidden test reaches a student's kernel (issue 25).

For every notebook of the registry, the reference solution (its ungraded demo cells emptied)
is executed by the class grader's ``execute_notebook`` with the test cells as nbgrader's
autograde restores them: visible and hidden parts. Every request folder the grader wrote for
the kernel is kept, and its ``message.json`` files (all that carries text: the inputs are
``.npy`` arrays) are searched for each line of every hidden part.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.classroom.worker import session as execute
from instructor.classroom.worker.disk_bound import BoundedFolder
from instructor.classroom.worker.isolation import Limits

LINE_MIN = 12
"""Hidden lines shorter than this (``)``, ``else:``) say nothing of the test."""


def _restored(notebook_id: str) -> nbformat.NotebookNode:
    """The solved student version with the instructor's test cells, hidden parts included."""
    solution = anatomy.read_solution(notebook_id)
    solved = anatomy.complete(
        anatomy.read_released(notebook_id), anatomy.solution_sources(solution), demos=False
    )
    tests = {anatomy.grade_id(c): c.source for c in anatomy.test_cells(solution)}
    for cell in anatomy.test_cells(solved):
        cell.source = tests[anatomy.grade_id(cell)]
    return solved


@pytest.mark.parametrize(
    "notebook_id",
    [pytest.param(n, marks=pytest.mark.xdist_group(f"{n}-traffic")) for n in registry.load().ids],
)
def test_no_hidden_test_line_is_sent_to_the_kernel(
    notebook_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = _restored(notebook_id)
    hidden: set[str] = set()
    for cell in anatomy.test_cells(notebook):
        visible = anatomy.visible_part(cell.source)
        hidden |= {  # what the visible part already shows is no secret
            line.strip()
            for line in cell.source[len(visible) :].splitlines()
            if len(line.strip()) >= LINE_MIN and line.strip().rstrip(",") not in visible
        }
    assert hidden, f"{notebook_id} has hidden tests"

    sent: list[str] = []
    remove = shutil.rmtree
    release = BoundedFolder.release

    def read_messages(path: Path) -> None:
        if path.name.startswith("probes-"):
            sent.extend(m.read_text() for m in path.rglob("message.json"))

    def keep_messages(path: str | Path, *args: object, **kwargs: object) -> None:
        read_messages(Path(path))
        remove(path, *args, **kwargs)

    def keep_messages_of_the_mount(folder: BoundedFolder) -> None:
        # As root the probes' folder is a tmpfs: unmounting it takes its files along.
        read_messages(folder.path)
        release(folder)

    monkeypatch.setattr(execute.shutil, "rmtree", keep_messages)
    monkeypatch.setattr(BoundedFolder, "release", keep_messages_of_the_mount)
    result = execute.execute_notebook(dict(notebook), notebook_id, Limits(cell_seconds=60))
    assert result.outcome == "ok" and result.probes > 0, result.detail
    assert len(sent) >= result.probes
    text = "\n".join(sent)
    leaked = sorted(line for line in hidden if line in text)
    assert not leaked, f"{notebook_id}: hidden test lines sent to the kernel: {leaked[:5]}"
