"""``ClassGrader`` end to end into a shared PostgreSQL gradebook, on a Dask cluster given by
its address.

The PostgreSQL server is Debian's package (``make system-packages`` installs it), started
on loopback in a temporary folder and stopped at the end (``conftest.postgres_server``).
Without it the test skips and says why.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor import registry
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.worker.isolation import Limits
from instructor.scratch_course import ScratchCourse

pytestmark = pytest.mark.xdist_group("classroom-shared")

ASSIGNMENT = "01_vector_sets"


@pytest.fixture(scope="module")
def dask_scheduler() -> Iterator[str]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=40
    ) as cluster:
        yield cluster.scheduler_address


def test_grades_go_into_postgres_through_a_dask_scheduler(
    tmp_path: Path, postgres_url: str, dask_scheduler: str
) -> None:
    course = ScratchCourse(tmp_path, ASSIGNMENT)
    with (tmp_path / "nbgrader_config.py").open("a") as config:
        config.write(f"\nc.CourseDirectory.db_url = {postgres_url!r}\n")
    course.generate()
    course.submit("alice", course.solved(demos=False))
    course.submit("carol", course.released())
    started = time.perf_counter()
    grader = ClassGrader(
        tmp_path,
        db_url=postgres_url,
        scheduler=dask_scheduler,
        limits=Limits(wall_seconds=60),
        feedback=False,
        progress=False,
    )
    summaries = {s.student: s for s in grader.grade([ASSIGNMENT], log=lambda _: None)}
    assert time.perf_counter() - started < 300
    from nbgrader.api import Gradebook

    with Gradebook(postgres_url) as gradebook:
        scores = {
            student: gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).score
            for student in ("alice", "carol")
        }
    solved = registry.load().notebook(ASSIGNMENT).points
    assert scores == {"alice": solved, "carol": 0}
    assert summaries["alice"].notebooks[ASSIGNMENT].score == solved
    assert not (tmp_path / "gradebook.db").exists(), "the SQLite default must not be used"
