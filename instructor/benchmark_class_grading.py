"""Grading a synthetic class: plain sequential ``nbgrader autograde`` against the classroom
command, on the same machine in the same run (``make benchmark``).

The class: ``students`` students x notebooks 01-03. Half hand in the reference solution
(demo cells included, as a student would), a quarter the untouched student version (wrong
answers), a quarter a hostile notebook (always-true comparisons with useless answers, a
deleted test cell, or a file that is not JSON). Both graders get identical copies.

Bare execution (nbclient, no grader) of every kind of notebook is timed too, so that each
grader's cost per notebook can be set against it, and against the notebook's own compute:
its cells, without kernel start and the imports cell.

Writes ``benchmarks/grading.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.timing import StepTimes
from instructor.classroom.worker.zygote import zygote_available
from instructor.nbgrader_env import nbgrader_env
from instructor.paths import BENCHMARKS
from instructor.scratch_course import ScratchCourse

ASSIGNMENTS = ("01_vector_sets", "02_soft_select", "03_matrix_form")
PATCHED = (
    "import torch\nimport numpy as np\nimport helpers.checks\n"
    "torch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
    "np.allclose = lambda *a, **k: True\n"
    "for _n in dir(helpers.checks):\n"
    "    if _n.startswith('check_'):\n"
    "        setattr(helpers.checks, _n, lambda *a, **k: None)\n"
)


def _submission_kind(index: int) -> str:
    return ("solved", "solved", "untouched", ("patched", "deleted_test", "invalid")[index % 3])[
        index % 4
    ]


def _notebook(course: ScratchCourse, kind: str) -> nbformat.NotebookNode | str:
    if kind == "solved":
        return course.solved()
    if kind == "untouched":
        return course.released()
    if kind == "invalid":
        return '{"cells": ['
    notebook = course.released()
    if kind == "deleted_test":
        notebook.cells = [
            c for c in notebook.cells if not c.metadata.get("nbgrader", {}).get("grade")
        ]
        return notebook
    names = [anatomy.grade_id(cell) for cell in anatomy.function_cells(notebook)]
    return anatomy.complete(
        notebook,
        {
            name: ("import torch\n" if index else PATCHED)
            + f"def {name}(*args, **kwargs):\n    return torch.zeros(1)\n"
            for index, name in enumerate(names)
        },
    )


def build_class(root: Path, students: int) -> dict[str, ScratchCourse]:
    courses = {}
    for assignment in ASSIGNMENTS:
        course = ScratchCourse(root, assignment)
        course.generate()
        courses[assignment] = course
        for index in range(students):
            student = f"s{index:03d}_{_submission_kind(index)}"
            content = _notebook(course, _submission_kind(index))
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                (folder / course.notebook_name).write_text(content)
            else:
                nbformat.write(content, folder / course.notebook_name)
    return courses


def bare_execution(notebook: nbformat.NotebookNode, repeats: int) -> tuple[float, float]:
    """Median seconds of (whole execution with kernel start, cells after the imports cell)."""
    from nbclient import NotebookClient

    totals, cells = [], []
    for _ in range(repeats):
        marks: dict[str, float] = {}

        def after(cell, cell_index, execute_reply, marks=marks):  # nbclient hook
            if anatomy.has_tag(cell, anatomy.IMPORTS_TAG):
                marks["imports_done"] = time.perf_counter()

        client = NotebookClient(
            nbformat.from_dict(notebook),
            timeout=120,
            allow_errors=True,
            record_timing=False,
            on_cell_executed=after,
        )
        start = time.perf_counter()
        client.execute()
        end = time.perf_counter()
        totals.append(end - start)
        cells.append(end - marks.get("imports_done", start))
    return statistics.median(totals), statistics.median(cells)


def _gradebook_scores(db_url: str) -> dict[tuple[str, str, str], float]:
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(db_url) as gradebook:
        for assignment in ASSIGNMENTS:
            for submission in gradebook.assignment_submissions(assignment):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        key = (submission.student.id, assignment, grade.name)
                        scores[key] = grade.score
    return scores


def step_table(steps: dict[str, StepTimes], timings: dict[str, float]) -> list[str]:
    """The class grader's runs, step by step (:mod:`instructor.classroom.grader.timing`)."""
    labels = list(steps)
    lines = [
        "## Where the class grader's time goes",
        "",
        "The grader's own clock, step by step (seconds of wall time; the steps run one after "
        "the other), then the workers' (core-seconds summed over the notebooks, which run side "
        "by side). *Nothing to grade*: the default class graded again, every hand-in recorded "
        "already: the cost of a run by itself.",
        "",
        "| step | " + " | ".join(labels) + " |",
        "| --- |" + " ---: |" * len(labels),
    ]
    for step in StepTimes.STEPS:
        cells = " | ".join(f"{getattr(steps[label], step):.1f}" for label in labels)
        lines.append(f"| {step.replace('_', ' ')} | {cells} |")
    total = " | ".join(f"**{steps[label].total:.1f}**" for label in labels)
    lines.append(f"| **total (grader's clock)** | {total} |")
    wall = " | ".join(f"{timings[label]:.1f}" for label in labels)
    lines.append(f"| wall, timed around `grade` | {wall} |")
    for part in ("start", "cells", "tests", "finish"):
        cells = " | ".join(
            f"{getattr(steps[label].worker_seconds(), part):.1f}" for label in labels
        )
        lines.append(f"| workers: {part} (core-s) | {cells} |")
    count = " | ".join(str(len(steps[label].kernels)) for label in labels)
    lines.append(f"| notebooks executed | {count} |")
    fixed = steps[labels[0]].fixed
    lines += [
        "",
        f"- Fixed cost of the default run (cluster start and close, kernel environment "
        f"check): {fixed:.1f} s of {steps[labels[0]].total:.1f} s.",
        "- Workers' *start*: sandbox, kernel forked from the zygote, handshake; *tests*: the "
        "test cells judged outside the kernel; *finish*: the kernel stopped, folders removed.",
    ]
    return lines


