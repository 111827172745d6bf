"""nbgrader's ``collect`` and ``release_feedback`` with the course's exchange classes
(:mod:`instructor.exchange`), contained per hand-in.

Each test runs nbgrader's own commands on a scratch course and a scratch exchange, with
hand-ins of every kind that stopped nbgrader 0.9.6 for the whole class or made it copy
what it should not: a folder name whose time does not parse, a FIFO, a socket, a device,
a dangling link, a link to a folder, a link to another student's collected notebook, a
hard link, a file over the size limit, too many files, no ``timestamp.txt``, an earlier
collected copy whose ``timestamp.txt`` does not parse; with real system users, a file the
student made unreadable and a folder in a student's name owned by another. Beside each,
honest students are collected (and their feedback released). A thread that swaps a
student's notebook for a link to another's, over and over while the copy runs, never gets
the other's notebook copied.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.nbgrader_env import nbgrader_env
from instructor.scratch_course import ScratchCourse

A = "01_vector_sets"
NB = f"{A}.ipynb"
COURSE_ID = "self-attention"
RECORD = "exchange_left_out.json"


def read_records(course_root: Path) -> list:
    # imported here: the tests that run nbgrader's commands run (and fail) on an exchange
    # module without the record too
    from instructor.exchange import read_records as read

    return read(course_root)


STAMP = "2026-11-20 12:00:00.000000 UTC"
LATER = "2026-11-21 12:00:00.000000 UTC"


def _notebook(who: str) -> str:
    return json.dumps({"cells": [], "metadata": {"who": who}, "nbformat": 4, "nbformat_minor": 5})


def _hand_in(inbound: Path, student: str, stamp: str = STAMP, tag: str = "r4nd0m") -> Path:
    """What nbgrader submit writes: ``<student>+<assignment>+<time>+<random>/``."""
    folder = inbound / f"{student}+{A}+{stamp}+{tag}"
    folder.mkdir(parents=True)
    (folder / NB).write_text(_notebook(f"{student} {tag}"))
    (folder / "timestamp.txt").write_text(stamp)
    return folder


def _run(
    cwd: Path, *args: str, user: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nbgrader", *args]
    env = nbgrader_env()
    if user is not None:
        env = {"PATH": env.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
        variables = [f"{k}={v}" for k, v in env.items()]
        command = ["runuser", "-u", user, "--", "env", "-i", *variables, *command]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _collect(course: ScratchCourse, exchange: Path, *more: str, user: str | None = None):
    return _run(
        course.root,
        "collect",
        A,
        f"--Exchange.root={exchange}",
        "--CollectApp.check_owner=False",
        "--update",
        *more,
        user=user,
    )


def _collected(course: ScratchCourse, student: str) -> str | None:
    path = course.root / "submitted" / student / A / NB
    return json.loads(path.read_text())["metadata"]["who"] if path.is_file() else None


@pytest.fixture
def course(tmp_path: Path) -> ScratchCourse:
    return ScratchCourse(tmp_path / "course", A)


@pytest.fixture
def exchange(tmp_path: Path) -> Path:
    inbound = tmp_path / "exchange" / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    return tmp_path / "exchange"


def test_one_hand_in_of_each_hostile_kind_leaves_the_others_collected(
    course: ScratchCourse, exchange: Path, tmp_path: Path
) -> None:
    inbound = exchange / COURSE_ID / "inbound"
    honest = ["alice", "bob", "zoë"]
    for student in honest:
        _hand_in(inbound, student)
    # A name whose time does not parse (nbgrader: ParserError, nobody collected).
    (inbound / f"mallory+{A}+yesterday+x").mkdir()
    # One of each kind of file nbgrader's copytree blocks on, fails on, or follows.
    os.mkfifo(_hand_in(inbound, "fifo") / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    short = Path(tempfile.mkdtemp(dir=tmp_path.anchor + "tmp"))  # a socket's path is short
    listener.bind(str(short / "s"))
    os.replace(short / "s", _hand_in(inbound, "sock") / "s")
    (_hand_in(inbound, "dangling") / "gone").symlink_to(tmp_path / "nowhere")
    (_hand_in(inbound, "dirlink") / "etc").symlink_to("/etc", target_is_directory=True)
    # alice's notebook, as collected: a link to it in carl's hand-in, in place of his own
    carl = _hand_in(inbound, "carl")
    (carl / NB).unlink()
    (carl / NB).symlink_to(course.root / "submitted" / "alice" / A / NB)
    hard = _hand_in(inbound, "hardy")
    os.link(hard / NB, hard / "again.ipynb")
    (_hand_in(inbound, "big") / "big.bin").write_bytes(b"x" * 200_000)
    many = _hand_in(inbound, "many")
    for i in range(1001):
        (many / f"f{i}").write_text("x")
    deep = _hand_in(inbound, "deep")
    (deep / "/".join(["d"] * 20)).mkdir(parents=True)
    if os.geteuid() == 0:
        os.mknod(_hand_in(inbound, "device") / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    # A hand-in without timestamp.txt: collected, with the folder name's time written.
    (_hand_in(inbound, "notime") / "timestamp.txt").unlink()
    # dave's newest hand-in holds a FIFO: his earlier one is collected.
    _hand_in(inbound, "dave", STAMP, "first")
    os.mkfifo(_hand_in(inbound, "dave", LATER, "second") / "pipe")

    result = _collect(course, exchange, "--CourseDirectory.max_file_size=100")
    listener.close()
    assert result.returncode == 0, result.stderr
    for student in honest:
        assert _collected(course, student) == f"{student} r4nd0m", result.stderr
    assert _collected(course, "notime") == "notime r4nd0m"
    assert (course.root / "submitted" / "notime" / A / "timestamp.txt").read_text() == STAMP
    assert _collected(course, "dave") == "dave first"
    refused = {
        "fifo": "pipe is a FIFO",
        "sock": "s is a socket",
        "dangling": "gone is a symbolic link",
        "dirlink": "etc is a symbolic link",
        "carl": f"{NB} is a symbolic link",
        "hardy": "is a hard link",
        "big": "big.bin is over 100,000 bytes",
        "many": "more than 1000 names",
        "deep": "folders deep",
        **({"device": "null is a character device"} if os.geteuid() == 0 else {}),
    }
    for student, why in refused.items():
        assert _collected(course, student) is None, student
        assert why in result.stderr, (student, result.stderr)
    assert "mallory" not in {p.name for p in (course.root / "submitted").iterdir()}
    records = {(r.student, r.outcome): r.reason for r in read_records(course.root)}
    assert ("?", "left out") in records and "does not parse" in records[("?", "left out")]
    for student, why in refused.items():
        assert why in records[(student, "left out")]
    assert "the folder name's time" in records[("notime", "note")]
    assert "pipe is a FIFO" in records[("dave", "left out")]
    assert not list(course.root.glob(".collecting-*"))  # the copies are removed

    # Collected again: a collected copy whose timestamp.txt does not parse stops only its own.
    (course.root / "submitted" / "bob" / A / "timestamp.txt").write_text("not a time")
    _hand_in(inbound, "alice", LATER, "second")
    _hand_in(inbound, "bob", LATER, "second")
    again = _collect(course, exchange, "--CourseDirectory.max_file_size=100")
    assert again.returncode == 0, again.stderr
    assert _collected(course, "alice") == "alice second"
    assert _collected(course, "bob") == "bob r4nd0m"
    assert "the collected copy's" in again.stderr
    assert (course.root / RECORD).is_file()


def _swapper(target: Path, link_to: Path, stop: threading.Event) -> None:
    """Swap ``target`` for a link to ``link_to`` and back, as fast as it goes."""
    spare = target.with_name(".spare")
    while not stop.is_set():
        os.replace(target, spare)
        os.symlink(link_to, target)
        os.unlink(target)
        os.replace(spare, target)


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A hand-in of eve's whose notebook a thread swaps for a link to alice's, and back."""
    victim = tmp_path / "alice.ipynb"
    victim.write_text(_notebook("alice"))
    inbound = tmp_path / "inbound"
    folder = _hand_in(inbound, "eve")
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(folder / NB, victim, stop), daemon=True)
    thread.start()
    try:
        yield inbound, folder
    finally:
        stop.set()
        thread.join()


