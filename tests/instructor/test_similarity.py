"""Near copies of the solutions and between students (instructor.similarity):
found renamed and reordered (``support.disguise``), in every notebook; honest answers not
flagged; the same scores in every process."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest

from instructor import anatomy
from instructor.grading_cases import load_cases, reference_solutions
from instructor.paths import COURSE_ROOT
from instructor.registry import load as load_registry
from instructor.similarity import (
    DEFAULT_THRESHOLD,
    REFERENCE_STUDENT,
    CopyPair,
    graded_answers,
    near_copies,
    similarity,
)
from support.disguise import disguised, moved_statements, renamed, reordered

ASSIGNMENT = "04_multi_head"
FUNCTION = "MultiHeadSelfAttention"
ASSIGNMENTS = load_registry().ids


def _functions(assignment: str) -> dict[str, str]:
    """grade_id -> reference solution of every graded function (questions left out)."""
    return {
        f: source
        for f, source in reference_solutions(assignment).items()
        if not f.startswith(("q_", "written_"))
    }


@pytest.fixture(scope="module")
def stubs() -> dict[str, str]:
    return graded_answers(anatomy.read_released(ASSIGNMENT))


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    return reference_solutions(ASSIGNMENT)


@pytest.fixture(scope="module")
def honest() -> dict[str, dict[str, str]]:
    """One student per right answer of the grading cases: each gets a different formulation
    of every function that has one."""
    by_function: dict[str, list[str]] = {}
    for case in load_cases(ASSIGNMENT):
        if case.kind == "right":
            by_function.setdefault(case.function, []).append(case.source)
    assert len(by_function[FUNCTION]) >= 3, "the test needs three honest answers"
    students: dict[str, dict[str, str]] = {}
    for function, sources in by_function.items():
        for i, source in enumerate(sources):
            students.setdefault(f"honest_{i}", {})[function] = source
    return students


def test_renamed_copies_of_the_solution_and_of_a_peer_are_found(
    honest: dict[str, dict[str, str]], reference: dict[str, str], stubs: dict[str, str]
) -> None:
    submissions = dict(honest)
    submissions["copier_of_solutions"] = {FUNCTION: disguised(reference[FUNCTION])}
    submissions["verbatim_of_solutions"] = {FUNCTION: reference[FUNCTION]}
    submissions["z_copier_of_peer"] = {FUNCTION: disguised(honest["honest_1"][FUNCTION])}

    pairs = near_copies(submissions, reference, DEFAULT_THRESHOLD, boilerplate=stubs)

    found = {(p.student_a, p.student_b, p.function) for p in pairs}
    assert found == {
        ("copier_of_solutions", REFERENCE_STUDENT, FUNCTION),
        ("verbatim_of_solutions", REFERENCE_STUDENT, FUNCTION),
        # The two copies of the solution are copies of each other too.
        ("copier_of_solutions", "verbatim_of_solutions", FUNCTION),
        ("honest_1", "z_copier_of_peer", FUNCTION),
    }
    assert all(isinstance(p, CopyPair) and p.similarity >= 0.99 for p in pairs)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_renamed_and_reordered_copies_of_every_solution_are_found(assignment: str) -> None:
    """Each reference solution, its names renamed, its error messages reworded, comments and
    blank lines added and its independent statements reversed, is the same answer (1.00);
    every one long enough to be compared is reported as a copy of the solutions."""
    reference = _functions(assignment)
    stubs = graded_answers(anatomy.read_released(assignment))
    copies = {f: disguised(source) for f, source in reference.items()}
    for function, copy in copies.items():
        compile(copy, function, "exec")  # still a program
        assert similarity(copy, reference[function], stubs.get(function)) == 1.0, function
    pairs = near_copies({"copier": copies}, reference, boilerplate=stubs, min_length=0)
    assert {p.function for p in pairs} == set(reference)
    assert all(p.similarity == 1.0 for p in pairs)


def test_the_copies_really_are_reordered() -> None:
    """The reordering moves statements in most solutions that have independent ones (22 of
    the 34 solutions have none: each statement uses the one before)."""
    moved = {
        f: moved_statements(renamed(source), reordered(renamed(source)))
        for assignment in ASSIGNMENTS
        for f, source in _functions(assignment).items()
    }
    assert sum(n > 0 for n in moved.values()) >= 15, moved
    assert moved["EncoderBlock"] >= 2 and moved["PositionwiseFeedForward"] >= 2


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_honest_pair_in_any_notebook_is_flagged(assignment: str) -> None:
    """The measurement behind DEFAULT_THRESHOLD: independent right answers (and the
    reference) never reach it, nor even 0.6."""
    submissions = {
        f"{case.function}: {case.name}": {case.function: case.source}
        for case in load_cases(assignment)
        if case.kind == "right"
    }
    stubs = graded_answers(anatomy.read_released(assignment))
    reference = reference_solutions(assignment)
    assert near_copies(submissions, reference, boilerplate=stubs) == []
    functions = _functions(assignment)
    by_function: dict[str, list[str]] = {}
    for answers in submissions.values():
        for function, source in answers.items():
            if function in functions:  # not the one-line answers to concept questions
                by_function.setdefault(function, [reference[function]]).append(source)
    for function, sources in by_function.items():
        for a, b in itertools.combinations(sources, 2):
            assert similarity(a, b, stubs.get(function)) < 0.6, function


def test_the_same_pair_scores_the_same_in_every_process() -> None:
    """Digests are BLAKE2 of the canonical statements, never Python's hash() (randomised
    per process: copydetect's winnowing by it scored one pair differently from run to run)."""
    a = reference_solutions(ASSIGNMENT)[FUNCTION]
    b = next(
        c.source for c in load_cases(ASSIGNMENT) if c.kind == "right" and c.function == FUNCTION
    )
    code = (
        "import sys; from instructor.similarity import similarity; "
        "a, b = sys.stdin.read().split('\\0'); print(repr(similarity(a, b)))"
    )
    scores = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", code],
            input=f"{a}\0{b}",
            capture_output=True,
            text=True,
            env=env,
            cwd=COURSE_ROOT,
            check=True,
        )
        scores.add(run.stdout.strip())
    assert len(scores) == 1 and 0 < float(scores.pop()) < DEFAULT_THRESHOLD


