"""The class grader's feedback goes back through nbgrader's exchange.

A term as nbgrader's own commands run it, in a scratch course and a scratch exchange:
``release_assignment``, each student's ``fetch_assignment`` and ``submit``, ``collect``,
then the class grader instead of ``autograde`` / ``generate_feedback``, then
``release_feedback`` and each student's ``fetch_feedback``. The students' commands name
their id (``--student``) and have their own home (nbgrader's cache): on a hub each runs
as its own system user. Until staging kept ``submission_secret.txt``, ``release_feedback``
stopped at the first hand-in with ``FileNotFoundError``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat

from instructor import anatomy
from instructor.classroom.grader.pipeline import ClassGrader
from instructor.classroom.grader.records import attention
from instructor.classroom.grader.stage import SECRET_FILE
from instructor.classroom.worker.isolation import Limits
from instructor.nbgrader_env import nbgrader_env
from instructor.scratch_course import ScratchCourse

ASSIGNMENT = "01_vector_sets"
COURSE_ID = "attention101"


def _nbgrader(cwd: Path, student: str | None, exchange: Path, *args: str) -> str:
    """One nbgrader exchange command, run in ``cwd`` (for ``student``, whose home it is);
    its log."""
    env = nbgrader_env()
    if student is not None:
        args = (*args, f"--student={student}")
        # Each student's nbgrader cache (the secret submit keeps) is in their own home.
        env.update(HOME=str(cwd), JUPYTER_DATA_DIR=str(cwd / ".jupyter-data"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            *args,
            f"--course={COURSE_ID}",
            f"--Exchange.root={exchange}",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)}:\n{result.stderr}"
    return result.stderr


def _fetched_feedback(home: Path) -> list[Path]:
    return sorted((home / ASSIGNMENT / "feedback").glob("*/*.html"))


def test_feedback_written_by_the_class_grader_is_released_and_fetched(
    generated_course: ScratchCourse,
    tmp_path: Path,
    limits: Limits,
    shared_scheduler: Callable[[], str],
) -> None:
    course = generated_course.clone(tmp_path / "course")
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    _nbgrader(course.root, None, exchange, "release_assignment", ASSIGNMENT)

    solved = course.solved(demos=False)
    wrong = course.solved({anatomy.solution_cells(solved)[0].metadata.nbgrader.grade_id: "pass"})
    answers = {"alice": solved, "bob": wrong, "dave": solved}
    homes = {student: tmp_path / "home" / student for student in answers}
    for student, notebook in answers.items():
        homes[student].mkdir(parents=True)
        _nbgrader(homes[student], student, exchange, "fetch_assignment", ASSIGNMENT)
        nbformat.write(notebook, homes[student] / ASSIGNMENT / course.notebook_name)
        _nbgrader(homes[student], student, exchange, "submit", ASSIGNMENT)
    _nbgrader(course.root, None, exchange, "collect", ASSIGNMENT)
    # dave replaced the secret nbgrader's submit left in his hand-in: his feedback cannot
    # reach him, but the release must not stop for the others.
    (course.root / "submitted" / "dave" / ASSIGNMENT / SECRET_FILE).write_text("../../../x")

    summaries = {
        s.student: s
        for s in ClassGrader(
            course.root, scheduler=shared_scheduler(), limits=limits, progress=False
        ).grade([ASSIGNMENT], log=lambda _: None)
    }
    assert summaries["alice"].score == summaries["alice"].max_score > summaries["bob"].score
    assert any(SECRET_FILE in note for note in attention(summaries["dave"]))
    assert not any(SECRET_FILE in note for note in attention(summaries["alice"]))

    _nbgrader(course.root, None, exchange, "release_feedback", ASSIGNMENT)
    for student in answers:
        _nbgrader(homes[student], student, exchange, "fetch_feedback", ASSIGNMENT)

    pages = {student: _fetched_feedback(homes[student]) for student in answers}
    assert [p.name for p in pages["alice"]] == [f"{ASSIGNMENT}.html"]
    assert [p.name for p in pages["bob"]] == [f"{ASSIGNMENT}.html"]
    assert pages["dave"] == []
    for student in ("alice", "bob"):
        html = pages[student][0].read_text(encoding="utf-8")
        total = summaries[student]
        assert f"Score: {total.score:g} / {total.max_score:g}" in html.replace(".0 ", " ")
        assert "### BEGIN HIDDEN TESTS" not in html
    assert pages["alice"][0].read_bytes() != pages["bob"][0].read_bytes()
