"""The project as a wheel: both packages ship, and a non-editable install runs the course.

The wheel is built from a copy of the working tree (what a push publishes), installed with
the ``instructor`` extra into a fresh virtual environment, and used from a course checkout
that holds no package source (only ``course.toml``, ``solutions/``, ``notebooks/``,
``autograder/``): so every import below comes from the installed wheel.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest

from instructor import anatomy
from instructor.paths import ROOT_VARIABLE
from support.colab_image import base_python
from support.studentview import repository_copy

NOTEBOOK = "01_vector_sets"

# One venv for the module: its tests stay on one xdist worker.
pytestmark = pytest.mark.xdist_group("packaging")


def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(python of a fresh venv with the wheel installed, a course checkout without package
    source, the environment to run in)."""
    work = tmp_path_factory.mktemp("packaging")
    repo = repository_copy(work / "repo")
    env = {k: v for k, v in os.environ.items() if k not in (ROOT_VARIABLE, "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), "."], repo, env)
    (wheel,) = work.glob("*.whl")
    run([base_python(), "-m", "venv", str(work / "venv")], work, env)
    python = work / "venv" / "bin" / "python"
    # Today's pip first, as `make` does for .venv: the venv's bundled pip (23.2 with Python
    # 3.11.7) took 65 CPU-s for the install below, today's 46.
    run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], work, env)
    # --no-compile: pip would write the byte-code of every module of torch and the rest (about
    # a minute of CPU); an import writes what it uses.
    run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[instructor]"],
        work,
        env,
    )
    env["PATH"] = f"{python.parent}{os.pathsep}{env['PATH']}"  # nbgrader runs tools by name
    for package_source in ("helpers", "instructor", "tests"):
        shutil.rmtree(repo / package_source)
    return python, repo, env


def test_the_wheel_holds_every_subpackage_and_data_file(installed) -> None:
    python, _, env = installed
    (wheel,) = python.parents[2].glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "helpers/checks.py",
        "helpers/results/efficient_attention.csv",
        "instructor/registry.py",
        "instructor/classroom/kernel/guard.py",
        "instructor/classroom/__main__.py",
    }
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"


def test_imports_come_from_the_install(installed) -> None:
    python, course, env = installed
    out = run(
        [
            str(python),
            "-c",
            "import helpers.checks, instructor.classroom.grader.pipeline, instructor.paths as p;"
            "print(helpers.checks.__file__); print(instructor.classroom.grader.pipeline.__file__);"
            "print(p.COURSE_ROOT)",
        ],
        course,
        env,
    ).split()
    assert all("site-packages" in path for path in out[:2]), out
    assert Path(out[2]) == course.resolve()  # the checkout is found from the working directory


def test_a_notebook_runs_from_the_install(installed, tmp_path) -> None:
    python, course, env = installed
    out = tmp_path / "executed.ipynb"
    run(
        [
            str(python),
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            f"solutions/{NOTEBOOK}/{NOTEBOOK}.ipynb",
            "--output",
            str(out),
        ],
        course,
        env,
    )
    import nbformat

    executed = nbformat.read(out, 4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors and anatomy.test_cells(executed)


def test_a_class_is_graded_from_the_install(installed) -> None:
    python, course, env = installed
    solved = anatomy.complete(
        anatomy.read_released(NOTEBOOK), anatomy.solution_sources(anatomy.read_solution(NOTEBOOK))
    )
    import nbformat

    for student, notebook in (("solved", solved), ("untouched", anatomy.read_released(NOTEBOOK))):
        folder = course / "autograder" / "submitted" / student / NOTEBOOK
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{NOTEBOOK}.ipynb")
    autograder = course / "autograder"
    run(
        [str(python), "-m", "nbgrader", "generate_assignment", NOTEBOOK, "--force"], autograder, env
    )
    run(
        [str(python), "-m", "instructor.classroom", "grade", NOTEBOOK, "--no-feedback"], course, env
    )
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    with open(autograder / "reports" / "grades.csv", newline="", encoding="utf-8") as table:
        for row in csv.DictReader(table):
            totals[row["student"]][0] += float(row["score"])
            totals[row["student"]][1] += float(row["max_score"])
    assert totals["solved"][0] == totals["solved"][1] > 0
    assert totals["untouched"][0] == 0
