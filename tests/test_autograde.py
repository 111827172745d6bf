"""The grading, proven by a real ``nbgrader autograde`` round trip per notebook.

For each assignment one temporary course is built; the reference solution, the untouched
student version and every case of ``tests/grading_cases/<assignment>.py`` are submitted as
separate students, graded in one ``nbgrader autograde`` run, and their scores read from
the gradebook.
"""

from __future__ import annotations

import re

import pytest
from autograding import Case, Course, assignments, cells_of, load_cases

SOLUTION = "reference_solution"
STUB = "untouched_student_version"

ASSIGNMENTS = assignments()
CASES = [(a, case) for a in ASSIGNMENTS for case in load_cases(a)]


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory):
    """``graded_course(assignment)``: a course in which the reference solution, the untouched
    student version and every case of that assignment have been autograded (built once)."""
    courses: dict[str, Course] = {}

    def get(assignment: str) -> Course:
        if assignment not in courses:
            course = Course(tmp_path_factory.mktemp(assignment), assignment)
            course.generate()
            course.submit(SOLUTION, course.solved())
            course.submit(STUB, course.released())
            for case in load_cases(assignment):
                course.submit(case.student, course.solved({case.function: case.source}))
            course.autograde()
            courses[assignment] = course
        return courses[assignment]

    return get


# All tests of one assignment share its graded course: keep them on one xdist worker.
by_assignment = pytest.mark.parametrize(
    "assignment", [pytest.param(a, marks=pytest.mark.xdist_group(a)) for a in ASSIGNMENTS]
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
    functions = [
        cell.metadata["nbgrader"]["grade_id"]
        for cell in graded.source().cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    ]
    cases = load_cases(graded.assignment)
    for function in functions:
        wrong = [c for c in cases if c.function == function and c.kind == "wrong"]
        right = [c for c in cases if c.function == function and c.kind == "right"]
        assert len(wrong) >= 3, f"{function}: {len(wrong)} wrong cases, at least 3 needed"
        assert len(right) >= 1, f"{function}: no alternative correct case"
        assert cells_of(function, graded.scores(SOLUTION)), f"{function} has no test cell"


@pytest.mark.parametrize(
    ("assignment", "case"),
    [pytest.param(a, c, id=f"{a}-{c.student}", marks=pytest.mark.xdist_group(a)) for a, c in CASES],
)
def test_case_is_graded_as_expected(assignment: str, case: Case, graded_course) -> None:
    course = graded_course(assignment)
    scores = course.scores(case.student)
    own = cells_of(case.function, scores)
    others = {name: s for name, s in scores.items() if name not in own}
    if case.kind == "right":
        lost = {name: s for name, s in scores.items() if s[0] != s[1]}
        assert not lost, f"a correct answer ({case.name}) loses points in {lost}"
    else:
        earned, possible = sum(s[0] for s in own.values()), sum(s[1] for s in own.values())
        assert earned < possible, (
            f"a wrong answer ({case.name}) still earns full marks on {sorted(own)}: "
            "the tests do not catch this mistake"
        )
        # A solution that calls another graded function (soft_select using softmax) may
        # lose points with it; every other test cell must be unaffected.
        callers = {
            name
            for name, source in course.solutions().items()
            if name != case.function and re.search(rf"\b{case.function}\s*\(", source)
        }
        lost_elsewhere = {
            name: s
            for name, s in others.items()
            if s[0] != s[1] and not any(cells_of(caller, {name: s}) for caller in callers)
        }
        assert not lost_elsewhere, (
            f"a wrong {case.function} also costs points in {lost_elsewhere}: "
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
