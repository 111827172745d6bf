"""Near copies among the graded answers: of the public solutions, or of each other.

The solutions are public, so the integrity report lists every pair of answers to one graded
function (the solution cells, keyed by ``grade_id``) whose code is nearly the same. The
comparison is copydetect's (https://pypi.org/project/copydetect/), the winnowing
fingerprints of MOSS ("Winnowing: Local Algorithms for Document Fingerprinting", Schleimer,
Wilkerson and Aiken, 2003), never a home-made diff:

1. each answer is put in a canonical layout (``ast.unparse(ast.parse(source))``): comments,
   blank lines, parentheses and line breaks no longer count (an answer that does not parse
   is compared as written);
2. copydetect's filter tokenizes it with Pygments, as its documentation recommends, and
   replaces every variable name with ``V``, function name with ``F``, class name with ``O``
   and string with ``S``: a copy with its variables renamed reads the same;
3. the k-gram hashes of that text are winnowed (copydetect's defaults: noise threshold
   k = 25 characters, guarantee threshold 30, so a window of 6), and the k-grams that also
   occur in the released stub of the function (signature, docstring,
   ``raise NotImplementedError()``) are dropped as boilerplate;
4. the similarity of a pair is the larger of copydetect's two overlap fractions (the share
   of each answer's fingerprinted code that the other one also has): a copy padded with
   extra code still scores high on the side it was copied from.

Threshold (``DEFAULT_THRESHOLD = 0.75``), measured on honest variety: the right answers of
``tests/grading_cases/*.py`` are independent formulations of the same functions. Over all
9 notebooks, the 93 pairs among a function's right answers and its reference solution
score: median 0.00, 90th percentile 0.35, 99th percentile 0.59, highest 0.67 (two
``rnn_forward`` answers by one author that share a verbatim block of shape checks). A copy
of each of the 32 reference solutions with every argument and local variable renamed (and
the layout redone by ``ast.unparse``) scores 1.00; a renamed copy with one extra statement
added scores 0.74 to 0.95 on functions of 100 or more fingerprinted characters, less on
shorter ones. 0.75 is above every honest pair and below every renamed copy.

Answers shorter than ``min_length`` characters of fingerprinted code (one-liners such as
``return queries @ keys.T``, 25 to 45 characters) are not compared: honest students write
them identically, and the winnowing has nothing to go on.
"""

from __future__ import annotations

import ast
import io
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from copydetect import CodeFingerprint, compare_files
from nbformat import NotebookNode

from instructor import anatomy

__all__ = [
    "DEFAULT_MIN_LENGTH",
    "DEFAULT_THRESHOLD",
    "REFERENCE_STUDENT",
    "CopyPair",
    "graded_answers",
    "near_copies",
    "normalise_code",
    "similarity",
]

REFERENCE_STUDENT = "solutions"
"""``CopyPair.student_b`` when the answer is a near copy of the reference solution."""

DEFAULT_THRESHOLD = 0.75
"""Pairs at or above this similarity are near copies (measurement in the module docstring)."""

DEFAULT_MIN_LENGTH = 60
"""Answers with fewer fingerprinted characters (after normalising and dropping the stub's
boilerplate) are too short to tell a copy from the obvious one-liner."""

NOISE_THRESHOLD = 25
"""copydetect's default ``noise_t``: the k of the k-grams, in characters of filtered code."""

GUARANTEE_THRESHOLD = 30
"""copydetect's default ``guarantee_t``: a match this long is always found."""

_WINDOW = GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1


@dataclass(frozen=True)
class CopyPair:
    """Two answers to one graded function that are near copies.

    Attributes:
        student_a: the student whose answer is suspect.
        student_b: the other student, or ``REFERENCE_STUDENT`` ("solutions") for the reference.
        function: the ``grade_id`` of the solution cell.
        similarity: 0 to 1, the larger of the two overlap fractions copydetect reports.
    """

    student_a: str
    student_b: str
    function: str
    similarity: float


def normalise_code(source: str) -> str:
    """An answer in canonical layout (``ast.unparse``): comments, blank lines, parentheses and
    line breaks removed or redone. Source that does not parse (a student's syntax error, an
    IPython magic) is returned as it is."""
    try:
        return ast.unparse(ast.parse(source))
    except (SyntaxError, ValueError):
        return source


