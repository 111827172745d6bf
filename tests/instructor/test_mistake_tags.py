"""The course's table of named mistakes (``instructor/mistake_tags.py``): one tag per message,
and a message found in what a failing test shows, whatever its placeholders hold."""

from __future__ import annotations

from collections import defaultdict

from instructor import anatomy, registry
from instructor.mistake_tags import GENERIC, course_table, messages_in, tags_seen

CELL = """\
from helpers.checks import check_close
known = {f"the window is {k} too wide: clip at the edge": wrong}
check_close(out, expected, "w", known_mistakes=known)
if out.sum() < 0:
    raise AssertionError("negative weights: did you subtract instead of add?")
print("window: visible tests passed")
### BEGIN HIDDEN TESTS
check_largest_tensor(window, (x,), 10, "window", hint="work in blocks of queries")
### END HIDDEN TESTS
"""


def test_a_cell_s_messages_are_read_from_both_parts() -> None:
    found = messages_in(CELL, "test_window", "window")
    assert [(m.text, m.hidden) for m in found] == [
        ("the window is {} too wide: clip at the edge", False),
        ("negative weights: did you subtract instead of add?", False),
        ("work in blocks of queries", True),
    ]
    assert found[0].tag.startswith("window:the-window-is-too-wide-clip-at-the")


def test_a_message_is_found_whatever_its_placeholder_holds() -> None:
    (clip, *_) = messages_in(CELL, "test_window", "window")
    shown = "w is not right: it looks like the window is 3 too wide: clip at the edge."
    assert tags_seen(CELL, "test_window", shown) == (clip.tag,)
    assert tags_seen(CELL, "test_window", "w has the right shape but wrong values") == ()
    in_place = "The input x was modified in place. Graded functions must not change their inputs"
    assert tags_seen(CELL, "test_window", in_place) == tuple(GENERIC)


def test_every_message_of_the_course_has_a_tag_of_its_own() -> None:
    texts = defaultdict(set)
    for assignment in registry.load().ids:
        for cell in anatomy.test_cells(anatomy.read_solution(assignment)):
            test = anatomy.grade_id(cell)
            for message in messages_in(cell.source, test, anatomy.function_of_test(test) or ""):
                assert message.taggable, f"{test}: {message.text!r} has too few words of its own"
                texts[message.tag].add(message.text)
    assert {tag: t for tag, t in texts.items() if len(t) > 1} == {}
    assert set(course_table()) == set(texts) | set(GENERIC)


def test_of_two_messages_that_fit_the_more_specific_is_named() -> None:
    cell = CELL.replace(
        "known = {",
        'check(a, hint=f"{name} has dtype {d}, expected bool")\n'
        'check(b, hint=f"window(4) has dtype {d}, expected bool")\nknown = {',
    )
    tags = {m.text: m.tag for m in messages_in(cell, "test_window", "window")}
    assert "{} has dtype {}, expected bool" in tags
    shown = "window(4) has dtype torch.int64, expected bool"
    assert tags_seen(cell, "test_window", shown) == (tags["window(4) has dtype {}, expected bool"],)
