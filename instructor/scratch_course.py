"""A throw-away nbgrader course: release, submit, autograde, read the gradebook.

Used by the test suite (to prove the grading with real nbgrader runs) and by the
benchmarks (to time autograding). Instructors grade in ``autograder/`` with nbgrader's own
commands or the class grader; this module is for checks and measurements on a copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat

from instructor import anatomy
from instructor.nbgrader_env import nbgrader_env
from instructor.paths import AUTOGRADER, SOLUTIONS

__all__ = ["ScratchCourse"]


class ScratchCourse:
    """A throw-away nbgrader course root with one assignment copied from ``solutions/``."""

    def __init__(self, root: Path, assignment: str) -> None:
        self.root = root
        self.assignment = assignment
        self.db_url = f"sqlite:///{root / 'gradebook.db'}"
        if not (root / "source" / assignment).exists():
            (root / "source").mkdir(parents=True, exist_ok=True)
            shutil.copytree(SOLUTIONS / assignment, root / "source" / assignment)
        self._write_config()

    def _write_config(self) -> None:
        # The course config points source/release at ../solutions and ../notebooks; this
        # course keeps everything inside its own root instead.
        config = (AUTOGRADER / "nbgrader_config.py").read_text(encoding="utf-8")
        config += (
            f"\nc.CourseDirectory.root = {str(self.root)!r}"
            '\nc.CourseDirectory.source_directory = "source"'
            '\nc.CourseDirectory.release_directory = "release"\n'
        )
        (self.root / "nbgrader_config.py").write_text(config, encoding="utf-8")

    def clone(self, root: Path) -> ScratchCourse:
        """A copy of this course (source, release, gradebook) in ``root``, without
        submissions: ``generate`` once, then grade several batches in clones."""
        root.mkdir(parents=True, exist_ok=True)
        for folder in ("source", "release"):
            if (self.root / folder).exists():
                shutil.copytree(self.root / folder, root / folder)
        if (self.root / "gradebook.db").exists():
            shutil.copy(self.root / "gradebook.db", root / "gradebook.db")
        return ScratchCourse(root, self.assignment)

    @property
    def notebook_name(self) -> str:
        return f"{self.assignment}.ipynb"

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run an nbgrader command in this course; raise with its log if it fails."""
        result = subprocess.run(
            [sys.executable, "-m", "nbgrader", *args],
            cwd=self.root,
            env=nbgrader_env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"nbgrader {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-4000:]}"
            )
        return result

    def api(self) -> Any:
        """nbgrader's Python API (``nbgrader.apps.NbGraderAPI``) on this course: the same
        converters as the command line, without starting a new Python for each command."""
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config.loader import PyFileConfigLoader

        # The kernels nbgrader starts inherit this process's environment.
        os.environ.update(nbgrader_env())
        os.environ.pop("MPLBACKEND", None)  # update() cannot remove a key
        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @staticmethod
    def _check(result: dict[str, Any], what: str) -> None:
        if not result["success"]:
            raise RuntimeError(f"nbgrader {what} failed:\n{result.get('log', '')[-4000:]}")

    def generate(self) -> Path:
        """Run ``generate_assignment``; return the student notebook it wrote."""
        self._check(
            self.api().generate_assignment(self.assignment, force=True),
            f"generate_assignment {self.assignment}",
        )
        return self.root / "release" / self.assignment / self.notebook_name

    def released(self) -> nbformat.NotebookNode:
        """The student version written by ``generate``."""
        return nbformat.read(self.root / "release" / self.assignment / self.notebook_name, 4)

    def source(self) -> nbformat.NotebookNode:
        """The instructor notebook."""
        return nbformat.read(self.root / "source" / self.assignment / self.notebook_name, 4)

    def submit(self, student: str, notebook: nbformat.NotebookNode) -> None:
        """Place ``notebook`` as ``student``'s submission, as ``nbgrader collect`` would."""
        folder = self.root / "submitted" / student / self.assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, folder / self.notebook_name)

    def solutions(self) -> dict[str, str]:
        """grade_id -> source of every solution cell, as a student who solved it hands it in."""
        return anatomy.solution_sources(self.source())

    def solved(
        self, replacements: dict[str, str] | None = None, *, demos: bool = True
    ) -> nbformat.NotebookNode:
        """The student version with every solution cell filled in from the instructor
        notebook, except those named in ``replacements`` (grade_id -> new source); with
        ``demos=False`` the ungraded code cells but the imports cell are emptied
        (``anatomy.complete``)."""
        answers = self.solutions()
        unknown = sorted(set(replacements or {}) - set(answers))
        if unknown:
            raise KeyError(f"no solution cell with grade_id {unknown} in {self.assignment}")
        answers.update(replacements or {})
        return anatomy.complete(self.released(), answers, demos=demos)

    def autograde(self, *, command_line: bool = False) -> None:
        """Autograde every submission of the assignment: one student after another through
        nbgrader's API, or with ``command_line=True`` one ``nbgrader autograde`` run (what
        an instructor types; slower by the start of a new Python)."""
        if command_line:
            self.nbgrader("autograde", self.assignment, "--force")
            return
        api = self.api()
        for folder in sorted((self.root / "submitted").iterdir()):
            result = api.autograde(self.assignment, folder.name, force=True, create=True)
            self._check(result, f"autograde {self.assignment} for {folder.name}")

    def scores(self, student: str) -> dict[str, tuple[float, float]]:
        """grade_id -> (score, max_score) for every graded cell of a student's submission."""
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url) as gradebook:
            submission = gradebook.find_submission_notebook(
                self.notebook_name.removesuffix(".ipynb"), self.assignment, student
            )
            return {grade.name: (grade.score, grade.max_score) for grade in submission.grades}

    def awaiting_grader(self, student: str) -> set[str]:
        """The grade_ids of a student's graded cells that autograde left to a grader
        (nbgrader's ``needs_manual_grade``): the written answers that were answered. An
        untouched written answer is not among them: nbgrader gives it 0 itself."""
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url) as gradebook:
            submission = gradebook.find_submission_notebook(
                self.notebook_name.removesuffix(".ipynb"), self.assignment, student
            )
            return {grade.name for grade in submission.grades if grade.needs_manual_grade}

    def autograded(self, student: str) -> nbformat.NotebookNode:
        """A student's notebook as autograde executed it (outputs included)."""
        return nbformat.read(
            self.root / "autograded" / student / self.assignment / self.notebook_name, 4
        )
