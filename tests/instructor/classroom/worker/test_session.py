"""The pure parts of one notebook's execution: a guard cell before each test cell, the
guard's reports, a notebook that could not run. (Execution in the sandbox, with the test
cells judged in the grader, is proven below and end to end in test_grade.py.)"""

from __future__ import annotations

import gc
import json
import os
import threading

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.grader.records import ZeroedTest, ZeroKind
from instructor.classroom.kernel.guard import REPORT_PREFIX
from instructor.classroom.worker import FailedPart
from instructor.classroom.worker import session as execute
from instructor.classroom.worker.isolation import Limits
from instructor.classroom.worker.session import _guard_report, _with_guards, unexecuted
from instructor.grading_cases import load_cases

ASSIGNMENT = "01_vector_sets"
FUNCTIONS = ("one_hot", "frame_signal", "context_window")


def test_every_test_cell_follows_a_guard(release: nbformat.NotebookNode) -> None:
    guarded, plan = _with_guards(release)
    tests = [anatomy.grade_id(c) for c in anatomy.test_cells(release)]
    assert [entry.test for entry in plan] == tests
    assert len(guarded.cells) == len(release.cells) + len(tests)
    for entry in plan:
        before, test = guarded.cells[entry.at - 1 : entry.at + 1]
        assert anatomy.grade_id(test) == entry.test
        assert entry.nonce in before.source and "'pre'" in before.source
    assert len(release.cells) == len(guarded.cells) - len(tests), "the input is unchanged"


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
    assert result.zeroed == tuple(
        ZeroedTest(t, "the grading worker failed", ZeroKind.NOT_RUN) for t in tests
    )
    executed = nbformat.from_dict(result.notebook)
    for cell in anatomy.test_cells(executed):
        assert cell.outputs[0].ename == "TestNotRun"
    assert not any(c.get("outputs") for c in anatomy.test_cells(release)), "input unchanged"


def test_a_kernel_without_the_grader_s_code_is_an_error_of_the_grader(
    monkeypatch: pytest.MonkeyPatch, limits: Limits
) -> None:
    """If the kernel cannot import the course (not installed where it runs), the grader
    says so before any student is scored, instead of scoring everyone 0."""
    monkeypatch.setattr(execute, "_start_lines", lambda *args: ["import no_such_course"])
    with pytest.raises(execute.GraderEnvironmentError, match="cannot load the grader's code"):
        execute.check_kernel_environment(limits)


def test_test_cells_are_judged_outside_the_kernel(release: nbformat.NotebookNode) -> None:
    """In the sandbox: the reference answers pass through probes, the stubs fail with their
    NotImplementedError, and a kernel that rebinds a check cannot make a test pass."""
    solved = anatomy.complete(release, anatomy.solution_sources(anatomy.read_solution(ASSIGNMENT)))
    result = execute.execute_notebook(dict(solved), ASSIGNMENT, Limits(cell_seconds=60))
    assert result.outcome == "ok" and result.probes > 0, result.detail
    assert all(not _errors(c) for c in anatomy.test_cells(nbformat.from_dict(result.notebook)))
    # What the grader records for the item analysis: the concept answers it read, no failure.
    questions = {f"test_{q}" for q in anatomy.solution_sources(solved) if q.startswith("q_")}
    assert {s.test for s in result.seen} == questions
    assert all(s.answer and not s.failed and not s.tags for s in result.seen), result.seen
    cheat = (
        "import helpers.checks as hc\n"
        "for name in dir(hc):\n"
        "    if name.startswith('check_'):\n"
        "        setattr(hc, name, lambda *a, **k: None)\n"
        "get_ipython().user_ns['check_close'] = lambda *a, **k: None\n"
    )
    wrong = {name: f"{cheat}\ndef {name}(*args, **kwargs):\n    return 0\n" for name in FUNCTIONS}
    # one_hot makes a named mistake: the grader records its tag, from the message it saw.
    named = next(c for c in load_cases(ASSIGNMENT) if c.function == "one_hot" and c.message)
    wrong["one_hot"] = f"{cheat}\n{named.source}"
    result = execute.execute_notebook(
        dict(anatomy.complete(release, wrong)), ASSIGNMENT, Limits(cell_seconds=60)
    )
    assert result.outcome == "ok", result.detail
    cells = anatomy.test_cells(nbformat.from_dict(result.notebook))
    failed = {anatomy.grade_id(c): _errors(c) for c in cells}
    one_hot = set(anatomy.tests_of("one_hot", list(failed))) - {"test_one_hot"}  # may pass
    assert all(e for t, e in failed.items() if t not in one_hot), "a replaced check passed"
    seen = {s.test: s for s in result.seen}
    assert {t for t, s in seen.items() if s.failed == FailedPart.VISIBLE} >= {
        f"test_{name}" for name in FUNCTIONS
    }
    assert seen["test_one_hot"].tags and seen["test_one_hot"].tags[0].startswith("one_hot:")


