"""Replaying the sandboxed outputs into nbgrader's autograde (``ReplayExecute``)."""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config import Config

from instructor.classroom.grader.pipeline import ReplayExecute


def _notebook(output: str | None) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# x"), nbformat.v4.new_code_cell("1 + 1")]
    if output is not None:
        notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
        notebook.cells[1].execution_count = 7
    return notebook


def _resources(name: str = "x") -> dict:
    return {"nbgrader": {"student": "s", "assignment": "a", "notebook": name}}


def test_the_outputs_of_the_sandboxed_run_are_replayed() -> None:
    replay = ReplayExecute(executed={"x": dict(_notebook("2\n"))})
    notebook, _ = replay.preprocess(_notebook(None), _resources())
    assert notebook.cells[1].outputs[0].text == "2\n"
    assert notebook.cells[1].execution_count == 7


def test_the_executed_notebooks_come_through_the_configuration() -> None:
    config = Config()
    config.ReplayExecute.executed = {"x": dict(_notebook("3\n"))}
    notebook, _ = ReplayExecute(config=config).preprocess(_notebook(None), _resources())
    assert notebook.cells[1].outputs[0].text == "3\n"


def test_a_notebook_other_than_the_one_executed_is_refused() -> None:
    executed = _notebook("2\n")
    executed.cells[1].source = "2 + 2"
    replay = ReplayExecute(executed={"x": dict(executed)})
    with pytest.raises(RuntimeError, match="not the one sanitised"):
        replay.preprocess(_notebook(None), _resources())
    with pytest.raises(RuntimeError, match="no executed notebook"):
        replay.preprocess(_notebook(None), _resources("other"))
