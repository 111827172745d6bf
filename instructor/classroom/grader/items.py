"""Item analysis of a graded class, from the recorded summaries: ``reports/items.*``.

What the class got wrong, per assignment, test cell, concept question and written answer,
computed with numpy from what :mod:`.records` holds (no grading again) and the registry
(``course.toml``, :mod:`instructor.registry`), which says which cell tests which graded
function and which cells are questions. :func:`write_items` writes ``items.csv`` (one row per
statistic), ``items.html``, ``items_anonymous.html`` and ``items_<assignment>.png``
(:mod:`.items_html`).

Per assignment (the hand-ins' recorded scores, awaiting written answers counted 0 as
nbgrader sums them; before any late penalty): ``n``, ``mean``, ``median``, ``sd`` (the
sample standard deviation, divided by n - 1 as Moodle's), ``share_late``.

Per test cell (autograded): ``n`` (hand-ins with a grade for it), ``passed``, ``failed``,
``zeroed``, ``not_run`` (:class:`.records.CellOutcome`), ``share_passing`` and
``points_lost`` (max score less score, summed; a cell awaiting a grader counts nothing).
The records hold one score per cell, and a cell's visible and hidden tests run together
(nbgrader's ``### BEGIN HIDDEN TESTS``), so which of the two failed is not recorded: the
cells are ordered by share failed, then points lost.

Per concept question (its test cell ``test_<question>``; item score x, hand-in score T,
rest of the assignment X = T - x, max score m), after Moodle's quiz statistics
(https://docs.moodle.org/dev/Quiz_statistics_calculations):

- ``facility``: mean(x) / m (Moodle's facility index F = 100 (mean x - x_min) / (x_max -
  x_min), with x_min = 0, as a share);
- ``sd``: the sample standard deviation of x / m;
- ``discrimination``: the upper-lower index (Kelley's 27 %): the hand-ins ranked by T (ties
  by student id), k = max(1, round(0.27 n)) lowest and highest; (mean x of the upper k -
  mean x of the lower k) / m. Moodle's early item analysis split into thirds;
- ``point_biserial``: Pearson's r(x, X), the item against the rest of the assignment: what
  Moodle's report names its discrimination index (D = 100 r(x, X)). Empty where x or X does
  not vary.

Which option each student chose is not recorded (a concept answer's value stays in the
kernel and the autograded notebook; the summaries keep its score only), and ``course.toml``
lists no options: the share per option is not computed. Per written answer: ``graded``,
``awaiting``, ``unanswered`` and ``points_<p>``, the number of answers given p points by
hand; which rubric items were applied is not recorded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from nbgrader.api import MissingEntry

from instructor.classroom.grader.records import CellOutcome, HandInSummary, cell_outcome
from instructor.lms.csv_safety import write_rows
from instructor.registry import Course, RegistryError, load

if TYPE_CHECKING:
    from instructor.classroom.grader.course import NbgraderCourse

ItemKind = Literal["test", "concept", "written"]

ITEMS_HEADER = ("assignment", "kind", "notebook", "item", "cell", "statistic", "value")

UPPER_LOWER = 0.27
"""The share of hand-ins in each of the upper and lower groups (Kelley, 1939)."""

NOT_RECORDED = (
    "Not recorded, so not shown: which option each student chose in a concept question (the "
    "records keep its score only), whether a failed test cell failed its visible or its "
    "hidden tests (they run as one cell), and which rubric items a written answer got."
)


@dataclass(frozen=True)
class Item:
    """What a graded cell tests: a graded function (``test``), a question."""

    kind: ItemKind
    name: str


def item_of(cell: str, registry: Course | None, notebook: str) -> Item:
    """The item of ``notebook``'s graded ``cell``: from the registry where it lists the
    notebook, otherwise from the course's names (``test_<function>[_<n>]``,
    ``test_q_<what>``, ``written_<what>``)."""
    if registry is not None and notebook in registry.ids:
        entry = registry.notebook(notebook)
        known = {
            (f"test_{e.name}" + (f"_{i + 1}" if i else "")): Item("test", e.name)
            for e in entry.exercises
            for i in range(len(e.cell_points))
        }
        known |= {f"test_{q.name}": Item("concept", q.name) for q in entry.concept_questions}
        known |= {q.name: Item("written", q.name) for q in entry.written_answers}
        if cell in known:
            return known[cell]
    if cell.startswith("written_"):
        return Item("written", cell)
    if cell.startswith("test_q_"):
        return Item("concept", cell.removeprefix("test_"))
    return Item("test", re.sub(r"_\d+$", "", cell.removeprefix("test_")))


@dataclass(frozen=True)
class ClassCells:
    """One assignment's graded cells: hand-ins (rows) x cells (columns)."""

    assignment: str
    students: tuple[str, ...]
    cells: tuple[tuple[str, str], ...]
    """(notebook, cell), sorted."""
    score: np.ndarray
    """NaN where the hand-in has no score for the cell (not recorded, awaiting a grader)."""
    max_score: np.ndarray
    """Per cell: the largest max score recorded."""
    outcome: np.ndarray
    """:class:`.records.CellOutcome` values; ``""`` where the hand-in has no grade for it."""
    total: np.ndarray
    """Each hand-in's recorded score."""
    late: np.ndarray | None
    """Whether each hand-in was late; None where not known."""

    @classmethod
    def of(
        cls,
        assignment: str,
        summaries: list[HandInSummary],
        late: set[tuple[str, str]] | None = None,
    ) -> ClassCells:
        own = sorted((s for s in summaries if s.assignment == assignment), key=lambda s: s.student)
        grades = {
            (s.student, (name, g.cell)): (g, cell_outcome(record, g))
            for s in own
            for name, record in s.notebooks.items()
            for g in record.cells or ()
        }
        students = tuple(s.student for s in own)
        cells = tuple(sorted({key for _, key in grades}))
        nan = (None, "")
        found = [[grades.get((s, c), nan) for c in cells] for s in students]
        score = np.array(
            [[np.nan if g is None or g.score is None else g.score for g, _ in r] for r in found],
            dtype=float,
        ).reshape(len(students), len(cells))
        maxima = np.array(
            [[np.nan if g is None else (g.max_score or 0.0) for g, _ in r] for r in found],
            dtype=float,
        ).reshape(len(students), len(cells))
        return cls(
            assignment,
            students,
            cells,
            score,
            np.nan_to_num(np.nanmax(maxima, axis=0, initial=0.0)),
            np.array([[str(o) for _, o in r] for r in found], dtype=object).reshape(score.shape),
            np.array([s.score for s in own], dtype=float),
            None if late is None else np.array([(s.student, assignment) in late for s in own]),
        )


