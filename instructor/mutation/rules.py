"""The rules an exercise's text states, and the mistake (operator) that breaks each (issue 45).

An exercise's text (the markdown before its solution cell, from its section's heading or the
previous exercise on, and the docstrings of its solution cell) states rules besides what to
compute: "keep the dtype", "do not modify the inputs", "do not call X", "along that axis",
"numerically stable", "raise ValueError if ...". :data:`RULES` is the vocabulary: each
:class:`Rule` has the phrases that state it and the mistakes (:class:`Mistake`, the tags of
the operators of :mod:`instructor.mutation`) whose mutants break it.

``course.toml`` lists, for each exercise, the rules its text states and the mistake that
breaks each (``rules = { dtype = "dtype", unchanged = "input modified in place" }``;
:mod:`instructor.registry` refuses an unknown rule, or a mistake that does not break it).
``tests/course/test_rules.py`` reads every exercise's text and fails where it states a rule
the registry does not list (or lists one it does not state), and
``tests/instructor/test_mutation.py`` fails where a listed rule's mistake makes no mutant of
that function that a visible test names: a rule nobody checks.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache

from instructor import anatomy
from instructor.mutation.mistakes import Mistake

__all__ = ["RULES", "Rule", "exercise_texts", "stated"]


@dataclass(frozen=True)
class Rule:
    """A kind of rule an exercise's text states.

    Attributes:
        name: its key in ``course.toml``'s ``rules`` table.
        what: the rule in words (for messages).
        phrases: how a text states it (a regular expression, case-insensitive).
        broken_by: the mistakes whose mutants break it; ``course.toml`` names one of them.
    """

    name: str
    what: str
    phrases: str
    broken_by: tuple[Mistake, ...]

    def found(self, text: str) -> list[str]:
        """The phrases of ``text`` that state this rule (empty when it states none)."""
        flat = " ".join(text.split())  # a phrase may be wrapped over two lines
        return [m.group(0) for m in re.finditer(self.phrases, flat, flags=re.IGNORECASE)]


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule(
            "dtype",
            "the result's dtype: the input's, or one the text names",
            r"keep(s|ing)? the (input )?dtype|(with|in) the dtype of|\bdtype of (the )?"
            r"(inputs?|x|X|V|scores|img|signal)\b|\w+'s dtype|dtype \(kept\)|"
            r"\(float32\)|\*\*float32\*\*|\*\*long\*\*|\) (bool|long) tensor|bool tensor \(|"
            r"return dtype|float64 inputs give a float64",
            (Mistake.DTYPE,),
        ),
        Rule(
            "unchanged",
            "the inputs are not modified",
            r"do not modify|not modified|without modifying|is not modified",
            (Mistake.IN_PLACE, Mistake.VIEW),
        ),
        Rule(
            "forbidden",
            "a call or a tensor the text forbids (do not call X, never an n x n tensor, no loop "
            "over positions)",
            r"do not call|never build|never (ever )?creat|without ever creating|"
            r"no \$n_q \\times n_k\$ tensor|no python loop over positions",
            (Mistake.FORBIDDEN_CALL,),
        ),
        Rule(
            "axis",
            "along one axis only (the last dimension, each column, each target)",
            r"along that axis|along ``axis``|along any axis|over the \*\*last\*\* dimension|"
            r"over the last dimension|over each column|every column sums|"
            r"each target's own|over those neighbours",
            (Mistake.AXIS,),
        ),
        Rule(
            "stable",
            "numerically stable: the maximum subtracted before exp",
            r"numerically stable|softmax must be (numerically )?stable|subtracts the maximum|"
            r"subtract each target's own maximum",
            (Mistake.MAX_NOT_SUBTRACTED, Mistake.MAX_CLAMPED),
        ),
        Rule(
            "raises",
            "an error raised for the inputs the text names",
            r"\braise (a )?`?(ValueError|KeyError)|\braises `?(ValueError|KeyError)|"
            r"\b(ValueError|KeyError): (?!from )",
            (Mistake.ERROR_DROPPED,),
        ),
        Rule(
            "unscaled",
            "no 1/sqrt(d) scaling",
            r"no scaling|no 1/sqrt\(d\) scaling",
            (Mistake.SCALE,),
        ),
    )
}
"""The rule vocabulary, by the name ``course.toml`` gives each rule."""


def stated(text: str) -> dict[str, list[str]]:
    """The rules ``text`` states: rule name -> the phrases that state it."""
    found = {name: rule.found(text) for name, rule in RULES.items()}
    return {name: phrases for name, phrases in found.items() if phrases}


def _docstrings(source: str) -> list[str]:
    """The docstrings of the functions and classes a solution cell defines."""
    tree = ast.parse(source)
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    return [doc for n in nodes if (doc := ast.get_docstring(n))]


@cache
def exercise_texts(assignment: str) -> dict[str, str]:
    """grade_id -> the text of each graded function or class of ``assignment``: the markdown
    cells since its section's heading (``## ...``) or the previous exercise's cells, whichever
    comes later, and its solution cell's docstrings."""
    texts: dict[str, str] = {}
    markdown: list[str] = []
    for cell in anatomy.read_solution(assignment).cells:
        if cell.cell_type == "markdown":
            if cell.source.startswith("## "):
                markdown = []
            markdown.append(cell.source)
        elif anatomy.is_function_cell(cell):
            name = anatomy.grade_id(cell)
            texts[name] = "\n\n".join([*markdown, *_docstrings(cell.source)])
            markdown = []
        elif anatomy.is_test_cell(cell):
            markdown = []
    return texts
