"""Near copies among answers to graded functions (:func:`near_copies`), from source strings;
:func:`graded_answers` takes them out of a notebook's solution cells.

Answers to one function, of the public solutions or of each other, are compared as syntax
trees statement by statement, as multisets (AST clone detection: Baxter et al., ICSM 1998):
1. each answer is put in a canonical form (:func:`canonical_tree`: arguments named by
   position, names the answer binds made one name, strings one string, commutative operands
   ordered; names it does not bind, attributes and numbers stay);
2. each statement is a BLAKE2 hash weighted by its node count (:func:`answer_fingerprint`),
   the released stub's statements dropped; a pair's similarity is the weight shared over one
   answer's weight, the larger of the two (:func:`similarity`).

Renaming, rewording, relayout and reordering score 1.00; answers under ``min_length`` nodes
are not compared. ``DEFAULT_THRESHOLD`` (0.75) is measured by
``tests/instructor/test_similarity.py``: independent right answers of
``tests/grading_cases/`` score below 0.6, disguised copies of every solution 1.00.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from nbformat import NotebookNode

from instructor import anatomy

__all__ = [
    "BOUND",
    "DEFAULT_MIN_LENGTH",
    "DEFAULT_THRESHOLD",
    "REFERENCE_STUDENT",
    "CopyPair",
    "Fingerprint",
    "canonical_tree",
    "answer_fingerprint",
    "graded_answers",
    "near_copies",
    "similarity",
]


REFERENCE_STUDENT = "solutions"
"""``CopyPair.student_b`` when the answer is a near copy of the reference solution."""


DEFAULT_THRESHOLD = 0.75
"""Pairs at or above this similarity are near copies (measurement in the module docstring)."""


DEFAULT_MIN_LENGTH = 50
"""Answers with fewer syntax-tree nodes in their fingerprinted statements (after dropping the
stub's boilerplate) are too short to tell a copy from the obvious one-liner."""


BOUND = "_"
"""The one name of every name an answer binds, and of every attribute of ``self``."""


_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


@dataclass(frozen=True)
class CopyPair:
    """Two answers to one graded function that are near copies.

    Attributes:
        student_a: the student whose answer is suspect.
        student_b: the other student, or ``REFERENCE_STUDENT`` ("solutions") for the reference.
        function: the ``grade_id`` of the solution cell.
        similarity: 0 to 1, the larger of the two shares of statements in common.
    """

    student_a: str
    student_b: str
    function: str
    similarity: float


@dataclass(frozen=True)
class Fingerprint:
    """An answer's statements: digest -> (how many times, nodes of one)."""

    counts: Counter[str] = field(default_factory=Counter)
    weights: Mapping[str, int] = field(default_factory=dict)

    @property
    def weight(self) -> int:
        """Nodes of all the fingerprinted statements: the size of the answer."""
        return sum(self.weights[d] * n for d, n in self.counts.items())

    def without(self, boilerplate: Fingerprint | None) -> Fingerprint:
        """The statements that are not in ``boilerplate`` (the released stub's)."""
        if boilerplate is None:
            return self
        kept = Counter({d: n for d, n in self.counts.items() if d not in boilerplate.counts})
        return Fingerprint(kept, self.weights)

    def shared(self, other: Fingerprint) -> int:
        """Nodes of the statements both have (as multisets)."""
        common = self.counts & other.counts
        return sum(self.weights[d] * n for d, n in common.items())


class _Canonical(ast.NodeTransformer):
    """Rewrites a parsed answer in place into its canonical form (module docstring, step 1)."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.arguments: list[dict[str, str]] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> ast.AST:
        args = node.args
        every = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
        names = {a.arg: ("self" if a.arg == "self" else f"a{i}") for i, a in enumerate(every) if a}
        self.arguments.append(names)
        try:
            self.generic_visit(node)
        finally:
            self.arguments.pop()
        for a in every:
            if a is not None:
                a.arg, a.annotation = names[a.arg], None
        if not isinstance(node, ast.Lambda):
            node.returns = None
            if not (node.name.startswith("__") or node.name == "forward"):
                node.name = BOUND
            node.body = _without_docstring(node.body)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.name = BOUND
        node.body = _without_docstring(node.body) or [ast.Pass()]
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        for scope in reversed(self.arguments):
            if node.id in scope:
                node.id = scope[node.id]
                return node
        if node.id in self.bound:
            node.id = BOUND
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            node.attr = BOUND
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            node.value = "S"
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Constant("S")

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, _COMMUTATIVE):
            node.left, node.right = sorted((node.left, node.right), key=ast.dump)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        node.values = sorted(node.values, key=ast.dump)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            node.left, node.comparators[0] = sorted((node.left, node.comparators[0]), key=ast.dump)
        return node


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    return [
        s
        for s in body
        if not (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Constant)
            and isinstance(s.value.value, str)
        )
    ]


def _names_bound(tree: ast.AST) -> set[str]:
    """Every name the answer binds: assigned, looped over, imported, defined, caught."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def canonical_tree(source: str) -> ast.Module:
    """The answer's syntax tree in canonical form (module docstring, step 1). Raises
    ``SyntaxError`` (or ``ValueError``) where the source does not parse."""
    tree = ast.parse(source)
    return _Canonical(_names_bound(tree)).visit(tree)


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _header(statement: ast.stmt) -> ast.AST:
    """A compound statement without the statements it holds."""
    head = copy.copy(statement)
    for name in _BODIES:
        if isinstance(getattr(head, name, None), list):
            setattr(head, name, [])
    return head


def answer_fingerprint(source: str) -> Fingerprint:
    """The statements of an answer, canonical (module docstring, step 2). An answer that
    does not parse is fingerprinted line by line, as written (stripped of blanks)."""
    try:
        tree = canonical_tree(source)
    except (SyntaxError, ValueError, RecursionError):
        lines = [line.strip() for line in source.splitlines() if line.strip()]
        digests = [hashlib.blake2b(line.encode(), digest_size=16).hexdigest() for line in lines]
        weights = {d: max(1, len(line) // 4) for d, line in zip(digests, lines, strict=True)}
        return Fingerprint(Counter(digests), weights)
    counts: Counter[str] = Counter()
    weights: dict[str, int] = {}
    # Every statement at every depth (an except clause's and a case's too), each once.
    for statement in (node for node in ast.walk(tree) if isinstance(node, ast.stmt)):
        head = _header(statement)
        text = ast.dump(head, annotate_fields=False, include_attributes=False)
        digest = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        counts[digest] += 1
        weights[digest] = sum(1 for _ in ast.walk(head))
    return Fingerprint(counts, weights)


def _similarity(a: Fingerprint, b: Fingerprint) -> float:
    shared = a.shared(b)
    shares = [shared / f.weight for f in (a, b) if f.weight]
    return max(shares, default=0.0)


def similarity(a: str, b: str, boilerplate: str | None = None) -> float:
    """The similarity (0 to 1) of two answers, as ``near_copies`` measures it."""
    stub = answer_fingerprint(boilerplate) if boilerplate else None
    return _similarity(answer_fingerprint(a).without(stub), answer_fingerprint(b).without(stub))


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
        min_length: answers with fewer syntax-tree nodes of fingerprinted statements are
            not compared.

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
        stub = answer_fingerprint(boilerplate[function]) if boilerplate.get(function) else None
        prints = {
            student: answer_fingerprint(answers[function]).without(stub)
            for student, answers in sorted(submissions.items())
            if function in answers
        }
        prints = {s: p for s, p in prints.items() if p.weight >= min_length}
        if function in reference:
            solution = answer_fingerprint(reference[function]).without(stub)
            for student, print_ in prints.items():
                score = _similarity(print_, solution)
                if score >= threshold:
                    pairs.append(CopyPair(student, REFERENCE_STUDENT, function, score))
        for (a, print_a), (b, print_b) in itertools.combinations(prints.items(), 2):
            score = _similarity(print_a, print_b)
            if score >= threshold:
                pairs.append(CopyPair(a, b, function, score))
    return sorted(pairs, key=lambda p: (-p.similarity, p.function, p.student_a, p.student_b))