Stats = dict[str, float]


def assignment_stats(table: ClassCells) -> Stats:
    total = table.total
    n = total.size
    return {
        "n": n,
        "max_score": float(table.max_score.sum()),
        "mean": float(np.mean(total)) if n else math.nan,
        "median": float(np.median(total)) if n else math.nan,
        "sd": float(np.std(total, ddof=1)) if n > 1 else math.nan,
        "share_late": math.nan if table.late is None or not n else float(np.mean(table.late)),
    }


def autograded_stats(table: ClassCells, column: int) -> Stats:
    outcome = table.outcome[:, column]
    score = table.score[:, column]
    n = int(np.count_nonzero(outcome != ""))
    counts = {
        key: int(np.count_nonzero(outcome == str(member)))
        for key, member in (
            ("passed", CellOutcome.PASSED),
            ("failed", CellOutcome.FAILED),
            ("zeroed", CellOutcome.ZEROED),
            ("not_run", CellOutcome.NOT_RUN),
        )
    }
    lost = table.max_score[column] - score
    return {
        "n": n,
        **counts,
        "share_passing": counts["passed"] / n if n else math.nan,
        "points_lost": float(np.nansum(lost)),
    }


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN where either does not vary (np.corrcoef would divide by 0)."""
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def concept_stats(table: ClassCells, column: int) -> Stats:
    answered = ~np.isnan(table.score[:, column])
    x = table.score[answered, column]
    total = table.total[answered]
    students = np.array(table.students, dtype=object)[answered]
    m = table.max_score[column] or 1.0
    n = x.size
    if not n:
        return {"n": 0}
    k = max(1, round(UPPER_LOWER * n))
    ranked = x[np.lexsort((students, total))]  # by score, ties by student id
    return {
        "n": n,
        "facility": float(np.mean(x) / m),
        "sd": float(np.std(x / m, ddof=1)) if n > 1 else math.nan,
        "discrimination": float((np.mean(ranked[-k:]) - np.mean(ranked[:k])) / m)
        if n > 1
        else math.nan,
        "point_biserial": _correlation(x, total - x),
    }


def written_stats(table: ClassCells, column: int) -> Stats:
    outcome = table.outcome[:, column]
    graded = outcome == str(CellOutcome.GRADED)
    points, counts = np.unique(table.score[graded, column], return_counts=True)
    return {
        "graded": int(np.count_nonzero(graded)),
        "awaiting": int(np.count_nonzero(outcome == str(CellOutcome.AWAITING))),
        "unanswered": int(np.count_nonzero(outcome == str(CellOutcome.UNANSWERED))),
        **{f"points_{p:g}": int(c) for p, c in zip(points, counts, strict=True)},
    }


STATS = {"test": autograded_stats, "concept": concept_stats, "written": written_stats}


@dataclass(frozen=True)
class CellItem:
    """One graded cell's statistics."""

    notebook: str
    cell: str
    item: Item
    stats: Stats
    failing: tuple[str, ...]
    """The students whose hand-in failed the cell (not passed, where it was graded)."""


@dataclass(frozen=True)
class AssignmentItems:
    """One assignment's item analysis."""

    table: ClassCells
    stats: Stats
    items: tuple[CellItem, ...]
    """Test cells (most failed first), then concept questions, then written answers."""

    def of_kind(self, kind: ItemKind) -> tuple[CellItem, ...]:
        return tuple(i for i in self.items if i.item.kind == kind)


