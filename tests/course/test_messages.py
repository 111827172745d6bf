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

The messages without such a case yet are listed in ``UNPROVEN`` (the list may only shrink:
a message that gains a case must leave it, and a new message must come with its case).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest

from instructor import anatomy, registry
from instructor.grading_cases import load_cases

ASSIGNMENTS = registry.load().ids
MIN_PHRASE = 20
"""Characters in a row that a case's ``message`` and a known message must share (a
distinctive phrase, not a word that many messages share), or the whole message where it is
shorter, down to ``SHORTEST``."""
SHORTEST = 12


@dataclass(frozen=True)
class KnownMessage:
    """A mistake a visible test names: its test cell, function and literal text chunks (the
    parts between an f-string's placeholders)."""

    test: str
    function: str
    chunks: tuple[str, ...]

    @property
    def text(self) -> str:
        return "{}".join(self.chunks)


def _chunks(node: ast.AST) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.JoinedStr):
        chunks, current = [], ""
        for value in node.values:
            if isinstance(value, ast.Constant):
                current += str(value.value)
            else:
                chunks.append(current)
                current = ""
        return (*chunks, current)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _chunks(node.left), _chunks(node.right)
        if left is not None and right is not None:
            return (*left[:-1], left[-1] + right[0], *right[1:])
    return None


def _dicts_by_name(tree: ast.AST) -> dict[str, ast.Dict]:
    """The dicts a cell binds to a name (``mistakes_t = {...}``)."""
    return {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _mistake_dict(value: ast.AST, named: dict[str, ast.Dict]) -> ast.Dict | None:
    """The dict literal behind a ``known_mistakes=`` argument: written in place, bound to a
    name, or a comprehension over a named dict's ``items()`` (its keys are the messages)."""
    if isinstance(value, ast.Dict):
        return value
    if isinstance(value, ast.Name):
        return named.get(value.id)
    if isinstance(value, ast.DictComp) and len(value.generators) == 1:
        source = value.generators[0].iter
        if (
            isinstance(source, ast.Call)
            and isinstance(source.func, ast.Attribute)
            and source.func.attr == "items"
        ):
            return _mistake_dict(source.func.value, named)
    return None


def known_messages(assignment: str) -> list[KnownMessage]:
    """The known-mistake messages of the visible tests of ``solutions/<assignment>``."""
    found = []
    for cell in anatomy.test_cells(anatomy.read_solution(assignment)):
        test = anatomy.grade_id(cell)
        function = anatomy.function_of_test(test) or ""
        tree = ast.parse(anatomy.visible_part(cell.source))
        named = _dicts_by_name(tree)
        for node in ast.walk(tree):
            texts: list[ast.AST] = []
            argument = None
            if isinstance(node, ast.keyword) and node.arg == "known_mistakes":
                argument = node.value
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "check_no_known_mistake"
                and len(node.args) >= 3
            ):
                argument = node.args[2]  # check_no_known_mistake(value, name, known_mistakes)
            if argument is not None:
                mistakes = _mistake_dict(argument, named)
                if mistakes is None:
                    raise AssertionError(
                        f"{assignment} {test}: known mistakes {ast.unparse(argument)} are "
                        "not a dict this test can read (write it in place or bind it to a name)"
                    )
                texts = [k for k in mistakes.keys if k is not None]
            elif isinstance(node, ast.keyword) and node.arg == "hint":
                texts = [node.value]  # check_largest_tensor(..., hint=...) and friends
            elif (
                isinstance(node, ast.Raise)
                and isinstance(node.exc, ast.Call)
                and getattr(node.exc.func, "id", "") == "AssertionError"
                and node.exc.args
            ):
                texts = [node.exc.args[0]]
            for text in texts:
                chunks = _chunks(text)
                if chunks is not None:
                    found.append(KnownMessage(test, function, chunks))
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
