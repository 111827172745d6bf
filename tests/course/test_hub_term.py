"""A term on the course's JupyterHub, in a real browser, with real users (issue 29).

The hub is the one ``make hub`` starts (``python -m instructor.hub``: JupyterHub 6.1,
configurable-http-proxy from ``hub/package-lock.json``, nbgrader's exchange, system users
made with ``useradd``), on free loopback ports; Debian's Chromium drives it through
Playwright. The instructor's commands are docs/jupyterhub.md's term block, taken from the
page and run as written (the example assignment replaced by the test's) in a login shell
of the instructor's user (``runuser -l``: ``/etc/profile`` resets ``PATH``, the hub's
``/etc/profile.d`` script puts the course's Python back). What runs, in order:

1. in the instructor's JupyterLab terminal (the server's own, a login shell), ``python``
   and ``nbgrader`` are the course's; the instructor releases 01 with formgrader's Release
   button (Manage Assignments, in the formgrader panel of their JupyterLab) and 10 with
   the docs' ``nbgrader release_assignment``; every student's Assignments tab lists both;
2. three students log in on the hub's page. Each opens the Assignments tab (nbgrader's
   JupyterLab extension), presses Fetch, opens the notebook from the list and types the
   answers into the cells: ann all of 01 right; ben one_hot wrong (built by columns, a
   mistake its diagnostic names) and submits, then the other functions and submits again;
   then he deletes the test cell his one_hot fails by editing the .ipynb as text in his
   home (as his system user; JupyterLab will not delete a locked cell), reloads it,
   Validates (nbgrader says "Success!": it cannot know the cell was there) and submits a
   third time; cat all of 10 with a written answer, after the due date the instructor then
   sets. ann and ben press Validate and read nbgrader's verdict;
3. ann tries to hand in a submission in ben's name with an earlier time (a folder made by
   hand in the exchange's inbound and in the hand-in service's store: both refused, they
   are the instructor's alone); the instructor collects (``nbgrader collect --update``,
   from the hand-in service's store): ben's own newest submission is collected, and cat's
   with the time the service recorded;
4. the instructor grades with the class grader (the docs' ``python -m instructor.classroom
   grade``, both assignments); ``nbgrader autograde`` of a copy of the course gives the
   same score to every submission; ben's hand-in without the test cell is named in
   ``integrity.md`` ("deleted test cell ... restored from the gradebook"), the restored
   cell runs and scores 0, and his other answers score in full; the log's integrity count
   is the report's, and ann's honest hand-in has no note but near copies;
5. the instructor opens formgrader in JupyterLab (its panel must show formgrader: the
   instructor's server sends ``frame-ancestors 'self'``, students' servers JupyterHub's
   ``'none'``) and grades cat's written answer in formgrader, keys alone, counted; twelve
   more students (:data:`CLASS`) handed in 10 with a written answer only, through the
   hand-in service with their own hub tokens, collected and graded with the others; the
   instructor and a TA (another instructor of the roster, in the
   instructor's server) grade their answers on the grading page by question at once, keys
   alone, counted (docs/instructors.md's cost table is what was counted); the class grader
   runs again and writes every hand-given score into the reports and the feedback;
6. ``nbgrader release_feedback``; each student presses Fetch Feedback and opens their
   feedback: their score, the diagnostic (ben), the instructor's comment (cat); no hidden
   test and no other student's name;
7. ``reports/totals.csv`` and the LMS exports carry the hand-given points and cat's late
   penalty (10 % per started hour, from the hand-in service's timestamp, of her score with
   the hand-given points), and the gradebook holds the same penalty;
8. what a student may not do, tried as the student's system user: list the exchange's
   inbound or feedback folders, read another's home or the instructor's gradebook, open
   formgrader or the grading page and its API (theirs are off, the instructor's server is
   not theirs); and bad hand-ins:
   a renamed notebook and a submission over the course's size limit are refused with
   nbgrader's message, an extra file goes along, and nothing of the student's is lost.

Skips, saying why, where it cannot run: not root (it makes system users), no Chromium, no
Node.js or no ``hub/node_modules`` (``make test`` runs ``npm ci`` there).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import sys
import time
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import nbformat
import pytest
from nbgrader.utils import parse_utc

from instructor import anatomy, registry
from instructor.grading_cases import load_cases
from instructor.paths import COURSE_ROOT
from instructor.question_grading import feedback_comment
from instructor.rubrics import notebook_rubrics
from support.hub import (
    CHROMIUM,
    TIMEOUT_MS,
    Hub,
    course_hub,
    hub_skip_reason,
    lab_settings,
)
from support.studentview import ARTIFACTS, CHROMIUM_ARGS

INSTRUCTOR, ANN, BEN, CAT = "hubteach", "hubann", "hubben", "hubcat"
TA = "hubta"  # a second instructor of the roster: in formgrade-<course>, no course folder
# Twelve more students, who hand in 10 with its written answer only (through the hand-in
# service, with their own hub tokens): with cat, a class of 13 answers to grade by question.
CLASS = tuple(f"hubs{n:02d}" for n in range(1, 13))
ROSTER = f"""course = "self-attention"
instructors = ["{INSTRUCTOR}", "{TA}"]
students = {json.dumps([ANN, BEN, CAT, *CLASS])}
"""
ONE, TEN = "01_vector_sets", "10_transformer_block"
WRITTEN = "written_pre_norm"
CAT_ANSWER = (
    "Pre-norm keeps the residual path an identity: the sum x + sublayer(norm(x)) "
    "lets gradients reach early layers unchanged."
)
COMMENT = "Right about the identity path; say why post-norm needs warm-up."
MANUAL_POINTS = 1.5
PER_HOUR = 10  # the late penalty, % of the notebook's score per started hour
DELETED_TEST = "test_one_hot"  # the test cell ben removes: the one his one_hot fails
# Run as ben: his notebook without the cell of the grade id given, as a text edit leaves it.
DELETE_CELL = """import sys, nbformat
path, grade_id = sys.argv[1:]
nb = nbformat.read(path, as_version=4)
nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
nbformat.write(nb, path)
"""
# The rubric items each of the class's answers gets on the grading page, by key (items 1
# and 2 of written_pre_norm, a point each): scores 1, 1, 2 and 0 in turn.
CLASS_KEYS = ("1", "2", "12", "")
SCRIPTED = CLASS[0]  # an answer holding markup that would run script if it were rendered
MARKUP = '<img src=x onerror="alert(1)">'
DOCS = COURSE_ROOT / "docs" / "jupyterhub.md"
COSTS_DOCS = COURSE_ROOT / "docs" / "instructors.md"
# Run as a student: what nbgrader submit (instructor.exchange.HubSubmit) sends the hand-in
# service, the notebook from the student's home and their own hub token.
HAND_IN = """import base64, json, os, sys, urllib.request
url, course, assignment, path = sys.argv[1:]
with open(path, "rb") as handle:
    content = base64.b64encode(handle.read()).decode()
