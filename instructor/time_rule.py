"""The course's time rule: how long a notebook takes, from its solution notebook.

The rule: **prose words / 150 + 5 minutes per point of graded functions + 5 minutes per
graded function + 2 minutes per concept question + 5 minutes per written answer, rounded up
to a multiple of 5** (reading at 150 words a minute; 5 minutes of work per point of code, and
5 more per exercise for reading its specification and tests and running them, whatever its
points: a notebook of four 2-point exercises takes longer than one of two 4-point ones; a
concept question, answered with a letter or a number, takes about 2 minutes on top of reading
it; a written answer, a few sentences, about 5). The exercise term was added when 06 (four
exercises, one of them bounded in memory) and 09 (``scatter_reduce``) were estimated (issue
24, from a student's reading pace and exercise count) to take 85 to 100 minutes where the rule
without it said 70.

``python -m instructor.facts`` writes it where the time is stated: ``minutes`` in
``course.toml`` (the README's table and the website show it) and "about N minutes" in the
notebook's first cell; ``tests/course/test_time.py`` checks both.

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

from . import anatomy, registry

__all__ = ["notebook_minutes", "prose_words", "raw_minutes", "rule_minutes"]

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


def notebook_minutes(notebook: nbformat.NotebookNode, entry: registry.Notebook) -> int:
    """The time rule applied to a solution notebook and its registry entry."""
    return rule_minutes(
        prose_words(notebook),
        entry.function_points,
        len(entry.concept_questions),
        len(entry.written_answers),
        len(entry.exercises),
    )
