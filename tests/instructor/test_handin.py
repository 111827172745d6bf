"""The hub's hand-in service (``instructor/handin.py``): a hand-in fixed when it is made.

The store's rules are checked on their own, fast (:func:`store_hand_in`: the service's
time, its secret, the quota, the paths). Then, as root, the course's hub as ``make hub``
starts it (``support.hub.course_hub``: real system users, the service run as the
instructor's user) takes hand-ins from nbgrader's own commands run as each student, with
the token the hub gives them; what a student tries afterwards (a folder made by hand in
``inbound/`` with an earlier time, a notebook rewritten after the due date, a rewritten
``timestamp.txt``, a request that names another student or carries its own time, a
hand-in over the limits, a submit in another's name) changes neither what is collected
nor its time, and an honest late hand-in is collected with the service's time, after the
due date: the ``timestamp.txt`` nbgrader's autograde takes lateness from (the penalty
computed from it, by the class grader, is ``tests/course/test_hub_term.py``'s).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import nbformat
import pytest

from instructor import anatomy
from instructor.handin import HandInError, Quota, store_hand_in, usage
from instructor.paths import COURSE_ROOT
from support.hub import course_hub, hub_skip_reason

A = "01_vector_sets"
NB = f"{A}.ipynb"
EARLY = "2020-01-01 00:00:00.000000 UTC"
NOW = datetime(2026, 11, 20, 12, 0, 0, 123456, tzinfo=UTC)


def _files(**named: bytes) -> list[dict[str, str]]:
    return [
        {"path": path.replace("__", "/"), "content": base64.b64encode(data).decode()}
        for path, data in named.items()
    ]


# ------------------------------------------------------------------------ the store alone
def test_the_store_keeps_the_service_s_time_and_secret_never_the_student_s(tmp_path) -> None:
    inbound = tmp_path / "inbound"
    kept = store_hand_in(
        inbound,
        "ann",
        A,
        _files(**{NB: b"{}", "timestamp.txt": EARLY.encode(), "sub__notes.txt": b"n"}),
        Quota(),
        now=NOW,
    )
    assert kept["timestamp"] == "2026-11-20 12:00:00.123456 UTC"
    (folder,) = inbound.iterdir()
    student, assignment, stamp, _random = folder.name.split("+")
    assert (student, assignment, stamp) == ("ann", A, kept["timestamp"])
    assert (folder / "timestamp.txt").read_text() == kept["timestamp"]
    assert (folder / "submission_secret.txt").read_text() == kept["secret"]
    assert len(kept["secret"]) == 128
    assert (folder / NB).read_bytes() == b"{}"
    assert (folder / "sub" / "notes.txt").read_bytes() == b"n"
    assert folder.stat().st_mode & 0o077 == 0  # the service's user's alone
    assert usage(inbound, "ann", A) == (1, 2 + 1 + len(kept["timestamp"]) + 128)


@pytest.mark.parametrize(
    ("files", "status", "why"),
    [
        (_files(**{"..__x": b"x"}), 400, "bad file path"),
        ([{"path": "/etc/passwd", "content": "eA=="}], 400, "bad file path"),
        ([{"path": "a\nb", "content": "eA=="}], 400, "bad file path"),
        ([{"path": NB, "content": "not base64!"}], 400, "not base64"),
        (_files(**{NB: b"x" * 101}), 413, "over 100 bytes"),
        (_files(a=b"x" * 60, b=b"x" * 60), 413, "hand-in is over 100 bytes"),
        (_files(**{f"f{i}": b"" for i in range(4)}), 413, "at most 3 files"),
        (_files(a=b"1", a__b=b"2"), 400, "given twice"),
        ("not a list", 400, "must be a list"),
    ],
    ids=["dotdot", "absolute", "newline", "base64", "file", "hand-in", "count", "twice", "list"],
)
def test_the_store_refuses_bad_or_oversized_hand_ins_and_keeps_nothing(
    tmp_path, files, status, why
) -> None:
    inbound = tmp_path / "inbound"
    quota = Quota(file_bytes=100, hand_in_bytes=100, files=3)
    with pytest.raises(HandInError, match=why) as refused:
        store_hand_in(inbound, "ann", A, files, quota, now=NOW)
    assert refused.value.status == status
    assert not inbound.exists() or not list(inbound.iterdir())


def test_the_quota_bounds_hand_ins_per_assignment_and_bytes_per_student(tmp_path) -> None:
    inbound = tmp_path / "inbound"
    quota = Quota(hand_ins=2, student_bytes=400)
    for _ in range(2):
        store_hand_in(inbound, "ann", A, _files(**{NB: b"x"}), quota, now=NOW)
    with pytest.raises(HandInError, match="handed in 01_vector_sets 2 times") as refused:
        store_hand_in(inbound, "ann", A, _files(**{NB: b"x"}), quota, now=NOW)
    assert refused.value.status == 429
    # Another assignment counts apart, but all bytes of the student's count together.
    store_hand_in(inbound, "ann", "02_soft_select", _files(**{NB: b"x"}), quota, now=NOW)
    with pytest.raises(HandInError, match="over the 400 this course keeps") as refused:
        store_hand_in(inbound, "ann", "03_matrix_form", _files(**{NB: b"x" * 100}), quota)
    assert refused.value.status == 413
    # Another student's quota is their own.
    store_hand_in(inbound, "ben", A, _files(**{NB: b"x" * 100}), quota, now=NOW)
    assert len(list(inbound.iterdir())) == 4
    assert not [p for p in inbound.iterdir() if p.name.startswith(".partial")]


def test_nbgrader_submit_on_the_hub_takes_no_student_name_and_needs_the_hub_s_token(
    monkeypatch,
) -> None:
    """``nbgrader submit --student <another>`` is refused before anything is sent (the
    service takes the student from the token); without a token it says where to submit."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.abc.exchange import ExchangeError

    from instructor.exchange import HubSubmit

    def submit(student: str) -> HubSubmit:
        coursedir = CourseDirectory(course_id="self-attention", student_id=student)
        return HubSubmit(
            coursedir=coursedir, authenticator=Authenticator(), service_url="http://x/"
        )

    with pytest.raises(ExchangeError, match="the hub says who hands in"):
        submit("hiben").init_dest()
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    with pytest.raises(ExchangeError, match="No JupyterHub token"):
        submit("*").init_dest()