def test_a_notebook_swapped_for_a_link_is_never_followed(
    swapping: tuple[Path, Path], tmp_path: Path
) -> None:
    """2000 copies while the notebook is swapped for a link to alice's and back: each
    copies eve's own notebook or is refused; alice's is never copied."""
    from instructor.exchange import CopyLimits, HandInRefused, copy_hand_in

    inbound, folder = swapping
    fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
    outcomes = {"copied": 0, "refused": 0}
    try:
        for i in range(2000):
            dest = tmp_path / "copies" / str(i)
            dest.parent.mkdir(exist_ok=True)
            try:
                copy_hand_in(fd, folder.name, dest, CopyLimits(10**6, 10**7))
            except HandInRefused as error:
                assert "symbolic link" in str(error) or "cannot be" in str(error), error
                outcomes["refused"] += 1
                continue
            copied = (dest / NB).read_text() if (dest / NB).exists() else ""
            assert "alice" not in copied
            outcomes["copied"] += 1
            shutil.rmtree(dest)
    finally:
        os.close(fd)
    assert outcomes["refused"] > 0, outcomes  # the race was run, not missed
    assert outcomes["copied"] + outcomes["refused"] == 2000


def test_collect_while_a_notebook_is_swapped_takes_no_other_students_notebook(
    course: ScratchCourse, exchange: Path, tmp_path: Path
) -> None:
    """nbgrader collect, five times, while eve's notebook is swapped for a link to alice's
    collected one and back: alice is collected, eve never gets alice's notebook."""
    inbound = exchange / COURSE_ID / "inbound"
    _hand_in(inbound, "alice")
    first = _collect(course, exchange)
    assert first.returncode == 0, first.stderr
    alice = course.root / "submitted" / "alice" / A / NB
    eve = _hand_in(inbound, "eve")
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(eve / NB, alice, stop), daemon=True)
    thread.start()
    try:
        for _ in range(5):
            shutil.rmtree(course.root / "submitted" / "eve", ignore_errors=True)
            result = _collect(course, exchange)
            assert result.returncode == 0, result.stderr
            assert _collected(course, "eve") in (None, "eve r4nd0m"), result.stderr
            assert _collected(course, "alice") == "alice r4nd0m"
    finally:
        stop.set()
        thread.join()


