"""Where the course lives on disk: the folder that holds ``course.toml``.

The instructor package works on a course checkout (``solutions/``, ``notebooks/``,
``autograder/``). Installed in editable mode it sits inside that checkout; installed from
a wheel it does not, and the checkout is found from the working directory instead, or
named by the ``SELF_ATTENTION_COURSE`` environment variable.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "AUTOGRADER",
    "BENCHMARKS",
    "COURSE_ROOT",
    "NOTEBOOKS",
    "SOLUTIONS",
    "find_course_root",
    "released_path",
    "solution_path",
]

ROOT_VARIABLE = "SELF_ATTENTION_COURSE"
MARKER = "course.toml"


def find_course_root() -> Path:
    """The course checkout: ``$SELF_ATTENTION_COURSE``, else the checkout this package sits
    in, else the working directory or the nearest parent holding ``course.toml``."""
    named = os.environ.get(ROOT_VARIABLE)
    if named:
        return Path(named).resolve()
    here = Path(__file__).resolve().parents[1]
    if (here / MARKER).exists():
        return here
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        if (folder / MARKER).exists():
            return folder
    # Nothing found: paths below point at the working directory, and the first use says
    # what is missing (registry.load raises RegistryError naming the file).
    return cwd


COURSE_ROOT = find_course_root()
SOLUTIONS = COURSE_ROOT / "solutions"
NOTEBOOKS = COURSE_ROOT / "notebooks"
AUTOGRADER = COURSE_ROOT / "autograder"
BENCHMARKS = COURSE_ROOT / "benchmarks"


def solution_path(notebook_id: str, root: Path | None = None) -> Path:
    """``solutions/<id>/<id>.ipynb``: the instructor notebook."""
    return (root or COURSE_ROOT) / "solutions" / notebook_id / f"{notebook_id}.ipynb"


def released_path(notebook_id: str, root: Path | None = None) -> Path:
    """``notebooks/<id>/<id>.ipynb``: the student version."""
    return (root or COURSE_ROOT) / "notebooks" / notebook_id / f"{notebook_id}.ipynb"