files = [{"path": os.path.basename(path), "content": content}]
body = json.dumps({"course": course, "assignment": assignment, "files": files}).encode()
token = os.environ["JUPYTERHUB_API_TOKEN"]
request = urllib.request.Request(url + "submit", data=body, method="POST", headers={
    "Authorization": "token " + token, "Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=120) as response:
    print(json.load(response)["timestamp"])
"""
# Run as a student: a request to a server's API with the student's own hub token; prints
# the status and the start of the reply.
API_CALL = """import os, sys, urllib.error, urllib.request
url, body = sys.argv[1:]
request = urllib.request.Request(url, data=body.encode() or None, method="POST" if body else
    "GET", headers={"Authorization": "token " + os.environ["JUPYTERHUB_API_TOKEN"]})
try:
    with urllib.request.urlopen(request, timeout=60) as response:
        print(response.status, response.read(300))
except urllib.error.HTTPError as error:
    print(error.code, error.read(300))
"""
HANDIN_SCOPES = ["access:services!service=handin", "read:users:groups!user"]
# The kinds of command docs/jupyterhub.md's term block holds, each run by this test as
# written there: a command added to the block and not run here fails the test.
TERM_KINDS = (
    "cd ",
    "nbgrader release_assignment ",
    "nbgrader collect ",
    "python -m instructor.classroom grade ",
    "nbgrader release_feedback ",
)

pytestmark = pytest.mark.xdist_group("hub")


def class_answer(student: str) -> str:
    """The written answer of one of :data:`CLASS`: numbered, so the test (not the grader,
    who sees anonymised ids) knows whose answer the page shows."""
    number = CLASS.index(student) + 1
    markup = f"{MARKUP} " if student == SCRIPTED else ""
    return (
        f"Answer {number:02d}. {markup}Pre-norm leaves the residual path without a LayerNorm, "
        f"so deep stacks train without warm-up (point {number})."
    )


def shown_student(text: str) -> str:
    """The student of :data:`CLASS` whose answer a page shows."""
    found = re.search(r"Answer (\d\d)\.", text)
    assert found, f"not an answer of the class: {text!r}"
    return CLASS[int(found.group(1)) - 1]


def class_keys(student: str) -> str:
    return CLASS_KEYS[CLASS.index(student) % len(CLASS_KEYS)]


def wrong_one_hot() -> tuple[str, str]:
    """ben's one_hot: built by columns, and the message its diagnostic gives."""
    case = next(c for c in load_cases(ONE) if c.message and "transposed" in c.message)
    return case.source, case.message


# -- the browser side --------------------------------------------------------------------


def open_assignments(page) -> None:
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    page.locator(".lm-Menu-item", has_text="Assignment List").click()
    page.wait_for_selector("#released_assignments_list")


def show_assignments_tab(page) -> None:
    page.locator(".lm-TabBar-tab", has_text="Assignments").first.click()


def fetch(page, assignment: str) -> None:
    row = page.locator("#released_assignments_list .list_item", has_text=assignment)
    row.locator("button", has_text="Fetch").click()
    page.locator("#fetched_assignments_list .list_item", has_text=assignment).first.wait_for()


def open_from_list(page, assignment: str) -> None:
    """Open the fetched notebook from the Assignments tab, as a student would."""
    row = page.locator("#fetched_assignments_list > .list_item", has_text=assignment)
    row.locator(".assignment-notebooks-link").click()
    row.locator(".nested_list_item a", has_text=assignment).click()
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")


def cell_positions(assignment: str) -> dict[str, int]:
    """grade_id -> position of every solution cell in the student notebook."""
    released = anatomy.read_released(assignment)
    return {
        anatomy.grade_id(cell): i
        for i, cell in enumerate(released.cells)
        if anatomy.is_solution_cell(cell)
    }


def cell_sources(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> source of every nbgrader cell of a submitted notebook."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in notebook.cells
        if "grade_id" in cell.metadata.get("nbgrader", {})
    }


def reload_from_disk(page, assignment: str) -> None:
    """File > Reload Notebook from Disk: the open notebook takes the file's new text."""
    page.locator(".lm-TabBar-tab", has_text=f"{assignment}.ipynb").first.click()
    cells = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
    before = page.locator(cells).count()
    page.locator(".lm-MenuBar-item", has_text="File").click()
    page.locator(".lm-Menu-item", has_text="Reload Notebook from Disk").click()
    page.wait_for_function(
        "([s, n]) => document.querySelectorAll(s).length < n", arg=[cells, before]
    )


def type_answers(page, assignment: str, answers: dict[str, str]) -> None:
    """Replace each named solution cell's text with the answer, by keyboard, and save."""
    positions = cell_positions(assignment)
    page.locator(".lm-TabBar-tab", has_text=f"{assignment}.ipynb").first.click()
    for grade_id, text in answers.items():
        cell = page.locator(
            f".jp-NotebookPanel .jp-Cell[data-windowed-list-index='{positions[grade_id]}']"
        )
        cell.scroll_into_view_if_needed()
        if "jp-MarkdownCell" in (cell.get_attribute("class") or ""):
            cell.dblclick()  # a rendered markdown cell opens its editor on a double click
        editor = cell.locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(text)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')"
    )


def validate(page, assignment: str) -> str:
    """Press the notebook's Validate button; nbgrader's verdict, as its dialog shows it."""
    page.locator(".lm-TabBar-tab", has_text=f"{assignment}.ipynb").first.click()
    page.locator(".jp-NotebookPanel-toolbar .validate-button").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    text = dialog.inner_text()
    dialog.locator(".jp-Dialog-button").last.click()
    dialog.wait_for(state="detached")
    return text


def submit(page, assignment: str) -> None:
    """Press Submit in the Assignments tab and wait for the new entry in its list."""
    show_assignments_tab(page)
    # The list holds one entry per assignment, with a line per submission time under it.
    times = """a => [...document.querySelectorAll('#submitted_assignments_list .list_item')]
        .filter(e => e.textContent.includes(a))
        .map(e => (e.textContent.match(/\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d/g) || []).length)
        .reduce((x, y) => x + y, 0)"""
    before = page.evaluate(times, assignment)
    row = page.locator("#fetched_assignments_list > .list_item", has_text=assignment)
    row.locator("button", has_text="Submit").click()
    page.wait_for_function(f"a => ({times})(a) > {before}", arg=assignment)


def fetch_feedback(page, hub: Hub, user: str, assignment: str) -> str:
    """Press Fetch Feedback, then open the fetched feedback page; its text."""
    show_assignments_tab(page)
    page.locator("#refresh_assignments_list").click()
    row = page.locator("#submitted_assignments_list .list_item", has_text=assignment).last
    button = row.locator("button", has_text="Fetch Feedback")
    button.wait_for()
    button.click()
    folder = hub.settings.home(user) / hub.roster.course / assignment / "feedback"
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not list(folder.glob(f"*/{assignment}.html")):
        assert time.monotonic() < deadline, f"no feedback fetched into {folder}"
        time.sleep(0.5)
    html = sorted(folder.glob(f"*/{assignment}.html"))[-1]
    relative = html.relative_to(hub.settings.home(user))
    view = page.context.new_page()
    view.goto(f"{hub.url}/user/{user}/files/{quote(str(relative))}")
    text = view.locator("body").inner_text()
    view.close()
    return text


def server_post(page, hub: Hub, user: str, path: str, data: dict[str, str]) -> dict:
    """POST to ``user``'s own server as the page's JavaScript does (its XSRF cookie)."""
    cookies = {c["name"]: c["value"] for c in page.context.cookies(f"{hub.url}/user/{user}/")}
    response = page.request.post(
        f"{hub.url}/user/{user}/{path}",
        form=data,
        headers={"X-XSRFToken": cookies.get("_xsrf", "")},
    )
    assert response.ok, f"{path}: {response.status} {response.text()[:500]}"
    return response.json()


# -- the instructor's side -----------------------------------------------------------------


def hand_in_class(hub: Hub) -> None:
    """Each student of :data:`CLASS` hands in 10 as released with a written answer: the
    notebook in their home, sent by their system user to the hub's hand-in service with a
    hub token of their own (what the Submit button's ``nbgrader submit`` sends; their
    JupyterLab servers are not started, which would cost minutes)."""
    released = anatomy.read_released(TEN)
    for student in CLASS:
        notebook = nbformat.from_dict(released)
        (cell,) = [c for c in notebook.cells if anatomy.grade_id(c) == WRITTEN]
        cell.source = class_answer(student)
        path = hub.settings.home(student) / hub.roster.course / TEN / f"{TEN}.ipynb"
        hub.write_as(student, path, nbformat.writes(notebook))
        token = hub.token(student, HANDIN_SCOPES)
        sent = [HAND_IN, hub.settings.handin_url, hub.roster.course, TEN, str(path)]
        hub.run_as(student, sys.executable, "-c", *sent, env=hub.server_env(student, token))


def set_due_date(hub: Hub, assignment: str, due: datetime) -> None:
    """The instructor's course config gets a due date and a per-hour late penalty."""
    config = hub.course / "nbgrader_config.py"
    text = config.read_text() + (
        f"\nc.Deadlines.due_dates = {{{assignment!r}: {due.strftime('%Y-%m-%d %H:%M:%S')!r}}}\n"
        'c.AssignLatePenalties.plugin_class = "instructor.classroom.grader.course.PerHourPenalty"\n'
        f"c.PerHourPenalty.percent_per_hour = {PER_HOUR}\n"
    )
    hub.write_as(INSTRUCTOR, config, text)


def documented_term() -> list[str]:
    """The instructor's commands of docs/jupyterhub.md's term (the bash block with the class
    grader), in order, without comments and blank lines."""
    blocks = re.findall(r"```bash\n(.*?)```", DOCS.read_text(), re.S)
    (block,) = [b for b in blocks if "instructor.classroom grade" in b]
    commands = []
    for line in block.splitlines():
        command = "" if line.lstrip().startswith("#") else line.split(" #", 1)[0].strip()
        if command:
            commands.append(command)
    return commands


def documented(kind: str, *assignments: str) -> str:
    """The docs' term command that starts with ``kind``, as written there, after the block's
    own ``cd``; ``assignments`` in place of the docs' example assignment (01)."""
    term = documented_term()
    unknown = [c for c in term if not c.startswith(TERM_KINDS)]
    assert not unknown, f"docs/jupyterhub.md's term has commands this test does not run: {unknown}"
    (cd,) = [c for c in term if c.startswith("cd ")]
    found = {c for c in term if c.startswith(kind)}  # grade appears twice, the same line
    assert len(found) == 1, f"docs/jupyterhub.md's term has {sorted(found)} for {kind!r}"
    (line,) = found
    assert ONE in line.split(), line
    words = [" ".join(assignments) if word == ONE else word for word in line.split(" ")]
    return f"{cd} && {' '.join(words)}"


def instructor_runs(hub: Hub, kind: str, *assignments: str):
    """The docs' command ``kind`` in a login shell of the instructor (``runuser -l``): what
    they type in their JupyterLab terminal, where ``/etc/profile`` resets ``PATH`` and the
    hub's ``/etc/profile.d`` script puts the course's Python back first."""
    command = documented(kind, *assignments)
    result = hub.login_shell(INSTRUCTOR, command)
    # The class grader's log is its stdout (progress bars on stderr); nbgrader's is stderr.
    lines = (result.stdout if result.stdout.strip() else result.stderr).splitlines()
    output = [line for line in lines if line.strip()]
    print(f"  [{INSTRUCTOR}, login shell] $ {command}")
    for line in output[-6:]:
        print(f"    {line[:200]}")
    return result


def class_grade(hub: Hub) -> str:
    """``make grade``'s command as docs/jupyterhub.md gives it, for both assignments (the
    reports cover the assignments of one run), in the instructor's login shell."""
    result = instructor_runs(hub, "python -m instructor.classroom grade ", ONE, TEN)
    return result.stdout + result.stderr


def check_integrity_report(hub: Hub, log: str) -> None:
    """The log's integrity count is the report's own line; the honest hand-ins (ann's and
    cat's: the reference answers typed in JupyterLab, saved, submitted; ann's validated
    too) have no note but near copies."""
    report = (hub.course / "reports" / "integrity.md").read_text()
    count = next(line for line in report.splitlines() if line and not line.startswith("#"))
    logged = [
        line.split("integrity report: ", 1)[1].rsplit(" (", 1)[0]
        for line in log.splitlines()
        if "integrity report: " in line
    ]
    assert logged and logged[-1] + "." == count, (logged, count)
    print(f"  integrity: {count}")
    for student, assignment in ((ANN, ONE), (CAT, TEN)):
        parts = report.split(f"## {student} / {assignment} (", 1)
        section = parts[1].split("\n## ", 1)[0] if len(parts) > 1 else ""
        notes = [line for line in section.splitlines() if line.startswith("- ")]
        print(f"  {student}'s notes: {notes}")
        others = [note for note in notes if "near copy of" not in note]
        assert not others, f"{student}'s honest hand-in has notes: {others}\n{report}"


TERMINAL_RUN = """async ([base, command, marker]) => {
    const xsrf = decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "");
    const made = await fetch(base + "api/terminals", {
        method: "POST", headers: {"X-XSRFToken": xsrf}});
    const name = (await made.json()).name;
    const url = base.replace(/^http/, "ws") + "terminals/websocket/" + name
        + "?_xsrf=" + encodeURIComponent(xsrf);
    const out = await new Promise((resolve) => {
        let text = "";
        const socket = new WebSocket(url);
        const timer = setTimeout(() => resolve(text), 120000);
        socket.onopen = () => socket.send(JSON.stringify(["stdin", command + "\\r"]));
        socket.onmessage = (event) => {
            const [kind, data] = JSON.parse(event.data);
            if (kind !== "stdout") return;
            text += data;
            if (text.includes(marker)) { clearTimeout(timer); socket.close(); resolve(text); }
        };
        socket.onerror = () => resolve(text + "[websocket error]");
    });
    await fetch(base + "api/terminals/" + name, {
        method: "DELETE", headers: {"X-XSRFToken": xsrf}});
    return out;
}"""


def in_terminal(page, hub: Hub, user: str, command: str) -> str:
    """``command`` typed into a new terminal of ``user``'s JupyterLab (the terminal the
    Terminal launcher opens: the server's own, a login shell); what it printed."""
    # The marker as the shell prints it, not as the terminal echoes the typed line.
    command += "; echo END-OF-$((40 + 2))"
    base = f"{hub.url}/user/{user}/"
    return page.evaluate(TERMINAL_RUN, [base, command, "END-OF-42"])


def check_instructor_terminal(page, hub: Hub) -> None:
    """In the instructor's JupyterLab terminal, ``python`` and ``nbgrader`` are the
    course's (issue 44: ``bash: python: command not found`` there before)."""
    venv_bin = Path(sys.executable).parent
    login = 'echo "login_shell=$(shopt -q login_shell && echo yes || echo no)"'
    out = in_terminal(page, hub, INSTRUCTOR, f"command -v python nbgrader; {login}")
    found = [line.strip() for line in out.splitlines() if line.strip().startswith("/")]
    print(f"  [{INSTRUCTOR}, JupyterLab terminal] command -v python nbgrader: {found[:2]}")
    assert str(venv_bin / "python") in found and str(venv_bin / "nbgrader") in found, out
    assert "login_shell=yes" in out, f"the terminal's shell is not a login shell: {out}"


def scores(db: Path) -> dict[tuple[str, str], float]:
    """(student, notebook) -> the notebook's score (autograded + manual - late penalty)."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{db}") as gradebook:
        for assignment in (ONE, TEN):
            for submission in gradebook.assignment_submissions(assignment):
                for notebook in submission.notebooks:
                    found[(submission.student_id, notebook.name)] = round(
                        notebook.score - (notebook.late_submission_penalty or 0), 6
                    )
    return found


def autograde_copy(hub: Hub) -> dict[tuple[str, str], float]:
    """``nbgrader autograde`` of the same submissions in a copy of the course folder."""
    copy = hub.settings.home(INSTRUCTOR) / "autograde-check"
    # ann's, ben's and cat's (the class's hand-ins are the release with a written answer:
    # nbgrader's kernel start for each would add minutes and prove nothing more).
    for student in (ANN, BEN, CAT):
        shutil.copytree(hub.course / "submitted" / student, copy / "submitted" / student)
    # The assignments as the class grader registered them (cells, points, due date);
    # autograde scores every submission again.
    shutil.copy2(hub.course / "gradebook.db", copy / "gradebook.db")
    config = (hub.course / "nbgrader_config.py").read_text()
    config = config.replace(repr(str(hub.course)), repr(str(copy)))
    hub.write_as(INSTRUCTOR, copy / "nbgrader_config.py", config)
    shutil.chown(copy, INSTRUCTOR, INSTRUCTOR)
    for path in copy.rglob("*"):
        shutil.chown(path, INSTRUCTOR, INSTRUCTOR)
    for assignment in (ONE, TEN):
        hub.run_as(INSTRUCTOR, "nbgrader", "autograde", assignment, cwd=copy)
    return scores(copy / "gradebook.db")


GRADING_PAGE = "rubric-grading"
"""The address of ``instructor.grading_page`` in the instructor's server."""


def check_grading_page(page, hub: Hub) -> None:
    """The instructor's grading page by question (``instructor.grading_page``, enabled by
    ``make hub`` in the instructor's server only) lists 10's written question with cat's
    answer waiting, read from the course's gradebook, to the hub user of group formgrade."""
    listing = page.request.get(f"{hub.url}/user/{INSTRUCTOR}/{GRADING_PAGE}")
    assert listing.status == 200, f"the grading page answered {listing.status}"
    (question,) = [q.name for q in registry.load().notebook(TEN).written_answers]
    row = re.search(rf"<tr><td><a [^>]*>{question}</a></td>(.*?)</tr>", listing.text())
    assert row, f"{question} is not listed:\n{listing.text()[:2000]}"
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    # assignment, points, graded, waiting, unanswered
    assert cells[0] == TEN and cells[2:4] == ["0", str(len(CLASS) + 1)], cells


def open_formgrader(page):
    """The instructor's Nbgrader menu > Formgrader: its panel, on Manage Assignments."""
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    exact = page.get_by_text("Formgrader", exact=True)  # not "Formgrader (local)"
    page.locator(".lm-Menu-item", has=exact).first.click()
    frame = page.frame_locator("#formgrader-iframe iframe")
    # Blocked by frame-ancestors, the frame holds Chromium's error page, not formgrader.
    frame.locator("text=Manage Assignments").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "hub_formgrader.png"))
    return frame


