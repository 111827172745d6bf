"""The pure parts of one notebook's execution: guard cells around the test cells, the
guards' reports, a notebook that could not run. (Execution in the sandbox itself is proven
end to end in test_grade.py.)"""

from __future__ import annotations

import json

import nbformat

from instructor import anatomy
from instructor.classroom.execute import _guard_report, _with_guards, unexecuted
from instructor.classroom.guard import REPORT_PREFIX
from instructor.classroom.records import ZeroedTest


def test_every_test_cell_is_put_between_two_guards(release: nbformat.NotebookNode) -> None:
    guarded, plan = _with_guards(release)
    tests = [anatomy.grade_id(c) for c in anatomy.test_cells(release)]
    assert [entry.test for entry in plan] == tests
    assert len(guarded.cells) == len(release.cells) + 2 * len(tests)
    for entry in plan:
        before, test, after = guarded.cells[entry.at - 1 : entry.at + 2]
        assert anatomy.grade_id(test) == entry.test
        assert entry.pre_nonce in before.source and "'pre'" in before.source
        assert entry.post_nonce in after.source and "'post'" in after.source
    assert len(release.cells) == len(guarded.cells) - 2 * len(tests), "the input is unchanged"


def test_a_guard_report_counts_only_with_its_nonce() -> None:
    report = {"nonce": "abc", "found": ["math.sqrt was replaced"], "events": []}
    forged = {**report, "nonce": "guessed", "found": []}
    cell = nbformat.v4.new_code_cell("")
    text = "".join(f"{REPORT_PREFIX}{json.dumps(r)}\n" for r in (forged, report))
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    assert _guard_report(cell, "abc") == report
    assert _guard_report(cell, "other") is None


def test_a_notebook_that_could_not_run_scores_0_everywhere(
    release: nbformat.NotebookNode,
) -> None:
    result = unexecuted(release, "grader error", "the grading worker failed")
    tests = [anatomy.grade_id(c) for c in anatomy.test_cells(release)]
    assert result.zeroed == tuple(ZeroedTest(t, "the grading worker failed") for t in tests)
    executed = nbformat.from_dict(result.notebook)
    for cell in anatomy.test_cells(executed):
        assert cell.outputs[0].ename == "GraderIntegrityError"
    assert not any(c.get("outputs") for c in anatomy.test_cells(release)), "input unchanged"
