"""The class grader against forgeries through the probe protocol (``support.input_forgeries``):
a trick scores exactly what its wrong answer scores alone, and no other student changes.

For each notebook of the corpus (06, 08 and 10), one class is graded with ``ClassGrader`` per
isolation (bubblewrap, and ``COURSE_SANDBOX=none``, each an xdist group of its own, in
clones of one generated course per notebook, on the test process's cluster for that
isolation: ``support.graded_class``): the reference
solution, one student with every wrong answer of that notebook, one with every trick
(``trick``; a function's second trick goes to ``trick_2``, and so on: :func:`trick_student`).
Scores are compared cell by cell, from the summaries the grader recorded. (A trick's test
fails where its expected answer, computed from the grader's own inputs, differs; the rule
against inputs changed in place, which fails a test that passes otherwise, is proven in
test_judge.py.)
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.classroom.worker.isolation import Isolation, Limits, isolation
from support.graded_class import generated, graded_with, isolation_params
from support.input_forgeries import CORPUS, LIES, InputForgery

ASSIGNMENTS = sorted({f.assignment for f in CORPUS})


def trick_student(forgery: InputForgery) -> str:
    """Who hands in ``forgery``'s trick: one student per trick of each function."""
    same = [
        f for f in CORPUS if (f.assignment, f.function) == (forgery.assignment, forgery.function)
    ]
    rank = same.index(forgery)
    return "trick" if rank == 0 else f"trick_{rank + 1}"


def _trick_students(assignment: str) -> dict[str, dict[str, str]]:
    students: dict[str, dict[str, str]] = {}
    for forgery in CORPUS:
        if forgery.assignment == assignment:
            students.setdefault(trick_student(forgery), {})[forgery.function] = forgery.trick
    return students


@pytest.fixture(scope="module", params=isolation_params("input_forgeries"))
def graded(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    limits: Limits,
    shared_scheduler: Callable[[], str],
) -> dict:
    """Every notebook's class, graded with the isolation ``request.param``: the summaries
    by notebook and student, and the autograded notebooks."""
    mode: Isolation = request.param
    results: dict = {"mode": mode.value, "summaries": {}, "autograded": {}}
    with graded_with(mode):
        for assignment in ASSIGNMENTS:
            course = generated(tmp_path_factory, assignment).clone(
                tmp_path_factory.mktemp(f"{assignment}-{mode.value}")
            )
            entries = [f for f in CORPUS if f.assignment == assignment]
            course.submit("solved", course.solved(demos=False))
            course.submit("wrong", course.solved({f.function: f.wrong for f in entries}))
            for student, tricks in _trick_students(assignment).items():
                course.submit(student, course.solved(tricks))
            # Three small classes: on this test process's cluster for the isolation
            # (support.graded_class), not three clusters of their own.
            grader = ClassGrader(
                course.root,
                scheduler=shared_scheduler(),
                limits=limits,
                progress=False,
                feedback=False,
            )
            summaries = grader.grade([assignment], log=lambda line: None)
            results["summaries"][assignment] = {s.student: s for s in summaries}
            results["autograded"][assignment] = {
                s.student: course.autograded(s.student) for s in summaries
            }
        results["isolation"] = isolation()
    return results


def _cells(summary: HandInSummary, assignment: str) -> dict[str, float]:
    return {c.cell: c.score for c in summary.notebooks[assignment].cells or ()}


def _error(notebook, cell_id: str) -> str:  # an nbformat notebook
    cell = next(c for c in anatomy.test_cells(notebook) if anatomy.grade_id(c) == cell_id)
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else ""


def test_the_classes_are_graded_in_the_mode_asked(graded: dict) -> None:
    assert graded["isolation"] == graded["mode"]
    for assignment in ASSIGNMENTS:
        summaries = graded["summaries"][assignment]
        assert set(summaries) == {"solved", "wrong", *_trick_students(assignment)}
        assert not [s.student for s in summaries.values() if s.error]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_solution_scores_as_usual(graded: dict, assignment: str) -> None:
    summary = graded["summaries"][assignment]["solved"]
    waiting = sum(c.max_score for c in summary.notebooks[assignment].cells if c.awaiting)
    assert summary.score == summary.max_score - waiting, _cells(summary, assignment)


@pytest.mark.parametrize("forgery", CORPUS, ids=[f"{f.function}-{f.kind}" for f in CORPUS])
def test_a_trick_scores_exactly_its_wrong_answer(graded: dict, forgery: InputForgery) -> None:
    summaries = graded["summaries"][forgery.assignment]
    wrong = _cells(summaries["wrong"], forgery.assignment)
    student = trick_student(forgery)
    trick = _cells(summaries[student], forgery.assignment)
    cells = forgery.cells
    assert all(wrong[c] == 0 for c in cells), f"the wrong answer alone: {wrong}"
    won = {c: trick[c] for c in cells if trick[c] != wrong[c]}
    assert not won, f"{forgery.function} ({forgery.kind}) with {graded['mode']}: {won}"
    if forgery.decided_by:
        autograded = graded["autograded"][forgery.assignment][student]
        errors = [_error(autograded, c) for c in cells]
        assert all(forgery.decided_by in e for e in errors), errors
    if forgery.kind in LIES:
        autograded = graded["autograded"][forgery.assignment][student]
        errors = [_error(autograded, c) for c in cells]
        notes = attention(summaries[student])
        assert any("probe protocol" in note for note in notes), notes
        assert any("GraderProtocolError" in e and "'forward'" in e for e in errors), errors