def release_in_formgrader(page, assignment: str) -> None:
    """Formgrader's Manage Assignments: the assignment's Release button (the cloud icon)."""
    frame = open_formgrader(page)
    row = frame.locator("tr", has=frame.locator("td.name", has_text=assignment))
    with page.expect_response(lambda r: r.url.endswith(f"/assignment/{assignment}/release")):
        row.locator("td.release a").click()
    frame.locator("#success-modal", has_text=f"Successfully released '{assignment}'").wait_for()
    row.locator("td.status", has_text="released").wait_for()
    page.screenshot(path=str(ARTIFACTS / "hub_formgrader_released.png"))


@dataclass
class Traffic:
    """What a page did from one mark to the next: the pages it loaded (its load events) and
    the requests of its script to formgrader's or the grading page's API."""

    page: Any
    seen: list[tuple[str, str, str]] = field(default_factory=list)
    loads: int = 0

    def __post_init__(self) -> None:
        self.page.on("request", lambda r: self.seen.append((r.resource_type, r.method, r.url)))
        self.page.on("load", lambda _: self._loaded())

    def _loaded(self) -> None:
        self.loads += 1

    def take(self) -> tuple[int, list[tuple[str, str, str]]]:
        """The pages loaded and the API calls since the last mark (documents, scripts,
        styles and fonts left out: formgrader's "next" is two redirects to one page)."""
        taken = [seen for seen in self.seen if "/api/" in seen[2] and seen[0] in ("xhr", "fetch")]
        loads, self.loads = self.loads, 0
        self.seen.clear()
        return loads, taken


