"""helpers.self_study: the self-study edition's checks, called as a notebook cell calls them
(in a namespace of their own, the notebook's globals)."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import self_study

CHOICE = {
    "kind": "choice",
    "options": "abcd",
    "correct": "b",
    "why": "Because of b.",
    "wrong": {"a": "A misses x.", "c": "C misses y.", "d": "D misses z."},
}
NUMBER = {
    "kind": "number",
    "correct": 36_000_000,
    "tolerance": 0.001,
    "why": "6000 squared.",
    "wrong": {"6000": "6000 counts frames, not scores."},
}
EXERCISE = {
    "tests": [
        {
            "id": "test_double",
            "visible": "assert double(1) == 2, 'double(1) should be 2'\nprint('visible passed')\n",
            "further": "assert double(-3) == -6, 'double(-3) should be -6: negative numbers'\n",
        }
    ],
    "solution": "def double(x):\n    return 2 * x",
}


def run(source: str, namespace: dict[str, Any]) -> None:
    """``source`` run as a notebook cell: in ``namespace``, the module's names in it."""
    namespace.update(
        {name: getattr(self_study, name) for name in self_study.__all__},
        choice=self_study.encode(CHOICE),
        number=self_study.encode(NUMBER),
        exercise=self_study.encode(EXERCISE),
    )
    exec(source, namespace)  # noqa: S102 - a cell's code, as the kernel runs it


def test_encode_is_deterministic_and_decode_inverts_it() -> None:
    assert self_study.encode(CHOICE) == self_study.encode(dict(reversed(CHOICE.items())))
    assert self_study.decode(self_study.encode(CHOICE)) == CHOICE
    assert "misses" not in self_study.encode(CHOICE)


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ('" B "', 'q_x = "b": right. Because of b.'),
        ('"a"', 'q_x = "a": not right. A misses x.'),
        ('"d"', 'q_x = "d": not right. D misses z.'),
    ],
)
def test_a_choice_says_right_or_why_the_option_is_wrong(answer: str, says: str, capsys) -> None:
    run(f'q_x = {answer}\ncheck_answer("q_x", choice)', {})
    out = capsys.readouterr().out
    assert out.startswith(says)
    assert ("Because of b" in out) == (": right." in out), "the reason is told only when right"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("6000**2", "q_n = 36,000,000: right. 6000 squared."),
        ("36_010_000", "q_n = 36,010,000: right."),  # within the hidden test's 0.1 %
        ("6000", "q_n = 6,000: not right. 6000 counts frames, not scores."),
        ("7", "q_n = 7: not right. Check your reasoning"),
    ],
)
def test_a_number_says_right_or_explains_a_known_mistake(answer: str, says: str, capsys) -> None:
    run(f'q_n = {answer}\ncheck_answer("q_n", number)', {})
    assert capsys.readouterr().out.startswith(says)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('check_answer("q_x", choice)', "q_x is not answered yet"),
        ('q_x = "z"\ncheck_answer("q_x", choice)', "answer with exactly one letter"),
        ('q_n = "6000"\ncheck_answer("q_n", number)', "q_n should be a number"),
    ],
)
def test_a_missing_or_malformed_answer_gets_the_class_message(source: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        run(source, {})


def test_further_tests_pass_fail_and_reveal(capsys) -> None:
    namespace: dict[str, Any] = {}
    run("def double(x):\n    return x + x\nfurther_tests('double', exercise)", namespace)
    assert capsys.readouterr().out == "double: further tests passed\n"  # prints swallowed
    with pytest.raises(AssertionError, match="double: a further test failed: double.-3. should"):
        run("def double(x):\n    return abs(2 * x)\nfurther_tests('double', exercise)", namespace)
    with pytest.raises(AssertionError, match="its visible tests fail first.*should be 2"):
        run("def double(x):\n    return x\nfurther_tests('double', exercise)", namespace)
    with pytest.raises(AssertionError, match="NameError"):
        run("del double\nfurther_tests('double', exercise)", namespace)
    with pytest.raises(
        AssertionError, match="above.: not written yet .it raises NotImplementedError"
    ):
        run(
            "def double(x):\n    raise NotImplementedError()\nfurther_tests('double', exercise)",
            namespace,
        )
    run("reveal('double')", namespace)
    assert "def double(x):\n    return 2 * x" in capsys.readouterr().out
    run('q_x = "a"\ncheck_answer("q_x", choice)', {})  # reveal shows what a check holds
    capsys.readouterr()
    run("reveal('q_x')", {})
    assert capsys.readouterr().out == 'q_x: the right answer is "b". Because of b.\n'
    with pytest.raises(KeyError, match="nothing to reveal for 'nothing'"):
        run("reveal('nothing')", {})


def test_progress_runs_every_check_again_and_counts(capsys) -> None:
    namespace: dict[str, Any] = {}
    run(
        "def double(x):\n    return 2 * x\nfurther_tests('double', exercise)\n"
        'q_x = "b"\ncheck_answer("q_x", choice)\nq_n = 6000\ncheck_answer("q_n", number)\n',
        namespace,
    )
    capsys.readouterr()
    run("progress_report('01 · T', ['double', 'never_run'], ['q_x', 'q_n', 'q_never'])", namespace)
    out = capsys.readouterr().out
    assert "exercises passing their visible tests: 1 of 2" in out
    assert "exercises passing their further tests: 1 of 2" in out
    assert "questions answered right: 1 of 3" in out
    assert "never_run  " in out and "not checked yet: run its further-tests cell" in out
    assert "not right yet" in out and "visible_passed" not in out
    # the learner changes a function: progress runs its tests again
    run(
        "def double(x):\n    return abs(2 * x)\nprogress_report('01 · T', ['double'], [])",
        namespace,
    )
    out = capsys.readouterr().out
    assert "exercises passing their visible tests: 1 of 1" in out
    assert "exercises passing their further tests: 0 of 1" in out
    assert "further tests fail: double(-3) should be -6" in out
