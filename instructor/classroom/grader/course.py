"""The nbgrader course the class grader works on: configuration, gradebook, late policy, state.

:class:`NbgraderCourse` wraps nbgrader's API for the course's ``nbgrader_config.py``;
:class:`Deadlines` and :class:`PerHourPenalty` are configurable there. The reports read
scores back from the gradebook, a grader's manual score included. :class:`GradebookWatch`
raises :class:`GradebookChanged` when a score changes during a run and not by the grader
(without bubblewrap a kernel could reach the gradebook). :class:`ResumeState` skips a
hand-in whose :func:`fingerprint` is recorded.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.api import (
    Assignment,
    BaseCell,
    Grade,
    Gradebook,
    MissingEntry,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
)
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from nbgrader.utils import parse_utc
from traitlets import Dict, Float, Unicode
from traitlets.config import Configurable, PyFileConfigLoader

from instructor.classroom.grader.records import CellGrade, HandIn, HandInSummary, Manual
from instructor.nbgrader_env import nbgrader_env

__all__ = ["GradebookChanged", "SetupError"]


WORK = ".grading"
"""Under the course root: staged copies of submissions and the resume state."""


STAGING_FOLDER = f"{WORK}/staged"
"""Under the course root: the copies nbgrader's autograde reads (``submitted`` for it)."""


Scores = tuple[float, float, tuple[CellGrade, ...]]
"""A submitted notebook's score, max score and graded cells, as the gradebook has them."""


def cell_grade(grade: Grade) -> CellGrade:
    """One ``nbgrader.api.Grade`` as a :class:`CellGrade`: ``GRADED`` where a manual score
    is set, ``AWAITING`` (no score, where nbgrader's sum counts 0) where neither score is,
    ``UNANSWERED`` for a markdown answer the autograder scored (left as released)."""
    if grade.manual_score is not None:
        manual: Manual | None = Manual.GRADED
    elif grade.auto_score is None:
        return CellGrade(grade.name, None, grade.max_score, Manual.AWAITING)
    elif grade.cell_type == "markdown":
        manual = Manual.UNANSWERED
    else:
        manual = None
    return CellGrade(grade.name, grade.score, grade.max_score, manual)


class SetupError(RuntimeError):
    """An assignment the gradebook cannot be set up for (no source, nbgrader refused)."""


