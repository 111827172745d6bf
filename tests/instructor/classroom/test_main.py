"""``python -m instructor.classroom``: its command line and the LMS zip it collects."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from instructor.classroom.__main__ import collect_zip, main
from instructor.classroom.nbgrader_setup import NbgraderCourse
from instructor.scratch_course import ScratchCourse


def test_help_names_the_grade_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["grade", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in ("--scheduler", "--lms", "--pattern", "--student", "--replace"):
        assert option in out


def test_help_loads_neither_torch_nor_the_grading_stack() -> None:
    """The package docstring promises a cheap import: ``grade --help`` answers at once."""
    script = (
        "import sys\n"
        "from instructor.classroom.__main__ import main\n"
        "try:\n    main(['grade', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('torch', 'nbclient', 'nbgrader', 'distributed')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_an_lms_zip_is_collected_into_submitted(course: ScratchCourse, tmp_path: Path) -> None:
    """``--zip``: the intake reads the names; unused files are listed, never dropped."""
    assignment = course.assignment
    released = (course.root / "release" / assignment / course.notebook_name).read_text()
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"alice_{assignment}.ipynb", released)
        handle.writestr(f"bob/{assignment}.ipynb", "{}")
        handle.writestr("alice_scratch.ipynb", "{}")
    log: list[str] = []
    intake = collect_zip(
        NbgraderCourse(course.root), assignment, archive, lms="plain", log=log.append
    )
    assert intake.layout == "plain"
    for student in ("alice", "bob"):
        assert (course.root / "submitted" / student / assignment / course.notebook_name).is_file()
    assert not (course.root / "submitted" / "alice" / assignment / "timestamp.txt").exists()
    assert not (course.root / "downloaded").exists()
    assert any("1 file(s) of the zip NOT used" in line for line in log), log
    assert any(line.startswith("  alice_scratch.ipynb: ") for line in log), log


def test_an_unknown_layout_stops_with_exit_code_2(
    course: ScratchCourse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "odd.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("homework (1).ipynb", "{}")
        handle.writestr("final-version.ipynb", "{}")
    code = main(["grade", course.assignment, "--root", str(course.root), "--zip", str(archive)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--lms" in err and "--pattern" in err
    assert not (course.root / "submitted").exists()


def test_zip_options_need_a_zip(course: ScratchCourse) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["grade", course.assignment, "--root", str(course.root), "--lms", "canvas"])
    assert exit_.value.code == 2


def test_a_kernel_that_cannot_load_the_grader_exits_with_code_2(
    course: ScratchCourse, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line's side of test_grade.py's environment test: one error line, exit
    code 2, and no grade recorded."""
    import nbformat
    from nbgrader.api import Gradebook

    from instructor.classroom import grade as grade_module
    from instructor.classroom.execute import GraderEnvironmentError

    def broken_environment(limits: object) -> None:
        # Sent to the worker by value (a local function): a kernel without the course.
        raise GraderEnvironmentError("the kernel cannot load the grader's code (simulated)")

    monkeypatch.setattr(grade_module, "check_kernel_environment", broken_environment)
    folder = course.root / "submitted" / "alice" / course.assignment
    folder.mkdir(parents=True)
    nbformat.write(course.solved(demos=False), folder / course.notebook_name)
    code = main(
        ["grade", course.assignment, "--root", str(course.root), "--workers", "1", "--no-feedback"]
    )
    assert code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error: " in line]
    assert errors == ["error: the kernel cannot load the grader's code (simulated)"], errors
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        assert not gradebook.assignment_submissions(course.assignment)


def test_student_picks_whom_to_grade(
    course: ScratchCourse, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--student ID`` reaches the grader: only that student is graded (here one with no
    submission, which the run names, so nothing is graded)."""
    import nbformat

    folder = course.root / "submitted" / "alice" / course.assignment
    folder.mkdir(parents=True)
    nbformat.write(course.solved(demos=False), folder / course.notebook_name)
    code = main(
        ["grade", course.assignment, "--root", str(course.root), "--student", "bob"]
        + ["--workers", "1", "--no-feedback"]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "no submission from bob" in out, out
    assert "0 submission(s) to grade" in out, out
