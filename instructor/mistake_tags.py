"""The course's named mistakes, each with a stable tag: what a test cell's message names.

A test cell names a mistake in three ways (``CONTRIBUTING.md``): a key of a
``known_mistakes={...}`` argument (``helpers.checks.check_close`` and friends say "it looks
like <key>" when the answer equals that mistake; also the third argument of
``check_no_known_mistake``, and a dict bound to a name first), the ``hint=`` of a check that
measures the answer (``check_largest_tensor``, ``check_no_loop_over_positions``), or the
message of a ``raise AssertionError(...)`` the cell raises itself. :func:`messages_in` reads
them from a test cell's source (its syntax tree, visible and hidden part); each is a
:class:`KnownMessage` whose :attr:`~KnownMessage.tag` is made of the function's name and the
message's literal words, so it stays the same as long as the message does, whoever reads it.

The one table of the course is :func:`course_table` (every test cell of ``solutions/``): the
grading cases prove its messages (``tests/course/test_messages.py``), and the class grader
records, per hand-in and test cell, the tags of the messages its failure showed
(:func:`tags_seen`, called by ``instructor.classroom.worker.judge.run_test`` on the
exception the cell raised). Besides the cells' own messages, :data:`GENERIC` tags the
messages of ``helpers.checks`` whose cause is known whatever the test (an input modified in
place, which the class grader also raises itself). A message of no known cause has no tag.

``python -m instructor.mistake_tags`` prints the table.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from dataclasses import dataclass

__all__ = [
    "GENERIC",
    "KnownMessage",
    "MIN_LITERAL",
    "UnreadableMistakes",
    "course_table",
    "messages_in",
    "tags_seen",
]

MIN_LITERAL = 12
"""Literal characters a message needs for a tag: a message that is mostly a placeholder
(``f"{detail}"``) names no mistake of its own."""

_TAG_WORDS = 8
"""How many of the message's first literal words make its tag."""


@dataclass(frozen=True)
class KnownMessage:
    """A mistake a test cell names: its test cell, function, literal text chunks (the parts
    between an f-string's placeholders) and whether it is in the hidden part."""

    test: str
    function: str
    chunks: tuple[str, ...]
    hidden: bool = False

    @property
    def text(self) -> str:
        """The message with ``{}`` where a placeholder's value goes."""
        return "{}".join(self.chunks)

    @property
    def tag(self) -> str:
        """``<function>:<its first literal words>~<digest>``: the words lower case, joined by
        ``-``; the digest, 4 hex digits of the whole text's SHA-1, tells apart two messages
        that start alike."""
        words = re.findall(r"[a-z0-9]+", " ".join(self.chunks).lower())
        digest = hashlib.sha1(self.text.encode(), usedforsecurity=False).hexdigest()[:4]
        return f"{self.function}:{'-'.join(words[:_TAG_WORDS])}~{digest}"

    @property
    def taggable(self) -> bool:
        return len("".join(self.chunks).strip()) >= MIN_LITERAL

    def found_in(self, message: str) -> bool:
        """Whether ``message`` shows this one (its chunks in order, any text between)."""
        pattern = ".*?".join(re.escape(chunk) for chunk in self.chunks)
        return self.taggable and re.search(pattern, message, flags=re.DOTALL) is not None


GENERIC: dict[str, KnownMessage] = {
    m.tag: m
    for m in (
        # helpers.checks.modified_in_place, which the class grader raises too.
        KnownMessage("", "*", ("was modified in place. Graded functions must not change",)),
    )
}
"""The messages of ``helpers.checks`` whose cause does not depend on the test: function
``*``."""


def _string_parts(node: ast.AST) -> tuple[str, ...] | None:
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
        left, right = _string_parts(node.left), _string_parts(node.right)
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


class UnreadableMistakes(ValueError):
    """A ``known_mistakes`` argument that is not a dict the syntax tree shows."""


