"""Checking a Dask cluster before grading on it: no worker, a worker without the course."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.classroom.grader.cluster import ClusterError, check_cluster, connect
from instructor.paths import COURSE_ROOT

pytestmark = pytest.mark.xdist_group("classroom-cluster")


@pytest.fixture
def scheduler() -> Iterator[str]:
    """A Dask scheduler without workers."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, dashboard_address=":0", silence_logs=40) as cluster:
        yield cluster.scheduler_address


def test_a_scheduler_without_workers_is_refused_within_seconds(scheduler: str) -> None:
    started = time.perf_counter()
    with connect(scheduler) as client, pytest.raises(ClusterError) as error:
        check_cluster(client, str(COURSE_ROOT))
    assert time.perf_counter() - started < 30
    message = str(error.value)
    assert "has no worker" in message
    assert f"dask worker {scheduler}" in message and str(COURSE_ROOT) in message


def test_a_worker_without_the_course_is_named(scheduler: str, tmp_path: Path) -> None:
    """A worker whose Python has distributed but not the course: ``python -S`` skips the
    site-packages' .pth files (the editable install of the course), the path gets only the
    site-packages folder, and the working directory is elsewhere."""
    purelib = sysconfig.get_paths()["purelib"]
    code = (
        f"import sys; sys.path.append({purelib!r}); sys.argv[0] = 'dask-worker'; "
        "from distributed.cli.dask_worker import main; main()"
    )
    worker = subprocess.Popen(
        [sys.executable, "-S", "-c", code, scheduler, "--no-nanny", "--nthreads", "1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with connect(scheduler) as client:
            client.wait_for_workers(1, timeout=120)
            started = time.perf_counter()
            with pytest.raises(ClusterError) as error:
                check_cluster(client, str(COURSE_ROOT))
            assert time.perf_counter() - started < 30
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    message = str(error.value)
    assert "1 of 1 worker(s)" in message
    assert "cannot import the course (ModuleNotFoundError" in message, message
    assert f"dask worker {scheduler}" in message and str(COURSE_ROOT) in message


def test_grade_with_a_scheduler_without_workers_exits_with_code_2(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same check through the command an instructor types: ``grade --scheduler``."""
    from instructor.classroom.__main__ import main
    from instructor.scratch_course import ScratchCourse

    course = ScratchCourse(tmp_path, "01_vector_sets")
    course.generate()
    started = time.perf_counter()
    code = main(["grade", course.assignment, "--root", str(course.root), "--scheduler", scheduler])
    assert time.perf_counter() - started < 30
    assert code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error: " in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), errors
    assert "has no worker" in errors[0]