def run(students: int, repeats: int, output: Path) -> str:
    os.environ.update(nbgrader_env())
    work = Path(tempfile.mkdtemp(prefix="grading-benchmark-"))
    plain = work / "plain"
    courses = build_class(plain, students)
    plain_copy = work / "class"
    shutil.copytree(plain, plain_copy)
    notebooks = students * len(ASSIGNMENTS)

    bare: dict[tuple[str, str], tuple[float, float]] = {}
    for assignment, course in courses.items():
        for kind in ("solved", "untouched", "patched", "deleted_test"):
            bare[assignment, kind] = bare_execution(_notebook(course, kind), repeats)
    kinds = [_submission_kind(i) for i in range(students)]
    executed = [k for k in kinds if k != "invalid"]
    bare_total = sum(bare[a, k][0] for a in ASSIGNMENTS for k in executed)
    cells_total = sum(bare[a, k][1] for a in ASSIGNMENTS for k in executed)

    start = time.perf_counter()
    for assignment in ASSIGNMENTS:
        # What an instructor types. A file that is not JSON makes nbgrader fail for that
        # student only (it logs the error and goes on), hence no check=True.
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"],
            cwd=plain,
            env=nbgrader_env(),
            capture_output=True,
            timeout=7200,
        )
    plain_seconds = time.perf_counter() - start

    cores = os.cpu_count() or 1
    timings: dict[str, float] = {}
    steps: dict[str, StepTimes] = {}
    default_workers = ClassGrader(plain_copy, progress=False).workers
    for label, figures in (("default", False), ("figures", True)):
        root = work / f"classroom-{label}"
        shutil.copytree(plain_copy, root)
        grader = ClassGrader(root, figures=figures, feedback=False, progress=False)
        start = time.perf_counter()
        grader.grade(list(ASSIGNMENTS), log=lambda _: None)
        timings[label] = time.perf_counter() - start
        steps[label] = grader.step_times
    # The same class once more, every hand-in recorded already: what a run costs by itself.
    again = ClassGrader(work / "classroom-default", feedback=False, progress=False)
    start = time.perf_counter()
    again.grade(list(ASSIGNMENTS), log=lambda _: None)
    steps["nothing to grade"] = again.step_times
    timings["nothing to grade"] = time.perf_counter() - start
    ours_seconds = timings["default"]
    ours = work / "classroom-default"

    plain_scores = _gradebook_scores(f"sqlite:///{plain / 'gradebook.db'}")
    our_scores = _gradebook_scores(f"sqlite:///{ours / 'gradebook.db'}")
    honest = [k for k in plain_scores if not k[0].endswith(("patched", "deleted_test", "invalid"))]
    same_honest = all(plain_scores[k] == our_scores.get(k) for k in honest)
    fooled = sorted({k[0] for k in plain_scores if k[0].endswith("patched") and plain_scores[k]})
    points_plain = sum(v or 0 for k, v in plain_scores.items() if k[0].endswith("patched"))
    points_ours = sum(v or 0 for k, v in our_scores.items() if k[0].endswith("patched"))
    shutil.rmtree(work, ignore_errors=True)

    per_bare = bare_total / len(executed) / len(ASSIGNMENTS)
    per_cells = cells_total / len(executed) / len(ASSIGNMENTS)
    per_plain = plain_seconds / notebooks
    per_ours = ours_seconds * cores / notebooks
    per_drawn = timings["figures"] * cores / notebooks
    lines = [
        "# Grading a class: sequential nbgrader against `python -m instructor.classroom`",
        "",
        f"{students} students x {len(ASSIGNMENTS)} notebooks ({notebooks} notebooks; "
        f"{kinds.count('solved')} solved, {kinds.count('untouched')} untouched, "
        f"{students - kinds.count('solved') - kinds.count('untouched')} hostile per notebook), "
        f"{cores} cores. Bare execution: nbclient, median of {repeats}, per notebook kind.",
        "",
        "| grader | wall (s) | cost per notebook (s) | vs bare execution | vs cells only |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| sequential `nbgrader autograde` | {plain_seconds:.1f} | {per_plain:.2f} | "
        f"{per_plain / per_bare:.2f}x | {per_plain / per_cells:.1f}x |",
        f"| classroom, {default_workers}-worker LocalCluster (default), sandboxed, figures as "
        f"text | {ours_seconds:.1f} | {per_ours:.2f} | {per_ours / per_bare:.2f}x | "
        f"{per_ours / per_cells:.1f}x |",
        f"| the same with `--figures` (figures drawn, as nbgrader does) | "
        f"{timings['figures']:.1f} | {per_drawn:.2f} | {per_drawn / per_bare:.2f}x | "
        f"{per_drawn / per_cells:.1f}x |",
        f"| bare execution (sum, one after another) | {bare_total:.1f} | {per_bare:.2f} | 1.00x | "
        f"{per_bare / per_cells:.1f}x |",
        "",
        f"- Speed-up over sequential nbgrader: **{plain_seconds / ours_seconds:.2f}x** "
        f"(default), {plain_seconds / timings['figures']:.2f}x with `--figures`.",
        "- The class grader leaves figures as their text by default (no grade depends on "
        "them); nbgrader and bare execution draw them.",
        "- The class grader's kernels: "
        + (
            "forked from one zygote per worker, which imported torch and the rest once "
            "(root with bubblewrap: docs/instructors.md)."
            if zygote_available()
            else "each started from scratch (no zygote: not root, or no bubblewrap)."
        ),
        "- Cost per notebook: core-seconds, wall time x cores / notebooks for the classroom "
        "grader (it uses every core), wall time / notebooks for the sequential ones; the "
        "invalid files are not executed by either grader and are left out of the bare sum.",
        f"- Cells only: {per_cells:.2f} s per notebook on average: the rest of bare execution "
        "is kernel start and imports.",
        f"- Grades identical for every honest submission: {'yes' if same_honest else 'NO'} "
        f"({len(honest)} graded cells).",
        f"- Hostile always-true comparisons: {points_plain:g} points from plain nbgrader "
        f"({len(fooled)} students fooled it), {points_ours:g} from the classroom grader.",
    ]
    lines += ["", *step_table(steps, timings)]
    text = "\n".join(lines) + "\n"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m instructor.benchmark_class_grading")
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=BENCHMARKS / "grading.md")
    args = parser.parse_args(argv)
    print(run(args.students, args.repeats, args.output))


if __name__ == "__main__":
    main()
