"""Which recorded hand-ins get feedback HTML (written by nbgrader: see test_grade.py)."""

from __future__ import annotations

from pathlib import Path

from instructor.classroom.grader.course import ResumeState
from instructor.classroom.grader.records import HandInSummary
from instructor.classroom.grader.reports import lacking_feedback


def test_only_recorded_hand_ins_without_feedback(tmp_path: Path) -> None:
    state = ResumeState(tmp_path / "state")
    for student in ("alice", "bob", "carol"):
        state.save(HandInSummary(student, "x"))
    done = tmp_path / "feedback" / "alice" / "x"
    done.mkdir(parents=True)
    (done / "x.html").write_text("<html></html>")
    (tmp_path / "feedback" / "bob" / "x").mkdir(parents=True)
    assert lacking_feedback(tmp_path, state, ["x", "y"]) == [("x", "bob"), ("x", "carol")]
    assert len(lacking_feedback(tmp_path, state, ["x"], force=True)) == 3


def test_the_feedback_api_redacts(tmp_path: Path) -> None:
    """The API ``feedback_for`` uses runs RedactFeedback after nbgrader's own two, then
    SanitiseNotebook."""
    from instructor.classroom.grader.reports import redacting
    from instructor.feedback import RedactFeedback

    class Api:
        def __init__(self) -> None:
            from traitlets.config import Config

            self.config = Config()

    class Course:
        api = Api()

    course = redacting(Course())  # type: ignore[arg-type]
    preprocessors = course.api.config.GenerateFeedback.preprocessors
    assert [p.__name__ for p in preprocessors] == [
        "GetGrades",
        "CSSHTMLHeaderPreprocessor",
        "RedactFeedback",
        "SanitiseNotebook",
    ]
    assert RedactFeedback().enabled
