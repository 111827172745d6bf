"""Every notebook states the time the course's time rule gives it (the rule, and how prose
words are counted: ``instructor/time_rule.py``): ``minutes`` in ``course.toml`` and "about N
minutes" in the notebook's first cell, both written by ``python -m instructor.facts``."""

from __future__ import annotations

import re

import pytest

from instructor import anatomy, registry
from instructor.time_rule import (
    MINUTES_PER_CONCEPT_QUESTION,
    MINUTES_PER_EXERCISE,
    MINUTES_PER_POINT,
    MINUTES_PER_WRITTEN_ANSWER,
    WORDS_PER_MINUTE,
    prose_words,
    raw_minutes,
    rule_minutes,
)

COURSE = registry.load()


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
        f"{minutes} ({how}): run `make release` (instructor.facts writes it) and `make readme`"
    )
    stated = re.findall(r"about (\d+) minutes", notebook.cells[0].source)
    assert stated == [str(minutes)], (
        f"the first cell of {assignment} states {stated or 'no'} time; the time rule gives "
        f"'about {minutes} minutes' ({how})"
    )
