"""Shared fixtures of the class grader's tests: notebook 01's release and a scratch nbgrader
course generated once per test process (each test that writes to it gets a clone)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from instructor import anatomy
from instructor.classroom.sandbox import Limits
from instructor.scratch_course import ScratchCourse

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
    """A scratch course with notebook 01 generated (source, release, gradebook); read only."""
    course = ScratchCourse(tmp_path_factory.mktemp("generated"), ASSIGNMENT)
    course.generate()
    return course


@pytest.fixture
def course(generated_course: ScratchCourse, tmp_path: Path) -> ScratchCourse:
    """A clone of the generated course of its own, without submissions."""
    return generated_course.clone(tmp_path / "course")


@pytest.fixture(scope="session")
def limits() -> Limits:
    """Tight limits for the test classes: the hostile ones loop, fork and fill memory."""
    return Limits(wall_seconds=30, cell_seconds=5, memory_mib=3072, output_kib=256)
