"""Grading one written question across a class with rubric items (issue 47).

The class: notebook 05's scratch course (``support.graded_class.generated``, generated once
per test run and shared with the release test), with 12 students recorded in its real
nbgrader gradebook as ``nbgrader autograde`` records a written answer (``SaveAutoGrades``:
an answered cell has no score and awaits a grader, one left as released scores 0) and their
autograded notebooks. No notebook is executed: the written answer is all these tests read.
Each test grades a copy of that class.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from nbgrader.api import Gradebook
from tornado.httpclient import AsyncHTTPClient
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from traitlets.config import Config

from instructor import anatomy
from instructor.feedback import inert_markdown
from instructor.question_grading import (
    CSV_COLUMNS,
    Conflict,
    CsvError,
    GradingError,
    QuestionGrading,
    main,
)
from instructor.rubrics import METADATA_KEY
from instructor.scratch_course import ScratchCourse
from support.graded_class import generated
from support.studentview import CHROMIUM, CHROMIUM_ARGS, browser_skip_reason

# One worker for the module: its class is recorded once, its Jupyter server imported once.
pytestmark = pytest.mark.xdist_group("question_grading")

ASSIGNMENT = "05_positional_encoding"
QUESTION = "written_absolute_vs_relative"
ABSOLUTE, RELATIVE = "absolute_no_extrapolation", "relative_offsets_and_limit"
ANSWERED = [f"student{n:02d}" for n in range(1, 11)]
UNANSWERED = ["student11", "student12"]
SCRIPTED = "student03"
SCRIPT = '<img src=x onerror="alert(1)"> =HYPERLINK("http://evil")'
FORMULA = "student04"


def _answer(student: str) -> str:
    if student == SCRIPTED:
        return f"Relative positions. {SCRIPT}"
    if student == FORMULA:
        return "=1+1 relative positions only need offsets."
    return f"Relative positions cope better: the offsets repeat (answer {student[-2:]})."


@pytest.fixture(scope="module")
def recorded_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The class as the grader left it: every student recorded, nobody graded by hand."""
    course = generated(tmp_path_factory, ASSIGNMENT).clone(
        tmp_path_factory.mktemp("question_grading") / "course"
    )
    released = course.released()
    with Gradebook(course.db_url) as gb:
        for student in ANSWERED + UNANSWERED:
            gb.update_or_create_student(student)
            submission = gb.add_submission(ASSIGNMENT, student)
            for grade in submission.notebooks[0].grades:
                if grade.name == QUESTION and student in ANSWERED:
                    grade.auto_score, grade.needs_manual_grade = None, True
                else:  # a test passed, or the written answer left as released
                    grade.auto_score = grade.max_score if grade.name != QUESTION else 0
            notebook = nbformat.from_dict(released)
            cell = next(c for c in notebook.cells if anatomy.grade_id(c) == QUESTION)
            if student in ANSWERED:
                text = _answer(student)
                # The class grader shows an answer holding HTML as text (instructor.feedback).
                cell.source = inert_markdown(text) if student == SCRIPTED else text
            folder = course.root / "autograded" / student / ASSIGNMENT
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / course.notebook_name)
        gb.db.commit()
    return course.root


@pytest.fixture
def course(recorded_class: Path, tmp_path: Path) -> ScratchCourse:
    root = tmp_path / "course"
    shutil.copytree(recorded_class, root)
    return ScratchCourse(root, ASSIGNMENT)


@pytest.fixture
def grading(course: ScratchCourse) -> QuestionGrading:
    return QuestionGrading(course.root)


def _gradebook(course: ScratchCourse, student: str) -> tuple[float | None, str | None]:
    with Gradebook(course.db_url) as gb:
        grade = gb.find_grade(QUESTION, ASSIGNMENT, ASSIGNMENT, student)
        comment = gb.find_comment(QUESTION, ASSIGNMENT, ASSIGNMENT, student)
        return grade.manual_score, comment.manual_comment


def _with_rubric(course: ScratchCourse, items: list[dict]) -> None:
    """The instructor notebook's rubric of the question, as an instructor edits it."""
    path = course.root / "source" / ASSIGNMENT / course.notebook_name
    notebook = nbformat.read(path, 4)
    cell = next(c for c in notebook.cells if anatomy.grade_id(c) == QUESTION)
    cell.metadata[METADATA_KEY] = {"items": items}
    nbformat.write(notebook, path)