class NbgraderCourse:
    """nbgrader's view of the course at ``root``, with the gradebook at ``db_url`` if given."""

    def __init__(self, root: Path, db_url: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.db_url = db_url
        self.api = self._api(staged=False)
        self.coursedir = self.api.coursedir
        self.deadlines = Deadlines(config=self.api.config)

    def _config(self, staged: bool) -> Any:
        """The course's configuration; ``staged``: its autograde replays the sandboxed
        outputs on the staged copies."""
        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        # The grader never uses nbgrader's exchange (it reads submitted/), but NbGraderAPI
        # lists it when made: on a hub (JupyterHubAuthPlugin) that asks the hub's API and
        # fails outside a single-user server (no JUPYTERHUB_API_TOKEN: cron, ssh).
        config.Authenticator.plugin_class = "nbgrader.auth.NoAuthPlugin"
        if self.db_url:
            config.CourseDirectory.db_url = self.db_url
        if staged:
            # Recording reads the staged copies; its steps are record.ReplayAutograde's.
            config.CourseDirectory.submitted_directory = STAGING_FOLDER
        return config

    def _api(self, staged: bool, release: Path | None = None) -> Any:
        os.environ.update(nbgrader_env())
        config = self._config(staged)
        if release is not None:
            config.CourseDirectory.release_directory = str(release)
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @functools.cached_property
    def recording_api(self) -> Any:
        """The API on the staged copies: the parent of each hand-in's recording
        (:class:`.record.ReplayAutograde`)."""
        return self._api(staged=True)

    def late_plugin(self) -> Any:
        """The course's late-submission plugin, made as nbgrader's ``autograde`` makes it."""
        assigner = AssignLatePenalties(config=self.api.config)
        assigner.init_plugin()
        return assigner.plugin_inst

    def gradebook(self) -> Gradebook:
        return Gradebook(self.coursedir.db_url, self.coursedir.course_id)

    def submitted_folder(self) -> Path:
        """``submitted/``: one folder per student, one per assignment in it."""
        return Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", "."))

    def notebook_names(self, assignment: str) -> list[str]:
        """The assignment's notebooks, as the gradebook knows them."""
        with self.gradebook() as gb:
            return [nb.name for nb in gb.find_assignment(assignment).notebooks]

    def release_folder(self, assignment: str) -> Path:
        """The released notebooks of ``assignment`` (``notebooks/<assignment>/``)."""
        return Path(self.coursedir.format_path(self.coursedir.release_directory, ".", assignment))

    def source_folder(self, assignment: str) -> Path:
        """The instructor notebooks of ``assignment`` (``solutions/<assignment>/``)."""
        return Path(self.coursedir.format_path(self.coursedir.source_directory, ".", assignment))

    def source_notebook_names(self, assignment: str) -> list[str]:
        """The assignment's notebooks, as its source folder holds them."""
        return sorted(path.stem for path in self.source_folder(assignment).glob("*.ipynb"))

    def released(self, assignment: str, name: str) -> nbformat.NotebookNode:
        return nbformat.read(self.release_folder(assignment) / f"{name}.ipynb", as_version=4)

    def grading_spec(self, assignment: str) -> dict[str, dict[str, list[Any]]]:
        """What the source grades: notebook -> graded cell -> [points, the test's source
        (None for a graded answer cell)], from the nbgrader metadata of ``solutions/``."""
        spec: dict[str, dict[str, list[Any]]] = {}
        for name in self.source_notebook_names(assignment):
            notebook = nbformat.read(self.source_folder(assignment) / f"{name}.ipynb", 4)
            cells: dict[str, list[Any]] = {}
            for cell in notebook.cells:
                meta = cell.get("metadata", {}).get("nbgrader", {})
                if meta.get("grade"):
                    test = None if meta.get("solution") else cell.source
                    cells[meta["grade_id"]] = [float(meta.get("points", 0)), test]
            spec[name] = cells
        return spec

    def _recorded_spec(self, assignment: str) -> dict[str, dict[str, list[Any]]] | None:
        """The gradebook's version of :meth:`grading_spec`; None without the assignment."""
        with self.gradebook() as gb:
            try:
                found = gb.find_assignment(assignment)
            except MissingEntry:
                return None
            spec: dict[str, dict[str, list[Any]]] = {}
            for notebook in found.notebooks:
                answers = {cell.name for cell in notebook.solution_cells}
                tests = {c.name: c.source for c in notebook.source_cells if c.name not in answers}
                spec[notebook.name] = {
                    cell.name: [float(cell.max_score), tests.get(cell.name)]
                    for cell in notebook.grade_cells
                }
            return spec

    def register(self, assignment: str) -> list[str]:
        """Make the gradebook know ``assignment`` as its source defines it and with its
        configured due date; return what was done. nbgrader's ``generate_assignment`` runs
        (into a temporary release folder) only where the gradebook differs from the source.
        """
        done: list[str] = []
        expected = self.grading_spec(assignment)
        if not expected:
            raise SetupError(
                f"no notebook in {self.source_folder(assignment)}: is {assignment!r} one of "
                "the course's assignments?"
            )
        recorded = self._recorded_spec(assignment)
        if recorded != expected:
            with tempfile.TemporaryDirectory(prefix="nbgrader-release-") as release:
                api = self._api(staged=False, release=Path(release))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outcome = api.generate_assignment(assignment, force=True, create=True)
            if not outcome["success"]:
                detail = (outcome.get("error") or outcome.get("log") or "")[-3000:]
                raise SetupError(
                    f"nbgrader could not register {assignment} in the gradebook "
                    f"{self.coursedir.db_url}:\n{detail}"
                )
            done.append(
                f"{assignment}: registered in the gradebook from {self.source_folder(assignment)}"
                if recorded is None
                else f"{assignment}: the gradebook updated to the source's graded cells"
            )
        due = self.deadlines.due(assignment)
        if due is not None:
            with self.gradebook() as gb:
                record = gb.find_assignment(assignment)
                if record.duedate != due:
                    gb.update_or_create_assignment(assignment, duedate=due)
                    done.append(f"{assignment}: due {due:%Y-%m-%d %H:%M:%S} UTC")
        return done

    def sanitise(
        self, nb: nbformat.NotebookNode, student: str, assignment: str, name: str
    ) -> nbformat.NotebookNode:
        """nbgrader's ``Autograde.sanitize_preprocessors``, run on one notebook."""
        converter = Autograde(coursedir=self.coursedir, parent=self.api)
        resources = {
            "nbgrader": {
                "student": student,
                "assignment": assignment,
                "notebook": name,
                "db_url": self.coursedir.db_url,
            },
            "unique_key": name,
        }
        with warnings.catch_warnings():
            # nbformat's MissingIDFieldWarning on cells nbgrader itself adds back.
            warnings.simplefilter("ignore")
            for preprocessor_class in converter.sanitize_preprocessors:
                preprocessor = preprocessor_class(parent=converter)
                nb, resources = preprocessor.preprocess(nb, resources)
        return nb

    def record_zeros(self, student: str, assignment: str, notebooks: list[str]) -> None:
        """No readable notebook at all: nbgrader's converter would refuse; record zeros."""
        with self.gradebook() as gb:
            gb.update_or_create_student(student)
            gb.update_or_create_submission(assignment, student)
            for name in notebooks:
                notebook = gb.find_submission_notebook(name, assignment, student)
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gb.db.commit()

    def scores(self, student: str, assignment: str, names: list[str]) -> dict[str, Scores]:
        """name -> (score, max score, each graded cell's grade) of what the gradebook has."""
        with self.gradebook() as gb:
            found = {name: _scores(gb, name, assignment, student) for name in names}
        return {name: scores for name, scores in found.items() if scores}

    def generate_feedback(self, assignment: str, student: str) -> bool:
        """nbgrader's ``generate_feedback`` for one hand-in; whether it succeeded."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(self.api.generate_feedback(assignment, student)["success"])


class Deadlines(Configurable):
    """The due date of each assignment, as the class grader records it in the gradebook."""

    due_dates = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        help="assignment -> due date, e.g. '2026-11-20 23:59:00 Europe/Paris' (a time "
        "without a zone is UTC); nbgrader's Assignment.duedate",
    ).tag(config=True)

    def due(self, assignment: str) -> datetime | None:
        """The due date of ``assignment`` (naive UTC, as nbgrader stores it), or None."""
        text = self.due_dates.get(assignment)
        return parse_utc(text) if text else None


class PerHourPenalty(LateSubmissionPlugin):
    """Each started hour late takes ``percent_per_hour`` % of the notebook's score (all of
    it after 100 / percent_per_hour hours); ``grace_minutes`` late cost nothing."""

    percent_per_hour = Float(
        10.0, help="the share of the notebook's score taken per started hour late, in %"
    ).tag(config=True)
    grace_minutes = Float(0.0, help="minutes late that cost nothing").tag(config=True)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        late = total_seconds_late - 60 * self.grace_minutes
        if late <= 0 or not score:
            return None
        hours = math.ceil(late / 3600)
        penalty = min(score, score * self.percent_per_hour * hours / 100)
        self.log.info(
            "%s: %d started hour(s) late, penalty %g of %g", student_id, hours, penalty, score
        )
        return penalty


def _scores(gb: Gradebook, name: str, assignment: str, student: str) -> Scores | None:
    """(score, max score, each graded cell's :func:`cell_grade`) of one submitted notebook
    in the open gradebook ``gb``; None where it has no grades of it."""
    try:
        notebook = gb.find_submission_notebook(name, assignment, student)
    except Exception:  # noqa: BLE001 - nothing recorded for it
        return None
    if not notebook.grades:
        return None
    return notebook.score, notebook.max_score, tuple(cell_grade(g) for g in notebook.grades)


def late_penalties(
    course: NbgraderCourse, summaries: list[HandInSummary]
) -> dict[tuple[str, str], float]:
    """(student, assignment) -> the hand-in's late penalty, computed now from each
    notebook's current score and written into the gradebook (a hand-in not in it is left
    out). nbgrader computes it at autograde, on that moment's score, so points given by
    hand later would count or not by chance; written here, ``nbgrader export``, formgrader
    and the feedback carry the penalty ``totals.csv`` does."""
    plugin = course.late_plugin()
    penalties = {}
    with course.gradebook() as gb:
        for summary in summaries:
            try:
                submission = gb.find_submission(summary.assignment, summary.student)
            except MissingEntry:  # not in the gradebook: no penalty known
                continue
            late = submission.total_seconds_late
            total = 0.0
            for notebook in submission.notebooks:
                penalty = None  # nbgrader's "no penalty"
                if late > 0:
                    penalty = plugin.late_submission_penalty(summary.student, notebook.score, late)
                    if penalty is not None:
                        penalty = min(max(float(penalty), 0.0), float(notebook.score))
                notebook.late_submission_penalty = penalty
                total += penalty or 0.0
            penalties[(summary.student, summary.assignment)] = total
        gb.db.commit()
    return penalties


def from_gradebook(course: NbgraderCourse, summaries: list[HandInSummary]) -> list[HandInSummary]:
    """``summaries`` with each notebook's scores read again from the gradebook, which stays
    the record (scores set by hand since included); one it has no grades of keeps its own."""
    refreshed = []
    with course.gradebook() as gb:
        for summary in summaries:
            notebooks = dict(summary.notebooks)
            for name, record in summary.notebooks.items():
                if record.cells is None:
                    continue
                if found := _scores(gb, name, summary.assignment, summary.student):
                    score, max_score, cells = found
                    notebooks[name] = replace(record, score=score, max_score=max_score, cells=cells)
            refreshed.append(replace(summary, notebooks=notebooks))
    return refreshed


def student_names(course: NbgraderCourse, students: Iterable[str]) -> dict[str, str]:
    """student -> "First Last" from the gradebook, for the students it names."""
    names = {}
    with course.gradebook() as gb:
        for student in students:
            try:
                record = gb.find_student(student)
            except Exception:  # noqa: BLE001 - unknown student: no name
                continue
            name = " ".join(part for part in (record.first_name, record.last_name) if part)
            if name:
                names[student] = name
    return names


class GradebookChanged(RuntimeError):
    """Scores changed in the gradebook during a run, and the grader did not change them."""


@dataclass(frozen=True, order=True)
class ScoreKey:
    """One graded cell of one student's notebook."""

    assignment: str
    student: str
    notebook: str
    cell: str


