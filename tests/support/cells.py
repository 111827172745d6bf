"""Notebook cells the class grader's tests add to a notebook, made as nbgrader marks them."""

from __future__ import annotations

import nbformat


def written_answer_cell(source: str, grade_id: str, points: float = 2) -> nbformat.NotebookNode:
    """A markdown answer cell graded by hand: nbgrader's solution + grade metadata."""
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["nbgrader"] = {
        "solution": True,
        "grade": True,
        "locked": False,
        "points": points,
        "task": False,
        "schema_version": 3,
        "grade_id": grade_id,
    }
    return cell