@dataclass(frozen=True)
class Cost:
    """Grading one answer, as a browser test counts it."""

    what: str
    page_loads: int
    api_requests: int
    keys: str
    """Keys pressed, as the table gives them (a count, or the counts seen)."""

    @classmethod
    def of(cls, what: str, traffic: tuple[int, list[tuple[str, str, str]]], keys: str) -> Cost:
        loads, requests = traffic
        return cls(what, loads, len(requests), keys)

    def row(self) -> str:
        return f"| {self.what} | {self.page_loads} | {self.api_requests} | {self.keys} |"


def submission_ids(hub: Hub, assignment: str) -> dict[str, str]:
    """student -> the id of their submitted notebook ``assignment`` (formgrader's pages)."""
    with sqlite3.connect(hub.course / "gradebook.db") as db:
        return dict(
            db.execute(
                "SELECT sa.student_id, sn.id FROM submitted_notebook sn JOIN notebook n ON "
                "sn.notebook_id = n.id JOIN submitted_assignment sa ON sn.assignment_id = "
                "sa.id JOIN assignment a ON sa.assignment_id = a.id WHERE a.name = ? AND "
                "n.name = ?",
                (assignment, assignment),
            ).fetchall()
        )


def grade_in_formgrader(context, hub: Hub) -> list[Cost]:
    """cat's written answer graded in formgrader with the keyboard alone, counted: her
    submission's page (what Manual Grading links to), Tab to the question's score box,
    the score, Tab, the comment, then Ctrl+. (formgrader's "next submission", which saves
    the box and opens the next student's page on the same question's score box)."""
    ids = submission_ids(hub, TEN)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    traffic = Traffic(page)
    base = f"{hub.url}/user/{INSTRUCTOR}/formgrader"
    # Formgrader saves a score on its box's change event once its page has loaded the
    # cell's grades and comments (typed before, a score is lost): wait for both loads.
    with (
        page.expect_response(lambda r: "/formgrader/api/grades?" in r.url),
        page.expect_response(lambda r: "/formgrader/api/comments?" in r.url),
    ):
        page.goto(f"{base}/submissions/{ids[CAT]}/")
    # Once MathJax has typeset the page, formgrader focuses its first score or comment box.
    focused = "() => document.activeElement ? document.activeElement.id : ''"
    page.wait_for_function("() => !!document.activeElement?.matches('.tabbable')")
    tabs = 0
    while page.evaluate(focused) != WRITTEN:
        page.keyboard.press("Tab")
        tabs += 1
        assert tabs < 200, "Tab never reached the written answer's score box"
    opened = traffic.take()

    def put(kind: str):
        return lambda r: f"/formgrader/api/{kind}/" in r.url and r.request.method == "PUT"

    score = str(MANUAL_POINTS)
    with page.expect_response(put("grade")) as saved:
        page.keyboard.type(score)
        page.keyboard.press("Tab")  # the score is saved as its box loses the focus
    assert saved.value.ok
    tabs_to_comment = 1
    while page.evaluate(focused) != f"{WRITTEN}-comment":  # past the extra credit box
        page.keyboard.press("Tab")
        tabs_to_comment += 1
        assert tabs_to_comment < 5, page.evaluate(focused)
    page.keyboard.type(COMMENT)
    # Ctrl+. saves the comment and opens the next submission (Ctrl+, the previous one, for
    # the last in formgrader's order), focused on the same question's score box.
    order = sorted(ids.values())
    chord = "Control+," if order[-1] == ids[CAT] else "Control+."
    with (
        page.expect_response(put("comment")) as saved,
        page.expect_response(lambda r: "/formgrader/api/comments?" in r.url),
    ):
        page.keyboard.press(chord)
    assert saved.value.ok
    page.wait_for_function("id => document.activeElement?.id === id", arg=WRITTEN)
    assert f"/submissions/{ids[CAT]}/" not in page.url, page.url
    graded = traffic.take()
    page.screenshot(path=str(ARTIFACTS / "hub_formgrader_graded.png"))
    page.close()
    typed = len(score) + tabs_to_comment + len(COMMENT) + 1
    print(f"  formgrader: {tabs} Tab presses to {WRITTEN}; {opened} then {graded}")
    return [
        Cost.of("formgrader: open the submission, Tab to the question's score box", opened,
                str(tabs)),
        Cost.of(f"formgrader: each answer (score, Tab to the comment box, a {len(COMMENT)}-"
                "character comment, Ctrl+.: saves, opens the next student's)", graded,
                str(typed)),
    ]  # fmt: skip


