"""The grading, proven by real ``nbgrader autograde`` round trips.

Per assignment, temporary nbgrader courses are built from ``solutions/``:

- a *reference* course grades the complete reference solution, the untouched student
  version and one wrong answer, with the ``nbgrader autograde`` command an instructor
  types (``support.graded_class``'s ``reference_course``, whose feedback
  ``test_feedback_leaks.py`` also reads);
- *case* courses grade the answers of ``tests/grading_cases/<assignment>.py``. Each
  submission is the reference solution with a few solution cells replaced by cases of
  different, independent functions (``instructor.grading_cases.pack``), so one kernel start grades
  several cases; a case's grade is read from its own function's test cells. Every ungraded
  code cell but the imports cell is emptied, as a student is free to do (they are neither
  locked nor graded): test cells are self-contained, and the reference solution in that
  same form must score full marks. These courses are graded by the class grader
  (``ClassGrader``, test cells judged outside the student's kernel) with ``student_view``
  on: each test cell also runs inside the kernel, as in the student's notebook, and both
  views must agree cell for cell, messages included. The first case course of each
  assignment also grades the reference solution and the untouched student version.

``generate_assignment`` runs once per assignment and test run (the first test worker to need
it generates, the others read: ``support.graded_class.generated``); every course of that
assignment is a copy of the generated one (``ScratchCourse.clone``).

Scores are read from nbgrader's gradebook; nothing here re-implements scoring.

Written answers (``kind = "written"`` in ``course.toml``) are graded by hand: autograde
scores an answered one nothing yet and marks it ``needs_manual_grade``, and gives an
untouched one 0 itself. So "full marks" below means full marks on every autograded cell,
with the solution's written answers (filled in with the reference answer) waiting for a
grader; concept questions (``q_...``) are autograded like functions and have cases.
"""

from __future__ import annotations

import ast
import html
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from nbformat import NotebookNode

from instructor import anatomy, registry
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import HandInSummary, attention
from instructor.classroom.worker.session import STUDENT_VIEW
from instructor.feedback import HIDDEN_NOTE
from instructor.grading_cases import Case, Submission, load_cases, pack, reference_solutions
from instructor.scratch_course import ScratchCourse
from support.graded_class import (
    SESSION_SOLUTION,
    SOLUTION,
    STUB,
    TRIMMED_SOLUTION,
    as_a_session_leaves_it,
    generated,
    reference_course,
    reference_group,
)

SUBMISSIONS_PER_COURSE = 8
"""Submissions graded in one nbgrader run: few enough for the courses to balance across the
test workers, enough that starting nbgrader (about 2 s) stays a small share."""

ASSIGNMENTS = registry.load().ids


def written_answers(assignment: str) -> set[str]:
    """The grade_ids of the notebook's written answers (graded by hand)."""
    return {q.name for q in registry.load().notebook(assignment).written_answers}


def lost_points(assignment: str, scores: dict[str, tuple[float, float]]) -> dict:
    """The autograded cells that do not score full marks (written answers left out)."""
    written = written_answers(assignment)
    return {name: s for name, s in scores.items() if s[0] != s[1] and name not in written}


def course_batches(assignment: str) -> list[list[Submission]]:
    """The case submissions of an assignment, split into courses."""
    submissions = pack(load_cases(assignment), "answers_")
    count = max(1, math.ceil(len(submissions) / SUBMISSIONS_PER_COURSE))
    return [submissions[i::count] for i in range(count)]


BATCHES = [
    (assignment, batch, submissions)
    for assignment in ASSIGNMENTS
    for batch, submissions in enumerate(course_batches(assignment))
]


