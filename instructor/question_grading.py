"""Written answers graded question by question with rubric items, into nbgrader's gradebook.

One question across the class: each answer is graded by applying items of the question's
rubric (:mod:`instructor.rubrics`), with a free adjustment and comment. A save writes the
score into nbgrader's gradebook (``Grade.manual_score``, as formgrader does) and the items'
notes, then the comment, into the answer cell's comment (``Comment.manual_comment``), which
nbgrader's feedback shows under the student's answer: formgrader, ``nbgrader export``, the
class grader's reports and LMS exports and the feedback all read the same scores. The
reference answer and the items' criteria never leave the grader's side.

What only this module knows is kept in a small SQLite file in the course root
(:data:`STORE_NAME`, next to ``gradebook.db``): which items each answer got, its adjustment
and free comment, who saved it and when, a version per answer, the rubric items as the
scores were computed (so that an item whose points or note changed in ``solutions/`` is
found, and every answer it was applied to regraded: :meth:`QuestionGrading.plan_regrade`,
:meth:`QuestionGrading.regrade`) and the history of every score it wrote.

Several graders: every read of an answer carries an ``etag``, a digest of the answer's text,
its score and comment in the gradebook and its version here; a save (or a CSV upload) whose
etag is no longer the answer's (another grader saved it, formgrader changed its score, the
student's hand-in was graded again) is refused with :class:`Conflict`, and nothing is
written. Saves are serialised by a write lock on the store.

Offline: :meth:`QuestionGrading.download_csv` writes one question's answers (anonymised ids,
the answer's text, its etag and what it has so far); :meth:`QuestionGrading.upload_csv`
reads back items, adjustments, scores and comments, names every bad row and writes nothing
when one is bad.

``python -m instructor.question_grading`` (run in the nbgrader course root, ``autograder/``)
lists the questions, downloads and uploads CSVs and regrades after a rubric change.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import io
import json
import math
import secrets
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat

from instructor.feedback import SHOWN_AS_TEXT
from instructor.lms.csv_safety import neutralised, safe_cell
from instructor.rubrics import Rubric, RubricError, notebook_rubrics, points_text

__all__ = [
    "CSV_COLUMNS",
    "STORE_NAME",
    "Answer",
    "AnswerKey",
    "Conflict",
    "CsvError",
    "GradingError",
    "QuestionGrading",
    "QuestionSummary",
    "Regrade",
]

STORE_NAME = "rubric_grading.sqlite"
"""The file in the course root that keeps the applied items (git-ignored with the rest)."""

CSV_COLUMNS = (
    "answer_id",
    "etag",
    "state",
    "max_score",
    "score",
    "items",
    "adjustment",
    "comment",
    "answer",
)
"""A download's columns; an upload reads ``answer_id``, ``etag``, ``items``, ``adjustment``,
``score`` and ``comment`` (the others may be left in or out)."""

HISTORY_COLUMNS = ("student", "old_score", "new_score", "items", "grader", "reason", "saved_at")
"""What :meth:`QuestionGrading.history` gives for each score written (and the CLI's CSV)."""

WAITING, GRADED, UNANSWERED = "waiting", "graded", "unanswered"


class GradingError(ValueError):
    """A request the grading cannot do (an unknown question, answer or item)."""


class Conflict(GradingError):
    """A save on an answer that changed since it was read; nothing was written."""


class CsvError(GradingError):
    """An upload with bad rows (each named in ``problems``); nothing was written."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} bad row(s), nothing written:\n" + "\n".join(problems))


@dataclass(frozen=True, order=True)
class AnswerKey:
    assignment: str
    notebook: str
    question: str
    student: str


@dataclass(frozen=True)
class Answer:
    """One student's answer to a written question, as it stands now.

    ``state`` is ``waiting`` (answered, no score yet), ``graded`` (a score given by hand,
    here or in formgrader) or ``unanswered`` (left as released: nbgrader's 0). ``items``,
    ``adjustment``, ``comment`` (the free comment), ``grader`` and ``saved_at`` are this
    module's record; a score given in formgrader has none of them.
    """

    key: AnswerKey
    anonymous_id: str
    text: str | None
    """The student's text as recorded (the autograded notebook's cell, the grader's
    "shown as text" wrapping taken off); None where there is no autograded notebook."""
    max_score: float
    state: str
    score: float | None
    items: tuple[str, ...]
    adjustment: float
    comment: str
    grader: str | None
    saved_at: str | None
    etag: str


@dataclass(frozen=True)
class QuestionSummary:
    assignment: str
    notebook: str
    question: str
    points: float
    graded: int
    waiting: int
    unanswered: int


@dataclass(frozen=True)
class Regrade:
    """An answer that a changed rubric item was applied to: its score before and after."""

    answer: Answer
    items: tuple[str, ...]
    """The changed items applied to it."""
    new_score: float
    new_comment: str

    @property
    def score_changed(self) -> bool:
        return self.answer.score != self.new_score


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS saves (
  assignment TEXT, notebook TEXT, question TEXT, student TEXT,
  items TEXT NOT NULL, applied_as TEXT NOT NULL, adjustment REAL NOT NULL,
  comment TEXT NOT NULL, score REAL NOT NULL, grader TEXT NOT NULL, saved_at TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (assignment, notebook, question, student));
CREATE TABLE IF NOT EXISTS history (
  assignment TEXT, notebook TEXT, question TEXT, student TEXT,
  old_score REAL, new_score REAL NOT NULL, items TEXT NOT NULL, grader TEXT NOT NULL,
  reason TEXT NOT NULL, saved_at TEXT NOT NULL);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _unwrapped(source: str) -> str:
    """A written answer as the student wrote it: the class grader shows an answer holding
    HTML or a link as text (``instructor.feedback.inert_markdown``); this takes that off."""
    if not source.startswith(SHOWN_AS_TEXT + "\n\n"):
        return source
    fenced = source[len(SHOWN_AS_TEXT) + 2 :]
    fence = fenced[: len(fenced) - len(fenced.lstrip("`"))]
    if not fenced.startswith(fence + "text\n") or not fenced.endswith("\n" + fence):
        return source
    return fenced[len(fence) + 5 : -len(fence) - 1]


def feedback_comment(rubric: Rubric, items: Sequence[str], comment: str) -> str:
    """The comment nbgrader keeps and the feedback shows: one line per applied item (its
    points and note, never its criterion or the reference answer), then the free comment."""
    lines = [f"- ({rubric.item(i).points:+g}) {rubric.item(i).note}" for i in items]
    return "\n".join(
        [*lines, *([""] if lines and comment.strip() else []), comment.strip()]
    ).strip()


class QuestionGrading:
    """Grading by question in the nbgrader course at ``root`` (its ``nbgrader_config.py``
    says where the instructor notebooks and the gradebook are; ``db_url`` overrides the
    gradebook, as the class grader's ``--db``)."""

    def __init__(self, root: Path, *, db_url: str | None = None) -> None:
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config.loader import PyFileConfigLoader

        self.root = Path(root).resolve()
        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        self.coursedir = CourseDirectory(config=config)
        self.db_url = db_url or self.coursedir.db_url
        self.store_path = self.root / STORE_NAME
        self._rubric_cache: dict[Path, tuple[float, dict[str, Rubric]]] = {}
        self._text_cache: dict[tuple[Path, str], tuple[tuple[int, int], str | None]] = {}
        with closing(sqlite3.connect(self.store_path, timeout=30)) as connection:
            connection.executescript(SCHEMA)
        with self._store(write=True) as store:
            store.execute(
                "INSERT OR IGNORE INTO meta VALUES ('secret', ?)", (secrets.token_hex(16),)
            )
            found = store.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
        self._secret = bytes.fromhex(found[0])

    # -- storage ------------------------------------------------------------------------

    @contextmanager
    def _store(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The store; with ``write`` a transaction holding its write lock (one save at a
        time, across processes), committed at the end, rolled back on an error."""
        connection = sqlite3.connect(self.store_path, timeout=30, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()

    def _gradebook(self) -> Any:
        from nbgrader.api import Gradebook

        return Gradebook(self.db_url)

    # -- rubrics and questions ------------------------------------------------------------

    def _source(self, assignment: str, notebook: str) -> Path:
        folder = self.coursedir.format_path(self.coursedir.source_directory, ".", assignment)
        return Path(folder) / f"{notebook}.ipynb"

    def rubric(self, assignment: str, notebook: str, question: str) -> Rubric:
        """The question's rubric, from the instructor notebook (read again when it changed)."""
        path = self._source(assignment, notebook)
        try:
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            raise GradingError(f"no instructor notebook {path} for {assignment}") from None
        cached = self._rubric_cache.get(path)
        if cached is None or cached[0] != mtime:
            cached = (mtime, notebook_rubrics(nbformat.read(path, as_version=4), notebook))
            self._rubric_cache[path] = cached
        if question not in cached[1]:
            raise GradingError(f"{assignment}/{notebook} has no written question {question!r}")
        return cached[1][question]

    def questions(self) -> list[QuestionSummary]:
        """Every written question of the gradebook's assignments, with how many answers are
        graded, wait for a grader or were left unanswered."""
        from nbgrader.api import Assignment, GradeCell, Notebook

        summaries = []
        with self._gradebook() as gb:
            cells = (
                gb.db.query(Assignment.name, Notebook.name, GradeCell.name, GradeCell.max_score)
                .select_from(GradeCell)
                .join(GradeCell.notebook)
                .join(Notebook.assignment)
                .filter(GradeCell.cell_type == "markdown")
                .order_by(Assignment.name, Notebook.name, GradeCell.name)
                .all()
            )
            for assignment, notebook, question, points in cells:
                states = [
                    _state(auto, manual)
                    for auto, manual, _ in _grades(gb, assignment, notebook, question).values()
                ]
                summaries.append(
                    QuestionSummary(
                        assignment,
                        notebook,
                        question,
                        points,
                        states.count(GRADED),
                        states.count(WAITING),
                        states.count(UNANSWERED),
                    )
                )
        return summaries

    def find_question(self, assignment: str, question: str) -> tuple[str, Rubric]:
        """The notebook of ``assignment`` holding the written question, and its rubric."""
        from nbgrader.api import Assignment, GradeCell, Notebook

        with self._gradebook() as gb:
            found = (
                gb.db.query(Notebook.name)
                .join(GradeCell.notebook)
                .join(Notebook.assignment)
                .filter(Assignment.name == assignment, GradeCell.name == question)
                .filter(GradeCell.cell_type == "markdown")
                .first()
            )
        if found is None:
            raise GradingError(f"no written question {question!r} in {assignment} (gradebook)")
        return found[0], self.rubric(assignment, found[0], question)

    # -- reading answers ------------------------------------------------------------------

    def anonymous_id(self, key: AnswerKey) -> str:
        """The answer's id where names are hidden: the same for the same answer, and nothing
        a grader can turn back into the student without the store's secret."""
        message = f"id\0{key.assignment}\0{key.question}\0{key.student}".encode()
        return "a-" + hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:10]

    def _order(self, key: AnswerKey) -> str:
        message = f"order\0{key.assignment}\0{key.question}\0{key.student}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def _text(self, key: AnswerKey) -> str | None:
        """The answer's text in the autograded notebook (read again only when it changed)."""
        folder = self.coursedir.format_path(
            self.coursedir.autograded_directory, key.student, key.assignment
        )
        path = Path(folder) / f"{key.notebook}.ipynb"
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        cached = self._text_cache.get((path, key.question))
        if cached is not None and cached[0] == (stat.st_mtime_ns, stat.st_size):
            return cached[1]
        text = None
        try:
            cells = json.loads(path.read_bytes()).get("cells", [])
        except (OSError, ValueError, AttributeError):
            cells = []
        for cell in cells if isinstance(cells, list) else []:
            meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
            nbgrader = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
            if (
                cell.get("cell_type") == "markdown"
                and isinstance(nbgrader, dict)
                and nbgrader.get("grade_id") == key.question
            ):
                source = cell.get("source", "")
                text = _unwrapped("".join(source) if isinstance(source, list) else str(source))
                break
        self._text_cache[(path, key.question)] = ((stat.st_mtime_ns, stat.st_size), text)
        return text

    def _read_many(
        self, gb: Any, store: sqlite3.Connection, keys: Sequence[AnswerKey]
    ) -> list[Answer]:
        """The answers ``keys`` name (one question's), as they stand now."""
        if not keys:
            return []
        first = keys[0]
        where = (first.assignment, first.notebook, first.question)
        grades = _grades(gb, *where)
        comments = _comments(gb, *where)
        saves = {
            row[0]: row[1:]
            for row in store.execute(
                "SELECT student, items, adjustment, comment, grader, saved_at, version FROM saves "
                "WHERE assignment = ? AND notebook = ? AND question = ?",
                where,
            )
        }
        answers = []
        for key in keys:
            if key.student not in grades:
                raise GradingError(
                    f"no answer of {key.student} to {key.assignment}/{key.question} in the "
                    "gradebook"
                )
            auto, manual, max_score = grades[key.student]
            row = saves.get(key.student)
            items, adjustment, free, grader, saved_at, version = (
                (tuple(json.loads(row[0])), row[1], row[2], row[3], row[4], row[5])
                if row
                else ((), 0.0, "", None, None, 0)
            )
            text = self._text(key)
            etag = hashlib.sha256(
                json.dumps([text, auto, manual, comments.get(key.student), version]).encode()
            ).hexdigest()[:16]
            state = _state(auto, manual)
            answers.append(
                Answer(
                    key=key,
                    anonymous_id=self.anonymous_id(key),
                    text=text,
                    max_score=max_score,
                    state=state,
                    score=None if state == WAITING else (manual if manual is not None else auto),
                    items=items,
                    adjustment=adjustment,
                    comment=free,
                    grader=grader,
                    saved_at=saved_at,
                    etag=etag,
                )
            )
        return answers

    def _read(self, gb: Any, store: sqlite3.Connection, key: AnswerKey) -> Answer:
        return self._read_many(gb, store, [key])[0]

    def answers(self, assignment: str, question: str) -> list[Answer]:
        """Every answer to the question, in the course's stable shuffled order (the same for
        every grader and every call; not the students' order, which would bias scores)."""
        notebook, _ = self.find_question(assignment, question)
        with self._gradebook() as gb, self._store() as store:
            keys = [
                AnswerKey(assignment, notebook, question, student)
                for student in _grades(gb, assignment, notebook, question)
            ]
            return self._read_many(gb, store, sorted(keys, key=self._order))

    def answer(self, assignment: str, question: str, student: str) -> Answer:
        notebook, _ = self.find_question(assignment, question)
        with self._gradebook() as gb, self._store() as store:
            return self._read(gb, store, AnswerKey(assignment, notebook, question, student))

    def next_waiting(
        self, assignment: str, question: str, after: str | None = None
    ) -> Answer | None:
        """The next answer that waits for a grader, in the shuffled order after the student
        ``after`` (from the start where None), wrapping around; None when none waits."""
        answers = self.answers(assignment, question)
        start = next((i + 1 for i, a in enumerate(answers) if a.key.student == after), 0)
        for answer in answers[start:] + answers[:start]:
            if answer.state == WAITING:
                return answer
        return None

    # -- saving ---------------------------------------------------------------------------

    def save(
        self,
        assignment: str,
        question: str,
        student: str,
        *,
        items: Sequence[str],
        etag: str,
        grader: str,
        adjustment: float = 0,
        comment: str = "",
    ) -> Answer:
        """Grade one answer: the score of ``items`` plus ``adjustment`` (kept between 0 and
        the question's points) into the gradebook, the items' notes and ``comment`` as its
        comment. Refused with :class:`Conflict` where ``etag`` is no longer the answer's."""
        notebook, rubric = self.find_question(assignment, question)
        key = AnswerKey(assignment, notebook, question, student)
        pending = self._pending(rubric, key, items, adjustment, comment)
        (saved,) = self._write(rubric, [(pending, etag)], grader, "graded")
        return saved

    def _pending(
        self, rubric: Rubric, key: AnswerKey, items: Sequence[str], adjustment: float, comment: str
    ) -> tuple[AnswerKey, tuple[str, ...], float, str]:
        unknown = [i for i in items if i not in {item.id for item in rubric.items}]
        if unknown:
            raise GradingError(
                f"{key.question} has no rubric item {', '.join(map(repr, unknown))} "
                f"(its items: {', '.join(i.id for i in rubric.items)})"
            )
        if len(set(items)) != len(items):
            raise GradingError(f"an item is applied twice: {list(items)}")
        if not isinstance(adjustment, int | float) or not math.isfinite(adjustment):
            raise GradingError(f"the adjustment {adjustment!r} is not a number")
        if abs(adjustment) > rubric.points:
            raise GradingError(
                f"an adjustment of {points_text(adjustment)} is more than the question's "
                f"{points_text(rubric.points)}"
            )
        order = {item.id: n for n, item in enumerate(rubric.items)}
        return key, tuple(sorted(items, key=order.__getitem__)), float(adjustment), comment.strip()

    def _write(
        self,
        rubric: Rubric,
        pending: Sequence[tuple[tuple[AnswerKey, tuple[str, ...], float, str], str]],
        grader: str,
        reason: str,
    ) -> list[Answer]:
        """Check every etag, then write every answer (gradebook and store), or nothing."""
        with self._store(write=True) as store, self._gradebook() as gb:
            current = [self._read(gb, store, key) for (key, *_), _ in pending]
            stale = [
                (answer, etag)
                for answer, (_, etag) in zip(current, pending, strict=True)
                if answer.etag != etag
            ]
            if stale:
                raise Conflict(
                    "; ".join(_conflict_message(answer) for answer, _ in stale)
                    + ": nothing was saved; open the answer again"
                )
            now = _now()
            for answer, ((key, items, adjustment, comment), _) in zip(
                current, pending, strict=True
            ):
                score = rubric.score(items, adjustment)
                grade = gb.find_grade(key.question, key.notebook, key.assignment, key.student)
                grade.manual_score = score
                grade.needs_manual_grade = False
                note = gb.find_comment(key.question, key.notebook, key.assignment, key.student)
                note.manual_comment = feedback_comment(rubric, items, comment)
                version = store.execute(
                    "SELECT version FROM saves WHERE assignment = ? AND notebook = ? AND "
                    "question = ? AND student = ?",
                    (key.assignment, key.notebook, key.question, key.student),
                ).fetchone()
                store.execute(
                    "INSERT OR REPLACE INTO saves VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key.assignment,
                        key.notebook,
                        key.question,
                        key.student,
                        json.dumps(items),
                        _applied_as(rubric, items),
                        adjustment,
                        comment,
                        score,
                        grader,
                        now,
                        (version[0] if version else 0) + 1,
                    ),
                )
                store.execute(
                    "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key.assignment,
                        key.notebook,
                        key.question,
                        key.student,
                        answer.score,
                        score,
                        json.dumps(items),
                        grader,
                        reason,
                        now,
                    ),
                )
            gb.db.commit()  # the gradebook last: a failure above leaves both as they were
            return [self._read(gb, store, key) for (key, *_), _ in pending]

    # -- a changed rubric -------------------------------------------------------------------

    def plan_regrade(self, assignment: str, question: str) -> list[Regrade]:
        """The answers graded here with an item whose points or note in the rubric are no
        longer what they were when the answer was saved (or that left the rubric), with
        their score before and after; nothing is written. An answer whose score was given
        elsewhere since (formgrader) is left out: that score stands."""
        notebook, rubric = self.find_question(assignment, question)
        with self._store() as store:
            rows = store.execute(
                "SELECT student, applied_as, score FROM saves WHERE assignment = ? AND "
                "notebook = ? AND question = ?",
                (assignment, notebook, question),
            ).fetchall()
        applied_as = {student: json.loads(was) for student, was, _ in rows}
        saved_score = {student: score for student, _, score in rows}
        current = json.loads(_applied_as(rubric, [i.id for i in rubric.items]))
        plan = []
        for answer in self.answers(assignment, question):
            was = applied_as.get(answer.key.student, {})
            touched = tuple(i for i in answer.items if current.get(i) != was.get(i))
            if not touched or answer.score != saved_score.get(answer.key.student):
                continue  # nothing changed, or its score was given elsewhere since (formgrader)
            kept = tuple(i for i in answer.items if i in current)
            plan.append(
                Regrade(
                    answer,
                    touched,
                    rubric.score(kept, answer.adjustment),
                    feedback_comment(rubric, kept, answer.comment),
                )
            )
        return plan

    def regrade(self, plan: Sequence[Regrade], grader: str) -> list[Regrade]:
        """Apply :meth:`plan_regrade`'s plan (after the instructor confirmed how many answers
        it regrades); refused with :class:`Conflict`, nothing written, where an answer
        changed since the plan was made. Returns the plan."""
        if not plan:
            return []
        key = plan[0].answer.key
        _, rubric = self.find_question(key.assignment, key.question)
        pending = [
            (
                (
                    change.answer.key,
                    tuple(i for i in change.answer.items if i in {x.id for x in rubric.items}),
                    change.answer.adjustment,
                    change.answer.comment,
                ),
                change.answer.etag,
            )
            for change in plan
        ]
        self._write(
            rubric,
            pending,
            grader,
            "rubric changed: " + ", ".join(sorted({i for change in plan for i in change.items})),
        )
        return list(plan)

    def history(self, assignment: str, question: str) -> list[dict[str, Any]]:
        """Every score written here for the question, oldest first."""
        with self._store() as store:
            rows = store.execute(
                "SELECT student, old_score, new_score, items, grader, reason, saved_at FROM "
                "history WHERE assignment = ? AND question = ? ORDER BY rowid",
                (assignment, question),
            ).fetchall()
        return [dict(zip(HISTORY_COLUMNS, row, strict=True)) for row in rows]

    # -- CSV --------------------------------------------------------------------------------

    def download_csv(self, assignment: str, question: str) -> str:
        """One question's answers as CSV (:data:`CSV_COLUMNS`), in the shuffled order, with
        anonymised ids only; every cell safe to open in a spreadsheet."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for a in self.answers(assignment, question):
            row = (
                a.anonymous_id,
                a.etag,
                a.state,
                f"{a.max_score:g}",
                "" if a.score is None else f"{a.score:g}",
                " ".join(a.items),
                f"{a.adjustment:g}" if a.adjustment else "",
                a.comment,
                a.text or "",
            )
            writer.writerow([safe_cell(cell) for cell in row])
        return out.getvalue()

    def upload_csv(self, assignment: str, question: str, text: str, grader: str) -> list[Answer]:
        """Grade the answers a CSV names (``answer_id``, ``etag``; ``items``, item ids split by
        spaces, commas or semicolons; ``adjustment``; ``score``; ``comment``). A row as it was
        downloaded (or left empty) is left out. With ``score`` and no items the score is the
        adjustment; with both, the score must be the items' score. Every bad row is named in a
        :class:`CsvError` and nothing is written; an answer changed since the download is a
        bad row too."""
        notebook, rubric = self.find_question(assignment, question)
        answers = {a.anonymous_id: a for a in self.answers(assignment, question)}
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
        missing = [c for c in ("answer_id", "etag") if c not in (reader.fieldnames or [])]
        if missing:
            raise CsvError([f"header: no column {', '.join(missing)} (download the CSV again)"])
        problems: list[str] = []
        pending = []
        seen: set[str] = set()
        for line, row in enumerate(reader, start=2):
            where = f"row {line} ({row.get('answer_id') or 'no answer_id'})"
            try:
                found = self._upload_row(rubric, answers, seen, row)
            except GradingError as error:
                problems.append(f"{where}: {error}")
                continue
            if found is not None:
                pending.append(found)
        if problems:
            raise CsvError(problems)
        if not pending:
            return []
        return self._write(rubric, pending, grader, "CSV upload")

    def _upload_row(
        self, rubric: Rubric, answers: dict[str, Answer], seen: set[str], row: dict[str, Any]
    ) -> Any:
        if None in row:
            raise GradingError("more cells than the header has columns")
        answer_id = _csv_cell(row.get("answer_id"))
        if answer_id not in answers:
            raise GradingError(f"no answer {answer_id!r} to {rubric.question}")
        if answer_id in seen:
            raise GradingError("the same answer_id as an earlier row")
        seen.add(answer_id)
        answer = answers[answer_id]
        items = [i for i in _csv_cell(row.get("items")).replace(",", " ").replace(";", " ").split()]
        adjustment = _csv_number(_csv_cell(row.get("adjustment")), "adjustment")
        score = _csv_number(_csv_cell(row.get("score")), "score")
        comment = _csv_cell(row.get("comment"))
        unchanged = (
            sorted(items) == sorted(answer.items)
            and (adjustment or 0) == answer.adjustment
            and comment == answer.comment
            and score in (None, answer.score)
        )
        if unchanged:
            return None  # as downloaded (or left empty): nothing to write
        if not items and adjustment is None and score is None:
            raise GradingError("a comment without items, adjustment or score")
        if answer.state == UNANSWERED:
            raise GradingError("left as released (nbgrader's 0): nothing to grade")
        if _csv_cell(row.get("etag")) != answer.etag:
            raise GradingError(_conflict_message(answer) + " since the download")
        if score is not None and not 0 <= score <= rubric.points:
            raise GradingError(f"score {score:g} is not between 0 and {rubric.points:g}")
        pending = self._pending(rubric, answer.key, items, adjustment or 0, comment)
        if score is not None:
            if items or adjustment is not None:
                if rubric.score(pending[1], pending[2]) != score:
                    raise GradingError(
                        f"score {score:g}, but its items and adjustment give "
                        f"{rubric.score(pending[1], pending[2]):g}"
                    )
            else:
                pending = (*pending[:2], score, pending[3])
        return pending, answer.etag


def _applied_as(rubric: Rubric, items: Sequence[str]) -> str:
    """Each applied item's points and note as the score and comment were computed."""
    return json.dumps({i: [rubric.item(i).points, rubric.item(i).note] for i in items})


