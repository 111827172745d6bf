"""Copies of an answer disguised as a student hiding a copy would (issue 32, item 6): every
argument and local name renamed, error messages reworded, comments and blank lines added,
and the independent statements of every block put in another order that keeps the program's
meaning (no statement moves across one it depends on, or across a ``return``, ``raise``,
call for its effect, loop jump or ``yield``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["disguised", "moved_statements", "renamed", "reordered"]


def renamed(source: str) -> str:
    """``source`` with every argument and assigned name renamed, and its error messages
    reworded."""
    tree = ast.parse(source)
    names = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names.discard("self")
    new = {name: f"my_{i}_{name[::-1]}" for i, name in enumerate(sorted(names))}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.arg = new.get(node.arg, node.arg)
        elif isinstance(node, ast.Name):
            node.id = new.get(node.id, node.id)
        elif isinstance(node, ast.Raise):
            for constant in ast.walk(node):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    constant.value = f"sorry: {constant.value}"
    return ast.unparse(tree)


@dataclass(frozen=True)
class _Effects:
    reads: frozenset[str]
    writes: frozenset[str]
    barrier: bool
    """Must keep its place: it leaves the block, or acts other than by assigning."""


def _target(node: ast.expr) -> str | None:
    """``x`` of ``x``, ``x[i]``, ``x.a``; ``self.a`` of ``self.a`` (one attribute of self is
    one variable: __init__ assigns them independently)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"self.{node.attr}" if node.value.id == "self" else node.value.id
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _effects(statement: ast.stmt) -> _Effects:
    reads: set[str] = set()
    writes: set[str] = set()
    barrier = isinstance(statement, ast.Expr | ast.Return | ast.Raise | ast.Assert | ast.Global)
    for node in ast.walk(statement):
        if isinstance(node, ast.Return | ast.Raise | ast.Break | ast.Continue | ast.Yield):
            barrier = True
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, ast.Store) else reads).add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "self":
                key = f"self.{node.attr}"
                (writes if isinstance(node.ctx, ast.Store) else reads).add(key)
        elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
            base = _target(node)
            if base:
                writes.add(base)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = _target(node.func.value)  # x.append(...), x.copy_(...): x may change
            if base and node.func.attr.endswith(("_", "append", "extend", "update", "pop")):
                writes.add(base)
    return _Effects(frozenset(reads), frozenset(writes), barrier)


def _depends(first: _Effects, then: _Effects) -> bool:
    return (
        first.barrier
        or then.barrier
        or bool(first.writes & (then.reads | then.writes))
        or bool(first.reads & then.writes)
    )


def _reorder(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` in another valid order: each step takes the last statement whose
    predecessors are all placed, so independent statements come out reversed."""
    effects = [_effects(s) for s in body]
    before = {
        j: {i for i in range(j) if _depends(effects[i], effects[j])} for j in range(len(body))
    }
    placed: list[int] = []
    while len(placed) < len(body):
        ready = [j for j in range(len(body)) if j not in placed and before[j] <= set(placed)]
        placed.append(ready[-1])
    return [body[j] for j in placed]


def reordered(source: str) -> str:
    """``source`` with the independent statements of every block in another order."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, _reorder(block))
    return ast.unparse(tree)


def moved_statements(source: str, other: str) -> int:
    """How many statements of ``source`` stand at another place in ``other`` (same
    nesting, compared by their text), a measure of how much a reordering moved."""

    def order(text: str) -> list[str]:
        return [
            ast.unparse(n)
            for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.stmt) and not isinstance(n, ast.FunctionDef | ast.ClassDef)
        ]

    return sum(a != b for a, b in zip(order(source), order(other), strict=False))


def disguised(source: str) -> str:
    """A renamed and reordered copy of ``source``, with a comment on every line and blank
    lines between them."""
    lines = reordered(renamed(source)).splitlines()
    return "\n\n".join(f"{line}  # mine" if line.strip() else line for line in lines)
