"""Reading a submitted file without trusting it, comparing it with the release, scanning it.
(Grading itself is proven end to end in test_grade.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.grader.integrity import (
    compare_with_release,
    imports_failure,
    normalise_notebook,
    read_submission,
    scan_code,
)


def _cell(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if anatomy.grade_id(c) == grade_id)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty file"),
        ("   \n", "empty file"),
        ('{"cells": [', "not valid JSON"),
        ("[1, 2]", "not a notebook"),
        ('{"cells": "nope", "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "not a valid"),
    ],
)
def test_unreadable_files_are_named(text: str, problem: str) -> None:
    reading = read_submission(text)
    assert reading.notebook is None and problem in reading.problem


def test_the_release_itself_is_clean(release: nbformat.NotebookNode) -> None:
    reading = read_submission(nbformat.writes(release))
    assert reading.notebook is not None
    assert compare_with_release(reading.notebook, release) == []
    assert scan_code(reading.notebook) == []


def test_each_change_to_a_test_cell_is_named(
    release: nbformat.NotebookNode, released_copy: nbformat.NotebookNode
) -> None:
    nb = released_copy
    nb.cells.remove(_cell(nb, "test_one_hot"))
    _cell(nb, "test_frame_signal").source = "pass"
    _cell(nb, "test_context_window").cell_type = "markdown"
    notes = "\n".join(compare_with_release(nb, release))
    assert "deleted test cell test_one_hot" in notes
    assert "edited test cell test_frame_signal" in notes
    assert "test_context_window from code to markdown" in notes


def test_duplicates_and_forged_metadata_are_normalised(
    release: nbformat.NotebookNode, released_copy: nbformat.NotebookNode
) -> None:
    nb = released_copy
    copy = nbformat.from_dict(dict(_cell(nb, "test_one_hot")))
    nb.cells.append(copy)
    _cell(nb, "one_hot").metadata.nbgrader["points"] = 100
    notes = "\n".join(compare_with_release(nb, release))
    assert "duplicated test cell test_one_hot" in notes
    assert "changed the nbgrader metadata of one_hot" in notes
    fixed = normalise_notebook(nb, release)
    ids = [c.metadata["nbgrader"]["grade_id"] for c in fixed.cells if "nbgrader" in c.metadata]
    assert ids.count("test_one_hot") == 1
    assert "points" not in _cell(fixed, "one_hot").metadata.nbgrader
    assert _cell(nb, "one_hot").metadata.nbgrader["points"] == 100, "the input is not modified"


def test_suspicious_code_is_flagged(released_copy: nbformat.NotebookNode) -> None:
    nb = released_copy
    _cell(nb, "one_hot").source = (
        "import torch, ctypes\ntorch.allclose = lambda *a, **k: True\n"
        "get_ipython().showtraceback = None\n"
    )
    flags = "\n".join(scan_code(nb))
    assert "assigns torch.allclose" in flags
    assert "imports ctypes" in flags
    assert "get_ipython" in flags


def test_a_failing_imports_cell_is_read_from_the_outputs(
    released_copy: nbformat.NotebookNode,
) -> None:
    nb = released_copy
    assert imports_failure(nb) == ""
    cell = anatomy.imports_cell(nb)
    cell.outputs = [
        nbformat.v4.new_output(
            "error", ename="ModuleNotFoundError", evalue="No module named 'x'", traceback=[]
        )
    ]
    assert imports_failure(nb) == "ModuleNotFoundError: No module named 'x'"
    assert imports_failure(dict(nb)) == "ModuleNotFoundError: No module named 'x'"


def test_a_file_is_read_bounded_and_never_through_a_link(
    tmp_path: Path, release: nbformat.NotebookNode
) -> None:
    from instructor.classroom.grader.integrity import read_submission_file

    path = tmp_path / "01_vector_sets.ipynb"
    path.write_text(nbformat.writes(release))
    assert read_submission_file(path).notebook is not None
    size = path.stat().st_size
    assert (
        read_submission_file(path, limit=size - 1).problem
        == f"larger than {(size - 1) / 2**20:g} MiB"
    )
    link = tmp_path / "link.ipynb"
    link.symlink_to("/dev/zero")
    assert read_submission_file(link).problem == "a symbolic link, not a file"
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    assert read_submission_file(fifo).problem == "not a regular file"
