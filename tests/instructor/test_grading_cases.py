"""instructor.grading_cases: mutations of the reference, loading and packing the cases."""

from __future__ import annotations

import pytest

from instructor import registry
from instructor.grading_cases import (
    Case,
    Mutation,
    MutationError,
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
