"""Every notebook states the time the course's time rule gives it.

The rule: **prose words / 150 + 5 minutes per point of graded functions + 5 minutes per
graded function + 2 minutes per concept question + 5 minutes per written answer, rounded up
to a multiple of 5** (reading at 150 words a minute; 5 minutes of work per point of code, and
5 more per exercise for reading its specification and tests and running them, whatever its
points: a notebook of four 2-point exercises takes longer than one of two 4-point ones; a
concept question, answered with a letter or a number, takes about 2 minutes on top of reading
it; a written answer, a few sentences, about 5). The exercise term was added when 06 (four
exercises, one of them bounded in memory) and 09 (``scatter_reduce``) were estimated (issue
24, from a student's reading pace and exercise count) to take 85 to 100 minutes where the rule
without it said 70. This test computes it for every notebook from its solution notebook and
checks both places that state the time: ``minutes`` in ``course.toml`` (the README's table and
the website show it) and "about N minutes" in the notebook's first cell.

Prose words are counted the same way in every notebook (:func:`prose_words`):

- markdown cells only (code cells, their outputs and the tests are not prose); the questions
  of "Check your understanding" are prose, but a written answer's cell is not (in
  ``solutions/`` it holds the reference answer and the rubric, which students never see);
- fenced code blocks, display math (``$$ ... $$``, LaTeX-only lines) and inline math
  (``$ ... $``) are left out;
- a word is a whitespace-separated token with at least one letter or digit (a list dash, a
  table rule ``|---|`` or a middle dot is not a word; inline code such as ``edge_index`` is);
- an optional section, a ``## N · Going further ...`` section up to the next ``##`` heading
  (06's stride, Longformer and Big Bird, "optional and ungraded"), is not counted: the stated
  time is that of the required path.

The points, questions and written answers are those of ``course.toml`` (the anatomy tests
check that the notebook's cells agree).
"""

from __future__ import annotations

import math
import re

import nbformat
import pytest

from instructor import anatomy, registry

COURSE = registry.load()
WORDS_PER_MINUTE = 150
MINUTES_PER_POINT = 5  # per point of graded functions
MINUTES_PER_EXERCISE = 5  # per graded function, on top of its points
MINUTES_PER_CONCEPT_QUESTION = 2
MINUTES_PER_WRITTEN_ANSWER = 5
ROUND_TO = 5

FENCED = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.MULTILINE | re.DOTALL)
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
INLINE_MATH = re.compile(r"\$[^$\n]+\$")
SECTION = re.compile(r"##(?!#)\s")
OPTIONAL_SECTION = re.compile(r"##\s+\d+ · Going further")
WORD = re.compile(r"[^\W_]")  # a letter or a digit


def prose_words(notebook: nbformat.NotebookNode) -> int:
    """The prose words of a notebook, counted as the module docstring says."""
    words, optional = 0, False
    for cell in notebook.cells:
        if cell.cell_type != "markdown" or anatomy.is_written_cell(cell):
            continue
        text = INLINE_MATH.sub(" ", DISPLAY_MATH.sub(" ", FENCED.sub(" ", cell.source)))
        for line in text.splitlines():
            if SECTION.match(line):
                optional = bool(OPTIONAL_SECTION.match(line))
            if not optional:
                words += sum(1 for token in line.split() if WORD.search(token))
    return words


def raw_minutes(
    words: int, points: int, questions: int = 0, written: int = 0, exercises: int = 0
) -> float:
    """words / 150 + 5 per point of graded functions + 5 per graded function + 2 per concept
    question + 5 per written answer, before rounding."""
    return (
        words / WORDS_PER_MINUTE
        + MINUTES_PER_POINT * points
        + MINUTES_PER_EXERCISE * exercises
        + MINUTES_PER_CONCEPT_QUESTION * questions
        + MINUTES_PER_WRITTEN_ANSWER * written
    )


def rule_minutes(
    words: int, points: int, questions: int = 0, written: int = 0, exercises: int = 0
) -> int:
    """The time rule: :func:`raw_minutes` rounded up to a multiple of 5."""
    raw = raw_minutes(words, points, questions, written, exercises)
    return ROUND_TO * math.ceil(raw / ROUND_TO)


def test_the_rule_counts_words_as_documented() -> None:
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    notebook = new_notebook(
        cells=[
            new_markdown_cell("## 1 · Two words\n\n- one `edge_index` $x_i$ -- |---|"),
            new_markdown_cell("$$\nA = QK^T\n$$\n\n```python\nnot prose here\n```\nthree"),
            new_code_cell("code is not prose"),
            new_markdown_cell("## 2 · Going further: optional\n\nskipped words here"),
            new_markdown_cell("### Still optional\n\nskipped"),
            new_markdown_cell("## Summary\n\nlast"),
        ]
    )
    # 1, Two, words, one, `edge_index`, three, Summary, last; not "##", "·", "-", "--",
    # "|---|", the math, the code, nor the Going further section.
    assert prose_words(notebook) == 8
    assert rule_minutes(0, 8) == 40 and rule_minutes(1, 8) == 45 and rule_minutes(750, 7) == 40
    # 3 concept questions (6 minutes) and a written answer (5): 40 + 11 -> 55.
    assert rule_minutes(0, 8, questions=3, written=1) == 55
    assert rule_minutes(0, 8, questions=2) == 45 and rule_minutes(0, 7, written=1) == 40
    # Three exercises (15 minutes) of 8 points: 40 + 15 -> 55.
    assert rule_minutes(0, 8, exercises=3) == 55


def test_a_written_answers_reference_is_not_prose() -> None:
    from nbformat.v4 import new_markdown_cell, new_notebook

    question = new_markdown_cell("**Written answer** (2 points, graded by hand) · Why?")
    answer = new_markdown_cell(
        "**Reference answer.** Because of many words here.",
        metadata={"nbgrader": {"solution": True, "grade": True, "points": 2}},
    )
    assert prose_words(new_notebook(cells=[question])) == 8
    assert prose_words(new_notebook(cells=[question, answer])) == 8


@pytest.mark.parametrize("assignment", COURSE.ids)
def test_stated_time_follows_the_rule(assignment: str) -> None:
    entry = COURSE.notebook(assignment)
    notebook = anatomy.read_solution(assignment)
    words = prose_words(notebook)
    points = entry.function_points
    questions, written = len(entry.concept_questions), len(entry.written_answers)
    exercises = len(entry.exercises)
    minutes = rule_minutes(words, points, questions, written, exercises)
    how = (
        f"{words} prose words / {WORDS_PER_MINUTE} + {MINUTES_PER_POINT} x {points} points of "
        f"functions + {MINUTES_PER_EXERCISE} x {exercises} exercises + "
        f"{MINUTES_PER_CONCEPT_QUESTION} x {questions} concept questions + "
        f"{MINUTES_PER_WRITTEN_ANSWER} x {written} written answers = "
        f"{raw_minutes(words, points, questions, written, exercises):.1f}, rounded up to {minutes}"
    )
    assert entry.minutes == minutes, (
        f"course.toml gives {assignment} {entry.minutes} minutes; the time rule gives "
        f"{minutes} ({how}): set minutes = {minutes} and run `make readme`"
    )
    stated = re.findall(r"about (\d+) minutes", notebook.cells[0].source)
    assert stated == [str(minutes)], (
        f"the first cell of {assignment} states {stated or 'no'} time; the time rule gives "
        f"'about {minutes} minutes' ({how})"
    )