CLASS_SUMMARIES: dict[Path, dict[str, HandInSummary]] = {}
"""What the class grader recorded for each case course (its root), by student."""


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory, shared_scheduler):
    """``graded_course(assignment, batch=None)``: the reference course (``batch=None``,
    :func:`support.graded_class.reference_course`) or one batch of case submissions graded
    by the class grader; each course is built once per test worker."""
    courses: dict[tuple[str, int | None], ScratchCourse] = {}

    def get(assignment: str, batch: int | None = None) -> ScratchCourse:
        key = (assignment, batch)
        if key in courses:
            return courses[key]
        if batch is None:
            courses[key] = reference_course(tmp_path_factory, assignment)
            return courses[key]
        course = generated(tmp_path_factory, assignment).clone(
            tmp_path_factory.mktemp(f"{assignment}-cases{batch}")
        )
        for submission in course_batches(assignment)[batch]:
            course.submit(submission.student, course.solved(submission.replacements(), demos=False))
        if batch == 0:
            course.submit(TRIMMED_SOLUTION, course.solved(demos=False))
            course.submit(STUB, course.released())
            course.submit(SESSION_SOLUTION, as_a_session_leaves_it(course))
        # On this test process's cluster: 25 case courses, each too small to pay for a
        # cluster of its own (the embedded one is proven in tests/instructor/classroom/).
        summaries = ClassGrader(
            course.root,
            scheduler=shared_scheduler(),
            feedback=False,
            progress=False,
            student_view=True,
        ).grade([assignment], log=lambda line: None)
        CLASS_SUMMARIES[course.root] = {s.student: s for s in summaries}
        courses[key] = course
        return course

    return get


# The tests of one course share it: keep them on one xdist worker (--dist loadgroup).
by_assignment = pytest.mark.parametrize(
    "assignment",
    [pytest.param(a, marks=reference_group(a)) for a in ASSIGNMENTS],
)
# A case course's tests share it the same way: one group per course.
by_submission = pytest.mark.parametrize(
    ("assignment", "batch", "submission"),
    [
        pytest.param(a, b, sub, id=f"{a}-{sub.student}", marks=pytest.mark.xdist_group(f"{a}-{b}"))
        for a, b, submissions in BATCHES
        for sub in submissions
    ],
)


