"""``reaper``: nothing a kernel starts outlives its notebook, whatever it does to escape."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import nbformat
import pytest

from instructor.classroom.worker import isolation as reaper
from instructor.classroom.worker import session as execute
from instructor.classroom.worker.isolation import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# A double fork with setsid: the daemon leaves the starter's process group and session, and
# its parent is gone before anyone looks. It prints its pid, then waits to do harm.
ESCAPE = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
    os._exit(0)
os.wait()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_double_forked_daemon_is_ended_with_the_block() -> None:
    with reaper.reaped():
        before = reaper.children()
        subprocess.run([sys.executable, "-c", ESCAPE], check=True)
        time.sleep(0.2)
        orphans = reaper.children() - before  # re-parented to this process, not to init
        assert orphans and all(_alive(pid) for pid in orphans)
    assert not any(_alive(pid) for pid in orphans)


def test_children_from_before_the_block_are_left_alone() -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with reaper.reaped():
            pass
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_without_bubblewrap_no_process_of_a_kernel_outlives_its_notebook(
    monkeypatch: pytest.MonkeyPatch, limits: Limits
) -> None:
    """The kernel is the grader's child when there is no zygote; a daemon it starts is found
    by the grader (re-parented to it) and ended when the notebook ends."""
    monkeypatch.setenv("COURSE_SANDBOX", "none")
    monkeypatch.setattr(execute, "zygote_available", lambda: False)
    marker = f"reaper-test-{os.getpid()}-{time.monotonic_ns()}"
    sleep = f"os.execl(sys.executable, 'python', '-c', 'import time; time.sleep(300)', '{marker}')"
    cell = ESCAPE.replace("time.sleep(300)", sleep)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    result = execute.execute_notebook(dict(notebook), "reaper", limits)
    assert result.outcome == "ok", result.detail
    survivors = [
        pid
        for pid in os.listdir("/proc")
        if pid.isdigit() and _cmdline(pid).endswith(marker) and _alive(int(pid))
    ]
    assert survivors == [], f"left running after the notebook: {survivors}"


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
