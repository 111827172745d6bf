"""``work_folder``: the folders a grading process makes for its kernels go with it, even when
it ends without running its exit handlers (a Dask worker ended by its nanny, a killed
grader): the next grading process to start on the machine removes them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from instructor.classroom.worker import isolation
from instructor.classroom.worker.isolation import Isolation
from support.graded_class import graded_with

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# A grading process that prints its work folder, then grades a notebook whose one cell
# waits: it is killed while the kernel runs.
GRADING = """
import nbformat
from instructor.classroom.worker import session
from instructor.classroom.worker.isolation import Limits, work_folder
print(work_folder(), flush=True)
cell = nbformat.v4.new_code_cell("import time\\nopen('running', 'w').close()\\ntime.sleep(120)")
notebook = nbformat.v4.new_notebook(cells=[cell])
session.execute_notebook(dict(notebook), "abrupt", Limits(wall_seconds=200, cell_seconds=150))
"""
SWEEP = "from instructor.classroom.worker.isolation import work_folder; print(work_folder())"


def _ended_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


@pytest.mark.parametrize("mode", list(Isolation), ids=str)
def test_the_folders_of_a_killed_grader_are_removed_by_the_next(mode: Isolation) -> None:
    """With bubblewrap (the zygote's slots, as root) and without (the kernel's working and
    probe folders): SIGKILL in the middle of a notebook leaves the folder; the next grading
    process removes it and makes its own."""
    with graded_with(mode):  # COURSE_SANDBOX for both processes below
        grader = subprocess.Popen(
            [sys.executable, "-c", GRADING], stdout=subprocess.PIPE, text=True
        )
        try:
            assert grader.stdout is not None
            folder = Path(grader.stdout.readline().strip())
            for _ in range(600):  # until the kernel runs the cell
                if list(folder.rglob("notebook-*/running")):
                    break
                time.sleep(0.1)
            else:
                pytest.fail(f"no kernel ran the cell in {folder}")
            grader.send_signal(signal.SIGKILL)
            grader.wait(timeout=30)
        finally:
            grader.kill()
        assert folder.is_dir()  # the killed process removed nothing
        next_one = subprocess.run(
            [sys.executable, "-c", SWEEP], capture_output=True, text=True, check=True
        )
    assert not folder.exists()
    made = Path(next_one.stdout.strip())
    assert made != folder and not made.exists()  # and its own went with its normal exit


def test_only_this_user_s_folders_of_ended_processes_are_swept(tmp_path: Path) -> None:
    ended, alive, here = _ended_pid(), os.getpid(), isolation._pid_namespace()
    stale = tmp_path / f"kernels-{ended}-{here}-abc"
    (stale / "zygote-x" / "notebook-y").mkdir(parents=True)
    (stale / "zygote-x" / "notebook-y" / "answer.txt").write_text("left")
    live = tmp_path / f"kernels-{alive}-{here}-abc"
    live.mkdir()
    # The same pid in another PID namespace (a container sharing the folder) is another
    # process, which may well run.
    elsewhere = tmp_path / f"kernels-{ended}-{here + 1}-abc"
    elsewhere.mkdir()
    target = tmp_path / "somebody's folder"
    target.mkdir()
    link = tmp_path / f"kernels-{ended}-{here}-link"
    link.symlink_to(target)
    unrelated = tmp_path / f"grade-{ended}-{here}-abc"
    unrelated.mkdir()
    others = None
    if os.geteuid() == 0:
        others = tmp_path / f"kernels-{ended}-{here}-nobody"
        others.mkdir()
        os.chown(others, 65534, 65534)
    isolation._sweep_work_folders(tmp_path)
    assert not stale.exists()
    assert live.is_dir() and elsewhere.is_dir() and unrelated.is_dir()
    assert target.is_dir() and link.is_symlink()
    if others is not None:
        assert others.is_dir()  # another user's, even where root could remove it


def test_a_process_that_ends_normally_removes_its_folder(tmp_path: Path) -> None:
    """The exit handler, and the finaliser a multiprocessing child (a Dask worker) runs."""
    script = tmp_path / "two_processes.py"
    script.write_text(
        "import multiprocessing\n"
        "from instructor.classroom.worker.isolation import work_folder\n"
        "def child(queue):\n"
        "    queue.put(str(work_folder()))\n"
        "if __name__ == '__main__':\n"
        "    spawn = multiprocessing.get_context('spawn')\n"
        "    queue = spawn.Queue()\n"
        "    process = spawn.Process(target=child, args=(queue,))\n"
        "    process.start()\n"
        "    print(queue.get())\n"
        "    process.join()\n"
        "    print(work_folder())\n"
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    printed = run.stdout.split()
    assert len(printed) == 2 and printed[0] != printed[1]
    assert not any(Path(folder).exists() for folder in printed)