def grade_by_question(
    browser, context, hub: Hub
) -> tuple[dict[str, str], dict[str, str], list[Cost]]:
    """The class's answers to 10's written question graded on the grading page, with the
    keyboard alone, by the instructor (a tab of their session) and the TA (logged in on
    the hub, in the instructor's server) at the same time, taking turns answer by answer.
    Returns who graded each student's answer, its anonymised id, and the page's costs."""
    from playwright.sync_api import expect

    path = f"/user/{INSTRUCTOR}/{GRADING_PAGE}/q/{TEN}/{WRITTEN}"
    total = len(CLASS) + 1
    teach = context.new_page()
    teach.set_default_timeout(TIMEOUT_MS)
    traffic = {INSTRUCTOR: Traffic(teach)}
    teach.goto(hub.url + path)
    expect(teach.locator("#counter")).to_have_text(f"{len(CLASS)} of {total} left")
    opened = traffic[INSTRUCTOR].take()
    ta = hub.login(browser, TA, path)
    traffic[TA] = Traffic(ta)
    expect(ta.locator("#counter")).to_have_text(f"{len(CLASS)} of {total} left")
    pages = {INSTRUCTOR: teach, TA: ta}
    alerts: list[str] = []
    for page in pages.values():
        page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    assert teach.locator("#who").inner_text() != ta.locator("#who").inner_text()
    done = "Every answer is graded."
    graded: dict[str, str] = {}
    answer_ids: dict[str, str] = {}
    keys_per_answer: set[int] = set()
    refused: list[tuple[str, str]] = []
    for _ in range(3 * len(CLASS)):
        waiting = [n for n, p in pages.items() if p.locator("#answer").inner_text() != done]
        if not waiting:
            break
        for name in waiting:
            page = pages[name]
            shown = page.locator("#answer")
            student = shown_student(shown.inner_text())
            if student == SCRIPTED:  # the markup is shown as its text, and nothing ran
                assert shown.locator("img").count() == 0, shown.inner_html()
                assert MARKUP in shown.inner_text(), shown.inner_text()
            before = page.locator("#who").inner_text()
            answer_ids.setdefault(student, before.split()[0])
            traffic[name].take()
            keys = class_keys(student)
            for key in keys:
                page.keyboard.press(key)
            expect(page.locator("#score")).to_have_text(str(len(keys)))
            page.keyboard.press("Enter")
            # Saved: the next answer (or the end) is shown. Refused: the answer is shown
            # again, saved by the other grader meanwhile.
            page.wait_for_function(
                "b => document.getElementById('who').textContent !== b", arg=before
            )
            message = page.locator("#message").inner_text()
            if message:
                assert "saved by" in message and student in graded, (name, message)
                refused.append((name, message))
                page.keyboard.press("n")  # on to the next, saving nothing
                page.wait_for_function(
                    "b => !document.getElementById('who').textContent.startsWith(b)",
                    arg=before,
                )
                continue
            assert student not in graded, f"{student}'s answer saved twice"
            graded[student] = name
            # One request per answer: the save, which answers with the next; no page load.
            loads, requests = traffic[name].take()
            assert (loads, [(k, m) for k, m, _ in requests]) == (0, [("fetch", "POST")])
            keys_per_answer.add(len(keys) + 1)
    for page in pages.values():
        expect(page.locator("#counter")).to_have_text(f"0 of {total} left")
        expect(page.locator("#answer")).to_have_text(done)
    ta.screenshot(path=str(ARTIFACTS / "hub_grading_page_ta.png"))
    ta.context.close()
    assert sorted(graded) == sorted(CLASS), graded
    assert set(graded.values()) == {INSTRUCTOR, TA}, graded
    assert not alerts, f"an answer's script ran: {alerts}"
    # Both were given the last answer that waited (no other was left): one save stands,
    # the other is refused, never written over it.
    assert len(refused) == 1, refused
    print(f"  graded by question: {graded}; refused saves: {refused}")
    counts = sorted(keys_per_answer)
    keys = ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"
    return graded, answer_ids, [
        Cost.of("grading page: open the question (its first answer shown)", opened, "0"),
        Cost.of("grading page: each answer (a key per rubric item, Enter: saves, shows the "
                "next)", (0, [("fetch", "POST", "")]), keys),
    ]  # fmt: skip


def check_cost_table(costs: list[Cost]) -> None:
    """docs/instructors.md's table of what grading one answer costs is what was counted."""
    text = COSTS_DOCS.read_text()
    rows = [cost.row() for cost in costs]
    print("\n".join(rows))
    missing = [row for row in rows if row not in text]
    assert not missing, f"{COSTS_DOCS.name}'s cost table lacks the rows counted:\n" + "\n".join(
        missing
    )