def _message_nodes(tree: ast.AST) -> list[ast.AST]:
    named = _dicts_by_name(tree)
    texts: list[ast.AST] = []
    for node in ast.walk(tree):
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
                raise UnreadableMistakes(
                    f"known mistakes {ast.unparse(argument)} are not a dict that can be read "
                    "(write it in place or bind it to a name)"
                )
            texts += [k for k in mistakes.keys if k is not None]
        elif isinstance(node, ast.keyword) and node.arg == "hint":
            texts.append(node.value)  # check_largest_tensor(..., hint=...) and friends
        elif (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and getattr(node.exc.func, "id", "") == "AssertionError"
            and node.exc.args
        ):
            texts.append(node.exc.args[0])
    return sorted(texts, key=lambda node: (node.lineno, node.col_offset))


def messages_in(
    source: str, test: str, function: str, *, visible_only: bool = False
) -> list[KnownMessage]:
    """The known-mistake messages of the test cell ``source`` (``grade_id`` ``test``, of
    ``function``), visible part first.

    Raises:
        UnreadableMistakes: a ``known_mistakes`` argument is not a dict literal or a name
            bound to one; SyntaxError: the source is not Python.
    """
    from instructor.anatomy import HIDDEN_TESTS_MARKER

    visible, _, hidden = source.partition(HIDDEN_TESTS_MARKER)
    parts = [(visible, False)] + ([] if visible_only or not hidden else [(source, True)])
    found: list[KnownMessage] = []
    for text, in_hidden in parts:
        for node in _message_nodes(ast.parse(text)):
            chunks = _string_parts(node)
            message = None if chunks is None else KnownMessage(test, function, chunks, in_hidden)
            if message is not None and not any(m.chunks == message.chunks for m in found):
                found.append(message)
    return found


def tags_seen(source: str, test: str, message: str) -> tuple[str, ...]:
    """The tags of the known messages that ``message`` (what the test cell ``source``
    raised) shows, in the cell's order (of two that fit, the one with more words of its
    own); the generic ones of :data:`GENERIC` after them."""
    from instructor.anatomy import function_of_test

    try:
        known = messages_in(source, test, function_of_test(test) or test)
    except (SyntaxError, UnreadableMistakes):
        known = []
    found = [m for m in known if m.found_in(message)]
    # A message that two templates fit ("{} has dtype {}" and "mask(4) has dtype {}") is
    # the more specific one's: the other's words are all in it.
    own = [
        m.tag
        for m in found
        if not any(
            len("".join(o.chunks)) > len("".join(m.chunks))
            and all(chunk in o.text for chunk in m.chunks)
            for o in found
        )
    ]
    generic = [tag for tag, m in GENERIC.items() if m.found_in(message)]
    return tuple(dict.fromkeys(own + generic))


def course_table(assignments: list[str] | None = None) -> dict[str, KnownMessage]:
    """Every tag of the course (the test cells of ``solutions/``) with its message: the
    first cell that gives it; then :data:`GENERIC`."""
    from instructor import registry
    from instructor.paths import solution_path

    table: dict[str, KnownMessage] = {}
    for assignment in assignments or registry.load().ids:
        path = solution_path(assignment)
        for tag, message in _notebook_table(str(path), path.stat().st_mtime_ns):
            table.setdefault(tag, message)
    return table | GENERIC


@functools.lru_cache(maxsize=64)
def _notebook_table(path: str, modified_ns: int) -> tuple[tuple[str, KnownMessage], ...]:
    """The taggable messages of one solution notebook's test cells, in order; cached by the
    file and its modification time (a grading run's reports read them once per process, not
    once per report)."""
    import nbformat

    from instructor import anatomy

    found = []
    for cell in anatomy.test_cells(nbformat.read(path, as_version=4)):
        test = anatomy.grade_id(cell)
        function = anatomy.function_of_test(test) or test
        found += [(m.tag, m) for m in messages_in(cell.source, test, function) if m.taggable]
    return tuple(found)


def main() -> None:
    for tag, message in course_table().items():
        print(f"{tag}\t{message.text}")


if __name__ == "__main__":
    main()
