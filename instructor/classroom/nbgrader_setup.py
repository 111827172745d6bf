"""The nbgrader course the class grader works on: its configuration, API and gradebook.

:class:`NbgraderCourse` reads the course's ``nbgrader_config.py`` (with the gradebook URL
given on the command line, if any) and offers what the other parts need from nbgrader:
the API (autograde, feedback), the gradebook, the released notebooks, and nbgrader's own
sanitising preprocessors run on one notebook. Its :attr:`~NbgraderCourse.recording_api`
is the API whose ``autograde`` replays the sandboxed outputs (:mod:`.replay`) on the staged
copies instead of executing the notebooks.

:meth:`~NbgraderCourse.register` makes any gradebook, an empty one included, know an
assignment as its source (``solutions/``) defines it: nbgrader's own ``generate_assignment``
with the grader's gradebook URL and a temporary release folder (the course's ``notebooks/``
is never written), then the assignment's due date (:class:`.late.Deadlines`).
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import nbformat

from .late import Deadlines
from .records import AWAITING, GRADED, UNANSWERED, CellGrade

__all__ = ["STAGING_FOLDER", "WORK", "NbgraderCourse", "SetupError", "cell_grade"]

WORK = ".grading"
"""Under the course root: staged copies of submissions and the resume state."""
STAGING_FOLDER = f"{WORK}/staged"
"""Under the course root: the copies nbgrader's autograde reads (``submitted`` for it)."""


def cell_grade(grade: Any) -> CellGrade:
    """One ``nbgrader.api.Grade`` as a :class:`CellGrade`, a cell graded by hand told apart:

    - a manual score set (formgrader, or ``Grade.manual_score`` through nbgrader's API):
      ``GRADED``, the gradebook's score (the manual score, plus any extra credit);
    - no autograder score and no manual one (a written answer, changed: nbgrader's
      ``needs_manual_grade``): ``AWAITING``, no score (nbgrader's own sum counts it 0);
    - a markdown answer cell the autograder scored (left as released: nbgrader's 0):
      ``UNANSWERED``;
    - anything else (a test cell): the autograder's score.
    """
    if grade.manual_score is not None:
        manual = GRADED
    elif grade.auto_score is None:
        return CellGrade(grade.name, None, grade.max_score, AWAITING)
    elif grade.cell_type == "markdown":
        manual = UNANSWERED
    else:
        manual = ""
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
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        # The grader never uses nbgrader's exchange (it reads submitted/), but NbGraderAPI
        # lists it when made: on a hub (JupyterHubAuthPlugin) that asks the hub's API and
        # fails outside a single-user server (no JUPYTERHUB_API_TOKEN: cron, ssh).
        config.Authenticator.plugin_class = "nbgrader.auth.NoAuthPlugin"
        if self.db_url:
            config.CourseDirectory.db_url = self.db_url
        if staged:
            from nbconvert.preprocessors import ClearMetadataPreprocessor
            from nbgrader.preprocessors import (
                AssignLatePenalties,
                CheckCellMetadata,
                IgnorePattern,
                LimitOutput,
                SaveAutoGrades,
            )

            from .replay_execute import ReplayExecute
            from .sanitise import SanitiseNotebook

            config.CourseDirectory.submitted_directory = STAGING_FOLDER
            config.Autograde.autograde_preprocessors = [
                ReplayExecute,
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
                # Last, after the scores are saved: the autograded notebook formgrader
                # shows holds nothing that runs in the instructor's browser.
                SanitiseNotebook,
            ]
        return config

    def _api(self, staged: bool, release: Path | None = None) -> Any:
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from instructor.nbgrader_env import nbgrader_env

        os.environ.update(nbgrader_env())
        config = self._config(staged)
        if release is not None:
            config.CourseDirectory.release_directory = str(release)
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @functools.cached_property
    def recording_api(self) -> Any:
        """The API whose autograde replays the sandboxed outputs on the staged copies."""
        return self._api(staged=True)

    def gradebook(self) -> Any:
        from nbgrader.api import Gradebook

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
        from nbgrader.api import MissingEntry

        with self.gradebook() as gb:
            try:
                found = gb.find_assignment(assignment)
            except MissingEntry:
                return None
            spec: dict[str, dict[str, list[Any]]] = {}
            for notebook in found.notebooks:
                sources = {cell.name: cell.source for cell in notebook.source_cells}
                answers = {cell.name for cell in notebook.solution_cells}
                spec[notebook.name] = {
                    cell.name: [
                        float(cell.max_score),
                        None if cell.name in answers else sources.get(cell.name),
                    ]
                    for cell in notebook.grade_cells
                }
            return spec

    def late_policy(self) -> str:
        """nbgrader's late-penalty configuration, as text (part of the resume key)."""
        config = self.api.config
        sections = ("AssignLatePenalties", "LateSubmissionPlugin", "PerHourPenalty")
        return json.dumps(
            {name: {k: str(v) for k, v in config[name].items()} for name in sections},
            sort_keys=True,
        )

    def register(self, assignment: str) -> list[str]:
        """Make the gradebook know ``assignment`` as its source defines it (notebooks, graded
        cells, points, tests) and with its configured due date; return what was done.

        nbgrader's ``generate_assignment`` runs only when the gradebook lacks the assignment
        or differs from the source, with a temporary release folder. A due date removed from
        the configuration is left as the gradebook has it.
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
        from nbgrader.converters import Autograde

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

    def scores(
        self, student: str, assignment: str, names: list[str]
    ) -> dict[str, tuple[float, float, tuple[CellGrade, ...]]]:
        """name -> (score, max score, each graded cell's grade, :func:`cell_grade`) of what
        the gradebook has."""
        found = {}
        with self.gradebook() as gb:
            for name in names:
                try:
                    notebook = gb.find_submission_notebook(name, assignment, student)
                except Exception:  # noqa: BLE001 - nothing recorded for it
                    continue
                cells = tuple(cell_grade(g) for g in notebook.grades)
                found[name] = (notebook.score, notebook.max_score, cells)
        return found

    def generate_feedback(self, assignment: str, student: str) -> bool:
        """nbgrader's ``generate_feedback`` for one hand-in; whether it succeeded."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(self.api.generate_feedback(assignment, student)["success"])