def check_store(hub: Hub, graded: dict[str, str]) -> None:
    """The grading page's store names who saved each answer and the items applied."""
    store = hub.course / "rubric_grading.sqlite"
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        saves = {
            student: (grader, json.loads(items))
            for student, grader, items in db.execute(
                "SELECT student, grader, items FROM saves WHERE question = ?", (WRITTEN,)
            )
        }
    rubric = written_rubric()
    for student, grader in graded.items():
        items = [rubric.items[int(k) - 1].id for k in class_keys(student)]
        assert saves[student] == (grader, items), (student, saves.get(student))


def written_rubric():
    return notebook_rubrics(anatomy.read_solution(TEN), TEN)[WRITTEN]


def check_class_reports(hub: Hub) -> None:
    """Every student of the class: the gradebook, totals.csv, the Canvas and Moodle exports
    and their feedback (as released) hold the score of the items applied on the grading
    page, and the feedback their notes (never the criteria or the reference answer)."""
    from nbgrader.api import Gradebook

    rubric = written_rubric()
    reports = hub.course / "reports"
    with (reports / "totals.csv").open() as handle:
        totals = {(r["student"], r["assignment"]): r for r in csv.DictReader(handle)}
    with (reports / "moodle.csv").open() as handle:
        moodle = {r["Username"]: r for r in csv.DictReader(handle)}
    with (reports / "canvas.csv").open() as handle:
        canvas = {r["SIS Login ID"]: r for r in csv.DictReader(handle)}
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        for student in CLASS:
            items = [rubric.items[int(k) - 1] for k in class_keys(student)]
            points = sum(item.points for item in items)
            grade = gradebook.find_grade(WRITTEN, TEN, TEN, student)
            comment = gradebook.find_comment(WRITTEN, TEN, TEN, student)
            assert grade.manual_score == points, (student, grade.manual_score, points)
            assert (comment.manual_comment or "") == feedback_comment(
                rubric, [item.id for item in items], ""
            ), (student, comment.manual_comment)
            notebook = gradebook.find_submission_notebook(TEN, TEN, student)
            row = totals[(student, TEN)]
            assert float(row["score"]) == pytest.approx(notebook.score), (row, notebook.score)
            assert float(row["late_penalty"] or 0) == 0, row  # handed in before the due date
            assert float(row["final"]) == pytest.approx(notebook.score), row
            assert row["awaiting_manual"] in ("0", "False", ""), row
            assert float(moodle[student][TEN]) == pytest.approx(notebook.score), moodle[student]
            assert float(canvas[student][TEN]) == pytest.approx(notebook.score), canvas[student]
            feedback = hub.course / "feedback" / student / TEN / f"{TEN}.html"
            text = " ".join(unescape(re.sub(r"<[^>]+>", " ", feedback.read_text())).split())
            assert f"Written response (Score: {points:.1f} / 2.0)" in text, (student, text[:1500])
            for item in rubric.items:
                note = " ".join(item.note.split())
                assert (note in text) == (item in items), (student, item.id)
                assert " ".join(item.criterion.split())[:80] not in text, (student, item.id)
            assert "Reference answer" not in text, student
    print(f"  the class's {len(CLASS)} answers: gradebook, totals.csv, Canvas, Moodle, feedback")


# -- the test --------------------------------------------------------------------------------


