"""``python -m instructor.classroom``: its command line and the LMS zip it collects."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from instructor.classroom.__main__ import main
from instructor.classroom.grader.course import NbgraderCourse
from instructor.lms.intake import collect_zip
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

    from instructor.classroom.grader import pipeline as grade_module
    from instructor.classroom.worker.session import GraderEnvironmentError

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


def _late_canvas_zip(course: ScratchCourse, tmp_path: Path) -> Path:
    """A Canvas download with one file marked LATE (Canvas names no time; every entry
    carries the time the zip was built, here 2 days after the due date)."""
    assignment = course.assignment
    released = (course.root / "release" / assignment / course.notebook_name).read_text()
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        entry = zipfile.ZipInfo(
            f"doejohn_LATE_222222_3333333_{course.notebook_name}", (2026, 11, 22, 12, 0, 0)
        )
        handle.writestr(entry, released)
    with (course.root / "nbgrader_config.py").open("a") as config:
        config.write(
            f"\nc.Deadlines.due_dates = {{{assignment!r}: '2026-11-20 12:00:00 UTC'}}\n"
            "c.AssignLatePenalties.plugin_class = "
            '"instructor.classroom.grader.course.PerHourPenalty"\n'
        )
    return archive


def test_a_late_canvas_file_without_a_time_stops_a_per_hour_penalty(
    course: ScratchCourse, tmp_path: Path
) -> None:
    """Canvas's LATE says late, not how late: a per-hour penalty needs the time, which is
    not guessed (not the zip entry's, not the due date's): nothing is written."""
    from instructor.lms.base import IntakeError

    archive = _late_canvas_zip(course, tmp_path)
    with pytest.raises(IntakeError, match="--times times.csv"):
        collect_zip(NbgraderCourse(course.root), course.assignment, archive, log=lambda _: None)
    assert not (course.root / "submitted").exists()


def test_a_times_file_gives_the_time_canvas_did_not(course: ScratchCourse, tmp_path: Path) -> None:
    archive = _late_canvas_zip(course, tmp_path)
    times = tmp_path / "times.csv"
    times.write_text("student,time\n222222,2026-11-20T13:01:00+01:00\n")
    collect_zip(
        NbgraderCourse(course.root), course.assignment, archive, times=times, log=lambda _: None
    )
    stamp = course.root / "submitted" / "doejohn" / course.assignment / "timestamp.txt"
    assert stamp.read_text() == "2026-11-20 12:01:00.000000 UTC"


def test_a_blackboard_title_from_lms_toml(course: ScratchCourse, tmp_path: Path) -> None:
    """Blackboard names the files by the assignment's title ("Homework 1", with a space);
    lms.toml gives it, and usernames that share a prefix (st_...) stay whole."""
    assignment = course.assignment
    (course.root / "lms.toml").write_text(
        f'[assignments.{assignment}]\nblackboard_title = "Homework 1"\n'
    )
    archive = tmp_path / "bb.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for user in ("st_jsmith", "st_mdoe"):
            head = f"Homework 1_{user}_attempt_2026-11-20-10-15-02"
            handle.writestr(f"{head}_{course.notebook_name}", "{}")
            handle.writestr(f"{head}.txt", "receipt")
    intake = collect_zip(NbgraderCourse(course.root), assignment, archive, log=lambda _: None)
    assert intake.layout == "blackboard"
    assert [s.student for s in intake.students] == ["st_jsmith", "st_mdoe"]