def _order(item: CellItem) -> tuple[int, float, float, str, str]:
    kind = ("test", "concept", "written").index(item.item.kind)
    s = item.stats
    failed = -(s.get("failed", 0) / s["n"]) if s.get("n") else 0.0
    return kind, failed, -s.get("points_lost", 0.0), item.notebook, item.cell


def analyse(
    assignment: str,
    summaries: list[HandInSummary],
    registry: Course | None = None,
    late: set[tuple[str, str]] | None = None,
) -> AssignmentItems:
    """The item analysis of ``assignment`` from ``summaries``; ``late``: (student,
    assignment) of the late hand-ins, None where not known."""
    table = ClassCells.of(assignment, summaries, late)
    students = np.array(table.students, dtype=object)
    items = []
    for column, (notebook, cell) in enumerate(table.cells):
        item = item_of(cell, registry, notebook)
        outcome = table.outcome[:, column]
        failing = (outcome != "") & (outcome != str(CellOutcome.PASSED))
        items.append(
            CellItem(
                notebook,
                cell,
                item,
                STATS[item.kind](table, column),
                () if item.kind == "written" else tuple(students[failing]),
            )
        )
    return AssignmentItems(table, assignment_stats(table), tuple(sorted(items, key=_order)))


def csv_rows(analyses: list[AssignmentItems]) -> list[list[object]]:
    """``items.csv``: a header, then one row per statistic (empty where undefined)."""

    def value(v: float) -> str:
        return "" if isinstance(v, float) and math.isnan(v) else f"{v:.6g}"

    rows: list[list[object]] = [list(ITEMS_HEADER)]
    for a in analyses:
        name = a.table.assignment
        rows += [[name, "assignment", "", "", "", k, value(v)] for k, v in a.stats.items()]
        rows += [
            [name, i.item.kind, i.notebook, i.item.name, i.cell, k, value(v)]
            for i in a.items
            for k, v in i.stats.items()
        ]
    return rows


def course_registry() -> Course | None:
    """This course's registry, or None where it cannot be read: the cells are then known
    by their names (:func:`item_of`)."""
    try:
        return load()
    except RegistryError:
        return None


def write_items(
    folder: Path,
    summaries: list[HandInSummary],
    *,
    registry: Course | None = None,
    late: set[tuple[str, str]] | None = None,
) -> list[AssignmentItems]:
    """``items.csv``, ``items.html``, ``items_anonymous.html`` and one figure per assignment
    (``items_<assignment>.png``) in ``folder``; return the analyses."""
    from instructor.classroom.grader.items_html import figure_png, items_html

    registry = registry if registry is not None else course_registry()
    assignments = list(dict.fromkeys(s.assignment for s in summaries))
    analyses = [analyse(a, summaries, registry, late) for a in assignments]
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / "items.csv", csv_rows(analyses))
    figures = {a.table.assignment: figure_png(a) for a in analyses}
    for assignment, (png, _) in figures.items():
        (folder / f"items_{_file_name(assignment)}.png").write_bytes(png)
    (folder / "items.html").write_text(items_html(analyses, figures, anonymous=False))
    (folder / "items_anonymous.html").write_text(items_html(analyses, figures, anonymous=True))
    return analyses


def _file_name(assignment: str) -> str:
    """``assignment`` as part of a file name (an assignment id is the course's, but not
    every course names them as this one does)."""
    return re.sub(r"[^\w.-]", "_", assignment)


def late_hand_ins(course: NbgraderCourse, summaries: list[HandInSummary]) -> set[tuple[str, str]]:
    """(student, assignment) of each hand-in the gradebook has as submitted after its due
    date, a penalty or not (one without a due date is never late)."""
    late = set()
    with course.gradebook() as gb:
        for summary in summaries:
            try:
                submission = gb.find_submission(summary.assignment, summary.student)
            except MissingEntry:  # not in the gradebook: not known to be late
                continue
            if submission.total_seconds_late > 0:
                late.add((summary.student, summary.assignment))
    return late


def recorded_items(
    root: Path, assignments: list[str], db_url: str | None = None
) -> list[AssignmentItems]:
    """``python -m instructor.classroom items``: the report of the students present in
    ``submitted/``, as ``make grade`` writes it, from the records and the gradebook's
    scores (given by hand since included), grading nothing."""
    from instructor.classroom.grader.course import from_gradebook
    from instructor.classroom.grader.pipeline import ClassGrader

    grader = ClassGrader(root, db_url=db_url, feedback=False, progress=False)
    present = {(a, s) for a in assignments for s in grader.present(a)}
    recorded = [s for s in grader.state.load(assignments) if (s.assignment, s.student) in present]
    summaries = from_gradebook(grader.course, recorded)
    late = late_hand_ins(grader.course, summaries)
    return write_items(grader.reports, summaries, late=late)
