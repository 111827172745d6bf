"""Item analysis of a graded class, from the recorded summaries: ``reports/items.*``.

What the class got wrong, per assignment, test cell, concept question and written answer,
computed with numpy from what :mod:`.records` holds (no grading again) and the registry
(``course.toml``, :mod:`instructor.registry`), which says which cell tests which graded
function and which cells are questions. :func:`.items_html.write_items` writes
``items.csv`` (one row per statistic), ``items.html``, ``items_anonymous.html`` and
``items_<assignment>.png``.

Per assignment (the hand-ins' recorded scores, awaiting written answers counted 0 as
nbgrader sums them; before any late penalty): ``n``, ``mean``, ``median``, ``sd`` (the
sample standard deviation, divided by n - 1 as Moodle's), ``share_late``.

Per test cell (autograded): ``n`` (hand-ins with a grade for it), ``passed``, ``failed``,
``zeroed``, ``not_run`` (:class:`.records.CellOutcome`), ``share_passing`` and
``points_lost`` (max score less score, summed; a cell awaiting a grader counts nothing).
Of the failed, ``failed_visible`` and ``failed_hidden``: where the grader recorded which
part of the cell failed (:class:`.records.CellSeen`: hidden where the cell had printed the
line that ends its visible part; a record written before it was kept says neither). A
function that passes its visible tests and fails its hidden ones in many hand-ins points at
a missing visible test: the cells are ordered by share failing the hidden part, then share
failed, then points lost.

Per named mistake (``kind`` ``mistake``, the ``cell`` column its tag, ``item`` the function):
``students``, the hand-ins whose test cells of that function showed its message (the tags
the grader recorded, :mod:`instructor.mistake_tags`), and ``share`` of the hand-ins;
ordered by count.

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

And for a choice question (its ``options`` in ``course.toml``), from the answers the grader
read from the kernel (:attr:`.records.CellSeen.answer`): ``answers`` (hand-ins with one
recorded), ``option_<letter>`` and ``other`` (not one of its letters), each a share of
them, and ``option_<letter>_upper`` and ``_lower``, the shares in the upper and lower 27 %.
A wrong option is flagged where no one chose it, or where the upper group chose it more
often than the lower one (a distractor that draws the strongest students); the right one
where the upper group chose it less often. Per written answer: ``graded``,
``awaiting``, ``unanswered`` and ``points_<p>``, the number of answers given p points by
hand; where answers were graded with the rubric's items (``instructor.question_grading``,
its store ``rubric_grading.sqlite`` in the course root), ``rubric_graded``, the graded
answers whose saved score is still the gradebook's (a score changed in formgrader since
leaves its items out), and ``rubric_<item>``, how many of them had the item applied.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from nbgrader.api import MissingEntry

from instructor.classroom.grader.records import (
    CellGrade,
    CellOutcome,
    CellSeen,
    FailedPart,
    HandInSummary,
    cell_outcome,
)
from instructor.registry import Course, RegistryError, load

if TYPE_CHECKING:
    from instructor.classroom.grader.course import NbgraderCourse

ItemKind = Literal["test", "concept", "written"]

ITEMS_HEADER = ("assignment", "kind", "notebook", "item", "cell", "statistic", "value")

UPPER_LOWER = 0.27
"""The share of hand-ins in each of the upper and lower groups (Kelley, 1939)."""

NOT_RECORDED = (
    "Not recorded, so not shown: the rubric items of a written answer graded in formgrader "
    "(only the question grading tool keeps them), and for hand-ins graded before the grader "
    "kept them, the part of a failed cell that failed, the named mistakes and the chosen "
    "options."
)

RubricKey = tuple[str, str, str, str]
"""(assignment, notebook, question, student)."""
Saved = dict[RubricKey, tuple[tuple[str, ...], float]]
"""The rubric items saved for each answer, and the score saved with them."""


@dataclass(frozen=True)
class Item:
    """What a graded cell tests: a graded function (``test``), a question."""

    kind: ItemKind
    name: str
    options: str | None = None
    """A choice question's letters (``course.toml``); None otherwise."""
    answer: str | None = None
    """A choice question's right letter."""


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
        known |= {
            f"test_{q.name}": Item("concept", q.name, q.options, q.answer)
            for q in entry.concept_questions
        }
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
    seen: np.ndarray
    """:class:`.records.CellSeen` of each hand-in and cell the grader ran; None elsewhere."""
    rubric: np.ndarray
    """The rubric items applied to each hand-in's written answer (a tuple) where its saved
    score is the gradebook's; None elsewhere."""

    @classmethod
    def of(
        cls,
        assignment: str,
        summaries: list[HandInSummary],
        late: set[tuple[str, str]] | None = None,
        rubrics: Saved | None = None,
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
        seen = {
            (s.student, (name, c.test)): c
            for s in own
            for name, record in s.notebooks.items()
            for c in record.seen
        }
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
        applied = [
            [_applied(rubrics or {}, assignment, s, c, found[i][j][0]) for j, c in enumerate(cells)]
            for i, s in enumerate(students)
        ]
        return cls(
            assignment,
            students,
            cells,
            score,
            np.nan_to_num(np.nanmax(maxima, axis=0, initial=0.0)),
            np.array([[str(o) for _, o in r] for r in found], dtype=object).reshape(score.shape),
            np.array([s.score for s in own], dtype=float),
            None if late is None else np.array([(s.student, assignment) in late for s in own]),
            np.array([[seen.get((s, c)) for c in cells] for s in students], dtype=object).reshape(
                len(students), len(cells)
            ),
            np.array(applied, dtype=object).reshape(len(students), len(cells)),
        )

    def ranked(self, rows: np.ndarray) -> np.ndarray:
        """The indices of ``rows`` (a mask) from the lowest hand-in score to the highest,
        ties by student id."""
        index = np.flatnonzero(rows)
        students = np.array(self.students, dtype=object)[index]
        return index[np.lexsort((students, self.total[index]))]


def _applied(
    rubrics: Saved, assignment: str, student: str, cell: tuple[str, str], grade: CellGrade | None
) -> tuple[str, ...] | None:
    """The items saved for the answer, where the saved score is still its score."""
    saved = rubrics.get((assignment, cell[0], cell[1], student))
    if saved is None or grade is None or grade.score is None:
        return None
    items, score = saved
    return items if math.isclose(score, grade.score) else None


def rubric_items(root: Path) -> Saved:
    """The rubric items each answer was graded with, and the score saved with them, from the
    question grading tool's store in ``root`` (``{}`` without one)."""
    from instructor.question_grading import STORE_NAME

    path = root / STORE_NAME
    if not path.is_file():
        return {}
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as store:
        rows = store.execute(
            "SELECT assignment, notebook, question, student, items, score FROM saves"
        ).fetchall()
    return {(a, n, q, s): (tuple(json.loads(items)), score) for a, n, q, s, items, score in rows}


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


def _failed_part(seen: np.ndarray, part: FailedPart) -> np.ndarray:
    return np.array([isinstance(c, CellSeen) and c.failed == part for c in seen], dtype=bool)


def autograded_stats(table: ClassCells, column: int, item: Item) -> Stats:
    outcome = table.outcome[:, column]
    failed = outcome == str(CellOutcome.FAILED)
    seen = table.seen[:, column]
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
        "failed_visible": int(np.count_nonzero(failed & _failed_part(seen, FailedPart.VISIBLE))),
        "failed_hidden": int(np.count_nonzero(failed & _failed_part(seen, FailedPart.HIDDEN))),
        "share_passing": counts["passed"] / n if n else math.nan,
        "points_lost": float(np.nansum(lost)),
    }


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN where either does not vary (np.corrcoef would divide by 0)."""
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _group(n: int) -> int:
    """The size of each of the upper and lower groups of ``n`` hand-ins."""
    return max(1, round(UPPER_LOWER * n))


def concept_stats(table: ClassCells, column: int, item: Item) -> Stats:
    answered = ~np.isnan(table.score[:, column])
    x = table.score[answered, column]
    total = table.total[answered]
    m = table.max_score[column] or 1.0
    n = x.size
    if not n:
        return {"n": 0}
    k = _group(n)
    ranked = table.score[table.ranked(answered), column]  # by score, ties by student id
    return {
        "n": n,
        "facility": float(np.mean(x) / m),
        "sd": float(np.std(x / m, ddof=1)) if n > 1 else math.nan,
        "discrimination": float((np.mean(ranked[-k:]) - np.mean(ranked[:k])) / m)
        if n > 1
        else math.nan,
        "point_biserial": _correlation(x, total - x),
        **option_stats(table, column, item),
    }


def option_stats(table: ClassCells, column: int, item: Item) -> Stats:
    """A choice question's options: the share choosing each, overall and in the upper and
    lower 27 % (of the hand-ins whose answer the grader recorded)."""
    if not item.options:
        return {}
    answers = np.array(
        [c.answer if isinstance(c, CellSeen) else None for c in table.seen[:, column]],
        dtype=object,
    )
    recorded = np.array([a is not None for a in answers], dtype=bool)
    n = int(np.count_nonzero(recorded))
    if not n:
        return {"answers": 0}
    ranked = answers[table.ranked(recorded)]
    k = _group(n)
    lower, upper = ranked[:k], ranked[-k:]
    letters = list(item.options)
    stats: Stats = {"answers": n}
    for letter in letters:
        stats[f"option_{letter}"] = float(np.mean(answers[recorded] == letter))
        stats[f"option_{letter}_upper"] = float(np.mean(upper == letter))
        stats[f"option_{letter}_lower"] = float(np.mean(lower == letter))
    stats["other"] = float(np.mean(~np.isin(answers[recorded], letters)))
    return stats


def option_flags(item: Item, stats: Stats) -> tuple[str, ...]:
    """What the options' shares flag: a distractor no one chose, one the upper group chose
    more often than the lower, a right answer the upper group chose less often."""
    flags = []
    for letter in (item.options or "") if stats.get("answers") else "":
        share = stats[f"option_{letter}"]
        upper, lower = stats[f"option_{letter}_upper"], stats[f"option_{letter}_lower"]
        if letter == item.answer:
            if upper < lower:
                flags.append(f"({letter}), the right answer, is chosen less by the upper group")
        elif share == 0:
            flags.append(f"({letter}) is chosen by no one")
        elif upper > lower:
            flags.append(f"({letter}) is chosen more by the upper group than the lower")
    return tuple(flags)


def written_stats(table: ClassCells, column: int, item: Item) -> Stats:
    outcome = table.outcome[:, column]
    graded = outcome == str(CellOutcome.GRADED)
    points, counts = np.unique(table.score[graded, column], return_counts=True)
    applied = [items for items in table.rubric[graded, column] if items is not None]
    names, uses = np.unique([i for items in applied for i in items], return_counts=True)
    return {
        "graded": int(np.count_nonzero(graded)),
        "awaiting": int(np.count_nonzero(outcome == str(CellOutcome.AWAITING))),
        "unanswered": int(np.count_nonzero(outcome == str(CellOutcome.UNANSWERED))),
        **{f"points_{p:g}": int(c) for p, c in zip(points, counts, strict=True)},
        **({"rubric_graded": len(applied)} if applied else {}),
        **{f"rubric_{i}": int(c) for i, c in zip(names, uses, strict=True)},
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
    flags: tuple[str, ...] = ()
    """A choice question's options that need a look (:func:`option_flags`)."""