def _feedback(course: ScratchCourse, student: str, *, stamp: bool = True) -> Path:
    folder = course.root / "feedback" / student / A
    folder.mkdir(parents=True)
    (folder / f"{A}.html").write_text(f"<p>feedback for {student}</p>")
    (folder / "submission_secret.txt").write_text(f"{student}-secret")
    if stamp:
        (folder / "timestamp.txt").write_text(STAMP)
    return folder


def test_release_feedback_releases_everyone_it_can(
    course: ScratchCourse, exchange: Path, tmp_path: Path
) -> None:
    """bob's hand-in has no timestamp.txt (nbgrader 0.9.6: FileNotFoundError, the release
    stops); carol's has no secret, dave's secret is a link: each is left out and named, the
    others' pages are released under the names fetch_feedback looks for."""
    from nbgrader.utils import notebook_hash

    for student in ("alice", "zoë"):
        _feedback(course, student)
    _feedback(course, "bob", stamp=False)
    (_feedback(course, "carol") / "submission_secret.txt").unlink()
    dave = _feedback(course, "dave")
    (dave / "submission_secret.txt").unlink()
    (tmp_path / "secret").write_text("stolen")
    (dave / "submission_secret.txt").symlink_to(tmp_path / "secret")
    result = _run(
        course.root,
        "release_feedback",
        A,
        f"--Exchange.root={exchange}",
        "--ExchangeFactory.release_feedback=instructor.exchange.ContainedReleaseFeedback",
    )
    assert result.returncode == 0, result.stderr
    released = exchange / COURSE_ID / "feedback"
    for student in ("alice", "zoë", "bob"):
        page = released / f"{notebook_hash(secret=f'{student}-secret', notebook_id=A)}.html"
        assert page.read_text() == f"<p>feedback for {student}</p>"
        assert stat.S_IMODE(page.stat().st_mode) & 0o004  # students can read it
    assert len(list(released.iterdir())) == 3
    records = {r.student: r for r in read_records(course.root)}
    assert set(records) == {"carol", "dave"}
    assert all(r.step == "release_feedback" for r in records.values())
    assert "submission_secret.txt" in records["dave"].reason


