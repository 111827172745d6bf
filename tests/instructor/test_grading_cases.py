"""instructor.grading_cases: mutations of the reference, loading and packing the cases."""

from __future__ import annotations

import pytest

from instructor import grading_cases, registry
from instructor.grading_cases import (
    Case,
    Mutation,
    MutationError,
    check_question_answer,
    load_cases,
    pack,
    reference_solutions,
)

REFERENCE = "def f(x):\n    return x.sum(dim=-1)\n"


def test_a_mutation_makes_a_wrong_case() -> None:
    case = Mutation("f", "sums over dim 0", {"dim=-1": "dim=0"}).apply(REFERENCE)
    assert case == Case("f", "wrong", "sums over dim 0", "def f(x):\n    return x.sum(dim=0)\n")
    assert case.student == "wrong__f__sums_over_dim_0"


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"dim=1": "dim=0"}, "0 times, not once"),
        ({"x": "y"}, "2 times, not once"),
        ({"return": "return ("}, "not valid Python"),
    ],
)
def test_a_mutation_that_no_longer_applies_fails_loudly(edits, message) -> None:
    with pytest.raises(MutationError, match=message):
        Mutation("f", "broken", edits).apply(REFERENCE)


@pytest.mark.parametrize("notebook_id", registry.load().ids)
def test_every_notebooks_cases_load(notebook_id: str) -> None:
    """Every mutation applies to today's reference, and names a graded function."""
    cases = load_cases(notebook_id)
    references = reference_solutions(notebook_id)
    assert cases and {c.function for c in cases} <= set(references)
    for case in cases:
        assert case.source != references[case.function], f"{case.name} is the reference"


def test_pack_keeps_dependent_answers_apart() -> None:
    softmax = Case("softmax", "wrong", "a", "def softmax(x):\n    return x\n")
    select = Case("soft_select", "wrong", "b", "def soft_select(x):\n    return softmax(x)\n")
    other = Case("dot_scores", "wrong", "c", "def dot_scores(x):\n    return x\n")
    second = Case("softmax", "right", "d", "def softmax(x):\n    return x\n")
    submissions = pack([softmax, select, other, second], "s")
    for submission in submissions:
        functions = [c.function for c in submission.cases]
        assert len(functions) == len(set(functions))
        assert not {"softmax", "soft_select"} <= set(functions)
    assert sum(len(s.cases) for s in submissions) == 4


def test_a_mutation_carries_its_promised_message() -> None:
    mutation = Mutation("f", "dim 0", {"dim=-1": "dim=0"}, message="over the wrong axis")
    assert mutation.apply(REFERENCE).message == "over the wrong axis"


def test_a_mutation_carries_its_hidden_mark() -> None:
    mutation = Mutation("f", "only 2-D", {"dim=-1": "dim=1"}, hidden=True)
    assert mutation.apply(REFERENCE).hidden
    assert not Mutation("f", "dim 0", {"dim=-1": "dim=0"}).apply(REFERENCE).hidden


def test_a_question_case_is_an_assignment() -> None:
    check_question_answer(Case("q_saw_rows", "wrong", "a", 'q_saw_rows = "a"\n'))
    check_question_answer(Case("q_count", "right", "sum", "q_count = 6000**2\n"))
    for source in ('q_other = "a"\n', 'def q_saw_rows():\n    return "a"\nq_saw_rows = 1\n'):
        with pytest.raises(MutationError, match="must assign it, as its cell does"):
            check_question_answer(Case("q_saw_rows", "wrong", "bad", source))
    with pytest.raises(MutationError, match="not valid Python"):
        check_question_answer(Case("q_saw_rows", "wrong", "bad", "q_saw_rows = = 1\n"))


def test_question_cases_pack_with_function_cases() -> None:
    function = Case("f", "wrong", "a", "def f(x):\n    return x\n")
    first = Case("q_a", "wrong", "b", 'q_a = "a"\n')
    second = Case("q_b", "wrong", "c", 'q_b = "c"\n')
    again = Case("q_a", "right", "d", 'q_a = "B"\n')
    submissions = pack([function, first, second, again], "s")
    assert [[c.name for c in s.cases] for s in submissions] == [["a", "b", "c"], ["d"]]


QUESTION_CASES = """
from instructor.grading_cases import Case, Mutation

CASES = [
    Mutation("q_a", "(b)", {'"a"': '"b"'}),
    EXTRA
]
"""


def solution_with_questions():
    """A solution notebook with a function ``f``, a question ``q_a`` and a written answer."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    def grader(**meta):
        return {"nbgrader": {"schema_version": 3, "locked": False, **meta}}

    return new_notebook(
        cells=[
            new_code_cell("def f(x):\n    return x", metadata=grader(grade_id="f", solution=True)),
            new_code_cell(
                '### BEGIN SOLUTION\nq_a = "a"\n### END SOLUTION',
                metadata=grader(grade_id="q_a", solution=True, grade=False),
            ),
            new_markdown_cell(
                "**Reference answer.** ...",
                metadata=grader(grade_id="written_w", solution=True, grade=True, points=2),
            ),
        ]
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("Case('written_w', 'wrong', 'x', 'text')", "written answer, graded by hand"),
        ("Case('q_nowhere', 'wrong', 'x', 'q_nowhere = 1')", "no graded function or question"),
        ("Case('q_a', 'wrong', 'x', 'q_other = 1')", "must assign it"),
        ("Case('f', 'right', 'x', 'def f(x):\\n    return x', hidden=True)", "not a right one"),
    ],
)
def test_question_cases_are_checked_when_loaded(tmp_path, monkeypatch, extra, message) -> None:
    monkeypatch.setattr(grading_cases, "CASES_DIR", tmp_path)
    monkeypatch.setattr(grading_cases.anatomy, "read_solution", lambda _: solution_with_questions())
    path = tmp_path / "99_example.py"
    path.write_text(QUESTION_CASES.replace("EXTRA", ""), encoding="utf-8")
    (case,) = load_cases("99_example")
    assert case == Case("q_a", "wrong", "(b)", 'q_a = "b"')
    path.write_text(QUESTION_CASES.replace("EXTRA", extra), encoding="utf-8")
    with pytest.raises(MutationError, match=message):
        load_cases("99_example")