@dataclass(frozen=True)
class NamedMistake:
    """A named mistake of one function, and the hand-ins whose test cells showed it."""

    tag: str
    function: str
    text: str
    """The message, ``{}`` where a value goes (the tag where the message is not known)."""
    students: tuple[str, ...]
    cells: tuple[str, ...]


@dataclass(frozen=True)
class AssignmentItems:
    """One assignment's item analysis."""

    table: ClassCells
    stats: Stats
    items: tuple[CellItem, ...]
    """Test cells (most failed first), then concept questions, then written answers."""
    mistakes: tuple[NamedMistake, ...] = ()
    """The named mistakes the grader recorded, the most made first."""

    def of_kind(self, kind: ItemKind) -> tuple[CellItem, ...]:
        return tuple(i for i in self.items if i.item.kind == kind)


def _order(item: CellItem) -> tuple[int, float, float, float, str, str]:
    kind = ("test", "concept", "written").index(item.item.kind)
    s = item.stats
    n = s.get("n") or 1
    hidden, failed = -s.get("failed_hidden", 0) / n, -s.get("failed", 0) / n
    return kind, hidden, failed, -s.get("points_lost", 0.0), item.notebook, item.cell


def named_mistakes(
    table: ClassCells, registry: Course | None, texts: dict[str, str]
) -> tuple[NamedMistake, ...]:
    """Per tag and function, the hand-ins whose cells showed it, the most made first."""
    found: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for (row, column), seen in np.ndenumerate(table.seen):
        if not isinstance(seen, CellSeen):
            continue
        notebook, cell = table.cells[column]
        function = item_of(cell, registry, notebook).name
        for tag in seen.tags:
            students, cells = found.setdefault((tag, function), (set(), set()))
            students.add(table.students[row])
            cells.add(cell)
    mistakes = [
        NamedMistake(tag, function, texts.get(tag, tag), tuple(sorted(s)), tuple(sorted(c)))
        for (tag, function), (s, c) in found.items()
    ]
    return tuple(sorted(mistakes, key=lambda m: (-len(m.students), m.function, m.tag)))