# ------------------------------------------------------------------ real system users
USERS = ("xcteach", "xcann", "xcben", "xceve")
COMMENT = "self-attention exchange test"


@pytest.fixture
def users() -> Iterator[dict[str, pwd.struct_passwd]]:
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("not root (or no useradd/runuser): real users are made as root only")
    from instructor.hub import make_reachable

    make_reachable(Path(sys.executable))
    made = {}
    for name in USERS:
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "-M", "-c", COMMENT, name], check=True)
        made[name] = pwd.getpwnam(name)
    try:
        yield made
    finally:
        for name in USERS:
            if pwd.getpwnam(name).pw_gecos == COMMENT:
                subprocess.run(["userdel", name], capture_output=True)


def _chown_tree(path: Path, user: pwd.struct_passwd) -> None:
    for item in [path, *path.rglob("*")]:
        os.chown(item, user.pw_uid, user.pw_gid, follow_symlinks=False)


def test_as_the_instructor_unreadable_and_forged_hand_ins_leave_the_others_collected(
    users: dict[str, pwd.struct_passwd],
) -> None:
    """Run as the instructor's system user with OwnerCheckedCollect: ben's notebook is
    unreadable (mode 000, his own: nbgrader's copy fails for the class), a folder in ann's
    name is eve's, eve's hand-in holds a file of ann's (hard-linked: not hers), a folder
    names a student who is no user; ann is collected from her own hand-in, the others left
    out with why."""
    top = Path(tempfile.mkdtemp(prefix="exchange-contained-"))
    try:
        top.chmod(0o755)
        course = ScratchCourse(top / "course", A)
        exchange = top / "exchange"
        inbound = exchange / COURSE_ID / "inbound"
        inbound.mkdir(parents=True)
        teach = users["xcteach"]
        _chown_tree(course.root, teach)
        _chown_tree(exchange, teach)
        inbound.chmod(0o2733)
        ann = _hand_in(inbound, "xcann", STAMP, "own")
        _chown_tree(ann, users["xcann"])
        forged = _hand_in(inbound, "xcann", LATER, "forged")
        _chown_tree(forged, users["xceve"])
        ben = _hand_in(inbound, "xcben")
        _chown_tree(ben, users["xcben"])
        (ben / NB).chmod(0)
        eve = _hand_in(inbound, "xceve")
        (eve / "extra.txt").write_text("ann's")
        _chown_tree(eve, users["xceve"])
        os.chown(eve / "extra.txt", users["xcann"].pw_uid, users["xcann"].pw_gid)
        nobody = _hand_in(inbound, "xcnobody")
        _chown_tree(nobody, users["xceve"])
        result = _collect(
            course,
            exchange,
            "--ExchangeFactory.collect=instructor.exchange.OwnerCheckedCollect",
            user="xcteach",
        )
        assert result.returncode == 0, result.stderr
        assert _collected(course, "xcann") == "xcann own", result.stderr
        assert sorted(p.name for p in (course.root / "submitted").iterdir()) == ["xcann"]
        reasons = {r.student: r.reason for r in read_records(course.root)}
        assert "cannot be opened (Permission denied)" in reasons["xcben"]
        assert "is not the student's own (owned by xcann)" in reasons["xceve"]
        assert "owned by xceve" in reasons["xcnobody"]
        assert "claims to be submitted by xcann but is owned by xceve" in result.stderr
    finally:
        shutil.rmtree(top, ignore_errors=True)
