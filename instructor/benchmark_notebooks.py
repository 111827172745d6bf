"""Time every notebook and its autograde; write ``benchmarks/notebooks.md``.

    python -m instructor.benchmark_notebooks                    # every notebook
    python -m instructor.benchmark_notebooks 03_matrix_form     # some of them

For each instructor notebook, in a fresh kernel each time:

- **execute**: wall time of running the notebook top to bottom with nbclient, kernel
  start included (what a student waits for with "Run all");
- **cells**: the sum of the cells' own execution times (the notebook's compute, without
  kernel start);
- **autograde**: wall time of ``nbgrader autograde`` on one submission of the reference
  solution in a scratch course (what one student costs an instructor).

Timings are medians over repeated runs. These are measurements, not tests: the suite never
asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from instructor import registry
from instructor.paths import BENCHMARKS, solution_path
from instructor.scratch_course import ScratchCourse

__all__ = ["NotebookTiming", "main", "time_autograde", "time_execution", "time_notebook"]

TARGET_SECONDS = 15.0
"""Each notebook should run in at most this long on a 2-core laptop, kernel start included."""


@dataclass(frozen=True)
class NotebookTiming:
    """Median timings of one notebook, in seconds."""

    assignment: str
    execute: float
    cells: float
    autograde: float


def _cell_seconds(notebook: Any) -> float:
    """Sum of the cells' execution times, from the timestamps nbclient records."""
    total = 0.0
    for cell in notebook.cells:
        timing = cell.metadata.get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            total += (_parse_time(end) - _parse_time(start)).total_seconds()
    return total


def _parse_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def time_execution(assignment: str) -> tuple[float, float]:
    """Execute ``solutions/<assignment>`` in a fresh kernel; return (wall s, cells s)."""
    path = solution_path(assignment)
    notebook = nbformat.read(path, 4)
    client = NotebookClient(
        notebook, timeout=600, record_timing=True, resources={"metadata": {"path": path.parent}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start, _cell_seconds(notebook)


def time_autograde(assignment: str) -> float:
    """Wall time of ``nbgrader autograde`` of one reference-solution submission."""
    with tempfile.TemporaryDirectory() as folder:
        course = ScratchCourse(Path(folder), assignment)
        course.generate()
        course.submit("benchmark_student", course.solved())
        start = time.perf_counter()
        course.autograde(command_line=True)
        return time.perf_counter() - start


def time_notebook(assignment: str, repeats: int) -> NotebookTiming:
    """Median execute, cells and autograde times of one notebook."""
    runs = [time_execution(assignment) for _ in range(repeats)]
    grades = [time_autograde(assignment) for _ in range(repeats)]
    return NotebookTiming(
        assignment,
        execute=statistics.median(r[0] for r in runs),
        cells=statistics.median(r[1] for r in runs),
        autograde=statistics.median(grades),
    )


def _kept_rows(path: Path, measured: set[str]) -> dict[str, str]:
    """Rows of an existing table for notebooks not measured now (``notebooks NN`` updates
    only its own rows)."""
    if not path.exists():
        return {}
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) in (5, 6) and cells[0] in registry.load().ids:
            if cells[0] not in measured:
                rows[cells[0]] = line
    return rows


def write_table(timings: list[NotebookTiming], path: Path, repeats: int) -> str:
    """Write the markdown table of ``timings`` to ``path``, keeping the rows of other
    notebooks measured before, and return it."""
    import os
    import platform

    import torch

    today = f"{datetime.now():%Y-%m-%d}"
    lines = [
        "# Notebook timings",
        "",
        f"Measured by `make benchmark` (each row on the date it gives): {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, torch {torch.__version__}; the median of the "
        f"runs the row gives. Target: each notebook executes in at most {TARGET_SECONDS:.0f} s.",
        "",
        "| notebook | execute (s, kernel start included) | cells only (s) | autograde one "
        "submission (s) | within target | measured |",
        "| --- | ---: | ---: | ---: | :---: | --- |",
    ]
    rows = _kept_rows(path, {t.assignment for t in timings})
    for t in timings:
        ok = "yes" if t.execute <= TARGET_SECONDS else "**no**"
        rows[t.assignment] = (
            f"| {t.assignment} | {t.execute:.1f} | {t.cells:.1f} | {t.autograde:.1f} | {ok} "
            f"| {today}, {repeats} run(s) |"
        )
    lines += [rows[notebook] for notebook in registry.load().ids if notebook in rows]
    table = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table, encoding="utf-8")
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to time (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "notebooks.md")
    args = parser.parse_args(argv)
    known = registry.load().ids
    unknown = sorted(set(args.names) - set(known))
    if unknown:
        parser.error(f"no such notebook {unknown}; known: {known}")
    from tqdm.auto import tqdm

    timings = []
    with tqdm(args.names or known, desc="notebooks", unit="notebook") as progress:
        for assignment in progress:
            progress.set_postfix_str(assignment)
            timings.append(time_notebook(assignment, args.repeats))
    print(write_table(timings, args.out, args.repeats))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