def _state(auto: float | None, manual: float | None) -> str:
    if manual is not None:
        return GRADED
    return WAITING if auto is None else UNANSWERED


def _grades(
    gb: Any, assignment: str, notebook: str, question: str
) -> dict[str, tuple[float | None, float | None, float]]:
    """student -> (auto score, manual score, max score) of the question's grades."""
    from nbgrader.api import (
        Assignment,
        Grade,
        GradeCell,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    rows = (
        gb.db.query(
            SubmittedAssignment.student_id,
            Grade.auto_score,
            Grade.manual_score,
            GradeCell.max_score,
        )
        .select_from(Grade)
        .join(Grade.notebook)
        .join(SubmittedNotebook.assignment)
        .join(SubmittedAssignment.assignment)
        .join(SubmittedNotebook.notebook)
        .join(GradeCell, GradeCell.id == Grade.cell_id)
        .filter(Assignment.name == assignment, Notebook.name == notebook)
        .filter(GradeCell.name == question)
        .all()
    )
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def _comments(gb: Any, assignment: str, notebook: str, question: str) -> dict[str, str | None]:
    """student -> the grader's comment on the question's answer."""
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Comment,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    rows = (
        gb.db.query(SubmittedAssignment.student_id, Comment.manual_comment)
        .select_from(Comment)
        .join(Comment.notebook)
        .join(SubmittedNotebook.assignment)
        .join(SubmittedAssignment.assignment)
        .join(SubmittedNotebook.notebook)
        .join(Comment.cell)
        .filter(Assignment.name == assignment, Notebook.name == notebook)
        .filter(BaseCell.name == question)
        .all()
    )
    return {row[0]: row[1] for row in rows}


def _conflict_message(answer: Answer) -> str:
    who = (
        f"saved by {answer.grader} at {answer.saved_at}"
        if answer.grader
        else "its text or score changed (a new hand-in, or formgrader)"
    )
    return f"the answer {answer.anonymous_id} changed ({who})"


def _csv_cell(value: Any) -> str:
    """A CSV cell as written: the ``'`` a download put before a formula-like text taken off."""
    text = (value or "").strip()
    return text[1:] if text.startswith("'") and neutralised(text[1:]) else text


def _csv_number(text: str, what: str) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise GradingError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise GradingError(f"{what} {text!r} is not a number")
    return value


def main(argv: list[str] | None = None) -> int:
    """``python -m instructor.question_grading`` in the course root (``autograder/``)."""
    parser = argparse.ArgumentParser(prog="python -m instructor.question_grading")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="nbgrader course root")
    parser.add_argument("--db", help="the gradebook's SQLAlchemy URL (default: the course's)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the written questions, graded and waiting")
    for name in ("download", "upload", "regrade", "history"):
        command = commands.add_parser(name)
        command.add_argument("assignment")
        command.add_argument("question")
        if name in ("download", "upload"):
            command.add_argument("csv", type=Path)
        if name in ("upload", "regrade"):
            command.add_argument("--grader", required=True, help="who grades (your username)")
        if name == "regrade":
            command.add_argument("--yes", action="store_true", help="apply, not only list")
    args = parser.parse_args(argv)
    try:
        grading = QuestionGrading(args.root, db_url=args.db)
        if args.command == "list":
            for q in grading.questions():
                print(
                    f"{q.assignment} {q.question} ({points_text(q.points)}): {q.graded} "
                    f"graded, {q.waiting} waiting, {q.unanswered} unanswered"
                )
        elif args.command == "download":
            args.csv.write_text(grading.download_csv(args.assignment, args.question), "utf-8")
        elif args.command == "upload":
            text = args.csv.read_text(encoding="utf-8")
            saved = grading.upload_csv(args.assignment, args.question, text, args.grader)
            print(f"{len(saved)} answer(s) graded")
        elif args.command == "history":
            writer = csv.writer(sys.stdout)
            rows = grading.history(args.assignment, args.question)
            writer.writerow(HISTORY_COLUMNS)
            for row in rows:
                writer.writerow([safe_cell(row[column]) for column in HISTORY_COLUMNS])
        else:
            plan = grading.plan_regrade(args.assignment, args.question)
            scores = [change for change in plan if change.score_changed]
            print(f"{len(plan)} answer(s) use a changed rubric item; {len(scores)} score(s) change")
            for change in scores:
                print(
                    f"  {change.answer.key.student}: {change.answer.score:g} -> "
                    f"{change.new_score:g} ({', '.join(change.items)})"
                )
            if plan and args.yes:
                grading.regrade(plan, args.grader)
                print("regraded")
            elif plan:
                print("nothing written: run again with --yes to regrade them")
    except (GradingError, RubricError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