def _items(course: ScratchCourse) -> list[dict]:
    cell = next(c for c in course.source().cells if anatomy.grade_id(c) == QUESTION)
    return [dict(item) for item in cell.metadata[METADATA_KEY]["items"]]


def test_the_question_list_counts_graded_and_waiting(grading: QuestionGrading) -> None:
    (summary,) = grading.questions()
    assert (summary.assignment, summary.notebook, summary.question, summary.points) == (
        ASSIGNMENT, ASSIGNMENT, QUESTION, 2
    )  # fmt: skip
    assert (summary.graded, summary.waiting, summary.unanswered) == (0, 10, 2)
    answer = grading.next_waiting(ASSIGNMENT, QUESTION)
    grading.save(ASSIGNMENT, QUESTION, answer.key.student, items=[ABSOLUTE], etag=answer.etag,
                 grader="ta1")  # fmt: skip
    (summary,) = grading.questions()
    assert (summary.graded, summary.waiting, summary.unanswered) == (1, 9, 2)


def test_the_order_is_shuffled_and_stable(course: ScratchCourse) -> None:
    first = [a.key.student for a in QuestionGrading(course.root).answers(ASSIGNMENT, QUESTION)]
    again = [a.key.student for a in QuestionGrading(course.root).answers(ASSIGNMENT, QUESTION)]
    assert first == again and sorted(first) == sorted(ANSWERED + UNANSWERED)
    assert first != sorted(first)
    # Grade next: each waiting answer once, in that order, then none.
    seen, after = [], None
    grading = QuestionGrading(course.root)
    while (answer := grading.next_waiting(ASSIGNMENT, QUESTION, after)) is not None:
        assert answer.text == _answer(answer.key.student)  # the student's own text
        grading.save(ASSIGNMENT, QUESTION, answer.key.student, items=[], etag=answer.etag,
                     grader="ta1")  # fmt: skip
        seen.append(answer.key.student)
        after = answer.key.student
    assert seen == [s for s in first if s in ANSWERED]


def test_a_save_writes_the_gradebook_and_the_notes(course: ScratchCourse) -> None:
    grading = QuestionGrading(course.root)
    answer = grading.answer(ASSIGNMENT, QUESTION, "student01")
    assert (answer.state, answer.score, answer.max_score) == ("waiting", None, 2)
    saved = grading.save(
        ASSIGNMENT, QUESTION, "student01", items=[RELATIVE, ABSOLUTE], adjustment=-0.5,
        comment="Name the limit of RoPE too.", etag=answer.etag, grader="ta1",
    )  # fmt: skip
    assert (saved.state, saved.score, saved.items, saved.grader) == (
        "graded", 1.5, (ABSOLUTE, RELATIVE), "ta1"
    )  # fmt: skip
    score, comment = _gradebook(course, "student01")
    rubric = grading.rubric(ASSIGNMENT, ASSIGNMENT, QUESTION)
    assert score == 1.5
    for item in rubric.items:
        assert item.note in comment and item.criterion not in comment
    assert comment.endswith("Name the limit of RoPE too.")
    assert rubric.reference[:60] not in comment
    # Scores stay within 0 and the question's points; unknown items are refused.
    answer = grading.answer(ASSIGNMENT, QUESTION, "student02")
    high = grading.save(ASSIGNMENT, QUESTION, "student02", items=[ABSOLUTE, RELATIVE],
                        adjustment=1, etag=answer.etag, grader="ta1")  # fmt: skip
    assert high.score == 2
    with pytest.raises(GradingError, match="no rubric item 'made_up'"):
        grading.save(ASSIGNMENT, QUESTION, "student02", items=["made_up"], etag=high.etag,
                     grader="ta1")  # fmt: skip


