"""The class grader against forged verdicts: no forgery in ``tests/support/forgeries.py``
scores more than the wrong answers it started from.

One class of notebook 03 is graded with ``ClassGrader`` once per isolation (bubblewrap, and
``COURSE_SANDBOX=none``: the module fixture is parametrised over both, each isolation an
xdist group of its own: ``support.graded_class``): the reference
solution (every point but the written answer's, which waits for a grader), the untouched
release (0), the baseline (``attention`` and ``causal_mask`` right,
``self_attention_columns`` unscaled, the questions unanswered: 5) and every forgery, which is
the baseline plus a few lines trying to win the last three points. Scores are read from
the summaries the grader recorded from nbgrader's gradebook, and checked against the
gradebook itself.
"""

from __future__ import annotations

import nbformat
import pytest

from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.classroom.worker.isolation import Isolation, Limits, isolation
from instructor.scratch_course import ScratchCourse
from support.forgeries import (
    ASSIGNMENT,
    BASELINE_SCORE,
    CORPUS,
    MAX_SCORE,
    NOTEBOOK,
    QUESTION_CELLS,
    SOLVED_SCORE,
    TARGET,
    Forgery,
    baseline,
)
from support.graded_class import generated, graded_with, isolation_params

REFERENCE = {"solved": SOLVED_SCORE, "untouched": 0, "baseline": BASELINE_SCORE}
"""The submissions that show the class is graded as usual, with their scores."""


@pytest.fixture(scope="module")
def course03(tmp_path_factory: pytest.TempPathFactory) -> ScratchCourse:
    """A scratch course with notebook 03 generated (source, release, gradebook); read only."""
    return generated(tmp_path_factory, ASSIGNMENT)


def _submit(course: ScratchCourse, student: str, notebook: nbformat.NotebookNode) -> None:
    folder = course.root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
    nbformat.write(notebook, folder / NOTEBOOK)


@pytest.fixture(scope="module", params=isolation_params("forgeries"))
def graded(
    request: pytest.FixtureRequest,
    course03: ScratchCourse,
    tmp_path_factory: pytest.TempPathFactory,
    limits: Limits,
) -> dict:
    """The class, graded once with the isolation ``request.param``."""
    mode: Isolation = request.param
    with graded_with(mode):
        course = course03.clone(tmp_path_factory.mktemp(f"class03-{mode.value}"))
        _submit(course, "solved", course.solved(demos=False))
        _submit(course, "untouched", course.released())
        _submit(course, "baseline", baseline(course.released()))
        for forgery in CORPUS:
            _submit(course, forgery.student, forgery.build(course.released()))
        grader = ClassGrader(course.root, workers=2, limits=limits, progress=False, feedback=False)
        log: list[str] = []
        summaries = grader.grade([ASSIGNMENT], log=log.append)
        isolated = isolation()
    return {
        "mode": mode.value,
        "isolation": isolated,
        "root": course.root,
        "summaries": {s.student: s for s in summaries},
        "log": log,
    }


def _explain(summary: HandInSummary) -> str:
    record = summary.notebooks[ASSIGNMENT]
    cells = {c.cell: c.score for c in record.cells or ()}
    notes = "\n  ".join(attention(summary)) or "(no integrity note)"
    return f"{summary.score}/{summary.max_score}, outcome {record.outcome!r}, {cells}\n  {notes}"


def test_the_class_is_graded_in_the_mode_asked(graded: dict) -> None:
    assert graded["isolation"] == graded["mode"], graded["log"]
    expected = set(REFERENCE) | {f.student for f in CORPUS}
    assert set(graded["summaries"]) == expected
    assert not [s.student for s in graded["summaries"].values() if s.error]
    assert len(CORPUS) >= 12
    assert len({f.student for f in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("student", list(REFERENCE))
def test_reference_submissions_score_as_usual(graded: dict, student: str) -> None:
    summary: HandInSummary = graded["summaries"][student]
    record = summary.notebooks[ASSIGNMENT]
    assert (summary.score, summary.max_score) == (REFERENCE[student], MAX_SCORE), _explain(summary)
    assert record.outcome == "ok", _explain(summary)
    if student == "baseline":
        # The three points it lacks are exactly those of the wrong function's test.
        lost = {c.cell for c in record.cells if c.score != c.max_score}
        assert lost - QUESTION_CELLS == {f"test_{TARGET}"}, _explain(summary)


BREAKS_PROTOCOL = {"pickled_answer"}
"""Forgeries whose answers are not data: every probe of the notebook is refused, so they
score 0 on every test, with a note, rather than exactly the baseline."""


@pytest.mark.parametrize("forgery", CORPUS, ids=[f.student for f in CORPUS])
def test_forgery_scores_exactly_its_wrong_answers(graded: dict, forgery: Forgery) -> None:
    summary: HandInSummary = graded["summaries"][forgery.student]
    assert summary.max_score == MAX_SCORE
    won = (
        f"{forgery.student} ({forgery.kind}: {forgery.description}) with isolation "
        f"{graded['mode']}: {_explain(summary)}"
    )
    if forgery.student in BREAKS_PROTOCOL:
        assert summary.score <= BASELINE_SCORE, won
        assert any("probe protocol" in note for note in attention(summary)), won
    else:
        assert summary.score == BASELINE_SCORE, won


def test_the_gradebook_holds_the_same_scores(graded: dict) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['root'] / 'gradebook.db'}") as gradebook:
        recorded = {
            student: gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).score
            for student in graded["summaries"]
        }
    assert recorded == {s: summary.score for s, summary in graded["summaries"].items()}
