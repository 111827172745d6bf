"""The multiple-choice concept questions of the series need the idea, not test-taking.

Over every notebook's multiple-choice questions (:mod:`instructor.questions` reads them from
the instructor notebooks: options ``- (a) ...``, the right letter from the hidden
``check_choice(..., correct=...)``):

- every question has 4 or 5 options;
- the right option is the longest (strictly) in at most a quarter of the questions, so that
  "pick the longest" is no strategy;
- the right letters are spread evenly over a-d (the largest count minus the smallest at
  most 2), so that "always c" is none either;
- no option repeats the notebook's prose: no run of 8 consecutive normalised words of an
  option stands in another markdown cell of its notebook.
"""

from __future__ import annotations

from collections import Counter

import pytest

from instructor import anatomy, questions, registry

COURSE = registry.load()
QUESTIONS = [q for a in COURSE.ids for q in questions.choice_questions(a)]
RUN = 8


def test_the_parser_reads_options_and_the_right_letter() -> None:
    text = "**Question 1** · Which?\n\n- (a) one\n  two\n- (b) three\n\nAnswer by setting ..."
    assert questions.parse_options(text) == {"a": "one two", "b": "three"}
    source = (
        'check_choice(q, "q", options="abcd")\n### BEGIN HIDDEN TESTS\n'
        'check_choice(q, "q", options="abcd", correct="C", why="...")\n'
    )
    assert questions.right_letter(source) == "c"
    assert questions.right_letter("check_number(q, 'q', correct=3)") is None


def test_the_series_has_multiple_choice_questions() -> None:
    assert len(QUESTIONS) >= 20


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: f"{q.notebook}-{q.name}")
def test_a_question_has_four_or_five_options(question: questions.ChoiceQuestion) -> None:
    letters = "".join(question.options)
    assert letters in ("abcd", "abcde"), (
        f"{question.notebook} {question.name} has options {letters!r}: give 4 or 5, (a) to (d) "
        "or (e), each a misconception a student really holds"
    )
    assert question.correct in question.options


def test_the_right_option_is_rarely_the_longest() -> None:
    longest = [
        f"{q.notebook} {q.name}"
        for q in QUESTIONS
        if all(
            len(q.options[q.correct]) > len(text) for k, text in q.options.items() if k != q.correct
        )
    ]
    assert len(longest) * 4 <= len(QUESTIONS), (
        f"the right option is the longest in {len(longest)} of {len(QUESTIONS)} questions "
        f"(at most a quarter): {longest}; move the explanation into the hidden test's why="
    )


def test_the_right_letters_are_spread_evenly() -> None:
    counts = Counter({letter: 0 for letter in "abcd"})
    counts.update(q.correct for q in QUESTIONS)
    assert max(counts.values()) - min(counts.values()) <= 2, (
        f"right letters {dict(sorted(counts.items()))}: spread them over a-d"
    )


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: f"{q.notebook}-{q.name}")
def test_no_option_stands_in_the_prose(question: questions.ChoiceQuestion) -> None:
    notebook = anatomy.read_solution(question.notebook)
    prose = [
        " ".join(questions.normalised_words(cell.source))
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown" and index != question.question_cell
    ]
    for letter, text in question.options.items():
        words = questions.normalised_words(text)
        for start in range(len(words) - RUN + 1):
            run = " ".join(words[start : start + RUN])
            found = [p for p in prose if f" {run} " in f" {p} "]
            assert not found, (
                f"{question.notebook} {question.name} option ({letter}) repeats the prose: "
                f"{run!r}; ask to apply the idea to a new case instead"
            )