# -------------------------------------------------------------------------- on the hub
ROSTER = """course = "self-attention"
instructors = ["hiteach"]
students = ["hiann", "hiben", "hicat"]
"""
TEACH, ANN, BEN, CAT = "hiteach", "hiann", "hiben", "hicat"
SCOPES = ["access:services!service=handin", "read:users:groups!user"]


def solved_notebook() -> str:
    """The released notebook of 01 with every answer of the solution (12 points)."""
    notebook = anatomy.read_released(A)
    answers = anatomy.solution_sources(anatomy.read_solution(A))
    for cell in notebook.cells:
        if anatomy.is_solution_cell(cell):
            cell.source = answers[anatomy.grade_id(cell)]
    return nbformat.writes(notebook)


def post(hub, token: str | None, body: dict) -> tuple[int, dict]:
    """A request to the hand-in service as a student's script would send it."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    request = urllib.request.Request(
        hub.settings.handin_url + "submit", json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, {"message": text.decode(errors="replace")}


@pytest.mark.xdist_group("hub")
def test_on_the_hub_a_hand_in_is_fixed_when_it_is_made(tmp_path) -> None:
    reason = hub_skip_reason(browser=False)
    if reason:
        pytest.skip(f"hub test skipped: {reason}")
    with course_hub(tmp_path, ROSTER) as hub:
        try:
            run_hand_ins(hub)
        except Exception:
            print(hub.log.read_text(errors="replace")[-6000:])
            raise


def run_hand_ins(hub) -> None:
    course = hub.roster.course
    # What nbgrader release_assignment writes (the term test runs it; here a copy, as the
    # instructor, saves a command's start).
    outbound = hub.settings.exchange / course / "outbound"
    released = COURSE_ROOT / "notebooks" / A
    hub.run_as(TEACH, "sh", "-c", f'mkdir -p "{outbound}" && cp -r "{released}" "{outbound}/"')
    tokens = {user: hub.token(user, SCOPES) for user in (ANN, BEN, CAT, TEACH)}

    def student(user: str, *args: str, check: bool = True):
        return hub.run_as(
            user, "nbgrader", *args, env=hub.server_env(user, tokens[user]), check=check
        )

    honest = solved_notebook()
    for user in (ANN, BEN):  # what nbgrader fetch_assignment and the student's answers make
        hub.write_as(user, hub.settings.home(user) / course / A / NB, honest)
    # ann's working folder holds a timestamp.txt of her own, with an early time.
    hub.write_as(ANN, hub.settings.home(ANN) / course / A / "timestamp.txt", EARLY)
    before = datetime.now(UTC)
    submitted = student(ANN, "submit", A)
    after = datetime.now(UTC)
    assert "Submitted as:" in submitted.stderr, submitted.stderr

    # The due date: a moment after ann's hand-in (naive UTC, as nbgrader stores it).
    due = (after + timedelta(seconds=1)).replace(microsecond=0, tzinfo=None)
    while datetime.now(UTC).replace(tzinfo=None) <= due:
        time.sleep(0.05)

    # After the due date. ben hands in, late and honest.
    student(BEN, "submit", A)
    # ann, after the due date: a folder made by hand in the exchange's inbound/, in her
    # name and in ben's, with an early time; her notebook in the service's store.
    inbound = hub.settings.exchange / course / "inbound"
    for name in (ANN, BEN):
        forged = inbound / f"{name}+{A}+{EARLY}+forged"
        made = hub.run_as(ANN, "mkdir", str(forged), check=False)
        assert made.returncode != 0 and "Permission denied" in made.stderr, made
    store = hub.settings.handin_store / course / "inbound"
    for command in (
        ["ls", str(store)],
        ["mkdir", str(store / f"{ANN}+{A}+{EARLY}+x")],
    ):
        denied = hub.run_as(ANN, *command, check=False)
        assert denied.returncode != 0 and "Permission denied" in denied.stderr, denied
    # ... rewrites her notebook and the timestamp.txt of nbgrader's copy in her cache.
    blank = nbformat.writes(anatomy.read_released(A))
    hub.write_as(ANN, hub.settings.home(ANN) / course / A / NB, blank)
    cache = hub.settings.home(ANN) / ".local/share/jupyter/nbgrader_cache" / course
    (cached,) = cache.glob(f"{ANN}+{A}+*")
    hub.write_as(ANN, cached / "timestamp.txt", EARLY)
    hub.write_as(ANN, cached / NB, blank)
    # cat sends the service a request of her own: ann's name in it, an early timestamp.txt.
    status, kept = post(
        hub,
        tokens[CAT],
        {
            "course": course,
            "assignment": A,
            "student": ANN,
            "files": _files(**{NB: honest.encode(), "timestamp.txt": EARLY.encode()}),
        },
    )
    assert status == 200 and kept["student"] == CAT, kept
    assert datetime.strptime(kept["timestamp"], "%Y-%m-%d %H:%M:%S.%f %Z") > due
    # Requests the service refuses: no token, a token of no student (the instructor), a
    # hand-in over the size limit, an assignment not released. Nothing is kept.
    kept_before = sorted(os.listdir(store))
    limit = 1000 * hub.settings.submission_limit_kb
    refused = {
        "no token": post(hub, None, {"course": course, "assignment": A, "files": []}),
        "instructor": post(hub, tokens[TEACH], {"course": course, "assignment": A, "files": []}),
        "too big": post(
            hub,
            tokens[CAT],
            {"course": course, "assignment": A, "files": _files(**{NB: b"x" * (limit + 1)})},
        ),
        "not released": post(
            hub, tokens[CAT], {"course": course, "assignment": "09_gnn", "files": []}
        ),
    }
    statuses = {why: status for why, (status, _) in refused.items()}
    assert statuses == {"no token": 403, "instructor": 403, "too big": 413, "not released": 404}
    assert "is not a student of" in refused["instructor"][1]["message"]
    assert sorted(os.listdir(store)) == kept_before

    collected = hub.nbgrader("collect", A)
    submitted_root = hub.course / "submitted"
    assert sorted(p.name for p in submitted_root.iterdir()) == [ANN, BEN, CAT], collected.stderr
    ann_stamp = (submitted_root / ANN / A / "timestamp.txt").read_text()
    ann_time = datetime.strptime(ann_stamp, "%Y-%m-%d %H:%M:%S.%f %Z").replace(tzinfo=UTC)
    assert before - timedelta(seconds=2) <= ann_time <= after + timedelta(seconds=2), ann_stamp
    assert (submitted_root / ANN / A / NB).read_text() == honest  # not her rewrite
    assert (submitted_root / CAT / A / NB).read_text() == honest

    # What nbgrader's autograde reads for lateness (timestamp.txt against the due date):
    # ann on time, her rewrites nowhere; ben and cat late, from the service's clock.
    from nbgrader.utils import parse_utc

    late = {
        user: (parse_utc((submitted_root / user / A / "timestamp.txt").read_text()) - due)
        for user in (ANN, BEN, CAT)
    }
    print({user: str(delta) for user, delta in late.items()})
    assert late[ANN].total_seconds() < 0
    assert late[BEN].total_seconds() > 0 and late[CAT].total_seconds() > 0
    cat_stamp = (submitted_root / CAT / A / "timestamp.txt").read_text()
    assert cat_stamp == kept["timestamp"]
    # The course's per-hour penalty (what the class grader applies) on those times: one
    # started hour late costs ben and cat 10 % of a full score, ann nothing.
    from instructor.classroom.grader.course import PerHourPenalty

    penalty = PerHourPenalty(percent_per_hour=10)
    seconds = {user: delta.total_seconds() for user, delta in late.items()}
    assert penalty.late_submission_penalty(ANN, 12.0, seconds[ANN]) is None
    for user in (BEN, CAT):
        assert penalty.late_submission_penalty(user, 12.0, seconds[user]) == pytest.approx(1.2)


def test_collect_reads_the_store_and_only_what_the_service_wrote(tmp_path) -> None:
    """``nbgrader collect`` with ``HubCollect``: hand-ins come from the store, with the
    store's time; a folder there that the collecting user (the service's) did not write is
    left out with why, and a folder made by hand in the exchange's inbound/ is never read."""
    if os.geteuid() != 0:
        pytest.skip("not root: a folder of another user is made with chown")
    from instructor.exchange import read_records
    from instructor.nbgrader_env import nbgrader_env
    from instructor.scratch_course import ScratchCourse

    course = ScratchCourse(tmp_path / "course", A)
    store = tmp_path / "store" / "self-attention" / "inbound"
    exchange = tmp_path / "exchange"
    (exchange / "self-attention" / "inbound").mkdir(parents=True)
    kept = store_hand_in(store, "ann", A, _files(**{NB: b'{"who": "ann"}'}), Quota(), now=NOW)
    store_hand_in(store, "bob", A, _files(**{NB: b'{"who": "bob"}'}), Quota(), now=NOW)
    (bob,) = store.glob("bob+*")
    for path in (bob, *bob.iterdir()):
        os.chown(path, 65534, 65534)  # nobody: not the service's
    forged = exchange / "self-attention" / "inbound" / f"carl+{A}+{EARLY}+x"
    forged.mkdir()
    (forged / NB).write_text('{"who": "carl"}')
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", A, f"--Exchange.root={exchange}",
         "--ExchangeFactory.collect=instructor.exchange.HubCollect",
         f"--HubCollect.store={tmp_path / 'store'}"],
        cwd=course.root, env=nbgrader_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    submitted = course.root / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["ann"], result.stderr
    assert (submitted / "ann" / A / NB).read_text() == '{"who": "ann"}'
    assert (submitted / "ann" / A / "timestamp.txt").read_text() == kept["timestamp"]
    (record,) = read_records(course.root)
    assert record.student == "bob"
    assert "was not written by the hand-in service (owned by nobody)" in record.reason
