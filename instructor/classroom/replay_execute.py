"""nbgrader's ``Execute`` preprocessor, replaced: the outputs come from the sandboxed run.

The class grader's recording API (:attr:`.NbgraderCourse.recording_api`) puts
:class:`ReplayExecute` where nbgrader's ``autograde`` runs ``Execute``; :mod:`.replay` hands
it the executed notebooks (its ``executed`` trait, nbgrader-style configuration) for one
``autograde`` call. One preprocessor per file, as nbgrader keeps its own.
"""

from __future__ import annotations

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict

from .records import STUDENT_VIEW

__all__ = ["ReplayExecute"]


class ReplayExecute(NbGraderPreprocessor):
    """nbgrader's ``Execute`` step, replaced: outputs come from the sandboxed run."""

    executed = Dict(
        help="notebook name -> the executed notebook (nbformat dict) of the sandboxed run"
    ).tag(config=True)

    def preprocess(self, nb, resources):  # nbconvert's signature
        info = resources["nbgrader"]
        name = info["notebook"]
        where = (info["student"], info["assignment"], name)
        if name not in self.executed:
            raise RuntimeError(f"{where}: no executed notebook to replay")
        executed = nbformat.from_dict(self.executed[name])
        if [c.source for c in executed.cells] != [c.source for c in nb.cells]:
            raise RuntimeError(f"{where}: the executed notebook is not the one sanitised")
        for cell, ran in zip(nb.cells, executed.cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = ran.get("outputs", [])
                cell.execution_count = ran.get("execution_count")
                if STUDENT_VIEW in ran.get("metadata", {}):
                    cell.metadata[STUDENT_VIEW] = ran.metadata[STUDENT_VIEW]
        return nb, resources
