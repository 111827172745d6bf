"""``ClassGrader`` end to end into a shared PostgreSQL gradebook, on a Dask cluster given by
its address.

The PostgreSQL server is Debian's package (``make system-packages`` installs it), started
here on loopback in a temporary folder and stopped at the end. Without it the test skips
and says why.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.classroom.grade import ClassGrader
from instructor.classroom.sandbox import Limits
from instructor.scratch_course import ScratchCourse

pytestmark = pytest.mark.xdist_group("classroom-shared")

ASSIGNMENT = "01_vector_sets"


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server here (Debian's postgresql package provides one)")
    pytest.importorskip("psycopg", reason="psycopg is needed for a PostgreSQL gradebook")
    # PostgreSQL refuses to run as root: as root, the server runs as Debian's postgres user.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="gradebook-pg-"))
    os.chmod(folder, 0o755)
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", _free_port()

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=120)

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "grader", "--auth=trust")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
    run(
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data),
        "-o",
        options,
        "-l",
        f"{folder}/log",
        "-w",
        "start",
    )
    try:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=port, user="grader", dbname="postgres", autocommit=True
        ) as connection:
            connection.execute("CREATE DATABASE gradebook")
        yield f"postgresql://grader@127.0.0.1:{port}/gradebook"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


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
    assert scores == {"alice": 9, "carol": 0}
    assert summaries["alice"].notebooks[ASSIGNMENT].score == 9
    assert not (tmp_path / "gradebook.db").exists(), "the SQLite default must not be used"