Score = tuple[float | None, float | None, float | None]
"""``(auto_score, manual_score, extra_credit)``."""


class GradebookWatch:
    """The scores of ``assignments`` the gradebook must hold, kept up to date with what the
    grader records; ``open_gradebook`` opens it (a context manager)."""

    def __init__(self, open_gradebook: Any, assignments: list[str]) -> None:
        self.open_gradebook = open_gradebook
        self.assignments = list(assignments)
        self.expected = self._read()

    def _read(self) -> dict[ScoreKey, Score]:
        """Every score of the run's assignments, in one query."""
        with self.open_gradebook() as gradebook:
            rows = (
                gradebook.db.query(
                    Assignment.name,
                    SubmittedAssignment.student_id,
                    Notebook.name,
                    BaseCell.name,
                    Grade.auto_score,
                    Grade.manual_score,
                    Grade.extra_credit,
                )
                .select_from(Grade)
                .join(Grade.notebook)
                .join(SubmittedNotebook.assignment)
                .join(SubmittedAssignment.assignment)
                .join(SubmittedNotebook.notebook)
                .join(Grade.cell)
                .filter(Assignment.name.in_(self.assignments))
                .all()
            )
        return {ScoreKey(*row[:4]): tuple(row[4:]) for row in rows}  # type: ignore[misc]

    def check(self, when: str) -> None:
        """Raise :class:`GradebookChanged` if the gradebook differs from what is expected."""
        found = self._read()
        differences = [
            f"  {key.student}, {key.assignment}/{key.notebook}, {key.cell}: "
            + " -> ".join(
                "absent" if score is None else "auto {}, manual {}, extra {}".format(*score)
                for score in (self.expected.get(key), found.get(key))
            )
            for key in sorted(self.expected.keys() | found.keys())
            if self.expected.get(key) != found.get(key)
        ]
        if differences:
            shown = "\n".join(differences[:20])
            more = f"\n  ... and {len(differences) - 20} more" if len(differences) > 20 else ""
            raise GradebookChanged(
                f"the gradebook changed {when}, and not by the grader:\n{shown}{more}\n"
                "Without bubblewrap a student's kernel can write it (see docs/instructors.md); "
                "a grader working in formgrader meanwhile would too. Restore the gradebook "
                "from a copy, or grade again with --force after checking those scores."
            )

    def recorded(self, assignment: str, student: str) -> None:
        """Take in the scores the grader has just recorded for one hand-in."""

        def ours(key: ScoreKey) -> bool:
            return (key.assignment, key.student) == (assignment, student)

        kept = {k: v for k, v in self.expected.items() if not ours(k)}
        self.expected = kept | {k: v for k, v in self._read().items() if ours(k)}