def test_the_feedback_shows_the_notes_never_the_reference(course: ScratchCourse) -> None:
    grading = QuestionGrading(course.root)
    answer = grading.answer(ASSIGNMENT, QUESTION, "student01")
    grading.save(ASSIGNMENT, QUESTION, "student01", items=[ABSOLUTE], comment="See section 3.",
                 etag=answer.etag, grader="ta1")  # fmt: skip
    result = course.api().generate_feedback(ASSIGNMENT, "student01", force=True)
    assert result["success"], result.get("log")
    html = (course.root / "feedback" / "student01" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    rubric = grading.rubric(ASSIGNMENT, ASSIGNMENT, QUESTION)
    absolute, relative = rubric.items
    assert absolute.note.split(":")[0] in html and "See section 3." in html
    assert relative.note.split(",")[0] not in html  # not applied
    for secret in (rubric.reference[60:120], absolute.criterion[:60], relative.criterion[:60]):
        assert secret not in html


def test_a_stale_save_is_refused(course: ScratchCourse) -> None:
    instructor, ta = QuestionGrading(course.root), QuestionGrading(course.root)
    opened = instructor.answer(ASSIGNMENT, QUESTION, "student05")
    assert ta.answer(ASSIGNMENT, QUESTION, "student05").etag == opened.etag
    ta.save(ASSIGNMENT, QUESTION, "student05", items=[ABSOLUTE, RELATIVE], etag=opened.etag,
            grader="ta1")  # fmt: skip
    with pytest.raises(Conflict, match=r"changed \(saved by ta1 at .*nothing was saved"):
        instructor.save(ASSIGNMENT, QUESTION, "student05", items=[], etag=opened.etag,
                        grader="instructor")  # fmt: skip
    assert _gradebook(course, "student05")[0] == 2
    # A score given in formgrader meanwhile changes the answer too.
    opened = instructor.answer(ASSIGNMENT, QUESTION, "student06")
    with Gradebook(course.db_url) as gb:
        gb.find_grade(QUESTION, ASSIGNMENT, ASSIGNMENT, "student06").manual_score = 1
        gb.db.commit()
    with pytest.raises(Conflict, match="formgrader"):
        instructor.save(ASSIGNMENT, QUESTION, "student06", items=[ABSOLUTE], etag=opened.etag,
                        grader="instructor")  # fmt: skip
    assert _gradebook(course, "student06") == (1, None)


def test_two_graders_saving_at_once_one_wins(course: ScratchCourse) -> None:
    graders = {name: QuestionGrading(course.root) for name in ("instructor", "ta1")}
    etag = graders["ta1"].answer(ASSIGNMENT, QUESTION, "student07").etag
    outcomes: dict[str, str] = {}
    start = threading.Barrier(2)

    def grade(name: str, items: list[str]) -> None:
        start.wait()
        try:
            graders[name].save(ASSIGNMENT, QUESTION, "student07", items=items, etag=etag,
                               grader=name)  # fmt: skip
            outcomes[name] = "saved"
        except Conflict:
            outcomes[name] = "refused"

    threads = [
        threading.Thread(target=grade, args=("instructor", [ABSOLUTE])),
        threading.Thread(target=grade, args=("ta1", [ABSOLUTE, RELATIVE])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes.values()) == ["refused", "saved"]
    winner = next(name for name, outcome in outcomes.items() if outcome == "saved")
    answer = graders["ta1"].answer(ASSIGNMENT, QUESTION, "student07")
    assert answer.grader == winner
    assert (
        _gradebook(course, "student07")[0] == answer.score == (1 if winner == "instructor" else 2)
    )


def test_changing_an_items_points_regrades_where_it_was_applied(course: ScratchCourse) -> None:
    items = _items(course)
    deduction = {"id": "too_long", "label": "over five sentences", "points": -0.5,
                 "note": "Over five sentences: say it in fewer."}  # fmt: skip
    _with_rubric(course, [*items, deduction])
    grading = QuestionGrading(course.root)
    applied = {
        "student01": [ABSOLUTE, RELATIVE, "too_long"],
        "student02": [ABSOLUTE, "too_long"],
        "student08": [RELATIVE],
        "student09": [ABSOLUTE, RELATIVE],
    }
    for student, chosen in applied.items():
        answer = grading.answer(ASSIGNMENT, QUESTION, student)
        grading.save(ASSIGNMENT, QUESTION, student, items=chosen, etag=answer.etag, grader="ta1")
    # student10's answer, graded here too, is then given a score in formgrader: it stands.
    answer = grading.answer(ASSIGNMENT, QUESTION, "student10")
    grading.save(ASSIGNMENT, QUESTION, "student10", items=[ABSOLUTE], etag=answer.etag,
                 grader="ta1")  # fmt: skip
    with Gradebook(course.db_url) as gb:
        gb.find_grade(QUESTION, ASSIGNMENT, ASSIGNMENT, "student10").manual_score = 0.25
        gb.db.commit()
    assert grading.plan_regrade(ASSIGNMENT, QUESTION) == []
    # The instructor makes the deduction 1 point, and moves half a point between items.
    items[0]["points"], items[1]["points"] = 1.5, 0.5
    _with_rubric(course, [*items, {**deduction, "points": -1}])
    plan = grading.plan_regrade(ASSIGNMENT, QUESTION)
    changes = {c.answer.key.student: (c.answer.score, c.new_score) for c in plan}
    assert changes == {
        "student01": (1.5, 1.0),
        "student02": (0.5, 0.5),  # 1 - 0.5 before, 1.5 - 1 now: the same score
        "student08": (1.0, 0.5),
        "student09": (2.0, 2.0),
    }
    assert sorted(c.answer.key.student for c in plan if c.score_changed) == [
        "student01",
        "student08",
    ]
    assert _gradebook(course, "student01")[0] == 1.5  # the plan writes nothing
    grading.regrade(plan, grader="instructor")
    for student, (_, new) in changes.items():
        assert _gradebook(course, student)[0] == new, student
    assert _gradebook(course, "student10")[0] == 0.25
    assert "(-1) Over five sentences" in _gradebook(course, "student01")[1]
    assert grading.plan_regrade(ASSIGNMENT, QUESTION) == []
    history = grading.history(ASSIGNMENT, QUESTION)
    regraded = [h for h in history if h["reason"].startswith("rubric changed")]
    assert {h["student"]: (h["old_score"], h["new_score"]) for h in regraded} == changes


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _upload(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def test_a_csv_download_is_anonymous_and_safe(grading: QuestionGrading) -> None:
    text = grading.download_csv(ASSIGNMENT, QUESTION)
    rows = _rows(text)
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 12
    for student in ANSWERED + UNANSWERED:
        assert student not in text
    answers = {a.anonymous_id: a for a in grading.answers(ASSIGNMENT, QUESTION)}
    assert [r["answer_id"] for r in rows] == list(answers)
    by_student = {answers[r["answer_id"]].key.student: r for r in rows}
    assert by_student[SCRIPTED]["answer"] == _answer(SCRIPTED)  # the text, not its wrapping
    assert by_student[FORMULA]["answer"] == "'" + _answer(FORMULA)  # no formula in a sheet
    assert {by_student[s]["state"] for s in UNANSWERED} == {"unanswered"}


def test_a_csv_upload_grades_the_rows_it_fills(course: ScratchCourse) -> None:
    grading = QuestionGrading(course.root)
    rows = _rows(grading.download_csv(ASSIGNMENT, QUESTION))
    answers = {a.anonymous_id: a.key.student for a in grading.answers(ASSIGNMENT, QUESTION)}
    filled = {}
    for row in rows:
        student = answers[row["answer_id"]]
        if student == "student01":
            row["items"] = f"{ABSOLUTE}; {RELATIVE}"
            row["comment"] = "'=fine"  # as a download neutralises it
        elif student == "student02":
            row["score"] = "1.25"
        elif student == FORMULA:
            row["items"], row["adjustment"], row["score"] = ABSOLUTE, "-0.25", "0.75"
        else:
            continue
        filled[student] = row
    saved = grading.upload_csv(ASSIGNMENT, QUESTION, _upload(rows), grader="ta2")
    assert sorted(a.key.student for a in saved) == sorted(filled)
    assert _gradebook(course, "student01") == (2, _gradebook(course, "student01")[1])
    assert _gradebook(course, "student01")[1].endswith("=fine")
    assert _gradebook(course, "student02") == (1.25, "")
    assert _gradebook(course, FORMULA)[0] == 0.75
    assert {a.grader for a in saved} == {"ta2"}


def test_a_csv_upload_with_bad_rows_writes_nothing(course: ScratchCourse) -> None:
    grading = QuestionGrading(course.root)
    answers = grading.answers(ASSIGNMENT, QUESTION)
    rows = _rows(grading.download_csv(ASSIGNMENT, QUESTION))
    by_student = {a.key.student: (a, row) for a, row in zip(answers, rows, strict=True)}
    good = by_student["student01"][1]
    good["items"] = ABSOLUTE
    bad = {
        "student02": {"items": "made_up"},
        "student05": {"score": "3"},
        "student06": {"adjustment": "lots"},
        "student07": {"items": ABSOLUTE, "score": "2"},
        "student11": {"score": "1"},  # left as released
    }
    for student, change in bad.items():
        by_student[student][1].update(change)
    # student08's answer is graded by someone else after the download.
    stale = by_student["student08"]
    stale[1]["items"] = RELATIVE
    grading.save(ASSIGNMENT, QUESTION, "student08", items=[ABSOLUTE], etag=stale[0].etag,
                 grader="ta1")  # fmt: skip
    unknown = {**good, "answer_id": "a-0000000000"}
    text = _upload([*rows, unknown, dict(good)])
    with pytest.raises(CsvError) as refused:
        grading.upload_csv(ASSIGNMENT, QUESTION, text, grader="ta2")
    problems = refused.value.problems
    expected = {
        by_student["student02"][0].anonymous_id: "no rubric item 'made_up'",
        by_student["student05"][0].anonymous_id: "score 3 is not between 0 and 2",
        by_student["student06"][0].anonymous_id: "adjustment 'lots' is not a number",
        by_student["student07"][0].anonymous_id: "score 2, but its items and adjustment give 1",
        by_student["student11"][0].anonymous_id: "left as released",
        by_student["student08"][0].anonymous_id: "saved by ta1",
        "a-0000000000": "no answer 'a-0000000000'",
    }
    for answer_id, why in expected.items():
        assert [p for p in problems if answer_id in p and why in p], (answer_id, problems)
    assert [p for p in problems if "the same answer_id as an earlier row" in p]
    assert len(problems) == len(expected) + 1
    assert all(p.startswith("row ") for p in problems)
    # Nothing written: not even the good row.
    assert _gradebook(course, "student01") == (None, None)
    assert grading.answer(ASSIGNMENT, QUESTION, "student01").state == "waiting"
    assert [h["student"] for h in grading.history(ASSIGNMENT, QUESTION)] == ["student08"]


def test_the_command_line(
    course: ScratchCourse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m instructor.question_grading``: list, download, upload, regrade, history."""
    root = ["--root", str(course.root)]
    where = [ASSIGNMENT, QUESTION]
    assert main([*root, "list"]) == 0
    assert f"{QUESTION} (2 points): 0 graded, 10 waiting, 2 unanswered" in capsys.readouterr().out
    sheet = tmp_path / "answers.csv"
    assert main([*root, "download", *where, str(sheet)]) == 0
    rows = _rows(sheet.read_text(encoding="utf-8"))
    waiting = [row for row in rows if row["state"] == "waiting"]
    waiting[0]["items"], waiting[1]["items"] = ABSOLUTE, "made_up"
    sheet.write_text(_upload(rows), encoding="utf-8")
    assert main([*root, "upload", *where, str(sheet), "--grader", "ta1"]) == 1
    assert "row " in capsys.readouterr().err
    waiting[1]["items"] = RELATIVE
    sheet.write_text(_upload(rows), encoding="utf-8")
    assert main([*root, "upload", *where, str(sheet), "--grader", "ta1"]) == 0
    assert "2 answer(s) graded" in capsys.readouterr().out
    items = _items(course)
    items[0]["points"], items[1]["points"] = 1.5, 0.5
    _with_rubric(course, items)
    assert main([*root, "regrade", *where, "--grader", "instructor"]) == 0
    out = capsys.readouterr().out
    assert "2 answer(s) use a changed rubric item; 2 score(s) change" in out
    assert ": 1 -> 1.5 (absolute_no_extrapolation)" in out and "nothing written" in out
    assert main([*root, "regrade", *where, "--grader", "instructor", "--yes"]) == 0
    assert "regraded" in capsys.readouterr().out
    assert main([*root, "history", *where]) == 0
    history = _rows(capsys.readouterr().out)
    assert [(h["old_score"], h["new_score"], h["grader"]) for h in history[:2]] == [
        ("", "1.0", "ta1")
    ] * 2
    assert sorted((h["old_score"], h["new_score"], h["grader"]) for h in history[2:]) == [
        ("1.0", "0.5", "instructor"),
        ("1.0", "1.5", "instructor"),
    ]


# -- the grading page (instructor/grading_page.py), in a Jupyter server of this process ------

GROUPS = {"ta-token": ("ta1", ["formgrade-self-attention"]),
          "instructor-token": ("instructor", ["formgrade-self-attention"]),
          "student-token": ("student01", ["nbgrader-self-attention"])}  # fmt: skip


class HubUsers(IdentityProvider):
    """Users as JupyterHub's identity gives them to a single-user server: with their groups."""

    def get_user(self, handler: Any) -> User | None:
        token = handler.request.headers.get("Authorization", "").removeprefix("token ")
        if token not in GROUPS:
            return None
        name, groups = GROUPS[token]
        user = User(username=name)
        user.hub_user = {"name": name, "groups": groups}  # as jupyterhub's JupyterHubUser
        return user

    def is_token_authenticated(self, handler: Any) -> bool:
        return True


def _serve(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings: Any) -> Any:
    """A Jupyter server with the grading page over the course at ``root`` (not listening)."""
    from jupyter_server.serverapp import ServerApp

    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "")
    config = Config()
    config.ServerApp.jpserver_extensions = {"instructor.grading_page": True}
    config.ServerApp.identity_provider_class = HubUsers
    config.ServerApp.root_dir = str(root)
    config.ServerApp.open_browser = False
    config.RubricGradingPage.course_root = str(root)
    for key, value in settings.items():
        setattr(config.RubricGradingPage, key, value)
    app = ServerApp(config=config)
    app.init_signal = lambda: None  # type: ignore[method-assign]
    app.initialize(argv=[], find_extensions=False, new_httpserver=False)
    return app.web_app


def _requests(web_app: Any, calls: list[tuple[str, str, str, Any]]) -> list[tuple[int, str]]:
    """(token, method, path, JSON body or None) -> (status, body) of each, in order."""

    async def run() -> list[tuple[int, str]]:
        server = HTTPServer(web_app)
        (sock,) = bind_sockets(0, "127.0.0.1")
        server.add_sockets([sock])
        client = AsyncHTTPClient()
        out = []
        try:
            for token, method, path, body in calls:
                response = await client.fetch(
                    f"http://127.0.0.1:{sock.getsockname()[1]}{path}",
                    method=method,
                    body=None if body is None else json.dumps(body),
                    headers={"Authorization": f"token {token}"},
                    raise_error=False,
                    follow_redirects=False,
                )
                out.append((response.code, response.body.decode()))
        finally:
            server.stop()
        return out

    return asyncio.run(run())


def test_the_grading_page_grades_with_the_keyboards_api(
    course: ScratchCourse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    web_app = _serve(course.root, tmp_path, monkeypatch)
    api = f"/rubric-grading/api/{ASSIGNMENT}/{QUESTION}"
    (listed, page, first) = _requests(web_app, [
        ("ta-token", "GET", "/rubric-grading", None),
        ("ta-token", "GET", f"/rubric-grading/q/{ASSIGNMENT}/{QUESTION}", None),
        ("ta-token", "GET", f"{api}/next", None),
    ])  # fmt: skip
    assert listed[0] == 200 and QUESTION in listed[1]
    assert "<td>0</td><td>10</td><td>2</td>" in listed[1]  # graded, waiting, unanswered
    assert page[0] == 200
    rubric = QuestionGrading(course.root).rubric(ASSIGNMENT, ASSIGNMENT, QUESTION)
    for n, item in enumerate(rubric.items, start=1):
        assert f"<kbd>{n}</kbd> <b>{item.label}</b>" in page[1]
    assert "Reference answer" in page[1] and "Relative positions" in page[1]
    answer = json.loads(first[1])
    assert (answer["left"], answer["answered"], answer["student"]) == (10, 10, None)
    # Apply item 1 and save, as keys 1 and Enter do: the next answer comes back.
    saved = _requests(web_app, [("ta-token", "POST", f"{api}/answers/{answer['answer_id']}",
                                 {"items": [ABSOLUTE], "etag": answer["etag"]})])[0]  # fmt: skip
    assert saved[0] == 200, saved
    result = json.loads(saved[1])
    assert (result["saved"]["score"], result["saved"]["grader"]) == (1, "ta1")
    assert result["next"]["left"] == 9 and result["next"]["answer_id"] != answer["answer_id"]
    # The same save again, with the etag it was opened with: refused.
    stale = _requests(web_app, [("ta-token", "POST", f"{api}/answers/{answer['answer_id']}",
                                 {"items": [], "etag": answer["etag"]})])[0]  # fmt: skip
    assert stale[0] == 409 and "saved by ta1" in json.loads(stale[1])["message"]


def test_the_grading_page_shows_markup_as_text_and_hides_names(
    course: ScratchCourse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grading = QuestionGrading(course.root)
    scripted = grading.answer(ASSIGNMENT, QUESTION, SCRIPTED)
    web_app = _serve(course.root, tmp_path, monkeypatch, hide_names=False)
    api = f"/rubric-grading/api/{ASSIGNMENT}/{QUESTION}"
    ((status, body),) = _requests(
        web_app, [("ta-token", "GET", f"{api}/answers/{scripted.anonymous_id}", None)]
    )
    assert status == 200
    shown = json.loads(body)
    assert shown["student"] == SCRIPTED
    rendered = shown["html"]
    assert "<img" not in rendered and "<script" not in rendered
    assert f"<pre>{escape(_answer(SCRIPTED))}</pre>" in rendered  # shown as its text
    # Plain markdown is rendered (formatting only).
    plain = grading.answer(ASSIGNMENT, QUESTION, "student01")
    ((_, body),) = _requests(
        web_app, [("ta-token", "GET", f"{api}/answers/{plain.anonymous_id}", None)]
    )
    assert json.loads(body)["html"] == f"<p>{_answer('student01')}</p>\n"


def test_a_student_can_open_neither_the_page_nor_its_api(
    course: ScratchCourse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    web_app = _serve(course.root, tmp_path, monkeypatch)
    answer = QuestionGrading(course.root).answer(ASSIGNMENT, QUESTION, "student01")
    api = f"/rubric-grading/api/{ASSIGNMENT}/{QUESTION}"
    paths = [
        ("GET", "/rubric-grading", None),
        ("GET", f"/rubric-grading/q/{ASSIGNMENT}/{QUESTION}", None),
        ("GET", f"{api}/next", None),
        ("GET", f"{api}/answers/{answer.anonymous_id}", None),
        ("POST", f"{api}/answers/{answer.anonymous_id}", {"items": [ABSOLUTE, RELATIVE],
                                                          "etag": answer.etag}),
        ("POST", f"{api}/regrade", {"count": 0}),
    ]  # fmt: skip
    for token in ("student-token", "no-token"):
        for (status, body), (method, path, _) in zip(
            _requests(web_app, [(token, *call) for call in paths]), paths, strict=True
        ):
            expected = (403,) if token == "student-token" else (302, 403)  # to log in
            assert status in expected, (token, method, path, status, body)
            assert "Relative positions" not in body
    assert _gradebook(course, "student01") == (None, None)


def test_the_page_regrades_after_a_rubric_change_once_confirmed(
    course: ScratchCourse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grading = QuestionGrading(course.root)
    for student in ("student01", "student02"):
        answer = grading.answer(ASSIGNMENT, QUESTION, student)
        grading.save(ASSIGNMENT, QUESTION, student, items=[ABSOLUTE], etag=answer.etag,
                     grader="ta1")  # fmt: skip
    items = _items(course)
    items[0]["points"], items[1]["points"] = 1.5, 0.5
    _with_rubric(course, items)
    web_app = _serve(course.root, tmp_path, monkeypatch)
    api = f"/rubric-grading/api/{ASSIGNMENT}/{QUESTION}"
    page, wrong, right = _requests(web_app, [
        ("ta-token", "GET", f"/rubric-grading/q/{ASSIGNMENT}/{QUESTION}", None),
        ("ta-token", "POST", f"{api}/regrade", {"count": 1}),  # not what the page said
        ("ta-token", "POST", f"{api}/regrade", {"count": 2}),
    ])  # fmt: skip
    assert "2 answer(s) use a rubric item whose points or note changed" in page[1]
    assert "2 score(s) would change" in page[1] and 'data-count="2"' in page[1]
    assert wrong[0] == 409
    assert right[0] == 200, right
    assert json.loads(right[1])["message"] == "2 answer(s) regraded; 2 score(s) changed"
    assert _gradebook(course, "student01")[0] == _gradebook(course, "student02")[0] == 1.5


@contextmanager
def _listening(web_app: Any) -> Iterator[str]:
    """``web_app`` served on a free port of 127.0.0.1 by a thread of its own: its URL."""
    loop = asyncio.new_event_loop()
    (sock,) = bind_sockets(0, "127.0.0.1")

    def serve() -> None:
        asyncio.set_event_loop(loop)
        HTTPServer(web_app).add_sockets([sock])
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def test_two_graders_grade_a_question_with_the_keyboard_alone(
    course: ScratchCourse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chromium: a TA and the instructor on one question's page at once, keys alone."""
    reason = browser_skip_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import expect, sync_playwright

    web_app = _serve(course.root, tmp_path, monkeypatch)
    path = f"/rubric-grading/q/{ASSIGNMENT}/{QUESTION}"
    grading = QuestionGrading(course.root)
    with _listening(web_app) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pages = {}
            for token in ("ta-token", "instructor-token"):
                headers = {"Authorization": f"token {token}"}
                pages[token] = browser.new_context(extra_http_headers=headers).new_page()
                pages[token].goto(url + path)
                expect(pages[token].locator("#counter")).to_have_text("10 of 10 left")
            ta, instructor = pages["ta-token"], pages["instructor-token"]
            # Each was given an answer of its own.
            assert ta.locator("#who").inner_text() != instructor.locator("#who").inner_text()
            for page, keys, left in ((ta, "12", 9), (instructor, "1", 8)):
                for key in keys:
                    page.keyboard.press(key)
                expect(page.locator("#score")).to_have_text(str(len(keys)))
                page.keyboard.press("Enter")
                expect(page.locator("#counter")).to_have_text(f"{left} of 10 left")
            # The TA saves the answer the instructor has open meanwhile (the API, as another
            # page would): the instructor's save is refused, and the answer shown again.
            shown = instructor.locator("#who").inner_text()
            other = next(
                a for a in grading.answers(ASSIGNMENT, QUESTION) if a.anonymous_id == shown
            )
            grading.save(ASSIGNMENT, QUESTION, other.key.student, items=[RELATIVE],
                         etag=other.etag, grader="ta1")  # fmt: skip
            instructor.keyboard.press("1")
            instructor.keyboard.press("Enter")
            expect(instructor.locator("#message")).to_contain_text("saved by ta1")
            expect(instructor.locator("#who")).to_contain_text("graded by ta1")
            instructor.keyboard.press("n")  # on to the next, saving nothing
            expect(instructor.locator("#who")).not_to_contain_text(shown)
            requests: list[tuple[str, str]] = []  # what grading costs: the TA's requests
            ta.on("request", lambda r: requests.append((r.method, r.resource_type)))
            for _ in range(3):
                for page in (ta, instructor):
                    before = page.locator("#who").inner_text()
                    page.keyboard.press("1")
                    page.keyboard.press("Enter")
                    expect(page.locator("#who")).not_to_have_text(before)
            expect(instructor.locator("#counter")).to_have_text("1 of 10 left")
            # Per answer two keys and one request (the save, which returns the next): no
            # page load.
            assert requests == [("POST", "fetch")] * 3
        finally:
            browser.close()
    answers = grading.answers(ASSIGNMENT, QUESTION)
    graded = {a.key.student: a for a in answers if a.state == "graded"}
    assert len(graded) == 9
    assert sorted(a.grader for a in graded.values()).count("ta1") == 5  # 1 + API + 3
    assert [a.score for a in graded.values()].count(2) == 1  # the TA's first, keys 1 and 2
    for student, answer in graded.items():
        assert _gradebook(course, student)[0] == answer.score, student