def _fingerprint(name: str, source: str, boilerplate: np.ndarray | None) -> CodeFingerprint:
    return CodeFingerprint(
        name,
        NOISE_THRESHOLD,
        _WINDOW,
        boilerplate=boilerplate,
        language="python",
        fp=io.StringIO(normalise_code(source)),
    )


def _boilerplate_hashes(source: str | None) -> np.ndarray | None:
    """Every k-gram hash of the released stub (window 1, as copydetect does for its
    boilerplate directories)."""
    if not source:
        return None
    stub = CodeFingerprint(
        "stub", NOISE_THRESHOLD, 1, language="python", fp=io.StringIO(normalise_code(source))
    )
    return np.unique(np.array(sorted(stub.hashes), dtype=np.int64))


def _similarity(a: CodeFingerprint, b: CodeFingerprint) -> float:
    _, (share_a, share_b), _ = compare_files(a, b)
    return float(max(share_a, share_b))


def similarity(a: str, b: str, boilerplate: str | None = None) -> float:
    """The similarity (0 to 1) of two answers, as ``near_copies`` measures it."""
    hashes = _boilerplate_hashes(boilerplate)
    return _similarity(_fingerprint("a", a, hashes), _fingerprint("b", b, hashes))


def graded_answers(notebook: NotebookNode) -> dict[str, str]:
    """grade_id -> source of every solution cell of a notebook (a student's submission, or
    the released notebook for its stubs)."""
    return {
        anatomy.grade_id(cell): cell.source
        for cell in anatomy.solution_cells(notebook)
        if anatomy.grade_id(cell)
    }


def near_copies(
    submissions: Mapping[str, Mapping[str, str]],
    reference: Mapping[str, str],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    boilerplate: Mapping[str, str] | None = None,
    min_length: int = DEFAULT_MIN_LENGTH,
) -> list[CopyPair]:
    """The pairs of answers to one function whose similarity is at least ``threshold``.

    Args:
        submissions: student -> grade_id -> source of that student's solution cell.
        reference: grade_id -> the reference solution (``solutions/``); compared with every
            student's answer to the same function.
        threshold: 0 to 1; see ``DEFAULT_THRESHOLD`` for how the default was chosen.
        boilerplate: grade_id -> the released stub of that solution cell (signature,
            docstring, ``raise NotImplementedError()``); code shared with it never counts.
        min_length: answers with fewer fingerprinted characters are not compared.

    Returns:
        The near copies, most similar first: a copy of the reference as
        ``CopyPair(student, "solutions", ...)``, a copy between two students once, as
        ``CopyPair(a, b, ...)`` with ``a < b``. An answer equal to the stub (not attempted)
        is never reported.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], not {threshold}")
    if REFERENCE_STUDENT in submissions:
        raise ValueError(
            f"a student may not be called {REFERENCE_STUDENT!r}: that name stands for the reference"
        )
    boilerplate = boilerplate or {}
    functions = sorted({f for answers in submissions.values() for f in answers})
    pairs: list[CopyPair] = []
    for function in functions:
        hashes = _boilerplate_hashes(boilerplate.get(function))
        prints = {
            student: _fingerprint(f"{student}:{function}", answers[function], hashes)
            for student, answers in sorted(submissions.items())
            if function in answers
        }
        prints = {s: p for s, p in prints.items() if p.token_coverage >= min_length}
        if function in reference:
            solution = _fingerprint(f"{REFERENCE_STUDENT}:{function}", reference[function], hashes)
            for student, fingerprint in prints.items():
                score = _similarity(fingerprint, solution)
                if score >= threshold:
                    pairs.append(CopyPair(student, REFERENCE_STUDENT, function, score))
        for (a, print_a), (b, print_b) in itertools.combinations(prints.items(), 2):
            score = _similarity(print_a, print_b)
            if score >= threshold:
                pairs.append(CopyPair(a, b, function, score))
    return sorted(pairs, key=lambda p: (-p.similarity, p.function, p.student_a, p.student_b))
