"""``python -m instructor.classroom``: its command line and the LMS zip it collects."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from instructor.classroom.__main__ import collect_zip, main
from instructor.scratch_course import ScratchCourse


def test_help_names_the_grade_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["grade", "--help"])
    assert exit_.value.code == 0
    assert "--scheduler" in capsys.readouterr().out


def test_an_lms_zip_is_collected_into_submitted(course: ScratchCourse, tmp_path: Path) -> None:
    """``--zip``: nbgrader's zip_collect with the course's file-name pattern."""
    assignment = course.assignment
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(
            f"alice_{assignment}.ipynb",
            (course.root / "release" / assignment / course.notebook_name).read_text(),
        )
        handle.writestr(f"bob_{assignment}.ipynb", "{}")
    collect_zip(course.root, assignment, archive)
    for student in ("alice", "bob"):
        assert (course.root / "submitted" / student / assignment / course.notebook_name).is_file()