def grading_context(course: NbgraderCourse, assignment: str) -> str:
    """A digest of what grades ``assignment``'s hand-ins: released notebooks, graded cells,
    gradebook URL, due date and late-penalty configuration."""
    config = course.api.config
    sections = ("AssignLatePenalties", "LateSubmissionPlugin", "PerHourPenalty")
    late = {name: {k: str(v) for k, v in config[name].items()} for name in sections}
    digest = hashlib.sha256()
    release = course.release_folder(assignment)
    for path in sorted(release.glob("*.ipynb")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    due = course.deadlines.due(assignment)
    context = {
        "spec": course.grading_spec(assignment),
        "db_url": course.coursedir.db_url,
        "due": due.isoformat() if due else None,
        "late": json.dumps(late, sort_keys=True),
    }
    digest.update(json.dumps(context, sort_keys=True).encode())
    return digest.hexdigest()


def fingerprint(folder: Path, context: str = "") -> str:
    """A digest of every file under ``folder`` and of ``context`` (:func:`grading_context`)."""
    digest = hashlib.sha256(context.encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class ResumeState:
    """The summaries of recorded hand-ins, under ``folder`` (``.grading/state``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, student: str, assignment: str) -> Path:
        return self.folder / assignment / f"{student}.json"

    def is_recorded(self, hand_in: HandIn) -> bool:
        """Whether ``hand_in`` was recorded with the same files."""
        state = self.path(hand_in.student, hand_in.assignment)
        return state.exists() and json.loads(state.read_text()).get("fingerprint") == (
            hand_in.fingerprint
        )

    def save(self, summary: HandInSummary) -> None:
        state = self.path(summary.student, summary.assignment)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps(summary.to_json(), indent=1))

    def students(self, assignment: str) -> list[str]:
        """Every student with a recorded hand-in of ``assignment``, sorted."""
        return [state.stem for state in sorted((self.folder / assignment).glob("*.json"))]

    def load(self, assignments: list[str]) -> list[HandInSummary]:
        """Every recorded summary of ``assignments``, by assignment then student."""
        return [
            HandInSummary.from_json(json.loads(self.path(student, assignment).read_text()))
            for assignment in assignments
            for student in self.students(assignment)
        ]