def test_unattempted_stubs_and_one_liners_are_not_reported(
    reference: dict[str, str], stubs: dict[str, str]
) -> None:
    submissions = {
        "ana": {FUNCTION: stubs[FUNCTION], "merge_heads": reference["merge_heads"]},
        "ben": {FUNCTION: stubs[FUNCTION], "merge_heads": reference["merge_heads"]},
    }
    assert near_copies(submissions, reference, boilerplate=stubs) == []
    # With no minimum length the identical short answers are reported.
    short = near_copies(submissions, reference, boilerplate=stubs, min_length=0)
    assert {(p.student_a, p.student_b) for p in short} == {
        ("ana", REFERENCE_STUDENT),
        ("ben", REFERENCE_STUDENT),
        ("ana", "ben"),
    }
    assert {p.function for p in short} == {"merge_heads"}


def test_similarity_ignores_names_comments_layout_and_order(reference: dict[str, str]) -> None:
    source = reference[FUNCTION]
    assert similarity(source, disguised(source)) == pytest.approx(1.0)
    assert similarity(source, reordered(source)) == pytest.approx(1.0)
    other = next(
        c.source for c in load_cases(ASSIGNMENT) if c.kind == "right" and c.function == FUNCTION
    )
    assert similarity(source, other) < DEFAULT_THRESHOLD


def test_bad_arguments_are_refused(reference: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="threshold"):
        near_copies({}, reference, 1.5)
    with pytest.raises(ValueError, match="solutions"):
        near_copies({REFERENCE_STUDENT: {}}, reference)


def test_a_syntax_error_is_compared_as_written() -> None:
    broken = "def f(x):\n    return [x for x in range(10) if x % 2 == 0 and x > 3 +]\n" * 3
    assert similarity(broken, broken) == pytest.approx(1.0)
