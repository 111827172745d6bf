"""Grading a class with ``ClassGrader`` (``python -m instructor.classroom grade``), end to end:
honest and hostile submissions.

One class of notebook 01 is graded once (module fixture): two honest students and every
kind of bad submission in ``tests/support/hostile.py``. Scores are read from nbgrader's
gradebook.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.classroom.worker.isolation import Limits, isolation
from instructor.lms.csv_safety import safe_cell
from instructor.scratch_course import ScratchCourse
from support.hostile import (
    ASSIGNMENT,
    CORPUS,
    LEFTOVER_GROUP,
    NOTEBOOK,
    REFUSED_IDS,
    write_gradebook_attack,
    wrong_answers,
)

POINTS = registry.load().notebook(ASSIGNMENT).points
"""Notebook 01's points: functions and concept questions (no written answer)."""

# The hostile class's kernels start processes that test_kernels_share_nothing.py looks for.
pytestmark = pytest.mark.xdist_group(LEFTOVER_GROUP)
ON_THEIR_OWN = pytest.mark.xdist_group("grade-classes-of-their-own")
"""The tests that grade a class of their own, no hostile one: beside the others."""

HONEST = {"alice": "solved", "carol": "untouched"}


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _submit(
    course: ScratchCourse, student: str, content: nbformat.NotebookNode | str | None, name: str
):
    folder = course.root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
    if content is None:
        (folder / "README.txt").write_text("I forgot my notebook")
    elif isinstance(content, str):
        (folder / name).write_text(content)
    else:
        nbformat.write(content, folder / name)
        if student == "extra_notebook":
            nbformat.write(content, folder / "scratch.ipynb")


@pytest.fixture(scope="module")
def graded(
    generated_course: ScratchCourse, tmp_path_factory: pytest.TempPathFactory, limits: Limits
) -> dict:
    course = generated_course.clone(tmp_path_factory.mktemp("class"))
    root = course.root
    _submit(course, "alice", course.solved(demos=False), NOTEBOOK)
    _submit(course, "carol", course.released(), NOTEBOOK)
    for hostile in CORPUS:
        notebook = wrong_answers(course.released())
        if hostile.student == "writes_gradebook":
            cell = anatomy.solution_cells(notebook)[0]
            cell.source = write_gradebook_attack(root, "alice") + "\n" + cell.source
        _submit(course, hostile.student, hostile.build(notebook), hostile.file_name)
    for name in REFUSED_IDS:  # each a glob, a path, a formula, a page's tag: full marks inside
        _submit(course, name, course.solved(demos=False), NOTEBOOK)
    before = _hashes(root / "submitted")
    grader = ClassGrader(root, workers=2, limits=limits, progress=False)
    log: list[str] = []
    summaries = grader.grade([ASSIGNMENT], log=log.append)
    by_student = {s.student: s for s in summaries}
    return {
        "root": root,
        "course": course,
        "grader": grader,
        "summaries": by_student,
        "before": before,
        "log": log,
    }


