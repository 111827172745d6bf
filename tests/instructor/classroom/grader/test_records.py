"""The records the grader's parts hand each other: their JSON form is the resume state's."""

from __future__ import annotations

import pickle
from dataclasses import replace

from instructor.classroom.grader.records import (
    CellGrade,
    CellSeen,
    ExecutionResult,
    FailedPart,
    HandInSummary,
    Manual,
    NotebookSummary,
    Screening,
    ZeroedTest,
    ZeroKind,
)

EXECUTED = ExecutionResult(
    {"cells": []},
    outcome="time limit",
    detail="the notebook ran longer than 30 s and was stopped",
    zeroed=(ZeroedTest("test_f", "test_f did not run", ZeroKind.NOT_RUN),),
    restored=("torch.allclose was replaced (before test_f)",),
    events=("started a subprocess",),
    truncated_cells=(3, 4),
    seconds=31.234,
)


def test_an_executed_notebook_keeps_its_screening_and_adds_the_run() -> None:
    screened = NotebookSummary.screened(Screening("nb", "", ("edited test cell t",), ("flag",)))
    summary = screened.executed(EXECUTED)
    assert summary.outcome == "time limit"
    assert summary.notes == (
        "edited test cell t",
        EXECUTED.detail,
        "output truncated in 2 cell(s)",
    )
    assert summary.flags == ("flag",)
    assert summary.zeroed == EXECUTED.zeroed
    assert summary.seconds == 31.23


def test_the_json_form_is_the_resume_state_format() -> None:
    missing = NotebookSummary.screened(Screening("a", "missing", ("no a.ipynb",)))
    ran = NotebookSummary.screened(Screening("b")).executed(EXECUTED)
    scored = NotebookSummary(
        outcome="ok",
        restored=(),
        events=(),
        seconds=1.0,
        score=2.0,
        max_score=3.0,
        cells=(CellGrade("t", 2.0, 3.0),),
    )
    summary = HandInSummary("s", "x", "f1", ("extra notebook",), "", {"a": missing, "b": ran})
    data = summary.to_json()
    assert list(data) == ["student", "assignment", "fingerprint", "notes", "error", "notebooks"]
    assert list(data["notebooks"]["a"]) == ["outcome", "notes", "flags", "zeroed"]
    assert list(data["notebooks"]["b"]) == [
        *("outcome", "notes", "flags", "zeroed", "restored", "events", "seconds")
    ]
    assert data["notebooks"]["b"]["zeroed"] == {"test_f": ["not run", "test_f did not run"]}
    assert scored.to_json()["cells"] == {"t": [2.0, 3.0]}
    assert HandInSummary.from_json(data) == summary
    assert NotebookSummary.from_json(scored.to_json()) == scored
    manual = replace(scored, cells=(CellGrade("w", None, 2.0, Manual.AWAITING),))
    assert manual.to_json()["cells"] == {"w": [None, 2.0, "awaiting"]}
    assert NotebookSummary.from_json(manual.to_json()) == manual


def test_what_the_grader_saw_of_each_test_is_kept() -> None:
    seen = (
        CellSeen("test_f", ("f:axis~1234", "*:in-place~abcd"), FailedPart.VISIBLE),
        CellSeen("test_f_2", (), FailedPart.HIDDEN),
        CellSeen("test_q_a", (), None, "b"),
        CellSeen("test_q_n", (), FailedPart.HIDDEN, ""),
    )
    summary = NotebookSummary.screened(Screening("b")).executed(replace(EXECUTED, seen=seen))
    assert summary.seen == seen
    assert summary.to_json()["seen"] == {
        "test_f": {"tags": ["f:axis~1234", "*:in-place~abcd"], "failed": "visible"},
        "test_f_2": {"failed": "hidden"},
        "test_q_a": {"answer": "b"},
        "test_q_n": {"failed": "hidden", "answer": ""},
    }
    assert NotebookSummary.from_json(summary.to_json()) == summary
    assert "seen" not in NotebookSummary.screened(Screening("b")).executed(EXECUTED).to_json()


def test_an_execution_result_travels_between_processes() -> None:
    assert pickle.loads(pickle.dumps(EXECUTED)) == EXECUTED


def test_a_hand_in_scores_the_sum_of_its_notebooks() -> None:
    notebooks = {
        "a": NotebookSummary(score=1.5, max_score=2.0, cells=()),
        "b": NotebookSummary(outcome="missing"),
    }
    summary = HandInSummary("s", "x", notebooks=notebooks)
    assert (summary.score, summary.max_score) == (1.5, 2.0)


def test_the_imports_cell_error_is_read_from_the_executed_notebook() -> None:
    imports = {
        "cell_type": "code",
        "metadata": {"tags": ["imports"]},
        "source": "import seaborn",
        "outputs": [
            {
                "output_type": "error",
                "ename": "ModuleNotFoundError",
                "evalue": "No module named 'seaborn'",
                "traceback": [],
            }
        ],
    }
    result = ExecutionResult({"cells": [imports]})
    summary = NotebookSummary.screened(Screening("nb")).executed(result)
    assert summary.imports_error == "ModuleNotFoundError: No module named 'seaborn'"
    assert NotebookSummary.from_json(summary.to_json()) == summary
    clean = NotebookSummary.screened(Screening("nb")).executed(EXECUTED)
    assert clean.imports_error == "" and "imports_error" not in clean.to_json()


def test_an_older_state_file_still_loads() -> None:
    legacy = {"outcome": "ok", "notes": [], "flags": [], "zeroed": {"test_f": "it broke"}}
    assert NotebookSummary.from_json(legacy).zeroed == (
        ZeroedTest("test_f", "it broke", ZeroKind.OTHER),
    )
    old = {"outcome": "ok", "notes": [], "flags": [], "zeroed": {}, "seconds": 1.0}
    assert NotebookSummary.from_json(old).imports_error == ""