def test_a_term_on_the_course_hub(tmp_path) -> None:
    reason = hub_skip_reason()
    if reason:
        pytest.skip(f"hub test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    steps: list[tuple[str, float]] = []
    start = time.monotonic()

    def step(name: str) -> None:
        steps.append((name, round(time.monotonic() - start, 1)))
        print(f"[{steps[-1][1]:6.1f} s] {name}", flush=True)

    with course_hub(tmp_path, ROSTER) as hub, sync_playwright() as playwright:
        step("hub up")
        try:
            run_term(hub, playwright, step)
        except Exception:
            print(hub.log.read_text(errors="replace")[-6000:])
            raise
    step("hub stopped by SIGINT, no process left")


def run_term(hub: Hub, playwright, step) -> None:
    for user in (INSTRUCTOR, ANN, BEN, CAT):  # those who open JupyterLab
        lab_settings(hub, user)

    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    pages = {}
    try:
        pages[INSTRUCTOR] = hub.login(browser, INSTRUCTOR)
        check_instructor_terminal(pages[INSTRUCTOR], hub)
        step("the instructor's JupyterLab terminal (a login shell) runs the course's Python")
        release_in_formgrader(pages[INSTRUCTOR], ONE)
        instructor_runs(hub, "nbgrader release_assignment ", TEN)
        step("released 01 (formgrader's Release button) and 10 (the docs' command)")
        hand_in_class(hub)
        step(f"{len(CLASS)} more students handed in 10's written answer (the hand-in service)")

        solutions = {a: anatomy.solution_sources(anatomy.read_solution(a)) for a in (ONE, TEN)}
        for user, assignment in ((ANN, ONE), (BEN, ONE), (CAT, TEN)):
            page = hub.login(browser, user)
            pages[user] = page
            # A student's server sends JupyterHub's own frame-ancestors 'none'.
            head = page.request.get(f"{hub.url}/user/{user}/lab")
            assert "frame-ancestors 'none'" in head.headers["content-security-policy"]
            open_assignments(page)
            for released in (ONE, TEN):  # both releases reach every student
                page.locator("#released_assignments_list .list_item", has_text=released).wait_for()
            fetch(page, assignment)
            open_from_list(page, assignment)
        step("three students logged in, fetched and opened their notebooks")

        one_hot, diagnostic = wrong_one_hot()
        type_answers(pages[ANN], ONE, solutions[ONE])
        verdict = validate(pages[ANN], ONE)
        assert "Success! Your notebook passes all the tests." in verdict, verdict
        submit(pages[ANN], ONE)
        step("ann: answers typed, validated, submitted")

        type_answers(pages[BEN], ONE, {"one_hot": one_hot})
        submit(pages[BEN], ONE)
        rest = {k: v for k, v in solutions[ONE].items() if k != "one_hot"}
        type_answers(pages[BEN], ONE, rest)
        verdict = validate(pages[BEN], ONE)
        # The phrase is also in the test cell's source (known_mistakes=...), which the
        # dialog shows: the error's own line is what counts.
        assert any(
            diagnostic in line and "known_mistakes" not in line for line in verdict.splitlines()
        ), verdict
        submit(pages[BEN], ONE)
        step("ben: submitted, answered the rest, validated (diagnostic shown), submitted again")

        # ben removes the test cell his one_hot fails, editing the .ipynb as text in his
        # own home (JupyterLab will not delete a locked cell), and hands that in.
        notebook = hub.settings.home(BEN) / hub.roster.course / ONE / f"{ONE}.ipynb"
        hub.run_as(BEN, "python", "-c", DELETE_CELL, str(notebook), DELETED_TEST)
        reload_from_disk(pages[BEN], ONE)
        verdict = validate(pages[BEN], ONE)
        # What he sees: nbgrader's Validate knows only the notebook in front of it, and the
        # cell that held the diagnostic is gone.
        assert "Success! Your notebook passes all the tests." in verdict, verdict
        submit(pages[BEN], ONE)
        step("ben: a test cell deleted as text, validated (Success!), submitted a third time")

        due = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
        set_due_date(hub, TEN, due)
        time.sleep(1.1)  # the due date has whole seconds: cat's hand-in comes after it
        answers = {k: v for k, v in solutions[TEN].items() if k != WRITTEN}
        type_answers(pages[CAT], TEN, {**answers, WRITTEN: CAT_ANSWER})
        submit(pages[CAT], TEN)
        step("cat: answers and a written answer typed, submitted after the due date")

        # ann tries to hand in a submission in ben's name, with an earlier time: a folder
        # made by hand in the exchange's inbound/ (nbgrader's way) and in the hand-in
        # service's store. Both are the instructor's alone: nothing is made.
        store = hub.settings.handin_store / hub.roster.course / "inbound"
        ann_cache = hub.settings.home(ANN) / ".local/share/jupyter/nbgrader_cache"
        (ann_own,) = (ann_cache / hub.roster.course).glob(f"{ANN}+{ONE}+*")
        stamp = "2020-01-01 00:00:00.000000 UTC"
        for inbound in (hub.settings.exchange / hub.roster.course / "inbound", store):
            forged = inbound / f"{BEN}+{ONE}+{stamp}+forged"
            tried = hub.run_as(ANN, "cp", "-r", str(ann_own), str(forged), check=False)
            assert tried.returncode != 0 and "Permission denied" in tried.stderr, tried
            assert not forged.exists()

        collected = instructor_runs(hub, "nbgrader collect ", ONE)
        instructor_runs(hub, "nbgrader collect ", TEN)
        ben_collected = nbformat.read(
            hub.course / "submitted" / BEN / ONE / f"{ONE}.ipynb", as_version=4
        )
        inbound_one_hots = {
            path.name: cell_sources(nbformat.read(path / f"{ONE}.ipynb", as_version=4)).get(
                "one_hot"
            )
            for path in sorted(store.glob(f"*+{ONE}+*"))
        }
        ben_cells = cell_sources(ben_collected)
        assert ben_cells["one_hot"] == one_hot, (
            "ben's collected one_hot is not his own last answer: the forgery was collected\n"
            f"{collected.stderr}\n{json.dumps(inbound_one_hots, indent=1)}"
        )
        assert ben_cells["frame_signal"] == rest["frame_signal"]
        assert DELETED_TEST not in ben_cells, "ben's newest submission still has the test cell"
        # cat's hand-in is collected with the time the hand-in service recorded, after the
        # due date: what her late penalty is taken from.
        (cat_kept,) = store.glob(f"{CAT}+{TEN}+*")
        cat_stamp = (hub.course / "submitted" / CAT / TEN / "timestamp.txt").read_text()
        assert cat_stamp == (cat_kept / "timestamp.txt").read_text() == cat_kept.name.split("+")[2]
        assert parse_utc(cat_stamp) > due, (cat_stamp, due)
        step("collected: ben's own newest submission, ann's forgeries refused at the door")

        log = class_grade(hub)
        step("class grader ran")
        check_integrity_report(hub, log)
        graded = {
            key: score
            for key, score in scores(hub.course / "gradebook.db").items()
            if key[0] in (ANN, BEN, CAT)
        }
        expected = {key: s for key, s in autograde_copy(hub).items() if key in graded}
        step("nbgrader autograde of a copy ran")
        assert graded == expected, f"class grader {graded} != nbgrader autograde {expected}"
        assert graded[(ANN, ONE)] == 12 and graded[(BEN, ONE)] < 12, (graded, log)
        check_deleted_test_cell(hub)
        check_grading_page(pages[INSTRUCTOR], hub)
        step("the grading page by question lists the class's written answers as waiting")

        context = pages[INSTRUCTOR].context
        costs = grade_in_formgrader(context, hub)
        step("cat's written answer graded in formgrader, with the keyboard alone")
        class_graders, answer_ids, page_costs = grade_by_question(browser, context, hub)
        context.close()
        step(f"{len(CLASS)} answers graded on the grading page by the instructor and a TA at once")
        check_store(hub, class_graders)
        log = class_grade(hub)
        step("class grader ran again: the hand-given points in reports and feedback")
        check_integrity_report(hub, log)

        for assignment in (ONE, TEN):
            instructor_runs(hub, "nbgrader release_feedback ", assignment)
        step("feedback released")

        check_reports(hub)
        check_class_reports(hub)
        check_feedback(hub, pages, diagnostic)
        step("each student fetched and read their own feedback")

        check_what_students_may_not_do(hub, pages, answer_ids)
        step("permissions and bad hand-ins")
        check_cost_table(page_costs + costs)
    finally:
        for name, page in pages.items():
            if not page.is_closed():
                page.screenshot(path=str(ARTIFACTS / f"hub_{name}.png"))
        browser.close()


def check_deleted_test_cell(hub: Hub) -> None:
    """ben's hand-in without a test cell: the instructor reads why, and nothing is lost.

    The class grader puts the cell back from the gradebook and runs it (nbgrader's
    ``add_missing_cells``): it scores 0 for his wrong one_hot, and every other answer of
    the same hand-in is graded as usual.
    """
    from nbgrader.api import Gradebook

    integrity = (hub.course / "reports" / "integrity.md").read_text()
    section = integrity.split(f"## {BEN} / {ONE} (", 1)[-1].split("\n## ", 1)[0]
    note = f"{ONE}: deleted test cell {DELETED_TEST} (restored from the gradebook)"
    assert note in section, integrity
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(ONE, ONE, BEN)
        grades = {g.name: (g.score, g.max_score) for g in notebook.grades}
    assert grades[DELETED_TEST] == (0, grades[DELETED_TEST][1]), grades
    others = {
        name: score
        for name, score in grades.items()
        if not name.startswith(DELETED_TEST) and score[0] != score[1]
    }
    assert not others, f"ben's other answers lost points: {others}"


def check_reports(hub: Hub) -> None:
    """totals.csv and the LMS exports: cat's hand-given points and late penalty."""
    reports = hub.course / "reports"
    with (reports / "totals.csv").open() as handle:
        totals = {(r["student"], r["assignment"]): r for r in csv.DictReader(handle)}
    cat = totals[(CAT, TEN)]
    with sqlite3.connect(hub.course / "gradebook.db") as db:
        (auto,) = db.execute(
            "SELECT SUM(g.auto_score) FROM grade g JOIN submitted_notebook sn ON g.notebook_id"
            " = sn.id JOIN submitted_assignment sa ON sn.assignment_id = sa.id WHERE "
            "sa.student_id = ? AND g.auto_score IS NOT NULL",
            (CAT,),
        ).fetchone()
        (recorded_penalty,) = db.execute(
            "SELECT sn.late_submission_penalty FROM submitted_notebook sn JOIN "
            "submitted_assignment sa ON sn.assignment_id = sa.id WHERE sa.student_id = ?",
            (CAT,),
        ).fetchone()
    score, penalty = float(cat["score"]), float(cat["late_penalty"])
    assert score == pytest.approx(auto + MANUAL_POINTS), (cat, auto)
    # Late by under an hour: one started hour, 10 % of the notebook's score with the
    # hand-given points, made when the reports were written; the gradebook holds the same
    # (what nbgrader export and formgrader read).
    assert penalty == pytest.approx(score * PER_HOUR / 100), (cat, auto)
    assert recorded_penalty == pytest.approx(penalty), (cat, recorded_penalty)
    print(f"cat: score {score} (auto {auto} + manual {MANUAL_POINTS}), late penalty {penalty}")
    assert float(cat["final"]) == pytest.approx(score - penalty), cat
    assert cat["awaiting_manual"] in ("0", "False", ""), cat
    final = float(cat["final"])
    with (reports / "moodle.csv").open() as handle:
        moodle = {r["Username"]: r for r in csv.DictReader(handle)}
    assert float(moodle[CAT][TEN]) == pytest.approx(final), moodle[CAT]
    with (reports / "canvas.csv").open() as handle:
        canvas = {r["SIS Login ID"]: r for r in csv.DictReader(handle)}
    assert float(canvas[CAT][TEN]) == pytest.approx(final), canvas[CAT]


def check_feedback(hub: Hub, pages: dict, diagnostic: str) -> None:
    """Each student's own feedback: their score and messages, nothing hidden or foreign."""
    hidden_markers = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
    others = set(hub.roster.students)
    for user, assignment in ((ANN, ONE), (BEN, ONE), (CAT, TEN)):
        text = fetch_feedback(pages[user], hub, user, assignment)
        assert assignment in text
        for marker in hidden_markers:
            assert marker not in text, f"{user}'s feedback shows {marker}"
        for other in others - {user}:
            assert other not in text, f"{user}'s feedback names {other}"
        if user == ANN:
            assert f"{ONE} (Score: 12.0 / 12.0)" in text, text[:2000]
        if user == BEN:
            assert any(
                diagnostic in line and "known_mistakes" not in line for line in text.splitlines()
            ), f"ben's feedback lacks the diagnostic: {text[:3000]}"
        if user == CAT:
            assert COMMENT in text, "cat's feedback lacks the instructor's comment"
            assert f"Score: {MANUAL_POINTS} / 2.0" in text, text[:2000]
            assert CAT_ANSWER[:40] in text


def check_what_students_may_not_do(hub: Hub, pages: dict, answer_ids: dict[str, str]) -> None:
    exchange = hub.settings.exchange / hub.roster.course
    for command in (
        ["ls", str(exchange / "inbound")],
        ["ls", str(hub.settings.handin_store)],
        ["ls", str(exchange / "feedback")],
        ["ls", str(hub.settings.home(ANN))],
        ["cat", str(hub.settings.home(ANN) / hub.roster.course / ONE / f"{ONE}.ipynb")],
        ["cat", str(hub.course / "gradebook.db")],
        ["ls", str(hub.course / "submitted")],
    ):
        denied = hub.run_as(BEN, *command, check=False)
        assert denied.returncode != 0 and "Permission denied" in denied.stderr, (command, denied)
    page = pages[BEN]
    own = page.request.get(f"{hub.url}/user/{BEN}/formgrader", max_redirects=0)
    assert own.status == 404, f"a student's own formgrader answered {own.status}"
    theirs = page.request.get(f"{hub.url}/user/{INSTRUCTOR}/formgrader")
    assert theirs.status >= 400 and "Manage Assignments" not in theirs.text(), (
        f"the instructor's server let a student in: {theirs.status}"
    )
    # The grading page by question: not in a student's server, and not theirs to open.
    own = page.request.get(f"{hub.url}/user/{BEN}/{GRADING_PAGE}", max_redirects=0)
    assert own.status == 404, f"a student's own grading page answered {own.status}"
    theirs = page.request.get(f"{hub.url}/user/{INSTRUCTOR}/{GRADING_PAGE}")
    assert theirs.status >= 400 and "waiting" not in theirs.text(), (
        f"the instructor's grading page let a student in: {theirs.status}"
    )
    # ... nor its API: from ben's session in the browser, and as his system user with a hub
    # token of his own; no answer comes back and the score saved stays.
    api = f"{GRADING_PAGE}/api/{TEN}/{WRITTEN}"
    own = page.request.get(f"{hub.url}/user/{BEN}/{api}/next", max_redirects=0)
    assert own.status == 404, f"a student's own grading API answered {own.status}"
    student, answer_id = next(iter(answer_ids.items()))
    save = {"items": ["residual_path", "gradients_section5"], "adjustment": 0, "etag": ""}
    calls = [(f"{api}/next", ""), (f"{api}/answers/{answer_id}", json.dumps(save))]
    for path, body in calls:
        method = page.request.post if body else page.request.get
        tried = method(f"{hub.url}/user/{INSTRUCTOR}/{path}", **({"data": body} if body else {}))
        assert tried.status >= 400 and "answer_id" not in tried.text(), (path, tried.status)
    token = hub.token(BEN, ["access:servers!user", "read:users:groups!user"])
    for path, body in calls:
        url = f"{hub.url}/user/{INSTRUCTOR}/{path}"
        tried = hub.run_as(BEN, sys.executable, "-c", API_CALL, url, body,
                           env={"JUPYTERHUB_API_TOKEN": token})  # fmt: skip
        status = int(tried.stdout.split()[0])
        assert status in (401, 403) and "answer_id" not in tried.stdout, (path, tried.stdout)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        score = gradebook.find_grade(WRITTEN, TEN, TEN, student).manual_score
    assert score == len(class_keys(student)), (student, score)

    # Bad hand-ins, through the endpoint the Submit button calls.
    folder = hub.settings.home(ANN) / hub.roster.course / ONE
    submitted_before = sorted(
        (hub.settings.home(ANN) / ".local/share/jupyter/nbgrader_cache").rglob("*+*")
    )
    notebook = folder / f"{ONE}.ipynb"
    renamed = folder / "my_answers.ipynb"
    hub.run_as(ANN, "mv", str(notebook), str(renamed))
    reply = server_post(page_of(pages, ANN), hub, ANN, "assignments/submit",
                        {"course_id": hub.roster.course, "assignment_id": ONE})  # fmt: skip
    assert reply.get("success") is False, reply
    assert "missing notebooks" in reply.get("value", ""), reply
    assert renamed.exists()
    hub.run_as(ANN, "mv", str(renamed), str(notebook))

    big = folder / "data.bin"
    hub.run_as(ANN, "truncate", "-s", f"{hub.settings.submission_limit_kb + 100}K", str(big))
    reply = server_post(page_of(pages, ANN), hub, ANN, "assignments/submit",
                        {"course_id": hub.roster.course, "assignment_id": ONE})  # fmt: skip
    assert reply.get("success") is False, reply
    assert "Directory size is too big" in reply.get("value", ""), reply
    assert notebook.exists() and big.exists()
    hub.run_as(ANN, "rm", str(big))
    after = sorted((hub.settings.home(ANN) / ".local/share/jupyter/nbgrader_cache").rglob("*+*"))
    assert after == submitted_before, "a refused hand-in changed the student's submissions"

    (folder / "notes.txt").write_text("my notes\n")
    shutil.chown(folder / "notes.txt", ANN, ANN)
    reply = server_post(page_of(pages, ANN), hub, ANN, "assignments/submit",
                        {"course_id": hub.roster.course, "assignment_id": ONE})  # fmt: skip
    assert isinstance(reply, list) or reply.get("success", True), reply
    newest = sorted((hub.settings.home(ANN) / ".local/share/jupyter/nbgrader_cache").rglob(
        f"{ANN}+{ONE}+*"))[-1]  # fmt: skip
    assert (newest / "notes.txt").exists() and (newest / f"{ONE}.ipynb").exists()
    print(json.dumps({"refused": ["renamed notebook", "over the size limit"]}))


def page_of(pages: dict, user: str):
    return pages[user]