def test_sandbox_is_available_here() -> None:
    """The isolation the README promises on Linux: skip (and say so) without bubblewrap."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (make system-packages installs it)")
    assert isolation() == "bwrap"


def test_honest_students_are_graded_as_usual(graded: dict) -> None:
    alice, carol = graded["summaries"]["alice"], graded["summaries"]["carol"]
    notebook = alice.notebooks[ASSIGNMENT]
    assert (notebook.score, notebook.outcome) == (notebook.max_score, "ok"), alice
    assert notebook.max_score == POINTS
    assert carol.score == 0
    assert not attention(alice), attention(alice)


def test_every_submission_is_recorded(graded: dict) -> None:
    expected = set(HONEST) | {h.student for h in CORPUS}
    assert set(graded["summaries"]) == expected
    assert not [s for s in graded["summaries"].values() if s.error]
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("hostile", CORPUS, ids=[h.student for h in CORPUS])
def test_hostile_submission_gains_nothing(graded: dict, hostile) -> None:
    summary: HandInSummary = graded["summaries"][hostile.student]
    record = summary.notebooks[ASSIGNMENT]
    assert summary.score == 0, f"{hostile.description}: {record}"
    if isinstance(hostile.outcome, tuple):
        assert record.outcome in hostile.outcome, record
    elif hostile.outcome != "*":
        assert record.outcome == hostile.outcome, record
    notes = "\n".join(attention(summary))
    assert hostile.note in notes, f"{hostile.description}: expected {hostile.note!r} in\n{notes}"


def test_a_time_limit_the_grader_enforced_is_reported_as_the_grader_s(graded: dict) -> None:
    """A cell stopped at the cell time limit, and a notebook stopped because its cell ignored
    the interrupt, are both said to be stopped by the grader (naming the cell's limit),
    never blamed on a signal of the student's."""
    root = graded["root"]
    autograded = root / "autograded" / "infinite_loop" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    errors = [
        output
        for cell in nbformat.read(autograded, as_version=4).cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert any(
        e.ename == "CellTimeoutError"
        and "the grader stopped the cell at its time limit" in e.evalue
        for e in errors
    ), [(e.ename, e.evalue) for e in errors]
    stopped = graded["summaries"]["unstoppable_loop"].notebooks[ASSIGNMENT]
    assert any(
        "past its 5-s limit and ignored the interrupt: the grader stopped it" in note
        for note in stopped.notes
    ), stopped
    report = (root / "reports" / "integrity.md").read_text()
    assert "sent a signal" not in report.split("## unstoppable_loop", 1)[1].split("\n## ", 1)[0]


def test_gradebook_and_submissions_are_intact(graded: dict) -> None:
    root = graded["root"]
    assert _hashes(root / "submitted") == graded["before"]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "alice").score == POINTS
        assert len(gradebook.students) == len(graded["summaries"])


def test_grades_csv_has_every_graded_cell(graded: dict) -> None:
    rows = list(csv.DictReader((graded["root"] / "reports" / "grades.csv").open()))
    alice = {r["cell"]: float(r["score"]) for r in rows if r["student"] == "alice"}
    assert {k: v for k, v in alice.items() if k.startswith("test_")} == {
        "test_one_hot": 2,
        "test_one_hot_2": 1,
        "test_frame_signal": 2,
        "test_frame_signal_2": 1,
        "test_context_window": 2,
        "test_context_window_2": 1,
        **{f"test_{q.name}": q.points for q in registry.load().notebook(ASSIGNMENT).questions},
    }
    students = {r["student"] for r in rows}
    # A student id a spreadsheet would run is written quoted (instructor.lms.csv_safety).
    assert students == {safe_cell(s) for s in graded["summaries"]}


def test_feedback_and_integrity_report(graded: dict) -> None:
    root = graded["root"]
    feedback = root / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert feedback.exists() and "test_one_hot" in feedback.read_text()
    report = (root / "reports" / "integrity.md").read_text()
    # alice handed in the reference solution itself: its near copies are her only notes.
    alice_notes = [
        line
        for line in report.split("## alice", 1)[1].split("\n## ", 1)[0].splitlines()[1:]
        if line.strip()
    ]
    assert alice_notes and all(
        "near copy of the reference solution" in line for line in alice_notes
    ), alice_notes
    assert "## patched_comparisons" in report and "torch.allclose was replaced" in report
    data = json.loads((root / "reports" / "integrity.json").read_text())
    assert len(data) == len(graded["summaries"])
    assert [HandInSummary.from_json(d) for d in data] == list(graded["summaries"].values())
    assert any("graded" in line for line in graded["log"])


def test_no_script_reaches_the_instructor(graded: dict) -> None:
    """``script_for_the_instructor``'s markdown and outputs: inert in its feedback HTML and
    in its autograded notebook as nbconvert renders it (formgrader's template extends the
    classic one), with its text and outputs still read."""
    from nbconvert import HTMLExporter

    from support.hostile import (
        EDITED_INSTRUCTIONS,
        READABLE_ANSWER,
        READABLE_OUTPUT,
        active_content,
        visible_text,
    )

    root, student = graded["root"], "script_for_the_instructor"
    autograded = nbformat.read(root / "autograded" / student / ASSIGNMENT / NOTEBOOK, 4)
    pages = {
        "feedback": (root / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(),
        "autograded": HTMLExporter(template_name="classic").from_notebook_node(autograded)[0],
    }
    for name, page in pages.items():
        assert active_content(page) == [], name
        text = visible_text(page)
        assert READABLE_ANSWER in text and f"{READABLE_OUTPUT}-HTML" in text, name
        assert f"ontoggle=alert(XSS)>{EDITED_INSTRUCTIONS}" in text, name  # shown as text


def test_no_formula_reaches_the_spreadsheet(graded: dict) -> None:
    """The student ``=1+1``: quoted in every CSV of the reports, the scores still numbers."""
    from instructor.lms.csv_safety import FORMULA_START
    from instructor.lms.export import EXPORTS
    from support.hostile import FORMULA_STUDENT

    number = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
    reports = graded["root"] / "reports"
    assert {p.name for p in reports.glob("*.csv")} >= {"grades.csv", "totals.csv", *EXPORTS}
    for path in sorted(reports.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            cells = [cell for row in csv.reader(handle) for cell in row]
        formulas = [
            c for c in cells if c.lstrip(" ").startswith(FORMULA_START) and not number.fullmatch(c)
        ]
        assert formulas == [], path.name
        assert FORMULA_STUDENT not in cells and "'" + FORMULA_STUDENT not in cells, path.name


def test_folders_named_by_no_student_id_are_refused(graded: dict) -> None:
    """Each folder of ``submitted/`` named by no student id (a glob such as ``*`` or
    ``[a]lice``, ``alice `` that nbgrader strips to alice, a formula, a tag, an option, a
    shell's substitution, a newline) holds the reference solution: none is graded, each is
    named in the log with how to map it, and alice and carol keep their autograded
    notebooks, feedback and scores."""
    root, log = graded["root"], graded["log"]
    for name in REFUSED_IDS:
        assert name not in graded["summaries"]
        message = next(line for line in log if line.startswith(f"student id {name!r} from"))
        assert "refused" in message and "lms_students.json" in message and "\n" not in message
        assert not (root / "autograded" / name).exists() and not (root / "feedback" / name).exists()
    for student in HONEST:
        assert (root / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file(), student
        assert (root / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()
    report = (root / "reports" / "integrity.md").read_text()
    assert "onerror" not in report and "$(touch" not in report


def test_a_second_run_grades_only_what_changed(graded: dict) -> None:
    grader, root = graded["grader"], graded["root"]
    log: list[str] = []
    grader.grade([ASSIGNMENT], log=log.append)
    assert log[0].startswith(f"0 submission(s) to grade, {len(graded['summaries'])} already")
    # An interrupted run leaves no state for what it had not finished: graded again.
    (root / ".grading" / "state" / ASSIGNMENT / "carol.json").unlink()
    log.clear()
    summaries = grader.grade([ASSIGNMENT], log=log.append)
    assert log[0].startswith("1 submission(s) to grade")
    assert {s.student: s.score for s in summaries}["alice"] == POINTS


@ON_THEIR_OWN
def test_what_grades_a_submission_is_part_of_the_resume_key(
    generated_course: ScratchCourse,
    tmp_path: Path,
    limits: Limits,
    shared_scheduler: Callable[[], str],
) -> None:
    """Two assignments (the same notebook under two names), two students each. A test
    cell's points changed in one assignment's source: exactly its submissions are graded
    again, and the gradebook's max score follows. ``students`` regrades only those; a
    student whose folder is removed leaves the reports."""
    course = generated_course.clone(tmp_path / "course")
    root, again = course.root, "01_again"
    shutil.copytree(root / "source" / ASSIGNMENT, root / "source" / again)
    shutil.copytree(root / "release" / ASSIGNMENT, root / "release" / again)
    for assignment in (ASSIGNMENT, again):
        for student, notebook in (("alice", course.solved(demos=False)), ("carol", None)):
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(notebook or course.released(), folder / NOTEBOOK)

    def grade(**options: object) -> tuple[list[str], dict[tuple[str, str], HandInSummary]]:
        log: list[str] = []
        grader = ClassGrader(
            root, scheduler=shared_scheduler(), limits=limits, progress=False, **options
        )
        summaries = grader.grade([ASSIGNMENT, again], log=log.append)
        return log, {(s.assignment, s.student): s for s in summaries}

    log, _ = grade(feedback=False)
    assert any(line.startswith("4 submission(s) to grade, 0") for line in log), log
    source = root / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(source, 4)
    test = next(
        c for c in anatomy.test_cells(notebook) if c.metadata.nbgrader.grade_id == "test_one_hot"
    )
    raised = POINTS + 5 - test.metadata.nbgrader.points
    test.metadata.nbgrader.points = 5
    nbformat.write(notebook, source)

    log, summaries = grade(feedback=False)
    assert any(line.startswith("2 submission(s) to grade, 2 already") for line in log), log
    assert (summaries[ASSIGNMENT, "alice"].score, summaries[ASSIGNMENT, "alice"].max_score) == (
        raised,
        raised,
    )
    assert summaries[again, "alice"].max_score == POINTS
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment(ASSIGNMENT).max_score == raised
        assert gradebook.find_assignment(again).max_score == POINTS

    log, summaries = grade(feedback=False, students=["alice", "nobody"])
    assert any(line.startswith("2 submission(s) to grade, 0") for line in log), log
    assert any("no submission from nobody" in line for line in log), log
    assert set(summaries) == {(a, s) for a in (ASSIGNMENT, again) for s in ("alice", "carol")}

    shutil.rmtree(root / "submitted" / "carol")
    log, summaries = grade(feedback=False)
    assert any(line.startswith("0 submission(s) to grade, 2 already") for line in log), log
    assert set(summaries) == {(ASSIGNMENT, "alice"), (again, "alice")}
    rows = list(csv.DictReader((root / "reports" / "grades.csv").open()))
    assert {r["student"] for r in rows} == {"alice"}


@ON_THEIR_OWN
def test_a_kernel_that_cannot_load_the_grader_scores_no_one(
    course: ScratchCourse, limits: Limits, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment check runs on a worker before anything is recorded; when it fails,
    the run stops with its message and the gradebook holds no grade."""
    from nbgrader.api import Gradebook

    from instructor.classroom.grader import pipeline as grade_module
    from instructor.classroom.worker.session import GraderEnvironmentError

    def broken_environment(limits: Limits) -> None:
        # A local function: Dask sends it to the worker by value, where it stands for a
        # kernel without the course (execute.check_kernel_environment's own test:
        # test_session.py).
        raise GraderEnvironmentError("the kernel cannot load the grader's code (simulated)")

    monkeypatch.setattr(grade_module, "check_kernel_environment", broken_environment)
    _submit(course, "alice", course.solved(demos=False), NOTEBOOK)
    grader = ClassGrader(course.root, workers=1, limits=limits, progress=False, feedback=False)
    with pytest.raises(GraderEnvironmentError, match="cannot load the grader's code"):
        grader.grade([ASSIGNMENT], log=lambda line: None)
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        assert not gradebook.assignment_submissions(ASSIGNMENT)
    assert not (course.root / "reports" / "grades.csv").exists()