def analyse(
    assignment: str,
    summaries: list[HandInSummary],
    registry: Course | None = None,
    late: set[tuple[str, str]] | None = None,
    texts: dict[str, str] | None = None,
    rubrics: Saved | None = None,
) -> AssignmentItems:
    """The item analysis of ``assignment`` from ``summaries``; ``late``: (student,
    assignment) of the late hand-ins, None where not known; ``texts``: the message of each
    mistake tag (:func:`mistake_texts`)."""
    table = ClassCells.of(assignment, summaries, late, rubrics)
    students = np.array(table.students, dtype=object)
    items = []
    for column, (notebook, cell) in enumerate(table.cells):
        item = item_of(cell, registry, notebook)
        outcome = table.outcome[:, column]
        failing = (outcome != "") & (outcome != str(CellOutcome.PASSED))
        stats = STATS[item.kind](table, column, item)
        items.append(
            CellItem(
                notebook,
                cell,
                item,
                stats,
                () if item.kind == "written" else tuple(students[failing]),
                option_flags(item, stats),
            )
        )
    return AssignmentItems(
        table,
        assignment_stats(table),
        tuple(sorted(items, key=_order)),
        named_mistakes(table, registry, texts or {}),
    )


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
        n = a.stats["n"]
        rows += [
            [name, "mistake", "", m.function, m.tag, k, value(v)]
            for m in a.mistakes
            for k, v in (("students", len(m.students)), ("share", len(m.students) / n))
        ]
    return rows


def mistake_texts(registry: Course | None) -> dict[str, str]:
    """The message of each tag of the course's table (:func:`instructor.mistake_tags.
    course_table`), of the notebooks whose solution is here; the generic ones otherwise."""
    from instructor.mistake_tags import GENERIC

    texts = {tag: m.text for tag, m in GENERIC.items()}
    for notebook in registry.ids if registry is not None else ():
        texts |= _notebook_texts(notebook)
    return texts


@functools.lru_cache
def _notebook_texts(notebook: str) -> dict[str, str]:
    """The tags of ``notebook``'s solution (read once per process: 0.1 s a notebook)."""
    from instructor.mistake_tags import course_table

    try:
        return {tag: m.text for tag, m in course_table([notebook]).items()}
    except (OSError, ValueError, SyntaxError):  # not this course's, or no solution here
        return {}


def course_registry() -> Course | None:
    """This course's registry, or None where it cannot be read: the cells are then known
    by their names (:func:`item_of`)."""
    try:
        return load()
    except RegistryError:
        return None


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
