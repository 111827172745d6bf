"""Near copies of the solutions and between students (instructor.classroom.similarity)."""

from __future__ import annotations

import ast

import pytest

from instructor import anatomy
from instructor.classroom.similarity import (
    DEFAULT_THRESHOLD,
    REFERENCE_STUDENT,
    CopyPair,
    graded_answers,
    near_copies,
    similarity,
)
from instructor.grading_cases import load_cases, reference_solutions

ASSIGNMENT = "04_multi_head"
FUNCTION = "MultiHeadSelfAttention"
ASSIGNMENTS = [
    "01_vector_sets",
    "02_soft_select",
    "03_matrix_form",
    "04_multi_head",
    "05_positional_encoding",
    "06_efficient_attention",
    "07_cnn_vs_attention",
    "08_rnn_vs_attention",
    "09_gnn",
]


def renamed(source: str) -> str:
    """A copy with every argument and assigned name renamed, relaid out and commented, as a
    student hiding a copy would hand it in."""
    tree = ast.parse(source)
    names = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names.discard("self")
    new = {name: f"my_{i}_{name[::-1]}" for i, name in enumerate(sorted(names))}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.arg = new.get(node.arg, node.arg)
        elif isinstance(node, ast.Name):
            node.id = new.get(node.id, node.id)
    lines = ast.unparse(tree).splitlines()
    return "\n\n".join(f"{line}  # mine" if line.strip() else line for line in lines)


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
    submissions["copier_of_solutions"] = {FUNCTION: renamed(reference[FUNCTION])}
    submissions["verbatim_of_solutions"] = {FUNCTION: reference[FUNCTION]}
    submissions["z_copier_of_peer"] = {FUNCTION: renamed(honest["honest_1"][FUNCTION])}

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


def test_no_honest_pair_in_any_notebook_is_flagged() -> None:
    """The measurement behind DEFAULT_THRESHOLD: independent right answers (and the
    reference) never reach it."""
    for assignment in ASSIGNMENTS:
        submissions = {
            f"{case.function}: {case.name}": {case.function: case.source}
            for case in load_cases(assignment)
            if case.kind == "right"
        }
        stubs = graded_answers(anatomy.read_released(assignment))
        pairs = near_copies(submissions, reference_solutions(assignment), boilerplate=stubs)
        assert pairs == [], assignment


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


def test_similarity_ignores_names_comments_and_layout(reference: dict[str, str]) -> None:
    source = reference[FUNCTION]
    assert similarity(source, renamed(source)) == pytest.approx(1.0)
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
