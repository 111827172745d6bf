"""What the class grader's tests build once per test run: scratch courses generated once and
shared by every pytest-xdist worker, and the two isolations a class is graded with.

Under pytest-xdist a session fixture is built once per worker. :func:`once_per_run` is
xdist's documented recipe for doing it once per run instead: the first worker to ask builds
under a file lock in the run's own temporary folder (``getbasetemp().parent``, the same
for every worker of one run, new for each run), and the others find it there.

The isolations: every class-grading test that proves something "with and without
bubblewrap" takes a module fixture parametrised with :func:`isolation_params`, whose value
is an :class:`Isolation`, and grades inside :func:`graded_with`. Each isolation of a test
module is an xdist group of its own, so the two gradings run on two workers at once.

The clusters: a class graded with an embedded ``LocalCluster`` pays for starting it, and
each new worker process for its kernel zygote (several seconds, more than a small class's
notebooks). Tests that grade many small classes and prove nothing about the cluster itself
grade instead on :class:`SharedClusters` (the ``shared_scheduler`` fixture of
``tests/conftest.py``): the class grader's own ``--scheduler`` mode, against one
``LocalCluster`` per test process and isolation, started at first use.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _pytest.mark.structures import ParameterSet
from filelock import FileLock

from instructor.classroom.worker.isolation import Isolation, isolation
from instructor.grading_cases import Case, load_cases
from instructor.scratch_course import ScratchCourse

__all__ = [
    "SESSION_SOLUTION",
    "SOLUTION",
    "STUB",
    "SharedClusters",
    "TRIMMED_SOLUTION",
    "WRONG",
    "as_a_session_leaves_it",
    "generated",
    "graded_with",
    "isolation_params",
    "once_per_run",
    "reference_course",
    "reference_group",
    "wrong_case",
]


def isolation_params(group: str, *, apart: bool = True) -> list[ParameterSet]:
    """Both isolations as fixture parameters, ids ``bwrap`` and ``none``; each in the xdist group
    ``{group}-{mode}``, so that ``--dist loadgroup`` may grade the two on two workers, or
    with ``apart=False`` both in ``group`` (tests that must not run beside each other)."""
    return [
        pytest.param(
            mode,
            id=mode.value,
            marks=pytest.mark.xdist_group(f"{group}-{mode.value}" if apart else group),
        )
        for mode in Isolation
    ]


@contextmanager
def graded_with(mode: Isolation) -> Iterator[None]:
    """Grade inside this block with ``mode``'s isolation (``COURSE_SANDBOX``, read again here
    and in the grader's Dask workers); skips, saying why, where bubblewrap does not work."""
    with pytest.MonkeyPatch.context() as patch:
        if mode is Isolation.NONE:
            patch.setenv("COURSE_SANDBOX", "none")
        else:
            patch.delenv("COURSE_SANDBOX", raising=False)
        isolation.cache_clear()
        try:
            if mode is Isolation.BWRAP and isolation() is not Isolation.BWRAP:
                pytest.skip("bubblewrap does not work here (make system-packages installs it)")
            yield
        finally:
            isolation.cache_clear()


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The folder ``name`` that ``build`` filled, built by one worker of this test run
    (by this process where there are no workers); the others wait for it and read it.

    ``build`` gets an empty folder and must leave it complete; a folder whose build did not
    finish (its worker failed) is built again by the next worker rather than read half-made."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        # Without xdist, basetemp's parent is shared by every run of this user: not a place
        # for this run's things.
        folder = tmp_path_factory.mktemp(name, numbered=True)
        build(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent / "once_per_run"
    shared.mkdir(exist_ok=True)
    folder, built = shared / name, shared / f"{name}.built"
    with FileLock(str(shared / f"{name}.lock")):
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            built.touch()
    return folder


def generated(tmp_path_factory: pytest.TempPathFactory, assignment: str) -> ScratchCourse:
    """A scratch course with ``assignment`` generated (source, release, gradebook), once
    per test run; read only: grade in a :meth:`ScratchCourse.clone`."""
    folder = once_per_run(
        tmp_path_factory,
        f"generated-{assignment}",
        lambda root: ScratchCourse(root, assignment).generate(),
    )
    # ScratchCourse writes the course's nbgrader_config.py again, the same text: only the
    # build above runs nbgrader in this folder (clones have a configuration of their own).
    return ScratchCourse(folder, assignment)


class SharedClusters:
    """Dask clusters of one test process, one per isolation: a worker process reads
    ``COURSE_SANDBOX`` once, when it starts, so a cluster serves the isolation in force then."""

    def __init__(self) -> None:
        self._clusters: dict[str, Any] = {}

    def address(self) -> str:
        """The scheduler address of the cluster for the isolation in force now (the
        environment's ``COURSE_SANDBOX``): one worker, one thread, as ``workers=1``."""
        from distributed import LocalCluster

        mode = os.environ.get("COURSE_SANDBOX", "")
        if mode not in self._clusters:
            self._clusters[mode] = LocalCluster(
                n_workers=1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=40,
            )
        return self._clusters[mode].scheduler_address

    def close(self) -> None:
        for cluster in self._clusters.values():
            cluster.close()
        self._clusters.clear()


SOLUTION = "reference_solution"
STUB = "untouched_student_version"
TRIMMED_SOLUTION = "reference_solution_without_demos"
SESSION_SOLUTION = "reference_solution_as_a_session_leaves_it"
WRONG = "a_wrong_answer"


def as_a_session_leaves_it(course: ScratchCourse) -> nbformat.NotebookNode:
    """The reference answers in the student version with every demo cell, executed: each
    cell's outputs and count, and the notebook's metadata, as the executed instructor
    notebook has them (what a student's run of every cell and a save leave in the file)."""
    notebook = course.solved()
    executed = {cell.get("id"): cell for cell in course.source().cells}
    for cell in notebook.cells:
        ran = executed.get(cell.get("id"))
        if cell.cell_type == "code" and ran is not None:
            cell.outputs = ran.get("outputs", [])
            cell.execution_count = ran.get("execution_count")
    notebook.metadata.update(course.source().metadata)
    return notebook


_REFERENCE_COURSES: dict[str, ScratchCourse] = {}


def reference_group(assignment: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that read ``assignment``'s reference course: one worker
    builds it and runs them one after the other (some write its feedback folder)."""
    return pytest.mark.xdist_group(f"{assignment}-reference")


def wrong_case(assignment: str) -> Case:
    """The reference course's wrong answer: the first wrong case of ``tests/grading_cases``
    with a promised message, else the first wrong case."""
    wrong = [case for case in load_cases(assignment) if case.kind == "wrong"]
    return ([case for case in wrong if case.message] or wrong)[0]


def reference_course(tmp_path_factory: pytest.TempPathFactory, assignment: str) -> ScratchCourse:
    """``assignment``'s reference course, built once per test process (its tests are in
    :func:`reference_group`) and graded with ``nbgrader autograde``, the instructor's
    command: the reference solution (:data:`SOLUTION`), the untouched student version
    (:data:`STUB`) and one wrong answer in the reference solution without its demo cells
    (:data:`WRONG`, :func:`wrong_case`). That form itself (:data:`TRIMMED_SOLUTION`) is graded
    by the class grader, which grades the cases in it (``tests/course/test_autograde.py``)."""
    if assignment not in _REFERENCE_COURSES:
        course = generated(tmp_path_factory, assignment).clone(
            tmp_path_factory.mktemp(f"{assignment}-reference")
        )
        course.submit(SOLUTION, course.solved())
        course.submit(STUB, course.released())
        case = wrong_case(assignment)
        course.submit(WRONG, course.solved({case.function: case.source}, demos=False))
        course.autograde(command_line=True)
        _REFERENCE_COURSES[assignment] = course
    return _REFERENCE_COURSES[assignment]
