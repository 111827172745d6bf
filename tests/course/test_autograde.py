"""The grading, proven by real ``nbgrader autograde`` round trips.

Per assignment, temporary nbgrader courses are built from ``solutions/``:

- a *reference* course grades the complete reference solution, the untouched student
  version and the reference solution without its demo cells, with the ``nbgrader
  autograde`` command an instructor types;
- *case* courses grade the answers of ``tests/grading_cases/<assignment>.py``. Each
  submission is the reference solution with a few solution cells replaced by cases of
  different, independent functions (``instructor.grading_cases.pack``), so one kernel start grades
  several cases; a case's grade is read from its own function's test cells. Every ungraded
  code cell but the imports cell is emptied, as a student is free to do (they are neither
  locked nor graded): test cells are self-contained, and the reference solution in that
  same form must score full marks. These courses are graded through nbgrader's Python API
  (``NbGraderAPI.autograde``: the same converter as the command, without starting a new
  Python per course).

``generate_assignment`` runs once per assignment and test worker; every course of that
assignment is a copy of the generated one (``Course.clone``).

Scores are read from nbgrader's gradebook; nothing here re-implements scoring.
"""

from __future__ import annotations

import math
import re

import pytest

from instructor import anatomy, registry
from instructor.grading_cases import Case, Submission, load_cases, pack, reference_solutions
from instructor.scratch_course import ScratchCourse

SOLUTION = "reference_solution"
STUB = "untouched_student_version"
TRIMMED_SOLUTION = "reference_solution_without_demos"
SUBMISSIONS_PER_COURSE = 8
"""Submissions graded in one nbgrader run: few enough for the courses to balance across the
test workers, enough that starting nbgrader (about 2 s) stays a small share."""

ASSIGNMENTS = registry.load().ids


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


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory):
    """``graded_course(assignment, batch=None)``: a course in which the reference solution,
    the untouched student version and the reference solution without demos (``batch=None``)
    or one batch of case submissions have been autograded; each course is built once per
    test worker."""
    generated: dict[str, ScratchCourse] = {}
    courses: dict[tuple[str, int | None], ScratchCourse] = {}

    def get(assignment: str, batch: int | None = None) -> ScratchCourse:
        key = (assignment, batch)
        if key in courses:
            return courses[key]
        if assignment not in generated:
            generated[assignment] = ScratchCourse(tmp_path_factory.mktemp(assignment), assignment)
            generated[assignment].generate()
        name = f"{assignment}-{'reference' if batch is None else f'cases{batch}'}"
        course = generated[assignment].clone(tmp_path_factory.mktemp(name))
        if batch is None:
            course.submit(SOLUTION, course.solved())
            course.submit(STUB, course.released())
            course.submit(TRIMMED_SOLUTION, course.solved(demos=False))
            course.autograde(command_line=True)  # the instructor's command, as in the README
        else:
            for submission in course_batches(assignment)[batch]:
                course.submit(
                    submission.student, course.solved(submission.replacements(), demos=False)
                )
            course.autograde()  # nbgrader's API: the same converter, one Python for all
        courses[key] = course
        return course

    return get


# The tests of one course share it: keep them on one xdist worker (--dist loadgroup).
by_assignment = pytest.mark.parametrize(
    "assignment",
    [pytest.param(a, marks=pytest.mark.xdist_group(f"{a}-reference")) for a in ASSIGNMENTS],
)


@by_assignment
def test_solution_scores_full_marks(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    scores = graded.scores(SOLUTION)
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert scores, "the notebook has no graded cells"
    assert not lost, f"the reference solution loses points in {lost}"


@by_assignment
def test_untouched_student_version_scores_zero(assignment: str, graded_course) -> None:
    graded = graded_course(assignment)
    scores = graded.scores(STUB)
    earned = {name: s for name, s in scores.items() if s[0] != 0}
    assert not earned, f"the unsolved notebook earns points in {earned}"


def cells_of(
    function: str, scores: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The scores of the test cells that grade ``function``."""
    return {name: scores[name] for name in anatomy.tests_of(function, list(scores))}


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
    functions = [exercise.name for exercise in registry.load().notebook(assignment).exercises]
    cases = load_cases(graded.assignment)
    for function in functions:
        wrong = [c for c in cases if c.function == function and c.kind == "wrong"]
        right = [c for c in cases if c.function == function and c.kind == "right"]
        assert len(wrong) >= 3, f"{function}: {len(wrong)} wrong cases, at least 3 needed"
        assert len(right) >= 1, f"{function}: no alternative correct case"
        assert cells_of(function, graded.scores(SOLUTION)), f"{function} has no test cell"


@by_assignment
def test_solution_without_demo_cells_scores_full_marks(assignment: str, graded_course) -> None:
    """The form in which the cases are graded loses no points by itself."""
    scores = graded_course(assignment).scores(TRIMMED_SOLUTION)
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert not lost, f"without its demo cells the reference solution loses {lost}"


@pytest.mark.parametrize(
    ("assignment", "batch", "student", "case"),
    [
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
    ],
)
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


MESSAGE_CASES = [
    pytest.param(
        a, b, sub.student, case, id=f"{a}-{case.student}", marks=pytest.mark.xdist_group(f"{a}-{b}")
    )
    for a, b, submissions in BATCHES
    for sub in submissions
    for case in sub.cases
    if case.message
]


@pytest.mark.parametrize(("assignment", "batch", "student", "case"), MESSAGE_CASES)
def test_wrong_answer_gets_its_message(
    assignment: str, batch: int, student: str, case: Case, graded_course
) -> None:
    """The diagnostic written for a mistake is what a student who makes it reads: the
    visible part of the function's first test cell fails with that message."""
    notebook = graded_course(assignment, batch).autograded(student)
    first = next(
        cell
        for cell in anatomy.test_cells(notebook)
        if anatomy.tests_of(case.function, [anatomy.grade_id(cell)])
    )
    shown = "\n".join(
        output.get("evalue", "") + output.get("text", "") for output in first.get("outputs", [])
    )
    assert case.message in shown, (
        f"{case.name}: the student should read {case.message!r}, but the first test cell of "
        f"{case.function} shows:\n{shown[-1500:]}"
    )


@pytest.mark.parametrize(
    ("assignment", "batch", "submission"),
    [
        pytest.param(a, b, sub, id=f"{a}-{sub.student}", marks=pytest.mark.xdist_group(f"{a}-{b}"))
        for a, b, submissions in BATCHES
        for sub in submissions
    ],
)
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
        for name, s in scores.items()
        if s[0] != s[1] and not any(cells_of(f, {name: s}) for f in wrong | callers)
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
    course.nbgrader("export", "--to", str(course.root / "grades.csv"))
    with open(course.root / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student_id"]: row for row in csv.DictReader(table)}
    assert float(rows[SOLUTION]["score"]) == float(rows[SOLUTION]["max_score"]) > 0
    assert float(rows[STUB]["score"]) == 0
