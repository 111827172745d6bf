"""The record step: the sandboxed outputs replayed into nbgrader's autograde
(``ReplayAutograde`` with its ``ReplayExecute``), handed to it directly."""

from __future__ import annotations

import nbformat
import pytest
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from instructor.classroom.grader.course import STAGING_FOLDER, NbgraderCourse
from instructor.classroom.grader.record import ReplayAutograde, ReplayExecute
from instructor.feedback import SanitiseNotebook
from instructor.scratch_course import ScratchCourse


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


def test_the_recording_replays_on_the_staged_copies(course: ScratchCourse) -> None:
    api = NbgraderCourse(course.root, db_url="sqlite:///elsewhere.db").recording_api
    executed = {"x": dict(_notebook("2\n"))}
    app = ReplayAutograde(executed, coursedir=api.coursedir, parent=api)
    steps = app.autograde_preprocessors
    assert steps[0] is ReplayExecute and steps[-1] is SanitiseNotebook
    assert Execute not in steps, "nbgrader's Execute would run the student's code unsandboxed"
    assert api.coursedir.submitted_directory == STAGING_FOLDER
    assert api.coursedir.db_url == "sqlite:///elsewhere.db"
    # The executed notebooks go to this recording's own ReplayExecute, not into the
    # course's configuration, where the next hand-in's recording would find them.
    app.exporter = app.exporter_class(parent=app, config=app.config)  # as nbgrader's start()
    app._sanitizing = False
    app._init_preprocessors()
    replays = [s for s in app.exporter._preprocessors if isinstance(s, ReplayExecute)]
    assert [r.executed for r in replays] == [executed]
    assert "ReplayExecute" not in api.config