def _errors(cell: nbformat.NotebookNode) -> list:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.parametrize(("figures", "drawn"), [(False, False), (True, True)])
def test_figures_are_drawn_only_when_asked(figures: bool, drawn: bool, limits: Limits) -> None:
    """By default the grader leaves a figure as its text (drawing decides no grade and costs
    time); ``figures=True`` (``grade --figures``) draws it as nbgrader would."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nimport matplotlib.pyplot as plt"),
        nbformat.v4.new_code_cell("plt.plot([0, 1], [1, 0])\nplt.show()"),
    ]
    result = execute.execute_notebook(dict(notebook), "figures", limits, figures=figures)
    assert result.outcome == "ok", result.detail
    outputs = nbformat.from_dict(result.notebook).cells[1].outputs
    kinds = {kind for output in outputs for kind in output.get("data", {})}
    assert ("image/png" in kinds) is drawn, outputs
    assert "text/plain" in kinds and not _errors(nbformat.from_dict(result.notebook).cells[1])


UNSTOPPABLE = """\
import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
"""
SLOW = "import time\ntime.sleep(1.5)"


@pytest.mark.parametrize(
    ("cells", "wall", "named", "not_named"),
    [
        # A cell past its 2-s limit that catches the interrupt (nbclient then waits 4 s for
        # the kernel's idle message): the cell's limit, well within the notebook's.
        ([UNSTOPPABLE], 30, "a cell ran past its 2-s limit and ignored the interrupt", "notebook"),
        # Every cell within its 2 s, the notebook past its own 4 s. nbclient reads the
        # cancelled cell as a dead kernel: this was "the kernel died (memory or process
        # limit, ...)".
        ([SLOW] * 6, 4, "the notebook ran longer than 4 s", "a cell"),
    ],
    ids=["cell", "notebook"],
)
def test_a_stopped_notebook_names_the_limit_that_stopped_it(
    cells: list[str], wall: int, named: str, not_named: str, limits: Limits
) -> None:
    """The student's feedback and the instructor's report name the limit that was reached."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    tight = Limits(wall_seconds=wall, cell_seconds=2, memory_mib=limits.memory_mib)
    result = execute.execute_notebook(dict(notebook), "stopped", tight)
    assert result.outcome == "time limit", (result.outcome, result.detail)
    assert named in result.detail and not_named not in result.detail, result.detail
    assert result.detail.endswith("the grader stopped it"), result.detail


def test_a_worker_keeps_nothing_of_the_kernels_it_ran(limits: Limits) -> None:
    """A remote worker (``grade --scheduler``) runs thousands of kernels in one process:
    each must leave behind no descriptor (zmq contexts, event loops, sockets) and no thread
    (the heartbeat), or the worker reaches its open-file limit mid-term."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    # The first kernel opens what the worker keeps on purpose (its zygote connection).
    assert execute.execute_notebook(dict(notebook), "first", limits).outcome == "ok"
    descriptors, threads = len(os.listdir("/proc/self/fd")), threading.active_count()
    for _ in range(3):
        assert execute.execute_notebook(dict(notebook), "again", limits).outcome == "ok"
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) - descriptors < 3, "descriptors left open"
    assert threading.active_count() <= threads, "threads left running"


def test_a_long_notebook_name_does_not_lengthen_the_kernel_s_sockets(limits: Limits) -> None:
    """The kernel's Unix sockets are in its working folder, and a socket's path has at most
    107 bytes: the folder's name does not grow with the notebook's."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    result = execute.execute_notebook(dict(notebook), "a_notebook_" + "n" * 100, limits)
    assert result.outcome == "ok", result.detail
