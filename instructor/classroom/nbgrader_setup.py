"""The nbgrader course the class grader works on: its configuration, API and gradebook.

:class:`NbgraderCourse` reads the course's ``nbgrader_config.py`` (with the gradebook URL
given on the command line, if any) and offers what the other parts need from nbgrader:
the API (autograde, feedback), the gradebook, the released notebooks, and nbgrader's own
sanitising preprocessors run on one notebook. Its :attr:`~NbgraderCourse.recording_api`
is the API whose ``autograde`` replays the sandboxed outputs (:mod:`.replay`) on the staged
copies instead of executing the notebooks.
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path
from typing import Any

import nbformat

from .records import CellGrade

__all__ = ["STAGED", "WORK", "NbgraderCourse"]

WORK = ".grading"
"""Under the course root: staged copies of submissions and the resume state."""
STAGED = f"{WORK}/staged"
"""Under the course root: the copies nbgrader's autograde reads (``submitted`` for it)."""


class NbgraderCourse:
    """nbgrader's view of the course at ``root``, with the gradebook at ``db_url`` if given."""

    def __init__(self, root: Path, db_url: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.db_url = db_url
        self.api = self._api(staged=False)
        self.coursedir = self.api.coursedir

    def _config(self, staged: bool) -> Any:
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
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

            from .replay import ReplayExecute

            config.CourseDirectory.submitted_directory = STAGED
            config.Autograde.autograde_preprocessors = [
                ReplayExecute,
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
            ]
        return config

    def _api(self, staged: bool) -> Any:
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from instructor.scratch_course import nbgrader_env

        os.environ.update(nbgrader_env())
        config = self._config(staged)
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

    def released(self, assignment: str, name: str) -> nbformat.NotebookNode:
        release = Path(
            self.coursedir.format_path(self.coursedir.release_directory, ".", assignment)
        )
        return nbformat.read(release / f"{name}.ipynb", as_version=4)

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
        """name -> (score, max score, each graded cell's grade) of what the gradebook has."""
        found = {}
        with self.gradebook() as gb:
            for name in names:
                try:
                    notebook = gb.find_submission_notebook(name, assignment, student)
                except Exception:  # noqa: BLE001 - nothing recorded for it
                    continue
                cells = tuple(CellGrade(g.name, g.score, g.max_score) for g in notebook.grades)
                found[name] = (notebook.score, notebook.max_score, cells)
        return found

    def generate_feedback(self, assignment: str, student: str) -> bool:
        """nbgrader's ``generate_feedback`` for one hand-in; whether it succeeded."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(self.api.generate_feedback(assignment, student)["success"])
