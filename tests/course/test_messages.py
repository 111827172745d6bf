"""Every known-mistake message that a visible test can show is proven by a grading case.

A visible test names a mistake in three ways: a key of a ``known_mistakes={...}`` argument
(``helpers.checks.check_close`` and friends print it when the answer equals that mistake;
also the third argument of ``check_no_known_mistake``, and a dict bound to a name first),
the ``hint=`` of a check that measures the answer (``check_largest_tensor``,
``check_no_loop_over_positions``: how to avoid the big tensor or the loop), or the message
of a ``raise AssertionError(...)`` the test cell raises itself. For each
one, some wrong case of the same function in ``tests/grading_cases/<id>.py`` must carry a
``message`` that shares at least ``MIN_PHRASE`` characters in a row with its text (its
literal part: a phrase may run on into a placeholder's value);
``test_wrong_answer_gets_its_message`` in
``test_autograde.py`` then proves that a student who makes that mistake reads it.

The messages are read by ``instructor.mistake_tags.messages_in``, which also gives each its
tag: the class grader records the tags of the messages a student saw, for the item analysis.
The messages without such a case yet are listed in ``UNPROVEN`` (the list may only shrink:
a message that gains a case must leave it, and a new message must come with its case).
"""

from __future__ import annotations

import pytest

from instructor import anatomy, registry
from instructor.grading_cases import load_cases
from instructor.mistake_tags import KnownMessage, UnreadableMistakes, messages_in

ASSIGNMENTS = registry.load().ids
MIN_PHRASE = 20
"""Characters in a row that a case's ``message`` and a known message must share (a
distinctive phrase, not a word that many messages share), or the whole message where it is
shorter, down to ``SHORTEST``."""
SHORTEST = 12


def known_messages(assignment: str) -> list[KnownMessage]:
    """The known-mistake messages of the visible tests of ``solutions/<assignment>``."""
    found = []
    for cell in anatomy.test_cells(anatomy.read_solution(assignment)):
        test = anatomy.grade_id(cell)
        try:
            found += messages_in(
                cell.source, test, anatomy.function_of_test(test) or "", visible_only=True
            )
        except UnreadableMistakes as error:
            raise AssertionError(f"{assignment} {test}: {error}") from None
    return found


def _shares(phrase: str, chunk: str) -> bool:
    """Whether ``phrase`` and ``chunk`` have ``MIN_PHRASE`` characters in a row in common (a
    phrase may run on into a placeholder's text: "It looks like one frame too few")."""
    run = min(MIN_PHRASE, len(chunk.strip()))  # a short message whole ("the tanh is missing")
    return run >= SHORTEST and any(
        phrase[i : i + run] in chunk for i in range(len(phrase) - run + 1)
    )


def unproven(assignment: str) -> list[str]:
    """The texts of the known messages of ``assignment`` that no case proves."""
    phrases: dict[str, list[str]] = {}
    for case in load_cases(assignment):
        if case.kind == "wrong" and case.message and len(case.message) >= SHORTEST:
            phrases.setdefault(case.function, []).append(case.message)
    return sorted(
        {
            message.text
            for message in known_messages(assignment)
            if not any(
                _shares(phrase, chunk)
                for phrase in phrases.get(message.function, [])
                for chunk in message.chunks
            )
        }
    )


UNPROVEN: dict[str, set[str]] = {}
"""Per notebook, the known-mistake messages that no grading case proves yet."""


def test_messages_are_found_in_test_cells() -> None:
    assert any(m.text.startswith("the upper triangle") for m in known_messages("03_matrix_form")), (
        "the known_mistakes keys of 03's test_causal_mask were not found"
    )


def test_hints_are_found_in_test_cells() -> None:
    assert any(
        m.text.startswith("Compute phi(K)^T V") for m in known_messages("06_efficient_attention")
    ), "the hint= of 06's check_largest_tensor for linear_attention was not found"


@pytest.mark.parametrize(
    ("assignment", "start"),
    [
        ("08_rnn_vs_attention", "the feature map is relu(x)"),  # mistakes_t, and comprehensions
        ("09_gnn", "the mask is transposed"),  # known_t
        ("10_transformer_block", "a pre-norm block"),  # mistakes_t
        ("07_cnn_vs_attention", "img.reshape(num_patches"),  # check_no_known_mistake(..., {})
    ],
)
def test_messages_bound_to_a_name_are_found(assignment: str, start: str) -> None:
    assert any(m.text.startswith(start) for m in known_messages(assignment)), (
        f"{assignment}: the known_mistakes dict bound to a name was not read"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_known_mistake_message_has_a_case(assignment: str) -> None:
    missing = set(unproven(assignment))
    listed = UNPROVEN.get(assignment, set())
    new = sorted(missing - listed)
    assert not new, (
        f"{assignment}: no wrong case in tests/grading_cases/{assignment}.py carries a "
        f"message= phrase from these visible-test messages (add a case that makes the mistake, "
        f"with message= a phrase of at least {MIN_PHRASE} characters of the text):\n  "
        + "\n  ".join(new)
    )
    proven = sorted(listed - missing)
    assert not proven, (
        f"{assignment}: these messages now have a case: remove them from UNPROVEN in "
        f"tests/course/test_messages.py:\n  " + "\n  ".join(proven)
    )
