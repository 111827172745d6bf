"""The rules each exercise's text states are listed in the registry (issue 45).

Each graded function's text (its section's markdown before its solution cell, and its
docstrings: :func:`instructor.mutation.rules.exercise_texts`) is read with the rule
vocabulary (:data:`instructor.mutation.rules.RULES`); the rules it states must be those its
``rules`` table in ``course.toml`` lists, each with the mistake that breaks it. So a new
exercise cannot state a rule ("keep the dtype", "do not call X", "raise ValueError if ...")
without the registry listing it, and ``tests/instructor/test_mutation.py`` then checks that
a mutant making that mistake is named by its visible tests.
"""

from __future__ import annotations

import pytest

from instructor import registry
from instructor.mutation.rules import RULES, exercise_texts, stated

EXERCISES = [
    pytest.param(notebook.id, exercise, id=f"{notebook.id}-{exercise.name}")
    for notebook in registry.load().notebooks
    for exercise in notebook.exercises
]


def unlisted(text: str, listed: dict[str, str] | None) -> list[str]:
    """What is wrong between the rules ``text`` states and those ``listed`` (empty: none)."""
    if listed is None:
        return ["course.toml lists no rules (write rules = {} for none)"]
    found = stated(text)
    problems = [
        f"the text states the rule {name!r} ({RULES[name].what}: "
        f"{', '.join(map(repr, found[name]))}) that course.toml does not list"
        for name in found
        if name not in listed
    ]
    problems += [
        f"course.toml lists the rule {name!r}, which the text does not state"
        for name in listed
        if name not in found
    ]
    return problems


@pytest.mark.parametrize(("assignment", "exercise"), EXERCISES)
def test_the_registry_lists_every_rule_the_text_states(
    assignment: str, exercise: registry.Exercise
) -> None:
    problems = unlisted(exercise_texts(assignment)[exercise.name], exercise.rules)
    assert not problems, f"{assignment} · {exercise.name}: " + "; ".join(problems)


def test_a_new_exercise_that_states_an_unlisted_rule_fails() -> None:
    text = (
        "### Exercise 1 · `normalise` (2 points)\n\nDivide each row by its sum along that axis "
        "only. Keep the dtype, do not\nmodify `x`, and raise `ValueError` if a row sums to 0."
    )
    listed = {"dtype": "dtype", "unchanged": "input modified in place"}
    problems = unlisted(text, listed)
    assert len(problems) == 2, problems
    assert "'axis'" in problems[0] and "'along that axis'" in problems[0]
    assert "'raises'" in problems[1] and "raise `ValueError" in problems[1]
    assert not unlisted(text, {**listed, "axis": "axis", "raises": "documented error dropped"})
    assert unlisted("Return the scores.", {"stable": "max not subtracted"}) == [
        "course.toml lists the rule 'stable', which the text does not state"
    ]
    assert unlisted("Return the scores.", None)
