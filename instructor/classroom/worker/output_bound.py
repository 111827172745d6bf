"""The outputs a notebook's kernel may put into the graded notebook: bounded per cell and
for the whole notebook, on every path an output takes into it.

nbclient takes outputs into the notebook two ways: a new output (``display_data``,
``execute_result``, ``stream``, ``error``: ``NotebookClient.output``, which also feeds an
Output widget's hook) and the update of a shown display (``update_display_data``, or a
``display_data`` with a ``display_id`` already shown: ``NotebookClient._update_display_id``,
which rewrites every output of that id, in any cell). The per-cell cap was charged on the
first path only: updating a display wrote 40 MiB into an autograded notebook, and 120 cells
each under the cap wrote 57 MiB. :class:`OutputBudget` is charged on both, an update for what it
adds to every output it rewrites, so that every byte stored came from a charge: what it
accepted bounds the notebook. Charges never come back (a ``clear_output`` frees nothing),
like the per-cell cap's: a loop that clears and prints again is bounded by what it sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Charge", "OutputBudget", "output_size", "update_growth"]

OUTPUT_OVERHEAD = 64
"""Bytes charged per output beyond its content: the JSON around it in the notebook
(``output_type``, ``name``), so that a flood of empty outputs is bounded too."""


def output_size(content: dict[str, Any]) -> int:
    """What a new output of this message content costs."""
    return len(json.dumps(content)) + OUTPUT_OVERHEAD


def update_growth(content: dict[str, Any], shown: list[dict[str, Any]]) -> int:
    """What an update of ``content`` adds to the outputs ``shown`` under its display id: its
    data and metadata replace each one's (what it frees is not given back)."""
    new = len(json.dumps([content.get("data"), content.get("metadata")]))
    # nbclient gives every output of an update the same data: each is measured once, so that
    # a display id shown n times costs n measures, not n * n.
    sizes: dict[tuple[int, int], int] = {}
    growth = 0
    for output in shown:
        data, metadata = output.get("data"), output.get("metadata")
        key = (id(data), id(metadata))
        if key not in sizes:
            sizes[key] = len(json.dumps([data, metadata]))
        growth += max(new - sizes[key], 0)
    return growth


class Charge(Enum):
    """What became of an output charged to the budget."""

    KEPT = "kept"
    CELL_FULL = "cell full"
    NOTEBOOK_FULL = "notebook full"


@dataclass
class OutputBudget:
    """Bytes of output (each message's content as JSON) per cell and per notebook."""

    cell_bytes: int
    notebook_bytes: int
    per_cell: dict[int, int] = field(default_factory=dict)
    """Bytes charged per cell index (refused ones included, as the cap always counted)."""
    used: int = 0
    """Bytes accepted for the notebook."""
    truncated: set[int] = field(default_factory=set)
    """Cells whose own cap refused an output."""
    stopped_at: int | None = None
    """The cell where the notebook's bound was reached (None: it was not)."""
    noted: set[tuple[int, Charge]] = field(default_factory=set)
    """The refusals a note was left for (:meth:`refusal_note`)."""

    def charge(self, cell: int, size: int, stored: bool = True) -> Charge:
        """Charge ``size`` bytes of output of ``cell`` (``stored``: it goes into the graded
        notebook; a guard cell's does not, and its report must never be starved by what the
        notebook printed before). The notebook's bound, once reached, refuses everything
        after it: the notebook ends as it was then."""
        self.per_cell[cell] = self.per_cell.get(cell, 0) + size
        if self.per_cell[cell] > self.cell_bytes:
            self.truncated.add(cell)
            return Charge.CELL_FULL
        if not stored:
            return Charge.KEPT
        if self.stopped_at is not None or self.used + size > self.notebook_bytes:
            if self.stopped_at is None:
                self.stopped_at = cell
            return Charge.NOTEBOOK_FULL
        self.used += size
        return Charge.KEPT

    def refusal_note(self, cell: int, charge: Charge) -> str:
        """The note a refused output leaves in the notebook: once per cell for its cap, once
        in all for the notebook's bound; ``""`` after that."""
        if charge is Charge.KEPT or (cell, charge) in self.noted:
            return ""
        if charge is Charge.NOTEBOOK_FULL and any(c is charge for _, c in self.noted):
            return ""
        self.noted.add((cell, charge))
        if charge is Charge.CELL_FULL:
            return f"[output beyond {self.cell_bytes // 1024} KiB dropped by the grader]\n"
        return (
            f"[output beyond the notebook's {self.notebook_bytes // 1024} KiB dropped by the "
            "grader]\n"
        )

    def note(self) -> str:
        """The integrity report's note, or ``""`` when the notebook's bound stopped nothing."""
        if self.stopped_at is None:
            return ""
        return (
            f"output bound: the notebook's outputs reached the grader's bound of "
            f"{self.notebook_bytes // 1024} KiB; what came after was dropped"
        )