@by_assignment
def test_solution_scores_full_marks(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    scores = graded.scores(SOLUTION)
    lost = lost_points(assignment, scores)
    assert scores, "the notebook has no graded cells"
    assert not lost, f"the reference solution loses points in {lost}"
    written = written_answers(assignment)
    assert written <= set(scores), f"written answers {written - set(scores)} are not graded"
    assert graded.awaiting_grader(SOLUTION) == written, (
        f"the solution's written answers {sorted(written)} should wait for a grader "
        f"(needs_manual_grade), and nothing else; waiting: {graded.awaiting_grader(SOLUTION)}"
    )


@by_assignment
def test_untouched_student_version_scores_zero(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    scores = graded.scores(STUB)
    earned = {name: s for name, s in scores.items() if s[0] != 0}
    assert not earned, f"the unsolved notebook earns points in {earned}"
    # Untouched written answers get 0 from nbgrader itself: nothing is left to a grader.
    assert written_answers(assignment) <= set(scores)
    assert not graded.awaiting_grader(STUB), (
        f"an untouched notebook should leave nothing to a grader, not "
        f"{graded.awaiting_grader(STUB)}"
    )


def cells_of(
    function: str, scores: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The scores of the test cells that grade ``function``."""
    return {name: scores[name] for name in anatomy.tests_of(function, list(scores))}


def function_test_cells(notebook: NotebookNode, function: str) -> list[NotebookNode]:
    """The test cells of ``function`` (a graded function or question) in ``notebook``."""
    return [
        cell
        for cell in anatomy.test_cells(notebook)
        if anatomy.tests_of(function, [anatomy.grade_id(cell)])
    ]


@by_assignment
def test_correct_answer_writes_nothing_to_stderr(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    notebook = graded.autograded(SOLUTION)
    noisy = [
        cell.metadata["nbgrader"]["grade_id"]
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
        and any(output.get("name") == "stderr" for output in cell.get("outputs", []))
    ]
    assert not noisy, f"test cells {noisy} write to stderr, which nbgrader scores 0"


@by_assignment
def test_every_graded_function_has_enough_cases(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    entry = registry.load().notebook(assignment)
    functions = [exercise.name for exercise in entry.exercises]
    cases = load_cases(graded.assignment)
    for function in functions:
        wrong = [c for c in cases if c.function == function and c.kind == "wrong"]
        right = [c for c in cases if c.function == function and c.kind == "right"]
        assert len(wrong) >= 3, f"{function}: {len(wrong)} wrong cases, at least 3 needed"
        assert len(right) >= 1, f"{function}: no alternative correct case"
        assert any(c.hidden for c in wrong), (
            f"{function}: no wrong case marked hidden=True (one that passes the visible tests "
            "and only the hidden tests catch)"
        )
        assert cells_of(function, graded.scores(SOLUTION)), f"{function} has no test cell"
    # A concept question: a plausible wrong option (or value), an answer written
    # differently, and in each notebook at least one mistake of form with its message.
    questions = [question.name for question in entry.concept_questions]
    where = f"tests/grading_cases/{assignment}.py"
    for question in questions:
        wrong = [c for c in cases if c.function == question and c.kind == "wrong"]
        right = [c for c in cases if c.function == question and c.kind == "right"]
        assert wrong, f"{where}: {question} has no wrong answer (a mistake students make)"
        assert right, f"{where}: {question} has no right answer written differently"
        assert cells_of(question, graded.scores(SOLUTION)), f"{question} has no test cell"
    form = [c for c in cases if c.function in questions and c.kind == "wrong" and c.message]
    assert form or not questions, (
        f"{where}: no concept question has a wrong answer of the wrong form (a number for a "
        'letter, text for a number) with message="should be a ..." asserted'
    )


@pytest.mark.parametrize(
    "assignment",
    [pytest.param(a, marks=pytest.mark.xdist_group(f"{a}-0")) for a in ASSIGNMENTS],
)
def test_solution_without_demo_cells_scores_full_marks(assignment: str, graded_course) -> None:
    """The form in which the cases are graded loses no points by itself (graded, as the
    cases are, by the class grader: the first case course holds it)."""
    scores = graded_course(assignment, 0).scores(TRIMMED_SOLUTION)
    lost = lost_points(assignment, scores)
    assert not lost, f"without its demo cells the reference solution loses {lost}"


@pytest.mark.parametrize(
    "assignment",
    [pytest.param(a, marks=pytest.mark.xdist_group(f"{a}-0")) for a in ASSIGNMENTS],
)
def test_class_grader_gives_full_marks_to_the_solution_and_zero_to_the_stub(
    assignment: str, graded_course
) -> None:
    """The same notebooks as the reference course, judged outside the kernel."""
    course = graded_course(assignment, 0)
    solution, stub = course.scores(TRIMMED_SOLUTION), course.scores(STUB)
    assert solution and not lost_points(assignment, solution)
    assert not {n: s for n, s in stub.items() if s[0] != 0}
    assert course.awaiting_grader(TRIMMED_SOLUTION) == written_answers(assignment)
    assert not course.awaiting_grader(STUB)
    # An integrity note is about a hand-in: the reference solution has none (issue 25), nor
    # has it with every demo cell run and saved, whose first figure and training steps the
    # course's own code makes (issue 44).
    for form in (TRIMMED_SOLUTION, SESSION_SOLUTION):
        notes = attention(CLASS_SUMMARIES[course.root][form])
        assert not notes, f"the reference solution ({form}) gets integrity notes: {notes}"
    assert not lost_points(assignment, course.scores(SESSION_SOLUTION))


def _failure(outputs: list) -> str:
    """The error a test cell's outputs show ("" when it passed)."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    return f"{errors[0].get('ename')}: {errors[0].get('evalue', '')}" if errors else ""


@by_submission
def test_the_student_and_the_grader_see_the_same_verdicts(
    assignment: str, batch: int, submission: Submission, graded_course
) -> None:
    """One set of tests, two views: each test cell run inside the student's kernel and
    judged by the grader outside it passes or fails alike, with the same message."""
    notebook = graded_course(assignment, batch).autograded(submission.student)
    differ = {}
    for cell in anatomy.test_cells(notebook):
        student, grader = _failure(cell.metadata[STUDENT_VIEW]), _failure(cell.outputs)
        if student != grader:
            differ[anatomy.grade_id(cell)] = {"student": student[:300], "grader": grader[:300]}
    assert not differ, f"the two views disagree: {differ}"


def case_params(keep: Callable[[Case], bool]) -> list:
    """One pytest parameter per grading case that ``keep`` accepts, grouped by its batch
    (the graded course it is read from)."""
    return [
        pytest.param(
            a,
            b,
            sub.student,
            case,
            id=f"{a}-{case.student}",
            marks=pytest.mark.xdist_group(f"{a}-{b}"),
        )
        for a, b, submissions in BATCHES
        for sub in submissions
        for case in sub.cases
        if keep(case)
    ]


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), case_params(lambda case: True))
def test_case_is_graded_as_expected(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    own = cells_of(case.function, graded_course(assignment, batch).scores(student))
    earned, possible = sum(s[0] for s in own.values()), sum(s[1] for s in own.values())
    assert own, f"{case.function} has no test cell"
    if case.kind == "right":
        assert earned == possible, (
            f"a correct answer ({case.name}) scores {earned} of {possible} on {own}"
        )
    else:
        assert earned < possible, (
            f"a wrong answer ({case.name}) still earns full marks on {sorted(own)}: "
            "the tests do not catch this mistake"
        )


MESSAGE_CASES = case_params(lambda case: bool(case.message))


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), MESSAGE_CASES)
def test_wrong_answer_gets_its_message(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    """The diagnostic written for a mistake is what a student who makes it reads: the first
    of the function's test cells that fails shows that message (in the grader's view; the
    student's view shows the same, as the test above checks)."""
    notebook = graded_course(assignment, batch).autograded(student)
    cells = function_test_cells(notebook, case.function)
    failing = next(
        (c for c in cells if any(o.get("output_type") == "error" for o in c.get("outputs", []))),
        cells[0],
    )
    shown = "\n".join(
        output.get("evalue", "") + output.get("text", "") for output in failing.get("outputs", [])
    )
    assert case.message in shown, (
        f"{case.name}: the student should read {case.message!r}, but the first failing test "
        f"cell of {case.function} ({anatomy.grade_id(failing)}) shows:\n{shown[-1500:]}"
    )


def _literal_prefix(node: ast.expr, names: dict[str, ast.expr]) -> str:
    """The literal text of ``node``: a string, a name bound to one in the same cell, or an
    f-string up to its first placeholder."""
    if isinstance(node, ast.Name) and node.id in names:
        return _literal_prefix(names[node.id], names)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        prefix = ""
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            prefix += part.value
        return prefix
    return ""


def hidden_reasons(assignment: str) -> dict[str, list[str]]:
    """question's test cell -> the literal part of each ``why=`` it passes to the checks
    (in its hidden part: the reason a wrong answer's feedback gives for the right one)."""
    reasons: dict[str, list[str]] = {}
    for cell in anatomy.test_cells(anatomy.read_solution(assignment)):
        tree = ast.parse(cell.source)
        names = {
            target.id: node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "why":
                text = _literal_prefix(node.value, names)
                if len(text) >= 20:
                    reasons.setdefault(anatomy.grade_id(cell), []).append(text)
    return reasons


REASON_CASES = case_params(
    lambda case: case.kind == "wrong" and case.function.startswith("q_") and not case.message
)


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), REASON_CASES)
def test_a_wrong_concept_answer_is_told_the_reason(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    """A valid but wrong answer to a concept question scores 0 and its feedback explains
    the right answer: the autograded cell shows the hidden check's ``why=`` text."""
    notebook = graded_course(assignment, batch).autograded(student)
    reasons = hidden_reasons(assignment)
    cells = function_test_cells(notebook, case.function)
    shown = "\n".join(
        output.get("evalue", "") + output.get("text", "")
        for cell in cells
        for output in cell.get("outputs", [])
    )
    expected = [why for cell in cells for why in reasons.get(anatomy.grade_id(cell), [])]
    assert expected, f"{case.function}: its test cell passes no why= to its checks"
    assert any(" ".join(why.split())[:60] in " ".join(shown.split()) for why in expected), (
        f"{case.name}: the feedback should give the reason {expected[0][:80]!r}..., but "
        f"shows:\n{shown[-1500:]}"
    )


HIDDEN_CASES = case_params(lambda case: case.hidden)


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), HIDDEN_CASES)
def test_a_hidden_case_passes_the_visible_tests_only(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    """A wrong answer marked ``hidden`` passes every visible test of its function (each of
    its test cells printed the line that ends its visible part, in the student's view and in
    the grader's) and still loses points: the hidden tests check what the visible ones leave
    out."""
    course = graded_course(assignment, batch)
    notebook = course.autograded(student)
    cells = function_test_cells(notebook, case.function)
    assert cells, f"{case.function} has no test cell"
    for cell in cells:
        passed = anatomy.visible_pass_message(cell.source)
        for view, outputs in (("grader", cell.outputs), ("student", cell.metadata[STUDENT_VIEW])):
            printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
            assert passed in printed, (
                f"{case.name}: the visible tests of {anatomy.grade_id(cell)} already fail "
                f"(the {view}'s view): {_failure(outputs)[:300]}; it is not a hidden case"
            )
    own = cells_of(case.function, course.scores(student))
    assert sum(s[0] for s in own.values()) < sum(s[1] for s in own.values()), (
        f"{case.name} passes the hidden tests of {case.function} too: {own}"
    )


WRONG_CASES = case_params(lambda case: case.kind == "wrong")


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), WRONG_CASES)
def test_a_wrong_answer_gets_a_message_not_a_raw_exception(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    """The first failing test cell of a plausible wrong answer fails with a message of the
    checks (an AssertionError), never with an exception raised deep inside the answer."""
    notebook = graded_course(assignment, batch).autograded(student)
    errors = [
        output
        for cell in function_test_cells(notebook, case.function)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors, f"{case.name}: no test cell of {case.function} failed"
    first = errors[0]
    assert first.get("ename") == "AssertionError", (
        f"{case.name}: the student reads a raw {first.get('ename')}: "
        f"{first.get('evalue', '')[:300]!r}; wrap the call in the test and name the mistake"
    )


@by_submission
def test_wrong_answers_cost_points_only_on_their_own_tests(
    assignment: str, batch: int, submission: Submission, graded_course
) -> None:
    scores = graded_course(assignment, batch).scores(submission.student)
    wrong = {case.function for case in submission.cases if case.kind == "wrong"}
    # A reference solution that calls a graded function (soft_select using softmax) may
    # lose points with it; every other test cell must be unaffected.
    callers = {
        name
        for name, source in reference_solutions(assignment).items()
        if any(re.search(rf"\b{function}\s*\(", source) for function in wrong)
    }
    lost = {
        name: s
        for name, s in lost_points(assignment, scores).items()
        if not any(cells_of(f, {name: s}) for f in wrong | callers)
    }
    assert not lost, (
        f"the wrong answers to {sorted(wrong)} also cost points in {lost}: "
        "test cells must depend only on their own function"
    )


@by_assignment
def test_instructor_gets_feedback_and_a_grades_table(assignment: str, graded_course) -> None:
    """The README's last two instructor steps: per-student feedback and the grades CSV."""
    import csv

    course = graded_course(assignment)
    course.nbgrader("generate_feedback", assignment, "--force")
    feedback = course.root / "feedback" / SOLUTION / assignment / f"{assignment}.html"
    assert feedback.is_file() and "test_" in feedback.read_text(encoding="utf-8")
    # nbgrader's own command reads the course's configuration, which redacts hidden tests.
    shown = html.unescape(re.sub(r"<[^>]+>", "", feedback.read_text(encoding="utf-8")))
    assert HIDDEN_NOTE in shown and "BEGIN HIDDEN TESTS" not in shown
    course.nbgrader("export", "--to", str(course.root / "grades.csv"))
    with open(course.root / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student_id"]: row for row in csv.DictReader(table)}
    # Full marks but the written answers, which wait for a grader.
    by_hand = sum(q.points for q in registry.load().notebook(assignment).written_answers)
    assert float(rows[SOLUTION]["max_score"]) == registry.load().notebook(assignment).points
    assert float(rows[SOLUTION]["score"]) == float(rows[SOLUTION]["max_score"]) - by_hand > 0
    assert float(rows[STUB]["score"]) == 0
