"""A reference solution as the mutation operators see it: its text, its syntax tree, where
each node is in the text, and which lines are the student's to write.

Only code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` is mutated: a class's
signature and docstrings, and everything the student is given, stay as released.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from instructor.anatomy import SOLUTION_MARKERS

__all__ = ["Edit", "Solution"]

SIMPLE = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Call)
"""Expressions that need no parentheses before ``.attr``, ``+ 1`` or as an operand."""


@dataclass(frozen=True)
class Edit:
    """One change of the solution's text: ``text[start:end]`` becomes ``new``."""

    start: int
    end: int
    new: str


@dataclass
class Solution:
    """One graded function's or class's solution cell, markers taken out.

    Attributes:
        name: the graded function or class (the cell's ``grade_id``).
        text: the cell's source without the solution markers.
        student_lines: the 1-based line numbers of ``text`` the student writes.
    """

    name: str
    text: str
    student_lines: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def from_cell(cls, name: str, cell_source: str) -> Solution:
        lines, student, inside = [], set(), False
        for line in cell_source.splitlines():
            marker = line.strip()
            if marker == SOLUTION_MARKERS[0]:
                inside = True
            elif marker == SOLUTION_MARKERS[1]:
                inside = False
            else:
                lines.append(line)
                if inside:
                    student.add(len(lines))
        return cls(name, "\n".join(lines) + "\n", frozenset(student))

    @cached_property
    def tree(self) -> ast.Module:
        return ast.parse(self.text)

    @cached_property
    def _line_starts(self) -> list[int]:
        starts, total = [0, 0], 0
        for line in self.text.splitlines(keepends=True):
            total += len(line)
            starts.append(total)
        return starts

    def _offset(self, line: int, byte_column: int) -> int:
        # ast columns count UTF-8 bytes; the text is indexed by characters.
        line_text = self.text[self._line_starts[line] : self._line_starts[line + 1]]
        return self._line_starts[line] + len(line_text.encode()[:byte_column].decode())

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Where ``node`` is in :attr:`text` (character offsets)."""
        return (
            self._offset(node.lineno, node.col_offset),
            self._offset(node.end_lineno, node.end_col_offset),
        )

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def operand(self, node: ast.AST) -> str:
        """``node``'s text, parenthesised unless it is a simple expression."""
        text = self.segment(node)
        return text if isinstance(node, SIMPLE) else f"({text})"

    def is_student(self, node: ast.AST) -> bool:
        """Whether all of ``node`` is on lines the student writes."""
        return all(line in self.student_lines for line in range(node.lineno, node.end_lineno + 1))

    def replace(self, node: ast.AST, new: str) -> Edit:
        start, end = self.span(node)
        return Edit(start, end, new)

    def insert_before(self, statement: ast.stmt, new_statement: str) -> Edit:
        """A statement put on its own line before ``statement``, at its indentation."""
        start, _ = self.span(statement)
        indent = " " * statement.col_offset
        return Edit(start, start, f"{new_statement}\n{indent}")

    def apply(self, edit: Edit) -> str:
        return self.text[: edit.start] + edit.new + self.text[edit.end :]

    @cached_property
    def uses_numpy(self) -> bool:
        """A numpy exercise (02): its mutants write numpy, not torch."""
        return "np.ndarray" in self.text and "torch." not in self.text

    def functions(self) -> list[ast.FunctionDef]:
        """The function itself, or the methods of the class, that hold student lines."""
        found = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, ast.FunctionDef)
            and any(self.is_student(statement) for statement in node.body)
        ]
        return sorted(found, key=lambda node: node.lineno)

    def student_nodes(self) -> list[ast.AST]:
        """Every node on the student's lines, in the order of the text."""
        nodes = [
            node
            for node in ast.walk(self.tree)
            if hasattr(node, "lineno") and not isinstance(node, ast.FunctionDef | ast.ClassDef)
            and self.is_student(node)
        ]  # fmt: skip
        return sorted(nodes, key=lambda n: (n.lineno, n.col_offset, -n.end_lineno))
