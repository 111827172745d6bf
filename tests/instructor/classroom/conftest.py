"""Shared fixtures of the class grader's tests: notebook 01's release, a scratch nbgrader
course generated once per test process (each test that writes to it gets a clone), and a
PostgreSQL server for the shared-gradebook tests."""

from __future__ import annotations

import ast
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.kernel import probe as probe_kernel
from instructor.classroom.worker.isolation import Limits
from instructor.classroom.worker.judge import Channel
from instructor.scratch_course import ScratchCourse
from support.graded_class import generated

ASSIGNMENT = "01_vector_sets"


@pytest.fixture(scope="session")
def release() -> nbformat.NotebookNode:
    """Notebook 01 as released to students (do not modify: copy it)."""
    return anatomy.read_released(ASSIGNMENT)


@pytest.fixture
def released_copy(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return nbformat.from_dict(nbformat.reads(nbformat.writes(release), 4))


@pytest.fixture(scope="session")
def generated_course(tmp_path_factory: pytest.TempPathFactory) -> ScratchCourse:
    """A scratch course with notebook 01 generated (source, release, gradebook), once per
    test run (every worker reads the same); read only."""
    return generated(tmp_path_factory, ASSIGNMENT)


@pytest.fixture
def course(generated_course: ScratchCourse, tmp_path: Path) -> ScratchCourse:
    """A clone of the generated course of its own, without submissions."""
    return generated_course.clone(tmp_path / "course")


@pytest.fixture(scope="session")
def limits() -> Limits:
    """Tight limits for the test classes: the hostile ones loop, fork and fill memory."""
    return Limits(wall_seconds=45, cell_seconds=5, memory_mib=3072, output_kib=256)


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server (Debian's package, ``make system-packages``) on loopback in a
    temporary folder, stopped at the end: its URL without a database. Skips without it."""
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
        yield f"postgresql://grader@127.0.0.1:{port}"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server: str, name: str) -> str:
    """An empty database ``name`` on the PostgreSQL ``server``: its URL."""
    import psycopg

    host_port = server.rsplit("@", 1)[1]
    host, port = host_port.split(":")
    with psycopg.connect(
        host=host, port=int(port), user="grader", dbname="postgres", autocommit=True
    ) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """An empty gradebook database of its own on the PostgreSQL server."""
    name = "gb_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50].lower()
    return new_database(postgres_server, name)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The notebook namespace of a kernel that answers probes in this process."""
    namespace: dict[str, Any] = {}
    monkeypatch.setattr(probe_kernel, "_kernel_namespace", lambda: namespace)
    return namespace


@pytest.fixture
def channel(tmp_path: Path) -> Channel:
    """Probes answered by :func:`probe_kernel.answer` in this process (no sandbox)."""

    def run(code: str, seconds: float | None = None) -> None:
        call = ast.parse(code).body[0].value
        assert isinstance(call, ast.Call)
        probe_kernel.answer(call.args[0].value)

    root = tmp_path / "probes"
    root.mkdir()
    return Channel(root, run)
